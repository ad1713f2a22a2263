#include "cost_optimum.h"

#include <glpk.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

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

int co_exact(const co_type *types, size_t n_types, const co_group *groups, size_t n_groups, size_t max_patterns,
             double time_limit_s, double *cost)
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
    glp_prob *lp = rc == 0 ? master(&p, groups, n_groups, true) : NULL;
    if (rc == 0 && !lp)
        rc = -1;
    if (lp) {
        glp_iocp parm;
        glp_init_iocp(&parm);
        parm.presolve = GLP_ON;
        parm.msg_lev = GLP_MSG_OFF;
        parm.tm_lim = (int)(time_limit_s * 1000);
        int r = glp_intopt(lp, &parm);
        if (r == 0 && glp_mip_status(lp) == GLP_OPT)
            *cost = glp_mip_obj_val(lp);
        else if (r == 0 || r == GLP_ETMLIM)
            rc = 1;
        else {
            fprintf(stderr, "cost_bench: exact optimum: glp_intopt failed with code %d on %zu patterns\n", r, p.n);
            rc = -1;
        }
        glp_delete_prob(lp);
    }
    free(p.a);
    free(p.price);
    return rc;
}

/* Relative gap GLPK may stop at when pricing: the bound uses the value times (1 + gap), so it stays valid. */
#define PRICING_GAP 2e-3
/* GLPK's time per pricing knapsack; past it the best open node's bound stands in for the maximum. */
#define PRICING_MS 300

/* Records the search tree's best bound (it only falls as the search goes on, so any recorded value is an upper bound
 * of the maximum). */
static void tree_bound(glp_tree *tree, void *info)
{
    int node = glp_ios_best_node(tree);
    if (node)
        *(double *)info = fmin(*(double *)info, glp_ios_node_bound(tree, node));
}

/* max sum pi_g a_g over the type's integer patterns (a_g <= n_g): the best pattern found into a and its value into
 * *v, an upper bound of the maximum into *upper (the LP relaxation's value when it cannot beat the type's price, so
 * no integer program is needed). -1 on a GLPK error. */
static int knapsack(const co_type *t, const co_group *groups, size_t ng, const double *pi, int32_t *a, double *v,
                    double *upper)
{
    glp_prob *kp = glp_create_prob();
    glp_set_obj_dir(kp, GLP_MAX);
    glp_add_rows(kp, 3);
    glp_set_row_bnds(kp, 1, GLP_UP, 0, (double)t->cpu);
    glp_set_row_bnds(kp, 2, GLP_UP, 0, (double)t->mem / 1048576.0);
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
    if (rc == 0 && *upper > t->price * (1 + 1e-7)) {
        for (size_t g = 0; g < ng; g++)
            glp_set_col_kind(kp, (int)g + 1, GLP_IV);
        glp_iocp parm;
        glp_init_iocp(&parm);
        parm.msg_lev = GLP_MSG_OFF;
        parm.mip_gap = PRICING_GAP;
        parm.mir_cuts = GLP_ON;
        parm.cov_cuts = GLP_ON;
        parm.tm_lim = PRICING_MS;
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

/* The starting columns: each type filled with one group only, as many pods as fit. */
static int single_group_columns(const co_type *types, const bool *use, size_t nt, const co_group *groups, size_t ng,
                                patterns *p, int32_t *a)
{
    for (size_t t = 0; t < nt; t++)
        for (size_t g = 0; use[t] && g < ng; g++) {
            int64_t k = groups[g].n, c = types[t].pods;
            k = k < c ? k : c;
            if (groups[g].cpu > 0 && types[t].cpu / groups[g].cpu < k)
                k = types[t].cpu / groups[g].cpu;
            if (groups[g].mem > 0 && types[t].mem / groups[g].mem < k)
                k = types[t].mem / groups[g].mem;
            if (k <= 0)
                continue;
            memset(a, 0, ng * sizeof(int32_t));
            a[g] = (int32_t)k;
            if (pat_push(p, a, types[t].price) != 0)
                return -1;
        }
    return 0;
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

/* Solves the master LP into *z and the duals pi. 0, or -1 on an error. */
static int solve_master(const patterns *p, const co_group *groups, size_t ng, double *z, double *pi)
{
    glp_prob *lp = master(p, groups, ng, false);
    if (!lp)
        return -1;
    glp_smcp parm;
    glp_init_smcp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    int r = glp_simplex(lp, &parm);
    if (r != 0 || glp_get_status(lp) != GLP_OPT) {
        fprintf(stderr, "cost_bench: LP bound: the master LP over %zu columns did not solve (code %d, status %d)\n",
                p->n, r, glp_get_status(lp));
        glp_delete_prob(lp);
        return -1;
    }
    *z = glp_get_obj_val(lp);
    for (size_t g = 0; g < ng; g++)
        pi[g] = fmax(0, glp_get_row_dual(lp, (int)g + 1));
    glp_delete_prob(lp);
    return 0;
}

/* One round: solves the master, adds the types' columns that price out (greedy first; GLPK's knapsack for every type
 * when greedy finds none, which also gives Farley's bound into *bound). 1 when the exact pricing finds no column
 * (LP optimum), 0 when columns were added, -1 on an error. */
static int cg_round(const co_type *types, const bool *use, size_t nt, const co_group *groups, size_t ng, patterns *p,
                    int32_t *a, size_t *order, double *pi, double *bound)
{
    double z = 0;
    if (solve_master(p, groups, ng, &z, pi) < 0)
        return -1;
    int added = 0;
    for (size_t t = 0; t < nt; t++)
        if (use[t] && greedy_pattern(&types[t], groups, ng, pi, a, order) > types[t].price * (1 + 1e-7)) {
            if (pat_push(p, a, types[t].price) != 0)
                return -1;
            added++;
        }
    if (added)
        return 0;
    double theta = 1;
    for (size_t t = 0; t < nt; t++) {
        if (!use[t])
            continue;
        double v = 0, upper = 0;
        if (knapsack(&types[t], groups, ng, pi, a, &v, &upper) < 0) {
            fprintf(stderr, "cost_bench: LP bound: the pricing knapsack of type %zu did not solve\n", t);
            return -1;
        }
        theta = fmax(theta, upper / types[t].price);
        if (v > types[t].price * (1 + 1e-7)) {
            if (pat_push(p, a, types[t].price) != 0)
                return -1;
            added++;
        }
    }
    *bound = z / theta;
    return added == 0;
}

int co_lp_bound(const co_type *types, size_t n_types, const co_group *groups, size_t n_groups, double time_limit_s,
                double *bound, int *converged)
{
    glp_term_hook(glpk_quiet, NULL);
    if (n_groups > 64) {
        fprintf(stderr, "cost_bench: LP bound: %zu pod groups, more than the 64 it handles\n", n_groups);
        return -1;
    }
    patterns p = {.n_groups = n_groups, .max = SIZE_MAX};
    size_t order[64];
    bool *use = malloc((n_types ? n_types : 1) * sizeof(bool));
    int32_t *a = calloc(n_groups ? n_groups : 1, sizeof(int32_t));
    double *pi = calloc(n_groups ? n_groups : 1, sizeof(double));
    int rc = use && a && pi ? 0 : -1;
    for (size_t t = 0; rc == 0 && t < n_types; t++)
        use[t] = !dominated(types, n_types, t);
    if (rc == 0)
        rc = single_group_columns(types, use, n_types, groups, n_groups, &p, a);
    *bound = 0;
    *converged = 0;
    double t0 = now_s();
    while (rc == 0 && !*converged) {
        double b = 0;
        int r = cg_round(types, use, n_types, groups, n_groups, &p, a, order, pi, &b);
        if (r < 0)
            rc = -1;
        else {
            *bound = fmax(*bound, b);
            *converged = r;
            if (now_s() - t0 > time_limit_s)
                break;
        }
    }
    free(use);
    free(a);
    free(pi);
    free(p.a);
    free(p.price);
    return rc;
}
