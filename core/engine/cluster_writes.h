/*
 * The cluster-writes layer: every change the engine makes to cluster objects goes through this table, so the
 * in-memory implementation (simulation/cluster_writes_mem.h, over an ns_cluster) can later be replaced by one that calls the
 * Kubernetes API, and a wrapper can watch every write (the invariant checker wraps it, as SQLite's test_vfs wraps a
 * VFS).
 *
 * Reads are not here: the engine reads the ns_cluster directly (a Kubernetes implementation keeps it as its informer
 * cache). An operation that takes an object pointer takes one the cluster owns; the caller may have changed it in
 * place before calling an update operation (the in-memory store already holds the change; an API implementation
 * sends it).
 *
 * Pointers: operations that remove an object (delete_* when no finalizer holds it, remove_*_finalizer on a deleting
 * object, evict_pod and delete_pod) may free it and shift the cluster's arrays; the caller must not use the pointer,
 * nor an index into the cluster's lists, afterwards.
 *
 * Errors: NS_OK or a negative ns_err with the error recorded. evict_pod returns NS_ERR_THROTTLED when a
 * PodDisruptionBudget forbids the eviction (the Eviction API's 429), with the message naming the budget.
 *
 * Threading: as the engine, one thread at a time, except for the jobs a store runs through its concurrently op.
 */
#ifndef NS_CLUSTER_WRITES_H
#define NS_CLUSTER_WRITES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/cluster.h"

typedef struct ns_cluster_writes_ops {
    /* NodeClaims. create takes ownership of claim (even on failure). update persists changes the caller made to the
     * claim's metadata (labels, annotations, finalizers) and status (conditions, provider id, node name, resources).
     * delete sets the deletion timestamp (now) and removes the object at once when it has no finalizer. */
    int (*create_nodeclaim)(void *ctx, ns_nodeclaim *claim);
    int (*update_nodeclaim)(void *ctx, ns_nodeclaim *claim);
    int (*delete_nodeclaim)(void *ctx, ns_nodeclaim *claim);
    int (*remove_nodeclaim_finalizer)(void *ctx, ns_nodeclaim *claim, const char *finalizer);

    /* Nodes. create (the kubelet registering) takes ownership. Taints are matched by key and effect; adding a taint
     * that is present replaces its value. update_node_status persists ready, capacity and allocatable. */
    int (*create_node)(void *ctx, ns_node *node);
    int (*add_node_taint)(void *ctx, ns_node *node, const ns_taint *taint);
    int (*remove_node_taint)(void *ctx, ns_node *node, const char *key, const char *effect);
    int (*set_node_label)(void *ctx, ns_node *node, const char *key, const char *value); /* value NULL: remove */
    int (*set_node_annotation)(void *ctx, ns_node *node, const char *key, const char *value); /* NULL: remove */
    int (*set_node_unschedulable)(void *ctx, ns_node *node, bool unschedulable);
    int (*update_node_status)(void *ctx, ns_node *node);
    int (*delete_node)(void *ctx, ns_node *node);
    int (*remove_node_finalizer)(void *ctx, ns_node *node, const char *finalizer);

    /* Pods. create takes ownership. bind sets spec.nodeName (the pod runs from then on). evict goes through the
     * Eviction API: PodDisruptionBudgets are checked (NS_ERR_THROTTLED when one forbids it); an evicted pod is
     * deleted, and the in-memory store's workload-controller stand-in brings back a pending copy for pods of a
     * ReplicaSet, StatefulSet or Job. delete removes the pod without checking budgets (the same stand-in applies).
     * `voluntary` tells watchers whether the engine chose this disruption (drains for disruption, expiration,
     * interruption or deletion); it is false for pods deleted after a terminationGracePeriod ran out, pods of a lost
     * node, and deletions a person asked for (the timeline). */
    int (*create_pod)(void *ctx, ns_pod *pod);
    int (*bind_pod)(void *ctx, ns_pod *pod, const char *node_name);
    int (*evict_pod)(void *ctx, ns_pod *pod, bool voluntary);
    int (*delete_pod)(void *ctx, ns_pod *pod, bool voluntary);

    /* NodePools and node classes (timeline changes). put replaces the object of the same name, or adds it; it takes
     * ownership. */
    int (*put_nodepool)(void *ctx, ns_nodepool *np);
    int (*delete_nodepool)(void *ctx, const char *name);
    int (*put_nodeclass)(void *ctx, ns_nodeclass_def *def);

    /* Optional. Runs job(arg, i) for every i < n, several at once on threads of its own when the store's writes wait
     * on something slow (the Kubernetes store: a round trip to the API server each), as the kubelets of many nodes
     * write at once; NULL: one after another (ns_cluster_writes_each). A job writes through the table it was given
     * (wrappers included), and only objects no other job of the call touches: with this op set, the Node writes
     * (create_node, update_node_status, add/remove_node_taint, set_node_label, set_node_annotation) on distinct Nodes
     * and update_nodeclaim on distinct claims must be safe to call at once (wrappers that forward this op must be
     * too). Returns 0 or the first failed job's error, recorded on the caller's thread, once
     * every job ran. */
    int (*concurrently)(void *ctx, size_t n, int (*job)(void *arg, size_t i), void *arg);

    /* Frees the store (ctx). The engine calls it for the store it was built with (ns_engine_new_with_store), in
     * ns_engine_free. May be NULL when there is nothing to free. */
    void (*destroy)(void *ctx);
} ns_cluster_writes_ops;

typedef struct ns_cluster_writes {
    const ns_cluster_writes_ops *ops;
    void *ctx;
} ns_cluster_writes;

/* Kubernetes' eviction check, shared by the in-memory store and the engine's drain planning: NS_OK when evicting pod
 * now leaves every PodDisruptionBudget selecting it with disruptionsAllowed >= 0, else NS_ERR_THROTTLED with a
 * message naming the budget; NS_ERR_THROTTLED too for a running pod that more than one budget selects (the API's
 * refusal). A pod counts as healthy when it is bound to a Ready node and not terminal. */
int ns_pdb_check_eviction(const ns_cluster *c, const ns_pod *pod);

/* Runs job(arg, i) for every i < n through w's concurrently op, or one after another when w has none (every job runs
 * either way). 0 or the first failed job's error. */
int ns_cluster_writes_each(const ns_cluster_writes *w, size_t n, int (*job)(void *arg, size_t i), void *arg);

#endif
