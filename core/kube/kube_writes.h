/*
 * Writes to the API server, the way Karpenter makes them (research §1.11):
 *   - create (generateName honoured: the server picks the name);
 *   - JSON merge patch, optionally with a resourceVersion precondition inside the patch (409 when stale), and a
 *     read-modify-patch loop that re-reads and retries on 409;
 *   - strategic merge patch for built-in kinds (Node finalizer removal with $deleteFromPrimitiveList);
 *   - the status subresource (sub = "status");
 *   - delete with uid/resourceVersion preconditions, grace period and propagation policy;
 *   - the Eviction API (kube_evict in this header).
 *
 * Every function returns 0 on a 2xx answer, else the negative category of ns_kube_fail (the message names the
 * object, the HTTP status, the reason and the server's message); *status (may be NULL) receives the HTTP status so
 * callers can tell 404 and 409 apart. Objects returned in *out are the caller's (cJSON_Delete); out may be NULL.
 */
#ifndef NS_KUBE_WRITES_H
#define NS_KUBE_WRITES_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "kube/kube_client.h"
#include "kube/kube_resource.h"

#define NS_KUBE_CONFLICT_RETRIES 10
#define NS_KUBE_MERGE_PATCH "application/merge-patch+json"
#define NS_KUBE_STRATEGIC_PATCH "application/strategic-merge-patch+json"

int ns_kube_get(ns_kube_client *c, const ns_kube_resource *r, const char *ns, const char *name, long *status,
                cJSON **out);

/* POST obj (which names metadata.name or metadata.generateName). */
int ns_kube_create(ns_kube_client *c, const ns_kube_resource *r, const char *ns, const cJSON *obj, long *status,
                   cJSON **out);

/* PUT obj (carrying its metadata.resourceVersion: 409 when stale). sub: NULL or "status". */
int ns_kube_update(ns_kube_client *c, const ns_kube_resource *r, const char *ns, const char *name, const char *sub,
                   const cJSON *obj, long *status, cJSON **out);

/* PATCH with content type `patch_type` (NS_KUBE_MERGE_PATCH or NS_KUBE_STRATEGIC_PATCH). When `rv` is not NULL it
 * is set as metadata.resourceVersion inside a copy of the patch: the write then happens only if the object is still
 * at that version (409 otherwise), as Karpenter's MergeFromWithOptimisticLock. sub: NULL or "status". */
int ns_kube_patch(ns_kube_client *c, const ns_kube_resource *r, const char *ns, const char *name, const char *sub,
                  const char *patch_type, const cJSON *patch, const char *rv, long *status, cJSON **out);

/* Builds a merge patch from the current object: 0 with *patch set (the caller's), 1 when nothing needs writing, or
 * negative to stop with that error. */
typedef int (*ns_kube_patch_fn)(void *ud, const cJSON *current, cJSON **patch);

/* Read, build the patch, write it with the read resourceVersion as precondition; on 409 read again and retry after a
 * short jittered pause, up to NS_KUBE_CONFLICT_RETRIES times. *conflicts (may be NULL) counts the 409s seen. */
int ns_kube_patch_retry(ns_kube_client *c, const ns_kube_resource *r, const char *ns, const char *name,
                        const char *sub, ns_kube_patch_fn fn, void *ud, int *conflicts, cJSON **out);

/* Removes one finalizer. Nodes (built-in) get a strategic merge patch with $deleteFromPrimitiveList, which needs no
 * resourceVersion and leaves other finalizers alone, as Karpenter's termination controller does; custom resources
 * (no strategic merge) get the remaining list as a merge patch under the resourceVersion precondition, retried on
 * 409. Absent object or finalizer: 0. */
int ns_kube_remove_finalizer(ns_kube_client *c, const ns_kube_resource *r, const char *ns, const char *name,
                             const char *finalizer);

typedef struct ns_kube_delete_opts {
    const char *uid;               /* preconditions.uid, or NULL */
    const char *resource_version;  /* preconditions.resourceVersion, or NULL */
    int64_t grace_period_s;        /* -1 = the object's default */
    const char *propagation;       /* "Background", "Foreground", "Orphan" or NULL */
} ns_kube_delete_opts;

int ns_kube_delete(ns_kube_client *c, const ns_kube_resource *r, const char *ns, const char *name,
                   const ns_kube_delete_opts *opts, long *status);

typedef enum ns_kube_evict_result {
    NS_KUBE_EVICTED = 0,     /* the pod is being deleted */
    NS_KUBE_EVICT_BLOCKED,   /* a PodDisruptionBudget forbids it now (429, or the "more than one PDB" 500) */
    NS_KUBE_EVICT_GONE,      /* 404 or a uid mismatch (409): the pod is gone or was replaced */
} ns_kube_evict_result;

/* POST pods/NAME/eviction (policy/v1) with the uid precondition (may be NULL), never retried by the transport (a
 * 429 is an answer, not throttling). Other failures are errors. */
int ns_kube_evict(ns_kube_client *c, const char *ns, const char *name, const char *uid, ns_kube_evict_result *result);

#endif
