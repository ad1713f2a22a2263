/* Drift through the engine: a NodePool template change (its hash), a node class change (its hash), and the
 * provider's own drift check (the sim's image), each rolled within the NodePool's budget with a replacement launched
 * and initialized before each old node is drained. Decisions asserted from the log; the invariants checked after
 * every step. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "disruption_fixture.h"
#include "errors/ns_error.h"
#include "model/labels.h"

#define REQS DFX_CAPACITY("on-demand") DFX_TYPES("m5.xlarge")
#define BUDGET_ONE "    consolidationPolicy: WhenEmpty\n    consolidateAfter: Never\n    budgets: [{nodes: '1'}]\n"
#define CACHE DFX_DEPLOY("cache", 3, "1", "1Gi", DFX_SPREAD("cache")) DFX_PDB("cache", "maxUnavailable", 1)

/* Three nodes of one pod each; their names into names[]. */
static efx *three_nodes(const char *yaml, char names[3][64])
{
    efx *x = dfx_new(yaml, NULL, false);
    dfx_settle(x, EFX_S(120));
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 3);
    for (size_t i = 0; i < 3; i++)
        snprintf(names[i], 64, "%s", efx_claim(x, i)->meta.name);
    return x;
}

/* After one step, every old claim carries the Drifted condition with `reason`. */
static void all_drifted(efx *x, char names[3][64], const char *reason)
{
    efx_step(x);
    for (size_t i = 0; i < 3; i++) {
        const ns_nodeclaim *c = ns_cluster_find_nodeclaim(x->cluster, names[i]);
        const ns_condition *cond = ns_conditions_get(&c->conditions, NS_COND_DRIFTED);
        ck_assert_msg(cond != NULL, "nodeclaim %s is not drifted", names[i]);
        ck_assert_str_eq(cond->status, "True");
        ck_assert_str_eq(cond->reason, reason);
    }
}

/* Each old node was disrupted alone, with one replacement initialized before its pod was evicted, and was gone before
 * the next one was disrupted; never more than one node in flight. Returns at the end with three new nodes. */
static bool three_rolled(efx *x)
{
    return efx_count(x, NS_DECISION_DISRUPTING, NULL) == 3 && dfx_settled(x);
}

static void rolled_one_at_a_time(efx *x, char names[3][64], int64_t changed_at)
{
    ck_assert(efx_run_until(x, three_rolled, EFX_S(900)));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTING, NULL), 3);
    int64_t prev_gone = 0;
    for (size_t i = 0; i < 3; i++) {
        const ns_decision *d = dfx_nth_method(x, NS_DECISION_DISRUPTING, "drifted", i);
        ck_assert_str_eq(d->reason, "Drifted");
        ck_assert_ptr_null(strchr(d->nodeclaims, ','));
        bool old = false;
        for (size_t k = 0; k < 3; k++)
            old = old || strcmp(d->nodeclaims, names[k]) == 0;
        ck_assert_msg(old, "disrupted %s, not one of the drifted nodes", d->nodeclaims);
        ck_assert_int_ge(d->time_ms, prev_gone);
        const char *repl = strchr(d->detail, '[');
        ck_assert_ptr_nonnull(repl);
        char name[64];
        snprintf(name, sizeof(name), "%.*s", (int)strcspn(repl + 1, "]"), repl + 1);
        ck_assert_msg(name[0], "no replacement in %s", d->detail);
        const ns_decision *init = efx_first(x, NS_DECISION_INITIALIZED_NODECLAIM, name);
        const ns_decision *evict = efx_first(x, NS_DECISION_EVICTED_POD, d->nodeclaims);
        const ns_decision *gone = efx_first(x, NS_DECISION_DELETED_NODE, d->nodeclaims);
        ck_assert_ptr_nonnull(init);
        ck_assert_ptr_nonnull(evict);
        ck_assert_ptr_nonnull(gone);
        ck_assert_int_le(init->time_ms, evict->time_ms);
        prev_gone = gone->time_ms;
    }
    size_t n;
    const ns_engine_sample *h = ns_engine_history(x->engine, &n);
    for (size_t i = 0; i < n; i++)
        if (h[i].time_ms >= changed_at)
            ck_assert_uint_le(h[i].nodeclaims, 4);
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 3);
    for (size_t i = 0; i < 3; i++) {
        ck_assert_ptr_null(ns_cluster_find_nodeclaim(x->cluster, names[i]));
        ck_assert_ptr_null(ns_conditions_get(&efx_claim(x, i)->conditions, NS_COND_DRIFTED));
        ck_assert_uint_eq(efx_pods_on(x, efx_claim(x, i)->meta.name), 1);
    }
    /* Nothing drifts any more: no further disruption. */
    efx_run_for(x, EFX_S(300));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTING, NULL), 3);
}

START_TEST(test_nodepool_template_drift)
{
    static const char yaml[] = DFX_CLASS("{}") DFX_POOL("", REQS, BUDGET_ONE) "---\n" CACHE;
    char names[3][64];
    efx *x = three_nodes(yaml, names);
    static const char patched[] =
        "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\nspec:\n  template:\n"
        "    metadata: {labels: {team: green}}\n    spec:\n"
        "      nodeClassRef: {group: nodesmith.io, kind: SimNodeClass, name: default}\n"
        "      requirements:\n" REQS "  disruption:\n" BUDGET_ONE;
    dfx_put(x, patched);
    int64_t changed = efx_now();
    all_drifted(x, names, "NodePoolDrifted");
    rolled_one_at_a_time(x, names, changed);
    for (size_t i = 0; i < 3; i++)
        ck_assert_str_eq(dfx_label(efx_claim(x, i), "team"), "green");
    efx_free(x);
}
END_TEST

START_TEST(test_nodeclass_drift)
{
    static const char yaml[] = DFX_CLASS("{tags: {owner: blue}}") DFX_POOL("", REQS, BUDGET_ONE) "---\n" CACHE;
    char names[3][64];
    efx *x = three_nodes(yaml, names);
    dfx_put(x, DFX_CLASS("{tags: {owner: green}}"));
    int64_t changed = efx_now();
    all_drifted(x, names, "NodeClassDrifted");
    rolled_one_at_a_time(x, names, changed);
    efx_free(x);
}
END_TEST

START_TEST(test_provider_drift)
{
    /* The image is the provider's to check (as Karpenter leaves AMI selection to the AWS provider's drift check):
     * the sim reports ImageDrift for instances running another image than the class names now. */
    static const char yaml[] = DFX_CLASS("{imageVersion: v1}") DFX_POOL("", REQS, BUDGET_ONE) "---\n" CACHE;
    char names[3][64];
    efx *x = three_nodes(yaml, names);
    dfx_put(x, DFX_CLASS("{imageVersion: v2}"));
    int64_t changed = efx_now();
    all_drifted(x, names, "ImageDrift");
    rolled_one_at_a_time(x, names, changed);
    efx_free(x);
}
END_TEST

START_TEST(test_provider_zone_drift)
{
    /* Only the nodes in the zone the class no longer allows have drifted. */
    static const char yaml[] = DFX_CLASS("{}") DFX_POOL("", REQS, BUDGET_ONE) "---\n" CACHE;
    char names[3][64];
    efx *x = three_nodes(yaml, names);
    const char *zone = dfx_label(efx_claim(x, 0), NS_LABEL_ZONE);
    const char *other = strcmp(zone, "us-west-2c") == 0 ? "us-west-2b" : "us-west-2c";
    char cls[256];
    snprintf(cls, sizeof(cls), DFX_CLASS("{zones: [%s]}"), other);
    dfx_put(x, cls);
    efx_step(x);
    size_t drifted = 0;
    for (size_t i = 0; i < 3; i++) {
        const ns_nodeclaim *c = efx_claim(x, i);
        const ns_condition *cond = ns_conditions_get(&c->conditions, NS_COND_DRIFTED);
        bool in_other = strcmp(dfx_label(c, NS_LABEL_ZONE), other) == 0;
        ck_assert_msg(in_other == (cond == NULL), "nodeclaim %s in %s: drifted %s", c->meta.name,
                      dfx_label(c, NS_LABEL_ZONE), cond ? cond->reason : "no");
        if (cond) {
            ck_assert_str_eq(cond->reason, "ZoneDrift");
            drifted++;
        }
    }
    ck_assert_uint_ge(drifted, 1);
    efx_run_for(x, EFX_S(600));
    ck_assert(dfx_settled(x));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTING, "drifted"), drifted);
    for (size_t i = 0; i < 3; i++)
        ck_assert_str_eq(dfx_label(efx_claim(x, i), NS_LABEL_ZONE), other);
    efx_free(x);
}
END_TEST

/* A NodePool as DFX_POOL, with the requirement lines and template labels given. */
#define POOL_WITH(labels, reqs)                                                                                       \
    "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\nspec:\n  template:\n"                 \
    "    metadata: {labels: " labels "}\n    spec:\n"                                                               \
    "      nodeClassRef: {group: nodesmith.io, kind: SimNodeClass, name: default}\n"                                  \
    "      requirements:\n" reqs "  disruption:\n" BUDGET_ONE

/* Runs five minutes after a change that must roll nothing: no claim drifted, none disrupted, the same three. */
static void nothing_drifts(efx *x, char names[3][64])
{
    efx_run_for(x, EFX_S(300));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTING, NULL), 0);
    for (size_t i = 0; i < 3; i++) {
        const ns_nodeclaim *c = ns_cluster_find_nodeclaim(x->cluster, names[i]);
        ck_assert_msg(c != NULL, "nodeclaim %s is gone", names[i]);
        const ns_condition *cond = ns_conditions_get(&c->conditions, NS_COND_DRIFTED);
        ck_assert_msg(cond == NULL, "nodeclaim %s drifted: %s", names[i], cond ? cond->reason : "");
    }
}

START_TEST(test_requirements_widened_no_drift)
{
    /* Karpenter leaves requirements out of the NodePool hash: widening them, or adding Exists on a label every node
     * has, leaves the nodes' labels satisfying them, so nothing rolls. */
    static const char yaml[] = DFX_CLASS("{}") DFX_POOL("", REQS, BUDGET_ONE) "---\n" CACHE;
    char names[3][64];
    efx *x = three_nodes(yaml, names);
    dfx_put(x, POOL_WITH("{team: blue}", DFX_CAPACITY("on-demand, spot") DFX_TYPES("m5.xlarge, m5.2xlarge")
                             "        - {key: kubernetes.io/arch, operator: Exists}\n"));
    nothing_drifts(x, names);
    efx_free(x);
}
END_TEST

START_TEST(test_requirements_narrowed_drift)
{
    /* A requirement the nodes' labels no longer satisfy drifts them, named RequirementsDrifted, not NodePoolDrifted. */
    static const char yaml[] = DFX_CLASS("{}") DFX_POOL("", REQS, BUDGET_ONE) "---\n" CACHE;
    char names[3][64];
    efx *x = three_nodes(yaml, names);
    dfx_put(x, POOL_WITH("{team: blue}", DFX_CAPACITY("on-demand") DFX_TYPES("m5.2xlarge")));
    int64_t changed = efx_now();
    all_drifted(x, names, "RequirementsDrifted");
    rolled_one_at_a_time(x, names, changed);
    for (size_t i = 0; i < 3; i++)
        ck_assert_str_eq(dfx_label(efx_claim(x, i), NS_LABEL_INSTANCE_TYPE), "m5.2xlarge");
    efx_free(x);
}
END_TEST

START_TEST(test_template_labels_reordered_no_drift)
{
    /* The template's labels are a map (Karpenter hashes them as one): the same labels in another order are no change. */
    static const char yaml[] = DFX_CLASS("{}") POOL_WITH("{team: blue, tier: web}", REQS) "---\n" CACHE;
    char names[3][64];
    efx *x = three_nodes(yaml, names);
    dfx_put(x, POOL_WITH("{tier: web, team: blue}", REQS));
    nothing_drifts(x, names);
    efx_free(x);
}
END_TEST

START_TEST(test_foreign_hash_version_restamped)
{
    /* A claim whose hash another algorithm computed (Karpenter's own, before a takeover) is re-stamped with today's
     * hash and version, as Karpenter's hash controller does on a NodePoolHashVersion bump, and is not drifted. */
    static const char yaml[] = DFX_CLASS("{}") DFX_POOL("", REQS, BUDGET_ONE) "---\n" CACHE;
    char names[3][64];
    efx *x = three_nodes(yaml, names);
    char want[64];
    snprintf(want, sizeof(want), "%s",
             ns_labels_get(&efx_claim(x, 0)->meta.annotations, NS_ANNOTATION_NODEPOOL_HASH));
    for (size_t i = 0; i < 3; i++) {
        ns_nodeclaim *c = efx_claim(x, i);
        ck_assert_str_eq(ns_labels_get(&c->meta.annotations, NS_ANNOTATION_NODEPOOL_HASH_VERSION),
                         NS_NODEPOOL_HASH_VERSION);
        ck_assert_int_eq(ns_labels_set(&c->meta.annotations, NS_ANNOTATION_NODEPOOL_HASH, "6103710584711587357"), 0);
        ck_assert_int_eq(ns_labels_set(&c->meta.annotations, NS_ANNOTATION_NODEPOOL_HASH_VERSION, "v3"), 0);
    }
    nothing_drifts(x, names);
    for (size_t i = 0; i < 3; i++) {
        const ns_nodeclaim *c = ns_cluster_find_nodeclaim(x->cluster, names[i]);
        ck_assert_str_eq(ns_labels_get(&c->meta.annotations, NS_ANNOTATION_NODEPOOL_HASH), want);
        ck_assert_str_eq(ns_labels_get(&c->meta.annotations, NS_ANNOTATION_NODEPOOL_HASH_VERSION),
                         NS_NODEPOOL_HASH_VERSION);
    }
    /* A stale hash under today's version is a real change. */
    ns_nodeclaim *c = ns_cluster_find_nodeclaim(x->cluster, names[0]);
    ck_assert_int_eq(ns_labels_set(&c->meta.annotations, NS_ANNOTATION_NODEPOOL_HASH, "0000000000000000"), 0);
    efx_step(x);
    const ns_condition *cond = ns_conditions_get(&c->conditions, NS_COND_DRIFTED);
    ck_assert_ptr_nonnull(cond);
    ck_assert_str_eq(cond->reason, "NodePoolDrifted");
    efx_free(x);
}
END_TEST

/* Karpenter's eventual disruption (issue 10 rule 3): drift of a node whose claim has a terminationGracePeriod is not
 * blocked by a do-not-disrupt pod or a PodDisruptionBudget that allows no eviction. The replacement is planned for the
 * pods that can leave (rule 9), the node is deleted once it is initialized, and the blocked pods are deleted at the
 * node's termination time minus their own grace period (30 s). */
START_TEST(test_drift_with_grace_period_past_blocking_pods)
{
#define TGP_POOL(more)                                                                                                 \
    DFX_POOL("      terminationGracePeriod: 5m\n" more, REQS, BUDGET_ONE) "---\n"
    static const char yaml[] =
        DFX_CLASS("{}") TGP_POOL("") DFX_DEPLOY("web", 1, "1", "1Gi", "") DFX_DEPLOY("db", 1, "1", "1Gi", "")
        DFX_PDB("db", "maxUnavailable", 0)
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: keep\n  annotations: {karpenter.sh/do-not-disrupt: 'true'}\n"
        "spec:\n  containers: [{name: c, resources: {requests: {cpu: 100m, memory: 128Mi}}}]\n";
    efx *x = dfx_new(yaml, NULL, false);
    dfx_settle(x, EFX_S(120));
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 1);
    char old[64];
    snprintf(old, sizeof(old), "%s", efx_claim(x, 0)->meta.name);
    ck_assert_int_eq(efx_claim(x, 0)->termination_grace_period_ms, EFX_S(300));
    ck_assert_uint_eq(efx_pods_on(x, old), 3);

    dfx_put(x, DFX_CLASS("{}") TGP_POOL("      taints: [{key: example.com/rolled, effect: PreferNoSchedule}]\n"));
    efx_run_for(x, EFX_S(30));
    ck_assert_uint_eq(dfx_count_method(x, NS_DECISION_DISRUPTING, "drifted"), 1);
    const ns_decision *d = dfx_nth_method(x, NS_DECISION_DISRUPTING, "drifted", 0);
    ck_assert_str_eq(d->nodeclaims, old);
    /* One replacement, for the web pod: the two pods that cannot leave get no capacity. */
    ck_assert_uint_eq(efx_count(x, NS_DECISION_CREATED_NODECLAIM, NULL), 2);
    ck_assert(efx_run_until(x, dfx_settled, EFX_S(600)));
    ck_assert_ptr_null(ns_cluster_find_nodeclaim(x->cluster, old));
    const ns_decision *deleted = efx_first(x, NS_DECISION_DELETED_NODECLAIM, old);
    ck_assert_ptr_nonnull(deleted);
    const ns_decision *web = efx_first(x, NS_DECISION_EVICTED_POD, "default/web-");
    ck_assert_str_eq(web->method, "eviction");
    ck_assert_uint_ge(efx_count(x, NS_DECISION_EVICTION_BLOCKED, "default/db-"), 1);
    ck_assert_uint_ge(efx_count(x, NS_DECISION_EVICTION_BLOCKED, "default/keep"), 1);
    const ns_decision *keep = efx_first(x, NS_DECISION_EVICTED_POD, "default/keep");
    const ns_decision *db = efx_first(x, NS_DECISION_EVICTED_POD, "default/db-");
    ck_assert_str_eq(keep->method, "forced deletion");
    ck_assert_str_eq(db->method, "forced deletion");
    /* The claim's deletion is the eviction of web's step (voluntary: once the replacement was initialized). */
    ck_assert_int_eq(keep->time_ms - web->time_ms, EFX_S(271));
    ck_assert_int_eq(db->time_ms - web->time_ms, EFX_S(271));
    /* db's Deployment brings its pod back on the replacement. */
    ck_assert_uint_eq(efx_pods_on(x, efx_claim(x, 0)->meta.name), 2);
    efx_free(x);
#undef TGP_POOL
}
END_TEST

int main(void)
{
    Suite *s = suite_create("disruption-drift");
    TCase *tc = tcase_create("drift");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, test_nodepool_template_drift);
    tcase_add_test(tc, test_nodeclass_drift);
    tcase_add_test(tc, test_provider_drift);
    tcase_add_test(tc, test_provider_zone_drift);
    tcase_add_test(tc, test_requirements_widened_no_drift);
    tcase_add_test(tc, test_requirements_narrowed_drift);
    tcase_add_test(tc, test_template_labels_reordered_no_drift);
    tcase_add_test(tc, test_foreign_hash_version_restamped);
    tcase_add_test(tc, test_drift_with_grace_period_past_blocking_pods);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
