/*
 * The optimum side of the cost benchmark, solved with GLPK (Debian's libglpk; bench only, never the product): the
 * cheapest set of nodes for pod groups over instance types, as a set-covering problem over packing patterns (how many
 * pods of each group one node of a type holds). Written from the problem, not from the scheduler: a pattern fits when
 * its pods' cpu, memory and pod count are within the type's allocatable.
 */
#ifndef COST_OPTIMUM_H
#define COST_OPTIMUM_H

#include <stddef.h>
#include <stdint.h>

typedef struct co_type {
    int64_t cpu, mem, pods; /* allocatable */
    double price;
} co_type;

typedef struct co_group {
    int64_t cpu, mem; /* one pod's requests */
    int64_t n;        /* pods */
} co_group;

/* Exact optimum: every maximal pattern of every type, then the integer program. 0 with *cost set; 1 when the
 * patterns exceed max_patterns or GLPK does not prove optimality within time_limit_s; -1 on an error (stderr). */
int co_exact(const co_type *types, size_t n_types, const co_group *groups, size_t n_groups, size_t max_patterns,
             double time_limit_s, double *cost);

/* The LP relaxation of co_exact's program (same patterns), solved directly: what co_lp_bound converges to. Return
 * codes as co_exact's. */
int co_exact_lp(const co_type *types, size_t n_types, const co_group *groups, size_t n_groups, size_t max_patterns,
                double time_limit_s, double *value);

typedef struct co_lp_stats {
    size_t types_used;   /* types left after dominance */
    size_t rounds, mips; /* master solves; pricing integer programs */
    size_t columns;
    double master_value; /* the last master's value: an upper bound of the LP optimum */
    double cpu_s;        /* process CPU time spent */
} co_lp_stats;

/* Lower bound of the optimum: the LP relaxation by column generation, pricing each type with an integer knapsack
 * (GLPK for both). *bound is the best Farley bound found (valid at any iteration); *converged when it is within 0.2%
 * of the master's value, hence of the LP optimum. Stops after time_limit_s of process CPU time. stats may be NULL.
 * 0, or -1 on an error (stderr). */
int co_lp_bound(const co_type *types, size_t n_types, const co_group *groups, size_t n_groups, double time_limit_s,
                double *bound, int *converged, co_lp_stats *stats);

#endif
