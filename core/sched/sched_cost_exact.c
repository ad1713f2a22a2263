/*
 * Cost packing's exact step for few pods: the cheapest bins for a vector of pod counts, by dynamic programming over
 * every sub-vector of it. cost[v] is the least price of bins holding exactly the pods v counts: the bin that holds the
 * first pod of v (any fill of the candidates that includes it) plus cost of the rest, so each set of bins is counted
 * once in one order. A bin of fill u costs the cheapest candidate whose allocatable holds u, the same test
 * sched_cost_bin_price makes for the other plans. The work is the number of (state, sub-vector) pairs, bounded by
 * EXACT_MAX_WORK; past it the caller keeps its greedy or rounded plan. The LP's rounding loses a few percent where
 * few pods are left after its whole nodes, which is where this step is exact and cheap.
 */
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "sched/sched_cost.h"

/* Sub-vector visits: 2.4 million took 4 to 7 ms of one loaded core (cost_bench's small seed 29, whose four groups of
 * 8, 4, 11 and 8 pods the LP's rounding plans 8 to 10% above this step), a few ms for a round of a few dozen pods. */
#define EXACT_MAX_WORK 3000000.0

typedef struct exact {
    sched *s;
    const sched_pool *p;
    const cost_cand *c;
    size_t n_c;
    const cost_item *items;
    size_t m;
    const int64_t *rem;
    size_t *stride;
    size_t n_states;
    double *bin;  /* the price of one bin holding state i, -1 when no candidate does */
    double *cost; /* the least price for state i, -1 when none */
    size_t *pick; /* the first bin of that least price */
    int64_t *digit, *sub;
    sched_vec used;
} exact;

/* Counts of state idx into digit. */
static void digits_of(const exact *X, size_t idx, int64_t *digit)
{
    for (size_t j = 0; j < X->m; j++)
        digit[j] = (int64_t)(idx / X->stride[j] % (size_t)(X->rem[j] + 1));
}

static void bin_prices(exact *X)
{
    for (size_t i = 0; i < X->n_states; i++) {
        digits_of(X, i, X->digit);
        memset(X->used.v, 0, X->s->n_dims * sizeof(int64_t));
        for (size_t j = 0; j < X->m; j++)
            for (size_t d = 0; d < X->s->n_dims; d++)
                X->used.v[d] += X->digit[j] * X->items[j].g->req.v[d];
        X->bin[i] = i == 0 ? -1 : sched_cost_bin_price(X->s, X->p, X->c, X->n_c, &X->used);
    }
}

/* cost[i] over the bins u <= digits(i) that hold i's first pod: an odometer over u, the first digit from 1. */
static void solve_state(exact *X, size_t i)
{
    digits_of(X, i, X->digit);
    size_t f = 0;
    while (X->digit[f] == 0)
        f++;
    memset(X->sub, 0, X->m * sizeof(int64_t));
    X->sub[f] = 1;
    size_t u = X->stride[f];
    X->cost[i] = -1;
    for (;;) {
        double b = X->bin[u], rest = X->cost[i - u];
        if (b >= 0 && rest >= 0 && (X->cost[i] < 0 || b + rest < X->cost[i])) {
            X->cost[i] = b + rest;
            X->pick[i] = u;
        }
        size_t j = f;
        while (j < X->m && X->sub[j] == X->digit[j]) {
            u -= (size_t)(X->sub[j] - (j == f)) * X->stride[j];
            X->sub[j] = j == f;
            j++;
        }
        if (j == X->m)
            return;
        X->sub[j]++;
        u += X->stride[j];
    }
}

static int emit(exact *X, cost_plan *out)
{
    int rc = NS_OK;
    for (size_t i = X->n_states - 1; rc == NS_OK && i > 0; i -= X->pick[i]) {
        digits_of(X, X->pick[i], X->digit);
        rc = sched_cost_push_bin(out, X->digit, X->m, X->bin[X->pick[i]]);
    }
    return rc;
}

static void exact_free(exact *X)
{
    free(X->stride);
    free(X->bin);
    free(X->cost);
    free(X->pick);
    free(X->digit);
    free(X->sub);
}

int sched_cost_exact(sched *s, const sched_pool *p, const cost_cand *c, size_t n_c, const cost_item *items,
                     size_t n_items, const int64_t *rem, cost_plan *out)
{
    double work = 1, states = 1;
    for (size_t j = 0; j < n_items; j++) {
        work *= (double)(rem[j] + 1) * (double)(rem[j] + 2) / 2;
        states *= (double)(rem[j] + 1);
    }
    if (work > EXACT_MAX_WORK)
        return 1;
    if (states == 1)
        return NS_OK;
    size_t m = n_items;
    exact X = {.s = s, .p = p, .c = c, .n_c = n_c, .items = items, .m = m, .rem = rem, .n_states = (size_t)states};
    X.stride = malloc(m * sizeof(size_t));
    X.bin = malloc(X.n_states * sizeof(double));
    X.cost = malloc(X.n_states * sizeof(double));
    X.pick = malloc(X.n_states * sizeof(size_t));
    X.digit = malloc(m * sizeof(int64_t));
    X.sub = malloc(m * sizeof(int64_t));
    int rc = X.stride && X.bin && X.cost && X.pick && X.digit && X.sub
                 ? sched_vec_init(s, &X.used)
                 : NS_FAIL(NS_ERR_INTERNAL, "cost packing: out of memory for an exact plan of %zu states", X.n_states);
    for (size_t j = 0, st = 1; rc == NS_OK && j < m; j++) {
        X.stride[j] = st;
        st *= (size_t)(rem[j] + 1);
    }
    if (rc == NS_OK) {
        bin_prices(&X);
        X.cost[0] = 0;
        for (size_t i = 1; i < X.n_states; i++)
            solve_state(&X, i);
        rc = X.cost[X.n_states - 1] < 0 ? 1 : emit(&X, out);
    }
    exact_free(&X);
    return rc;
}
