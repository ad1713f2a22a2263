/*
 * Static NodePools (spec.replicas) in the scheduler, as Karpenter 1.14 treats them: its NewScheduler filters static
 * pools out, so no pending pod gets a new claim of one and none of its reasons names one, while the nodes a static
 * pool already has take pods like any node; and a static pool's claims are built from its template alone
 * (scheduling.NewNodeClaimTemplate), with no pod and no request (ns_sched_static_claims).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "errors/ns_error.h"
#include "model/labels.h"
#include "sched_test_util.h"

static ns_nodepool *static_pool(ns_cluster *c, const char *name, int64_t replicas, const char *reqs)
{
    ns_nodepool *np = fx_pool(c, name, 0, reqs);
    np->has_replicas = true;
    np->replicas = replicas;
    return np;
}

START_TEST(a_static_pool_takes_no_pending_pod)
{
    sched_env e;
    sched_env_init(&e, true);
    static_pool(e.c, "fixed", 3, "");
    fx_pod(e.c, "p", 1000, FX_GI, "");
    sched_env_run(&e);
    ck_assert_uint_eq(e.r.n_claims, 0);
    const char *why = fx_reason(e.c, &e.r, "p");
    ck_assert_ptr_nonnull(why);
    ck_assert_msg(!strstr(why, "fixed"), "the reason names the static pool: %s", why);
    sched_env_free(&e);
}
END_TEST

/* Name order would put "zeta" first among equal weights; being static, it is skipped for the dynamic pool. */
START_TEST(pods_go_to_the_dynamic_pool)
{
    sched_env e;
    sched_env_init(&e, true);
    static_pool(e.c, "zeta", 2, "");
    fx_pool(e.c, "alpha", 0, "");
    fx_pod(e.c, "p", 1000, FX_GI, "");
    sched_env_run(&e);
    const ns_sched_claim *cl = fx_claim_of(e.c, &e.r, "p");
    ck_assert_ptr_nonnull(cl);
    ck_assert_str_eq(e.c->nodepools[cl->nodepool]->meta.name, "alpha");
    sched_env_free(&e);
}
END_TEST

START_TEST(a_static_pools_node_takes_pods)
{
    sched_env e;
    sched_env_init(&e, true);
    static_pool(e.c, "fixed", 1, "");
    fx_node(e.c, "fixed-node", 4000, 8 * FX_GI, 20, NS_LABEL_NODEPOOL "=fixed");
    fx_pod(e.c, "p", 1000, FX_GI, "");
    sched_env_run(&e);
    ck_assert_uint_eq(e.r.n_claims, 0);
    ck_assert_uint_eq(e.r.n_on_existing, 1);
    sched_env_free(&e);
}
END_TEST

static void run_static(sched_env *e, size_t pool, size_t count, int want_rc)
{
    const ns_itype_set *sets[8];
    for (size_t i = 0; i < e->c->n_nodepools && i < 8; i++)
        sets[i] = &e->set;
    ns_sched_input in = {.cluster = e->c, .pool_types = sets};
    int rc = ns_sched_static_claims(&in, pool, count, &e->r);
    ck_assert_msg(rc == want_rc, "rc %d: %s", rc, ns_error_message());
}

/* The template's claims: the pool's requirements, the types they allow (cheapest first), no pod, and no DaemonSet
 * overhead even where a DaemonSet would run (Karpenter's static claims carry no requests). */
START_TEST(static_claims_come_from_the_template)
{
    sched_env e;
    sched_env_init(&e, true);
    fx_pool(e.c, "dynamic", 0, "");
    static_pool(e.c, "fixed", 2, "node.kubernetes.io/instance-type In medium|large;karpenter.sh/capacity-type In on-demand");
    fx_daemonset(e.c, "agent", 500, FX_GI);
    fx_pod(e.c, "pending", 1000, FX_GI, "");
    run_static(&e, 1, 2, NS_OK);
    ck_assert_uint_eq(e.r.n_claims, 2);
    for (size_t i = 0; i < 2; i++) {
        const ns_sched_claim *cl = &e.r.claims[i];
        ck_assert_uint_eq(cl->nodepool, 1);
        ck_assert_uint_eq(cl->n_pods, 0);
        ck_assert(ns_res_is_zero(&cl->pod_requests));
        ck_assert(ns_res_is_zero(&cl->daemon_overhead));
        ck_assert_uint_eq(cl->n_types, 2);
        ck_assert_uint_gt(cl->n_options, 0);
        ck_assert_str_eq(cl->options[0].type->name, "medium");
        ck_assert_str_eq(cl->options[0].capacity_type, "on-demand");
        ck_assert_str_eq(cl->options[0].zone, "z-a");
        for (size_t o = 0; o < cl->n_options; o++)
            ck_assert_str_ne(cl->options[o].type->name, "small");
        const ns_requirement *pool = ns_requirements_get(&cl->requirements, NS_LABEL_NODEPOOL);
        ck_assert(pool && pool->n_values == 1);
        ck_assert_str_eq(pool->values[0], "fixed");
    }
    /* The pending pod is not scheduled by this call. */
    ck_assert_uint_eq(e.r.n_pending, 0);
    sched_env_free(&e);
}
END_TEST

START_TEST(a_static_pool_without_types_is_refused_by_name)
{
    sched_env e;
    sched_env_init(&e, true);
    static_pool(e.c, "fixed", 1, "node.kubernetes.io/instance-type In huge");
    run_static(&e, 0, 1, NS_ERR_INSUFFICIENT_CAPACITY);
    ck_assert_ptr_nonnull(strstr(ns_error_message(), "NodePool fixed: "));
    ck_assert_uint_eq(e.r.n_claims, 0);
    sched_env_free(&e);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sched-static");
    TCase *tc = tcase_create("static");
    tcase_add_test(tc, a_static_pool_takes_no_pending_pod);
    tcase_add_test(tc, pods_go_to_the_dynamic_pool);
    tcase_add_test(tc, a_static_pools_node_takes_pods);
    tcase_add_test(tc, static_claims_come_from_the_template);
    tcase_add_test(tc, a_static_pool_without_types_is_refused_by_name);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
