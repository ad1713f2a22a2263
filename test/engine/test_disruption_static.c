/*
 * Static capacity (NodePool spec.replicas behind the StaticCapacity gate) through the engine, from Karpenter 1.14's
 * static provisioning, static deprovisioning and StaticDrift suites: the pool is scaled to its replicas within
 * limits.nodes, scaled down in Karpenter's order (not launched, empty, then by disruption cost with do-not-disrupt
 * nodes last), never consolidated or emptied, and replaced node for node when drifted. Gate off, a static pool gets
 * no node. Decisions asserted from the log; the invariants checked after every step.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "disruption_fixture.h"
#include "errors/ns_error.h"
#include "manifest/loader.h"
#include "model/labels.h"
#include "test_kinds.h"

#define REQS DFX_CAPACITY("on-demand") DFX_TYPES("m5.xlarge")
#define NEVER "    consolidateAfter: Never\n"
/* A static pool "default" of `replicas` nodes; `more`: lines at spec level (two spaces), e.g. limits. */
#define STATIC_POOL(label, replicas, disruption, more)                                                                  \
    "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\nspec:\n  replicas: " #replicas "\n"       \
    "  template:\n    metadata: {labels: {team: " label "}}\n    spec:\n"                                              \
    "      nodeClassRef: {group: nodesmith.io, kind: SimNodeClass, name: default}\n      requirements:\n" REQS        \
    "  disruption:\n" disruption more

static efx *start(const char *yaml, bool gate)
{
    ns_engine_config cfg;
    ns_engine_config_default(&cfg);
    cfg.static_capacity = gate;
    return dfx_new(yaml, &cfg, false);
}

static size_t live_claims(efx *x)
{
    size_t n = 0;
    for (size_t i = 0; i < x->cluster->n_nodeclaims; i++)
        n += !ns_claim_deleting(x->cluster->nodeclaims[i]);
    return n;
}

/* Creates 3 claims at once, from the template (no pod), and never more; the pods find room on the static nodes. */
START_TEST(scales_up_to_replicas)
{
    efx *x = start(DFX_CLASS("{}") STATIC_POOL("web", 3, NEVER, "") "---\n" DFX_DEPLOY("web", 2, "1", "1Gi", ""),
                   true);
    dfx_settle(x, EFX_S(120));
    efx_run_for(x, EFX_S(300));
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 3);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_STATIC_SCALE_UP, NULL), 1);
    const ns_decision *d = efx_first(x, NS_DECISION_STATIC_SCALE_UP, NULL);
    ck_assert_str_eq(d->message, "provisioning nodeclaims to satisfy replica count");
    ck_assert_str_eq(d->reason, "current 0, desired 3");
    ck_assert_str_eq(d->detail, "nodepool default, provision-count 3");
    ck_assert_int_le(d->time_ms, EFX_T0 + EFX_S(1)); /* at the first step */
    ck_assert_uint_eq(efx_count(x, NS_DECISION_CREATED_NODECLAIM, NULL), 3);
    for (size_t i = 0; i < 3; i++) {
        const ns_decision *c = dfx_nth_method(x, NS_DECISION_CREATED_NODECLAIM, "", i);
        ck_assert_str_eq(c->pods, "");
        ck_assert_ptr_nonnull(strstr(c->detail, "nodepool default, 0 pod(s)"));
        ck_assert_str_eq(dfx_label(efx_claim(x, i), NS_LABEL_NODEPOOL), "default");
        ck_assert_str_eq(dfx_label(efx_claim(x, i), "team"), "web");
    }
    ck_assert_uint_eq(efx_bound(x), 2);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTING, NULL), 0);
    efx_free(x);
}
END_TEST

/* Gate off: the static pool launches nothing, and (as Karpenter leaves static pools out of its scheduler) the pods
 * it would hold stay pending with a reason that does not name it. */
START_TEST(gate_off_launches_nothing)
{
    efx *x = start(DFX_CLASS("{}") STATIC_POOL("web", 3, NEVER, "") "---\n" DFX_DEPLOY("web", 2, "1", "1Gi", ""),
                   false);
    efx_run_for(x, EFX_S(120));
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 0);
    ck_assert_uint_eq(efx_pending(x), 2);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_STATIC_SCALE_UP, NULL), 0);
    const ns_decision *d = efx_first(x, NS_DECISION_UNSCHEDULABLE_POD, NULL);
    ck_assert_ptr_nonnull(d);
    ck_assert_ptr_null(strstr(d->reason, "nodepool default"));
    efx_free(x);
}
END_TEST

/* Zero replicas: nothing; then 2; then 0 again deletes both. */
START_TEST(zero_replicas)
{
    efx *x = start(DFX_CLASS("{}") STATIC_POOL("web", 0, NEVER, ""), true);
    efx_run_for(x, EFX_S(60));
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 0);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_STATIC_SCALE_UP, NULL), 0);
    dfx_put(x, STATIC_POOL("web", 2, NEVER, ""));
    dfx_settle(x, EFX_S(120));
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 2);
    dfx_put(x, STATIC_POOL("web", 0, NEVER, ""));
    efx_step(x);
    const ns_decision *d = efx_first(x, NS_DECISION_STATIC_SCALE_DOWN, NULL);
    ck_assert_ptr_nonnull(d);
    ck_assert_str_eq(d->message, "deprovisioning nodeclaims to satisfy replica count");
    ck_assert_str_eq(d->reason, "current 2, desired 0");
    ck_assert_str_eq(d->detail, "nodepool default, deprovision-count 2");
    efx_run_for(x, EFX_S(120));
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 0);
    ck_assert_uint_eq(efx_instances(x), 0);
    efx_free(x);
}
END_TEST

/* limits.nodes 2 under replicas 3: two claims; raising the limit brings the third. */
START_TEST(limits_nodes_caps_the_pool)
{
    efx *x = start(DFX_CLASS("{}") STATIC_POOL("web", 3, NEVER, "  limits: {nodes: 2}\n"), true);
    dfx_settle(x, EFX_S(120));
    efx_run_for(x, EFX_S(120));
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 2);
    ck_assert_str_eq(efx_first(x, NS_DECISION_STATIC_SCALE_UP, NULL)->detail, "nodepool default, provision-count 2");
    dfx_put(x, STATIC_POOL("web", 3, NEVER, "  limits: {nodes: 5}\n"));
    efx_step(x);
    dfx_settle(x, EFX_S(120));
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 3);
    ck_assert_str_eq(efx_last(x, NS_DECISION_STATIC_SCALE_UP, NULL)->reason, "current 2, desired 3");
    efx_free(x);
}
END_TEST

/* A claim deleted by hand is replaced: the deleting one no longer counts as active (only against limits.nodes). */
START_TEST(a_deleted_node_is_replaced)
{
    efx *x = start(DFX_CLASS("{}") STATIC_POOL("web", 2, NEVER, ""), true);
    dfx_settle(x, EFX_S(120));
    char gone[64];
    snprintf(gone, sizeof(gone), "%s", efx_claim(x, 0)->meta.name);
    ck_assert_int_eq(ns_engine_delete_claim(x->engine, efx_claim(x, 0), "test", "Deleted"), NS_OK);
    efx_step(x);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_STATIC_SCALE_UP, NULL), 2);
    ck_assert_str_eq(efx_last(x, NS_DECISION_STATIC_SCALE_UP, NULL)->reason, "current 1, desired 2");
    dfx_settle(x, EFX_S(300));
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 2);
    ck_assert_ptr_null(ns_cluster_find_nodeclaim(x->cluster, gone));
    efx_free(x);
}
END_TEST

#define BARE_POD(name, node, annotations)                                                                               \
    "apiVersion: v1\nkind: Pod\nmetadata: {name: " name annotations "}\nspec:\n"                                       \
    "  nodeSelector: {kubernetes.io/hostname: '%s'}\n"                                                                  \
    "  containers: [{name: c, resources: {requests: {cpu: 500m, memory: 256Mi}}}]\n"

/* Scale-down order (Karpenter's getDeprovisioningCandidates): the empty node first, then nodes without a
 * do-not-disrupt pod; the do-not-disrupt node stays. */
START_TEST(scale_down_takes_empty_then_cheapest)
{
    efx *x = start(DFX_CLASS("{}") STATIC_POOL("web", 3, NEVER, ""), true);
    dfx_settle(x, EFX_S(120));
    char names[3][64], node[3][64], pod[512];
    for (size_t i = 0; i < 3; i++) {
        snprintf(names[i], 64, "%s", efx_claim(x, i)->meta.name);
        snprintf(node[i], 64, "%s", efx_node_of(x, efx_claim(x, i))->meta.name);
    }
    /* names[0] runs a pod that may move, names[1] one that may not, names[2] nothing. */
    snprintf(pod, sizeof(pod), BARE_POD("busy", node[0], ""), node[0]);
    efx_load(x, pod);
    snprintf(pod, sizeof(pod), BARE_POD("keep", node[1], ", annotations: {karpenter.sh/do-not-disrupt: 'true'}"),
             node[1]);
    efx_load(x, pod);
    efx_run_for(x, EFX_S(10));
    ck_assert_uint_eq(efx_pods_on(x, node[0]), 1);
    ck_assert_uint_eq(efx_pods_on(x, node[1]), 1);
    dfx_put(x, STATIC_POOL("web", 1, NEVER, ""));
    efx_step(x);
    const ns_decision *d = efx_first(x, NS_DECISION_STATIC_SCALE_DOWN, NULL);
    ck_assert_ptr_nonnull(d);
    char want[160];
    snprintf(want, sizeof(want), "%s,%s", names[2], names[0]);
    ck_assert_str_eq(d->nodeclaims, want);
    ck_assert(ns_claim_deleting(ns_cluster_find_nodeclaim(x->cluster, names[2])));
    ck_assert(ns_claim_deleting(ns_cluster_find_nodeclaim(x->cluster, names[0])));
    ck_assert(!ns_claim_deleting(ns_cluster_find_nodeclaim(x->cluster, names[1])));
    efx_run_for(x, EFX_S(120));
    ck_assert_uint_eq(live_claims(x), 1);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_STATIC_SCALE_DOWN, NULL), 1);
    efx_free(x);
}
END_TEST

/* A claim not launched yet goes before any launched one, empty or not (Karpenter's unresolved candidates first). */
START_TEST(scale_down_takes_unlaunched_first)
{
    efx *x = start(DFX_CLASS("{}") STATIC_POOL("web", 2, NEVER, ""), true);
    dfx_settle(x, EFX_S(120));
    ns_fault f = {.struct_size = sizeof(f), .kind = NS_FAULT_THROTTLE, .method = "launch", .count = 1,
                  .delay_ms = EFX_S(60)};
    ck_assert_int_eq(ns_plugin_test_inject_fault(x->plugin, &f), NS_OK);
    dfx_put(x, STATIC_POOL("web", 3, NEVER, ""));
    efx_step(x);
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 3);
    const ns_nodeclaim *pending = NULL;
    for (size_t i = 0; i < 3; i++)
        if (!ns_claim_launched(efx_claim(x, i)))
            pending = efx_claim(x, i);
    ck_assert_ptr_nonnull(pending);
    char name[64];
    snprintf(name, sizeof(name), "%s", pending->meta.name);
    dfx_put(x, STATIC_POOL("web", 2, NEVER, ""));
    efx_step(x);
    ck_assert_str_eq(efx_first(x, NS_DECISION_STATIC_SCALE_DOWN, NULL)->nodeclaims, name);
    efx_run_for(x, EFX_S(30));
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 2);
    ck_assert_ptr_null(ns_cluster_find_nodeclaim(x->cluster, name));
    efx_free(x);
}
END_TEST

/* Emptiness and consolidation leave static pools alone (Karpenter's OwnedByStaticNodePool), and say nothing. */
START_TEST(never_consolidated)
{
    efx *x = start(DFX_CLASS("{}") STATIC_POOL("web", 2,
                                               "    consolidationPolicy: WhenEmptyOrUnderutilized\n"
                                               "    consolidateAfter: 0s\n",
                                               ""),
                   true);
    dfx_settle(x, EFX_S(120));
    efx_run_for(x, EFX_S(600));
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 2);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTING, NULL), 0);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTION_INFO, NULL), 0);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_UNCONSOLIDATABLE, NULL), 0);
    efx_free(x);
}
END_TEST

static bool two_new_nodes(efx *x)
{
    return efx_count(x, NS_DECISION_DISRUPTING, NULL) == 2 && dfx_settled(x) && x->cluster->n_nodeclaims == 2;
}

/* A template change drifts both nodes; static drift replaces them one at a time (10% of 2 rounds up to 1), each
 * with one claim of the template launched before the old node goes, so the pool never has fewer than 2 ready nodes. */
START_TEST(drift_replaces_node_for_node)
{
    efx *x = start(DFX_CLASS("{}") STATIC_POOL("web", 2, NEVER, ""), true);
    dfx_settle(x, EFX_S(120));
    char old[2][64];
    for (size_t i = 0; i < 2; i++)
        snprintf(old[i], 64, "%s", efx_claim(x, i)->meta.name);
    int64_t changed = efx_now();
    dfx_put(x, STATIC_POOL("blue", 2, NEVER, ""));
    ck_assert(efx_run_until(x, two_new_nodes, EFX_S(900)));
    for (size_t i = 0; i < 2; i++) {
        const ns_decision *d = dfx_nth_method(x, NS_DECISION_DISRUPTING, "drifted", i);
        ck_assert_str_eq(d->reason, "Drifted");
        ck_assert_ptr_null(strchr(d->nodeclaims, ','));
        ck_assert(strcmp(d->nodeclaims, old[0]) == 0 || strcmp(d->nodeclaims, old[1]) == 0);
        const ns_decision *info = efx_first(x, NS_DECISION_DISRUPTION_INFO, d->nodeclaims);
        ck_assert_str_eq(info->reason, "awaiting validation");
        ck_assert_ptr_nonnull(strstr(info->detail, "decision=replace consolidation-type=static-drift "
                                                   "disrupted-node-count=1 replacement-node-count=1"));
    }
    for (size_t i = 0; i < 2; i++) {
        ck_assert_ptr_null(ns_cluster_find_nodeclaim(x->cluster, old[i]));
        ck_assert_str_eq(dfx_label(efx_claim(x, i), "team"), "blue");
    }
    size_t n;
    const ns_engine_sample *h = ns_engine_history(x->engine, &n);
    for (size_t i = 0; i < n; i++)
        if (h[i].time_ms >= changed)
            ck_assert_uint_ge(h[i].nodes_ready, 2);
    /* The replacements came from drift, not from scaling. */
    ck_assert_uint_eq(efx_count(x, NS_DECISION_STATIC_SCALE_UP, NULL), 1);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_STATIC_SCALE_DOWN, NULL), 0);
    efx_free(x);
}
END_TEST

/* limits.nodes at replicas leaves no room for a replacement: drifted nodes stay (Karpenter's "should not drift nodes
 * when we cannot acquire limits"). */
START_TEST(drift_waits_for_room_under_limits)
{
    efx *x = start(DFX_CLASS("{}") STATIC_POOL("web", 2, NEVER, "  limits: {nodes: 2}\n"), true);
    dfx_settle(x, EFX_S(120));
    dfx_put(x, STATIC_POOL("blue", 2, NEVER, "  limits: {nodes: 2}\n"));
    efx_run_for(x, EFX_S(300));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTING, NULL), 0);
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 2);
    ck_assert_ptr_nonnull(ns_conditions_get(&efx_claim(x, 0)->conditions, NS_COND_DRIFTED));
    /* Room for one more: one at a time. */
    dfx_put(x, STATIC_POOL("blue", 2, NEVER, "  limits: {nodes: 3}\n"));
    ck_assert(efx_run_until(x, two_new_nodes, EFX_S(900)));
    efx_free(x);
}
END_TEST

static int put_pool(efx *x, const char *yaml)
{
    ns_cluster *tmp = test_cluster_new();
    ck_assert_int_eq(ns_manifest_load_string(tmp, "patch.yaml", yaml, strlen(yaml)), NS_OK);
    ns_nodepool *np = tmp->nodepools[0];
    tmp->nodepools[0] = NULL;
    ns_cluster_free(tmp);
    return ns_engine_put_nodepool(x->engine, np);
}

/* The CRD's transition rule: a pool cannot turn static or dynamic by an update. */
START_TEST(static_and_dynamic_do_not_transition)
{
    efx *x = start(DFX_CLASS("{}") STATIC_POOL("web", 1, NEVER, ""), true);
    ck_assert_int_eq(put_pool(x, DFX_POOL("", REQS, NEVER)), NS_ERR_INVALID_CONFIG);
    ck_assert_str_eq(ns_error_message(), "NodePool default: spec.replicas removed: Cannot transition NodePool between "
                                         "static (replicas set) and dynamic (replicas unset) provisioning modes");
    ck_assert(ns_nodepool_is_static(ns_cluster_find_nodepool(x->cluster, "default")));
    efx_free(x);
    x = start(DFX_CLASS("{}") DFX_POOL("", REQS, NEVER), true);
    ck_assert_int_eq(put_pool(x, STATIC_POOL("web", 1, NEVER, "")), NS_ERR_INVALID_CONFIG);
    ck_assert_ptr_nonnull(strstr(ns_error_message(), "spec.replicas added: Cannot transition"));
    efx_free(x);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("disruption-static");
    TCase *tc = tcase_create("static");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, scales_up_to_replicas);
    tcase_add_test(tc, gate_off_launches_nothing);
    tcase_add_test(tc, zero_replicas);
    tcase_add_test(tc, limits_nodes_caps_the_pool);
    tcase_add_test(tc, a_deleted_node_is_replaced);
    tcase_add_test(tc, scale_down_takes_empty_then_cheapest);
    tcase_add_test(tc, scale_down_takes_unlaunched_first);
    tcase_add_test(tc, never_consolidated);
    tcase_add_test(tc, drift_replaces_node_for_node);
    tcase_add_test(tc, drift_waits_for_room_under_limits);
    tcase_add_test(tc, static_and_dynamic_do_not_transition);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
