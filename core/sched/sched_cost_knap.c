/*
 * Cost packing's pricing problem for the LP plan (sched_cost_lp.c): the fill of one candidate type whose pods are
 * worth most at the LP's dual prices, a bounded knapsack in every resource dimension, by depth-first branch and
 * bound. Items are tried densest first, each count from the most that fits down to none; a node is cut when its value
 * plus the bound of what is left cannot beat the best fill so far. The bound is the least, over the dimensions, of
 * that dimension's fractional knapsack (Dantzig's bound: the items by value per request of that dimension, the last
 * one in part), each valid because it drops the other dimensions; rows that mix two dimensions are bounded the same
 * way. When the item branched on is the densest of those
 * left in every dimension, a count that is cut means every smaller count is (a pod less frees room the bound fills with
 * no more value than that pod's), so the search stops there instead of visiting each. The densest-first fill alone
 * misses the patterns that mix shapes well, and the LP then stops far above its optimum (1.2x on Alibaba Cloud's
 * catalog at 1k pods).
 */
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "sched/sched_cost.h"

/* The bound's rows: each dimension, and per pair of dimensions KNAP_MIXES mixes of the two. */
#define KNAP_MIXES 3
static size_t n_rows(size_t n_dims)
{
    return n_dims + KNAP_MIXES * n_dims * (n_dims - 1) / 2;
}

int sched_cost_knap_init(cost_knap *K, sched *s, const cost_item *items, size_t m)
{
    memset(K, 0, sizeof(*K));
    K->s = s;
    K->items = items;
    K->m = m;
    size_t n = m ? m : 1;
    K->act = malloc(n * sizeof(size_t));
    size_t rows = n_rows(s->n_dims);
    K->dims = malloc(s->n_dims * sizeof(size_t));
    K->coef = malloc(rows * s->n_dims * sizeof(double));
    K->w = malloc(rows * n * sizeof(double));
    K->dord = malloc(rows * n * sizeof(size_t));
    K->room = malloc(s->n_dims * sizeof(int64_t));
    K->zero = calloc(s->n_dims, sizeof(int64_t));
    K->cur = malloc(n * sizeof(int64_t));
    K->key = malloc(n * sizeof(double));
    K->mono = malloc(n * sizeof(bool));
    K->twin = malloc(n * sizeof(size_t));
    K->earlier = malloc(COST_KNAP_EARLIER * n * sizeof(int64_t));
    if (!K->earlier || !K->act || !K->dims || !K->coef || !K->w || !K->dord || !K->room || !K->zero || !K->cur || !K->key || !K->mono || !K->twin) {
        sched_cost_knap_free(K);
        return NS_FAIL(NS_ERR_INTERNAL, "cost packing: out of memory for the pricing of %zu pod groups", m);
    }
    return NS_OK;
}

void sched_cost_knap_free(cost_knap *K)
{
    free(K->act);
    free(K->dims);
    free(K->coef);
    free(K->w);
    free(K->dord);
    free(K->room);
    free(K->zero);
    free(K->cur);
    free(K->key);
    free(K->mono);
    free(K->twin);
    free(K->earlier);
    memset(K, 0, sizeof(*K));
}

static int64_t req_of(const cost_knap *K, size_t pos, size_t d)
{
    return K->items[K->act[pos]].g->req.v[d];
}

static bool same_req(const cost_knap *K, size_t p, size_t q)
{
    for (size_t d = 0; d < K->s->n_dims; d++)
        if (req_of(K, p, d) != req_of(K, q, d))
            return false;
    return true;
}

/* The least over rows of the fractional knapsack of positions >= from in the room left. */
static double bound(const cost_knap *K, size_t from)
{
    double best = -1;
    for (size_t e = 0; e < K->n_d; e++) {
        const double *coef = K->coef + e * K->s->n_dims;
        double room = 0, b = 0;
        for (size_t d = 0; d < K->s->n_dims; d++)
            room += coef[d] * (double)K->room[d];
        for (size_t t = 0; t < K->n_act; t++) {
            size_t pos = K->dord[e * K->n_act + t];
            if (pos < from)
                continue;
            double r = K->w[e * K->n_act + pos], cap = (double)K->items[K->act[pos]].n,
                   v = K->value[K->act[pos]];
            if (r * cap <= room) {
                b += cap * v;
                room -= r * cap;
            } else {
                b += room / r * v;
                break;
            }
        }
        if (best < 0 || b < best)
            best = b;
    }
    return best < 0 ? 0 : best;
}

/* best becomes the fill k (a count per position of act) worth v; the fill it replaces, when the search found it, goes
 * first among the earlier ones. */
static void new_best(cost_knap *K, const int64_t *k, double v)
{
    if (K->found) {
        size_t n = K->n_earlier < COST_KNAP_EARLIER ? K->n_earlier + 1 : COST_KNAP_EARLIER;
        memmove(K->earlier + K->m, K->earlier, (n - 1) * K->m * sizeof(int64_t));
        memmove(K->earlier_v + 1, K->earlier_v, (n - 1) * sizeof(double));
        memcpy(K->earlier, K->best, K->m * sizeof(int64_t));
        K->earlier_v[0] = K->best_v;
        K->n_earlier = n;
    }
    K->found = true;
    K->best_v = v;
    memset(K->best, 0, K->m * sizeof(int64_t));
    for (size_t p = 0; p < K->n_act; p++)
        K->best[K->act[p]] = k[p];
}

const int64_t *sched_cost_knap_earlier(const cost_knap *K, size_t i, double *v)
{
    if (i >= K->n_earlier)
        return NULL;
    *v = K->earlier_v[i];
    return K->earlier + i * K->m;
}

/* checked: the caller found v + bound(K, i) above the best fill already. */
static void dfs(cost_knap *K, size_t i, double v, bool checked)
{
    if (K->nodes++ >= K->max_nodes) {
        K->cut = true;
        return;
    }
    if (i == K->n_act) {
        if (v > K->best_v)
            new_best(K, K->cur, v);
        return;
    }
    if (!checked && v + bound(K, i) <= K->best_v * (1 + 1e-12))
        return;
    const sched_vec *req = &K->items[K->act[i]].g->req;
    sched_vec room = {K->room}, none = {K->zero}; /* sched_fit_count measures room - used */
    int64_t k = sched_fit_count(K->s, &room, &none, req, K->items[K->act[i]].n);
    /* A pod of this item could move to its twin (same requests, worth no less) while the twin is below its count: the
     * fill with the move is worth at least as much, so only the fills with the twin full take any of this one. */
    size_t tw = K->twin[i];
    if (k < 0 || (tw != SIZE_MAX && K->cur[tw] < K->items[K->act[tw]].n))
        k = 0;
    for (size_t d = 0; d < K->s->n_dims; d++)
        K->room[d] -= k * req->v[d];
    double val = K->value[K->act[i]];
    for (;; k--) {
        K->cur[i] = k;
        double cv = v + (double)k * val;
        /* When this item is the densest left in every bounded dimension, one pod less of it frees room the bound can
         * fill with no more value than the pod's: once a count is cut, every smaller count is. */
        if (K->mono[i] && cv + bound(K, i + 1) <= K->best_v * (1 + 1e-12))
            break;
        dfs(K, i + 1, cv, K->mono[i]);
        if (K->cut || k == 0)
            break;
        for (size_t d = 0; d < K->s->n_dims; d++)
            K->room[d] += req->v[d];
    }
    for (size_t d = 0; d < K->s->n_dims; d++)
        K->room[d] += k * req->v[d];
    K->cur[i] = 0;
}

static int64_t gcd(int64_t a, int64_t b)
{
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Sorts positions pos[0..n) by key, largest first (n is a class's pod groups: a few dozen at most). */
static void sort_desc(size_t *pos, size_t n, const double *key)
{
    for (size_t i = 1; i < n; i++)
        for (size_t k = i; k > 0 && key[pos[k]] > key[pos[k - 1]]; k--) {
            size_t t = pos[k];
            pos[k] = pos[k - 1];
            pos[k - 1] = t;
        }
}

static void add_row(cost_knap *K, const double *value)
{
    const double *coef = K->coef + K->n_d * K->s->n_dims;
    double *w = K->w + K->n_d * K->n_act;
    size_t *dord = K->dord + K->n_d * K->n_act;
    for (size_t p = 0; p < K->n_act; p++) {
        w[p] = 0;
        for (size_t d = 0; d < K->s->n_dims; d++)
            w[p] += coef[d] * (double)req_of(K, p, d);
        K->key[p] = w[p] > 0 ? value[K->act[p]] / w[p] : 1e300;
        dord[p] = p;
    }
    sort_desc(dord, K->n_act, K->key);
    K->n_d++;
}

/* The largest grid of cpu by memory (in units of each one's gcd) the relaxation below walks: 1.5 MB of scratch. */
#define KNAP_DP_CELLS 65536
/* A coarse grid (below) takes at most half the budget left and 4096 cells: larger ones cost Alibaba and Azure at 10k
 * pods the columns the budget bought elsewhere (cost_bench). */
#define KNAP_COARSE_CELLS 4096

static bool fill_fits(const cost_knap *K, const int64_t *k)
{
    for (size_t d = 0; d < K->s->n_dims; d++) {
        int64_t used = 0;
        for (size_t p = 0; p < K->n_act; p++)
            used += k[p] * req_of(K, p, d);
        if (used > K->room[d])
            return false;
    }
    for (size_t p = 0; p < K->n_act; p++)
        if (k[p] > K->items[K->act[p]].n)
            return false;
    return true;
}

/* The room the rounding (and the clipping to the counts) left in k filled with more of each item, in the search's
 * order (densest first), left n_dims of scratch; the fill's value. */
static double top_up(const cost_knap *K, int64_t *k, int64_t *left)
{
    size_t nd = K->s->n_dims;
    for (size_t d = 0; d < nd; d++) {
        left[d] = K->room[d];
        for (size_t p = 0; p < K->n_act; p++)
            left[d] -= k[p] * req_of(K, p, d);
    }
    double v = 0;
    for (size_t p = 0; p < K->n_act; p++) {
        int64_t more = K->items[K->act[p]].n - k[p];
        for (size_t d = 0; d < nd; d++)
            if (req_of(K, p, d) > 0)
                more = left[d] < 0 ? 0 : (left[d] / req_of(K, p, d) < more ? left[d] / req_of(K, p, d) : more);
        more = more > 0 ? more : 0;
        k[p] += more;
        for (size_t d = 0; d < nd; d++)
            left[d] -= more * req_of(K, p, d);
        v += (double)k[p] * K->value[K->act[p]];
    }
    return v;
}

/* Units of uc by um (multiples of the gcds gc and gm) for a grid of at most `cells`: the dimension with more units
 * is coarsened first, so the grid keeps the two in proportion. */
static void coarse_units(const cost_knap *K, int64_t gc, int64_t gm, size_t cells, int64_t *uc, int64_t *um)
{
    int64_t fc = 1, fm = 1;
    for (;;) {
        int64_t nc = K->room[SCHED_CPU] / (gc * fc), nm = K->room[SCHED_MEM] / (gm * fm);
        if (nc < (int64_t)cells && nm < (int64_t)cells && (size_t)(nc + 1) * (size_t)(nm + 1) <= cells)
            break;
        if (nc >= nm)
            fc = fc * 5 / 4 + 1;
        else
            fm = fm * 5 / 4 + 1;
    }
    *uc = gc * fc;
    *um = gm * fm;
}

/* The best fill in cpu and memory alone, any number of each item, by dynamic programming over the grid of the two
 * (f[c][m], the most value in c cpu and m memory cells). In units of the gcds (the exact grid) it drops the other
 * dimensions and the counts, so nothing beats it: when it is no more than the best fill so far, or its fill holds in
 * every dimension and count, the search is settled. Where many shapes are priced alike (the duals of one binding
 * resource), the bounds differ from the optimum by little everywhere and the branch and bound cannot cut. When that
 * grid is too large (a 64-cpu 256 GiB type), a coarse one rounds each request up and the room down: every fill it
 * finds holds in cpu and memory, so it is a column to try (clipped to the counts), never a bound. */
double sched_cost_knap_grid(cost_knap *K, size_t max_nodes, bool *complete)
{
    K->nodes = 0;
    *complete = !K->cut;
    int64_t gc = 0, gm = 0;
    for (size_t p = 0; p < K->n_act; p++) {
        gc = gcd(gc, req_of(K, p, SCHED_CPU));
        gm = gcd(gm, req_of(K, p, SCHED_MEM));
        if (req_of(K, p, SCHED_CPU) == 0 && req_of(K, p, SCHED_MEM) == 0)
            return K->best_v; /* unbounded in the grid */
    }
    if (!K->cut || gc == 0 || gm == 0 || K->room[SCHED_CPU] < 0 || K->room[SCHED_MEM] < 0)
        return K->best_v;
    /* A cell weighs each item once, a node each row's items (12 rows for cpu, memory and pods): 64 item steps a node
     * keeps 1k pods within 50 ms per 10k pods (cost_bench) and leaves 10k pods the budget for the grid. */
    size_t afford = max_nodes < 1 ? 0 : (max_nodes - 1) * 64 / K->n_act, limit = afford;
    limit = limit > KNAP_DP_CELLS ? KNAP_DP_CELLS : limit;
    int64_t xc = K->room[SCHED_CPU] / gc, xm = K->room[SCHED_MEM] / gm, cu = gc, mu = gm;
    bool in_cap = xc < KNAP_DP_CELLS && xm < KNAP_DP_CELLS && (size_t)(xc + 1) * (size_t)(xm + 1) <= KNAP_DP_CELLS;
    bool exact = in_cap && (size_t)(xc + 1) * (size_t)(xm + 1) <= limit;
    if (!exact) {
        /* The exact grid (when under the cap) waits for a budget that affords it. A coarse one is a column generator
         * for a search that found none: of at least 1024 cells, to tell the requests apart. */
        if (in_cap || afford / 2 < 1024 || K->found)
            return K->best_v;
        coarse_units(K, gc, gm, afford / 2 > KNAP_COARSE_CELLS ? KNAP_COARSE_CELLS : afford / 2, &cu, &mu);
    }
    int64_t uc = K->room[SCHED_CPU] / cu, um = K->room[SCHED_MEM] / mu;
    size_t w = (size_t)um + 1, cells = ((size_t)uc + 1) * w, cost = 1 + cells * K->n_act / 64;
    double *f = malloc(cells * sizeof(double));
    int32_t *pick = malloc(cells * sizeof(int32_t)); /* the item last added, -1 a cpu unit left empty, -2 memory */
    int64_t *k = calloc(K->n_act, sizeof(int64_t)), *left = malloc(K->s->n_dims * sizeof(int64_t));
    if (!f || !pick || !k || !left)
        goto out;
    K->nodes += cost;
#define CELLS_OF(p, d, u) ((size_t)((req_of(K, p, d) + (u)-1) / (u)))
    for (size_t c = 0; c <= (size_t)uc; c++)
        for (size_t m = 0; m <= (size_t)um; m++) {
            double b = 0;
            int32_t from = -1;
            if (c > 0)
                b = f[(c - 1) * w + m];
            if (m > 0 && f[c * w + m - 1] > b)
                b = f[c * w + m - 1], from = -2;
            for (size_t p = 0; p < K->n_act; p++) {
                size_t rc = CELLS_OF(p, SCHED_CPU, cu), rm = CELLS_OF(p, SCHED_MEM, mu);
                if (rc > c || rm > m)
                    continue;
                double v = f[(c - rc) * w + m - rm] + K->value[K->act[p]];
                if (v > b)
                    b = v, from = (int32_t)p;
            }
            f[c * w + m] = b;
            pick[c * w + m] = from;
        }
    double top = f[cells - 1];
    if (top <= K->best_v * (1 + 1e-12)) {
        K->cut = K->cut && !exact;
        goto out;
    }
    for (size_t c = (size_t)uc, m = (size_t)um; f[c * w + m] > 0;) {
        int32_t from = pick[c * w + m];
        if (from == -1)
            c--;
        else if (from == -2)
            m--;
        else {
            k[from]++;
            c -= CELLS_OF((size_t)from, SCHED_CPU, cu);
            m -= CELLS_OF((size_t)from, SCHED_MEM, mu);
        }
    }
#undef CELLS_OF
    if (exact && fill_fits(K, k)) {
        new_best(K, k, top);
        K->cut = false;
        goto out;
    }
    /* Clipped to the counts the fill still holds in cpu and memory (and in the rest when fill_fits says so): a fill
     * to keep when it is worth more, though it settles nothing. */
    for (size_t p = 0; p < K->n_act; p++)
        k[p] = k[p] < K->items[K->act[p]].n ? k[p] : K->items[K->act[p]].n;
    double v = top_up(K, k, left);
    if (v > K->best_v * (1 + 1e-12) && fill_fits(K, k))
        new_best(K, k, v);
out:
    free(f);
    free(pick);
    free(k);
    free(left);
    *complete = !K->cut;
    return K->best_v;
}

double sched_cost_knapsack(cost_knap *K, const sched_vec *alloc, const double *value, const size_t *order,
                           int64_t *best, double best_v, size_t max_nodes, bool *complete)
{
    const sched *s = K->s;
    K->value = value;
    K->best = best;
    K->best_v = best_v;
    K->max_nodes = max_nodes;
    K->nodes = 0;
    K->cut = false;
    K->found = false;
    K->n_earlier = 0;
    K->n_act = 0;
    for (size_t i = 0; i < K->m; i++)
        if (value[order[i]] > 0 && K->items[order[i]].n > 0)
            K->act[K->n_act++] = order[i];
    /* Pod groups of the same requests (two apps of one shape) make the search symmetric: it would visit every split of
     * a count between them. They are put in order of value, and a later one takes pods only once the earlier is full
     * (dfs). The swaps keep the positions each dimension's order gives, as twins are as dense as their values. */
    for (size_t p = 0; p < K->n_act; p++) {
        K->twin[p] = SIZE_MAX;
        for (size_t q = 0; q < p; q++) {
            if (!same_req(K, q, p))
                continue;
            if (value[K->act[q]] < value[K->act[p]]) {
                size_t t = K->act[q];
                K->act[q] = K->act[p];
                K->act[p] = t;
            }
            K->twin[p] = q;
        }
    }
    memcpy(K->room, alloc->v, s->n_dims * sizeof(int64_t));
    /* Every fill uses a multiple of the requests' gcd in a dimension: the room past the last multiple is never used, and
     * leaving it out tightens the fractional bound (the same fills, fewer nodes). */
    size_t *used = K->dims, n_used = 0;
    for (size_t d = 0; d < s->n_dims; d++) {
        int64_t g = 0;
        for (size_t p = 0; p < K->n_act; p++)
            g = gcd(g, req_of(K, p, d));
        if (g == 0)
            continue;
        if (g > 1 && K->room[d] > 0)
            K->room[d] -= K->room[d] % g;
        if (K->room[d] > 0)
            used[n_used++] = d;
    }
    /* Rows: each dimension some item requests, then mixes of two (each scaled to its room): a fill fits every mix, and
     * a mix's fractional knapsack can bound far tighter than either dimension's alone when shapes complement. */
    K->n_d = 0;
    for (size_t a = 0; a < n_used; a++)
        for (size_t b = a; b < n_used; b++)
            for (int x = 1; x <= (a == b ? 1 : KNAP_MIXES); x++) {
                double *coef = K->coef + K->n_d * s->n_dims, l = a == b ? 1 : (double)x / (KNAP_MIXES + 1);
                memset(coef, 0, s->n_dims * sizeof(double));
                coef[used[a]] += l / (double)K->room[used[a]];
                if (a != b)
                    coef[used[b]] += (1 - l) / (double)K->room[used[b]];
                add_row(K, value);
            }
    /* mono[p]: position p comes before every later position in each dimension's order (densest of those left) */
    for (size_t p = 0; p < K->n_act; p++)
        K->mono[p] = true;
    for (size_t e = 0; e < K->n_d; e++) {
        size_t seen = 0; /* one past the largest position met so far in this order */
        for (size_t t = 0; t < K->n_act; t++) {
            size_t p = K->dord[e * K->n_act + t];
            K->mono[p] = K->mono[p] && seen <= p;
            seen = p + 1 > seen ? p + 1 : seen;
        }
    }
    dfs(K, 0, 0, false);
    *complete = !K->cut;
    return K->best_v;
}
