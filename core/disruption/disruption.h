/*
 * The disruption controller: Karpenter's voluntary disruption over the engine (pkg/controllers/disruption and the
 * v1 NodeClaim expiration controller), registered as one of the engine's controllers.
 *
 * Each step, in this order:
 * 1. Pod events: a claim whose Node gained or lost a pod gets nodesmith.io/last-pod-event-ms (Karpenter's
 *    status.lastPodEventTime); consolidateAfter counts from it, or from Initialized when no pod ever came or went.
 * 2. Expiration (its own controller in Karpenter v1, so it runs whatever else is pending): a launched claim older
 *    than its expireAfter is disrupted forcefully, method "expired": not subject to budgets, and do-not-disrupt pods
 *    do not block it; termination still honours PodDisruptionBudgets until terminationGracePeriod runs out.
 * 3. Drift detection: the NodePool template hash (karpenter.sh/nodepool-hash), the node class hash, the NodePool's
 *    requirements against the claim's labels, and the provider's check_drift. A drifted claim carries the Drifted
 *    condition (reason NodePoolDrifted, NodeClassDrifted, RequirementsDrifted or the provider's).
 * 4. A decided command waits the stabilisation window (engine cfg.stabilization_ms, 15 s), is re-validated as
 *    Karpenter's validators do (candidates still candidates for the method, budgets still allow them, and for
 *    consolidation and drift the scheduling simulation still agrees), then carried out through ns_engine_disrupt,
 *    which records "disrupting node(s)". A command that fails validation is dropped and recorded.
 * 5. Otherwise the methods in Karpenter's order, the first that yields a command wins:
 *    - emptiness ("empty", reason Empty): initialized claims with no reschedulable pods once consolidateAfter has
 *      passed, under either consolidation policy, as many as the Empty budgets allow;
 *    - drift ("drifted", reason Drifted): empty drifted claims at once within budget, else the longest-drifted claim
 *      whose pods can all be placed, with the replacements the simulation asks for;
 *    - multi-node then single-node consolidation ("underutilized", reason Underutilized, WhenEmptyOrUnderutilized
 *      only), in disruption-cost order, see disruption_consolidate.h.
 *
 * Candidates (graceful methods): launched, initialized claims with a Node, not deleting, not already being
 * disrupted, whose NodePool exists; a Node annotated karpenter.sh/do-not-disrupt, a pod annotated
 * karpenter.sh/do-not-disrupt, or a pod a PodDisruptionBudget would not let go makes the node no candidate.
 */
#ifndef NS_DISRUPTION_H
#define NS_DISRUPTION_H

#include <stdbool.h>

#include "engine/engine.h"

/* Written on a claim when a pod was bound to or removed from its Node (unix ms, decimal). */
#define NS_ANNOTATION_LAST_POD_EVENT "nodesmith.io/last-pod-event-ms"

typedef struct ns_disruption_config {
    /* Karpenter's SpotToSpotConsolidation feature gate (off by default). */
    bool spot_to_spot;
} ns_disruption_config;

/* Registers the controller on the engine (cfg may be NULL for the defaults; it is copied). The engine owns and frees
 * the controller's state. 0, or an error from ns_engine_register_controller / allocation. */
int ns_disruption_register(ns_engine *e, const ns_disruption_config *cfg);

/* Karpenter's karpenter_nodepools_allowed_disruptions: the disruptions each NodePool of the engine's cluster (indexed
 * like cluster->nodepools) allows now for `reason` (one NS_REASON_* bit), before subtracting the nodes already being
 * disrupted; the nodes counted and the budgets evaluated as the disruption methods do (budget.h). NS_BUDGET_UNLIMITED
 * when no active budget applies; 0 when a budget cannot be evaluated. *out is malloc'd (free with free()). 0 or
 * NS_ERR_INTERNAL. */
int ns_disruption_allowed(ns_engine *e, unsigned reason, int64_t **out);

#endif
