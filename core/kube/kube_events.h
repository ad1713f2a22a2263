/*
 * Kubernetes Events (core/v1) with de-duplication, as client-go's EventCorrelator: the same event (object, type,
 * reason, message) seen again within 10 minutes bumps the existing Event's count and lastTimestamp with a merge
 * patch instead of creating another. Events about cluster-scoped objects (Nodes, NodeClaims, NodePools) go to
 * namespace "default", as client-go puts them. Thread-safe.
 */
#ifndef NS_KUBE_EVENTS_H
#define NS_KUBE_EVENTS_H

#include <stdint.h>

#include "kube/kube_client.h"

#define NS_KUBE_EVENT_DEDUP_MS (10 * 60 * 1000)

typedef struct ns_kube_recorder ns_kube_recorder;

/* What an event is about. */
typedef struct ns_kube_event_ref {
    const char *api_version; /* "v1", "karpenter.sh/v1" */
    const char *kind;
    const char *namespace_;  /* NULL for cluster-scoped objects */
    const char *name;
    const char *uid;         /* may be NULL */
} ns_kube_event_ref;

/* component: source.component and reportingController ("karpenter"). The client must outlive the recorder. */
int ns_kube_recorder_new(ns_kube_client *c, const char *component, ns_kube_recorder **out);
void ns_kube_recorder_free(ns_kube_recorder *r); /* accepts NULL */

/* type "Normal" or "Warning". 0 or the write's error. *count (may be NULL) gets the Event's count after it. */
int ns_kube_record(ns_kube_recorder *r, const ns_kube_event_ref *ref, const char *type, const char *reason,
                   const char *message, int *count);

#endif
