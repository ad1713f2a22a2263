/*
 * packing: cost against the exact optimum. On seeded scenarios of two pod shapes over instance types of random shapes
 * and prices that are not linear in size, the optimum is computed here by dynamic programming over the pods left of
 * each shape (the cheapest node of any type for some of them, plus the optimum of the rest), independent of the
 * scheduler. Cost mode must place every pod and never pay less than that optimum (which would mean an invalid claim).
 * With 1 to 10 pods per shape the scheduler's own exact step applies, so it must pay the optimum itself (200 seeds).
 * With 53 to 60 pods per shape that step is past its size and the LP plan with its rounding does the work: issue 17
 * asks at most 5% over the optimum; the worst of these 20 seeds pays 1.0162 times it, so the bound checked is 1.02
 * (before the LP priced patterns that mix shapes and re-solved the pods left after rounding exactly, 1.0984). One
 * hand-made scenario is the bench's worst case for Karpenter: 32.5 cpu of pods, where greedy packing takes a 64-cpu
 * node.
 */
#include <check.h>
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched_test_util.h"

#define MAX_N 60

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

typedef struct shape {
    int64_t cpu, mem;
} shape;

typedef struct opt_type {
    int64_t cpu, mem;
    double price;
} opt_type;

/* cost[a][b]: the cheapest nodes for a pods of shape 0 and b of shape 1. */
static double optimum(const opt_type *t, size_t n_t, const shape *p, int na, int nb)
{
    static double cost[MAX_N + 1][MAX_N + 1];
    for (int a = 0; a <= na; a++)
        for (int b = 0; b <= nb; b++) {
            cost[a][b] = a == 0 && b == 0 ? 0 : DBL_MAX;
            for (size_t i = 0; i < n_t; i++)
                for (int x = 0; x <= a; x++)
                    for (int y = 0; y <= b; y++) {
                        if (x + y == 0 || x * p[0].cpu + y * p[1].cpu > t[i].cpu ||
                            x * p[0].mem + y * p[1].mem > t[i].mem || cost[a - x][b - y] == DBL_MAX)
                            continue;
                        double c = t[i].price + cost[a - x][b - y];
                        cost[a][b] = c < cost[a][b] ? c : cost[a][b];
                    }
        }
    return cost[na][nb];
}

static bool fits_some(const opt_type *t, size_t n_t, const shape *p)
{
    for (size_t i = 0; i < n_t; i++)
        if (p->cpu <= t[i].cpu && p->mem <= t[i].mem)
            return true;
    return false;
}

static double result_cost(const ns_sched_result *r)
{
    double total = 0;
    for (size_t i = 0; i < r->n_claims; i++)
        total += r->claims[i].options[0].price_per_hour;
    return total;
}

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* One scenario: 3 to 6 types, 1 to 16 cpu, 1 to 8 GiB per cpu, each priced at a random 0.8x to 1.4x of a per-cpu and
 * per-GiB rate; two shapes of 1 to 10 pods. The ratio of cost mode to the optimum. */
static double scenario_ratio(uint64_t seed, int min_pods, int max_pods)
{
    static const int64_t cpus[] = {1, 2, 4, 8, 16}, gib_per_cpu[] = {1, 2, 4, 8};
    static const int64_t pod_cpu[] = {250, 500, 1000, 1500, 2000, 3000}, pod_mib[] = {512, 1024, 2048, 4096, 8192};
    uint64_t rng = seed * 2654435761u + 3;
    sched_env e;
    sched_env_init(&e, false);
    fx_pool(e.c, "default", 0, "");
    opt_type t[6];
    size_t n_t = 3 + rng_next(&rng) % 4;
    for (size_t i = 0; i < n_t; i++) {
        int64_t cpu = cpus[rng_next(&rng) % 5], gib = cpu * gib_per_cpu[rng_next(&rng) % 4];
        double price = ((double)cpu * 0.03 + (double)gib * 0.005) * (0.8 + (double)(rng_next(&rng) % 61) / 100);
        char name[32], offers[64];
        snprintf(name, sizeof(name), "t%zu", i);
        snprintf(offers, sizeof(offers), "z-a:on-demand:%.6f", price);
        fx_type(&e.set, name, cpu * 1000, gib * FX_GI, 110, "kubernetes.io/arch=amd64,kubernetes.io/os=linux",
                offers);
        t[i] = (opt_type){cpu * 1000, gib * FX_GI, atof(offers + strlen("z-a:on-demand:"))};
    }
    shape p[2];
    int n[2];
    for (int s = 0; s < 2; s++) {
        do {
            p[s] = (shape){pod_cpu[rng_next(&rng) % 6], pod_mib[rng_next(&rng) % 5] * FX_MI};
        } while (!fits_some(t, n_t, &p[s]));
        n[s] = min_pods + (int)(rng_next(&rng) % (uint64_t)(max_pods - min_pods + 1));
        for (int i = 0; i < n[s]; i++) {
            char name[32], labels[16];
            snprintf(name, sizeof(name), "s%d-%d", s, i);
            snprintf(labels, sizeof(labels), "app=s%d", s);
            fx_pod(e.c, name, p[s].cpu, p[s].mem, labels);
        }
    }
    double best = optimum(t, n_t, p, n[0], n[1]);
    ns_sched_result r;
    fx_run_packing(e.c, &e.set, NULL, NS_SCHED_PACKING_COST, &r);
    ck_assert_uint_eq(r.n_unschedulable, 0);
    double paid = result_cost(&r);
    ck_assert_msg(paid >= best * (1 - 1e-9), "seed %llu: cost mode %.6f is below the optimum %.6f",
                  (unsigned long long)seed, paid, best);
    ns_sched_result_free(&r);
    sched_env_free(&e);
    return paid / best;
}

START_TEST(cost_mode_pays_the_optimum_on_few_pods)
{
    enum { N = 200 };
    for (int i = 0; i < N; i++) {
        double ratio = scenario_ratio((uint64_t)i + 1, 1, 10);
        ck_assert_msg(ratio <= 1 + 1e-9, "seed %d: cost mode pays %.6f times the optimum", i + 1, ratio);
    }
}
END_TEST

START_TEST(cost_mode_near_optimum_past_exact)
{
    enum { N = 20 };
    double ratio[N];
    for (int i = 0; i < N; i++) {
        ratio[i] = scenario_ratio((uint64_t)i + 1001, 53, 60);
        ck_assert_msg(ratio[i] <= 1.02, "seed %d: cost mode pays %.4f times the optimum", i + 1001, ratio[i]);
    }
    qsort(ratio, N, sizeof(double), dbl_cmp);
    ck_assert_msg(ratio[N / 2] <= 1.02, "median ratio to the optimum %.4f", ratio[N / 2]);
}
END_TEST

/* 7 pods of 1.5 cpu, 8 of 0.5 and 12 of 1.5 with more memory: 32.5 cpu and 49.25 GiB. Karpenter's greedy puts them
 * all on the 64-cpu type ($9.97). The c types cost at least $0.155825 per cpu (c-4) and come in even cpus, g-1 costs
 * $0.20 for one cpu: with no g-1 the c types need 34 cpu (>= $5.298), with one they need 32 (>= $5.1864), with two
 * still 32 (>= $5.386), with three 30 (>= $5.275). So the optimum is at least $5.1864, and the 32-cpu node with the
 * 1-cpu one ($5.1867) holds the pods: cost mode must pay within those two. */
START_TEST(cost_mode_avoids_the_giant)
{
    sched_env e;
    sched_env_init(&e, false);
    fx_pool(e.c, "default", 0, "");
    static const struct {
        const char *name;
        int64_t cpu, gib;
        const char *offer;
    } types[] = {{"c-2", 2, 4, "z-a:on-demand:0.3117"},   {"c-4", 4, 8, "z-a:on-demand:0.6233"},
                 {"c-8", 8, 16, "z-a:on-demand:1.2467"},  {"c-16", 16, 32, "z-a:on-demand:2.4933"},
                 {"c-32", 32, 64, "z-a:on-demand:4.9867"}, {"c-64", 64, 128, "z-a:on-demand:9.9733"},
                 {"g-1", 1, 4, "z-a:on-demand:0.2"}};
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
        fx_type(&e.set, types[i].name, types[i].cpu * 1000, types[i].gib * FX_GI, 110,
                "kubernetes.io/arch=arm64,kubernetes.io/os=linux", types[i].offer);
    static const struct {
        int n;
        int64_t cpu, mib;
    } groups[] = {{7, 1500, 768}, {8, 500, 1024}, {12, 1500, 3072}};
    for (size_t g = 0; g < 3; g++)
        for (int i = 0; i < groups[g].n; i++) {
            char name[32], labels[16];
            snprintf(name, sizeof(name), "g%zu-%d", g, i);
            snprintf(labels, sizeof(labels), "app=g%zu", g);
            fx_pod(e.c, name, groups[g].cpu, groups[g].mib * FX_MI, labels);
        }
    ns_sched_result r;
    sched_env_run(&e);
    fx_run_packing(e.c, &e.set, NULL, NS_SCHED_PACKING_COST, &r);
    ck_assert_double_eq_tol(result_cost(&e.r), 9.9733, 1e-6);
    ck_assert_double_le(result_cost(&r), 4.9867 + 0.2 + 1e-9);
    ck_assert_double_ge(result_cost(&r), 32 * 0.155825 + 0.2 - 1e-9);
    ck_assert_uint_eq(r.n_unschedulable, 0);
    ns_sched_result_free(&r);
    sched_env_free(&e);
}
END_TEST

/* The cheapest cpu and memory can be bought from the families (cpu, gib per cpu, price per cpu) in any amounts: the
 * least over one family, or two mixed to give both exactly. Every plan holds the pods' requests, so pays at least
 * this. */
static double resource_bound(const int64_t *gib_per_cpu, const double *per_cpu, size_t n_f, double cpu, double gib)
{
    double best = DBL_MAX;
    for (size_t a = 0; a < n_f; a++) {
        double x = cpu > gib / (double)gib_per_cpu[a] ? cpu : gib / (double)gib_per_cpu[a];
        best = x * per_cpu[a] < best ? x * per_cpu[a] : best;
        for (size_t b = 0; b < n_f; b++) {
            if (gib_per_cpu[a] >= gib_per_cpu[b])
                continue; /* a the leaner, b the richer in memory: xa + xb = cpu, ga xa + gb xb = gib */
            double xb = (gib - (double)gib_per_cpu[a] * cpu) / (double)(gib_per_cpu[b] - gib_per_cpu[a]), xa = cpu - xb;
            if (xa >= 0 && xb >= 0 && xa * per_cpu[a] + xb * per_cpu[b] < best)
                best = xa * per_cpu[a] + xb * per_cpu[b];
        }
    }
    return best;
}

/* Sixteen pod shapes of 20 to 59 pods each over three families priced linearly (2, 4 and 8 GiB per cpu, 2 to 64 cpu),
 * as the benchmark's catalogs are: the pricing must find the patterns that mix shapes on the large types. The plan
 * must pay at most 1.018 times what the pods' cpu and memory cost at the families' prices, a lower bound computed
 * here (kubelet's reserved share of each node is part of the gap): 1.0149 since the LP also composes a type's
 * pattern from copies of another's best fill, 1.0217 before. One scenario: on other seeds of this generator the
 * composition moves the result by -0.7% to +0.1%. */
START_TEST(many_shapes_on_linear_families)
{
    static const int64_t gib_per_cpu[3] = {2, 4, 8};
    static const double per_cpu[3] = {0.0425, 0.048, 0.063};
    static const int64_t sizes[] = {2, 4, 8, 16, 32, 48, 64};
    static const int64_t pod_cpu[] = {250, 500, 1000, 1500, 2000, 3000, 4000, 6000, 8000},
                         mib_per_cpu[] = {512, 1024, 2048, 4096, 6144, 8192};
    sched_env e;
    sched_env_init(&e, false);
    fx_pool(e.c, "default", 0, "");
    for (size_t f = 0; f < 3; f++)
        for (size_t z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++) {
            char name[32], offers[64];
            snprintf(name, sizeof(name), "%c-%lld", "cmr"[f], (long long)sizes[z]);
            snprintf(offers, sizeof(offers), "z-a:on-demand:%.6f", per_cpu[f] * (double)sizes[z]);
            fx_type(&e.set, name, sizes[z] * 1000, sizes[z] * gib_per_cpu[f] * FX_GI, 110,
                    "kubernetes.io/arch=amd64,kubernetes.io/os=linux", offers);
        }
    uint64_t rng = 101;
    double cpu = 0, gib = 0;
    for (int g = 0; g < 16; g++) {
        int64_t c = pod_cpu[rng_next(&rng) % 9], mib = c * mib_per_cpu[rng_next(&rng) % 6] / 1000;
        int n = 20 + (int)(rng_next(&rng) % 40);
        for (int i = 0; i < n; i++) {
            char name[32], labels[16];
            snprintf(name, sizeof(name), "g%d-%d", g, i);
            snprintf(labels, sizeof(labels), "app=g%d", g);
            fx_pod(e.c, name, c, mib * FX_MI, labels);
        }
        cpu += (double)n * (double)c / 1000;
        gib += (double)n * (double)mib / 1024;
    }
    ns_sched_result r;
    fx_run_packing(e.c, &e.set, NULL, NS_SCHED_PACKING_COST, &r);
    ck_assert_uint_eq(r.n_unschedulable, 0);
    double bound = resource_bound(gib_per_cpu, per_cpu, 3, cpu, gib);
    double ratio = result_cost(&r) / bound;
    ck_assert_msg(ratio >= 1 - 1e-9 && ratio <= 1.018, "cost mode pays %.4f times the resource bound", ratio);
    ns_sched_result_free(&r);
    sched_env_free(&e);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sched-cost-lp");
    TCase *tc = tcase_create("cost-lp");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, cost_mode_pays_the_optimum_on_few_pods);
    tcase_add_test(tc, cost_mode_avoids_the_giant);
    tcase_add_test(tc, many_shapes_on_linear_families);
    tcase_add_test(tc, cost_mode_near_optimum_past_exact);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
