/*
 * Cost packing's LP plan prices patterns on fewer types (sched_cost_lp.c): a type B is left out of the LP when another
 * type A and a whole k >= 1 make k copies of any pattern B holds a pattern A holds, at no more than k times B's price.
 * Every LP solution using B then has one as cheap using A instead, so the LP optimum is unchanged, while each pricing
 * round (fills and a knapsack per type) runs over fewer types: families priced linearly in size collapse towards their
 * larger members. "Any pattern B holds" is bounded three ways: B's allocatable (the scheduler's own, daemon overhead
 * taken off: what the plan fills), the pods of the class B can hold at most (so a small type whose pods capacity k
 * copies would exceed is left out only when the class's pods cannot reach that capacity), and the pods of each group
 * (the LP's patterns hold at most the class's pods of a group, so k copies may not ask for more). The rounding still
 * uses every type.
 */
#include <stdlib.h>

#include "errors/ns_error.h"
#include "sched/sched_cost.h"

/* What one pattern of type t uses at most of each dimension for the class's items (use), and the most pods of each
 * item it holds (fit). */
static void usage(const sched *s, const sched_vec *alloc, const cost_item *items, size_t m, int64_t *use, int64_t *fit)
{
    int64_t pods = 0; /* pods in one pattern at most: every item's own most, and the smallest pods filling it */
    for (size_t j = 0; j < m; j++) {
        fit[j] = items[j].n;
        for (size_t d = 0; d < s->n_dims; d++)
            if (items[j].g->req.v[d] > 0) {
                int64_t k = alloc->v[d] > 0 ? alloc->v[d] / items[j].g->req.v[d] : 0;
                fit[j] = k < fit[j] ? k : fit[j];
            }
        pods += fit[j];
    }
    for (size_t d = 0; d < s->n_dims; d++) {
        int64_t least = INT64_MAX;
        for (size_t j = 0; j < m && least > 0; j++)
            least = items[j].g->req.v[d] < least ? items[j].g->req.v[d] : least;
        if (least > 0 && least < INT64_MAX && alloc->v[d] / least < pods)
            pods = alloc->v[d] / least;
    }
    for (size_t d = 0; d < s->n_dims; d++) {
        int64_t sum = 0, top = 0;
        for (size_t j = 0; j < m; j++) {
            int64_t r = items[j].g->req.v[d];
            sum += fit[j] * r;
            top = r > top ? r : top;
        }
        int64_t u = alloc->v[d] < sum ? alloc->v[d] : sum;
        use[d] = pods * top < u ? pods * top : u;
    }
}

/* The whole k >= 1 of copies of B's patterns that A holds (within the class's pods of each item), or 0. */
static int64_t copies(const sched *s, const sched_vec *alloc_a, const int64_t *use_b, const int64_t *fit_b,
                      const cost_item *items, size_t m)
{
    int64_t k = INT64_MAX;
    for (size_t d = 0; d < s->n_dims && k > 0; d++)
        if (use_b[d] > 0) {
            int64_t x = alloc_a->v[d] / use_b[d];
            k = x < k ? x : k;
        }
    for (size_t j = 0; j < m && k > 0; j++)
        if (fit_b[j] > 0 && items[j].n / fit_b[j] < k)
            k = items[j].n / fit_b[j];
    return k == INT64_MAX ? 0 : k;
}

int sched_cost_undominated(const sched *s, const sched_vec *alloc, const cost_cand *c, size_t n_c,
                           const cost_item *items, size_t m, cost_cand *out, size_t *n_out)
{
    size_t w = s->n_dims + m;
    int64_t *buf = malloc((n_c ? n_c : 1) * w * sizeof(int64_t));
    size_t *ord = malloc((n_c ? n_c : 1) * sizeof(size_t));
    bool *keep = calloc(n_c ? n_c : 1, sizeof(bool));
    if (!buf || !ord || !keep) {
        free(buf);
        free(ord);
        free(keep);
        return NS_FAIL(NS_ERR_INTERNAL, "cost packing: out of memory comparing %zu instance types", n_c);
    }
    for (size_t i = 0; i < n_c; i++) {
        usage(s, &alloc[c[i].type], items, m, buf + i * w, buf + i * w + s->n_dims);
        ord[i] = i;
    }
    /* Largest first (by cpu, then memory), so a type's dominator is looked for among types already kept. */
    for (size_t i = 1; i < n_c; i++)
        for (size_t k = i; k > 0; k--) {
            const int64_t *x = alloc[c[ord[k]].type].v, *y = alloc[c[ord[k - 1]].type].v;
            if (x[SCHED_CPU] < y[SCHED_CPU] || (x[SCHED_CPU] == y[SCHED_CPU] && x[SCHED_MEM] <= y[SCHED_MEM]))
                break;
            size_t t = ord[k];
            ord[k] = ord[k - 1];
            ord[k - 1] = t;
        }
    for (size_t i = 0; i < n_c; i++) {
        size_t b = ord[i];
        bool dominated = false;
        for (size_t a = 0; a < i && !dominated; a++) {
            if (!keep[ord[a]])
                continue;
            int64_t k = copies(s, &alloc[c[ord[a]].type], buf + b * w, buf + b * w + s->n_dims, items, m);
            dominated = k >= 1 && c[ord[a]].price <= (double)k * c[b].price * (1 + 1e-9);
        }
        keep[b] = !dominated;
    }
    size_t n = 0;
    for (size_t i = 0; i < n_c; i++)
        if (keep[i])
            out[n++] = c[i];
    free(keep);
    free(buf);
    free(ord);
    *n_out = n;
    return NS_OK;
}
