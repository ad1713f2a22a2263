/*
 * Consolidation decisions as pure functions, following Karpenter's pkg/controllers/disruption (consolidation.go,
 * multinodeconsolidation.go). The caller runs the scheduling simulation (the cluster without the candidates, their
 * pods pending) and hands over what it found; these functions decide delete, replace or nothing, and which launch
 * choices a replacement may use.
 *
 * Rules:
 * - Every candidate pod must have a place (on an initialized existing node or a new claim), else nothing.
 * - No new claim: delete the candidates.
 * - More than one new claim: nothing (consolidation never turns m nodes into more than one), except with cost
 *   packing (sim.multi_claim): the k new claims replace the candidates when the sum of their cheapest eligible
 *   options is strictly below the candidates' total price. Each claim then gets a share of the saving as its price
 *   ceiling (its cheapest eligible option plus (total - sum) / k) and goes through the rules below as a one-claim
 *   replacement priced at that ceiling, so whatever option each claim launches, the k together cost less than the
 *   candidates. k may exceed the number of candidates: more, smaller nodes are allowed only because they cost less.
 * - One new claim: replace, with only the launch choices priced strictly below the candidates' total price. When
 *   every candidate is spot and the replacement may be spot, this is spot-to-spot consolidation: only when enabled,
 *   spot choices only, and for a single candidate only with at least NS_SPOT_TO_SPOT_MIN_TYPES cheaper instance types,
 *   launching from the 15 cheapest of them (or as many as the minValues requirements need), so the new node is not
 *   itself immediately replaceable. Otherwise, when the replacement may be spot or on-demand, it is held to spot (the
 *   prices were compared assuming spot; an on-demand fallback could cost more than the node it replaces).
 * - minValues requirements of the new claim must still hold after the price filter, else nothing.
 * - Multi-node replacements also drop choices not cheaper than the cheapest candidate of the same instance type
 *   (Karpenter's filterOutSameType: otherwise deleting the other candidates alone would do).
 *
 * Memory: ns_consol_result owns its options array and its parts; free with ns_consol_result_free. The options point
 * at instance types of the simulation's sets, which must outlive the result (or be swapped for the engine's sets:
 * ns_engine_commit_unpriced).
 */
#ifndef NS_DISRUPTION_CONSOLIDATE_H
#define NS_DISRUPTION_CONSOLIDATE_H

#include <stdbool.h>
#include <stddef.h>

#include "sched/sched.h"

/* Karpenter's MinInstanceTypesForSpotToSpotConsolidation. */
#define NS_SPOT_TO_SPOT_MIN_TYPES 15
/* Multi-node consolidation looks at no more than this many candidates at once. */
#define NS_MULTI_NODE_MAX_CANDIDATES 100

typedef struct ns_consol_candidate {
    const char *name;          /* NodeClaim name, for messages */
    const char *instance_type; /* node.kubernetes.io/instance-type */
    const char *capacity_type; /* karpenter.sh/capacity-type */
    double price;              /* the price of the node's offering per hour; < 0 when unknown */
} ns_consol_candidate;

/* What the scheduling simulation of "the cluster without these candidates" found. */
typedef struct ns_consol_sim {
    bool all_scheduled;             /* every candidate pod has a place on an initialized node or a new claim */
    /* when not: Karpenter's NonPendingPodSchedulingErrors ("not all pods would schedule, NS/NAME => ERROR ..."); may
     * be NULL */
    const char *unscheduled_reason;
    size_t n_new_claims;
    const ns_sched_claim *claim; /* the new claim when n_new_claims == 1 */
    /* Cost packing: several new claims may replace the candidates; they are all_claims[needed[0 .. n_new_claims)]. */
    bool multi_claim;
    const ns_sched_claim *all_claims;
    const size_t *needed;
} ns_consol_sim;

typedef enum ns_consol_decision {
    NS_CONSOL_NOOP = 0,
    NS_CONSOL_DELETE,
    NS_CONSOL_REPLACE,
} ns_consol_decision;

typedef struct ns_consol_result {
    ns_consol_decision decision;
    ns_sched_option *options; /* REPLACE: the replacement's launch choices, cheapest first (owned) */
    size_t n_options;
    size_t n_types;    /* distinct instance types among the options */
    bool spot_only;    /* the replacement must launch as spot */
    double price;      /* the candidates' total price per hour */
    char why[256];     /* NOOP: why, in Karpenter's words ("Can't replace with a cheaper node"); else "" */
    /* NOOP: `why` is the message of the Unconsolidatable event Karpenter publishes about a single candidate; false
     * when Karpenter says nothing (no candidates) or fails instead (an unknown price) */
    bool published;
    /* REPLACE by several new claims (multi_claim): one REPLACE per claim, in the simulation's order, each with its
     * options and price ceiling (`price`); options above are then empty. Owned. */
    struct ns_consol_result *parts;
    size_t n_parts;
} ns_consol_result;

/* The replacements of a REPLACE: n_parts, or 1 (the result itself); 0 for DELETE and NOOP. */
size_t ns_consol_n_replacements(const ns_consol_result *r);
/* The i-th replacement (i < ns_consol_n_replacements): a part, or r itself. */
const ns_consol_result *ns_consol_replacement(const ns_consol_result *r, size_t i);

/* Karpenter's computeConsolidation after its simulation. *out is overwritten. 0, or NS_ERR_INTERNAL on allocation
 * failure (with *out a NOOP). */
int ns_consol_compute(const ns_consol_candidate *cands, size_t n, const ns_consol_sim *sim, bool spot_to_spot,
                      ns_consol_result *out);
/* filterOutSameType, for multi-node replacements: keeps the options priced below the cheapest candidate whose instance
 * type is among the options (of each part). A REPLACE left without options (a part without) becomes a NOOP. */
void ns_consol_filter_same_type(ns_consol_result *r, const ns_consol_candidate *cands, size_t n);
void ns_consol_result_free(ns_consol_result *r); /* members; accepts NULL */

/* Computes the command for the first n_first candidates (2 or more) into *out: the simulation, ns_consol_compute and,
 * for REPLACE, ns_consol_filter_same_type. 0 or an error that stops the search. */
typedef int (*ns_consol_prefix_fn)(void *ctx, size_t n_first, ns_consol_result *out);

/* Multi-node consolidation's binary search (firstNConsolidationOption) over the candidates in disruption-cost order:
 * the longest prefix (of at least 2 and at most NS_MULTI_NODE_MAX_CANDIDATES) whose command is a DELETE or a REPLACE,
 * assuming that if a prefix consolidates, shorter ones do too. *n_chosen = 0 and *out a NOOP when none does. The
 * callback is called O(log n) times. 0 or the callback's error. */
int ns_consol_first_n(size_t n_candidates, ns_consol_prefix_fn fn, void *ctx, size_t *n_chosen, ns_consol_result *out);

#endif
