/*
 * The engine as simulation runs it: over the in-memory cluster-writes store, with the operations only a simulated
 * cluster has (a workload controller's scale) and the fault-injection hooks behind the timeline's interrupt and
 * launchFailure steps. A controller builds its engine with ns_engine_new_with_store (engine/engine.h) instead.
 */
#ifndef NS_ENGINE_SIM_H
#define NS_ENGINE_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"

/* Builds an engine over cluster and plugin, neither of which it takes ownership of: both must outlive the engine.
 * cfg may be NULL for the defaults; it is copied. The cluster must have been resolved (ns_cluster_resolve). Writes go
 * to the in-memory cluster-writes store over `cluster` (simulation/cluster_writes_mem.h), with the workload-controller
 * stand-ins when cfg->simulate_controllers. *out is the caller's; free with ns_engine_free. */
int ns_engine_new(ns_cluster *cluster, ns_plugin *plugin, const ns_engine_config *cfg, ns_engine **out);

/* Sets the number of pods of a workload, as its controller would: kind "Deployment" matches pods owned by ReplicaSet
 * "<name>-<hash>", other kinds ("ReplicaSet", "StatefulSet", "Job") match owner kind and name. New pods copy the
 * workload's template (the first pod seen; remembered by the in-memory controller stand-in, so scaling to zero and
 * back works) and are pending; removed pods are the newest first (StatefulSet: highest ordinal). NS_ERR_NOT_FOUND
 * when the workload has never had a pod. */
int ns_engine_scale_workload(ns_engine *e, const char *ns, const char *kind, const char *name, size_t replicas);
/* Queues a provider event for the Node or NodeClaim named (its instance), through ns_plugin_inject_fault, which
 * passes it to the provider's test_inject_fault (needs a provider with test hooks). deadline_ms 0 = the provider's
 * default. */
int ns_engine_inject_event(ns_engine *e, const char *node_or_claim, ns_event_kind kind, int64_t deadline_ms);
/* Sets a Node's status condition as its kubelet or a node agent would report it (type "Ready": the kubelet is ready,
 * reports NotReady, or stopped posting and the node controller marked it Unknown). The last transition time moves
 * only when the status changes. Written through the cluster-writes layer, so the engine sees the change at its next
 * step. NS_ERR_NOT_FOUND when there is no such Node. */
int ns_engine_set_node_condition(ns_engine *e, const char *node, const char *type, const char *status,
                                 const char *reason, const char *message);
/* Makes an offering unavailable (ns_fault INSUFFICIENT_CAPACITY; NULL zone or capacity type match any) in the core's
 * fault layer in front of the provider, so it works with any provider; with clear set removes every injected fault. */
int ns_engine_inject_capacity_fault(ns_engine *e, const char *instance_type, const char *zone,
                                    const char *capacity_type, bool clear);
/* The next `count` launches fail with `error` (an ns_err category other than insufficient capacity; NS_ERR_THROTTLED
 * as a throttled call, retry hint 0) in the core's fault layer in front of the provider, before it is called; the
 * capacity fault's clear removes these too. */
int ns_engine_inject_launch_error(ns_engine *e, int error, int32_t count);
/* The next `count` launches hang until the provider call's deadline (--provider-timeout, 5 minutes by default) on the
 * simulated clock, which the engine's step waits out, and then fail as the watchdog fails them (NS_ERR_THROTTLED), in
 * the core's fault layer in front of the provider; the capacity fault's clear removes them too. */
int ns_engine_inject_launch_timeout(ns_engine *e, int32_t count);

/* A label or annotation of a Node, NodeClaim or Pod (kind; ns for a Pod, NULL = "default"), set to value or removed
 * (value NULL), as `kubectl label` and `annotate` do: a Node through the cluster-writes layer, a NodeClaim updated
 * through it, a Pod replaced by a copy (its do-not-disrupt annotation re-read). Errors are prefixed with the object
 * and the field ("Node n1: metadata.labels.team: "); NS_ERR_NOT_FOUND when there is no such object. */
int ns_engine_set_object_meta(ns_engine *e, const char *kind, const char *ns, const char *name, bool annotation,
                              const char *key, const char *value);
/* Replaces a Node's taints with taints[0..n) (`kubectl taint`); the taints the engine set itself go too when the list
 * leaves them out, as a merge patch of spec.taints would. */
int ns_engine_set_node_taints(ns_engine *e, const char *node, const ns_taint *taints, size_t n);
/* A Node's spec.unschedulable (`kubectl cordon` and `uncordon`). */
int ns_engine_set_node_unschedulable(ns_engine *e, const char *node, bool unschedulable);

/* Deletes a Pod gracefully: a pod bound to a node stays there Terminating, its deletionTimestamp grace_ms from now (the
 * time by which it must be gone, as the API server sets it), and is deleted when that time comes (its workload's
 * controller then brings it back pending). A pending pod, or grace_ms 0, is deleted at once; a pod already
 * terminating keeps its deadline. The window is closed by a controller registered on first use. */
int ns_engine_delete_pod_after(ns_engine *e, const char *ns, const char *name, int64_t grace_ms);
/* A bound Pod's status.phase becomes "Succeeded" or "Failed" (its containers exited): it stays on its node, counts for
 * no budget, blocks no drain and is no pod to reschedule. A terminal phase does not change; a pending pod is refused. */
int ns_engine_set_pod_phase(ns_engine *e, const char *ns, const char *name, const char *phase);
/* A bound Pod's status.startTime (unix ms, not after now), from which do-not-disrupt durations count. */
int ns_engine_set_pod_start(ns_engine *e, const char *ns, const char *name, int64_t start_ms);

/* Existing capacity from manifests: each launched NodeClaim (status.providerID set, not being deleted) whose instance
 * the provider does not know gets one, launched with the claim's own offering (its instance-type, zone and
 * capacity-type labels, required) and the claim's name as client token; the claim and its Node take the instance's
 * provider ID, and the engine then manages them as claims it launched. For timelines, before the first step.
 * NS_ERR_INVALID_CONFIG naming the claim when a label or its node class is missing. */
int ns_engine_back_manifest_claims(ns_engine *e);

#endif
