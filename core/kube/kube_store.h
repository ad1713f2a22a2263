/*
 * An informer's local cache: objects by namespace/name, with indexes by namespace, spec.nodeName (pods) and
 * providerID (nodes: spec.providerID; node claims: status.providerID) — the lookups Karpenter's field indexers serve.
 *
 * An entry keeps what the engine needs, not the JSON: its identity strings (one allocation with the entry, chained
 * into the hash tables through the entry itself) and the decoded model object (`typed`, owned by the entry, freed
 * with the store's free function).
 *
 * Not thread-safe by itself: the informer holds its lock around every call.
 */
#ifndef NS_KUBE_STORE_H
#define NS_KUBE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ns_kube_obj {
    const char *namespace_; /* NULL for cluster-scoped objects */
    const char *name;
    const char *uid;
    const char *resource_version;
    const char *node_name;   /* pods: spec.nodeName; NULL when unbound or another kind */
    const char *provider_id; /* nodes: spec.providerID; node claims: status.providerID; else NULL */
    void *typed;             /* the decoded model object, or NULL for kinds kept by identity only */
    uint32_t generation;     /* internal: the relist that last saw it */
    struct ns_kube_obj *next[4]; /* internal: the store's hash chains (by namespace/name, then each index) */
    /* internal: the link pointing at this entry in each chain, so taking it out is O(1): every pod of a namespace
     * shares one chain of the namespace index (20,000 long in the controller's benchmark) */
    struct ns_kube_obj **pprev[4];
} ns_kube_obj;

typedef enum ns_kube_index {
    NS_KUBE_BY_NAMESPACE = 0,
    NS_KUBE_BY_NODE_NAME,
    NS_KUBE_BY_PROVIDER_ID,
    NS_KUBE_N_INDEXES,
} ns_kube_index;

typedef struct ns_kube_store ns_kube_store;
typedef void (*ns_kube_free_fn)(void *typed);

/* free_typed frees an entry's typed object (may be NULL when entries never have one). NULL on allocation failure
 * with NS_ERR_INTERNAL recorded. */
ns_kube_store *ns_kube_store_new(ns_kube_free_fn free_typed);
void ns_kube_store_free(ns_kube_store *s); /* every entry too; accepts NULL */

/* A new entry holding copies of the strings (any may be NULL but name) and taking `typed`; NULL with
 * NS_ERR_INTERNAL (typed is then the caller's). */
ns_kube_obj *ns_kube_obj_new(const char *namespace_, const char *name, const char *uid, const char *rv,
                             const char *node_name, const char *provider_id, void *typed);
/* The same, with namespace, name and node name borrowed from `typed` (strings the typed object holds, which live as
 * long as the entry): what informers of packed pods use, so those names are kept once. */
ns_kube_obj *ns_kube_obj_new_typed(const char *uid, const char *rv, const char *provider_id, void *typed,
                                   const char *typed_namespace, const char *typed_name, const char *typed_node_name);
/* Frees an entry not (or no longer) in a store. */
void ns_kube_obj_free(ns_kube_store *s, ns_kube_obj *o);

/* Inserts obj (the store takes it), replacing the entry of the same namespace/name; *old (may be NULL) receives the
 * replaced entry, which the caller frees with ns_kube_obj_free, else it is freed here. 0 or NS_ERR_INTERNAL (obj is
 * then freed). */
int ns_kube_store_put(ns_kube_store *s, ns_kube_obj *obj, ns_kube_obj **old);
/* Takes the entry out of the store (the caller frees it); NULL when absent. */
ns_kube_obj *ns_kube_store_take(ns_kube_store *s, const char *namespace_, const char *name);

const ns_kube_obj *ns_kube_store_get(const ns_kube_store *s, const char *namespace_, const char *name);
size_t ns_kube_store_len(const ns_kube_store *s);

/* Calls fn for each entry (all entries when index is NS_KUBE_N_INDEXES, else those whose index key equals key);
 * stops early when fn returns false. Returns how many entries fn saw. */
typedef bool (*ns_kube_obj_fn)(void *ud, const ns_kube_obj *obj);
size_t ns_kube_store_each(const ns_kube_store *s, ns_kube_index index, const char *key, ns_kube_obj_fn fn, void *ud);

/* Relist support: entries not marked with the current generation since ns_kube_store_begin_relist are taken out
 * one by one by ns_kube_store_take_unseen (NULL when none is left). */
void ns_kube_store_begin_relist(ns_kube_store *s);
void ns_kube_store_mark_seen(ns_kube_store *s, ns_kube_obj *obj);
ns_kube_obj *ns_kube_store_take_unseen(ns_kube_store *s);

#endif
