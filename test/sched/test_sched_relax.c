/* Karpenter's relaxation order: each step with a case where keeping the preference, or ignoring it from the start,
 * gives the wrong answer. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/labels.h"
#include "sched_test_util.h"

static const char *pool_of(const sched_env *e, const char *pod)
{
    const ns_sched_claim *c = fx_claim_of(e->c, &e->r, pod);
    return c ? e->c->nodepools[c->nodepool]->meta.name : NULL;
}

START_TEST(required_terms_are_tried_in_turn)
{
    sched_env e;
    sched_env_init(&e, true);
    fx_pool(e.c, "default", 0, "");
    ns_pod *p = fx_pod(e.c, "p", 500, FX_GI, "");
    fx_pod_required(p, "kubernetes.io/arch In arm64");
    fx_pod_required(p, "kubernetes.io/arch In amd64;topology.kubernetes.io/zone In z-c");
    fx_run(e.c, &e.set, NULL, &e.r);
    ck_assert_uint_eq(e.r.n_unschedulable, 0);
    ck_assert_str_eq(fx_claim_zone(fx_claim_of(e.c, &e.r, "p")), "z-c");
    sched_env_free(&e);
}
END_TEST

START_TEST(preferred_node_affinity_is_honoured_when_possible)
{
    sched_env e;
    sched_env_init(&e, true);
    fx_pool(e.c, "default", 0, "");
    /* The cheapest zone is z-a; the heaviest preference wins over a lighter one and over price. */
    ns_pod *p = fx_pod(e.c, "p", 500, FX_GI, "");
    fx_pod_preferred(p, 10, "topology.kubernetes.io/zone In z-c");
    fx_pod_preferred(p, 50, "topology.kubernetes.io/zone In z-b");
    fx_run(e.c, &e.set, NULL, &e.r);
    ck_assert_str_eq(fx_claim_zone(fx_claim_of(e.c, &e.r, "p")), "z-b");
    sched_env_free(&e);
}
END_TEST

START_TEST(preferred_node_affinity_relaxes_heaviest_first)
{
    sched_env e;
    sched_env_init(&e, true);
    fx_pool(e.c, "default", 0, "");
    ns_pod *p = fx_pod(e.c, "p", 500, FX_GI, "");
    fx_pod_preferred(p, 90, "kubernetes.io/arch In arm64");
    fx_pod_preferred(p, 20, "topology.kubernetes.io/zone In z-c");
    fx_run(e.c, &e.set, NULL, &e.r);
    /* arm64 is impossible: dropping it, the lighter zone preference still applies. */
    ck_assert_str_eq(fx_claim_zone(fx_claim_of(e.c, &e.r, "p")), "z-c");
    sched_env_free(&e);
}
END_TEST

START_TEST(preferred_anti_affinity_is_honoured_then_dropped)
{
    sched_env e;
    sched_env_init(&e, true);
    ns_nodepool *np = fx_pool(e.c, "default", 0, "");
    np->limits.cpu = true;
    np->limits.max.cpu_milli = 16000;
    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof(name), "w%d", i);
        ns_pod *p = fx_pod(e.c, name, 200, FX_GI, "app=w");
        fx_pod_affinity(p, NS_LABEL_HOSTNAME, "app=w", true, 100);
    }
    fx_run(e.c, &e.set, NULL, &e.r);
    /* Two claims charge 8 cpu each against the 16-cpu limit; the third pod gives up its preference and joins. */
    ck_assert_uint_eq(e.r.n_unschedulable, 0);
    ck_assert_uint_eq(e.r.n_claims, 2);
    sched_env_free(&e);
}
END_TEST

START_TEST(preferred_pod_affinity_is_relaxed)
{
    sched_env e;
    sched_env_init(&e, true);
    fx_pool(e.c, "default", 0, "");
    ns_pod *p = fx_pod(e.c, "lonely", 500, FX_GI, "app=a");
    fx_pod_affinity(p, NS_LABEL_ZONE, "app=missing", false, 50);
    fx_run(e.c, &e.set, NULL, &e.r);
    ck_assert_uint_eq(e.r.n_unschedulable, 0);
    sched_env_free(&e);
}
END_TEST

START_TEST(required_pod_affinity_is_not_relaxed)
{
    sched_env e;
    sched_env_init(&e, true);
    fx_pool(e.c, "default", 0, "");
    ns_pod *p = fx_pod(e.c, "lonely", 500, FX_GI, "app=a");
    fx_pod_affinity(p, NS_LABEL_ZONE, "app=missing", false, 0);
    fx_run(e.c, &e.set, NULL, &e.r);
    const char *why = fx_reason(e.c, &e.r, "lonely");
    ck_assert_ptr_nonnull(why);
    ck_assert_msg(strstr(why, "pod affinity") != NULL, "reason: %s", why);
    sched_env_free(&e);
}
END_TEST

static void spread_pair(sched_env *e, bool anyway)
{
    ns_nodepool *np = fx_pool(e->c, "default", 0, "");
    np->limits.cpu = true;
    np->limits.max.cpu_milli = 8000;
    for (int i = 0; i < 2; i++) {
        char name[16];
        snprintf(name, sizeof(name), "s%d", i);
        ns_pod *p = fx_pod(e->c, name, 500, FX_GI, "app=s");
        fx_pod_spread(p, NS_LABEL_HOSTNAME, 1, anyway, "app=s");
    }
    fx_run(e->c, &e->set, NULL, &e->r);
}

START_TEST(schedule_anyway_spread_is_relaxed)
{
    sched_env e;
    sched_env_init(&e, true);
    spread_pair(&e, true);
    ck_assert_uint_eq(e.r.n_unschedulable, 0);
    ck_assert_uint_eq(e.r.n_claims, 1);
    ck_assert_uint_eq(e.r.claims[0].n_pods, 2);
    sched_env_free(&e);
}
END_TEST

START_TEST(do_not_schedule_spread_is_kept)
{
    sched_env e;
    sched_env_init(&e, true);
    spread_pair(&e, false);
    ck_assert_uint_eq(e.r.n_unschedulable, 1);
    sched_env_free(&e);
}
END_TEST

/* Karpenter relaxes ScheduleAnyway spreads and preferred terms away when they cannot be met, on any key: they never
 * make a pod unschedulable (Preferences.Relax). A required spread on another key than zone and hostname is met like
 * any other (test_sched_topology_keys.c). */
START_TEST(soft_terms_on_other_keys_never_block)
{
    sched_env e;
    sched_env_init(&e, true);
    fx_pool(e.c, "default", 0, "");
    ns_pod *p = fx_pod(e.c, "soft", 500, FX_GI, "app=x");
    fx_pod_spread(p, "karpenter.sh/capacity-type", 1, true, "app=x");
    fx_pod_affinity(p, "kubernetes.io/arch", "app=x", true, 10);
    fx_pod_affinity(p, "example.com/rack", "app=x", false, 5);
    ns_pod *hard = fx_pod(e.c, "hard", 500, FX_GI, "app=y");
    fx_pod_spread(hard, "karpenter.sh/capacity-type", 1, false, "app=y");
    sched_env_run(&e);
    ck_assert_ptr_nonnull(fx_claim_of(e.c, &e.r, "soft"));
    ck_assert_uint_eq(e.r.n_unschedulable, 0);
    const ns_requirement *ct = ns_requirements_get(&fx_claim_of(e.c, &e.r, "hard")->requirements,
                                                   "karpenter.sh/capacity-type");
    ck_assert(ct && !ct->complement && ct->n_values == 1);
    sched_env_free(&e);
}
END_TEST

START_TEST(prefer_no_schedule_taint_blocks_first)
{
    sched_env e;
    sched_env_init(&e, true);
    ns_nodepool *preferred = fx_pool(e.c, "heavy", 50, "");
    fx_pool_taint(preferred, "spot-only", NULL, NS_EFFECT_PREFER_NO_SCHEDULE);
    fx_pool(e.c, "light", 1, "");
    fx_pod(e.c, "p", 500, FX_GI, "");
    fx_run(e.c, &e.set, NULL, &e.r);
    /* kube-scheduler would ignore PreferNoSchedule and pick the heavier pool; Karpenter avoids it while it can. */
    ck_assert_str_eq(pool_of(&e, "p"), "light");
    sched_env_free(&e);
}
END_TEST

START_TEST(prefer_no_schedule_taint_is_tolerated_last)
{
    sched_env e;
    sched_env_init(&e, true);
    ns_nodepool *only = fx_pool(e.c, "only", 0, "");
    fx_pool_taint(only, "maintenance", NULL, NS_EFFECT_PREFER_NO_SCHEDULE);
    fx_pod(e.c, "p", 500, FX_GI, "");
    fx_run(e.c, &e.set, NULL, &e.r);
    ck_assert_str_eq(pool_of(&e, "p"), "only");
    sched_env_free(&e);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sched-relax");
    TCase *tc = tcase_create("relax");
    tcase_add_test(tc, required_terms_are_tried_in_turn);
    tcase_add_test(tc, preferred_node_affinity_is_honoured_when_possible);
    tcase_add_test(tc, preferred_node_affinity_relaxes_heaviest_first);
    tcase_add_test(tc, preferred_anti_affinity_is_honoured_then_dropped);
    tcase_add_test(tc, preferred_pod_affinity_is_relaxed);
    tcase_add_test(tc, required_pod_affinity_is_not_relaxed);
    tcase_add_test(tc, schedule_anyway_spread_is_relaxed);
    tcase_add_test(tc, do_not_schedule_spread_is_kept);
    tcase_add_test(tc, soft_terms_on_other_keys_never_block);
    tcase_add_test(tc, prefer_no_schedule_taint_blocks_first);
    tcase_add_test(tc, prefer_no_schedule_taint_is_tolerated_last);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
