/*
 * Cost packing's planner: variable-size bin packing by best cost ratio. Each step tries every candidate type, fills it
 * first-fit-decreasing with the pods left (sched_fit_count, the scheduler's own fit), and keeps the type whose price
 * per unit of packed value is lowest; the bin is then priced at the cheapest candidate that holds what it packed.
 * Karpenter's greedy instead grows each claim until only the largest types fit, whatever their shape costs.
 */
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "sched/sched_cost.h"

static int cand_cmp(const void *a, const void *b)
{
    const cost_cand *x = a, *y = b;
    if (x->price != y->price)
        return x->price < y->price ? -1 : 1;
    return x->type < y->type ? -1 : x->type > y->type;
}

static int item_cmp(const void *a, const void *b)
{
    const cost_item *x = a, *y = b;
    return x->value > y->value ? -1 : x->value < y->value;
}

static bool vec_within(const sched *s, const sched_vec *v, const sched_vec *cap)
{
    for (size_t d = 0; d < s->n_dims; d++)
        if (v->v[d] > cap->v[d])
            return false;
    return true;
}

/* True when a (at most b's price) offers at least b's allocatable in every dimension: b is never a better bin. */
static bool dominates(const sched *s, const sched_pool *p, size_t a, size_t b)
{
    return vec_within(s, &p->alloc[b], &p->alloc[a]);
}

/* The types the class may launch with an allowed offering, cheapest first, without dominated ones. */
static size_t candidates(const sched *s, size_t pi, const uint64_t *types, uint64_t pairs, cost_cand *out)
{
    const sched_pool *p = &s->pools[pi];
    sched_claim view = {.pool = (uint32_t)pi, .pairs = pairs};
    size_t n = 0;
    for (size_t i = sched_bits_first(types, p->words); i != SIZE_MAX; i = sched_bits_next(types, p->words, i)) {
        double price = sched_claim_type_price(p, &view, i);
        if (price >= 0)
            out[n++] = (cost_cand){i, price};
    }
    qsort(out, n, sizeof(*out), cand_cmp);
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        bool dominated = false;
        for (size_t j = 0; j < kept && !dominated; j++)
            dominated = dominates(s, p, out[j].type, out[i].type);
        if (!dominated)
            out[kept++] = out[i];
    }
    return kept;
}

/* value = the pod's largest request in cpu, memory or pods, each at the cheapest price per unit among the types. */
static void item_values(const sched *s, const sched_pool *p, const cost_cand *c, size_t n, cost_item *items, size_t n_items)
{
    static const size_t dims[] = {SCHED_CPU, SCHED_MEM, SCHED_PODS};
    double unit[3] = {-1, -1, -1};
    for (size_t i = 0; i < n; i++)
        for (size_t d = 0; d < 3; d++) {
            int64_t a = p->alloc[c[i].type].v[dims[d]];
            double u = a > 0 ? c[i].price / (double)a : -1;
            if (u >= 0 && (unit[d] < 0 || u < unit[d]))
                unit[d] = u;
        }
    for (size_t j = 0; j < n_items; j++) {
        double v = 1e-12; /* pods requesting nothing still take a bin's room */
        for (size_t d = 0; d < 3; d++) {
            double x = unit[d] > 0 ? (double)items[j].g->req.v[dims[d]] * unit[d] : 0;
            v = x > v ? x : v;
        }
        items[j].value = v;
    }
}

/* Fills type t first-fit-decreasing from rem into used; the packed value, and the fills when fills != NULL. */
static double fill(sched *s, const sched_pool *p, size_t t, const cost_item *items, size_t n_items,
                   const int64_t *rem, sched_vec *used, int64_t *take)
{
    memset(used->v, 0, s->n_dims * sizeof(int64_t));
    double value = 0;
    for (size_t j = 0; j < n_items; j++) {
        take[j] = 0;
        if (rem[j] == 0)
            continue;
        int64_t k = sched_fit_count(s, &p->alloc[t], used, &items[j].g->req, rem[j]);
        if (k <= 0)
            continue;
        for (size_t d = 0; d < s->n_dims; d++)
            used->v[d] += k * items[j].g->req.v[d];
        take[j] = k;
        value += (double)k * items[j].value;
    }
    return value;
}

int sched_cost_push_bin(cost_plan *pl, const int64_t *take, size_t n_items, double price)
{
    if (pl->n_bins == pl->cap_bins) {
        size_t nc = pl->cap_bins ? pl->cap_bins * 2 : 16;
        cost_bin *b = realloc(pl->bins, nc * sizeof(*b));
        if (!b)
            return NS_FAIL(NS_ERR_INTERNAL, "cost packing: out of memory for %zu bins", nc);
        pl->bins = b;
        pl->cap_bins = nc;
    }
    cost_bin *b = &pl->bins[pl->n_bins++];
    *b = (cost_bin){pl->n_fills, 0, 0, price};
    for (size_t j = 0; j < n_items; j++) {
        if (!take[j])
            continue;
        if (pl->n_fills == pl->cap_fills) {
            size_t nc = pl->cap_fills ? pl->cap_fills * 2 : 64;
            cost_fill *f = realloc(pl->fills, nc * sizeof(*f));
            if (!f)
                return NS_FAIL(NS_ERR_INTERNAL, "cost packing: out of memory for %zu bin entries", nc);
            pl->fills = f;
            pl->cap_fills = nc;
        }
        pl->fills[pl->n_fills++] = (cost_fill){j, take[j]};
        b->n++;
        b->packed += take[j];
    }
    pl->price += price;
    return NS_OK;
}

double sched_cost_bin_price(const sched *s, const sched_pool *p, const cost_cand *c, size_t n_c, const sched_vec *used)
{
    for (size_t i = 0; i < n_c; i++)
        if (vec_within(s, used, &p->alloc[c[i].type]))
            return c[i].price;
    return -1;
}

/* One bin: the candidate with the lowest price per packed value; 1 when no candidate takes any pod left. */
static int next_bin(sched *s, const sched_pool *p, const cost_cand *c, size_t n_c, const cost_item *items,
                    size_t n_items, int64_t *rem, sched_vec *used, int64_t *take, int64_t *best_take, cost_plan *out)
{
    double best_ratio = 0, best_value = 0;
    size_t best = SIZE_MAX;
    for (size_t i = 0; i < n_c; i++) {
        double v = fill(s, p, c[i].type, items, n_items, rem, used, take);
        if (v <= 0)
            continue;
        double ratio = c[i].price / v;
        if (best == SIZE_MAX || ratio < best_ratio || (ratio == best_ratio && v > best_value)) {
            best = i;
            best_ratio = ratio;
            best_value = v;
            memcpy(best_take, take, n_items * sizeof(*take));
        }
    }
    if (best == SIZE_MAX)
        return 1;
    memset(used->v, 0, s->n_dims * sizeof(int64_t));
    for (size_t j = 0; j < n_items; j++) {
        for (size_t d = 0; d < s->n_dims; d++)
            used->v[d] += best_take[j] * items[j].g->req.v[d];
        rem[j] -= best_take[j];
    }
    return sched_cost_push_bin(out, best_take, n_items, sched_cost_bin_price(s, p, c, best + 1, used));
}

int sched_cost_greedy(sched *s, const sched_pool *p, const cost_cand *c, size_t n_c, const cost_item *items,
                      size_t n_items, int64_t *rem, cost_plan *out)
{
    int64_t *take = malloc(2 * (n_items ? n_items : 1) * sizeof(*take)), left = 0;
    sched_vec used;
    int rc = take ? sched_vec_init(s, &used)
                  : NS_FAIL(NS_ERR_INTERNAL, "cost packing: out of memory planning %zu pod groups", n_items);
    for (size_t j = 0; j < n_items; j++)
        left += rem[j];
    while (rc == NS_OK && left > 0) {
        rc = next_bin(s, p, c, n_c, items, n_items, rem, &used, take, take + n_items, out);
        if (rc == NS_OK)
            left -= out->bins[out->n_bins - 1].packed;
    }
    free(take);
    return rc;
}

static void plan_swap(cost_plan *a, cost_plan *b)
{
    cost_plan t = *a;
    *a = *b;
    *b = t;
}

int sched_cost_plan(sched *s, size_t pi, const uint64_t *types, uint64_t pairs, cost_item *items, size_t n_items,
                    cost_plan *out)
{
    const sched_pool *p = &s->pools[pi];
    memset(out, 0, sizeof(*out));
    cost_plan lp = {0};
    cost_cand *c = malloc((p->n_types ? p->n_types : 1) * sizeof(*c));
    int64_t *rem = malloc((n_items ? n_items : 1) * sizeof(*rem));
    int rc = c && rem ? NS_OK : NS_FAIL(NS_ERR_INTERNAL, "cost packing: out of memory planning %zu pod groups", n_items);
    size_t n_c = rc == NS_OK ? candidates(s, pi, types, pairs, c) : 0;
    bool exact = false;
    if (rc == NS_OK) {
        item_values(s, p, c, n_c, items, n_items);
        qsort(items, n_items, sizeof(*items), item_cmp);
        for (size_t j = 0; j < n_items; j++)
            rem[j] = items[j].n;
        /* Few pods: the exact plan, which neither heuristic can beat. */
        rc = sched_cost_exact(s, p, c, n_c, items, n_items, rem, out);
        exact = rc == NS_OK;
        if (rc == 1)
            rc = sched_cost_greedy(s, p, c, n_c, items, n_items, rem, out);
    }
    if (rc == NS_OK && !exact)
        rc = sched_cost_plan_lp(s, p, c, n_c, items, n_items, &lp);
    if (rc == NS_OK && lp.n_bins && lp.price < out->price)
        plan_swap(out, &lp);
    sched_cost_plan_free(&lp);
    free(c);
    free(rem);
    if (rc != NS_OK)
        sched_cost_plan_free(out);
    return rc;
}

void sched_cost_plan_free(cost_plan *p)
{
    if (!p)
        return;
    free(p->bins);
    free(p->fills);
    memset(p, 0, sizeof(*p));
}
