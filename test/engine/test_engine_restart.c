/* A fresh engine built over the same cluster objects and provider resumes where the last one stopped: nothing
 * launched twice, nothing lost — mid-launch, mid-registration, mid-disruption, mid-drain and mid-interruption. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "engine_fixture.h"
#include "errors/ns_error.h"
#include "model/labels.h"

#define WEB(replicas)                                                                                                  \
    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: " #replicas "\n"                \
    "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n" EFX_TOLERATE \
    "      containers: [{name: c, resources: {requests: {cpu: '1', memory: 1Gi}}}]\n"
#define PDB2                                                                                                           \
    "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web}\nspec:\n  minAvailable: 2\n"       \
    "  selector: {matchLabels: {app: web}}\n"

static bool settled(efx *x)
{
    if (x->cluster->n_nodeclaims != 1 || efx_pending(x) || !efx_bound(x))
        return false;
    const ns_nodeclaim *c = x->cluster->nodeclaims[0];
    return ns_claim_initialized(c) && !ns_claim_deleting(c) &&
           !ns_labels_get(&c->meta.annotations, NS_ANNOTATION_DISRUPTION_METHOD);
}

/* Runs to settled, restarting the engine at every step in [from, to) seconds after now; also checks the instance
 * count never exceeds max_instances. */
static void run_restarting(efx *x, int64_t from_s, int64_t to_s, size_t max_instances)
{
    int64_t start = efx_now();
    for (int i = 0; i < 400 && !settled(x); i++) {
        int64_t t = (efx_now() - start) / 1000;
        if (t >= from_s && t < to_s)
            efx_restart(x);
        ns_clock_advance(x->cfg.tick_ms);
        efx_step(x);
        ck_assert_uint_le(efx_instances(x), max_instances);
    }
    ck_assert(settled(x));
}

START_TEST(test_restart_through_provisioning)
{
    efx *x = efx_new(EFX_BASE, WEB(3), NULL);
    efx_step(x);
    char a[128];
    snprintf(a, sizeof(a), "%s", efx_claim(x, 0)->meta.name);
    /* A new engine at every step from launch to initialization. */
    run_restarting(x, 0, 60, 1);
    ck_assert_str_eq(efx_claim(x, 0)->meta.name, a);
    ck_assert_uint_eq(efx_instances(x), 1);
    ck_assert_uint_eq(efx_bound(x), 3);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_CREATED_NODECLAIM, NULL), 0);
    efx_free(x);
}
END_TEST

START_TEST(test_restart_before_launch_result_written)
{
    efx *x = efx_new(EFX_BASE, WEB(3), NULL);
    ns_fault f = {.struct_size = sizeof(f), .kind = NS_FAULT_THROTTLE, .method = "launch", .count = 1,
                  .delay_ms = 2000};
    ck_assert_int_eq(ns_plugin_test_inject_fault(x->plugin, &f), NS_OK);
    efx_step(x);
    ns_nodeclaim *c = efx_claim(x, 0);
    ck_assert(!ns_claim_launched(c));
    efx_restart(x);
    /* The back-off was in memory only: the new engine launches at once, once, with the claim's client token. */
    efx_step(x);
    ck_assert(ns_claim_launched(c));
    ck_assert_uint_eq(efx_instances(x), 1);
    run_restarting(x, 0, 0, 1);
    efx_free(x);
}
END_TEST

START_TEST(test_restart_mid_disruption)
{
    efx *x = efx_new(EFX_BASE, WEB(2), NULL);
    ck_assert(efx_run_until(x, settled, EFX_S(120)));
    char a[128];
    snprintf(a, sizeof(a), "%s", efx_claim(x, 0)->meta.name);
    const char *removed[] = {a};
    ns_engine_plan_opts opts = {.removed_nodes = removed, .n_removed = 1, .only_removed_pods = true};
    ns_engine_plan plan;
    ck_assert_int_eq(ns_engine_plan_run(x->engine, &opts, &plan), NS_OK);
    ns_disruption_request req = {.method = "drift", .reason = "Drifted", .nodeclaims = removed, .n_nodeclaims = 1,
                                 .replacements = plan.result.claims, .n_replacements = plan.result.n_claims};
    char *repl = NULL;
    ck_assert_int_eq(ns_engine_disrupt(x->engine, &req, &repl), NS_OK);
    ns_engine_plan_free(&plan);
    /* Restarted at every step while the replacement comes up and the old node drains. */
    run_restarting(x, 0, 90, 2);
    ck_assert_str_eq(efx_claim(x, 0)->meta.name, repl);
    ck_assert_uint_eq(efx_pods_on(x, repl), 2);
    ck_assert_uint_eq(efx_instances(x), 1);
    ck_assert_ptr_null(ns_cluster_find_nodeclaim(x->cluster, a));
    free(repl);
    efx_free(x);
}
END_TEST

START_TEST(test_restart_mid_drain_keeps_pdb)
{
    efx *x = efx_new(EFX_BASE, WEB(3) PDB2, NULL);
    ck_assert(efx_run_until(x, settled, EFX_S(120)));
    char a[128];
    snprintf(a, sizeof(a), "%s", efx_claim(x, 0)->meta.name);
    ck_assert_int_eq(ns_engine_delete_claim(x->engine, efx_claim(x, 0), "test", "Manual"), NS_OK);
    /* The invariant checker (re-attached with each engine) watches every eviction. */
    run_restarting(x, 0, 120, 2);
    ck_assert_ptr_null(ns_cluster_find_nodeclaim(x->cluster, a));
    ck_assert_uint_eq(efx_bound(x), 3);
    efx_free(x);
}
END_TEST

START_TEST(test_restart_mid_interruption)
{
    /* The PDB keeps the drain going over many steps (it starts with the notice), so restarts land in the middle. */
    efx *x = efx_new(EFX_BASE, WEB(3) PDB2, NULL);
    ck_assert(efx_run_until(x, settled, EFX_S(120)));
    char a[128];
    snprintf(a, sizeof(a), "%s", efx_claim(x, 0)->meta.name);
    int64_t deadline = efx_now() + EFX_S(120);
    ck_assert_int_eq(ns_engine_inject_event(x->engine, a, NS_EVENT_SPOT_INTERRUPTION, deadline), NS_OK);
    efx_step(x);
    ck_assert(ns_claim_deleting(ns_cluster_find_nodeclaim(x->cluster, a)));
    run_restarting(x, 0, 100, 2);
    ck_assert_ptr_null(ns_cluster_find_nodeclaim(x->cluster, a));
    ck_assert_int_lt(efx_now(), deadline);
    efx_free(x);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("engine-restart");
    TCase *tc = tcase_create("restart");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_restart_through_provisioning);
    tcase_add_test(tc, test_restart_before_launch_result_written);
    tcase_add_test(tc, test_restart_mid_disruption);
    tcase_add_test(tc, test_restart_mid_drain_keeps_pdb);
    tcase_add_test(tc, test_restart_mid_interruption);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
