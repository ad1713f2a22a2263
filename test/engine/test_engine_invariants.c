/* The invariant checker catches each kind of violation (so the checks the other tests run after every step can
 * fail), and stays quiet when the engine does its job. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "engine_fixture.h"
#include "errors/ns_error.h"

#define WEB(replicas)                                                                                                  \
    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: " #replicas "\n"                \
    "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n" EFX_TOLERATE \
    "      containers: [{name: c, resources: {requests: {cpu: 500m, memory: 512Mi}}}]\n"
#define PDB2                                                                                                           \
    "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web}\nspec:\n  minAvailable: 2\n"       \
    "  selector: {matchLabels: {app: web}}\n"
#define DND_POD                                                                                                        \
    "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: keep\n  annotations: {karpenter.sh/do-not-disrupt: 'true'}\n" \
    "spec:\n" EFX_POD_TOLERATE "  containers: [{name: c, resources: {requests: {cpu: 100m}}}]\n"

static bool settled(efx *x)
{
    return x->cluster->n_nodeclaims == 1 && efx_pending(x) == 0 && efx_initialized(x) == 1;
}

static efx *running(const char *extra)
{
    efx *x = efx_new(EFX_BASE, extra, NULL);
    ck_assert(efx_run_until(x, settled, EFX_S(120)));
    return x;
}

static ns_pod *pod_named(efx *x, const char *prefix)
{
    for (size_t i = 0; i < x->cluster->n_pods; i++)
        if (strncmp(x->cluster->pods[i]->meta.name, prefix, strlen(prefix)) == 0)
            return x->cluster->pods[i];
    ck_abort_msg("no pod %s", prefix);
    return NULL;
}

static int check(efx *x, char *report, size_t len)
{
    int n = ns_invariants_check(x->inv, report, len);
    ck_assert_int_ge(n, 0);
    return n;
}

START_TEST(test_do_not_disrupt_eviction_caught)
{
    efx *x = running(WEB(2) DND_POD);
    char report[2048];
    ns_pod *keep = pod_named(x, "keep");
    /* An involuntary deletion is no violation; a voluntary eviction is. */
    ck_assert_int_eq(x->engine->writes.ops->evict_pod(x->engine->writes.ctx, keep, true), NS_OK);
    ck_assert_int_eq(check(x, report, sizeof(report)), 1);
    ck_assert(strstr(report, "do-not-disrupt pod default/keep was evicted voluntarily") != NULL);
    ck_assert_uint_eq(ns_invariants_total(x->inv), 1);
    efx_free(x);
}
END_TEST

START_TEST(test_pdb_violation_caught)
{
    efx *x = running(WEB(3) PDB2);
    char report[2048];
    const ns_cluster_writes *w = &x->engine->writes;
    /* Through the Eviction API the second eviction is refused: no violation. */
    ck_assert_int_eq(w->ops->evict_pod(w->ctx, pod_named(x, "web-"), true), NS_OK);
    ns_pod *second = NULL;
    for (size_t i = 0; i < x->cluster->n_pods && !second; i++)
        if (x->cluster->pods[i]->node_name && strncmp(x->cluster->pods[i]->meta.name, "web-", 4) == 0)
            second = x->cluster->pods[i];
    ck_assert_int_eq(w->ops->evict_pod(w->ctx, second, true), NS_ERR_THROTTLED);
    ck_assert_int_eq(check(x, report, sizeof(report)), 0);
    /* A voluntary deletion bypasses the budget: caught. An involuntary one (a lost node) is not. */
    ck_assert_int_eq(w->ops->delete_pod(w->ctx, second, true), NS_OK);
    ck_assert_int_eq(check(x, report, sizeof(report)), 1);
    ck_assert(strstr(report, "violated PodDisruptionBudget web: 1 available, 2 needed") != NULL);
    ns_pod *third = NULL;
    for (size_t i = 0; i < x->cluster->n_pods && !third; i++)
        if (x->cluster->pods[i]->node_name && strncmp(x->cluster->pods[i]->meta.name, "web-", 4) == 0)
            third = x->cluster->pods[i];
    ck_assert_int_eq(w->ops->delete_pod(w->ctx, third, false), NS_OK);
    ck_assert_int_eq(check(x, report, sizeof(report)), 0);
    efx_free(x);
}
END_TEST

START_TEST(test_orphan_instance_caught_without_gc)
{
    efx *x = efx_new(EFX_BASE, NULL, NULL);
    const ns_nodeclass_def *def = ns_cluster_find_nodeclass(x->cluster, "SimNodeClass", "default");
    ns_launch_option opt = {.struct_size = sizeof(opt), .instance_type = "m5.large", .zone = "us-west-2a",
                            .capacity_type = "on-demand"};
    ns_launch_request req = {.struct_size = sizeof(req), .cluster_name = "nodesmith", .nodeclaim_name = "ghost",
                             .nodepool_name = "default", .client_token = "ghost", .nodeclass = &def->abi,
                             .options = &opt, .n_options = 1};
    ns_launch_result res = {.struct_size = sizeof(res)};
    ck_assert_int_eq(ns_plugin_launch(x->plugin, &req, &res), NS_OK);
    char report[2048];
    ns_clock_advance(EFX_S(32));
    ck_assert_int_eq(check(x, report, sizeof(report)), 0);
    /* Nobody runs garbage collection: past grace plus two ticks it is a violation. */
    ns_clock_advance(EFX_S(1));
    ck_assert_int_eq(check(x, report, sizeof(report)), 1);
    ck_assert(strstr(report, "without a nodeclaim") != NULL);
    /* The engine's step collects it. */
    efx_step(x);
    ck_assert_uint_eq(efx_instances(x), 0);
    efx_free(x);
}
END_TEST

START_TEST(test_unbound_pod_with_room_caught)
{
    efx *x = running(WEB(1));
    char report[2048];
    ns_pod *p = ns_pod_copy(pod_named(x, "web-"));
    free(p->meta.name);
    p->meta.name = strdup("extra");
    free(p->node_name);
    p->node_name = NULL;
    free(p->meta.owner_kind);
    p->meta.owner_kind = NULL;
    ck_assert_int_eq(ns_engine_add_pod(x->engine, p), NS_OK);
    /* Nobody steps: within the batch window that is fine, after it the pod should have been bound. */
    ns_clock_advance(EFX_S(12));
    ck_assert_int_eq(check(x, report, sizeof(report)), 0);
    ns_clock_advance(EFX_S(1));
    ck_assert_int_eq(check(x, report, sizeof(report)), 1);
    ck_assert(strstr(report, "pod default/extra is pending although node") != NULL);
    efx_step(x);
    ck_assert_uint_eq(efx_pending(x), 0);
    efx_free(x);
}
END_TEST

START_TEST(test_pod_without_claim_caught)
{
    efx *x = running(WEB(1));
    char report[2048];
    ns_pod *p = ns_pod_copy(pod_named(x, "web-"));
    free(p->meta.name);
    p->meta.name = strdup("big");
    free(p->node_name);
    p->node_name = NULL;
    p->requests.cpu_milli = 6000;
    ck_assert_int_eq(ns_engine_add_pod(x->engine, p), NS_OK);
    ns_clock_advance(EFX_S(13));
    ck_assert_int_eq(check(x, report, sizeof(report)), 1);
    ck_assert(strstr(report, "pod default/big is pending with no nodeclaim on its way although NodePool default") !=
              NULL);
    efx_step(x);
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 2);
    ck_assert_int_eq(check(x, report, sizeof(report)), 0);
    efx_free(x);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("engine-invariants");
    TCase *tc = tcase_create("invariants");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_do_not_disrupt_eviction_caught);
    tcase_add_test(tc, test_pdb_violation_caught);
    tcase_add_test(tc, test_orphan_instance_caught_without_gc);
    tcase_add_test(tc, test_unbound_pod_with_room_caught);
    tcase_add_test(tc, test_pod_without_claim_caught);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
