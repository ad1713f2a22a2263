/*
 * Leases (coordination.k8s.io/v1) as the cluster reports them: leader election (Karpenter's
 * karpenter-leader-election) and node heartbeats (kube-node-lease).
 *
 * Memory: a lease owns everything it points to; ns_lease_free frees it too and accepts NULL.
 */
#ifndef NS_LEASE_H
#define NS_LEASE_H

#include <stdint.h>

#include "model/meta.h"

typedef struct ns_lease {
    ns_meta meta;
    char *holder;        /* spec.holderIdentity; NULL when nobody holds it */
    int32_t duration_s;  /* spec.leaseDurationSeconds; 0 when unset */
    int64_t acquire_ms;  /* spec.acquireTime, unix ms; 0 when unset */
    int64_t renew_ms;    /* spec.renewTime, unix ms; 0 when unset */
    int32_t transitions; /* spec.leaseTransitions */
} ns_lease;

void ns_lease_free(ns_lease *l);

#endif
