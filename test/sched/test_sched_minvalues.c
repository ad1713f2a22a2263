/*
 * minValues on any requirement key, including the two that are offerings rather than labels (zone and capacity
 * type): a claim keeps at least N distinct values of the key across its remaining launch options (its kept types'
 * offerings in the zones and capacity types it may still use), or it takes fewer pods, or the pod is unschedulable
 * with a reason naming the key and minValues. Counting zone and capacity type like labels, or not at all, gives the
 * wrong answer in each case below.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/labels.h"
#include "sched_test_util.h"

/* Distinct zones (zone true) or capacity types among a claim's launch options. */
static int distinct(const ns_sched_claim *cl, bool zone)
{
    const char *seen[16];
    int n = 0;
    for (size_t i = 0; i < cl->n_options; i++) {
        const char *v = zone ? cl->options[i].zone : cl->options[i].capacity_type;
        bool dup = false;
        for (int j = 0; j < n && !dup; j++)
            dup = strcmp(seen[j], v) == 0;
        if (!dup && n < 16)
            seen[n++] = v;
    }
    return n;
}

static void assert_reason(sched_env *e, const char *pod, const char *key, int min_values)
{
    const char *why = fx_reason(e->c, &e->r, pod);
    char want[128];
    snprintf(want, sizeof(want), "minValues %d distinct values of %s", min_values, key);
    ck_assert_msg(why != NULL, "pod %s was placed", pod);
    ck_assert_msg(strstr(why, want) != NULL, "reason: %s", why);
}

START_TEST(zone_min_values_against_a_pod_zone_selector)
{
    sched_env e;
    sched_env_init(&e, true);
    fx_pool(e.c, "default", 0, "topology.kubernetes.io/zone In z-a|z-b|z-c minValues=2");
    fx_pod_selector(fx_pod(e.c, "pinned", 500, FX_GI, ""), "topology.kubernetes.io/zone=z-a");
    fx_pod(e.c, "free", 500, FX_GI, "");
    sched_env_run(&e);
    /* Every type is offered in all three zones, but the pinned pod's claim could only launch in one. */
    assert_reason(&e, "pinned", NS_LABEL_ZONE, 2);
    const ns_sched_claim *cl = fx_claim_of(e.c, &e.r, "free");
    ck_assert_ptr_nonnull(cl);
    ck_assert_int_ge(distinct(cl, true), 2);
    sched_env_free(&e);
}
END_TEST

START_TEST(zone_min_values_against_zonal_topology_spread)
{
    sched_env e;
    sched_env_init(&e, true);
    fx_pool(e.c, "default", 0, "topology.kubernetes.io/zone Exists minValues=2");
    ns_pod *p = fx_pod(e.c, "spread", 500, FX_GI, "app=s");
    fx_pod_spread(p, NS_LABEL_ZONE, 1, false, "app=s");
    sched_env_run(&e);
    /* The spread constraint puts the claim in one zone, which leaves one zone among its options. */
    assert_reason(&e, "spread", NS_LABEL_ZONE, 2);
    sched_env_free(&e);
}
END_TEST

START_TEST(capacity_type_min_values_counts_offerings_left)
{
    sched_env e;
    sched_env_init(&e, false);
    /* On-demand only in z-a, spot only in z-b: the type has both capacity types, but not in the same zone. */
    fx_type(&e.set, "split", 4000, 8 * FX_GI, 20, "kubernetes.io/arch=amd64", "z-a:on-demand:0.2,z-b:spot:0.07");
    fx_pool(e.c, "default", 0, "karpenter.sh/capacity-type In spot|on-demand minValues=2");
    fx_pod_selector(fx_pod(e.c, "in-a", 500, FX_GI, ""), "topology.kubernetes.io/zone=z-a");
    fx_pod(e.c, "anywhere", 500, FX_GI, "");
    sched_env_run(&e);
    assert_reason(&e, "in-a", NS_LABEL_CAPACITY_TYPE, 2);
    const ns_sched_claim *cl = fx_claim_of(e.c, &e.r, "anywhere");
    ck_assert_ptr_nonnull(cl);
    ck_assert_int_eq(distinct(cl, false), 2);
    sched_env_free(&e);
}
END_TEST

START_TEST(capacity_type_min_values_limits_how_many_pods_a_claim_takes)
{
    sched_env e;
    sched_env_init(&e, false);
    /* Spot comes only with the big type, on-demand only with the small one. */
    fx_type(&e.set, "small-od", 2000, 4 * FX_GI, 20, "kubernetes.io/arch=amd64", "z-a:on-demand:0.1");
    fx_type(&e.set, "big-spot", 8000, 16 * FX_GI, 20, "kubernetes.io/arch=amd64", "z-a:spot:0.09");
    fx_pool(e.c, "default", 0, "karpenter.sh/capacity-type In spot|on-demand minValues=2");
    for (int i = 0; i < 3; i++) {
        char name[8];
        snprintf(name, sizeof(name), "p%d", i);
        fx_pod(e.c, name, 900, 512 * FX_MI, "app=p");
    }
    sched_env_run(&e);
    /* small-od holds two 900m pods; a third would leave big-spot alone and one capacity type. Packing all three on
     * one claim is the naive answer. */
    ck_assert_uint_eq(e.r.n_unschedulable, 0);
    ck_assert_uint_eq(e.r.n_claims, 2);
    for (size_t c = 0; c < e.r.n_claims; c++) {
        ck_assert_uint_le(e.r.claims[c].n_pods, 2);
        ck_assert_int_eq(distinct(&e.r.claims[c], false), 2);
    }
    sched_env_free(&e);
}
END_TEST

START_TEST(label_min_values_on_any_key)
{
    sched_env e;
    sched_env_init(&e, true);
    fx_type(&e.set, "c-large", 8000, 12 * FX_GI, 20, "kubernetes.io/arch=amd64,family=c", "z-a:on-demand:0.35");
    fx_pool(e.c, "default", 0, "family In m|c minValues=2");
    fx_pod(e.c, "fits-both", 1000, FX_GI, "");
    fx_pod(e.c, "fits-m-only", 7500, 15 * FX_GI, "");
    sched_env_run(&e);
    const ns_sched_claim *cl = fx_claim_of(e.c, &e.r, "fits-both");
    ck_assert_ptr_nonnull(cl);
    bool has_c = false;
    for (size_t i = 0; i < cl->n_options; i++)
        has_c = has_c || strcmp(cl->options[i].type->name, "c-large") == 0;
    ck_assert(has_c);
    /* 7500m leaves "large" (family m) and c-large (family c, 12Gi); 15Gi of memory leaves large only. */
    assert_reason(&e, "fits-m-only", "family", 2);
    sched_env_free(&e);
}
END_TEST

START_TEST(zone_min_values_satisfied_keeps_zones_in_options)
{
    sched_env e;
    sched_env_init(&e, false);
    fx_type(&e.set, "a-only", 2000, 4 * FX_GI, 20, "kubernetes.io/arch=amd64", "z-a:on-demand:0.05");
    fx_type(&e.set, "b-only", 2000, 4 * FX_GI, 20, "kubernetes.io/arch=amd64", "z-b:on-demand:0.08");
    fx_pool(e.c, "default", 0, "topology.kubernetes.io/zone In z-a|z-b minValues=2");
    fx_pod(e.c, "p", 500, FX_GI, "");
    sched_env_run(&e);
    const ns_sched_claim *cl = fx_claim_of(e.c, &e.r, "p");
    ck_assert_ptr_nonnull(cl);
    /* Each type alone has one zone; together the claim's options keep two. */
    ck_assert_int_eq(distinct(cl, true), 2);
    ck_assert_str_eq(cl->options[0].type->name, "a-only");
    sched_env_free(&e);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sched-minvalues");
    TCase *tc = tcase_create("minvalues");
    tcase_add_test(tc, zone_min_values_against_a_pod_zone_selector);
    tcase_add_test(tc, zone_min_values_against_zonal_topology_spread);
    tcase_add_test(tc, capacity_type_min_values_counts_offerings_left);
    tcase_add_test(tc, capacity_type_min_values_limits_how_many_pods_a_claim_takes);
    tcase_add_test(tc, label_min_values_on_any_key);
    tcase_add_test(tc, zone_min_values_satisfied_keeps_zones_in_options);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
