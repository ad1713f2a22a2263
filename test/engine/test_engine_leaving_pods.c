/* Capacity for the pods of a deleting node (issue 10 rule 9), as Karpenter's provisioner decides it: it plans for the
 * pods of deleting nodes that pdb.Limits.IsCurrentlyReschedulable accepts, so a pod that no eviction will ever move
 * (do-not-disrupt, two budgets, a budget allowing no voluntary eviction) gets no node that would stay empty. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "engine_fixture.h"
#include "errors/ns_error.h"

#define WEB_DEPLOYMENT                                                                                                 \
    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 2\n"                             \
    "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n" EFX_TOLERATE \
    "      containers: [{name: c, resources: {requests: {cpu: '1', memory: 1Gi}}}]\n"

/* A PodDisruptionBudget named `name` over the web pods with one spec line (minAvailable or maxUnavailable). */
#define PDB(name, line)                                                                                                \
    "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: " name "}\nspec:\n  " line "\n"           \
    "  selector: {matchLabels: {app: web}}\n"

static bool all_bound(efx *x)
{
    return efx_pending(x) == 0 && efx_bound(x) > 0 && efx_initialized(x) == x->cluster->n_nodeclaims;
}

/* The workload running on one node, whose claim is then deleted by hand (a forceful deletion: the drain starts at
 * once) and left to the controllers for a minute. Returns the claim's name in claim. */
static efx *deleted_for_a_minute(const char *extra, char *claim, size_t len)
{
    efx *x = efx_new(EFX_BASE, extra, NULL);
    ck_assert(efx_run_until(x, all_bound, EFX_S(120)));
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 1);
    snprintf(claim, len, "%s", efx_claim(x, 0)->meta.name);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_CREATED_NODECLAIM, NULL), 1);
    ns_nodeclaim *c = ns_cluster_find_nodeclaim(x->cluster, claim);
    ck_assert_int_eq(ns_engine_delete_claim(x->engine, c, "test", "Manual"), NS_OK);
    efx_run_for(x, EFX_S(60));
    return x;
}

/* Budgets that no eviction can ever get past: no replacement is created, the pods stay on the draining node. */
static void check_no_capacity(const char *extra)
{
    char a[128];
    efx *x = deleted_for_a_minute(extra, a, sizeof(a));
    ck_assert_msg(efx_count(x, NS_DECISION_CREATED_NODECLAIM, NULL) == 1, "a replacement was created for %s", extra);
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 1);
    ck_assert(ns_claim_deleting(ns_cluster_find_nodeclaim(x->cluster, a)));
    ck_assert_uint_eq(efx_pods_on(x, a), 2);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_EVICTED_POD, NULL), 0);
    ck_assert_uint_ge(efx_count(x, NS_DECISION_EVICTION_BLOCKED, NULL), 1);
    efx_free(x);
}

START_TEST(test_fully_blocking_budgets_get_no_capacity)
{
    /* Karpenter's isFullyBlocking: maxUnavailable 0 or "0%", minAvailable "100%". */
    check_no_capacity(WEB_DEPLOYMENT PDB("web", "maxUnavailable: 0"));
    check_no_capacity(WEB_DEPLOYMENT PDB("web", "maxUnavailable: 0%"));
    check_no_capacity(WEB_DEPLOYMENT PDB("web", "minAvailable: 100%"));
    /* Two budgets over the same pods, each allowing an eviction: the Eviction API refuses the pod for ever. */
    check_no_capacity(WEB_DEPLOYMENT PDB("web", "maxUnavailable: 1") PDB("web-too", "maxUnavailable: 1"));
}
END_TEST

START_TEST(test_blocking_now_is_not_fully_blocking)
{
    /* minAvailable 2 of 2 blocks every eviction today but is a count, not "100%": Karpenter plans capacity for the
     * pods (the budget would let them go once more replicas run), so a replacement comes and the pods stay blocked
     * on the old node. */
    char a[128];
    efx *x = deleted_for_a_minute(WEB_DEPLOYMENT PDB("web", "minAvailable: 2"), a, sizeof(a));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_CREATED_NODECLAIM, NULL), 2);
    ck_assert_uint_eq(efx_pods_on(x, a), 2);
    efx_free(x);

    /* maxUnavailable 1: the pods move to the replacement one at a time and the node goes. */
    x = deleted_for_a_minute(WEB_DEPLOYMENT PDB("web", "maxUnavailable: 1"), a, sizeof(a));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_CREATED_NODECLAIM, NULL), 2);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_EVICTED_POD, a), 2);
    ck_assert_ptr_null(ns_cluster_find_nodeclaim(x->cluster, a));
    efx_free(x);
}
END_TEST

START_TEST(test_do_not_disrupt_pod_gets_no_capacity)
{
    /* Two bare pods that each need a node of their own; only the one free to leave gets a replacement. */
    static const char extra[] =
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: pinned\n  annotations: {karpenter.sh/do-not-disrupt: 'true'}\n"
        "spec:\n" EFX_POD_TOLERATE "  containers: [{name: c, resources: {requests: {cpu: '1'}}}]\n"
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: free}\nspec:\n" EFX_POD_TOLERATE
        "  containers: [{name: c, resources: {requests: {cpu: '1'}}}]\n";
    char a[128];
    efx *x = deleted_for_a_minute(extra, a, sizeof(a));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_CREATED_NODECLAIM, NULL), 2);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_EVICTED_POD, "default/free"), 1);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_EVICTION_BLOCKED, "default/pinned"), 1);
    ns_pod *pinned = ns_cluster_find_pod(x->cluster, "default", "pinned");
    ck_assert_ptr_nonnull(pinned);
    ck_assert_str_eq(pinned->node_name, a);
    /* Once the pinned pod is gone, the node drains and nothing more is created. */
    ck_assert_int_eq(ns_engine_delete_pod(x->engine, "default", "pinned"), NS_OK);
    efx_run_for(x, EFX_S(60));
    ck_assert_ptr_null(ns_cluster_find_nodeclaim(x->cluster, a));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_CREATED_NODECLAIM, NULL), 2);
    efx_free(x);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("engine-leaving_pods");
    TCase *tc = tcase_create("leaving_pods");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_fully_blocking_budgets_get_no_capacity);
    tcase_add_test(tc, test_blocking_now_is_not_fully_blocking);
    tcase_add_test(tc, test_do_not_disrupt_pod_gets_no_capacity);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
