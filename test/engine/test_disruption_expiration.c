/* Expiration through the engine: a NodePool's expireAfter and a v1alpha5 Provisioner's ttlSecondsUntilExpired.
 * Forceful: budgets do not hold it back and do-not-disrupt pods do not block it, but they are only deleted once the
 * terminationGracePeriod has run out; the drain starts at once while the replacement comes up. Decisions asserted
 * from the log; the invariants checked after every step. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "disruption_fixture.h"
#include "errors/ns_error.h"
#include "model/labels.h"

/* A Job's pod that must not be disrupted (it comes back pending when deleted, as its Job would recreate it). */
#define BATCH_POD                                                                                                      \
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: batch\n  labels: {app: batch}\n"                                   \
    "  annotations: {karpenter.sh/do-not-disrupt: 'true'}\n"                                                           \
    "  ownerReferences: [{apiVersion: batch/v1, kind: Job, name: batch, uid: u1, controller: true}]\n"               \
    "spec:\n  containers: [{name: c, resources: {requests: {cpu: 500m, memory: 1Gi}}}]\n---\n"

static bool expired_decision(efx *x)
{
    return efx_count(x, NS_DECISION_DISRUPTING, NULL) > 0;
}

/* Runs until the claim expires; checks the decision and the claim's marks at that step. */
static const ns_decision *expire(efx *x, const char *claim, int64_t expire_after)
{
    const ns_nodeclaim *c = ns_cluster_find_nodeclaim(x->cluster, claim);
    int64_t created = c->meta.creation_ms;
    ck_assert_int_eq(c->expire_after_ms, expire_after);
    ck_assert(efx_run_until(x, expired_decision, expire_after + EFX_S(10)));
    const ns_decision *d = dfx_nth_method(x, NS_DECISION_DISRUPTING, "expired", 0);
    ck_assert_str_eq(d->reason, "Expired");
    ck_assert_str_eq(d->nodeclaims, claim);
    ck_assert_int_ge(d->time_ms - created, expire_after);
    ck_assert_int_le(d->time_ms - created, expire_after + EFX_S(1));
    /* Drained at once: a node whose pods could all leave is gone within the step. */
    c = ns_cluster_find_nodeclaim(x->cluster, claim);
    if (c) {
        ck_assert(ns_claim_deleting(c));
        ck_assert_str_eq(ns_labels_get(&c->meta.annotations, NS_ANNOTATION_DISRUPTION_FORCEFUL), "true");
        ck_assert(dfx_tainted(efx_node_of(x, c)));
    } else {
        ck_assert_str_eq(efx_first(x, NS_DECISION_DELETED_NODECLAIM, claim)->method, "expired");
    }
    ck_assert_uint_eq(efx_count(x, NS_DECISION_TAINTED_NODE, claim), 1);
    /* No stabilisation window and no validation for expiration. */
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTION_INFO, NULL), 0);
    return d;
}

/* The replacement: created after the expiration; the drain did not wait for it (expiration is forceful). Returns its
 * name. */
static const char *replacement_after_drain_started(efx *x, const char *old, int64_t expired_at)
{
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 1);
    const char *repl = efx_claim(x, 0)->meta.name;
    ck_assert_str_ne(repl, old);
    const ns_decision *created = efx_first(x, NS_DECISION_CREATED_NODECLAIM, repl);
    const ns_decision *init = efx_first(x, NS_DECISION_INITIALIZED_NODECLAIM, repl);
    const ns_decision *evict = efx_first(x, NS_DECISION_EVICTED_POD, old);
    ck_assert_ptr_nonnull(created);
    ck_assert_ptr_nonnull(init);
    ck_assert_ptr_nonnull(evict);
    ck_assert_int_ge(created->time_ms, expired_at);
    ck_assert_int_eq(evict->time_ms, expired_at);
    ck_assert_int_gt(init->time_ms, evict->time_ms);
    return repl;
}

START_TEST(test_expire_after)
{
    static const char yaml[] = DFX_CLASS("{}")
        DFX_POOL("      expireAfter: 10m\n      terminationGracePeriod: 3m\n",
                 DFX_CAPACITY("on-demand") DFX_TYPES("m5.xlarge"),
                 "    consolidationPolicy: WhenEmpty\n    consolidateAfter: Never\n    budgets: [{nodes: '0'}]\n")
        "---\n" DFX_DEPLOY("web", 2, "1500m", "1Gi", "") BATCH_POD;
    efx *x = dfx_new(yaml, NULL, false);
    dfx_settle(x, EFX_S(120));
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 1);
    char old[64];
    snprintf(old, sizeof(old), "%s", efx_claim(x, 0)->meta.name);
    ck_assert_uint_eq(efx_pods_on(x, old), 3);

    /* A budget of zero nodes does not hold expiration back. */
    const ns_decision *d = expire(x, old, EFX_S(600));
    int64_t expired_at = d->time_ms;
    int64_t deleted_at = ns_cluster_find_nodeclaim(x->cluster, old)->meta.deletion_ms;
    ck_assert_int_eq(deleted_at, expired_at);

    /* The web pods are evicted at once; the do-not-disrupt pod waits until the node's termination time (3 minutes)
     * minus its own grace period (30 s, the default): deleted strictly after 150 s. */
    efx_run_for(x, EFX_S(150));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_EVICTED_POD, "default/web-"), 2);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_EVICTED_POD, "default/batch"), 0);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_EVICTION_BLOCKED, "do-not-disrupt"), 1);
    ck_assert_ptr_nonnull(ns_cluster_find_node(x->cluster, old));
    efx_run_for(x, deleted_at + EFX_S(160) - efx_now());
    const ns_decision *forced = efx_first(x, NS_DECISION_EVICTED_POD, "default/batch");
    ck_assert_ptr_nonnull(forced);
    ck_assert_str_eq(forced->method, "forced deletion");
    ck_assert_int_eq(forced->time_ms - deleted_at, EFX_S(151));
    ck_assert_ptr_null(ns_cluster_find_nodeclaim(x->cluster, old));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DELETED_NODE, old), 1);
    const ns_decision *gone = efx_first(x, NS_DECISION_DELETED_NODECLAIM, old);
    ck_assert_str_eq(gone->method, "expired");

    char repl[64];
    snprintf(repl, sizeof(repl), "%s", replacement_after_drain_started(x, old, expired_at));
    /* The Job's pod came back and runs on the replacement with the rest. */
    efx_run_for(x, EFX_S(5));
    ck_assert_uint_eq(efx_pending(x), 0);
    ck_assert_uint_eq(efx_pods_on(x, repl), 3);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTING, NULL), 1);
    efx_free(x);
}
END_TEST

START_TEST(test_expired_node_held_by_do_not_disrupt_without_grace_period)
{
    /* No terminationGracePeriod: the do-not-disrupt pod holds the expired node for as long as it runs. Karpenter
     * plans no capacity for it (it is not currently reschedulable), so no replacement is launched, left empty and
     * consolidated, and launched again, over and over (issue 10 rule 11). */
    static const char yaml[] = DFX_CLASS("{}")
        DFX_POOL("      expireAfter: 10m\n", DFX_CAPACITY("on-demand") DFX_TYPES("m5.xlarge"),
                 "    consolidationPolicy: WhenEmptyOrUnderutilized\n    consolidateAfter: 0s\n")
        "---\n" BATCH_POD;
    efx *x = dfx_new(yaml, NULL, false);
    dfx_settle(x, EFX_S(120));
    char old[64];
    snprintf(old, sizeof(old), "%s", efx_claim(x, 0)->meta.name);
    expire(x, old, EFX_S(600));
    efx_run_for(x, EFX_S(7200));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_CREATED_NODECLAIM, NULL), 1);
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 1);
    ck_assert(ns_claim_deleting(ns_cluster_find_nodeclaim(x->cluster, old)));
    ck_assert_uint_eq(efx_pods_on(x, old), 1);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_EVICTED_POD, NULL), 0);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTING, NULL), 1);

    /* The pod goes (its Job recreates it, pending): one node for it, and the expired one is gone. */
    ck_assert_int_eq(ns_engine_delete_pod(x->engine, "default", "batch"), NS_OK);
    dfx_settle(x, EFX_S(180));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_CREATED_NODECLAIM, NULL), 2);
    ck_assert_ptr_null(ns_cluster_find_nodeclaim(x->cluster, old));
    ck_assert_uint_eq(efx_pods_on(x, efx_claim(x, 0)->meta.name), 1);
    efx_free(x);
}
END_TEST

START_TEST(test_provisioner_ttl_seconds_until_expired)
{
    static const char yaml[] =
        "apiVersion: karpenter.sh/v1alpha5\nkind: Provisioner\nmetadata: {name: legacy}\nspec:\n"
        "  requirements:\n" DFX_CAPACITY("on-demand") DFX_TYPES("m5.xlarge") "  providerRef: {name: default}\n"
        "  ttlSecondsUntilExpired: 900\n---\n"
        "apiVersion: karpenter.k8s.aws/v1alpha1\nkind: AWSNodeTemplate\nmetadata: {name: default}\nspec:\n"
        "  subnetSelector: {karpenter.sh/discovery: demo}\n  securityGroupSelector: {karpenter.sh/discovery: demo}\n"
        "---\n" DFX_DEPLOY("web", 2, "1500m", "1Gi", "");
    efx *x = dfx_new(yaml, NULL, false);
    ck_assert_int_eq(ns_cluster_find_nodepool(x->cluster, "legacy")->expire_after_ms, EFX_S(900));
    dfx_settle(x, EFX_S(120));
    char old[64];
    snprintf(old, sizeof(old), "%s", efx_claim(x, 0)->meta.name);
    int64_t expired_at = expire(x, old, EFX_S(900))->time_ms;
    dfx_settle(x, EFX_S(120));
    char repl[64];
    snprintf(repl, sizeof(repl), "%s", replacement_after_drain_started(x, old, expired_at));
    ck_assert_uint_eq(efx_pods_on(x, repl), 2);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_EVICTED_POD, "eviction"), 2);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DELETED_NODE, old), 1);
    /* The replacement expires in its turn, 900 s after it was created. */
    int64_t repl_created = ns_cluster_find_nodeclaim(x->cluster, repl)->meta.creation_ms;
    efx_run_for(x, repl_created + EFX_S(900) - efx_now() - EFX_S(1));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTING, NULL), 1);
    efx_run_for(x, EFX_S(2));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTING, repl), 1);
    efx_free(x);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("disruption-expiration");
    TCase *tc = tcase_create("expiration");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, test_expire_after);
    tcase_add_test(tc, test_expired_node_held_by_do_not_disrupt_without_grace_period);
    tcase_add_test(tc, test_provisioner_ttl_seconds_until_expired);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
