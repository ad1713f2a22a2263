/*
 * packing: cost against packing: karpenter on the same inputs. On seeded random scenarios (instance types of mixed
 * shapes and architectures, a tainted second pool, DaemonSets, minValues, pool limits, node selectors, zonal spread)
 * cost mode places the same pods, never costs more, and every claim passes a check written here from the model's own
 * types (not the scheduler's tables): each launch option's allocatable holds the claim's pods and daemons, each pod's
 * architecture selector and the pool's taint are honoured, minValues holds, limits hold, the spread's skew holds. One
 * scenario of mixed shapes proves cost mode is strictly cheaper where Karpenter's greedy packing is not optimal.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "model/labels.h"
#include "sched_test_util.h"

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static int64_t pick(uint64_t *s, const int64_t *v, size_t n)
{
    return v[rng_next(s) % n];
}

typedef struct scenario {
    ns_cluster *c;
    ns_itype_set set;
    int min_values;    /* on pool 0's instance types, 0 = none */
    int64_t cpu_limit; /* pool 0's cpu limit in millicores, 0 = none */
} scenario;

static void random_types(ns_itype_set *set, uint64_t *rng)
{
    static const int64_t cpus[] = {2, 4, 8, 16, 32, 48}, gib_per_cpu[] = {2, 4, 8};
    size_t n = 4 + rng_next(rng) % 8;
    for (size_t i = 0; i < n; i++) {
        int64_t cpu = pick(rng, cpus, 6), ratio = pick(rng, gib_per_cpu, 3);
        double price = (double)cpu * (0.02 + 0.004 * (double)ratio) * (0.8 + (double)(rng_next(rng) % 40) / 100);
        char name[32], labels[96], offers[160];
        snprintf(name, sizeof(name), "t%zu-%lldx%lld", i, (long long)cpu, (long long)ratio);
        snprintf(labels, sizeof(labels), "kubernetes.io/arch=%s,kubernetes.io/os=linux",
                 rng_next(rng) % 3 ? "amd64" : "arm64");
        snprintf(offers, sizeof(offers), "z-a:on-demand:%.4f,z-b:on-demand:%.4f,z-a:spot:%.4f", price, price * 1.01,
                 price * 0.4);
        fx_type(set, name, cpu * 1000, cpu * ratio * FX_GI, 110, labels, offers);
    }
}

static void random_pods(ns_cluster *c, uint64_t *rng)
{
    static const int64_t cpus[] = {250, 500, 1000, 2000, 3000, 6000}, mems[] = {256, 512, 1024, 4096, 8192, 16384};
    size_t n_groups = 2 + rng_next(rng) % 7;
    for (size_t g = 0; g < n_groups; g++) {
        int64_t cpu = pick(rng, cpus, 6), mem = pick(rng, mems, 6) * FX_MI;
        unsigned kind = (unsigned)(rng_next(rng) % 10);
        size_t n = 1 + rng_next(rng) % 12;
        for (size_t i = 0; i < n; i++) {
            char name[48], labels[32];
            snprintf(name, sizeof(name), "%s-g%zu-%zu", kind == 0 ? "tol" : kind == 1 ? "spread" : "pod", g, i);
            snprintf(labels, sizeof(labels), "app=g%zu", g);
            ns_pod *p = fx_pod(c, name, cpu, mem, labels);
            if (kind == 0)
                fx_pod_tolerate(p, "dedicated", NS_EFFECT_NO_SCHEDULE);
            if (kind == 1)
                fx_pod_spread(p, NS_LABEL_ZONE, 1, false, labels);
            if (kind == 2)
                fx_pod_selector(p, "kubernetes.io/arch=arm64");
        }
    }
}

static void scenario_build(scenario *sc, uint64_t seed)
{
    uint64_t rng = seed * 2654435761u + 1;
    memset(sc, 0, sizeof(*sc));
    sc->c = ns_cluster_new();
    ck_assert_ptr_nonnull(sc->c);
    random_types(&sc->set, &rng);
    sc->min_values = rng_next(&rng) % 4 == 0 ? 2 : 0;
    ns_nodepool *np = fx_pool(sc->c, "default", 10,
                              sc->min_values ? "node.kubernetes.io/instance-type NotIn none minValues=2" : "");
    if (rng_next(&rng) % 5 == 0) {
        sc->cpu_limit = 64000;
        np->limits.cpu = true;
        np->limits.max.cpu_milli = sc->cpu_limit;
    }
    fx_pool_taint(fx_pool(sc->c, "dedicated", 0, ""), "dedicated", "x", NS_EFFECT_NO_SCHEDULE);
    if (rng_next(&rng) % 2)
        fx_daemonset(sc->c, "agent", 200, 256 * FX_MI);
    random_pods(sc->c, &rng);
}

static void scenario_free(scenario *sc)
{
    ns_itype_set_free(&sc->set);
    ns_cluster_free(sc->c);
}

static double result_cost(const ns_sched_result *r)
{
    double total = 0;
    for (size_t i = 0; i < r->n_claims; i++) {
        ck_assert_uint_gt(r->claims[i].n_options, 0);
        total += r->claims[i].options[0].price_per_hour;
    }
    return total;
}

static bool pod_tolerates_dedicated(const ns_pod *p)
{
    for (size_t i = 0; i < p->n_tolerations; i++)
        if (p->tolerations[i].key && strcmp(p->tolerations[i].key, "dedicated") == 0)
            return true;
    return false;
}

static size_t distinct_types(const ns_sched_claim *cl)
{
    size_t n = 0;
    for (size_t i = 0; i < cl->n_options; i++) {
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = cl->options[j].type == cl->options[i].type;
        n += !seen;
    }
    return n;
}

/* Every launch option holds the claim's pods and daemons, and honours each pod's selector and the pool's taint. */
static void check_claim(const scenario *sc, const ns_sched_claim *cl, const char *mode)
{
    ns_res need = {0};
    ck_assert_int_eq(ns_res_copy(&need, &cl->pod_requests), 0);
    ck_assert_int_eq(ns_res_add(&need, &cl->daemon_overhead), 0);
    for (size_t o = 0; o < cl->n_options; o++) {
        const ns_itype *t = cl->options[o].type;
        char why[256];
        ck_assert_msg(ns_res_fit(&need, &t->allocatable, why, sizeof(why)), "%s: claim on %s overfull: %s", mode,
                      t->name, why);
        const char *arch = ns_label_find(t->labels, t->n_labels, "kubernetes.io/arch");
        for (size_t i = 0; i < cl->n_pods; i++) {
            const ns_pod *p = sc->c->pods[cl->pods[i]];
            const char *want = ns_labels_get(&p->node_selector, "kubernetes.io/arch");
            ck_assert_msg(!want || strcmp(want, arch) == 0, "%s: pod %s wants %s, option %s is %s", mode,
                          p->meta.name, want, t->name, arch);
            ck_assert_msg(cl->nodepool == 0 || pod_tolerates_dedicated(p), "%s: pod %s on the tainted pool", mode,
                          p->meta.name);
        }
    }
    if (cl->nodepool == 0 && sc->min_values)
        ck_assert_msg(distinct_types(cl) >= (size_t)sc->min_values, "%s: minValues broken", mode);
    ns_res_free(&need);
}

/* Zonal spread with maxSkew 1 per app label: the zones' counts differ by at most one among the pods placed. */
static void check_spread(const scenario *sc, const ns_sched_result *r, const char *mode)
{
    for (size_t g = 0; g < 16; g++) {
        int64_t za = 0, zb = 0;
        char prefix[32];
        snprintf(prefix, sizeof(prefix), "spread-g%zu-", g);
        for (size_t i = 0; i < sc->c->n_pods; i++) {
            if (strncmp(sc->c->pods[i]->meta.name, prefix, strlen(prefix)) != 0)
                continue;
            const ns_sched_claim *cl = fx_claim_of(sc->c, r, sc->c->pods[i]->meta.name);
            const char *zone = cl ? fx_claim_zone(cl) : NULL;
            za += zone && strcmp(zone, "z-a") == 0;
            zb += zone && strcmp(zone, "z-b") == 0;
        }
        ck_assert_msg(za - zb <= 1 && zb - za <= 1, "%s: spread g%zu skew %lld/%lld", mode, g, (long long)za,
                      (long long)zb);
    }
}

static void check_limits(const scenario *sc, const ns_sched_result *r, const char *mode)
{
    if (!sc->cpu_limit)
        return;
    int64_t used = 0;
    for (size_t i = 0; i < r->n_claims; i++)
        if (r->claims[i].nodepool == 0)
            used += r->claims[i].options[0].type->capacity.cpu_milli;
    ck_assert_msg(used <= sc->cpu_limit, "%s: pool cpu %lld over its limit", mode, (long long)used);
}

static void check_result(const scenario *sc, const ns_sched_result *r, const char *mode)
{
    for (size_t i = 0; i < r->n_claims; i++)
        check_claim(sc, &r->claims[i], mode);
    check_spread(sc, r, mode);
    check_limits(sc, r, mode);
}

START_TEST(cost_mode_never_costlier_and_valid)
{
    size_t cheaper = 0;
    for (uint64_t seed = 1; seed <= 300; seed++) {
        scenario sc;
        scenario_build(&sc, seed);
        ns_sched_result karp, cost;
        fx_run_packing(sc.c, &sc.set, NULL, NS_SCHED_PACKING_KARPENTER, &karp);
        fx_run_packing(sc.c, &sc.set, NULL, NS_SCHED_PACKING_COST, &cost);
        check_result(&sc, &karp, "karpenter");
        check_result(&sc, &cost, "cost");
        ck_assert_uint_eq(cost.n_pending, karp.n_pending);
        for (size_t i = 0; i < sc.c->n_pods; i++)
            ck_assert_msg((karp.placement[i] == NS_SCHED_UNPLACED) == (cost.placement[i] == NS_SCHED_UNPLACED),
                          "seed %llu: pod %s placed in one mode only", (unsigned long long)seed,
                          sc.c->pods[i]->meta.name);
        double kc = result_cost(&karp), cc = result_cost(&cost);
        ck_assert_msg(cc <= kc + 1e-9, "seed %llu: cost mode %.4f > karpenter %.4f", (unsigned long long)seed, cc, kc);
        cheaper += cc < kc - 1e-9;
        ns_sched_result_free(&karp);
        ns_sched_result_free(&cost);
        scenario_free(&sc);
    }
    /* The pass does something on these shapes, not only keep the greedy result. */
    ck_assert_uint_gt(cheaper, 30);
}
END_TEST

/* 24 pods of 7 cpu 2 GiB and 24 of 1 cpu 14 GiB: Karpenter's greedy fills large general-purpose claims with both
 * shapes; a cpu-heavy type for the first and a memory-heavy one for the second cost less in total. */
START_TEST(cost_mode_splits_mixed_shapes)
{
    sched_env e;
    sched_env_init(&e, false);
    fx_type(&e.set, "general-48", 48000, 192 * FX_GI, 110, "kubernetes.io/arch=amd64", "z-a:on-demand:2.30");
    fx_type(&e.set, "compute-16", 16000, 32 * FX_GI, 110, "kubernetes.io/arch=amd64", "z-a:on-demand:0.68");
    fx_type(&e.set, "memory-8", 8000, 64 * FX_GI, 110, "kubernetes.io/arch=amd64", "z-a:on-demand:0.50");
    fx_pool(e.c, "default", 0, "");
    for (int i = 0; i < 24; i++) {
        char name[32];
        snprintf(name, sizeof(name), "cpu-%d", i);
        fx_pod(e.c, name, 7000, 2 * FX_GI, "app=cpu");
        snprintf(name, sizeof(name), "mem-%d", i);
        fx_pod(e.c, name, 1000, 14 * FX_GI, "app=mem");
    }
    ns_sched_result cost;
    sched_env_run(&e);
    fx_run_packing(e.c, &e.set, NULL, NS_SCHED_PACKING_COST, &cost);
    double kc = result_cost(&e.r), cc = result_cost(&cost);
    ck_assert_msg(cc < kc * 0.95, "cost %.2f, karpenter %.2f", cc, kc);
    ck_assert_uint_eq(cost.n_unschedulable, 0);
    ns_sched_result_free(&cost);
    sched_env_free(&e);
}
END_TEST

/* Pods with hostname anti-affinity keep the greedy placement: one per claim, in both modes. */
START_TEST(cost_mode_keeps_constrained_pods)
{
    sched_env e;
    sched_env_init(&e, true);
    fx_pool(e.c, "default", 0, "");
    for (int i = 0; i < 5; i++) {
        char name[32];
        snprintf(name, sizeof(name), "solo-%d", i);
        fx_pod_affinity(fx_pod(e.c, name, 500, FX_GI, "app=solo"), NS_LABEL_HOSTNAME, "app=solo", true, 0);
    }
    ns_sched_result cost;
    fx_run_packing(e.c, &e.set, NULL, NS_SCHED_PACKING_COST, &cost);
    ck_assert_uint_eq(cost.n_claims, 5);
    for (size_t i = 0; i < cost.n_claims; i++)
        ck_assert_uint_eq(cost.claims[i].n_pods, 1);
    ns_sched_result_free(&cost);
    sched_env_free(&e);
}
END_TEST

START_TEST(packing_names)
{
    ns_sched_packing p = NS_SCHED_PACKING_COST;
    ck_assert_int_eq(ns_sched_packing_parse("karpenter", &p), 0);
    ck_assert_int_eq(p, NS_SCHED_PACKING_KARPENTER);
    ck_assert_int_eq(ns_sched_packing_parse("cost", &p), 0);
    ck_assert_int_eq(p, NS_SCHED_PACKING_COST);
    ck_assert_str_eq(ns_sched_packing_name(p), "cost");
    ck_assert_int_eq(ns_sched_packing_parse("cheapest", &p), NS_ERR_INVALID_CONFIG);
    ck_assert_ptr_nonnull(strstr(ns_error_message(), "'cheapest'"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sched-cost");
    TCase *tc = tcase_create("cost");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, cost_mode_never_costlier_and_valid);
    tcase_add_test(tc, cost_mode_splits_mixed_shapes);
    tcase_add_test(tc, cost_mode_keeps_constrained_pods);
    tcase_add_test(tc, packing_names);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
