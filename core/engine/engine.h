/*
 * The node-lifecycle engine: Karpenter's controllers (provisioning, NodeClaim lifecycle, termination, interruption,
 * garbage collection, and disruption when registered) run over one cluster and one provider plugin, on the core's
 * clock (clock/ns_clock.h; simulations use the simulated clock).
 *
 * The engine keeps no decision state of its own. Everything it decides is written into the cluster objects
 * (NodeClaim conditions, annotations and finalizers, deletion timestamps, node labels and taints) and into the cloud
 * (instance tags, client tokens), so a new engine built over the same cluster and provider carries on where the
 * previous one stopped: nothing lost, nothing launched twice. What it does keep in memory is what Karpenter also keeps
 * in memory and may lose on restart: the unavailable-offerings cache, throttling back-off, the instance types it last
 * listed, the decision log and the per-step history below.
 *
 * Reads come straight from the ns_cluster (the informer cache of a Kubernetes-backed engine); every write goes through
 * the cluster-writes layer (engine/cluster_writes.h), so a Kubernetes API implementation can replace the in-memory
 * one without touching a controller.
 *
 * Threading: an engine is single-threaded. Call every function of one engine from one thread at a time; provider
 * calls happen on that thread. Different engines over different clusters may run in different threads: each runs in
 * its own context (context/ns_ctx.h), the one its plugin was loaded into (ns_plugin_load_params.ctx), so each has its
 * own clock, logger and error sink. Every function below enters that context for the length of the call.
 *
 * Errors: functions return NS_OK or a negative ns_err with the error recorded (errors/ns_error.h). A controller that
 * fails on one object records a decision or log line and goes on with the others; ns_engine_step returns an error
 * only for failures that leave the step meaningless (allocation failure, a cluster write that failed).
 */
#ifndef NS_ENGINE_H
#define NS_ENGINE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cost/commitments.h"
#include "engine/cluster_writes.h"
#include "model/cluster.h"
#include "nodesmith/provider.h"
#include "plugin/plugin_loader.h"
#include "sched/sched.h"

/* Names the engine writes into objects (Karpenter's where Karpenter has one). */
#define NS_FINALIZER_TERMINATION "karpenter.sh/termination"
#define NS_TAINT_DISRUPTED_KEY "karpenter.sh/disrupted"
#define NS_TAINT_UNREGISTERED_KEY "karpenter.sh/unregistered"
#define NS_TAINT_NOT_READY_KEY "node.kubernetes.io/not-ready"
#define NS_ANNOTATION_NODEPOOL_HASH "karpenter.sh/nodepool-hash"
/* The algorithm behind the hash above. A claim stamped by another version (an older nodesmith, or Karpenter itself,
 * whose hashstructure values nodesmith does not reproduce) is re-stamped, not drifted, as Karpenter's NodePool hash
 * controller does when it bumps NodePoolHashVersion: a takeover or an upgrade rolls no node. */
#define NS_ANNOTATION_NODEPOOL_HASH_VERSION "karpenter.sh/nodepool-hash-version"
/* "true" when MIN_VALUES_POLICY BestEffort lowered a minValues of the claim, else "false" (set on every new claim). */
#define NS_ANNOTATION_MIN_VALUES_RELAXED "karpenter.sh/nodeclaim-min-values-relaxed"
#define NS_NODEPOOL_HASH_VERSION "nodesmith-v2"
#define NS_ANNOTATION_NODECLASS_HASH "nodesmith.io/nodeclass-hash"
/* Disruption in progress, written on each candidate NodeClaim by ns_engine_disrupt. */
#define NS_ANNOTATION_DISRUPTION_METHOD "nodesmith.io/disruption-method"
#define NS_ANNOTATION_DISRUPTION_REASON "nodesmith.io/disruption-reason"
#define NS_ANNOTATION_DISRUPTION_REPLACEMENTS "nodesmith.io/disruption-replacements" /* comma-separated claims */
#define NS_ANNOTATION_DISRUPTION_FORCEFUL "nodesmith.io/disruption-forceful"       /* "true" when set */
/* "true" when the request's rollback is set and it has several replacements: one failing deletes the others. */
#define NS_ANNOTATION_DISRUPTION_ROLLBACK "nodesmith.io/disruption-rollback"
/* Interruption deadline (unix ms) written on a claim cordoned for a spot interruption or maintenance. */
#define NS_ANNOTATION_INTERRUPTION_DEADLINE "nodesmith.io/interruption-deadline-ms"
#define NS_ANNOTATION_REBALANCE "nodesmith.io/rebalance-recommended-ms"
/* When a deleting claim's remaining pods are forced out (RFC 3339), Karpenter's annotation; node repair sets it. */
#define NS_ANNOTATION_TERMINATION_TIMESTAMP "karpenter.sh/nodeclaim-termination-timestamp"
/* The launched offering's price per hour, written with the Launched condition (for cost reports). */
#define NS_ANNOTATION_PRICE "nodesmith.io/price-per-hour"

/* NodeClaim status condition types (Karpenter v1). */
#define NS_COND_LAUNCHED "Launched"
#define NS_COND_REGISTERED "Registered"
#define NS_COND_INITIALIZED "Initialized"
#define NS_COND_DRIFTED "Drifted"
#define NS_COND_DISRUPTION_REASON "DisruptionReason"
#define NS_COND_INSTANCE_TERMINATING "InstanceTerminating"
#define NS_COND_DRAINED "Drained"
#define NS_COND_VOLUMES_DETACHED "VolumesDetached"

typedef struct ns_engine ns_engine;

typedef struct ns_engine_config {
    uint32_t struct_size;         /* sizeof(ns_engine_config); set by ns_engine_config_default */
    const char *cluster_name;     /* launch requests and cloud tags; default "nodesmith"; copied by ns_engine_new */
    int64_t registration_ttl_ms;  /* launched but no Node registered after this: claim deleted. Default 15 min */
    /* Simulated kubelet (in-memory cluster only): a Node registers this long after its instance launched, and turns
     * ready, with startup taints removed, this long after registering. Defaults 30 s and 15 s. A negative
     * registration delay means the kubelet never registers (to exercise the registration TTL). */
    int64_t registration_delay_ms;
    int64_t initialization_delay_ms;
    /* Provisioning batch window (Karpenter's BATCH_IDLE_DURATION / BATCH_MAX_DURATION): pending pods are provisioned
     * once no pod became pending for batch_idle_ms, or batch_max_ms after the oldest one. Defaults 1 s and 10 s. */
    int64_t batch_idle_ms;
    int64_t batch_max_ms;
    /* Disruption re-validates a decision this long after making it (used by the disruption controller). 15 s. */
    int64_t stabilization_ms;
    /* An instance no NodeClaim owns is terminated once it is older than this. Default 30 s. */
    int64_t orphan_gc_grace_ms;
    /* An offering a launch reported as without capacity is not used again for this long. Default 3 min. */
    int64_t unavailable_offering_ttl_ms;
    /* ns_engine_run_until steps every tick_ms of simulated time. Default 1 s. */
    int64_t tick_ms;
    /* A rebalance recommendation is recorded; with this set it also disrupts the node like a spot interruption. */
    bool act_on_rebalance;
    /* In-memory cluster stand-ins: the kubelet (nodes register and become ready), kube-scheduler binding pods to
     * initialized nodes, workload controllers (evicted pods of a Deployment/ReplicaSet/StatefulSet/Job come back
     * pending; DaemonSet pods follow nodes). All default true; a Kubernetes-backed engine turns them off. */
    bool simulate_kubelet;
    bool simulate_scheduler;
    bool simulate_controllers;
    /* Time is event-driven by default: after a step that changed nothing, ns_engine_run_until jumps to the first
     * tick at which something is due (ns_engine_next_step_ms) instead of stepping every tick. Decisions and reports
     * are those of stepping every tick; this forces the every-tick loop, the reference the event-driven one is
     * compared with (docs/engine.md, "Time"). Default false. */
    bool every_tick;
    /* How provisioning packs the round's new claims (sched.h): Karpenter's greedy packing (the default) or
     * cheapest total price per hour (docs/cost.md). */
    ns_sched_packing packing;
    /* Karpenter's NodeRepair feature gate: nodes matching one of the provider's repair policies for longer than its
     * toleration are deleted (ctl_repair.c, docs/engine.md "Node repair"). Default false. */
    bool node_repair;
    /* Karpenter's StaticCapacity feature gate: NodePools with spec.replicas are scaled to that many nodes
     * (ctl_static.c, docs/engine.md "Static capacity"). Off, a static pool gets no node from nodesmith (the
     * provisioner leaves static pools out either way). Default false. */
    bool static_capacity;
    /* Karpenter's CapacityBuffer feature gate: the CapacityBuffers' chunks are kept provisioned as virtual pods
     * (engine_headroom.c, docs/cost.md "Warm headroom"). Default false. */
    bool capacity_buffer;
    /* Karpenter's ReservedCapacity feature gate: the scheduler counts each capacity reservation's instances, one per
     * new claim (sched_resv.c); off, reserved offerings are used without a count. Default true. */
    bool reserved_capacity;
    /* Karpenter's MIN_VALUES_POLICY and PREFERENCE_POLICY (sched.h), for provisioning and the disruption
     * simulations alike; Strict and Respect by default. */
    ns_sched_min_values_policy min_values_policy;
    ns_sched_preference_policy preference_policy;
    /* Karpenter's SCHEDULER_CONFIG default topology spread (ns_sched_input.default_spread), for provisioning and the
     * disruption simulations alike; borrowed (it must outlive the engine). None by default. */
    const ns_topology_spread *default_spread;
    size_t n_default_spread;
    /* The simulated attach-detach controller (cfg.simulate_controllers, ctl_attach_detach.c) deletes a node's
     * VolumeAttachment this long after the last pod using its volume left the node. Default 10 s. */
    int64_t volume_detach_delay_ms;
    /* Commitments (docs/cost.md): on-demand offerings they cover are priced at their effective cost while the
     * commitment has room left after the running nodes, in provisioning rounds, launches and disruption's
     * simulations alike. Borrowed: it must outlive the engine. NULL (the default) prices nothing. */
    const ns_commitments *commitments;
} ns_engine_config;

/* Each commitment's utilisation now: every launched NodeClaim, then every Node no NodeClaim owns, consumes the first
 * commitment that covers it with room (cost/commitments.h). *out is the caller's (ns_commit_ledger_free); its
 * commitments are cfg.commitments. */
int ns_engine_commit_ledger(const ns_engine *e, ns_commit_ledger **out);

/* Fills cfg with the defaults above. */
void ns_engine_config_default(ns_engine_config *cfg);

/* Builds an engine over cluster and plugin, neither of which it takes ownership of: both must outlive the engine.
 * cfg may be NULL for the defaults; it is copied. The cluster must have been resolved (ns_cluster_resolve). Every
 * write goes through `store` (a controller brings its own; simulation's ns_engine_new uses the in-memory one); the
 * engine owns it from this call on, also on failure, and ns_engine_free calls store.ops->destroy. *out is the
 * caller's; free with ns_engine_free. */
int ns_engine_new_with_store(ns_cluster *cluster, ns_plugin *plugin, const ns_engine_config *cfg,
                             ns_cluster_writes store, ns_engine **out);
/* The store the engine was built with (not a watcher installed over it). */
ns_cluster_writes *ns_engine_store(ns_engine *e);
/* Frees the engine (not the cluster, not the plugin). Accepts NULL. */
void ns_engine_free(ns_engine *e);

/* Runs every controller once at the current clock, in this order: interruption, garbage collection, the simulated
 * kubelet, node repair (cfg.node_repair), NodeClaim lifecycle (launch, register, initialize, registration TTL),
 * disruption hand-over (candidates whose replacements are initialized go to termination), static capacity
 * (cfg.static_capacity), provisioning (with the simulated scheduler's binding), registered controllers (disruption),
 * termination; then appends one ns_engine_sample to the history. */
int ns_engine_step(ns_engine *e);
/* Steps at the current time, then advances the simulated clock to ns_engine_next_step_ms and steps again, until the
 * clock has reached until_ms (the last step runs at until_ms). With the real clock it steps once. */
int ns_engine_run_until(ns_engine *e, int64_t until_ms);
/* When the next step is due, at most until_ms: the next tick (now + cfg.tick_ms) when the last step changed anything
 * (a write, a decision, a provider launch or termination) or cfg.every_tick is set; otherwise the first tick, counted
 * from now, at or after the earliest time something declared due (ns_engine_due), or until_ms when nothing is. Ticks
 * stay on the grid of the every-tick loop, so both step at the same instants whenever anything can happen. */
int64_t ns_engine_next_step_ms(const ns_engine *e, int64_t until_ms);
/* Declares that what a controller or a watcher looks at changes at at_ms (a delay, a TTL, a deadline running out),
 * so an event-driven run steps then. A time not after now means "may change at any tick": the next step comes one
 * tick later (a launch to retry, an instance that is not running yet, a provider that failed to answer). The
 * engine's own controllers declare theirs; a registered controller declares what its own state waits for. */
void ns_engine_due(ns_engine *e, int64_t at_ms);
/* Engine steps run since the engine was built. */
int64_t ns_engine_steps(const ns_engine *e);
/* ns_engine_run_until(now + ms). */
int ns_engine_run_for(ns_engine *e, int64_t ms);

/* Makes ns_engine_run_until and timeline runs stop between two steps, and a provisioning round between two launches,
 * once *flag is non-zero (a signal handler's flag), failing with NS_ERR_INTERNAL "stopped by a signal". flag may be
 * NULL (never stop). */
void ns_engine_set_stop_flag(ns_engine *e, const volatile sig_atomic_t *flag);
/* NS_OK, or the "stopped" error recorded when the stop flag is set. */
int ns_engine_check_stop(const ns_engine *e);
/* The first failure to list a node class's instance types since the engine was built (the provider could not be
 * reached, or refused the node class), or NULL when every listing worked. Owned by the engine. */
const char *ns_engine_listing_error(const ns_engine *e);

const ns_engine_config *ns_engine_get_config(const ns_engine *e);
ns_cluster *ns_engine_cluster(const ns_engine *e);
ns_plugin *ns_engine_plugin(const ns_engine *e);

/* ---- Decision log. Every decision is also written as a Karpenter-style log line (log/ns_log.h) when recorded. */

typedef enum ns_decision_kind {
    NS_DECISION_CREATED_NODECLAIM = 1,   /* "created nodeclaim" */
    NS_DECISION_LAUNCHED_NODECLAIM,      /* "launched nodeclaim" (detail: type/zone/capacity type, price) */
    NS_DECISION_LAUNCH_FAILED,           /* "failed launching nodeclaim" (reason: the provider's message) */
    NS_DECISION_OFFERING_UNAVAILABLE,    /* "marked offering unavailable" (detail: type/zone/capacity type) */
    NS_DECISION_REGISTERED_NODECLAIM,    /* "registered nodeclaim" */
    NS_DECISION_INITIALIZED_NODECLAIM,   /* "initialized nodeclaim" */
    NS_DECISION_REGISTRATION_TIMEOUT,    /* "nodeclaim registration timed out" */
    NS_DECISION_DISRUPTING,              /* "disrupting node(s)" (method, reason, replacements in detail) */
    NS_DECISION_DISRUPTION_ABORTED,      /* "abandoned disruption" (a replacement failed) */
    NS_DECISION_TAINTED_NODE,            /* "tainted node" (detail: the taint) */
    NS_DECISION_UNTAINTED_NODE,          /* "untainted node" */
    NS_DECISION_EVICTED_POD,             /* "evicted pod" (method: "eviction" or "forced deletion") */
    NS_DECISION_EVICTION_BLOCKED,        /* "eviction blocked" (reason: PDB or do-not-disrupt) */
    NS_DECISION_TERMINATED_INSTANCE,     /* "terminated instance" */
    NS_DECISION_DELETED_NODE,            /* "deleted node" */
    NS_DECISION_DELETED_NODECLAIM,       /* "deleted nodeclaim" */
    NS_DECISION_INTERRUPTION,            /* "received interruption event" (method: event kind) */
    NS_DECISION_REBALANCE_RECORDED,      /* "recorded rebalance recommendation" */
    NS_DECISION_GC_INSTANCE,             /* "garbage collected instance" (no NodeClaim owns it) */
    NS_DECISION_GC_NODECLAIM,            /* "garbage collected nodeclaim" (its instance is gone) */
    NS_DECISION_NODE_LOST,               /* "removed node of terminated instance" (stopped/terminated by the cloud) */
    NS_DECISION_POD_RESCHEDULED,         /* "re-planned pod" (a controller's pod came back pending) */
    NS_DECISION_UNSCHEDULABLE_POD,       /* "could not schedule pod" (reason from the scheduler) */
    NS_DECISION_DISRUPTION_INFO,         /* free-form decision of a registered controller ("validated", ...) */
    NS_DECISION_DISRUPTION_BLOCKED,      /* "disruption blocked" (reason: Karpenter's sentence; once per claim and
                                          * reason while it lasts; logged at debug level, as Karpenter only emits an
                                          * event) */
    /* "pod held back by NodePool limits" (reason: the pool, the resource, its limit and what is in use), logged at
     * INFO once per pending spell: the pod waits for room, nothing is wrong with it. */
    NS_DECISION_HELD_BY_LIMITS,
    /* "deleting unhealthy node" (reason: the condition past its toleration; node repair) */
    NS_DECISION_UNHEALTHY_NODE,
    /* "node repair blocked" (reason: Karpenter's NodeRepairBlocked message; detail: the NodePool), once per claim
     * while more than 20% of its NodePool's (or the cluster's) nodes are unhealthy */
    NS_DECISION_REPAIR_BLOCKED,
    /* "unconsolidatable" (reason: Karpenter's Unconsolidatable message; once per claim and reason while it lasts;
     * logged at debug level, as Karpenter only emits an event) */
    NS_DECISION_UNCONSOLIDATABLE,
    /* "provisioning nodeclaims to satisfy replica count" (reason: current and desired; detail: the NodePool and the
     * count; the static capacity gate) */
    NS_DECISION_STATIC_SCALE_UP,
    /* "deprovisioning nodeclaims to satisfy replica count" (nodeclaims: the ones deleted, in Karpenter's order) */
    NS_DECISION_STATIC_SCALE_DOWN,
} ns_decision_kind;

typedef struct ns_decision {
    int64_t time_ms;
    ns_decision_kind kind;
    const char *message; /* the log message of the kind (static) */
    /* The six texts are one allocation owned by the engine, starting at method. */
    char *method;        /* disruption method ("emptiness", "drift", "consolidation", "interruption", ...) or "" */
    char *reason;        /* why, for people; "" when none */
    char *nodes;         /* comma-separated Node names, "" when none */
    char *nodeclaims;    /* comma-separated NodeClaim names, "" when none */
    char *pods;          /* comma-separated namespace/name, "" when none */
    char *detail;        /* kind-specific ("m5.large/us-west-2a/spot $0.0365/h", a taint, ...), "" when none */
} ns_decision;

/* "launched nodeclaim", ... */
const char *ns_decision_kind_message(ns_decision_kind kind);
/* Every decision since the engine was built, oldest first. The array belongs to the engine and stays valid until
 * the next call that may record a decision (any step or mutation). */
const ns_decision *ns_engine_decisions(const ns_engine *e, size_t *n);
/* Records a decision (strings copied; NULL reads as "") and writes its log line. For the controllers and for
 * registered controllers (the disruption controller). NS_OK or NS_ERR_INTERNAL. */
int ns_engine_record(ns_engine *e, ns_decision_kind kind, const char *method, const char *reason, const char *nodes,
                     const char *nodeclaims, const char *pods, const char *detail);

/* ---- Per-step history for reports: one sample after each ns_engine_step. */

typedef struct ns_engine_sample {
    int64_t time_ms;
    size_t nodes;              /* Nodes in the cluster */
    size_t nodes_ready;        /* Ready and initialized (or not managed by the engine) */
    size_t nodeclaims;         /* NodeClaims, including those not yet launched or being deleted */
    size_t pods_bound;         /* pods with a node, not DaemonSet pods */
    size_t pods_pending;       /* pods provisioning considers (sched.h) */
    double cost_per_hour;      /* sum of the launched NodeClaims' offering prices */
    size_t decisions;          /* decisions recorded so far */
    /* Warm headroom (cfg.capacity_buffer), as the last provisioning round placed it: the chunks the buffers ask for,
     * those placed on a node or an in-flight NodeClaim, those on ready initialized nodes (a pod of that shape starts
     * there without a launch), and their share of the launched nodes' price (per node, the larger of the chunks'
     * cpu and memory fractions of its allocatable, times its price). */
    size_t headroom_wanted;
    size_t headroom_placed;
    size_t headroom_ready;
    double headroom_cost_per_hour;
} ns_engine_sample;

/* One CapacityBuffer's chunks in the last provisioning round (what Karpenter's Provisioning condition is computed
 * from): on existing or in-flight nodes, needing a NodeClaim of their own, or placed nowhere. */
typedef struct ns_engine_buffer_chunks {
    size_t wanted, existing, new_capacity, failed;
} ns_engine_buffer_chunks;
/* True and *out filled when the last round placed chunks of buffer NS/NAME; false when no round did (the gate is
 * off, the buffer asks for none, or it came since). */
bool ns_engine_buffer_placement(const ns_engine *e, const char *ns, const char *name, ns_engine_buffer_chunks *out);

const ns_engine_sample *ns_engine_history(const ns_engine *e, size_t *n);
/* The sample the next step would append, computed now (for a state dump between steps). */
void ns_engine_sample_now(const ns_engine *e, ns_engine_sample *out);

/* ---- Disruption hook. A disruption controller registers a step function and, when it has decided, asks the
 * engine to carry the decision out; the termination controller does the rest across later steps. */

/* A registered controller: called once per step, after provisioning and before termination. */
typedef int (*ns_engine_controller_fn)(ns_engine *e, void *ctx);
/* Registers fn under name (copied). ctx is the caller's and must outlive the engine; free_ctx (may be NULL) is called
 * on it by ns_engine_free. At most 8 controllers. */
int ns_engine_register_controller(ns_engine *e, const char *name, ns_engine_controller_fn fn, void *ctx,
                                  void (*free_ctx)(void *ctx));

typedef struct ns_disruption_request {
    const char *method; /* "emptiness", "expiration", "drift", "consolidation", ... (log and annotation) */
    const char *reason; /* "Empty", "Underutilized", "Drifted", "Expired", ... (DisruptionReason condition) */
    /* Candidates, by NodeClaim name. Each must exist, be launched and not be deleting already. */
    const char *const *nodeclaims;
    size_t n_nodeclaims;
    /* Replacements to launch first, from an ns_sched_run over ns_engine_plan's view (nodepool indices refer to the
     * engine cluster's nodepools, which the view shares). The candidates are drained only once every replacement is
     * Initialized; if one fails (deleted, launch failed for good, registration timed out) the disruption is abandoned
     * and the candidates untainted. */
    const ns_sched_claim *replacements;
    size_t n_replacements;
    /* Forceful (expiration, interruption): do-not-disrupt pods do not block the candidates (they are evicted last),
     * and no replacement wait. PodDisruptionBudgets are still honoured until terminationGracePeriod runs out. */
    bool forceful;
    /* Eventual (drift): a candidate whose claim has a terminationGracePeriod may run do-not-disrupt pods; termination
     * deletes them once the grace period allows (Karpenter's eventual disruption class). */
    bool eventual;
    /* Rollback (consolidation by several replacements, cost packing): when one replacement fails, the others are
     * deleted with the abandoned disruption, as they only existed to hold the candidates' pods for less. Without it
     * they stay, as Karpenter leaves a drift's replacements. */
    bool rollback;
} ns_disruption_request;

/* Validates the request (candidates exist, are launched, not already deleting, and unless forceful, or eventual with a
 * terminationGracePeriod on the claim, carry no do-not-disrupt pod), then: creates and launches the replacement NodeClaims, taints every candidate's Node with
 * karpenter.sh/disrupted:NoSchedule, writes the disruption annotations on each candidate claim, records "disrupting
 * node(s)". Replacement names are written into *replacement_names (may be NULL; a comma-separated string the caller
 * frees with free()). NS_ERR_INVALID_ARGUMENT naming the candidate when validation fails (nothing changed then). When
 * creating a replacement or marking a candidate fails, the replacements already created are deleted (no orphan). */
int ns_engine_disrupt(ns_engine *e, const ns_disruption_request *req, char **replacement_names);

/* ---- Timeline hooks. Each applies one change through the cluster-writes layer and records nothing unless it
 * is an engine decision (an injected interruption is the provider's event, handled at the next step). */

/* Adds pod (ownership passes to the engine's cluster, even on failure); it becomes pending now. */
int ns_engine_add_pod(ns_engine *e, ns_pod *pod);
/* Deletes a pod by namespace (NULL = "default") and name, as `kubectl delete pod` would: a pod of a ReplicaSet,
 * StatefulSet or Job comes back pending (its controller replaces it); scale the workload to remove it for good.
 * NS_ERR_NOT_FOUND when absent. */
int ns_engine_delete_pod(ns_engine *e, const char *ns, const char *name);
/* Replaces the NodePool of the same name (or adds it); ownership passes to the engine's cluster. Drift is noticed
 * through karpenter.sh/nodepool-hash by the disruption controller. */
int ns_engine_put_nodepool(ns_engine *e, ns_nodepool *np);
/* Removes a NodePool by name; its NodeClaims stay until disrupted. NS_ERR_NOT_FOUND when absent. */
int ns_engine_delete_nodepool(ns_engine *e, const char *name);
/* Replaces the node class of the same kind and name (or adds it); ownership passes to the cluster. */
int ns_engine_put_nodeclass(ns_engine *e, ns_nodeclass_def *def);
/* Advances the simulated clock by ms without stepping (ns_engine_run_for steps). */
void ns_engine_advance_clock(ns_engine *e, int64_t ms);

#endif
