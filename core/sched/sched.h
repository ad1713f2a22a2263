/*
 * Provisioning: which pending pods go on which existing node, and which new node claims to launch for the rest, with
 * Karpenter's semantics (sigs.k8s.io/karpenter pkg/controllers/provisioning/scheduling).
 *
 * Pending pods are those without spec.nodeName, not scheduling-gated, for the default scheduler, not owned by a
 * DaemonSet or a Node, and not finished; a pod whose status has conditions or a nominatedNodeName must also have
 * failed to schedule (PodScheduled reason Unschedulable) and not be nominated, as Karpenter's IsProvisionable asks
 * (ns_pod_sched_status). They are grouped (identical spec, labels and requests, e.g. one
 * Deployment's replicas) and groups are handled largest cpu first, then largest memory. Each pod goes on an
 * existing node, else on a node claim already planned in this round, else on a new claim from the highest-priority
 * NodePool it is compatible with. A group that does not fit is relaxed in Karpenter's order (next required node
 * affinity term; preferred pod affinity, then preferred pod anti-affinity terms, heaviest first; preferred node
 * affinity terms heaviest first; ScheduleAnyway spread constraints; finally a toleration of PreferNoSchedule taints
 * when some NodePool has one) and queued again, until a full pass makes no progress.
 *
 * Where nodesmith differs on purpose: required pod anti-affinity is enforced in both directions for the pods of the
 * round (as kube-scheduler does), not only for pods already in the cluster; a pod affinity term's
 * namespaceSelector is read as "every namespace" when it is empty ({}) and as the pod's own namespace otherwise,
 * since namespaces' labels are not part of the simulated cluster. Topology on keys other than zone and hostname
 * (sched_keyed.c): where Karpenter picks among domains with equal counts in map order, nodesmith takes the first in
 * sorted order; a claim narrowed to one such domain keeps its types offering it without checking minValues again.
 * minValues on zone and capacity type counts the values left among a claim's launch options (after its zone and
 * capacity-type narrowing), where Karpenter counts the instance types' offerings as listed. A DaemonSet's required
 * node-affinity terms are each tried on every instance type (Karpenter drops a term that failed on one type for the
 * types after it). Volume topology (sched_volumes.h): alternatives on different keys keep the first that intersects
 * (Karpenter tries each on every node and claim); a pod with an unusable claim is unschedulable with the reason
 * (Karpenter leaves it out of the round).
 *
 * Kubelet settings: a node class's spec.kubelet is the provider's to apply; pool-level settings (v1alpha5, v1beta1)
 * are applied here to the core's copy of the instance types (sched_kubelet.h).
 *
 * Memory: ns_sched_run fills a result the caller frees with ns_sched_result_free. The result points into the input
 * cluster and item sets (names, pods), so they must outlive it.
 */
#ifndef NS_SCHED_H
#define NS_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cloud/instance_types.h"
#include "model/cluster.h"
#include "model/requirements.h"
#include "nodesmith/provider.h"

/* Karpenter's cap on the instance types a launch may choose from (MaxInstanceTypes). */
#define NS_SCHED_MAX_LAUNCH_TYPES 60

/* How the round's new claims are chosen. KARPENTER: Karpenter's greedy packing, decision for decision. COST: the
 * same round, then the new claims that hold only pods without topology spread, pod (anti-)affinity or host ports are
 * re-packed to cost less per hour in total (docs/cost.md); never more than the greedy claims they replace. */
typedef enum ns_sched_packing { NS_SCHED_PACKING_KARPENTER = 0, NS_SCHED_PACKING_COST } ns_sched_packing;

/* "karpenter" or "cost" into *out: 0, or NS_ERR_INVALID_CONFIG naming the value. */
int ns_sched_packing_parse(const char *name, ns_sched_packing *out);
const char *ns_sched_packing_name(ns_sched_packing p);

/* Karpenter's MIN_VALUES_POLICY. STRICT: a new claim keeps at least minValues distinct values of each key that has
 * one among its instance types, and a pod that would leave fewer goes elsewhere. BEST_EFFORT: the pod joins the claim
 * anyway, and the claim's requirement carries the number of values left as its minValues (never more than asked);
 * ns_sched_claim.min_values_relaxed then says so (the NodeClaim's karpenter.sh/nodeclaim-min-values-relaxed). */
typedef enum ns_sched_min_values_policy {
    NS_SCHED_MIN_VALUES_STRICT = 0,
    NS_SCHED_MIN_VALUES_BEST_EFFORT
} ns_sched_min_values_policy;

/* Karpenter's PREFERENCE_POLICY. RESPECT: preferences bind until relaxation removes them. IGNORE: preferred node
 * affinity, preferred pod (anti-)affinity terms and ScheduleAnyway spreads are left out from the start (Karpenter's
 * NewStrictPodRequirements and its topology groups without them); required node-affinity terms are still tried in
 * turn and PreferNoSchedule taints still tolerated as the last relaxation, as Karpenter's Relax does under either. */
typedef enum ns_sched_preference_policy {
    NS_SCHED_PREFERENCES_RESPECT = 0,
    NS_SCHED_PREFERENCES_IGNORE
} ns_sched_preference_policy;

/* "Strict" or "BestEffort", "Respect" or "Ignore" (Karpenter's spelling) into *out: 0, or NS_ERR_INVALID_CONFIG
 * naming the value and the ones allowed. */
int ns_sched_min_values_policy_parse(const char *name, ns_sched_min_values_policy *out);
int ns_sched_preference_policy_parse(const char *name, ns_sched_preference_policy *out);
const char *ns_sched_min_values_policy_name(ns_sched_min_values_policy p);
const char *ns_sched_preference_policy_name(ns_sched_preference_policy p);

/* Karpenter's ReservedOfferingMode and its ReservedCapacity gate (sched_resv.c). STRICT: a pod that could use a
 * reserved offering whose reservation this round has used up is deferred (Karpenter's provisioner,
 * DisableReservedCapacityFallback); FALLBACK: it goes on-demand or spot (consolidation's simulations); OFF: the gate
 * is off and no reservation is counted. */
typedef enum ns_sched_reserved_mode {
    NS_SCHED_RESERVED_STRICT = 0,
    NS_SCHED_RESERVED_FALLBACK,
    NS_SCHED_RESERVED_OFF
} ns_sched_reserved_mode;

typedef struct ns_sched_input {
    const ns_cluster *cluster;
    /* One instance-type set per NodePool, indexed like cluster->nodepools (the set of the pool's node class; pools
     * may share a set). A NULL entry makes that pool unusable; pool_errors[i] (may be NULL) says why. */
    const ns_itype_set *const *pool_types;
    const char *const *pool_errors;
    ns_sched_packing packing; /* NS_SCHED_PACKING_KARPENTER (0) unless set */
    ns_sched_min_values_policy min_values_policy;   /* STRICT (0) unless set */
    ns_sched_preference_policy preference_policy;   /* RESPECT (0) unless set */
    /* Karpenter's SCHEDULER_CONFIG podTopologySpread.defaultConstraints (each without a selector; borrowed): given
     * to every pending pod that declares no topologySpreadConstraints, with the selector kube-scheduler deduces for
     * the pod from the Services and the ReplicaSet, StatefulSet or ReplicationController that select it; a pod
     * nothing selects gets none (sched_default_spread.c). NULL and 0: none. */
    const ns_topology_spread *default_spread;
    size_t n_default_spread;
    ns_sched_reserved_mode reserved_mode;           /* STRICT (0) unless set */
} ns_sched_input;

/* One acceptable launch choice of a new claim. */
typedef struct ns_sched_option {
    const ns_itype *type;
    const char *zone; /* points into type's offerings */
    const char *capacity_type;
    double price_per_hour;
} ns_sched_option;

typedef struct ns_sched_claim {
    size_t nodepool;              /* index in cluster->nodepools */
    ns_requirements requirements; /* pool and pods' requirements, zone and capacity type narrowed */
    ns_res pod_requests;    /* sum of the pods' requests */
    ns_res daemon_overhead; /* the least DaemonSet overhead among its instance types (each type has its own) */
    size_t *pods;                 /* indices in cluster->pods */
    size_t n_pods;
    /* Launch choices, cheapest first: every offering the claim allows of the NS_SCHED_MAX_LAUNCH_TYPES cheapest
     * instance types that fit (n_types counts all that fit). Claims with the same choices share one list, owned by
     * the result (option_lists): never free or change it through a claim. */
    ns_sched_option *options;
    size_t n_options;
    size_t n_types;
    /* BEST_EFFORT lowered a minValues of the claim's requirements to the values its types have left. */
    bool min_values_relaxed;
} ns_sched_claim;

typedef struct ns_sched_unschedulable {
    size_t pod;   /* index in cluster->pods */
    char *reason; /* owned */
    /* Only NodePool limits keep the pod off a new node: a pool would take it with room left under its limits. */
    bool by_limits;
    /* Karpenter's ReservedOfferingError: a compatible reserved offering exists but this round's claims hold all of
     * its reservation, so the pod waits for a later round (not unschedulable, preferences not relaxed). */
    bool deferred;
} ns_sched_unschedulable;

#define NS_SCHED_NOT_PENDING ((size_t)-1)
#define NS_SCHED_UNPLACED ((size_t)-2)

typedef struct ns_sched_result {
    size_t n_pending;
    /* Per cluster pod: for pending pods, the existing node index (cluster->nodes) it was placed on, or
     * n_nodes + claim index for a new claim, or NS_SCHED_UNPLACED; NS_SCHED_NOT_PENDING otherwise. */
    size_t *placement;
    size_t n_placement;
    size_t n_on_existing;
    ns_sched_claim *claims;
    size_t n_claims;
    ns_sched_unschedulable *unschedulable;
    size_t n_unschedulable;
    ns_sched_option **option_lists; /* the claims' distinct option lists (owned) */
    size_t n_option_lists;
} ns_sched_result;

/* Computes the round. 0, or an error (invalid input, allocation failure) with *out empty. Pods that cannot be placed
 * are not an error: they are listed in out->unschedulable with a reason. */
int ns_sched_run(const ns_sched_input *in, ns_sched_result *out);
/* Karpenter's static NodeClaims (NewNodeClaimTemplate for a NodePool with spec.replicas): `count` claims of pool
 * `pool` made from its template alone, without scheduling a pod: the pool's requirements, and launch options over
 * the NS_SCHED_MAX_LAUNCH_TYPES cheapest types they allow (Karpenter leaves the type to the provider's Create, which
 * launches the cheapest compatible one). The claims carry no pod and no DaemonSet overhead, so no request narrows
 * the types. NS_ERR_INSUFFICIENT_CAPACITY naming the pool when no instance type is left to it. Free *out with
 * ns_sched_result_free. */
int ns_sched_static_claims(const ns_sched_input *in, size_t pool, size_t count, ns_sched_result *out);
void ns_sched_result_free(ns_sched_result *r); /* members; accepts NULL */

/* True when a cluster pod is one provisioning considers (see above). */
bool ns_sched_pod_is_pending(const ns_pod *pod);

#endif
