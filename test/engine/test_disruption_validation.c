/* Re-validation after the stabilisation window: a decision the cluster no longer supports is dropped (and recorded),
 * never carried out. Decisions asserted from the log; the invariants checked after every step. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "disruption_fixture.h"
#include "errors/ns_error.h"

#define REQS DFX_CAPACITY("on-demand") DFX_TYPES("m5.xlarge")

static bool decided(efx *x)
{
    return efx_count(x, NS_DECISION_DISRUPTION_INFO, "awaiting validation") > 0;
}

/* The one command was decided, then dropped at the end of the window for `why`; nothing was disrupted. */
static void dropped(efx *x, const char *why)
{
    const ns_decision *d = efx_first(x, NS_DECISION_DISRUPTION_INFO, "awaiting validation");
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTION_INFO, NULL), 2);
    const ns_decision *v = efx_last(x, NS_DECISION_DISRUPTION_INFO, NULL);
    ck_assert_str_eq(v->nodeclaims, d->nodeclaims);
    ck_assert_msg(strstr(v->reason, why) != NULL, "dropped for \"%s\", expected \"%s\"", v->reason, why);
    ck_assert_int_eq(v->time_ms - d->time_ms, EFX_S(15));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTING, NULL), 0);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_TAINTED_NODE, NULL), 0);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_EVICTED_POD, NULL), 0);
}

START_TEST(test_pod_lands_on_empty_candidate)
{
    static const char yaml[] = DFX_CLASS("{}") DFX_POOL("", REQS, "    consolidationPolicy: WhenEmpty\n"
                                                                  "    consolidateAfter: 30s\n")
        "---\n" DFX_DEPLOY("a", 2, "1500m", "1Gi", "");
    efx *x = dfx_new(yaml, NULL, false);
    dfx_settle(x, EFX_S(120));
    char claim[64];
    snprintf(claim, sizeof(claim), "%s", efx_claim(x, 0)->meta.name);
    dfx_scale(x, "a", 0);
    ck_assert(efx_run_until(x, decided, EFX_S(60)));
    /* Five seconds into the window a pod arrives; the node is the only place for it. */
    efx_run_for(x, EFX_S(5));
    dfx_scale(x, "a", 1);
    efx_run_for(x, EFX_S(10));
    dropped(x, "no longer valid");
    ck_assert_uint_eq(efx_pods_on(x, claim), 1);
    /* Not decided again while the pod is there. */
    efx_run_for(x, EFX_S(300));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTION_INFO, NULL), 2);
    ck_assert_ptr_nonnull(ns_cluster_find_nodeclaim(x->cluster, claim));
    efx_free(x);
}
END_TEST

START_TEST(test_room_taken_during_window)
{
    static const char yaml[] =
        DFX_CLASS("{}") DFX_POOL("", REQS, "    consolidationPolicy: WhenEmptyOrUnderutilized\n"
                                           "    consolidateAfter: 30s\n    budgets: [{nodes: '100%'}]\n")
        "---\n" DFX_DEPLOY("a", 2, "1500m", "1Gi", "");
    efx *x = dfx_new(yaml, NULL, false);
    dfx_settle(x, EFX_S(120));
    efx_load(x, DFX_DEPLOY("b", 2, "1500m", "1Gi", ""));
    dfx_settle(x, EFX_S(120));
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 2);
    /* One pod per node: either node's pod fits on the other, so one of them is to be deleted. */
    dfx_scale(x, "a", 1);
    dfx_scale(x, "b", 1);
    ck_assert(efx_run_until(x, decided, EFX_S(60)));
    ck_assert_ptr_nonnull(efx_first(x, NS_DECISION_DISRUPTION_INFO, "decision=delete consolidation-type=single"));
    /* In the window a 2-CPU pod takes the room: whichever node it lands on, the two nodes' pods no longer fit on
     * one node. */
    efx_run_for(x, EFX_S(5));
    efx_load(x, DFX_DEPLOY("c", 1, "2", "1Gi", ""));
    efx_run_for(x, EFX_S(10));
    ck_assert_uint_eq(efx_pending(x), 0);
    const ns_decision *v = efx_last(x, NS_DECISION_DISRUPTION_INFO, NULL);
    ck_assert_msg(strstr(v->reason, "no longer a candidate") || strstr(v->reason, "produced new results"),
                  "dropped for %s", v->reason);
    dropped(x, "");
    efx_run_for(x, EFX_S(600));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTING, NULL), 0);
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 2);
    efx_free(x);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("disruption-validation");
    TCase *tc = tcase_create("validation");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, test_pod_lands_on_empty_candidate);
    tcase_add_test(tc, test_room_taken_during_window);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
