/*
 * What every loaded object carries: Kubernetes metadata plus where it came from.
 */
#ifndef NS_META_H
#define NS_META_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/labels.h"

typedef struct ns_meta {
    char *name;
    char *namespace_; /* NULL for cluster-scoped kinds; "default" for a namespaced object that named none */
    ns_labels labels;
    ns_labels annotations;
    /* The controlling owner (ownerReferences with controller: true, else the first one), or the object a workload
     * was expanded from (a Deployment's pods are owned by ReplicaSet <deploy>-<hash>). NULL when none. */
    char *owner_kind;
    char *owner_name;
    const char *source_file; /* interned (model/intern.h): the manifest it was loaded from; NULL for objects built in
                              * code */
    int source_line;   /* 1-based line of the object's first line in source_file; 0 when unknown */
    /* Lifecycle, as Kubernetes keeps it: read from metadata (API server objects, manifests that carry it) and set by
     * the lifecycle engine; zero when unknown. */
    int64_t creation_ms; /* creationTimestamp, unix ms; 0 when unknown */
    int64_t deletion_ms; /* deletionTimestamp, unix ms; 0 = not being deleted */
    int64_t generation;  /* metadata.generation, which the API server counts (0 when unknown): the observedGeneration
                          * of the conditions the controller writes */
    char **finalizers;   /* owned */
    size_t n_finalizers;
} ns_meta;

/* Deep copy into *dst (overwritten). 0 or NS_ERR_INTERNAL; on failure *dst is empty. */
int ns_meta_copy(const ns_meta *src, ns_meta *dst);
void ns_meta_free(ns_meta *m); /* members; accepts NULL */

/* Finalizers: has, add (no duplicate; 0 or NS_ERR_INTERNAL), remove (when present). */
bool ns_meta_has_finalizer(const ns_meta *m, const char *finalizer);
int ns_meta_add_finalizer(ns_meta *m, const char *finalizer);
void ns_meta_remove_finalizer(ns_meta *m, const char *finalizer);

#endif
