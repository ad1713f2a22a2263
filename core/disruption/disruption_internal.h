/*
 * What the disruption controller's files share: candidates, budgets per pool, the pending command, the scheduling
 * simulation. Everything here is rebuilt from the cluster each step except the pending command and the pod-set
 * signatures used to notice pod events.
 */
#ifndef NS_DISRUPTION_INTERNAL_H
#define NS_DISRUPTION_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "disruption/disruption.h"
#include "disruption/disruption_consolidate.h"
#include "engine/engine_internal.h"

typedef enum ds_method {
    DS_EMPTY = 0,
    DS_DRIFTED,
    DS_UNDERUTILIZED,
    /* Karpenter's StaticDrift: drifted claims of static NodePools, each replaced by a claim of its pool's template
     * (budget reason Drifted; the other methods leave static pools alone). */
    DS_STATIC_DRIFTED,
} ds_method;

/* "empty", "drifted", "underutilized" and the budget reason bit (NS_REASON_*) / condition reason of each. */
const char *ds_method_name(ds_method m);
const char *ds_method_reason(ds_method m);
unsigned ds_method_reason_bit(ds_method m);

typedef struct ds_candidate {
    ns_nodeclaim *claim;
    ns_node *node;
    ns_nodepool *pool;
    size_t pool_index;
    ns_pod **pods; /* the node's pods that are not finished (owned array; pods belong to the cluster) */
    size_t n_pods;
    size_t n_reschedulable; /* not DaemonSet or mirror pods, not terminating */
    double cost;            /* Karpenter's disruption cost */
    double price;           /* the node's offering price per hour, -1 when unknown */
    const char *instance_type, *capacity_type, *zone;
    bool consolidatable; /* consolidateAfter has passed since the last pod event */
    bool holds_headroom; /* the last provisioning round put a CapacityBuffer chunk on it: emptiness leaves it */
    bool drifted;
    int64_t drifted_ms;            /* Drifted condition's transition time */
    bool blocked;                  /* graceful disruption is blocked (do-not-disrupt, PDB) */
    /* Only its pods block it and its claim has a terminationGracePeriod: drift (Karpenter's eventual disruption
     * class) takes it anyway, termination deleting the blocked pods at the grace period (NewCandidate ignores a
     * PodBlockEvictionError for such a claim). */
    bool eventual;
    char blocked_why[160];         /* Karpenter's sentence (its DisruptionBlocked event's message) */
    char blocked_pod[2 * NS_NAME_MAX]; /* "namespace/name" of the pod that blocks it, "" when the node does */
    /* Why consolidation leaves it alone, in Karpenter's Unconsolidatable words; "" when it did not say (set by the
     * consolidation pass only). */
    char unconsolidatable[256];
} ds_candidate;

typedef struct ds_candidates {
    ds_candidate *items;
    size_t n;
} ds_candidates;

/* Builds the candidates at the current clock (claims that are no candidate at all are left out; blocked ones are in,
 * marked). 0 or NS_ERR_INTERNAL. */
int ds_candidates_build(ns_engine *e, ds_candidates *out);
void ds_candidates_free(ds_candidates *c);
ds_candidate *ds_candidates_find(ds_candidates *c, const char *claim_name);
/* True when the candidate may be disrupted by the method (ShouldDisrupt plus the block check). */
bool ds_candidate_eligible(const ds_candidate *c, ds_method m);
/* Sets `unconsolidatable` of each unblocked candidate that consolidation's ShouldDisrupt turns down with a reason
 * (disruption_unconsolidatable.c). */
void ds_mark_unconsolidatable(const ns_engine *e, ds_candidates *cands);

/* A reason about a candidate already recorded (disruption_reports.c). */
typedef struct ds_reported {
    char claim[NS_NAME_MAX];
    char why[256];
} ds_reported;

typedef struct ds_reports {
    ds_reported *items;
    size_t n;
} ds_reports;

/* Records a decision of `kind` for each candidate whose reason (why_of: NULL or "" for none) was not the one recorded
 * for it at the last call, with the pod pod_of names (pod_of may be NULL), and remembers the current reasons: a
 * reason is recorded once while it lasts, and again when it goes and comes back (Karpenter publishes its event at
 * every pass and its recorder de-duplicates). 0 or NS_ERR_INTERNAL. */
int ds_report_once(ns_engine *e, ds_reports *r, ns_decision_kind kind, const ds_candidates *cands,
                   const char *(*why_of)(const ds_candidate *c), const char *(*pod_of)(const ds_candidate *c));
void ds_reports_free(ds_reports *r); /* members; accepts NULL */

/* Disruptions each NodePool (indexed like cluster->nodepools) still allows for a method now (budget.h); a pool whose
 * budgets fail to evaluate allows none. *out is malloc'd (free with free()). 0 or NS_ERR_INTERNAL. */
int ds_budgets(ns_engine *e, ds_method m, int64_t **out);

/* Updates nodesmith.io/last-pod-event-ms on claims whose Node's pods changed since the last step. */
typedef struct ds_pod_signature {
    char *claim;
    uint64_t signature;
} ds_pod_signature;

typedef struct ds_pod_events {
    ds_pod_signature *items;
    size_t n, cap;
} ds_pod_events;

int ds_pod_events_update(ns_engine *e, ds_pod_events *ev);
void ds_pod_events_free(ds_pod_events *ev);

/* Drift detection: sets or clears each launched claim's Drifted condition. 0 or a write's error. */
int ds_drift_update(ns_engine *e);

/* The scheduling simulation of the cluster without the candidates' Nodes (their pods pending), pending pods and
 * in-flight claims included, as Karpenter's SimulateScheduling. */
typedef struct ds_sim {
    ns_engine_plan plan;
    bool all_scheduled; /* every reschedulable pod of the candidates has a place on an initialized node or a claim */
    /* when not: Karpenter's NonPendingPodSchedulingErrors, "not all pods would schedule, " then "NS/NAME => ERROR "
     * for the first five pods without a place (in the cluster's order; Karpenter's is a map's) and " and N other(s)" */
    char reason[1024];
    /* The new claims that hold a candidate pod (indices in plan.result.claims). Claims the round plans only for
     * pods that were already pending are the provisioner's business, not this disruption's. */
    size_t *needed;
    size_t n_needed;
} ds_sim;

/* consolidation: Karpenter's IsConsolidationSimulation (consolidation and its validation, not drift): the candidates'
 * pods may not go to a node still inside its NodePool's consolidateAfter window. */
int ds_simulate(ns_engine *e, ds_candidate *const *cands, size_t n, bool consolidation, ds_sim *out);
void ds_sim_free(ds_sim *s);
/* The simulation's findings in ns_consol_sim form (points into s): the claims counted are the needed ones.
 * multi_claim is left false (the caller sets it for cost packing). */
void ds_sim_consol(const ds_sim *s, ns_consol_sim *out);

/* A decided command waiting for its stabilisation window. */
typedef struct ds_command {
    bool pending;
    ds_method method;
    const char *consolidation_type; /* "empty", "drift", "multi", "single" */
    int64_t decided_ms;
    char **claims; /* candidate NodeClaim names */
    size_t n_claims;
    ns_consol_decision decision;
    /* REPLACE (consolidation): per replacement claim, its instance types and whether it must launch as spot; several
     * only with cost packing (disruption_consolidate.h) */
    struct ds_replacement {
        char **types;
        size_t n_types;
        bool spot_only;
    } *repl;
    size_t n_repl;
    size_t n_replacements; /* how many claims the command launches (drift: as the simulation asked) */
    size_t pod_count;
} ds_command;

void ds_command_clear(ds_command *cmd);

/* Methods: each fills *cmd (pending) or leaves it clear. budgets is the method's ds_budgets, decremented as
 * candidates are taken. 0 or an error that ends the step. */
int ds_compute_emptiness(ns_engine *e, ds_candidates *cands, int64_t *budgets, ds_command *cmd);
int ds_compute_drift(ns_engine *e, ds_candidates *cands, int64_t *budgets, ds_command *cmd);
/* Static drift, per static pool: none while the pool has more claims (active and pending disruption) than replicas;
 * else the longest-drifted candidates, as many as the budget, limits.nodes and the candidates allow. */
int ds_compute_static_drift(ns_engine *e, ds_candidates *cands, int64_t *budgets, ds_command *cmd);
/* *constrained: a candidate was passed over because its NodePool's budget allowed no more (Karpenter's
 * constrainedByBudgets): finding nothing then does not mean the cluster is consolidated. */
int ds_compute_consolidation(ns_engine *e, const ns_disruption_config *cfg, ds_candidates *cands, int64_t *budgets,
                             ds_command *cmd, bool *constrained);

/* Declares to the engine what the controller waits for in the cluster: expiry, consolidateAfter, scheduled budgets
 * (disruption_due.c). */
void ds_declare_due(ns_engine *e);

#endif
