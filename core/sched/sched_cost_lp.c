/*
 * Cost packing's LP plan: the class's pods as a set-covering LP over packing patterns (how many pods of each item one
 * node of a candidate type holds; columns cost the type's price, rows ask for each item's count), solved by column
 * generation: a revised simplex on the patterns found so far gives each item a dual price, and each candidate type
 * proposes the pattern its dual prices value most (filled densest first, where density is the dual price per share of
 * the type's allocatable; with few items, also each item's every count put first). When no such fill prices out, the
 * fills under every weight of cpu against memory, then the pricing problem by branch and bound (sched_cost_knap.c)
 * look for the patterns that mix shapes: first each type filled with copies of another type's best fill and the room
 * left filled densest first, then the branch and bound, spent first on the types whose fills came nearest to pricing
 * out; each search adds as columns the fills it replaced on its way to its best, which price out too and cost no more
 * search. That extra search has a budget per pod of the class. Patterns are priced on the types no other makes unnecessary
 * (sched_cost_dom.c). With the LP solved, the
 * plan takes each pattern's whole number of nodes and plans the pods left exactly when they are few
 * (sched_cost_exact.c), else greedily, or takes each pattern rounded up and drops what is covered twice; the cheaper wins. At scale the
 * rounding costs a few nodes at most, so the plan is within a few percent of the LP bound; on small classes the
 * caller keeps the greedy plan when it is cheaper.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "sched/sched_cost.h"

/* Simplex pivots per solve and pricing rounds: enough for the classes' few dozen items; past them the plan uses the
 * LP as it stands, which is still a feasible basis. */
#define LP_MAX_PIVOTS 200
#define LP_MAX_ROUNDS 100
#define LP_NEW_COLUMNS 8
/* Branch-and-bound nodes per pricing problem. The pricing beyond one densest-first fill per candidate (the fills
 * of every cpu weight, then branch and bound) spends at most LP_KNAP_PER_POD fills or nodes per pod of the class,
 * so its time grows with the pods as the scheduler's own does: past it the LP stops with the columns it has. */
#define LP_KNAP_NODES 1000
/* ... or a sixteenth of the budget left when that is more: with many pods a type's search may then finish where
 * 1000 nodes left it, and the LP stopped with most of its budget unspent. */
#define LP_KNAP_SHARE 16
/* 8: at 6 the LP of a 1k-pod class could stop 6% above its optimum with a large type's search unfinished
 * (cost_bench, Azure seed 3); 8 costs about 5 ms per 10k pods there and 2 to 4 at 10k and 50k. */
#define LP_KNAP_PER_POD 8
/* Weights of cpu against memory the densest-first fill tries: 0, 1/4, ..., 1. */
#define LP_LAMBDA_STEPS 4
#define LP_EPS 1e-9
/* Classes of at most this many pod groups get the richer pricing of best_pattern. */
#define LP_LEAD_MAX_ITEMS 4

typedef struct lp {
    sched *s;
    const sched_pool *p;
    const cost_cand *c; /* the types patterns are priced on: the class's without the dominated (sched_cost_dom.c) */
    size_t n_c;
    const cost_cand *all_c; /* every type of the class, cheapest first: what the rounding's bins are priced on */
    size_t all_n;
    const cost_item *items;
    size_t m; /* rows: items */
    /* columns: patterns, each m counts (pat), its candidate (cand) and price */
    int64_t *pat;
    size_t *cand;
    double *price;
    size_t n_cols, cap_cols;
    /* basis: per row the basic column (SIZE_MAX - row for that row's surplus), B^-1 (m x m) and its values */
    size_t *basis;
    double *binv, *x, *pi, *d;
    sched_vec used;
    int64_t *fill;
    size_t *order;
    double *dens;
    double *frac; /* n_c x m x 3: fractions() */
    int64_t *kept; /* LP_NEW_COLUMNS x m: the fills price_columns keeps */
    int64_t *bestfill; /* n_c x m: each candidate's best fill in the last pricing round */
    double *gain;  /* per candidate, its best fill's value per price in the last pricing round */
    size_t *tord;  /* candidates by gain, largest first */
    cost_knap knap;
    size_t knap_left; /* fills and branch-and-bound nodes left of LP_KNAP_PER_POD per pod */
} lp;

static int lp_push(lp *L, const int64_t *a, size_t cand)
{
    if (L->n_cols == L->cap_cols) {
        size_t nc = L->cap_cols ? L->cap_cols * 2 : 64;
        int64_t *np = realloc(L->pat, nc * L->m * sizeof(int64_t));
        if (np)
            L->pat = np;
        size_t *ncand = np ? realloc(L->cand, nc * sizeof(size_t)) : NULL;
        if (ncand)
            L->cand = ncand;
        double *nprice = ncand ? realloc(L->price, nc * sizeof(double)) : NULL;
        if (!nprice)
            return NS_FAIL(NS_ERR_INTERNAL, "cost packing: out of memory for %zu LP columns", nc);
        L->price = nprice;
        L->cap_cols = nc;
    }
    memcpy(L->pat + L->n_cols * L->m, a, L->m * sizeof(int64_t));
    L->cand[L->n_cols] = cand;
    L->price[L->n_cols++] = L->c[cand].price;
    return NS_OK;
}

/* Orders the items by weight[j] per share of candidate ci, densest first (weights <= 0 last). The share is the
 * dominant one (the largest fraction of any dimension) when lambda < 0, else lambda of the cpu fraction plus
 * 1 - lambda of the memory fraction, at least the fraction of any other dimension: a weighted share sorts first the
 * shapes that fill what the other shapes leave. */
static void order_by_density(lp *L, size_t ci, const double *weight, double lambda)
{
    const double *f = L->frac + ci * L->m * 3;
    for (size_t j = 0; j < L->m; j++, f += 3) {
        double share = lambda < 0 ? fmax(f[2], fmax(f[0], f[1])) : fmax(f[2], lambda * f[0] + (1 - lambda) * f[1]);
        L->dens[j] = weight[j] > 0 ? weight[j] / fmax(share, 1e-12) : -1;
        L->order[j] = j;
    }
    for (size_t i = 1; i < L->m; i++) {
        size_t t = L->order[i], k = i;
        for (; k > 0 && L->dens[t] > L->dens[L->order[k - 1]]; k--)
            L->order[k] = L->order[k - 1];
        L->order[k] = t;
    }
}

/* Per candidate and item, the fractions of the candidate's allocatable one pod takes: cpu, memory, and the largest
 * of the other dimensions (order_by_density's shares, computed once). */
static void fractions(lp *L)
{
    for (size_t ci = 0; ci < L->n_c; ci++) {
        const sched_vec *alloc = &L->p->alloc[L->c[ci].type];
        for (size_t j = 0; j < L->m; j++) {
            double *f = L->frac + (ci * L->m + j) * 3;
            f[0] = f[1] = f[2] = 0;
            for (size_t d = 0; d < L->s->n_dims; d++) {
                if (L->items[j].g->req.v[d] <= 0)
                    continue;
                double x = alloc->v[d] > 0 ? (double)L->items[j].g->req.v[d] / (double)alloc->v[d] : 1e30;
                size_t at = d == SCHED_CPU ? 0 : d == SCHED_MEM ? 1 : 2;
                f[at] = fmax(f[at], x);
            }
        }
    }
}

/* Fills candidate ci with items in L->order, each as far as it fits (up to its count), after `lead` pods of item
 * `first` (none when first is SIZE_MAX); the fill into L->fill. */
static void fill_in_order(lp *L, size_t ci, size_t first, int64_t lead)
{
    const sched_vec *alloc = &L->p->alloc[L->c[ci].type];
    memset(L->used.v, 0, L->s->n_dims * sizeof(int64_t));
    for (size_t i = 0; i <= L->m; i++) {
        size_t j = i == 0 ? first : L->order[i - 1];
        if (j == SIZE_MAX || (i > 0 && j == first))
            continue;
        const sched_vec *req = &L->items[j].g->req;
        int64_t k = sched_fit_count(L->s, alloc, &L->used, req, i == 0 ? lead : L->items[j].n);
        L->fill[j] = k > 0 ? k : 0;
        for (size_t d = 0; k > 0 && d < L->s->n_dims; d++)
            L->used.v[d] += k * req->v[d];
    }
}

static double fill_value(const lp *L)
{
    double v = 0;
    for (size_t j = 0; j < L->m; j++)
        v += L->pi[j] > 0 ? (double)L->fill[j] * L->pi[j] : 0;
    return v;
}

/* Candidate ci's pattern of most dual value into L->fill, and its value: the densest-first fill, and with few items
 * also every count of each item put first and the others filled densest first after it (the densest-first fill alone
 * misses patterns that mix two shapes, which on small classes costs the rounding whole nodes). */
static double best_pattern(lp *L, size_t ci, bool sweep)
{
    double best = -1, best_lambda = -1;
    for (int step = -1; step <= (sweep ? LP_LAMBDA_STEPS : -1); step++) {
        double lambda = step < 0 ? -1 : (double)step / LP_LAMBDA_STEPS;
        order_by_density(L, ci, L->pi, lambda);
        fill_in_order(L, ci, SIZE_MAX, 0);
        double v = fill_value(L);
        if (v > best * (1 + 1e-12)) {
            best = v;
            best_lambda = lambda;
        }
    }
    order_by_density(L, ci, L->pi, best_lambda);
    fill_in_order(L, ci, SIZE_MAX, 0);
    if (L->m > LP_LEAD_MAX_ITEMS)
        return best;
    size_t best_first = SIZE_MAX;
    int64_t best_lead = 0;
    for (size_t j = 0; j < L->m; j++) {
        for (int64_t lead = 0; L->pi[j] > 0 && lead <= L->items[j].n; lead++) {
            fill_in_order(L, ci, j, lead);
            if (L->fill[j] < lead)
                break;
            double v = fill_value(L);
            if (v > best * (1 + 1e-12)) {
                best = v;
                best_first = j;
                best_lead = lead;
            }
        }
    }
    fill_in_order(L, ci, best_first, best_lead);
    return best;
}

/* The starting basis: per item, the candidate that holds its pods cheapest per pod, filled with that item only.
 * B is diagonal, so the basis is feasible from the start (no phase one). 1 when an item fits no candidate. */
static int start_basis(lp *L)
{
    int64_t *a = L->fill;
    for (size_t j = 0; j < L->m; j++) {
        size_t best = SIZE_MAX;
        int64_t best_k = 0;
        memset(L->used.v, 0, L->s->n_dims * sizeof(int64_t));
        for (size_t ci = 0; ci < L->n_c; ci++) {
            int64_t k = sched_fit_count(L->s, &L->p->alloc[L->c[ci].type], &L->used, &L->items[j].g->req,
                                        L->items[j].n);
            if (k > 0 && (best == SIZE_MAX || L->c[ci].price / (double)k < L->c[best].price / (double)best_k)) {
                best = ci;
                best_k = k;
            }
        }
        if (best == SIZE_MAX)
            return 1;
        memset(a, 0, L->m * sizeof(int64_t));
        a[j] = best_k;
        int rc = lp_push(L, a, best);
        if (rc < 0)
            return rc;
        L->basis[j] = L->n_cols - 1;
        for (size_t i = 0; i < L->m; i++)
            L->binv[j * L->m + i] = i == j ? 1.0 / (double)best_k : 0;
        L->x[j] = (double)L->items[j].n / (double)best_k;
    }
    return NS_OK;
}

static double col_cost(const lp *L, size_t col)
{
    return col >= L->n_cols ? 0 : L->price[col];
}

/* pi = c_B B^-1. */
static void duals(lp *L)
{
    for (size_t i = 0; i < L->m; i++) {
        double v = 0;
        for (size_t r = 0; r < L->m; r++)
            v += col_cost(L, L->basis[r]) * L->binv[r * L->m + i];
        L->pi[i] = v;
    }
}

/* d = B^-1 a for column col (a surplus column is -e_row). */
static void ftran(lp *L, size_t col)
{
    for (size_t r = 0; r < L->m; r++) {
        double v = 0;
        if (col < L->n_cols) {
            const int64_t *a = L->pat + col * L->m;
            for (size_t i = 0; i < L->m; i++)
                v += L->binv[r * L->m + i] * (double)a[i];
        } else
            v = -L->binv[r * L->m + (SIZE_MAX - col)];
        L->d[r] = v;
    }
}

/* The entering column with the most negative reduced cost, or SIZE_MAX at the optimum. */
static size_t entering(const lp *L)
{
    size_t best = SIZE_MAX;
    double best_rc = 0;
    for (size_t col = 0; col < L->n_cols; col++) {
        double rc = L->price[col];
        const int64_t *a = L->pat + col * L->m;
        for (size_t i = 0; i < L->m; i++)
            rc -= L->pi[i] * (double)a[i];
        if (rc < best_rc - LP_EPS * (1 + L->price[col])) {
            best_rc = rc;
            best = col;
        }
    }
    for (size_t i = 0; i < L->m; i++)
        if (L->pi[i] < best_rc - LP_EPS) { /* surplus column: reduced cost pi_i */
            best_rc = L->pi[i];
            best = SIZE_MAX - i;
        }
    return best;
}

/* Revised simplex from the current feasible basis; stops at the optimum or after LP_MAX_PIVOTS. */
static void simplex(lp *L)
{
    for (int it = 0; it < LP_MAX_PIVOTS; it++) {
        duals(L);
        size_t col = entering(L);
        if (col == SIZE_MAX)
            return;
        ftran(L, col);
        size_t r = SIZE_MAX;
        double ratio = 0;
        for (size_t i = 0; i < L->m; i++)
            if (L->d[i] > LP_EPS && (r == SIZE_MAX || L->x[i] / L->d[i] < ratio)) {
                r = i;
                ratio = L->x[i] / L->d[i];
            }
        if (r == SIZE_MAX)
            return; /* unbounded cannot happen with positive prices; stop rather than loop */
        double piv = L->d[r];
        double *row = L->binv + r * L->m;
        for (size_t k = 0; k < L->m; k++)
            row[k] /= piv;
        L->x[r] /= piv;
        for (size_t i = 0; i < L->m; i++) {
            if (i == r || L->d[i] == 0)
                continue;
            double f = L->d[i];
            for (size_t k = 0; k < L->m; k++)
                L->binv[i * L->m + k] -= f * row[k];
            L->x[i] -= f * L->x[r];
            if (L->x[i] < 0 && L->x[i] > -1e-9)
                L->x[i] = 0;
        }
        L->basis[r] = col;
    }
}

/* The columns one pricing round keeps: the LP_NEW_COLUMNS fills of most value per price that price out. */
typedef struct kept_cols {
    size_t cand[LP_NEW_COLUMNS], n;
    double gain[LP_NEW_COLUMNS];
} kept_cols;

/* Keeps a, candidate ci's fill worth v, when it prices out and is among the best so far. */
static void keep_fill(lp *L, kept_cols *k, size_t ci, const int64_t *a, double v)
{
    double gain = v / L->c[ci].price;
    if (gain <= 1 + 1e-7 || (k->n == LP_NEW_COLUMNS && gain <= k->gain[k->n - 1]))
        return;
    size_t at = k->n < LP_NEW_COLUMNS ? k->n++ : k->n - 1;
    for (; at > 0 && k->gain[at - 1] < gain; at--) {
        k->cand[at] = k->cand[at - 1];
        k->gain[at] = k->gain[at - 1];
        memcpy(L->kept + at * L->m, L->kept + (at - 1) * L->m, L->m * sizeof(int64_t));
    }
    k->cand[at] = ci;
    k->gain[at] = gain;
    memcpy(L->kept + at * L->m, a, L->m * sizeof(int64_t));
}

/* Each candidate's best pattern by the current dual prices, by the densest-first fills of best_pattern; when none
 * prices out, by the pricing problem solved by branch and bound (sched_cost_knap.c), which finds the patterns that
 * mix shapes the fills miss or shows there are none. Of those that price out, the LP_NEW_COLUMNS whose value per
 * price is highest become columns (more would only slow the simplex down). The number added, or a negative error. */
/* Each candidate a filled with k copies of another's best fill (as many as a holds, within the class's pods), the room
 * left filled densest first: a large type whose own fills miss a good pattern gets one a smaller type found. */
static void compose(lp *L, kept_cols *k)
{
    for (size_t a = 0; a < L->n_c; a++) {
        const sched_vec *alloc = &L->p->alloc[L->c[a].type];
        order_by_density(L, a, L->pi, -1);
        for (size_t b = 0; b < L->n_c; b++) {
            const int64_t *fb = L->bestfill + b * L->m;
            memset(L->used.v, 0, L->s->n_dims * sizeof(int64_t));
            for (size_t j = 0; j < L->m; j++)
                for (size_t d = 0; fb[j] > 0 && d < L->s->n_dims; d++)
                    L->used.v[d] += fb[j] * L->items[j].g->req.v[d];
            int64_t n = INT64_MAX;
            for (size_t d = 0; d < L->s->n_dims; d++)
                if (L->used.v[d] > 0)
                    n = alloc->v[d] / L->used.v[d] < n ? alloc->v[d] / L->used.v[d] : n;
            for (size_t j = 0; j < L->m; j++)
                if (fb[j] > 0)
                    n = L->items[j].n / fb[j] < n ? L->items[j].n / fb[j] : n;
            if (n < 1 || n == INT64_MAX || (b == a && n == 1))
                continue;
            for (size_t d = 0; d < L->s->n_dims; d++)
                L->used.v[d] *= n;
            for (size_t j = 0; j < L->m; j++)
                L->fill[j] = fb[j] * n;
            for (size_t i = 0; i < L->m; i++) {
                size_t j = L->order[i];
                if (L->pi[j] <= 0)
                    continue;
                const sched_vec *req = &L->items[j].g->req;
                int64_t more = sched_fit_count(L->s, alloc, &L->used, req, L->items[j].n - L->fill[j]);
                for (size_t d = 0; more > 0 && d < L->s->n_dims; d++)
                    L->used.v[d] += more * req->v[d];
                L->fill[j] += more > 0 ? more : 0;
            }
            keep_fill(L, k, a, L->fill, fill_value(L));
        }
        /* half a unit of the budget per pair of types: what keeps 1k pods within 50 ms per 10k pods (cost_bench) */
        L->knap_left -= L->knap_left > L->n_c / 2 ? L->n_c / 2 : L->knap_left;
    }
}

static int price_columns(lp *L)
{
    kept_cols k = {.n = 0};
    for (int sweep = 0; sweep < 2 && k.n == 0 && (sweep == 0 || L->knap_left > 0); sweep++) {
        for (size_t ci = 0; ci < L->n_c; ci++) {
            double v = best_pattern(L, ci, sweep);
            if (sweep)
                L->knap_left -= L->knap_left > LP_LAMBDA_STEPS + 2 ? LP_LAMBDA_STEPS + 2 : L->knap_left;
            for (size_t j = 0; j < L->m; j++)
                L->fill[j] = L->pi[j] > 0 ? L->fill[j] : 0;
            keep_fill(L, &k, ci, L->fill, v);
            memcpy(L->bestfill + ci * L->m, L->fill, L->m * sizeof(int64_t));
            L->gain[ci] = v / L->c[ci].price;
            L->tord[ci] = ci;
        }
    }
    if (k.n == 0 && L->knap_left > 0)
        compose(L, &k);
    /* The knapsack's budget goes first to the types whose fills came nearest to pricing out. */
    for (size_t i = 1; k.n == 0 && i < L->n_c; i++)
        for (size_t t = i; t > 0 && L->gain[L->tord[t]] > L->gain[L->tord[t - 1]]; t--) {
            size_t x = L->tord[t];
            L->tord[t] = L->tord[t - 1];
            L->tord[t - 1] = x;
        }
    for (size_t i = 0; k.n == 0 && i < L->n_c && L->knap_left > 0; i++) {
        size_t ci = L->tord[i];
        const int64_t *a;
        double price = L->c[ci].price;
        memset(L->fill, 0, L->m * sizeof(int64_t));
        order_by_density(L, ci, L->pi, -1);
        bool complete;
        double floor_v = price * (1 + 1e-7);
        size_t cap = L->knap_left / LP_KNAP_SHARE > LP_KNAP_NODES ? L->knap_left / LP_KNAP_SHARE : LP_KNAP_NODES;
        double got = sched_cost_knapsack(&L->knap, &L->p->alloc[L->c[ci].type], L->pi, L->order, L->fill, floor_v,
                                         L->knap_left < cap ? L->knap_left : cap, &complete);
        L->knap_left -= L->knap.nodes < L->knap_left ? L->knap.nodes : L->knap_left;
        /* The dynamic program over cpu and memory settles what the branch and bound could not, with a quarter of the
         * budget left: one type's grid took a third of Azure seed 1's at 1k pods and starved the types after it. */
        if (!complete) {
            got = sched_cost_knap_grid(&L->knap, L->knap_left / 4, &complete);
            L->knap_left -= L->knap.nodes < L->knap_left ? L->knap.nodes : L->knap_left;
        }
        if (got > floor_v)
            keep_fill(L, &k, ci, L->fill, got);
        /* The fills the search passed on its way to the best price out too: columns at no extra search. */
        double ev;
        for (size_t e = 0; (a = sched_cost_knap_earlier(&L->knap, e, &ev)); e++)
            keep_fill(L, &k, ci, a, ev);
    }
    for (size_t i = 0; i < k.n; i++) {
        int rc = lp_push(L, L->kept + i * L->m, k.cand[i]);
        if (rc < 0)
            return rc;
    }
    return (int)k.n;
}

/* Appends one bin of the pods in take (clipped to rem, which it consumes), priced at the cheapest candidate that
 * holds them. */
static int take_bin(lp *L, int64_t *take, int64_t *rem, cost_plan *out)
{
    memset(L->used.v, 0, L->s->n_dims * sizeof(int64_t));
    bool any = false;
    for (size_t j = 0; j < L->m; j++) {
        take[j] = take[j] < rem[j] ? take[j] : rem[j];
        rem[j] -= take[j];
        any = any || take[j] > 0;
        for (size_t d = 0; d < L->s->n_dims; d++)
            L->used.v[d] += take[j] * L->items[j].g->req.v[d];
    }
    return any ? sched_cost_push_bin(out, take, L->m, sched_cost_bin_price(L->s, L->p, L->all_c, L->all_n, &L->used))
               : NS_OK;
}

/* The basis's patterns, each count rounded down (up when ceil), as bins; the pods left (none when rounded up) go
 * to the exact plan when they are few, else to the greedy planner. */
static int round_plan(lp *L, bool ceil_, int64_t *rem, cost_plan *out)
{
    for (size_t j = 0; j < L->m; j++)
        rem[j] = L->items[j].n;
    int rc = NS_OK;
    for (size_t r = 0; rc == NS_OK && r < L->m; r++) {
        if (L->basis[r] >= L->n_cols)
            continue;
        double x = ceil_ ? ceil(L->x[r] - 1e-9) : floor(L->x[r] + 1e-9);
        for (int64_t k = 0; rc == NS_OK && k < (int64_t)x; k++) {
            memcpy(L->fill, L->pat + L->basis[r] * L->m, L->m * sizeof(int64_t));
            rc = take_bin(L, L->fill, rem, out);
        }
    }
    if (rc == NS_OK && (rc = sched_cost_exact(L->s, L->p, L->all_c, L->all_n, L->items, L->m, rem, out)) == 1)
        rc = sched_cost_greedy(L->s, L->p, L->all_c, L->all_n, L->items, L->m, rem, out);
    return rc;
}

static void lp_free(lp *L)
{
    free(L->pat);
    free(L->cand);
    free(L->price);
    free(L->basis);
    free(L->binv);
    free(L->x);
    free(L->pi);
    free(L->d);
    free(L->fill);
    free(L->order);
    free(L->dens);
    free(L->frac);
    free(L->kept);
    free(L->gain);
    free(L->bestfill);
    free(L->tord);
    sched_cost_knap_free(&L->knap);
}

int sched_cost_plan_lp(sched *s, const sched_pool *p, const cost_cand *c, size_t n_c, const cost_item *items,
                       size_t n_items, cost_plan *out)
{
    memset(out, 0, sizeof(*out));
    size_t m = n_items ? n_items : 1;
    lp L = {.s = s, .p = p, .all_c = c, .all_n = n_c, .items = items, .m = n_items, .knap_left = 0};
    cost_cand *priced = malloc((n_c ? n_c : 1) * sizeof(*priced));
    L.c = priced;
    for (size_t j = 0; j < n_items; j++)
        L.knap_left += (size_t)items[j].n * LP_KNAP_PER_POD;
    L.basis = malloc(m * sizeof(size_t));
    L.binv = malloc(m * m * sizeof(double));
    L.x = malloc(m * sizeof(double));
    L.pi = malloc(m * sizeof(double));
    L.d = malloc(m * sizeof(double));
    L.fill = malloc(m * sizeof(int64_t));
    L.order = malloc(m * sizeof(size_t));
    L.dens = malloc(m * sizeof(double));
    L.kept = malloc(LP_NEW_COLUMNS * m * sizeof(int64_t));
    L.frac = malloc((n_c ? n_c : 1) * m * 3 * sizeof(double));
    L.gain = malloc((n_c ? n_c : 1) * sizeof(double));
    L.bestfill = malloc((n_c ? n_c : 1) * m * sizeof(int64_t));
    L.tord = malloc((n_c ? n_c : 1) * sizeof(size_t));
    int64_t *rem = malloc(m * sizeof(int64_t));
    int rc = L.basis && L.binv && L.x && L.pi && L.d && L.fill && L.order && L.dens && L.kept && L.frac && L.gain &&
                     L.bestfill && L.tord && rem && priced
                 ? sched_vec_init(s, &L.used)
                 : NS_FAIL(NS_ERR_INTERNAL, "cost packing: out of memory for an LP of %zu pod groups", n_items);
    if (rc == NS_OK)
        rc = sched_cost_undominated(s, p->alloc, c, n_c, items, n_items, priced, &L.n_c);
    if (rc == NS_OK)
        rc = sched_cost_knap_init(&L.knap, s, items, n_items);
    if (rc == NS_OK && n_items > 0) {
        fractions(&L);
        rc = start_basis(&L);
    }
    for (int round = 0; rc == NS_OK && n_items > 0 && round < LP_MAX_ROUNDS; round++) {
        simplex(&L);
        duals(&L);
        int added = price_columns(&L);
        if (added <= 0) {
            rc = added;
            break;
        }
    }
    cost_plan up = {0};
    if (rc == NS_OK && n_items > 0)
        rc = round_plan(&L, false, rem, out);
    if (rc == NS_OK && n_items > 0)
        rc = round_plan(&L, true, rem, &up);
    if (rc == NS_OK && up.price < out->price) {
        cost_plan t = *out;
        *out = up;
        up = t;
    }
    sched_cost_plan_free(&up);
    if (rc != NS_OK)
        sched_cost_plan_free(out);
    free(rem);
    free(priced);
    lp_free(&L);
    return rc == 1 ? NS_OK : rc;
}
