/*
 * What the engine's controllers share: the engine struct, the per-step instance-type cache, the unavailable-offerings
 * cache, the scheduling view (in-flight NodeClaims as nodes, for provisioning and for the disruption controller's
 * simulations), NodeClaim helpers, and each controller's step function.
 *
 * Internal to core/engine (the engine and the disruption controller). Nothing here is an ABI; everything runs on the engine's one thread.
 */
#ifndef NS_ENGINE_INTERNAL_H
#define NS_ENGINE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cloud/instance_types.h"
#include "cost/commitments.h"
#include "engine/cluster_writes.h"
#include "engine/engine.h"
#include "engine/unavailable.h"
#include "model/cluster.h"
#include "model/names.h"
#include "sched/sched.h"

/* Marks an offering unavailable for cfg.unavailable_offering_ttl_ms (in the cache and in this step's instance-type
 * sets) and records "marked offering unavailable" with why as the reason. 0 or NS_ERR_INTERNAL. */
int ns_engine_mark_unavailable(ns_engine *e, const char *type, const char *zone, const char *capacity_type,
                               const char *why);

/* ---- Instance types per node class, listed once per step, with the unavailable offerings marked unavailable. */

typedef struct ns_engine_types {
    const ns_nodeclass_def **owner; /* node class of each set (a pointer into the cluster, valid for the step) */
    ns_itype_set *sets;
    char **errors;                  /* per set: why listing failed, or NULL */
    size_t n, cap;
    /* Per NodePool (indexed like cluster->nodepools) for ns_sched_input: the pool's set or NULL, and why. */
    const ns_itype_set **pool_types;
    const char **pool_errors;
    const ns_nodeclass **pool_nodeclass;
    size_t n_pools;
    int64_t listed_in_step; /* the engine's step_seq when listed; -1 when not listed yet or stale */
} ns_engine_types;

/* ---- Registered controllers (the disruption controller). */

#define NS_ENGINE_MAX_CONTROLLERS 8

typedef struct ns_engine_controller {
    char *name;
    ns_engine_controller_fn fn;
    void *ctx;
    void (*free_ctx)(void *ctx);
} ns_engine_controller;

/* ---- Node repair (ctl_repair.c): the provider's policies as last listed. */

typedef struct ns_engine_repair_policy {
    char *type;   /* Node condition type, "Ready" */
    char *status; /* "False", "Unknown", ... */
    int64_t toleration_ms;
} ns_engine_repair_policy;

typedef struct ns_engine_repair_policies {
    ns_engine_repair_policy *items;
    size_t n, cap;
} ns_engine_repair_policies;

void ns_engine_repair_policies_free(ns_engine_repair_policies *p); /* members; accepts NULL */
/* Whether node n matches a repair policy; if so the policy (closest to its toleration) and when its toleration ends
 * (the condition's last transition plus the toleration). */
bool ns_engine_repair_due(const ns_engine *e, const ns_node *n, const char **type, const char **status,
                          int64_t *at_ms);

/* ---- Warm headroom (engine_headroom.c): where the last provisioning round put the CapacityBuffers' chunks. */

typedef struct ns_headroom_slot {
    char *node;         /* a view node: a Node, or an in-flight NodeClaim standing as its node (engine_plan.c) */
    size_t chunks;      /* virtual pods placed there */
    ns_res requests;    /* their requests, summed */
} ns_headroom_slot;

typedef struct ns_headroom_buffer {
    char *key; /* "namespace/name" */
    ns_engine_buffer_chunks chunks;
} ns_headroom_buffer;

typedef struct ns_engine_headroom {
    ns_headroom_slot *slots;
    size_t n, cap;
    ns_headroom_buffer *buffers; /* per buffer, in the cluster's order */
    size_t n_buffers;
    size_t wanted;   /* chunks the buffers asked for */
    size_t unplaced; /* chunks no node or new claim could take (NodePool limits, no fitting type) */
} ns_engine_headroom;

void ns_engine_headroom_free(ns_engine_headroom *h); /* members; accepts NULL */

struct ns_engine {
    ns_engine_config cfg;
    char *cluster_name; /* cfg.cluster_name points here */
    ns_cluster *cluster;
    ns_plugin *plugin;
    struct ns_ctx *ctx;       /* the plugin's context: every entry point of engine.h runs in it */
    ns_cluster_writes store;  /* the store the engine was built with, owned */
    ns_cluster_writes writes; /* what controllers call: store, or a watcher wrapping it */
    ns_engine_types types;
    ns_unavailable_cache unavailable;
    int64_t launch_backoff_until_ms; /* throttled by the provider: no launch before this */
    ns_name_rng names;               /* NodeClaim name suffixes, seeded from the clock when the engine is built */
    int64_t step_seq;                  /* steps completed, for the instance-type listing's freshness */
    const volatile sig_atomic_t *stop; /* ns_engine_set_stop_flag */
    char *listing_error;               /* ns_engine_listing_error */
    int64_t last_round_ms;           /* last provisioning round (-1: none yet), to report unschedulable pods once */
    char **deferred;                 /* "ns/pod" the last provisioning round deferred for reserved capacity */
    size_t n_deferred;
    char **blocked;                  /* "claim|ns/pod|reason" of blocked evictions already recorded (log dedup) */
    size_t n_blocked;
    ns_decision *decisions;
    size_t n_decisions, cap_decisions;
    ns_engine_sample *history;
    size_t n_history, cap_history;
    ns_engine_controller controllers[NS_ENGINE_MAX_CONTROLLERS];
    size_t n_controllers;
    /* Event-driven time (engine_due.c). activity counts writes, decisions, provider launches and terminations, and
     * "due now" declarations; a step during which it did not move changed nothing, so the next one can wait for
     * wake_ms, the earliest time declared due since the step started. */
    _Atomic uint64_t activity; /* the Kubernetes store's concurrent writes count from their threads */
    uint64_t activity_at_step;
    int64_t wake_ms;
    int64_t *deadlines; /* provider deadlines announced by events (an instance stops or terminates then) */
    size_t n_deadlines, cap_deadlines;
    ns_cluster_writes counting; /* what controllers write through unless a watcher wraps it: counts, then e->store */
    ns_engine_repair_policies repair; /* cfg.node_repair: the provider's repair policies */
    char **repair_blocked;            /* claims reported as "node repair blocked" while the breaker stays open */
    size_t n_repair_blocked;
    ns_engine_headroom headroom;      /* cfg.capacity_buffer: the last headroom round's placement */
};

/* ---- Event-driven time (engine_due.c). */

/* Wraps e->store so every write counts as activity; e->writes starts as this wrapper. */
void ns_engine_count_writes(ns_engine *e);
/* Something happened, or may change at any tick: the next step comes one tick later. */
void ns_engine_busy(ns_engine *e);
/* Remembers a provider's announced deadline (an interruption's, a stop's) until it has passed. */
int ns_engine_remember_deadline(ns_engine *e, int64_t at_ms);
/* Declares what the engine's controllers wait for in the cluster and in their own state (registration and
 * initialization delays, the registration TTL, grace periods, do-not-disrupt durations, back-off, the unavailable
 * offerings' expiry, provider deadlines). Called at the end of every step. */
void ns_engine_declare_due(ns_engine *e);

/* Replaces the writes controllers use (a watcher wrapping e->writes); the caller keeps ownership of w's ctx and must
 * restore the previous table (ns_engine_set_writes with the value it saved) before freeing it. */
void ns_engine_set_writes(ns_engine *e, const ns_cluster_writes *w);

/* Lists instance types for every node class the NodePools use (at most once per step), applying the
 * unavailable cache. 0, or NS_ERR_INTERNAL; a provider failure for one class disables its pools with a reason. */
int ns_engine_refresh_types(ns_engine *e);
void ns_engine_types_free(ns_engine_types *t); /* members; accepts NULL */
/* The price of an offering, or -1 when the type or offering is unknown. */
double ns_engine_offering_price(const ns_engine *e, const char *nodeclass_kind, const char *nodeclass_name,
                                const char *type, const char *zone, const char *capacity_type);

/* ---- The scheduling view: what provisioning and disruption simulate over. */

typedef struct ns_engine_plan_opts {
    /* Nodes taken out of the view (disruption candidates); their pods are pending in the view. */
    const char *const *removed_nodes;
    size_t n_removed;
    /* Leave pods that are pending in the cluster out of the round (only the removed nodes' pods are placed). */
    bool only_removed_pods;
    /* Leave in-flight NodeClaims (launched or not, not yet initialized) out of the view. */
    bool exclude_inflight;
    /* Nodes that take no pod in this round, keeping those they run (a consolidation simulation's nodes still inside
     * their NodePool's consolidateAfter window, Karpenter's isUnderConsolidateAfter). */
    const char *const *closed_nodes;
    size_t n_closed;
    /* Add the CapacityBuffers' chunks as virtual pods after the cluster's pods (engine_headroom.c). */
    bool headroom;
    /* Per cluster pod, or NULL: the view node a pod the round would schedule stays on (provisioning's headroom pass,
     * after its first pass placed the real pods); such a pod without an entry is left out of the round. */
    const char *const *pinned;
    size_t n_pinned;
    /* A pod whose reserved capacity this round used up goes on-demand or spot instead of waiting: Karpenter's
     * disruption simulations build their scheduler without DisableReservedCapacityFallback. */
    bool reserved_fallback;
} ns_engine_plan_opts;

typedef struct ns_engine_plan {
    /* A shallow cluster: its pointer arrays are the plan's; it shares pools, classes, PDBs, DaemonSets and most pods
     * with the engine's cluster. pods[i] corresponds to the cluster's pods[i] (pods of removed nodes and left-out
     * pending pods are plan-owned shallow copies). nodes[0..n_cluster_nodes) are cluster Nodes (or plan copies of
     * uninitialized ones with startup and ephemeral taints dropped); the rest stand for in-flight NodeClaims. */
    ns_cluster view;
    size_t n_cluster_nodes;
    /* Per view node: the NodeClaim it belongs to (NULL for nodes not managed by the engine). */
    ns_nodeclaim **node_claim;
    /* Per view node: true when pods may be bound there now (a cluster Node, initialized, schedulable). */
    bool *bindable;
    ns_sched_result result;
    /* view.pods[n_cluster_pods...] are virtual pods of CapacityBuffers (opts.headroom), in buffer order. */
    size_t n_cluster_pods;
    /* internal: plan-owned copies */
    ns_pod **own_pods;
    size_t n_own_pods;
    ns_node **own_nodes;
    size_t n_own_nodes;
    char **own_names; /* the virtual pods' names */
    size_t n_own_names;
    /* With commitments (engine_commit.c): what the cluster's nodes left of them, and the instance-type sets priced
     * with it (indexed like types.sets) that the round's options point into. */
    ns_commit_ledger *ledger;
    ns_itype_set *priced;
    size_t n_priced;
    const ns_itype_set **priced_pool_types;
} ns_engine_plan;

/* Builds the view at the current clock, refreshes instance types, and runs the scheduler over it. opts may be NULL.
 * *out is the caller's; free with ns_engine_plan_free. The plan points into the cluster: free it before any write. */
int ns_engine_plan_run(ns_engine *e, const ns_engine_plan_opts *opts, ns_engine_plan *out);
/* A shallow copy of a cluster pod owned by the plan (freed with it), NULL with the error recorded. */
ns_pod *ns_engine_plan_pod(ns_engine_plan *p, const ns_pod *src);
/* Appends the CapacityBuffers' chunks to the view's pods (opts.headroom). 0 or NS_ERR_INTERNAL. */
int ns_engine_headroom_pods(ns_engine *e, ns_engine_plan *p);
/* Provisioning's headroom pass: with the real pods where the first pass put them (`pinned`, per cluster pod, may
 * be NULL), places the buffers' chunks, creates NodeClaims for those that need new nodes, and keeps where they went
 * in e->headroom. Nothing when the gate is off or no buffer asks for a chunk. */
int ns_engine_headroom_round(ns_engine *e, const char *const *pinned, size_t n_pinned);
/* True when the last headroom round put a chunk on this node (emptiness leaves it, as Karpenter's HasBufferPods). */
bool ns_engine_holds_headroom(const ns_engine *e, const char *node_name);
/* Fills the sample's headroom fields (engine.h) from e->headroom and the cluster as it is now. */
void ns_engine_headroom_sample(const ns_engine *e, ns_engine_sample *out);
void ns_engine_plan_free(ns_engine_plan *p); /* accepts NULL or a zeroed plan */

/* ---- Commitments (cost/commitments.h, engine_commit.c). */

bool ns_engine_has_commitments(const ns_engine *e);
/* ns_engine_commit_ledger without the nodes named in removed_nodes (Node names; a disruption simulation's
 * candidates): they release what they consumed, so the round is priced with the room they free. claim_prices (may be
 * NULL; one per cluster NodeClaim) receives each launched claim's effective price as the ledger charged it, -1 for
 * the others and the removed ones. *out as ns_engine_commit_ledger's. */
int ns_engine_commit_ledger_without(const ns_engine *e, const char *const *removed_nodes, size_t n_removed,
                                    double *claim_prices, ns_commit_ledger **out);
/* Prices the round's instance types with what the cluster's nodes but removed_nodes leave of cfg.commitments:
 * *pool_types is the pools' priced sets (owned by p), or types.pool_types unchanged without commitments. */
int ns_engine_commit_plan_begin(const ns_engine *e, const char *const *removed_nodes, size_t n_removed,
                                ns_engine_plan *p, const ns_itype_set *const **pool_types);
/* After the round: its claims play against the ledger in order, so those past a commitment's end are priced at
 * their own prices (ns_commit_ledger_play_round). */
int ns_engine_commit_plan_end(const ns_engine *e, ns_engine_plan *p);
/* The type of the engine's own sets that a type of p's priced sets copies (t itself when it is no priced copy): what
 * an option may keep pointing at once the plan is freed (its price_per_hour keeps the effective price). */
const ns_itype *ns_engine_commit_unpriced(const ns_engine *e, const ns_engine_plan *p, const ns_itype *t);
void ns_engine_commit_plan_free(ns_engine_plan *p);
/* A launch's instance types priced with what the cluster's launched claims and nodes leave of the commitments;
 * *priced shares set's strings (ns_commit_priced_set_free). */
int ns_engine_commit_launch_set(const ns_engine *e, const ns_itype_set *set, ns_itype_set *priced);

/* ---- NodeClaims. */

/* A fresh NodeClaim name that no NodeClaim or Node in the cluster uses, made as Karpenter's generateName
 * "<nodepool>-" makes it (model/names.h: at most 63 characters, so it is also a valid client token and label value).
 * buf needs NS_GENERATED_NAME_MAX + 1 bytes. NS_OK, or NS_ERR_INTERNAL when every candidate was taken. */
int ns_engine_claim_name(ns_engine *e, const char *nodepool, char *buf, size_t len);
/* Creates a NodeClaim from a scheduler claim of plan `p` (nodepool, requirements, instance-type options, requests),
 * with the termination finalizer and the NodePool's hash annotations, through the writes layer, and records "created
 * nodeclaim". The claim is launched by the lifecycle controller (at once when launch_now). *name_out (may be NULL)
 * receives the name (NS_NAME_MAX bytes). */
int ns_engine_create_claim(ns_engine *e, const ns_sched_claim *c, bool launch_now, char *name_out);
/* Launches one claim now (options from its requirements, cheapest first, without unavailable offerings; falls back on
 * insufficient capacity; honours throttling). NS_OK when launched or when the launch will be retried later; an error
 * only for a write that failed. The claim may have been deleted when it had no option left (check by name). */
int ns_engine_launch_claim(ns_engine *e, ns_nodeclaim *claim);

/* Calls fn for every NodeClaim of the cluster, found again by name before each call: fn may create or delete claims
 * (a launch deletes a claim with no capacity anywhere), which moves the cluster's list. Stops at the first error. */
typedef int (*ns_engine_claim_fn)(ns_engine *e, ns_nodeclaim *claim, void *ctx);
int ns_engine_each_claim(ns_engine *e, ns_engine_claim_fn fn, void *ctx);

/* Lookups over the cluster. */
ns_nodeclaim *ns_engine_claim_of_node(const ns_engine *e, const ns_node *node);
ns_node *ns_engine_node_of_claim(const ns_engine *e, const ns_nodeclaim *claim);
/* Pods bound to node_name (DaemonSet pods included), into a malloc'd array (*out; free with free()). */
int ns_engine_pods_on_node(const ns_engine *e, const char *node_name, ns_pod ***out, size_t *n);
/* True for pods that are DaemonSet pods (owner kind DaemonSet) or mirror pods (owner kind Node). */
bool ns_engine_pod_is_daemon(const ns_pod *pod);
/* True for pods termination neither evicts nor waits for (Karpenter's IsDrainable): mirror pods, and pods that
 * tolerate karpenter.sh/disrupted:NoSchedule (they were meant to stay on a node being disrupted). */
bool ns_engine_pod_stays_on_node(const ns_pod *pod);
/* Whether one of the pod's volumes is a PersistentVolumeClaim bound to the PersistentVolume pv_name. */
bool ns_engine_pod_uses_pv(const ns_engine *e, const ns_pod *pod, const char *pv_name);
/* Karpenter's IsCurrentlyReschedulable: a pod of a leaving node the scheduler plans capacity for. Not for DaemonSet
 * and mirror pods, terminal or terminating pods (a terminating StatefulSet pod excepted), pods under an active
 * do-not-disrupt, and pods no eviction will ever move: two budgets select them, or one that allows no voluntary
 * eviction at all (maxUnavailable 0 or 0%, minAvailable 100%). */
bool ns_engine_pod_currently_reschedulable(const ns_engine *e, const ns_pod *pod, int64_t now_ms);
/* system-cluster-critical / system-node-critical priority class. */
bool ns_engine_pod_is_critical(const ns_pod *pod);
/* Launched (provider id set), Registered, Initialized, deleting. */
bool ns_claim_launched(const ns_nodeclaim *c);
bool ns_claim_registered(const ns_nodeclaim *c);
bool ns_claim_initialized(const ns_nodeclaim *c);
bool ns_claim_deleting(const ns_nodeclaim *c);
/* When a deleting claim's pods are all forced out (Karpenter's node termination time): its
 * karpenter.sh/nodeclaim-termination-timestamp annotation (node repair sets it to the time of repair), or else its
 * deletion plus its terminationGracePeriod. False when neither applies: termination then waits for evictions. */
bool ns_claim_termination_end(const ns_nodeclaim *c, int64_t *end_ms);
/* Karpenter's forceful termination (node repair's annotateTerminationGracePeriod, the AWS interruption controller's
 * annotateTerminationTimestamp): the claim's termination timestamp becomes `now` (RFC 3339, seconds) unless one already
 * set has passed, written through the writes layer; so its drain waits for no PDB or volume. */
int ns_engine_terminate_by(ns_engine *e, ns_nodeclaim *claim, int64_t now);
/* The NodePool hash Karpenter compares for drift (template labels, annotations, taints, startup taints, requirements,
 * node class reference, expireAfter, terminationGracePeriod), as a hex string into buf (17 bytes). */
void ns_nodepool_hash(const ns_nodepool *np, char *buf, size_t len);
/* A hash of a node class's kind, name and spec without the fields the provider's drift check owns (its table's
 * drift_fields, "Kind.field" ending with NULL; may be NULL), hex into buf (17 bytes). */
void ns_nodeclass_hash(const ns_nodeclass_def *def, const char *const *drift_fields, char *buf, size_t len);

/* Starts termination of a claim: sets its deletion timestamp through the writes layer (the termination controller
 * taints, drains, terminates and removes it over the next steps). method and reason go into the decision. */
int ns_engine_delete_claim(ns_engine *e, ns_nodeclaim *claim, const char *method, const char *reason);

/* Adds karpenter.sh/disrupted:NoSchedule to the node (once) and records "tainted node" with method. */
int ns_engine_taint_disrupted(ns_engine *e, ns_node *n, const char *method);
/* For a claim carrying disruption annotations and not yet deleting: deletes it once every replacement is
 * initialized, or abandons the disruption (annotations removed, node untainted) when a replacement is gone. */
int ns_engine_disruption_handover(ns_engine *e, ns_nodeclaim *claim);

/* ---- Static capacity (ctl_static.c). */

/* A static pool's NodeClaims as Karpenter's NodePoolState counts them: deleting, pending disruption (carrying
 * ns_engine_disrupt's annotations, not deleting), and active (the rest, launched or not). */
typedef struct ns_static_count {
    int64_t active, deleting, pending;
} ns_static_count;
void ns_engine_static_count(const ns_cluster *c, const ns_nodepool *np, ns_static_count *out);
/* The pool's limits.nodes, or INT64_MAX when it does not limit its nodes. */
int64_t ns_engine_nodes_limit(const ns_nodepool *np);

/* ---- Controllers, run by ns_engine_step in this order. Each returns NS_OK or an error that ends the step. */
/* Writes a decision's log line (engine_log.c: Karpenter's field shapes). */
void ns_engine_log_decision(const ns_engine *e, const ns_decision *d, ns_log_level level, const char *logger);

int ns_ctl_interruption(ns_engine *e);
int ns_ctl_gc(ns_engine *e);
int ns_ctl_kubelet(ns_engine *e);     /* simulated kubelet: register Nodes, turn them ready (cfg.simulate_kubelet) */
/* simulated attach-detach controller (cfg.simulate_controllers): VolumeAttachments of the pods' CSI volumes */
int ns_ctl_attach_detach(ns_engine *e);
int ns_ctl_repair(ns_engine *e);      /* node repair (cfg.node_repair): delete claims of unhealthy nodes */
int ns_ctl_lifecycle(ns_engine *e);
/* Disruption hand-over (ns_engine_disruption_handover for every claim), before provisioning so that the
 * provisioner sees an abandoned disruption's pods where they are. */
int ns_ctl_handover(ns_engine *e);
int ns_ctl_static(ns_engine *e);      /* static capacity (cfg.static_capacity): NodePools kept at spec.replicas */
int ns_ctl_provisioner(ns_engine *e); /* binds pods to initialized nodes (cfg.simulate_scheduler), creates claims */
/* Provisioning rounds one step runs at most: the first, then one more each time a round changed what the next sees. */
#define NS_PROVISIONING_ROUNDS_MAX 3
int ns_ctl_termination(ns_engine *e); /* drain, terminate, remove */

/* Helpers for decision strings. */
void ns_engine_pod_ref(const ns_pod *pod, char *buf, size_t len); /* "namespace/name" */

#endif
