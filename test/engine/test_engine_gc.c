/* Garbage collection: orphaned instances are terminated after the grace period; registered claims whose instance
 * vanished are removed once their Node is NotReady and their pods re-planned; an instance tagged with a claim that is
 * not launched yet is left alone; so is a claim whose Node is Ready, and one that never registered. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "engine_fixture.h"
#include "errors/ns_error.h"

#define WEB2                                                                                                           \
    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 2\n"                            \
    "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n" EFX_TOLERATE \
    "      containers: [{name: c, resources: {requests: {cpu: '1', memory: 1Gi}}}]\n"

/* Launches an instance behind the engine's back, tagged with `claim`, of `type`. */
static void launch_direct(efx *x, const char *claim, const char *token, const char *type, ns_launch_result *res)
{
    const ns_nodeclass_def *def = ns_cluster_find_nodeclass(x->cluster, "SimNodeClass", "default");
    ns_launch_option opt = {.struct_size = sizeof(opt), .instance_type = type, .zone = "us-west-2a",
                            .capacity_type = "on-demand"};
    ns_launch_request req = {.struct_size = sizeof(req), .cluster_name = "nodesmith", .nodeclaim_name = claim,
                             .nodepool_name = "default", .client_token = token, .nodeclass = &def->abi,
                             .options = &opt, .n_options = 1};
    memset(res, 0, sizeof(*res));
    res->struct_size = sizeof(*res);
    ck_assert_msg(ns_plugin_launch(x->plugin, &req, res) == NS_OK, "launch: %s", ns_error_message());
}

static bool settled(efx *x)
{
    return x->cluster->n_nodeclaims == 1 && efx_pending(x) == 0 && efx_initialized(x) == 1;
}

START_TEST(test_orphan_instance_terminated_after_grace)
{
    efx *x = efx_new(EFX_BASE, NULL, NULL);
    ns_launch_result res;
    launch_direct(x, "ghost", "ghost-token", "m5.large", &res);
    efx_step(x);
    efx_run_for(x, EFX_S(29));
    ck_assert_uint_eq(efx_instances(x), 1);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_GC_INSTANCE, NULL), 0);
    efx_run_for(x, EFX_S(1));
    ck_assert_uint_eq(efx_instances(x), 0);
    const ns_decision *d = efx_first(x, NS_DECISION_GC_INSTANCE, res.provider_id);
    ck_assert_ptr_nonnull(d);
    ck_assert_int_eq(d->time_ms - EFX_T0, EFX_S(30));
    ck_assert(strstr(d->detail, "ghost") != NULL);
    efx_free(x);
}
END_TEST

START_TEST(test_vanished_instance_removes_claim)
{
    efx *x = efx_new(EFX_BASE, WEB2, NULL);
    ck_assert(efx_run_until(x, settled, EFX_S(120)));
    char a[128];
    snprintf(a, sizeof(a), "%s", efx_claim(x, 0)->meta.name);
    bool gone = false;
    ck_assert_int_eq(ns_plugin_terminate(x->plugin, efx_claim(x, 0)->provider_id, &gone), NS_OK);
    ck_assert(!gone);
    /* The Node is still Ready when garbage collection first looks: the claim is left alone; the kubelet went with
     * the instance, so the Node turns NotReady in the same step and the claim goes at the next. */
    efx_step(x);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_GC_NODECLAIM, a), 0);
    ck_assert(!ns_cluster_find_node(x->cluster, a)->ready);
    efx_step(x);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_GC_NODECLAIM, a), 1);
    ck_assert_ptr_null(ns_cluster_find_nodeclaim(x->cluster, a));
    ck_assert_ptr_null(ns_cluster_find_node(x->cluster, a));
    ck_assert_uint_eq(efx_pending(x), 2);
    ck_assert(efx_run_until(x, settled, EFX_S(120)));
    ck_assert_str_ne(efx_claim(x, 0)->meta.name, a);
    efx_free(x);
}
END_TEST

/* Karpenter's garbage collection takes only registered claims that are not deleting, and leaves one alone while its
 * Node is Ready: a kubelet that still reports says the instance is there, whatever the cloud's listing says. Here the
 * kubelet stand-in is off after the node came up, so nothing marks the Node NotReady but the test. */
START_TEST(test_ready_node_keeps_instance_less_claim)
{
    efx *x = efx_new(EFX_BASE, WEB2, NULL);
    ck_assert(efx_run_until(x, settled, EFX_S(120)));
    x->cfg.simulate_kubelet = false;
    efx_restart(x);
    char a[128];
    snprintf(a, sizeof(a), "%s", efx_claim(x, 0)->meta.name);
    bool gone = false;
    ck_assert_int_eq(ns_plugin_terminate(x->plugin, efx_claim(x, 0)->provider_id, &gone), NS_OK);
    efx_run_for(x, EFX_S(600));
    ns_nodeclaim *c = ns_cluster_find_nodeclaim(x->cluster, a);
    ck_assert_ptr_nonnull(c);
    ck_assert(!ns_claim_deleting(c));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_GC_NODECLAIM, NULL), 0);
    ck_assert_uint_eq(efx_pods_on(x, a), 2);

    /* The node lifecycle controller reports the silent kubelet: the claim goes with its Node, not drained. */
    ns_node *n = ns_cluster_find_node(x->cluster, a);
    n->ready = false;
    ck_assert_int_eq(ns_engine_store(x->engine)->ops->update_node_status(ns_engine_store(x->engine)->ctx, n), NS_OK);
    efx_step(x);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_GC_NODECLAIM, a), 1);
    ck_assert_ptr_null(ns_cluster_find_nodeclaim(x->cluster, a));
    ck_assert_ptr_null(ns_cluster_find_node(x->cluster, a));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_EVICTED_POD, NULL), 0);
    ck_assert_uint_eq(efx_pending(x), 2);
    efx_free(x);
}
END_TEST

/* A claim whose instance vanished before its Node registered is not the collector's: the registration TTL ends it. */
START_TEST(test_unregistered_claim_left_to_registration_ttl)
{
    efx *x = efx_new(EFX_BASE, WEB2, NULL);
    efx_step(x);
    ns_nodeclaim *c = efx_claim(x, 0);
    ck_assert(ns_claim_launched(c));
    char a[128];
    snprintf(a, sizeof(a), "%s", c->meta.name);
    bool gone = false;
    ck_assert_int_eq(ns_plugin_terminate(x->plugin, c->provider_id, &gone), NS_OK);
    int64_t created = c->meta.creation_ms;
    efx_run_for(x, EFX_S(14 * 60));
    ck_assert_ptr_nonnull(ns_cluster_find_nodeclaim(x->cluster, a));
    ck_assert_ptr_null(ns_cluster_find_node(x->cluster, a));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_GC_NODECLAIM, NULL), 0);
    ck_assert(efx_run_until(x, settled, EFX_S(180)));
    const ns_decision *d = efx_first(x, NS_DECISION_REGISTRATION_TIMEOUT, a);
    ck_assert_ptr_nonnull(d);
    ck_assert_int_eq(d->time_ms - created, EFX_S(15 * 60));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_GC_NODECLAIM, NULL), 0);
    efx_free(x);
}
END_TEST

START_TEST(test_instance_of_unlaunched_claim_kept)
{
    efx *x = efx_new(EFX_BASE, WEB2, NULL);
    /* The claim's launch is throttled for a minute; meanwhile its instance exists (a launch whose answer was lost). */
    ns_fault f = {.struct_size = sizeof(f), .kind = NS_FAULT_THROTTLE, .method = "launch", .count = 1,
                  .delay_ms = 60000};
    ck_assert_int_eq(ns_plugin_test_inject_fault(x->plugin, &f), NS_OK);
    efx_step(x);
    ns_nodeclaim *c = efx_claim(x, 0);
    ck_assert(!ns_claim_launched(c));
    /* The cheapest type the claim allows, as the lost launch would have chosen. */
    const char *type = NULL;
    for (size_t i = 0; i < c->n_requirements && !type; i++)
        if (strcmp(c->requirements[i].key, "node.kubernetes.io/instance-type") == 0)
            type = c->requirements[i].values[0];
    ck_assert_ptr_nonnull(type);
    ns_launch_result res;
    launch_direct(x, c->meta.name, c->meta.name, type, &res);
    efx_run_for(x, EFX_S(59));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_GC_INSTANCE, NULL), 0);
    ck_assert_uint_eq(efx_instances(x), 1);
    efx_run_for(x, EFX_S(1));
    /* The client token returns the same instance. */
    ck_assert(ns_claim_launched(c));
    ck_assert_str_eq(c->provider_id, res.provider_id);
    ck_assert_uint_eq(efx_instances(x), 1);
    ck_assert(efx_run_until(x, settled, EFX_S(60)));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_CREATED_NODECLAIM, NULL), 1);
    efx_free(x);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("engine-gc");
    TCase *tc = tcase_create("gc");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_orphan_instance_terminated_after_grace);
    tcase_add_test(tc, test_vanished_instance_removes_claim);
    tcase_add_test(tc, test_instance_of_unlaunched_claim_kept);
    tcase_add_test(tc, test_ready_node_keeps_instance_less_claim);
    tcase_add_test(tc, test_unregistered_claim_left_to_registration_ttl);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
