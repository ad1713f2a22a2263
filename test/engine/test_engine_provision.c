/* Provisioning and the NodeClaim lifecycle over simulated time: batch window, launch, register, initialize, bind;
 * labels and taints; in-flight claims reused; launch failures (insufficient capacity, throttling). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "engine_fixture.h"
#include "errors/ns_error.h"
#include "model/labels.h"
#include "model/resources.h"

static const char WEB[] = "apiVersion: apps/v1\n"
                          "kind: Deployment\n"
                          "metadata: {name: web}\n"
                          "spec:\n"
                          "  replicas: 3\n"
                          "  selector: {matchLabels: {app: web}}\n"
                          "  template:\n"
                          "    metadata: {labels: {app: web}}\n"
                          "    spec:\n" EFX_TOLERATE "      containers:\n"
                          "        - name: c\n"
                          "          resources: {requests: {cpu: '1', memory: 1Gi}}\n";

static bool all_bound(efx *x)
{
    return efx_pending(x) == 0 && efx_bound(x) > 0;
}

static bool has_taint(const ns_node *n, const char *key)
{
    for (size_t i = 0; i < n->n_taints; i++)
        if (strcmp(n->taints[i].key, key) == 0)
            return true;
    return false;
}

START_TEST(test_lifecycle_in_order)
{
    efx *x = efx_new(EFX_BASE, WEB, NULL);
    efx_step(x);
    /* Pods loaded from manifests are old: the batch window is already closed. */
    ck_assert_uint_eq(efx_count(x, NS_DECISION_CREATED_NODECLAIM, NULL), 1);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_LAUNCHED_NODECLAIM, NULL), 1);
    ns_nodeclaim *c = efx_claim(x, 0);
    ck_assert(ns_claim_launched(c));
    ck_assert(!ns_claim_registered(c));
    ck_assert(ns_meta_has_finalizer(&c->meta, NS_FINALIZER_TERMINATION));
    ck_assert_ptr_nonnull(ns_labels_get(&c->meta.annotations, NS_ANNOTATION_NODEPOOL_HASH));
    ck_assert_str_eq(ns_labels_get(&c->meta.labels, NS_LABEL_NODEPOOL), "default");
    ck_assert_str_eq(ns_labels_get(&c->meta.labels, NS_LABEL_CAPACITY_TYPE), "on-demand");
    ck_assert_uint_eq(efx_instances(x), 1);
    ck_assert_uint_eq(efx_pending(x), 3);

    /* Nothing more is launched while the claim is in flight. */
    efx_run_for(x, EFX_S(29));
    ck_assert_uint_eq(x->cluster->n_nodes, 0);
    efx_run_for(x, EFX_S(1));
    ck_assert_uint_eq(x->cluster->n_nodes, 1);
    ck_assert(ns_claim_registered(c));
    ck_assert(!ns_claim_initialized(c));
    const ns_decision *reg = efx_first(x, NS_DECISION_REGISTERED_NODECLAIM, c->meta.name);
    ck_assert_ptr_nonnull(reg);
    ck_assert_int_eq(reg->time_ms - EFX_T0, EFX_S(30));
    ns_node *n = efx_node_of(x, c);
    ck_assert(!has_taint(n, NS_TAINT_UNREGISTERED_KEY));
    ck_assert(has_taint(n, "example.com/agent-not-ready"));
    ck_assert(has_taint(n, "dedicated"));
    ck_assert_str_eq(ns_labels_get(&n->meta.labels, "team"), "web");
    ck_assert_str_eq(ns_labels_get(&n->meta.labels, NS_LABEL_REGISTERED), "true");
    ck_assert_ptr_nonnull(ns_labels_get(&n->meta.labels, NS_LABEL_INSTANCE_TYPE));
    ck_assert_ptr_nonnull(ns_labels_get(&n->meta.labels, NS_LABEL_ZONE));
    ck_assert_str_eq(ns_labels_get(&n->meta.labels, NS_LABEL_ARCH), "amd64");
    ck_assert_uint_eq(efx_pending(x), 3);

    ck_assert(efx_run_until(x, all_bound, EFX_S(30)));
    n = efx_node_of(x, c);
    ck_assert(ns_claim_initialized(c));
    ck_assert(!has_taint(n, "example.com/agent-not-ready"));
    ck_assert(has_taint(n, "dedicated"));
    ck_assert_str_eq(ns_labels_get(&n->meta.labels, NS_LABEL_INITIALIZED), "true");
    ck_assert_uint_eq(efx_pods_on(x, n->meta.name), 3);
    const ns_decision *init = efx_first(x, NS_DECISION_INITIALIZED_NODECLAIM, c->meta.name);
    ck_assert_int_eq(init->time_ms - EFX_T0, EFX_S(45));

    efx_run_for(x, EFX_S(120));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_CREATED_NODECLAIM, NULL), 1);
    ck_assert_uint_eq(efx_instances(x), 1);
    size_t nh;
    const ns_engine_sample *h = ns_engine_history(x->engine, &nh);
    ck_assert_uint_gt(nh, 100);
    ck_assert(h[nh - 1].cost_per_hour > 0);
    ck_assert_uint_eq(h[nh - 1].pods_bound, 3);
    ck_assert_uint_eq(h[0].pods_pending, 3);
    efx_free(x);
}
END_TEST

/* Karpenter 1.14 (pkg/apis/v1/labels.go since v1.10) restricts only the karpenter.sh domain and
 * kubernetes.io/hostname: a pool may use custom labels under kubernetes.io and k8s.io, and its claims carry them
 * (NodeClaimTemplate.resolveCustomLabelsFromRequirements sets every requirement that is neither well-known nor
 * hostname). Before v1.10 both domains were refused and such labels never set. */
static const char K8S_DOMAIN_POOL[] = "apiVersion: nodesmith.io/v1\n"
                                      "kind: SimNodeClass\n"
                                      "metadata: {name: default}\n"
                                      "spec: {}\n"
                                      "---\n"
                                      "apiVersion: karpenter.sh/v1\n"
                                      "kind: NodePool\n"
                                      "metadata: {name: default}\n"
                                      "spec:\n"
                                      "  template:\n"
                                      "    metadata:\n"
                                      "      labels: {example.kubernetes.io/team: web}\n"
                                      "    spec:\n"
                                      "      nodeClassRef: {group: nodesmith.io, kind: SimNodeClass, name: default}\n"
                                      "      requirements:\n"
                                      "        - {key: owner.k8s.io/cost-center, operator: In, values: [c42]}\n"
                                      "  disruption:\n"
                                      "    consolidateAfter: Never\n"
                                      "---\n"
                                      "apiVersion: v1\n"
                                      "kind: Pod\n"
                                      "metadata: {name: web, namespace: default}\n"
                                      "spec:\n"
                                      "  nodeSelector: {example.kubernetes.io/team: web}\n"
                                      "  containers:\n"
                                      "    - name: c\n"
                                      "      resources: {requests: {cpu: '1'}}\n";

START_TEST(test_kubernetes_io_domain_labels)
{
    efx *x = efx_new(K8S_DOMAIN_POOL, NULL, NULL);
    efx_step(x);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_CREATED_NODECLAIM, NULL), 1);
    ns_nodeclaim *c = efx_claim(x, 0);
    ck_assert_str_eq(ns_labels_get(&c->meta.labels, "example.kubernetes.io/team"), "web");
    ck_assert_str_eq(ns_labels_get(&c->meta.labels, "owner.k8s.io/cost-center"), "c42");
    ck_assert_ptr_null(ns_labels_get(&c->meta.labels, NS_LABEL_HOSTNAME));
    efx_free(x);
}
END_TEST

START_TEST(test_batch_window)
{
    efx *x = efx_new(EFX_BASE, NULL, NULL);
    efx_step(x);
    efx_load(x, "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n" EFX_POD_TOLERATE
                "  containers: [{name: c, resources: {requests: {cpu: 500m}}}]\n");
    efx_step(x);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_CREATED_NODECLAIM, NULL), 0);
    /* A pod arriving every 900 ms keeps the idle window open; the max window (10 s) closes it. */
    for (int i = 0; i < 12; i++) {
        ns_clock_advance(900);
        char yaml[512];
        snprintf(yaml, sizeof(yaml),
                 "apiVersion: v1\nkind: Pod\nmetadata: {name: p%d}\nspec:\n" EFX_POD_TOLERATE
                 "  containers: [{name: c, resources: {requests: {cpu: 100m}}}]\n",
                 i);
        efx_load(x, yaml);
        efx_step(x);
        if (efx_now() - EFX_T0 < 10000)
            ck_assert_uint_eq(efx_count(x, NS_DECISION_CREATED_NODECLAIM, NULL), 0);
    }
    ck_assert_uint_eq(efx_count(x, NS_DECISION_CREATED_NODECLAIM, NULL), 1);
    const ns_decision *d = efx_first(x, NS_DECISION_CREATED_NODECLAIM, NULL);
    ck_assert_int_ge(d->time_ms - EFX_T0, 10000);
    ck_assert_int_lt(d->time_ms - EFX_T0, 11000);
    efx_free(x);
}
END_TEST

START_TEST(test_in_flight_claims_take_new_pods)
{
    efx *x = efx_new(EFX_BASE, WEB, NULL);
    efx_step(x);
    ns_nodeclaim *c = efx_claim(x, 0);
    const char *type = ns_labels_get(&c->meta.labels, NS_LABEL_INSTANCE_TYPE);
    ck_assert_ptr_nonnull(type);
    /* A small pod fits the in-flight claim's spare room: no second claim. */
    efx_load(x, "apiVersion: v1\nkind: Pod\nmetadata: {name: small}\nspec:\n" EFX_POD_TOLERATE
                "  containers: [{name: c, resources: {requests: {cpu: 10m}}}]\n");
    efx_run_for(x, EFX_S(5));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_CREATED_NODECLAIM, NULL), 1);
    ck_assert(efx_run_until(x, all_bound, EFX_S(60)));
    ck_assert_uint_eq(efx_pods_on(x, efx_node_of(x, c)->meta.name), 4);
    efx_free(x);
}
END_TEST

static bool registered(efx *x)
{
    return x->cluster->n_nodes == 1 && ns_claim_registered(efx_claim(x, 0));
}

static void taint_node(efx *x, ns_node *n, const char *key, const char *effect)
{
    const ns_taint t = {key, NULL, effect};
    ck_assert_int_eq(x->engine->writes.ops->add_node_taint(x->engine->writes.ctx, n, &t), NS_OK);
}

static const char SMALL_POD[] = "apiVersion: v1\nkind: Pod\nmetadata: {name: small}\nspec:\n" EFX_POD_TOLERATE
                                "  containers: [{name: c, resources: {requests: {cpu: 10m}}}]\n";

/* Karpenter's in-flight capacity (pkg/controllers/state statenode.go Taints): a registered Node that is not Ready and
 * not initialized takes pods as the node it will be, its known ephemeral taints (KnownEphemeralTaints and any key
 * under readiness.k8s.io/, pkg/scheduling/taints.go) left out, so a pod that fits its room gets no new claim. */
START_TEST(test_registered_not_ready_node_takes_pods)
{
    ns_engine_config cfg;
    ns_engine_config_default(&cfg);
    cfg.initialization_delay_ms = EFX_S(600); /* Ready only after the test */
    efx *x = efx_new(EFX_BASE, WEB, &cfg);
    ck_assert(efx_run_until(x, registered, EFX_S(60)));
    ns_node *n = x->cluster->nodes[0];
    ck_assert(!n->ready);
    taint_node(x, n, NS_TAINT_NOT_READY_KEY, NS_EFFECT_NO_EXECUTE);
    taint_node(x, n, "node.kubernetes.io/unreachable", NS_EFFECT_NO_SCHEDULE);
    taint_node(x, n, "node.cloudprovider.kubernetes.io/uninitialized", NS_EFFECT_NO_SCHEDULE);
    taint_node(x, n, NS_TAINT_UNREGISTERED_KEY, NS_EFFECT_NO_EXECUTE);
    taint_node(x, n, "readiness.k8s.io/network-ready", NS_EFFECT_NO_SCHEDULE);
    efx_load(x, SMALL_POD);
    efx_run_for(x, EFX_S(30));
    ck_assert(!ns_claim_initialized(efx_claim(x, 0)));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_CREATED_NODECLAIM, NULL), 1);
    efx_free(x);
}
END_TEST

/* Once the node is initialized its taints are its own: the same readiness.k8s.io taint keeps a new pod off it, so
 * the pod gets a claim of its own. */
START_TEST(test_ephemeral_taint_applies_once_initialized)
{
    efx *x = efx_new(EFX_BASE, WEB, NULL);
    ck_assert(efx_run_until(x, all_bound, EFX_S(120)));
    ck_assert(ns_claim_initialized(efx_claim(x, 0)));
    taint_node(x, efx_node_of(x, efx_claim(x, 0)), "readiness.k8s.io/network-ready", NS_EFFECT_NO_SCHEDULE);
    efx_load(x, SMALL_POD);
    efx_run_for(x, EFX_S(30));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_CREATED_NODECLAIM, NULL), 2);
    efx_free(x);
}
END_TEST

START_TEST(test_insufficient_capacity_replans)
{
    efx *x = efx_new(EFX_BASE, WEB, NULL);
    /* The next launch fails with insufficient capacity naming no offering: every option is out for 3 minutes. */
    ns_fault f = {.struct_size = sizeof(f), .kind = NS_FAULT_FAIL, .method = "launch", .count = 1,
                  .error = NS_ERR_INSUFFICIENT_CAPACITY};
    ck_assert_int_eq(ns_plugin_test_inject_fault(x->plugin, &f), NS_OK);
    efx_step(x);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_LAUNCH_FAILED, NULL), 2);
    size_t marked = efx_count(x, NS_DECISION_OFFERING_UNAVAILABLE, NULL);
    ck_assert_uint_gt(marked, 10);
    const ns_decision *first = efx_first(x, NS_DECISION_CREATED_NODECLAIM, NULL);
    char first_claim[128];
    snprintf(first_claim, sizeof(first_claim), "%s", first->nodeclaims);
    ck_assert_ptr_null(ns_cluster_find_nodeclaim(x->cluster, first_claim));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DELETED_NODECLAIM, first_claim), 1);

    /* In the same step the pods are re-planned on an offering that was not marked. */
    ck_assert_uint_eq(efx_count(x, NS_DECISION_CREATED_NODECLAIM, NULL), 2);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_LAUNCHED_NODECLAIM, NULL), 1);
    ck_assert_uint_eq(efx_instances(x), 1);
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 1);
    const ns_nodeclaim *c = efx_claim(x, 0);
    char offering[256];
    snprintf(offering, sizeof(offering), "%s/%s/%s", ns_labels_get(&c->meta.labels, NS_LABEL_INSTANCE_TYPE),
             ns_labels_get(&c->meta.labels, NS_LABEL_ZONE), ns_labels_get(&c->meta.labels, NS_LABEL_CAPACITY_TYPE));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_OFFERING_UNAVAILABLE, offering), 0);
    ck_assert(efx_run_until(x, all_bound, EFX_S(60)));

    /* The cache forgets the offerings after its TTL (3 minutes). */
    ck_assert_uint_eq(x->engine->unavailable.n, marked);
    efx_run_for(x, EFX_S(180) - (efx_now() - EFX_T0) - 1000);
    ck_assert_uint_eq(x->engine->unavailable.n, marked);
    efx_run_for(x, EFX_S(1));
    ck_assert_uint_eq(x->engine->unavailable.n, 0);
    efx_free(x);
}
END_TEST

START_TEST(test_throttled_launch_backs_off)
{
    efx *x = efx_new(EFX_BASE, WEB, NULL);
    ns_fault f = {.struct_size = sizeof(f), .kind = NS_FAULT_THROTTLE, .method = "launch", .count = 1,
                  .delay_ms = 5000};
    ck_assert_int_eq(ns_plugin_test_inject_fault(x->plugin, &f), NS_OK);
    efx_step(x);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_CREATED_NODECLAIM, NULL), 1);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_LAUNCH_FAILED, "Throttled"), 1);
    ns_nodeclaim *c = efx_claim(x, 0);
    ck_assert(!ns_claim_launched(c));
    const ns_condition *cond = ns_conditions_get(&c->conditions, NS_COND_LAUNCHED);
    ck_assert_str_eq(cond->status, "False");
    efx_run_for(x, EFX_S(4));
    ck_assert(!ns_claim_launched(c));
    efx_run_for(x, EFX_S(1));
    ck_assert(ns_claim_launched(c));
    ck_assert_str_eq(ns_conditions_get(&c->conditions, NS_COND_LAUNCHED)->status, "True");
    ck_assert_uint_eq(efx_count(x, NS_DECISION_CREATED_NODECLAIM, NULL), 1);
    ck_assert_uint_eq(efx_instances(x), 1);
    ck_assert(efx_run_until(x, all_bound, EFX_S(60)));
    efx_free(x);
}
END_TEST

START_TEST(test_unschedulable_reported_once)
{
    efx *x = efx_new(EFX_BASE, NULL, NULL);
    efx_load(x, "apiVersion: v1\nkind: Pod\nmetadata: {name: huge}\nspec:\n" EFX_POD_TOLERATE
                "  containers: [{name: c, resources: {requests: {cpu: '5000'}}}]\n");
    efx_run_for(x, EFX_S(20));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_UNSCHEDULABLE_POD, "default/huge"), 1);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_CREATED_NODECLAIM, NULL), 0);
    efx_free(x);
}
END_TEST

START_TEST(test_daemonset_pods_follow_nodes)
{
    static const char ds[] = "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent}\nspec:\n"
                             "  selector: {matchLabels: {app: agent}}\n"
                             "  template:\n    metadata: {labels: {app: agent}}\n    spec:\n"
                             "      tolerations: [{operator: Exists}]\n"
                             "      containers: [{name: c, resources: {requests: {cpu: 200m, memory: 128Mi}}}]\n";
    size_t len = strlen(WEB) + strlen(ds) + 8;
    char *yaml = malloc(len);
    snprintf(yaml, len, "%s---\n%s", WEB, ds);
    efx *x = efx_new(EFX_BASE, yaml, NULL);
    free(yaml);
    ck_assert(efx_run_until(x, all_bound, EFX_S(90)));
    ns_nodeclaim *c = efx_claim(x, 0);
    ck_assert(ns_res_get(&c->requests, "cpu") >= 3200);
    char ds_pod[256];
    snprintf(ds_pod, sizeof(ds_pod), "agent-%s", c->meta.name);
    ns_pod *p = ns_cluster_find_pod(x->cluster, "default", ds_pod);
    ck_assert_ptr_nonnull(p);
    ck_assert_str_eq(p->node_name, c->meta.name);
    efx_free(x);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("engine-provision");
    TCase *tc = tcase_create("provision");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_lifecycle_in_order);
    tcase_add_test(tc, test_batch_window);
    tcase_add_test(tc, test_kubernetes_io_domain_labels);
    tcase_add_test(tc, test_in_flight_claims_take_new_pods);
    tcase_add_test(tc, test_registered_not_ready_node_takes_pods);
    tcase_add_test(tc, test_ephemeral_taint_applies_once_initialized);
    tcase_add_test(tc, test_insufficient_capacity_replans);
    tcase_add_test(tc, test_throttled_launch_backs_off);
    tcase_add_test(tc, test_unschedulable_reported_once);
    tcase_add_test(tc, test_daemonset_pods_follow_nodes);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
