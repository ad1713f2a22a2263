/* What keeps a node from voluntary disruption, through the engine: a karpenter.sh/do-not-disrupt pod or Node, a
 * PodDisruptionBudget with maxUnavailable 0, and two budgets over one pod; expiration's forceful path goes on
 * regardless. The invariant checker (no PDB violated, no do-not-disrupt pod evicted voluntarily) runs after every
 * step. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "disruption_fixture.h"
#include "errors/ns_error.h"
#include "model/labels.h"

/* One m5.2xlarge with four 1.5-CPU pods; scaled to one, an m5.large would do (test_disruption_consolidation). */
#define POOL(template_spec, disruption)                                                                                \
    DFX_CLASS("{}")                                                                                                    \
    DFX_POOL(template_spec, DFX_CAPACITY("on-demand") DFX_TYPES("m5.large, m5.xlarge, m5.2xlarge"), disruption) "---\n"
#define UNDERUTILIZED                                                                                                  \
    "    consolidationPolicy: WhenEmptyOrUnderutilized\n    consolidateAfter: 30s\n    budgets: [{nodes: '100%'}]\n"
#define KEEP_POD_FOR(value)                                                                                            \
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: keep\n  annotations: {karpenter.sh/do-not-disrupt: '" value "'}\n" \
    "spec:\n  containers: [{name: c, resources: {requests: {cpu: 100m, memory: 128Mi}}}]\n---\n"
#define KEEP_POD KEEP_POD_FOR("true")

static efx *oversized(const char *yaml, char *name, size_t len)
{
    efx *x = dfx_new(yaml, NULL, false);
    dfx_settle(x, EFX_S(120));
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 1);
    ck_assert_str_eq(dfx_label(efx_claim(x, 0), NS_LABEL_INSTANCE_TYPE), "m5.2xlarge");
    snprintf(name, len, "%s", efx_claim(x, 0)->meta.name);
    dfx_scale(x, "a", 1);
    return x;
}

/* Nothing disrupted for ten minutes; the node is still there with its pods. */
static void left_alone(efx *x, const char *name, size_t pods)
{
    efx_run_for(x, EFX_S(600));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTING, NULL), 0);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_EVICTED_POD, NULL), 0);
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 1);
    ck_assert_uint_eq(efx_pods_on(x, name), pods);
}

/* The block was recorded once (Karpenter's DisruptionBlocked event), with Karpenter's sentence and the pod. */
static void blocked_once(efx *x, const char *name, const char *why, const char *pod)
{
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTION_BLOCKED, NULL), 1);
    const ns_decision *d = dfx_nth_method(x, NS_DECISION_DISRUPTION_BLOCKED, "", 0);
    ck_assert_str_eq(d->reason, why);
    ck_assert_str_eq(d->nodeclaims, name);
    ck_assert_str_eq(d->nodes, efx_node_of(x, efx_claim(x, 0))->meta.name);
    ck_assert_str_eq(d->pods, pod);
}

/* Once the block is lifted, the node is replaced by an m5.large. */
static void replaced_once_unblocked(efx *x, const char *name, const char *method)
{
    efx_run_for(x, EFX_S(180));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTING, NULL), 1);
    ck_assert_str_eq(dfx_nth_method(x, NS_DECISION_DISRUPTING, method, 0)->nodeclaims, name);
    ck_assert(dfx_settled(x));
    ck_assert_ptr_null(ns_cluster_find_nodeclaim(x->cluster, name));
    ck_assert_str_eq(dfx_label(efx_claim(x, 0), NS_LABEL_INSTANCE_TYPE), "m5.large");
}

START_TEST(test_do_not_disrupt_pod_blocks_consolidation)
{
    char name[64];
    efx *x = oversized(POOL("", UNDERUTILIZED) DFX_DEPLOY("a", 4, "1500m", "1Gi", "") KEEP_POD, name, sizeof(name));
    left_alone(x, name, 2);
    blocked_once(x, name, "Pod has \"karpenter.sh/do-not-disrupt\" annotation", "default/keep");
    ck_assert_int_eq(ns_engine_delete_pod(x->engine, "default", "keep"), NS_OK);
    replaced_once_unblocked(x, name, "underutilized");
    efx_free(x);
}
END_TEST

START_TEST(test_do_not_disrupt_node_blocks_consolidation)
{
    char name[64];
    efx *x = oversized(POOL("", UNDERUTILIZED) DFX_DEPLOY("a", 4, "1500m", "1Gi", ""), name, sizeof(name));
    ns_node *node = efx_node_of(x, efx_claim(x, 0));
    ck_assert_int_eq(ns_labels_set(&node->meta.annotations, NS_ANNOTATION_DO_NOT_DISRUPT, "true"), 0);
    left_alone(x, name, 1);
    blocked_once(x, name, "Disruption is blocked through the \"karpenter.sh/do-not-disrupt\" annotation", "");
    ns_labels_remove(&efx_node_of(x, efx_claim(x, 0))->meta.annotations, NS_ANNOTATION_DO_NOT_DISRUPT);
    replaced_once_unblocked(x, name, "underutilized");
    efx_free(x);
}
END_TEST

START_TEST(test_do_not_disrupt_pod_blocks_drift)
{
    char name[64];
    efx *x = oversized(POOL("", UNDERUTILIZED) DFX_DEPLOY("a", 4, "1500m", "1Gi", "") KEEP_POD, name, sizeof(name));
    dfx_put(x, POOL("      terminationGracePeriod: 1h\n", UNDERUTILIZED));
    left_alone(x, name, 2);
    ck_assert_ptr_nonnull(ns_conditions_get(&efx_claim(x, 0)->conditions, NS_COND_DRIFTED));
    ck_assert_int_eq(ns_engine_delete_pod(x->engine, "default", "keep"), NS_OK);
    replaced_once_unblocked(x, name, "drifted");
    efx_free(x);
}
END_TEST

START_TEST(test_pdb_max_unavailable_zero_blocks_consolidation)
{
    char name[64];
    efx *x = oversized(POOL("", UNDERUTILIZED) DFX_DEPLOY("a", 4, "1500m", "1Gi", "") DFX_PDB("a", "maxUnavailable", 0),
                       name, sizeof(name));
    left_alone(x, name, 1);
    ck_assert_str_eq(dfx_nth_method(x, NS_DECISION_DISRUPTION_BLOCKED, "", 0)->reason, "Pdb prevents pod evictions");
    efx_free(x);
}
END_TEST

START_TEST(test_pod_under_two_pdbs_blocks_consolidation)
{
    /* Each budget alone allows an eviction, and one such budget lets the node go (the first run). Karpenter's
     * CanEvictPods refuses a pod that more than one budget selects whatever they allow, as the Eviction API refuses
     * it: with a second budget the node is no candidate. */
    char name[64];
    efx *x = oversized(POOL("", UNDERUTILIZED) DFX_DEPLOY("a", 4, "1500m", "1Gi", "") DFX_PDB("a", "maxUnavailable", 1),
                       name, sizeof(name));
    replaced_once_unblocked(x, name, "underutilized");
    efx_free(x);

    x = oversized(POOL("", UNDERUTILIZED) DFX_DEPLOY("a", 4, "1500m", "1Gi", "") DFX_PDB("a", "maxUnavailable", 1)
                      "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: a-too}\nspec:\n"
                      "  maxUnavailable: 1\n  selector: {matchLabels: {app: a}}\n---\n",
                  name, sizeof(name));
    left_alone(x, name, 1);
    ck_assert_str_eq(dfx_nth_method(x, NS_DECISION_DISRUPTION_BLOCKED, "", 0)->reason, "Pdb prevents pod evictions");
    efx_free(x);
}
END_TEST

START_TEST(test_expiration_despite_do_not_disrupt_node)
{
    static const char yaml[] =
        POOL("      expireAfter: 10m\n", UNDERUTILIZED) DFX_DEPLOY("a", 4, "1500m", "1Gi", "");
    efx *x = dfx_new(yaml, NULL, false);
    dfx_settle(x, EFX_S(120));
    char name[64];
    snprintf(name, sizeof(name), "%s", efx_claim(x, 0)->meta.name);
    ns_node *node = efx_node_of(x, efx_claim(x, 0));
    ck_assert_int_eq(ns_labels_set(&node->meta.annotations, NS_ANNOTATION_DO_NOT_DISRUPT, "true"), 0);
    int64_t created = efx_claim(x, 0)->meta.creation_ms;
    efx_run_for(x, created + EFX_S(600) - efx_now() - EFX_S(1));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTING, NULL), 0);
    efx_run_for(x, EFX_S(1));
    ck_assert_uint_eq(dfx_count_method(x, NS_DECISION_DISRUPTING, "expired"), 1);
    dfx_settle(x, EFX_S(180));
    ck_assert_ptr_null(ns_cluster_find_nodeclaim(x->cluster, name));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_EVICTED_POD, name), 4);
    ck_assert_uint_eq(efx_bound(x), 4);
    efx_free(x);
}
END_TEST

START_TEST(test_template_metadata_reaches_node_and_blocks)
{
    /* Karpenter copies the NodePool template's labels and annotations to each NodeClaim and, at registration, to its
     * Node: a template karpenter.sh/do-not-disrupt keeps every node of the pool from voluntary disruption. */
    static const char yaml[] =
        DFX_CLASS("{}")
        "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\nspec:\n  template:\n"
        "    metadata:\n      labels: {team: blue}\n"
        "      annotations: {karpenter.sh/do-not-disrupt: 'true', example.com/owner: platform}\n    spec:\n"
        "      nodeClassRef: {group: nodesmith.io, kind: SimNodeClass, name: default}\n"
        "      requirements:\n" DFX_CAPACITY("on-demand") DFX_TYPES("m5.large, m5.xlarge, m5.2xlarge")
        "  disruption:\n" UNDERUTILIZED "---\n" DFX_DEPLOY("a", 4, "1500m", "1Gi", "");
    char name[64];
    efx *x = oversized(yaml, name, sizeof(name));
    const ns_nodeclaim *c = efx_claim(x, 0);
    const ns_node *n = efx_node_of(x, c);
    ck_assert_str_eq(ns_labels_get(&c->meta.annotations, "example.com/owner"), "platform");
    ck_assert_str_eq(ns_labels_get(&c->meta.annotations, NS_ANNOTATION_DO_NOT_DISRUPT), "true");
    ck_assert_str_eq(ns_labels_get(&n->meta.annotations, "example.com/owner"), "platform");
    ck_assert_str_eq(ns_labels_get(&n->meta.annotations, NS_ANNOTATION_DO_NOT_DISRUPT), "true");
    ck_assert_str_eq(ns_labels_get(&n->meta.labels, "team"), "blue");
    /* The claim's own annotations (the hashes) reach the Node too. */
    ck_assert_str_eq(ns_labels_get(&n->meta.annotations, NS_ANNOTATION_NODEPOOL_HASH),
                     ns_labels_get(&c->meta.annotations, NS_ANNOTATION_NODEPOOL_HASH));
    left_alone(x, name, 1);
    efx_free(x);
}
END_TEST

START_TEST(test_do_not_disrupt_duration)
{
    /* karpenter.sh/do-not-disrupt: "10m" protects the pod for ten minutes after it started, then the node is an
     * ordinary consolidation candidate (Karpenter's IsDoNotDisruptActive). */
    char name[64];
    efx *x = oversized(POOL("", UNDERUTILIZED) DFX_DEPLOY("a", 4, "1500m", "1Gi", "") KEEP_POD_FOR("10m"), name,
                       sizeof(name));
    const ns_pod *keep = ns_cluster_find_pod(x->cluster, "default", "keep");
    ck_assert_int_eq(keep->do_not_disrupt_ms, EFX_S(600));
    int64_t started = keep->start_ms;
    ck_assert_int_gt(started, 0);
    ck_assert_int_lt(efx_now() - started, EFX_S(600) - EFX_S(300));
    efx_run_for(x, started + EFX_S(600) - efx_now() - EFX_S(1));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTING, NULL), 0);
    efx_run_for(x, EFX_S(180));
    const ns_decision *d = dfx_nth_method(x, NS_DECISION_DISRUPTING, "underutilized", 0);
    ck_assert_ptr_nonnull(d);
    ck_assert_str_eq(d->nodeclaims, name);
    ck_assert_int_ge(d->time_ms, started + EFX_S(600));
    efx_free(x);
}
END_TEST

START_TEST(test_do_not_disrupt_invalid_ignored)
{
    /* A value that is neither "true" nor a positive duration is ignored, as Karpenter does: no protection. */
    char name[64];
    efx *x = oversized(POOL("", UNDERUTILIZED) DFX_DEPLOY("a", 4, "1500m", "1Gi", "") KEEP_POD_FOR("-5m"), name,
                       sizeof(name));
    ck_assert_int_eq(ns_cluster_find_pod(x->cluster, "default", "keep")->do_not_disrupt_ms, 0);
    int64_t from = efx_now();
    efx_run_for(x, EFX_S(180));
    const ns_decision *d = dfx_nth_method(x, NS_DECISION_DISRUPTING, "underutilized", 0);
    ck_assert_ptr_nonnull(d);
    ck_assert_int_lt(d->time_ms - from, EFX_S(120));
    efx_free(x);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("disruption-blocking");
    TCase *tc = tcase_create("blocking");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, test_do_not_disrupt_pod_blocks_consolidation);
    tcase_add_test(tc, test_do_not_disrupt_node_blocks_consolidation);
    tcase_add_test(tc, test_do_not_disrupt_pod_blocks_drift);
    tcase_add_test(tc, test_pdb_max_unavailable_zero_blocks_consolidation);
    tcase_add_test(tc, test_pod_under_two_pdbs_blocks_consolidation);
    tcase_add_test(tc, test_expiration_despite_do_not_disrupt_node);
    tcase_add_test(tc, test_template_metadata_reaches_node_and_blocks);
    tcase_add_test(tc, test_do_not_disrupt_duration);
    tcase_add_test(tc, test_do_not_disrupt_invalid_ignored);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
