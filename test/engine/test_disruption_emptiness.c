/* Emptiness through the engine: a NodePool's consolidateAfter, and a v1alpha5 Provisioner's ttlSecondsAfterEmpty as
 * the loader converts it. Decisions asserted from the log; the invariants checked after every step. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "disruption_fixture.h"
#include "errors/ns_error.h"
#include "model/duration.h"

#define PROVISIONER(ttl_field)                                                                                         \
    "apiVersion: karpenter.sh/v1alpha5\nkind: Provisioner\nmetadata: {name: legacy}\nspec:\n"                         \
    "  requirements:\n" DFX_CAPACITY("on-demand") DFX_TYPES("m5.xlarge") "  providerRef: {name: default}\n"           \
    "  " ttl_field "\n---\n"                                                                                          \
    "apiVersion: karpenter.k8s.aws/v1alpha1\nkind: AWSNodeTemplate\nmetadata: {name: default}\nspec:\n"               \
    "  subnetSelector: {karpenter.sh/discovery: demo}\n  securityGroupSelector: {karpenter.sh/discovery: demo}\n---\n"

/* Scales `app` to zero and returns when that happened. */
static int64_t empty_it(efx *x, const char *app)
{
    dfx_scale(x, app, 0);
    return efx_now();
}

/* The one node was removed as empty between after_ms and after_ms + the stabilisation window (+ one tick) from
 * emptied; it had nothing to drain and nothing replaced it. */
static void removed_as_empty(efx *x, const char *claim, int64_t emptied, int64_t after_ms, size_t created_before)
{
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTING, NULL), 1);
    const ns_decision *d = dfx_nth_method(x, NS_DECISION_DISRUPTING, "empty", 0);
    ck_assert_str_eq(d->reason, "Empty");
    ck_assert_str_eq(d->nodeclaims, claim);
    ck_assert_int_ge(d->time_ms - emptied, after_ms + EFX_S(15));
    ck_assert_int_le(d->time_ms - emptied, after_ms + EFX_S(16));
    const ns_decision *info = efx_first(x, NS_DECISION_DISRUPTION_INFO, claim);
    ck_assert_ptr_nonnull(info);
    ck_assert_str_eq(info->method, "empty");
    ck_assert_str_eq(info->reason, "awaiting validation");
    ck_assert_int_eq(d->time_ms - info->time_ms, EFX_S(15));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_EVICTED_POD, NULL), 0);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_CREATED_NODECLAIM, NULL), created_before);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DELETED_NODE, claim), 1);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_TERMINATED_INSTANCE, claim), 1);
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 0);
    ck_assert_uint_eq(x->cluster->n_nodes, 0);
    ck_assert_uint_eq(efx_instances(x), 0);
}

START_TEST(test_consolidate_after)
{
    static const char yaml[] = DFX_CLASS("{}") DFX_POOL("", DFX_CAPACITY("on-demand") DFX_TYPES("m5.xlarge"),
                                                        "    consolidationPolicy: WhenEmpty\n    consolidateAfter: 2m\n")
        "---\n" DFX_DEPLOY("a", 2, "1500m", "1Gi", "");
    efx *x = dfx_new(yaml, NULL, false);
    dfx_settle(x, EFX_S(120));
    char claim[64];
    snprintf(claim, sizeof(claim), "%s", efx_claim(x, 0)->meta.name);
    size_t created = efx_count(x, NS_DECISION_CREATED_NODECLAIM, NULL);

    /* Empty for a minute, then a pod lands again: the node is not empty any more and the clock starts over. */
    empty_it(x, "a");
    efx_run_for(x, EFX_S(60));
    dfx_scale(x, "a", 1);
    efx_run_for(x, EFX_S(120));
    ck_assert_uint_eq(efx_pods_on(x, claim), 1);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTING, NULL), 0);

    int64_t emptied = empty_it(x, "a");
    efx_run_for(x, EFX_S(119));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTION_INFO, NULL), 0);
    ck_assert_ptr_nonnull(ns_cluster_find_nodeclaim(x->cluster, claim));
    efx_run_for(x, EFX_S(60));
    removed_as_empty(x, claim, emptied, EFX_S(120), created);
    efx_free(x);
}
END_TEST

START_TEST(test_provisioner_ttl_seconds_after_empty)
{
    static const char yaml[] = PROVISIONER("ttlSecondsAfterEmpty: 60") DFX_DEPLOY("a", 2, "1500m", "1Gi", "");
    efx *x = dfx_new(yaml, NULL, false);
    /* Converted as Karpenter's v1 conversion does: WhenEmpty after 60 s, never expiring, the default 10% budget. */
    const ns_nodepool *np = ns_cluster_find_nodepool(x->cluster, "legacy");
    ck_assert_ptr_nonnull(np);
    ck_assert(np->converted_from_provisioner);
    ck_assert_int_eq(np->consolidation_policy, NS_CONSOLIDATE_WHEN_EMPTY);
    ck_assert_int_eq(np->consolidate_after_ms, EFX_S(60));
    ck_assert_int_eq(np->expire_after_ms, NS_DURATION_NEVER);
    dfx_settle(x, EFX_S(120));
    char claim[64];
    snprintf(claim, sizeof(claim), "%s", efx_claim(x, 0)->meta.name);
    size_t created = efx_count(x, NS_DECISION_CREATED_NODECLAIM, NULL);
    /* A half-used node stays: the Provisioner never consolidates underutilized nodes. */
    dfx_scale(x, "a", 1);
    efx_run_for(x, EFX_S(600));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTING, NULL), 0);
    int64_t emptied = empty_it(x, "a");
    efx_run_for(x, EFX_S(59));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTION_INFO, NULL), 0);
    efx_run_for(x, EFX_S(60));
    removed_as_empty(x, claim, emptied, EFX_S(60), created);
    efx_free(x);
}
END_TEST

START_TEST(test_provisioner_without_ttl_keeps_empty_nodes)
{
    /* Neither ttlSecondsAfterEmpty nor consolidation: Karpenter's v1alpha5 never removed an empty node. */
    static const char yaml[] = PROVISIONER("weight: 1") DFX_DEPLOY("a", 2, "1500m", "1Gi", "");
    efx *x = dfx_new(yaml, NULL, false);
    ck_assert_int_eq(ns_cluster_find_nodepool(x->cluster, "legacy")->consolidate_after_ms, NS_DURATION_NEVER);
    dfx_settle(x, EFX_S(120));
    empty_it(x, "a");
    efx_run_for(x, EFX_S(1800));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTING, NULL), 0);
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 1);
    efx_free(x);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("disruption-emptiness");
    TCase *tc = tcase_create("emptiness");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, test_consolidate_after);
    tcase_add_test(tc, test_provisioner_ttl_seconds_after_empty);
    tcase_add_test(tc, test_provisioner_without_ttl_keeps_empty_nodes);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
