/*
 * NodePool limits as Karpenter 1.14 counts them (Scheduler.updateRemainingResources over the cluster state's active
 * nodes, and resources.Node for limits.nodes): Nodes and NodeClaims that have no Node yet both use the pool's
 * limits, a claim with its Node counts once, a deleting one not at all; `limits.nodes` caps how many nodes the pool
 * has, the round's new claims included.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "model/labels.h"
#include "model/resources.h"
#include "sched_test_util.h"

/* Pool "default" limited to 10 cpu; std_types: small 2, medium 4, large 8 cpu. */
static ns_nodepool *limited_pool(sched_env *e)
{
    sched_env_init(e, true);
    ns_nodepool *np = fx_pool(e->c, "default", 0, "");
    np->limits.cpu = true;
    np->limits.max.cpu_milli = 10000;
    return np;
}

START_TEST(a_nodeclaim_without_a_node_uses_the_limits)
{
    sched_env e;
    limited_pool(&e);
    fx_nodeclaim(e.c, "default-abcde", "default", 8000, "sim:///i-1", NULL);
    fx_pod(e.c, "needs-medium", 3000, FX_GI, "");
    fx_pod(e.c, "fits-small", 1000, FX_GI, "");
    sched_env_run(&e);
    /* 2 cpu remain: only small fits under the limit. */
    const char *why = fx_reason(e.c, &e.r, "needs-medium");
    ck_assert_msg(why && strstr(why, "limits"), "reason: %s", why ? why : "(scheduled)");
    const ns_sched_claim *cl = fx_claim_of(e.c, &e.r, "fits-small");
    ck_assert_ptr_nonnull(cl);
    for (size_t i = 0; i < cl->n_options; i++)
        ck_assert_str_eq(cl->options[i].type->name, "small");
    sched_env_free(&e);
}
END_TEST

START_TEST(a_nodeclaim_with_its_node_counts_once)
{
    sched_env e;
    limited_pool(&e);
    ns_node *n = fx_node(e.c, "node-1", 8000, 16 * FX_GI, 110, NS_LABEL_NODEPOOL "=default");
    n->provider_id = strdup("sim:///i-1");
    n->unschedulable = true; /* the pod must go on a new claim */
    fx_nodeclaim(e.c, "default-abcde", "default", 8000, "sim:///i-1", "node-1");
    fx_pod(e.c, "p", 1500, FX_GI, "");
    sched_env_run(&e);
    ck_assert_msg(fx_claim_of(e.c, &e.r, "p") != NULL, "reason: %s", fx_reason(e.c, &e.r, "p"));
    sched_env_free(&e);
}
END_TEST

START_TEST(a_deleting_nodeclaim_is_not_counted)
{
    sched_env e;
    limited_pool(&e);
    fx_nodeclaim(e.c, "default-abcde", "default", 8000, "sim:///i-1", NULL)->meta.deletion_ms = 1;
    fx_pod(e.c, "needs-medium", 3000, FX_GI, "");
    sched_env_run(&e);
    ck_assert_ptr_nonnull(fx_claim_of(e.c, &e.r, "needs-medium"));
    sched_env_free(&e);
}
END_TEST

/* Karpenter's "should not schedule if limits would be exceeded (node)": pods that each need their own node. */
static void nodes_limited(sched_env *e, int existing_claims, int pods)
{
    sched_env_init(e, true);
    ns_nodepool *np = fx_pool(e->c, "default", 0, "");
    ck_assert_int_eq(ns_res_set(&np->limits.max, "nodes", 2), 0);
    for (int i = 0; i < existing_claims; i++) {
        char name[32], id[32];
        snprintf(name, sizeof(name), "default-claim%d", i);
        snprintf(id, sizeof(id), "sim:///i-%d", i);
        fx_nodeclaim(e->c, name, "default", 2000, id, NULL);
    }
    for (int i = 0; i < pods; i++) {
        char name[16];
        snprintf(name, sizeof(name), "foo-%d", i);
        fx_pod_affinity(fx_pod(e->c, name, 1500, FX_GI, "app=foo"), NS_LABEL_HOSTNAME, "app=foo", true, 0);
    }
    sched_env_run(e);
}

START_TEST(limits_nodes_counts_existing_claims)
{
    sched_env e;
    nodes_limited(&e, 1, 1);
    ck_assert_uint_eq(e.r.n_claims, 1);
    sched_env_free(&e);
    nodes_limited(&e, 2, 1);
    ck_assert_uint_eq(e.r.n_claims, 0);
    const char *why = fx_reason(e.c, &e.r, "foo-0");
    ck_assert_msg(why && strstr(why, "node limits have been exhausted"), "reason: %s", why ? why : "(scheduled)");
    sched_env_free(&e);
}
END_TEST

START_TEST(limits_nodes_counts_the_rounds_new_claims)
{
    sched_env e;
    nodes_limited(&e, 0, 3);
    ck_assert_uint_eq(e.r.n_claims, 2);
    ck_assert_uint_eq(e.r.n_unschedulable, 1);
    sched_env_free(&e);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sched-limits");
    TCase *tc = tcase_create("limits");
    tcase_add_test(tc, a_nodeclaim_without_a_node_uses_the_limits);
    tcase_add_test(tc, a_nodeclaim_with_its_node_counts_once);
    tcase_add_test(tc, a_deleting_nodeclaim_is_not_counted);
    tcase_add_test(tc, limits_nodes_counts_existing_claims);
    tcase_add_test(tc, limits_nodes_counts_the_rounds_new_claims);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
