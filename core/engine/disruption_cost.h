/*
 * The disruption cost Karpenter orders consolidation candidates by (pkg/utils/disruption): the rescheduling cost of
 * the node's pods times the fraction of the node's lifetime that remains. Cheapest first.
 */
#ifndef NS_DISRUPTION_COST_H
#define NS_DISRUPTION_COST_H

#include <stddef.h>
#include <stdint.h>

#include "model/pod.h"

#define NS_ANNOTATION_POD_DELETION_COST "controller.kubernetes.io/pod-deletion-cost"

/* One pod's eviction cost: 1, plus pod-deletion-cost / 2^27, plus priority / 2^25, clamped to [-10, 10]. An
 * unparsable deletion cost is ignored (Karpenter logs it and goes on). */
double ns_disruption_eviction_cost(const ns_pod *pod);
/* The sum of the pods' eviction costs (Karpenter counts every pod on the node, DaemonSet pods included). */
double ns_disruption_rescheduling_cost(const ns_pod *const *pods, size_t n);
/* The fraction of the node's lifetime left, in [0, 1]: (expireAfter - age) / expireAfter, or 1 when the claim never
 * expires (expire_after_ms <= 0). */
double ns_disruption_lifetime_remaining(int64_t now_ms, int64_t created_ms, int64_t expire_after_ms);

/* A candidate's place in the order. */
typedef struct ns_disruption_rank {
    double cost;
    const char *name; /* breaks ties, so equal costs always come out in the same order */
    size_t index;     /* the caller's */
} ns_disruption_rank;

/* Sorts by cost ascending, then name. */
void ns_disruption_rank_sort(ns_disruption_rank *ranks, size_t n);

#endif
