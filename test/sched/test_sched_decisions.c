/*
 * Decision stability: the scheduler's answer for fixed benchmark workloads (sched_workload.h) is pinned — claim
 * count, total cost of the cheapest options, and a hash of every pod's placement and every claim's launch options.
 * Speed work must not change any of them. The pinned values were recorded when planned claims began to take pods
 * fewest pods first (Karpenter's order), with a plain version of that search (every claim with room, sorted by pod
 * count) before the pruned one in sched_index.c replaced it: both gave these values.
 */
#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched_workload.h"

typedef struct fingerprint {
    size_t claims;
    double cost;
    uint64_t hash;
} fingerprint;

static uint64_t mix(uint64_t h, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        h = (h ^ ((v >> (8 * i)) & 0xff)) * UINT64_C(1099511628211);
    return h;
}

static fingerprint run_workload(size_t n_pods, uint64_t seed, unsigned kinds)
{
    ns_itype_set set = {0};
    wl_types(&set);
    ns_cluster *c = wl_cluster_kinds(n_pods, seed, kinds);
    ns_sched_result r;
    fx_run(c, &set, NULL, &r);
    fingerprint f = {r.n_claims, 0, UINT64_C(1469598103934665603)};
    for (size_t i = 0; i < r.n_placement; i++)
        f.hash = mix(f.hash, r.placement[i]);
    for (size_t i = 0; i < r.n_claims; i++) {
        const ns_sched_claim *cl = &r.claims[i];
        f.cost += cl->options[0].price_per_hour;
        f.hash = mix(f.hash, cl->n_options);
        f.hash = mix(f.hash, cl->n_types);
        for (size_t o = 0; o < cl->n_options; o++) {
            f.hash = mix(f.hash, (uint64_t)(cl->options[o].type - set.items));
            f.hash = mix(f.hash, (uint64_t)cl->options[o].zone[strlen(cl->options[o].zone) - 1]);
            f.hash = mix(f.hash, (uint64_t)cl->options[o].capacity_type[0]);
        }
    }
    if (r.n_unschedulable)
        f.hash = mix(f.hash, r.n_unschedulable);
    printf("workload %zu pods seed %" PRIu64 " kinds %#x: claims %zu cost %.4f hash %016" PRIx64 "\n", n_pods, seed,
           kinds, f.claims, f.cost, f.hash);
    ns_sched_result_free(&r);
    ns_cluster_free(c);
    ns_itype_set_free(&set);
    return f;
}

static void check_workload(size_t n_pods, uint64_t seed, unsigned kinds, size_t claims, double cost, uint64_t hash)
{
    fingerprint f = run_workload(n_pods, seed, kinds);
    ck_assert_uint_eq(f.claims, claims);
    ck_assert_msg(fabs(f.cost - cost) < 1e-3, "cost %.4f, expected %.4f", f.cost, cost);
    ck_assert_msg(f.hash == hash, "placement hash %016" PRIx64 ", expected %016" PRIx64, f.hash, hash);
}

START_TEST(benchmark_1000_pods_seed_42)
{
    check_workload(1000, 42, 0x1f, 200, 22.2327, UINT64_C(0xa0c9ab5ed015d649));
}
END_TEST

START_TEST(benchmark_3000_pods_seed_7)
{
    check_workload(3000, 7, 0x1f, 600, 71.7735, UINT64_C(0x8fff5b06c8c79a76));
}
END_TEST

START_TEST(benchmark_6000_pods_seed_1234)
{
    check_workload(6000, 1234, 0x1f, 1200, 155.6681, UINT64_C(0xb5c2b45b827bb7d2));
}
END_TEST

/* Without the anti-affinity fifth, claims are opened by spread and affinity pods and packing decides the count. */
START_TEST(benchmark_4000_pods_without_anti_affinity)
{
    check_workload(4000, 99, 0x0f, 69, 64.2306, UINT64_C(0x826f74a1a7465734));
}
END_TEST

/* Only spread and anti-affinity: the fifths whose constraints block claims for good. */
START_TEST(benchmark_5000_pods_spread_and_anti_affinity)
{
    check_workload(5000, 5, 0x16, 1000, 80.3274, UINT64_C(0x36077413f6243f3d));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sched-decisions");
    TCase *tc = tcase_create("benchmark");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, benchmark_1000_pods_seed_42);
    tcase_add_test(tc, benchmark_3000_pods_seed_7);
    tcase_add_test(tc, benchmark_6000_pods_seed_1234);
    tcase_add_test(tc, benchmark_4000_pods_without_anti_affinity);
    tcase_add_test(tc, benchmark_5000_pods_spread_and_anti_affinity);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
