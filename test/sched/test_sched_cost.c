/*
 * packing: cost against packing: karpenter on the same inputs. On seeded random scenarios (instance types of mixed
 * shapes and architectures, a tainted second pool, DaemonSets, minValues, pool limits, node selectors, zonal spread)
 * cost mode places the same pods, never costs more, and every claim passes a check written here from the model's own
 * types (not the scheduler's tables): each launch option's allocatable holds the claim's pods and daemons, each pod's
 * architecture selector and the pool's taint are honoured, minValues holds, limits hold (counted as Karpenter's
 * subtractMax counts a claim, at least the largest capacity among its launch options), the spread's skew holds. Cost
 * mode must also re-pack in pools with limits and the claims of spread pods. Scenarios of mixed shapes prove cost mode
 * is strictly cheaper where Karpenter's greedy packing is not optimal: alone, in a pool with limits, with zonal spread.
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
    int min_values;      /* on pool 0's instance types, 0 = none */
    int64_t cpu_limit;   /* pool 0's cpu limit in millicores, 0 = none */
    int64_t nodes_limit; /* pool 0's limits.nodes, 0 = none */
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
    unsigned limit = (unsigned)(rng_next(&rng) % 8);
    if (limit < 2) {
        sc->cpu_limit = limit == 0 ? 64000 : 400000;
        np->limits.cpu = true;
        np->limits.max.cpu_milli = sc->cpu_limit;
    } else if (limit == 2) {
        sc->nodes_limit = 12;
        ck_assert_int_eq(ns_res_set(&np->limits.max, "nodes", sc->nodes_limit), 0);
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

/* Karpenter counts a new claim against its pool's limits at the largest capacity among its instance type options
 * when it is made; its options only narrow after that, so the largest among the final options is a lower bound. */
static void check_limits(const ns_sched_result *r, int64_t cpu_limit, int64_t nodes_limit, const char *mode)
{
    int64_t used = 0, nodes = 0;
    for (size_t i = 0; i < r->n_claims; i++) {
        if (r->claims[i].nodepool != 0)
            continue;
        int64_t max = 0;
        for (size_t o = 0; o < r->claims[i].n_options; o++)
            max = r->claims[i].options[o].type->capacity.cpu_milli > max ? r->claims[i].options[o].type->capacity.cpu_milli
                                                                          : max;
        used += max;
        nodes++;
    }
    ck_assert_msg(!cpu_limit || used <= cpu_limit, "%s: pool cpu %lld over its limit %lld", mode, (long long)used,
                  (long long)cpu_limit);
    ck_assert_msg(!nodes_limit || nodes <= nodes_limit, "%s: %lld nodes over the pool's limit", mode,
                  (long long)nodes);
}

/* The price of the claims of pool 0 (only_spread: those holding a spread pod). */
static double claims_cost(const scenario *sc, const ns_sched_result *r, bool only_spread)
{
    double total = 0;
    for (size_t i = 0; i < r->n_claims; i++) {
        bool spread = false;
        for (size_t j = 0; j < r->claims[i].n_pods; j++)
            spread = spread || strncmp(sc->c->pods[r->claims[i].pods[j]]->meta.name, "spread-", 7) == 0;
        if (r->claims[i].nodepool == 0 && (spread || !only_spread))
            total += r->claims[i].options[0].price_per_hour;
    }
    return total;
}

static void check_result(const scenario *sc, const ns_sched_result *r, const char *mode)
{
    for (size_t i = 0; i < r->n_claims; i++)
        check_claim(sc, &r->claims[i], mode);
    check_spread(sc, r, mode);
    check_limits(r, sc->cpu_limit, sc->nodes_limit, mode);
}

START_TEST(cost_mode_never_costlier_and_valid)
{
    size_t cheaper = 0, cheaper_limited = 0, cheaper_spread = 0;
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
        cheaper_limited += (sc.cpu_limit || sc.nodes_limit) && claims_cost(&sc, &cost, false) <
                                                                   claims_cost(&sc, &karp, false) - 1e-9;
        cheaper_spread += claims_cost(&sc, &cost, true) < claims_cost(&sc, &karp, true) - 1e-9;
        ns_sched_result_free(&karp);
        ns_sched_result_free(&cost);
        scenario_free(&sc);
    }
    /* The pass does something on these shapes, not only keep the greedy result, in pools with limits and on the
     * claims of spread pods too. */
    ck_assert_uint_gt(cheaper, 30);
    ck_assert_msg(cheaper_limited > 20, "%zu scenarios with limits cheaper", cheaper_limited);
    ck_assert_msg(cheaper_spread > 20, "%zu scenarios cheaper on spread pods' claims", cheaper_spread);
}
END_TEST

/* 24 pods of 7 cpu 2 GiB (app=cpu) and 24 of 1 cpu 14 GiB (app=mem) in pool "default", with three types offered
 * in zone z-a (and z-b at the same prices when two_zones); with zone_spread each app spreads over the zones with
 * maxSkew 1. Karpenter's greedy fills large general-purpose claims with both shapes; a cpu-heavy type for the first
 * and a memory-heavy one for the second cost less in total. */
static ns_nodepool *mixed_shapes(sched_env *e, bool two_zones, bool zone_spread)
{
    static const struct {
        const char *name;
        int64_t cpu, gib;
        double price;
    } types[] = {{"general-48", 48, 192, 2.30}, {"compute-16", 16, 32, 0.68}, {"memory-8", 8, 64, 0.50}};
    sched_env_init(e, false);
    for (size_t i = 0; i < 3; i++) {
        char offers[96];
        snprintf(offers, sizeof(offers), two_zones ? "z-a:on-demand:%.2f,z-b:on-demand:%.2f" : "z-a:on-demand:%.2f",
                 types[i].price, types[i].price);
        fx_type(&e->set, types[i].name, types[i].cpu * 1000, types[i].gib * FX_GI, 110, "kubernetes.io/arch=amd64",
                offers);
    }
    ns_nodepool *np = fx_pool(e->c, "default", 0, "");
    for (int i = 0; i < 24; i++) {
        char name[32];
        snprintf(name, sizeof(name), "cpu-%d", i);
        ns_pod *cpu = fx_pod(e->c, name, 7000, 2 * FX_GI, "app=cpu");
        snprintf(name, sizeof(name), "mem-%d", i);
        ns_pod *mem = fx_pod(e->c, name, 1000, 14 * FX_GI, "app=mem");
        if (zone_spread) {
            fx_pod_spread(cpu, NS_LABEL_ZONE, 1, false, "app=cpu");
            fx_pod_spread(mem, NS_LABEL_ZONE, 1, false, "app=mem");
        }
    }
    return np;
}

/* Runs both modes (karpenter into e->r); each places every pod. */
static void run_both(sched_env *e, ns_sched_result *cost)
{
    sched_env_run(e);
    fx_run_packing(e->c, &e->set, NULL, NS_SCHED_PACKING_COST, cost);
    ck_assert_uint_eq(e->r.n_unschedulable, 0);
    ck_assert_uint_eq(cost->n_unschedulable, 0);
}

/* Cost mode is at least 5% cheaper; frees both results and the environment. */
static void assert_cheaper_and_free(sched_env *e, ns_sched_result *cost)
{
    double kc = result_cost(&e->r), cc = result_cost(cost);
    ck_assert_msg(cc < kc * 0.95, "cost %.2f, karpenter %.2f", cc, kc);
    ns_sched_result_free(cost);
    sched_env_free(e);
}

START_TEST(cost_mode_splits_mixed_shapes)
{
    sched_env e;
    ns_sched_result cost;
    mixed_shapes(&e, false, false);
    run_both(&e, &cost);
    assert_cheaper_and_free(&e, &cost);
}
END_TEST

/* The same pods in a pool limited to 300 cpu. Karpenter counts each claim at the largest type it may launch when it
 * is made (48 cpu for the greedy's); cost mode gives back what the greedy claims took and makes each new claim with
 * only the types that hold its pods, so its smaller claims fit the same limit and still cost less. */
START_TEST(cost_mode_repacks_within_limits)
{
    sched_env e;
    ns_nodepool *np = mixed_shapes(&e, false, false);
    np->limits.cpu = true;
    np->limits.max.cpu_milli = 300000;
    ns_sched_result cost;
    run_both(&e, &cost);
    check_limits(&e.r, np->limits.max.cpu_milli, 0, "karpenter");
    check_limits(&cost, np->limits.max.cpu_milli, 0, "cost");
    assert_cheaper_and_free(&e, &cost);
}
END_TEST

/* The same pods spread over two zones (maxSkew 1 per app): cost mode re-packs each zone's pods with that zone's
 * offerings, so each zone keeps the greedy's count of each app, the skew holds, and it still costs less. */
START_TEST(cost_mode_repacks_zonal_spread)
{
    sched_env e;
    mixed_shapes(&e, true, true);
    ns_sched_result cost;
    run_both(&e, &cost);
    for (int app = 0; app < 2; app++) {
        int64_t karp_a = 0, cost_a = 0, cost_b = 0;
        for (int i = 0; i < 24; i++) {
            char name[32];
            snprintf(name, sizeof(name), "%s-%d", app ? "mem" : "cpu", i);
            const char *kz = fx_claim_zone(fx_claim_of(e.c, &e.r, name));
            const char *cz = fx_claim_zone(fx_claim_of(e.c, &cost, name));
            ck_assert_ptr_nonnull(kz);
            ck_assert_ptr_nonnull(cz);
            karp_a += strcmp(kz, "z-a") == 0;
            cost_a += strcmp(cz, "z-a") == 0;
            cost_b += strcmp(cz, "z-b") == 0;
        }
        ck_assert_int_eq(cost_a, karp_a);
        ck_assert_int_eq(cost_a + cost_b, 24);
        ck_assert_msg(cost_a - cost_b <= 1 && cost_b - cost_a <= 1, "app %d skew %lld/%lld", app, (long long)cost_a,
                      (long long)cost_b);
    }
    assert_cheaper_and_free(&e, &cost);
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
    tcase_add_test(tc, cost_mode_repacks_within_limits);
    tcase_add_test(tc, cost_mode_repacks_zonal_spread);
    tcase_add_test(tc, cost_mode_keeps_constrained_pods);
    tcase_add_test(tc, packing_names);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
