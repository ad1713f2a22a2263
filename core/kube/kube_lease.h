/*
 * coordination.k8s.io/v1 Leases for leader election, as client-go's leaderelection with the LeaseLock: read, create
 * when absent, update (PUT with the read resourceVersion, so two candidates racing get one 409) when we hold it or
 * the holder's lease expired. Karpenter's settings: lease 15 s, renew deadline 10 s, retry 2 s. Use a client of its
 * own (ns_kube_client_new_sibling) so controller throttling never delays renewal.
 */
#ifndef NS_KUBE_LEASE_H
#define NS_KUBE_LEASE_H

#include <stdbool.h>
#include <stdint.h>

#include "kube/kube_client.h"

#define NS_KUBE_LEASE_NAME "karpenter-leader-election"
#define NS_KUBE_LEASE_DURATION_S 15

typedef struct ns_kube_lease {
    bool exists;
    char holder[256];
    int32_t duration_s;
    int64_t acquire_ms;
    int64_t renew_ms;
    int32_t transitions;
    char resource_version[32];
} ns_kube_lease;

/* Reads the lease (exists = false when there is none). */
int ns_kube_lease_read(ns_kube_client *c, const char *ns, const char *name, ns_kube_lease *out);

/* One try to acquire or renew: *leader tells whether `identity` holds the lease afterwards. A 409 (another
 * candidate wrote first) is not an error: *leader is false. */
int ns_kube_lease_try(ns_kube_client *c, const char *ns, const char *name, const char *identity, int32_t duration_s,
                      bool *leader);

/* Gives the lease up (holder cleared, duration 1 s) when `identity` holds it, as on a clean shutdown. */
int ns_kube_lease_release(ns_kube_client *c, const char *ns, const char *name, const char *identity);

/* metav1.MicroTime: "2026-11-23T19:00:00.123456Z" (buf at least 32 bytes). */
void ns_kube_micro_time(int64_t ms, char *buf, size_t len);

#endif
