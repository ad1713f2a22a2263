/* Interruptions announced by Node conditions (provider ABI 5, event_from_node_condition): the sim's node agent sets
 * SimInterruptionScheduled, the engine's interruption controller asks the provider, and the drain starts with the
 * notice's deadline; the condition holds across many steps, yet the announcement is acted on once. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "engine_fixture.h"
#include "model/labels.h"

#define WEB2                                                                                                           \
    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 2\n"                            \
    "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n" EFX_TOLERATE \
    "      containers: [{name: c, resources: {requests: {cpu: '1', memory: 1Gi}}}]\n"

/* A pod that holds its node through an interruption's drain (forceful, it is never evicted; with no grace period it
 * waits), so the claim stays deleting while its deadline is updated. */
#define KEEP                                                                                                           \
    "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: keep\n  annotations: {karpenter.sh/do-not-disrupt: 'true'}\n" \
    "spec:\n" EFX_POD_TOLERATE "  containers: [{name: c, resources: {requests: {cpu: 100m}}}]\n"

static bool settled(efx *x)
{
    if (x->cluster->n_nodeclaims != 1 || efx_pending(x) || !efx_bound(x))
        return false;
    const ns_nodeclaim *c = x->cluster->nodeclaims[0];
    return ns_claim_initialized(c) && !ns_claim_deleting(c);
}

static void announce(efx *x, const char *node, const char *type, const char *reason, int64_t deadline_ms)
{
    char when[40] = "soon";
    if (deadline_ms)
        ns_clock_format_rfc3339(deadline_ms, when, sizeof(when));
    ns_node *n = ns_cluster_find_node(x->cluster, node);
    ck_assert_ptr_nonnull(n);
    ck_assert_int_eq(ns_conditions_set(&n->conditions, type, "True", reason, when, efx_now()), 0);
}

static int64_t deadline_of(efx *x, const char *claim)
{
    const ns_nodeclaim *c = ns_cluster_find_nodeclaim(x->cluster, claim);
    ck_assert_ptr_nonnull(c);
    const char *d = ns_labels_get(&c->meta.annotations, NS_ANNOTATION_INTERRUPTION_DEADLINE);
    return d ? strtoll(d, NULL, 10) : 0;
}

START_TEST(condition_drains_before_its_deadline)
{
    efx *x = efx_new(EFX_BASE, WEB2 KEEP, NULL);
    ck_assert(efx_run_until(x, settled, EFX_S(120)));
    char claim[128], node[128];
    snprintf(claim, sizeof(claim), "%s", efx_claim(x, 0)->meta.name);
    snprintf(node, sizeof(node), "%s", efx_node_of(x, efx_claim(x, 0))->meta.name);

    /* A condition the provider does not read as an interruption changes nothing. */
    announce(x, node, "KernelDeadlock", "SpotInterruption", 0);
    efx_run_for(x, EFX_S(5));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_INTERRUPTION, NULL), 0);
    ck_assert(!ns_claim_deleting(ns_cluster_find_nodeclaim(x->cluster, claim)));

    int64_t deadline = efx_now() + EFX_S(120);
    announce(x, node, "SimInterruptionScheduled", "ScheduledMaintenance", deadline);
    efx_step(x);
    const ns_decision *d = efx_first(x, NS_DECISION_INTERRUPTION, claim);
    ck_assert_ptr_nonnull(d);
    ck_assert_str_eq(d->method, "ScheduledChange");
    int64_t noticed = d->time_ms;
    ck_assert(ns_claim_deleting(ns_cluster_find_nodeclaim(x->cluster, claim)));
    ck_assert_int_eq(deadline_of(x, claim), deadline);
    /* The drain starts with the notice: the web pods are evicted at once; the do-not-disrupt pod holds the node. */
    ck_assert_uint_eq(efx_count(x, NS_DECISION_EVICTED_POD, claim), 2);
    ck_assert_int_eq(efx_first(x, NS_DECISION_EVICTED_POD, claim)->time_ms, noticed);

    /* The condition stays while the node drains: one decision, the same deadline. */
    efx_step(x);
    efx_step(x);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_INTERRUPTION, NULL), 1);
    ck_assert_int_eq(deadline_of(x, claim), deadline);

    /* A later announcement with an earlier deadline shortens the drain; a later deadline does not lengthen it. */
    int64_t sooner = efx_now() + EFX_S(80);
    announce(x, node, "SimInterruptionScheduled", "SpotInterruption", sooner);
    efx_step(x);
    ck_assert_int_eq(deadline_of(x, claim), sooner);
    announce(x, node, "SimInterruptionScheduled", "SpotInterruption", sooner + EFX_S(600));
    efx_step(x);
    ck_assert_int_eq(deadline_of(x, claim), sooner);

    /* Once the held pod is gone the node goes, before the deadline. */
    ck_assert_int_eq(ns_engine_delete_pod(x->engine, "default", "keep"), NS_OK);
    ck_assert(efx_run_until(x, settled, EFX_S(60)));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DELETED_NODE, claim), 1);
    ck_assert_int_lt(efx_first(x, NS_DECISION_DELETED_NODE, claim)->time_ms, sooner);
    efx_free(x);
}
END_TEST

/* A rebalance recommendation held as a condition is recorded once and, by default, not acted on. */
START_TEST(rebalance_condition_is_recorded_once)
{
    efx *x = efx_new(EFX_BASE, WEB2, NULL);
    ck_assert(efx_run_until(x, settled, EFX_S(120)));
    char claim[128], node[128];
    snprintf(claim, sizeof(claim), "%s", efx_claim(x, 0)->meta.name);
    snprintf(node, sizeof(node), "%s", efx_node_of(x, efx_claim(x, 0))->meta.name);
    announce(x, node, "SimInterruptionScheduled", "RebalanceRecommendation", 0);
    efx_run_for(x, EFX_S(10));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_REBALANCE_RECORDED, claim), 1);
    const ns_nodeclaim *c = ns_cluster_find_nodeclaim(x->cluster, claim);
    ck_assert_ptr_nonnull(ns_labels_get(&c->meta.annotations, NS_ANNOTATION_REBALANCE));
    ck_assert(!ns_claim_deleting(c));
    efx_free(x);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("engine-node-conditions");
    TCase *tc = tcase_create("engine-node-conditions");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, condition_drains_before_its_deadline);
    tcase_add_test(tc, rebalance_condition_is_recorded_once);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
