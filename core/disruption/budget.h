/*
 * NodePool disruption budgets (spec.disruption.budgets), evaluated as Karpenter v1 does
 * (NodePool.GetAllowedDisruptionsByReason and the disruption controller's BuildDisruptionBudgetMapping).
 *
 * A budget applies to the reasons it lists (NS_REASON_* from model/nodepool.h; none listed = every reason) and, with a
 * schedule, only while active (cron.h). An active budget allows `nodes` disruptions: a count, or a percentage of the
 * pool's nodes rounded up (so 10% of 1 node allows 1, and 0% allows none). The most restrictive active budget that
 * applies wins; when none applies the reason is unlimited. A pool without budgets gets Karpenter's default, 10%.
 *
 * Counting, as Karpenter does: the pool's nodes are its managed nodes that are initialized and whose instance is not
 * already terminating; the nodes "being disrupted" are those of them that are NotReady or marked for deletion
 * (deleting, or chosen by a disruption command). They count in both numbers.
 */
#ifndef NS_BUDGET_H
#define NS_BUDGET_H

#include <stddef.h>
#include <stdint.h>

#include "model/nodepool.h"

/* What "unlimited" is: no active budget applies to the reason (Karpenter's MaxInt32). */
#define NS_BUDGET_UNLIMITED INT64_C(2147483647)

/* "Empty", "Underutilized" or "Drifted" for one NS_REASON_* bit; "unknown" otherwise. Static string. */
const char *ns_budget_reason_name(unsigned reason);

/* The nodes one budget allows while active, out of n_nodes (percentages rounded up). */
int64_t ns_budget_nodes(const ns_budget *b, int64_t n_nodes);

/* Allowed disruptions for `reason` (one NS_REASON_* bit) at now_ms, before subtracting nodes already being
 * disrupted. 0 with *out set, or the schedule's parse error with *out = 0: a misconfigured budget fails closed. */
int ns_budget_allowed(const ns_budget *budgets, size_t n_budgets, int64_t n_nodes, unsigned reason, int64_t now_ms,
                      int64_t *out);

/* What the disruption controller may still start in the pool: allowed minus n_disrupting, never negative. Errors as
 * for ns_budget_allowed (with *out = 0). */
int ns_budget_remaining(const ns_nodepool *np, int64_t n_nodes, int64_t n_disrupting, unsigned reason, int64_t now_ms,
                        int64_t *out);

#endif
