/*
 * The manifest loader's record of the workloads it expanded into pods, and of the workloads that loaded objects name
 * as their owners. A `kubectl get -o yaml` dump holds a Deployment, its ReplicaSets and their pods: each workload
 * there stands through its own objects and must count once, whichever order the objects come in
 * (core/manifest/workload_owners.c decides; this file only keeps the record).
 *
 * Workloads are keyed by kind, namespace and name (an owner reference's kind and name in the object's namespace).
 * Kept by the cluster (ns_cluster.expansions) and freed with it; the loader's thread only.
 */
#ifndef NS_EXPANSIONS_H
#define NS_EXPANSIONS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct ns_expansions ns_expansions;

/* Frees the record; accepts NULL. */
void ns_expansions_free(ns_expansions *x);

/* Records that a loaded object names KIND NS/NAME as its owner: the workload stands through its own objects from now
 * on. Creates *x when NULL. 0 or NS_ERR_INTERNAL. */
int ns_expansions_mark_owned(ns_expansions **x, const char *kind, const char *ns, const char *name);
/* True once ns_expansions_mark_owned named KIND NS/NAME. x may be NULL. */
bool ns_expansions_owned(const ns_expansions *x, const char *kind, const char *ns, const char *name);

/* Records that pod NS/POD was expanded from KIND NS/NAME. Creates *x when NULL. 0 or NS_ERR_INTERNAL. */
int ns_expansions_add_pod(ns_expansions **x, const char *kind, const char *ns, const char *name, const char *pod);
/* Hands over the names of the pods expanded from KIND NS/NAME and forgets them: *pods is the caller's
 * (ns_strv_free(*pods, *n)); NULL and 0 when there are none. x may be NULL. */
void ns_expansions_take_pods(ns_expansions *x, const char *kind, const char *ns, const char *name, char ***pods,
                             size_t *n);

#endif
