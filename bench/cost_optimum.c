#include "cost_optimum.h"

#include <glpk.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int glpk_quiet(void *info, const char *s)
{
    (void)info;
    (void)s;
    return 1;
}

/* A type no cheaper and no larger in any dimension than another is never needed (ties keep the first). */
static bool dominated(const co_type *t, size_t n, size_t i)
{
    for (size_t j = 0; j < n; j++) {
        if (j == i)
            continue;
        const co_type *a = &t[j], *b = &t[i];
        bool ge = a->cpu >= b->cpu && a->mem >= b->mem && a->pods >= b->pods && a->price <= b->price;
        bool eq = a->cpu == b->cpu && a->mem == b->mem && a->pods == b->pods && a->price == b->price;
        if (ge && (!eq || j < i))
            return true;
    }
    return false;
}

typedef struct patterns {
    int32_t *a; /* n x n_groups */
    double *price;
    size_t n, cap, n_groups, max;
} patterns;

static int pat_push(patterns *p, const int32_t *a, double price)
{
    if (p->n == p->max)
        return 1;
    if (p->n == p->cap) {
        size_t nc = p->cap ? p->cap * 2 : 1024;
        int32_t *na = realloc(p->a, nc * p->n_groups * sizeof(int32_t));
        double *np = na ? realloc(p->price, nc * sizeof(double)) : NULL;
        if (na)
            p->a = na;
        if (!np) {
            fprintf(stderr, "cost_bench: exact optimum: out of memory for %zu patterns\n", nc);
            return -1;
        }
        p->price = np;
        p->cap = nc;
    }
    memcpy(p->a + p->n * p->n_groups, a, p->n_groups * sizeof(int32_t));
    p->price[p->n++] = price;
    return 0;
}

typedef struct dfs {
    const co_type *t;
    const co_group *g;
    size_t ng;
    int32_t *a;
    patterns *out;
} dfs;

static bool fits_one_more(const dfs *d, size_t g, int64_t cpu, int64_t mem, int64_t pods)
{
    return (int64_t)d->a[g] < d->g[g].n && cpu + d->g[g].cpu <= d->t->cpu && mem + d->g[g].mem <= d->t->mem &&
           pods + 1 <= d->t->pods;
}

/* Every count of group g and after, keeping the patterns to which no pod can be added. */
static int enumerate(dfs *d, size_t g, int64_t cpu, int64_t mem, int64_t pods)
{
    if (g == d->ng) {
        for (size_t i = 0; i < d->ng; i++)
            if (fits_one_more(d, i, cpu, mem, pods))
                return 0;
        return pods > 0 ? pat_push(d->out, d->a, d->t->price) : 0;
    }
    int rc = 0;
    for (d->a[g] = 0;; d->a[g]++) {
        rc = enumerate(d, g + 1, cpu, mem, pods);
        if (rc != 0 || !fits_one_more(d, g, cpu, mem, pods))
            break;
        cpu += d->g[g].cpu;
        mem += d->g[g].mem;
        pods++;
    }
    d->a[g] = 0;
    return rc;
}

/* min sum price_p z_p, sum_p a_gp z_p >= n_g, z integer (mip) or continuous. */
static glp_prob *master(const patterns *p, const co_group *groups, size_t ng, bool mip)
{
    glp_prob *lp = glp_create_prob();
    glp_set_obj_dir(lp, GLP_MIN);
    glp_add_rows(lp, (int)ng);
    for (size_t g = 0; g < ng; g++)
        glp_set_row_bnds(lp, (int)g + 1, GLP_LO, (double)groups[g].n, 0);
    int *idx = malloc((ng + 1) * sizeof(int));
    double *val = malloc((ng + 1) * sizeof(double));
    if (!idx || !val) {
        free(idx);
        free(val);
        glp_delete_prob(lp);
        return NULL;
    }
    glp_add_cols(lp, (int)p->n);
    for (size_t j = 0; j < p->n; j++) {
        int k = 0;
        for (size_t g = 0; g < ng; g++)
            if (p->a[j * ng + g]) {
                idx[++k] = (int)g + 1;
                val[k] = p->a[j * ng + g];
            }
        glp_set_mat_col(lp, (int)j + 1, k, idx, val);
        glp_set_col_bnds(lp, (int)j + 1, GLP_LO, 0, 0);
        glp_set_obj_coef(lp, (int)j + 1, p->price[j]);
        if (mip)
            glp_set_col_kind(lp, (int)j + 1, GLP_IV);
    }
    free(idx);
    free(val);
    return lp;
}

/* Every maximal pattern of every type no other type dominates, then GLPK on the master: the integer program (mip) or
 * its LP relaxation. Return codes as co_exact's. */
static int solve_all_patterns(const co_type *types, size_t n_types, const co_group *groups, size_t n_groups,
                              size_t max_patterns, double time_limit_s, bool mip, double *value)
{
    glp_term_hook(glpk_quiet, NULL);
    patterns p = {.n_groups = n_groups, .max = max_patterns};
    int32_t *a = calloc(n_groups ? n_groups : 1, sizeof(int32_t));
    int rc = a ? 0 : -1;
    for (size_t t = 0; rc == 0 && t < n_types; t++) {
        if (dominated(types, n_types, t))
            continue;
        dfs d = {&types[t], groups, n_groups, a, &p};
        rc = enumerate(&d, 0, 0, 0, 0);
    }
    free(a);
    glp_prob *lp = rc == 0 ? master(&p, groups, n_groups, mip) : NULL;
    if (rc == 0 && !lp)
        rc = -1;
    if (lp && mip) {
        glp_iocp parm;
        glp_init_iocp(&parm);
        parm.presolve = GLP_ON;
        parm.msg_lev = GLP_MSG_OFF;
        parm.tm_lim = (int)(time_limit_s * 1000);
        int r = glp_intopt(lp, &parm);
        if (r == 0 && glp_mip_status(lp) == GLP_OPT)
            *value = glp_mip_obj_val(lp);
        else if (r == 0 || r == GLP_ETMLIM)
            rc = 1;
        else {
            fprintf(stderr, "cost_bench: exact optimum: glp_intopt failed with code %d on %zu patterns\n", r, p.n);
            rc = -1;
        }
    } else if (lp) {
        glp_smcp parm;
        glp_init_smcp(&parm);
        parm.msg_lev = GLP_MSG_OFF;
        parm.tm_lim = (int)(time_limit_s * 1000);
        int r = glp_simplex(lp, &parm);
        if (r == 0 && glp_get_status(lp) == GLP_OPT)
            *value = glp_get_obj_val(lp);
        else if (r == GLP_ETMLIM)
            rc = 1;
        else {
            fprintf(stderr, "cost_bench: exact optimum: the LP relaxation over %zu patterns did not solve (code %d)\n",
                    p.n, r);
            rc = -1;
        }
    }
    if (lp)
        glp_delete_prob(lp);
    free(p.a);
    free(p.price);
    return rc;
}

int co_exact(const co_type *types, size_t n_types, const co_group *groups, size_t n_groups, size_t max_patterns,
             double time_limit_s, double *cost)
{
    return solve_all_patterns(types, n_types, groups, n_groups, max_patterns, time_limit_s, true, cost);
}

int co_exact_lp(const co_type *types, size_t n_types, const co_group *groups, size_t n_groups, size_t max_patterns,
                double time_limit_s, double *value)
{
    return solve_all_patterns(types, n_types, groups, n_groups, max_patterns, time_limit_s, false, value);
}

/* Relative gap GLPK may stop at when pricing: the bound uses the value times (1 + gap), so it stays valid. */
#define PRICING_GAP 1e-4
/* GLPK's time per pricing knapsack; past it the best open node's bound stands in for the maximum. A round that finds
 * no column but cannot prove convergence (some knapsack ran out of time) is repeated with 4 times more, up to the
 * most. */
#define PRICING_MS 300
#define PRICING_MS_MOST 20000
/* Converged: the bound is within CONVERGED_GAP of the master's value, an upper bound of the LP optimum. The generation
 * goes on towards STOP_GAP while it finds columns; types whose knapsack relaxation already prices under
 * (1 + STOP_GAP) times their price need no integer program for it. */
#define CONVERGED_GAP 2e-3
#define STOP_GAP 2e-4
/* Integer programs stop for the round once this many columns are found: the duals move after each master solve, so
 * pricing every type against stale duals mostly finds columns the next round no longer wants. */
#define COLUMNS_PER_ROUND 8

static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Scaled dominance, for the LP bound only (an integer solution may need a small node where the larger one costs
 * more): when k copies of any pattern of B form a pattern of A that A's price covers, every B column at level z is
 * replaced by that A column at level z/k, covering the same pods for no more. Three points keep it exact:
 * - the columns are capped at the group sizes (a_g <= n_g, which makes the bound stronger than the uncapped LP), so
 *   k copies of a B pattern must stay within n_g: k times the most pods of g that fit on B alone is at most n_g
 *   (else, with few pods, the k-fold column is capped and covers less; k = 1 needs no such condition);
 * - pod capacity does not grow with size (ENI limits), so the pods condition uses the most pods B can really hold:
 *   no pod requests less than the smallest group's cpu and memory;
 * - the price test is exact in floating point: no tolerance to account for.
 * Applied one type at a time against the types still in use, so two types dominating each other keep one. */
static bool lp_dominates(const co_type *A, const co_type *B, const co_group *groups, size_t ng)
{
    int64_t min_cpu = INT64_MAX, min_mem = INT64_MAX, kmax = INT64_MAX, kcap = INT64_MAX;
    for (size_t g = 0; g < ng; g++) {
        int64_t fit = B->pods;
        min_cpu = groups[g].cpu < min_cpu ? groups[g].cpu : min_cpu;
        min_mem = groups[g].mem < min_mem ? groups[g].mem : min_mem;
        if (groups[g].cpu > 0 && B->cpu / groups[g].cpu < fit)
            fit = B->cpu / groups[g].cpu;
        if (groups[g].mem > 0 && B->mem / groups[g].mem < fit)
            fit = B->mem / groups[g].mem;
        if (fit > 0 && groups[g].n / fit < kcap)
            kcap = groups[g].n / fit;
    }
    int64_t pods_b = B->pods;
    if (min_cpu > 0 && min_cpu < INT64_MAX && B->cpu / min_cpu < pods_b)
        pods_b = B->cpu / min_cpu;
    if (min_mem > 0 && min_mem < INT64_MAX && B->mem / min_mem < pods_b)
        pods_b = B->mem / min_mem;
    if (B->cpu > 0)
        kmax = A->cpu / B->cpu;
    if (B->mem > 0 && A->mem / B->mem < kmax)
        kmax = A->mem / B->mem;
    if (pods_b > 0 && A->pods / pods_b < kmax)
        kmax = A->pods / pods_b;
    if (kmax < 1 || !(B->price > 0))
        return false;
    double kp = ceil(A->price / B->price);
    int64_t k = kp < 1 ? 1 : kp > 1e9 ? INT64_MAX : (int64_t)kp;
    if (k < INT64_MAX && A->price > (double)k * B->price) /* ceil's rounding */
        k++;
    return k <= kmax && (k == 1 || k <= kcap);
}

/* The column generation's state: the master LP, kept between rounds so GLPK's simplex starts from the last basis. */
typedef struct cg {
    const co_type *types;
    size_t nt;
    const co_group *groups;
    size_t ng;
    bool *use;
    glp_prob *lp;
    int32_t *a;
    double *pi, *ratio; /* duals; per type, its knapsack relaxation's value over its price */
    size_t *by_ratio, order[64];
    co_lp_stats st;
} cg;

static void add_column(cg *c, const int32_t *a, double price)
{
    int idx[65], k = 0;
    double val[65];
    for (size_t g = 0; g < c->ng; g++)
        if (a[g]) {
            idx[++k] = (int)g + 1;
            val[k] = a[g];
        }
    int j = glp_add_cols(c->lp, 1);
    glp_set_mat_col(c->lp, j, k, idx, val);
    glp_set_col_bnds(c->lp, j, GLP_LO, 0, 0);
    glp_set_obj_coef(c->lp, j, price);
    c->st.columns++;
}

/* The starting columns: each type filled with one group only, as many pods as fit. */
static void single_group_columns(cg *c)
{
    for (size_t t = 0; t < c->nt; t++)
        for (size_t g = 0; c->use[t] && g < c->ng; g++) {
            const co_type *ty = &c->types[t];
            int64_t k = c->groups[g].n, cap = ty->pods;
            k = k < cap ? k : cap;
            if (c->groups[g].cpu > 0 && ty->cpu / c->groups[g].cpu < k)
                k = ty->cpu / c->groups[g].cpu;
            if (c->groups[g].mem > 0 && ty->mem / c->groups[g].mem < k)
                k = ty->mem / c->groups[g].mem;
            if (k <= 0)
                continue;
            memset(c->a, 0, c->ng * sizeof(int32_t));
            c->a[g] = (int32_t)k;
            add_column(c, c->a, ty->price);
        }
}

/* A quick column for type t: groups by dual value per dominant share of the type, each filled as far as it fits.
 * Only speeds the search up: the bound comes from the exact pricing. */
static double greedy_pattern(const co_type *t, const co_group *groups, size_t ng, const double *pi, int32_t *a,
                             size_t *order)
{
    double dens[64];
    for (size_t g = 0; g < ng; g++) {
        double share = fmax(fmax((double)groups[g].cpu / (double)t->cpu, (double)groups[g].mem / (double)t->mem),
                            1.0 / (double)t->pods);
        dens[g] = pi[g] / share;
        order[g] = g;
    }
    for (size_t i = 1; i < ng; i++)
        for (size_t j = i; j > 0 && dens[order[j]] > dens[order[j - 1]]; j--) {
            size_t x = order[j];
            order[j] = order[j - 1];
            order[j - 1] = x;
        }
    int64_t cpu = 0, mem = 0, pods = 0;
    double v = 0;
    memset(a, 0, ng * sizeof(int32_t));
    for (size_t i = 0; i < ng; i++) {
        const co_group *g = &groups[order[i]];
        if (pi[order[i]] <= 0)
            break;
        int64_t k = g->n < t->pods - pods ? g->n : t->pods - pods;
        if (g->cpu > 0 && (t->cpu - cpu) / g->cpu < k)
            k = (t->cpu - cpu) / g->cpu;
        if (g->mem > 0 && (t->mem - mem) / g->mem < k)
            k = (t->mem - mem) / g->mem;
        if (k <= 0)
            continue;
        a[order[i]] = (int32_t)k;
        cpu += k * g->cpu;
        mem += k * g->mem;
        pods += k;
        v += (double)k * pi[order[i]];
    }
    return v;
}

/* Records the search tree's best bound (it only falls as the search goes on, so any recorded value is an upper bound
 * of the maximum). */
static void tree_bound(glp_tree *tree, void *info)
{
    int node = glp_ios_best_node(tree);
    if (node)
        *(double *)info = fmin(*(double *)info, glp_ios_node_bound(tree, node));
}

/* max sum pi_g a_g over the type's patterns (0 <= a_g <= n_g), as GLPK's LP relaxation (*upper, an upper bound of the
 * integer maximum) and, when mip_ms > 0, its integer program within mip_ms milliseconds: the best pattern found into
 * a, its value into *v and a tighter upper bound into *upper. -1 on a GLPK error. */
static int64_t gcd64(int64_t x, int64_t y)
{
    while (y) {
        int64_t r = x % y;
        x = y;
        y = r;
    }
    return x;
}

/* A capacity rounded down to a multiple of the greatest common divisor of the weights: any sum of the weights is
 * such a multiple, so the integer patterns stay the same, while the LP relaxation (GLPK's bound at every node) no
 * longer counts the remainder no pod can use. Without it the relaxation of a cpu-bound knapsack stays ~0.7% above
 * the integer maximum however long GLPK searches. */
static double usable(int64_t cap, const co_group *groups, size_t ng, bool mem)
{
    int64_t d = 0;
    for (size_t g = 0; g < ng; g++)
        d = gcd64(d, mem ? groups[g].mem : groups[g].cpu);
    return d > 0 ? (double)(cap / d * d) : (double)cap;
}

static int knapsack(const co_type *t, const co_group *groups, size_t ng, const double *pi, int mip_ms, int32_t *a,
                    double *v, double *upper)
{
    glp_prob *kp = glp_create_prob();
    glp_set_obj_dir(kp, GLP_MAX);
    glp_add_rows(kp, 3);
    glp_set_row_bnds(kp, 1, GLP_UP, 0, usable(t->cpu, groups, ng, false));
    glp_set_row_bnds(kp, 2, GLP_UP, 0, usable(t->mem, groups, ng, true) / 1048576.0);
    glp_set_row_bnds(kp, 3, GLP_UP, 0, (double)t->pods);
    glp_add_cols(kp, (int)ng);
    for (size_t g = 0; g < ng; g++) {
        int idx[4] = {0, 1, 2, 3};
        double val[4] = {0, (double)groups[g].cpu, (double)groups[g].mem / 1048576.0, 1};
        glp_set_mat_col(kp, (int)g + 1, 3, idx, val);
        glp_set_col_bnds(kp, (int)g + 1, GLP_DB, 0, (double)groups[g].n);
        glp_set_obj_coef(kp, (int)g + 1, pi[g]);
    }
    glp_smcp sp;
    glp_init_smcp(&sp);
    sp.msg_lev = GLP_MSG_OFF;
    int rc = -1;
    *v = 0;
    if (glp_simplex(kp, &sp) == 0 && glp_get_status(kp) == GLP_OPT) {
        *upper = glp_get_obj_val(kp);
        rc = 0;
    }
    if (rc == 0 && mip_ms > 0) {
        for (size_t g = 0; g < ng; g++)
            glp_set_col_kind(kp, (int)g + 1, GLP_IV);
        glp_iocp parm;
        glp_init_iocp(&parm);
        parm.msg_lev = GLP_MSG_OFF;
        parm.mip_gap = PRICING_GAP;
        parm.mir_cuts = GLP_ON;
        parm.cov_cuts = GLP_ON;
        parm.tm_lim = mip_ms;
        double tree = *upper;
        parm.cb_func = tree_bound;
        parm.cb_info = &tree;
        int r = glp_intopt(kp, &parm), st = glp_mip_status(kp);
        bool found = st == GLP_OPT || st == GLP_FEAS;
        rc = (r == 0 && st == GLP_OPT) || r == GLP_ETMLIM || (r == GLP_EMIPGAP && found) ? 0 : -1;
        if (rc == 0 && found) {
            *v = glp_mip_obj_val(kp);
            for (size_t g = 0; g < ng; g++)
                a[g] = (int32_t)llround(glp_mip_col_val(kp, (int)g + 1));
        }
        if (rc == 0) /* out of time, possibly with no pattern found: the tree's bound still holds */
            *upper = r == 0 ? *v : r == GLP_EMIPGAP ? fmin(*upper, *v * (1 + PRICING_GAP)) : fmin(*upper, tree);
    }
    glp_delete_prob(kp);
    return rc;
}

/* Solves the master LP (from the last basis) into *z and the duals. 0, or -1 on an error. */
static int solve_master(cg *c, double *z)
{
    glp_smcp parm;
    glp_init_smcp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    int r = glp_simplex(c->lp, &parm);
    if (r != 0 || glp_get_status(c->lp) != GLP_OPT) {
        fprintf(stderr, "cost_bench: LP bound: the master LP over %zu columns did not solve (code %d, status %d)\n",
                c->st.columns, r, glp_get_status(c->lp));
        return -1;
    }
    *z = glp_get_obj_val(c->lp);
    for (size_t g = 0; g < c->ng; g++)
        c->pi[g] = fmax(0, glp_get_row_dual(c->lp, (int)g + 1));
    return 0;
}

/* Exact pricing where it can matter. theta, the largest ratio over all types of a pattern's dual value to the type's
 * price, makes pi/theta feasible for the dual of the full LP, so n.pi/theta is a lower bound (Farley's; n.pi = z). Each type's
 * knapsack relaxation bounds its ratio from above; the integer programs run in falling order of that bound, and a
 * type whose relaxation cannot beat the theta already proven (or 1 + STOP_GAP, which the stopping test tolerates
 * anyway) needs none: its true ratio is no larger. Once COLUMNS_PER_ROUND columns are found the rest are
 * skipped and the next type's relaxation stands in for them. *theta set; columns added into *added. */
static int exact_pricing(cg *c, int mip_ms, double *theta, size_t *added)
{
    size_t n = 0;
    double v = 0, upper = 0;
    for (size_t t = 0; t < c->nt; t++) {
        if (!c->use[t])
            continue;
        if (knapsack(&c->types[t], c->groups, c->ng, c->pi, 0, c->a, &v, &upper) < 0) {
            fprintf(stderr, "cost_bench: LP bound: the knapsack relaxation of type %zu did not solve\n", t);
            return -1;
        }
        c->ratio[t] = upper / c->types[t].price;
        size_t j = n++;
        for (; j > 0 && c->ratio[c->by_ratio[j - 1]] < c->ratio[t]; j--)
            c->by_ratio[j] = c->by_ratio[j - 1];
        c->by_ratio[j] = t;
    }
    *theta = 1;
    *added = 0;
    for (size_t i = 0; i < n; i++) {
        size_t t = c->by_ratio[i];
        if (c->ratio[t] <= fmax(*theta, 1 + STOP_GAP)) {
            *theta = fmax(*theta, c->ratio[t]);
            break;
        }
        if (*added >= COLUMNS_PER_ROUND) {
            *theta = fmax(*theta, c->ratio[t]);
            break;
        }
        c->st.mips++;
        if (knapsack(&c->types[t], c->groups, c->ng, c->pi, mip_ms, c->a, &v, &upper) < 0) {
            fprintf(stderr, "cost_bench: LP bound: the pricing knapsack of type %zu did not solve\n", t);
            return -1;
        }
        *theta = fmax(*theta, upper / c->types[t].price);
        if (v > c->types[t].price * (1 + 1e-7)) {
            add_column(c, c->a, c->types[t].price);
            (*added)++;
        }
    }
    return 0;
}

/* Groups of the same pod shape become one group of their total: the LP optimum stays the same (a pattern of the merged
 * group holding c <= n_g + n_h pods splits into integer patterns of g and h whose mix holds c n_g / (n_g + n_h) of g on
 * average, which covers g when the merged group is covered, and the converse is a sum), and the pricing knapsack
 * loses items of equal weight and, at the master's duals, equal value, whose symmetry stalls GLPK's branch and bound.
 * Returns the number of merged groups. */
static size_t merge_shapes(const co_group *groups, size_t ng, co_group *out)
{
    size_t n = 0;
    for (size_t g = 0; g < ng; g++) {
        size_t j = 0;
        while (j < n && (out[j].cpu != groups[g].cpu || out[j].mem != groups[g].mem))
            j++;
        if (j == n)
            out[n++] = (co_group){groups[g].cpu, groups[g].mem, 0};
        out[j].n += groups[g].n;
    }
    return n;
}

int co_lp_bound(const co_type *types, size_t n_types, const co_group *all_groups, size_t n_all_groups,
                double time_limit_s, double *bound, int *converged, co_lp_stats *stats)
{
    glp_term_hook(glpk_quiet, NULL);
    if (n_all_groups > 64) {
        fprintf(stderr, "cost_bench: LP bound: %zu pod groups, more than the 64 it handles\n", n_all_groups);
        return -1;
    }
    co_group groups[64];
    size_t n_groups = merge_shapes(all_groups, n_all_groups, groups);
    double t0 = cpu_s();
    size_t nt1 = n_types ? n_types : 1;
    cg c = {.types = types, .nt = n_types, .groups = groups, .ng = n_groups};
    c.use = malloc(nt1 * sizeof(bool));
    c.a = calloc(n_groups ? n_groups : 1, sizeof(int32_t));
    c.pi = calloc(n_groups ? n_groups : 1, sizeof(double));
    c.ratio = calloc(nt1, sizeof(double));
    c.by_ratio = calloc(nt1, sizeof(size_t));
    int rc = c.use && c.a && c.pi && c.ratio && c.by_ratio ? 0 : -1;
    for (size_t t = 0; rc == 0 && t < n_types; t++)
        c.use[t] = true;
    /* each removal keeps the LP optimum of the types still in use, the later ones included */
    for (size_t t = 0; rc == 0 && t < n_types; t++) {
        for (size_t j = 0; c.use[t] && j < n_types; j++)
            if (j != t && c.use[j] && lp_dominates(&types[j], &types[t], groups, n_groups))
                c.use[t] = false;
        c.st.types_used += c.use[t];
    }
    if (rc == 0) {
        c.lp = glp_create_prob();
        glp_set_obj_dir(c.lp, GLP_MIN);
        glp_add_rows(c.lp, (int)n_groups);
        for (size_t g = 0; g < n_groups; g++)
            glp_set_row_bnds(c.lp, (int)g + 1, GLP_LO, (double)groups[g].n, 0);
        single_group_columns(&c);
    }
    *bound = 0;
    *converged = 0;
    double z = 0;
    int mip_ms = PRICING_MS;
    bool stop = false;
    while (rc == 0 && !stop) {
        c.st.rounds++;
        if (solve_master(&c, &z) < 0) {
            rc = -1;
            break;
        }
        if (cpu_s() - t0 > time_limit_s)
            break;
        size_t added = 0;
        for (size_t t = 0; t < n_types; t++)
            if (c.use[t] && greedy_pattern(&types[t], groups, n_groups, c.pi, c.a, c.order) >
                                types[t].price * (1 + 1e-7)) {
                add_column(&c, c.a, types[t].price);
                added++;
            }
        if (added)
            continue;
        double theta = 1;
        if (exact_pricing(&c, mip_ms, &theta, &added) < 0)
            rc = -1;
        else {
            double dual = 0; /* the duals' objective, which equals z up to GLPK's rounding: it is what pi/theta bounds */
            for (size_t g = 0; g < n_groups; g++)
                dual += (double)groups[g].n * c.pi[g];
            *bound = fmax(*bound, dual / theta);
            *converged = *bound >= z * (1 - CONVERGED_GAP);
            stop = *bound >= z * (1 - STOP_GAP) || (!added && (*converged || (mip_ms *= 4) > PRICING_MS_MOST));
        }
    }
    c.st.master_value = z;
    c.st.cpu_s = cpu_s() - t0;
    if (stats)
        *stats = c.st;
    if (c.lp)
        glp_delete_prob(c.lp);
    free(c.use);
    free(c.a);
    free(c.pi);
    free(c.ratio);
    free(c.by_ratio);
    return rc;
}
