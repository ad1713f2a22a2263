/*
 * Karpenter's MIN_VALUES_POLICY and PREFERENCE_POLICY, each case from Karpenter 1.14's provisioning suite
 * (pkg/controllers/provisioning/suite_test.go, "MinValuesPolicy" and "Ignore Preferences") and run under both values
 * of the policy: the default must decide as before, the other as Karpenter does with it.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "errors/ns_error.h"
#include "model/labels.h"
#include "sched_test_util.h"

static void run_with(sched_env *e, ns_sched_min_values_policy mv, ns_sched_preference_policy pref)
{
    const ns_itype_set *all[8];
    for (size_t i = 0; i < e->c->n_nodepools && i < 8; i++)
        all[i] = &e->set;
    ns_sched_input in = {.cluster = e->c, .pool_types = all, .min_values_policy = mv, .preference_policy = pref};
    ck_assert_msg(ns_sched_run(&in, &e->r) == NS_OK, "%s", ns_error_message());
}

static const ns_requirement *claim_req(const ns_sched_claim *cl, const char *key)
{
    return ns_requirements_get(&cl->requirements, key);
}

/* Two arm64 types where the pool asks for three instance types at least ("should not schedule when minValues
 * requirement is not met" / "should schedule even when minValues requirement is not met"). */
static void two_types_pool_asks_three(sched_env *e)
{
    sched_env_init(e, false);
    fx_type(&e->set, "instance-type-1", 4000, 4 * FX_GI, 20, "kubernetes.io/arch=arm64", "test-zone-1:spot:0.52");
    fx_type(&e->set, "instance-type-2", 4000, 4 * FX_GI, 20, "kubernetes.io/arch=arm64", "test-zone-2:spot:0.52");
    fx_pool(e->c, "default", 100,
            "node.kubernetes.io/instance-type In instance-type-1|instance-type-2|instance-type-3 minValues=3");
    fx_pod(e->c, "pod", 900, 900 * FX_MI, "");
}

START_TEST(strict_leaves_the_pod_unschedulable)
{
    sched_env e;
    two_types_pool_asks_three(&e);
    run_with(&e, NS_SCHED_MIN_VALUES_STRICT, NS_SCHED_PREFERENCES_RESPECT);
    const char *why = fx_reason(e.c, &e.r, "pod");
    ck_assert_msg(why && strstr(why, "minValues 3"), "reason: %s", why ? why : "(placed)");
    ck_assert_uint_eq(e.r.n_claims, 0);
    sched_env_free(&e);
}
END_TEST

START_TEST(best_effort_lowers_min_values_to_what_is_left)
{
    sched_env e;
    two_types_pool_asks_three(&e);
    run_with(&e, NS_SCHED_MIN_VALUES_BEST_EFFORT, NS_SCHED_PREFERENCES_RESPECT);
    const ns_sched_claim *cl = fx_claim_of(e.c, &e.r, "pod");
    ck_assert_ptr_nonnull(cl);
    ck_assert(cl->min_values_relaxed);
    const ns_requirement *r = claim_req(cl, NS_LABEL_INSTANCE_TYPE);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->min_values, 2);
    ck_assert_uint_eq(cl->n_types, 2);
    sched_env_free(&e);
}
END_TEST

/* A claim whose types keep minValues is not marked relaxed, and keeps the minValues asked for. */
START_TEST(best_effort_leaves_a_satisfied_claim_alone)
{
    sched_env e;
    sched_env_init(&e, true);
    fx_pool(e.c, "default", 0, "node.kubernetes.io/instance-type In small|medium|large minValues=2");
    fx_pod(e.c, "pod", 500, FX_GI, "");
    run_with(&e, NS_SCHED_MIN_VALUES_BEST_EFFORT, NS_SCHED_PREFERENCES_RESPECT);
    const ns_sched_claim *cl = fx_claim_of(e.c, &e.r, "pod");
    ck_assert_ptr_nonnull(cl);
    ck_assert(!cl->min_values_relaxed);
    ck_assert_int_eq(claim_req(cl, NS_LABEL_INSTANCE_TYPE)->min_values, 2);
    sched_env_free(&e);
}
END_TEST

/* "should relax minValues before falling back to other nodepools": the heavier pool takes the pod under BestEffort;
 * under Strict it goes to the lighter pool. */
START_TEST(best_effort_relaxes_before_falling_back_to_another_pool)
{
    for (int best_effort = 0; best_effort < 2; best_effort++) {
        sched_env e;
        two_types_pool_asks_three(&e);
        fx_pool(e.c, "fallback", 10, "");
        run_with(&e, best_effort ? NS_SCHED_MIN_VALUES_BEST_EFFORT : NS_SCHED_MIN_VALUES_STRICT,
                 NS_SCHED_PREFERENCES_RESPECT);
        const ns_sched_claim *cl = fx_claim_of(e.c, &e.r, "pod");
        ck_assert_ptr_nonnull(cl);
        ck_assert_str_eq(e.c->nodepools[cl->nodepool]->meta.name, best_effort ? "default" : "fallback");
        ck_assert(cl->min_values_relaxed == (best_effort == 1));
        sched_env_free(&e);
    }
}
END_TEST

/* One 2-cpu pod pinned to z-a, two 3-cpu pods pinned to z-b, and a 1-cpu pod with a preference for z-b (a preferred
 * node-affinity term, or a preferred pod-affinity term towards the z-b pods): respected, it joins the z-b claim;
 * ignored, it goes to the claim with the fewest pods, z-a's ("should ignore node affinity preferences", "should
 * ignore pod affinity preferences"). */
static const char *preference_pod_zone(ns_sched_preference_policy pref, bool pod_affinity, const char *key)
{
    static char zone[32];
    sched_env e;
    sched_env_init(&e, true);
    fx_pool(e.c, "default", 0, "");
    fx_pod_selector(fx_pod(e.c, "zone1", 2000, FX_GI, "app=foo"), "topology.kubernetes.io/zone=z-a");
    fx_pod_selector(fx_pod(e.c, "zone2-0", 3000, FX_GI, "app=bar"), "topology.kubernetes.io/zone=z-b");
    fx_pod_selector(fx_pod(e.c, "zone2-1", 3000, FX_GI, "app=bar"), "topology.kubernetes.io/zone=z-b");
    ns_pod *p = fx_pod(e.c, "preferring", 1000, FX_GI, "app=baz");
    if (pod_affinity)
        fx_pod_affinity(p, key, "app=bar", false, 1);
    else
        fx_pod_preferred(p, 1, "topology.kubernetes.io/zone In z-b");
    run_with(&e, NS_SCHED_MIN_VALUES_STRICT, pref);
    ck_assert_uint_eq(e.r.n_unschedulable, 0);
    const ns_sched_claim *mine = fx_claim_of(e.c, &e.r, "preferring");
    ck_assert_ptr_nonnull(mine);
    ck_assert_ptr_eq(mine, fx_claim_of(e.c, &e.r, pref == NS_SCHED_PREFERENCES_IGNORE ? "zone1" : "zone2-0"));
    snprintf(zone, sizeof(zone), "%s", fx_claim_zone(mine) ? fx_claim_zone(mine) : "");
    sched_env_free(&e);
    return zone;
}

START_TEST(ignore_node_affinity_preferences)
{
    ck_assert_str_eq(preference_pod_zone(NS_SCHED_PREFERENCES_RESPECT, false, NULL), "z-b");
    ck_assert_str_eq(preference_pod_zone(NS_SCHED_PREFERENCES_IGNORE, false, NULL), "z-a");
}
END_TEST

START_TEST(ignore_pod_affinity_preferences)
{
    const char *key = _i ? NS_LABEL_HOSTNAME : NS_LABEL_ZONE;
    ck_assert_str_eq(preference_pod_zone(NS_SCHED_PREFERENCES_RESPECT, true, key), "z-b");
    ck_assert_str_eq(preference_pod_zone(NS_SCHED_PREFERENCES_IGNORE, true, key), "z-a");
}
END_TEST

/* Five pods with a ScheduleAnyway spread, or a preferred anti-affinity to each other, on zone or hostname: respected
 * they go to separate nodes; ignored, all on one ("should ignore topologySpreadConstraint preferences", "should
 * ignore pod anti-affinity preferences"). */
static size_t claims_for_five(ns_sched_preference_policy pref, bool anti, const char *key)
{
    sched_env e;
    sched_env_init(&e, true);
    fx_pool(e.c, "default", 0, "");
    for (int i = 0; i < 5; i++) {
        char name[8];
        snprintf(name, sizeof(name), "p%d", i);
        ns_pod *p = fx_pod(e.c, name, 100, 128 * FX_MI, "app=foo");
        if (anti)
            fx_pod_affinity(p, key, "app=foo", true, 1);
        else
            fx_pod_spread(p, key, 1, true, "app=foo");
    }
    run_with(&e, NS_SCHED_MIN_VALUES_STRICT, pref);
    ck_assert_uint_eq(e.r.n_unschedulable, 0);
    size_t n = e.r.n_claims;
    sched_env_free(&e);
    return n;
}

/* Preferred anti-affinity on zone is left out: respected, nodesmith already puts the five pods on one claim there
 * (Karpenter spreads the first three over the zones before relaxing the others), so Ignore would change nothing. */
static const struct {
    bool anti;
    const char *key;
} FIVE[] = {{false, NS_LABEL_ZONE}, {false, NS_LABEL_HOSTNAME}, {true, NS_LABEL_HOSTNAME}};

START_TEST(ignore_spread_and_anti_affinity_preferences)
{
    ck_assert_uint_gt(claims_for_five(NS_SCHED_PREFERENCES_RESPECT, FIVE[_i].anti, FIVE[_i].key), 1);
    ck_assert_uint_eq(claims_for_five(NS_SCHED_PREFERENCES_IGNORE, FIVE[_i].anti, FIVE[_i].key), 1);
}
END_TEST

/* Ignore leaves required terms alone: a required anti-affinity on hostname still puts each pod on its own node. */
START_TEST(ignore_keeps_required_terms)
{
    sched_env e;
    sched_env_init(&e, true);
    fx_pool(e.c, "default", 0, "");
    for (int i = 0; i < 3; i++) {
        char name[8];
        snprintf(name, sizeof(name), "p%d", i);
        fx_pod_affinity(fx_pod(e.c, name, 100, 128 * FX_MI, "app=foo"), NS_LABEL_HOSTNAME, "app=foo", true, 0);
    }
    run_with(&e, NS_SCHED_MIN_VALUES_STRICT, NS_SCHED_PREFERENCES_IGNORE);
    ck_assert_uint_eq(e.r.n_claims, 3);
    sched_env_free(&e);
}
END_TEST

START_TEST(policy_names)
{
    ns_sched_min_values_policy mv;
    ns_sched_preference_policy pref;
    ck_assert_int_eq(ns_sched_min_values_policy_parse("BestEffort", &mv), NS_OK);
    ck_assert_int_eq(mv, NS_SCHED_MIN_VALUES_BEST_EFFORT);
    ck_assert_int_eq(ns_sched_min_values_policy_parse("Strict", &mv), NS_OK);
    ck_assert_int_eq(mv, NS_SCHED_MIN_VALUES_STRICT);
    ck_assert_int_eq(ns_sched_preference_policy_parse("Ignore", &pref), NS_OK);
    ck_assert_int_eq(pref, NS_SCHED_PREFERENCES_IGNORE);
    /* Karpenter compares the exact spelling. */
    ck_assert_int_eq(ns_sched_min_values_policy_parse("besteffort", &mv), NS_ERR_INVALID_CONFIG);
    ck_assert_ptr_nonnull(strstr(ns_error_message(), "Strict or BestEffort"));
    ck_assert_int_eq(ns_sched_preference_policy_parse("ignore", &pref), NS_ERR_INVALID_CONFIG);
    ck_assert_ptr_nonnull(strstr(ns_error_message(), "Respect or Ignore"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sched-policies");
    TCase *tc = tcase_create("policies");
    tcase_add_test(tc, strict_leaves_the_pod_unschedulable);
    tcase_add_test(tc, best_effort_lowers_min_values_to_what_is_left);
    tcase_add_test(tc, best_effort_leaves_a_satisfied_claim_alone);
    tcase_add_test(tc, best_effort_relaxes_before_falling_back_to_another_pool);
    tcase_add_test(tc, ignore_node_affinity_preferences);
    tcase_add_loop_test(tc, ignore_pod_affinity_preferences, 0, 2);
    tcase_add_loop_test(tc, ignore_spread_and_anti_affinity_preferences, 0, sizeof(FIVE) / sizeof(FIVE[0]));
    tcase_add_test(tc, ignore_keeps_required_terms);
    tcase_add_test(tc, policy_names);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
