/*
 * Cost packing under a NodePool's limits (sched_cost_limits.c). A claim of a pool with limits counts as Karpenter's
 * subtractMax counts it: the largest capacity among the types it may launch when it is made. The pass gives back what
 * the greedy claims it replaces took, makes each new claim with only the types that hold its bin (no larger than the
 * cheapest of them when the class is tight), and keeps a class only when its bins fit what is left.
 */
#ifndef NS_SCHED_COST_LIMITS_H
#define NS_SCHED_COST_LIMITS_H

#include "sched/sched_cost.h"

/* Into out (the pool's words): the class's types that may launch the bin, those with an allowed offering whose
 * allocatable holds its pods and that every one of them allows, and when the class is tight, no larger in any limited
 * resource than the cheapest of them; into charge (n_dims, when not NULL), the largest capacity among them, what a
 * claim made with only these types takes from the limits. used is scratch. */
void sched_cost_bin_types(const sched *s, const cost_class *k, const cost_bin *bin, sched_vec *used, uint64_t *out,
                          int64_t *charge);

/* Into avail (n_dims, when the pool has limits): what the class's pool has left, pool_avail, with the class's claims
 * given back; into types (the pool's words): the types that fit it. */
void sched_cost_class_room(const sched *s, const cost_class *k, const int64_t *pool_avail, int64_t *avail,
                           uint64_t *types);

/* A class of a pool with limits: whether its bins fit avail (from sched_cost_class_room), with every type that holds
 * them (a launch keeps the most choice), else tight (k->tight set); when they fit, avail is then what they leave.
 * used, mask (the pool's words) and charge (2 x n_dims) are scratch. */
bool sched_cost_fits_limits(const sched *s, cost_class *k, int64_t *avail, sched_vec *used, uint64_t *mask,
                            int64_t *charge);

/* Saves every pool's remaining limits into saved (n_pools x n_dims), then gives back to each pool with limits what
 * the classes' claims took from it. */
void sched_cost_limits_give_back(sched *s, const cost_class *classes, size_t n_classes, int64_t *saved);
/* Puts back the pools' remaining limits that sched_cost_limits_give_back saved. */
void sched_cost_limits_restore(sched *s, const int64_t *saved);

#endif
