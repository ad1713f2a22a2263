/* Why consolidation leaves a node alone, through the engine: Karpenter's Unconsolidatable reasons (consolidation.go's
 * ShouldDisrupt and computeConsolidation for a single candidate), recorded once per NodeClaim and reason while it
 * lasts (the controller publishes each as Karpenter's Unconsolidatable event on the Node and the NodeClaim). The
 * invariant checker runs after every step. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "disruption_fixture.h"
#include "model/labels.h"

#define POOL(types, disruption)                                                                                        \
    DFX_CLASS("{}") DFX_POOL("", DFX_CAPACITY("on-demand") DFX_TYPES(types), disruption) "---\n"
#define UNDERUTILIZED                                                                                                  \
    "    consolidationPolicy: WhenEmptyOrUnderutilized\n    consolidateAfter: 30s\n    budgets: [{nodes: '100%'}]\n"
#define WHEN_EMPTY "    consolidationPolicy: WhenEmpty\n    consolidateAfter: 30s\n    budgets: [{nodes: '100%'}]\n"
#define NEVER                                                                                                          \
    "    consolidationPolicy: WhenEmptyOrUnderutilized\n    consolidateAfter: Never\n    budgets: [{nodes: '100%'}]\n"

/* One node holding Deployment a (one pod of `cpu`), then ten minutes of the disruption controller. */
static efx *one_node(const char *yaml, char *claim, size_t len)
{
    efx *x = dfx_new(yaml, NULL, false);
    dfx_settle(x, EFX_S(120));
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 1);
    snprintf(claim, len, "%s", efx_claim(x, 0)->meta.name);
    efx_run_for(x, EFX_S(600));
    return x;
}

/* The n-th Unconsolidatable record is about the one claim and its node, with Karpenter's words. */
static void unconsolidatable(efx *x, size_t n, const char *claim, const char *why)
{
    const ns_decision *d = dfx_nth_method(x, NS_DECISION_UNCONSOLIDATABLE, "", n);
    ck_assert_str_eq(d->reason, why);
    ck_assert_str_eq(d->nodeclaims, claim);
    const ns_nodeclaim *c = ns_cluster_find_nodeclaim(x->cluster, claim);
    ck_assert_ptr_nonnull(c);
    ck_assert_str_eq(d->nodes, efx_node_of(x, c)->meta.name);
}

START_TEST(test_when_empty_pool_with_pods)
{
    char claim[64];
    efx *x = one_node(POOL("m5.large", WHEN_EMPTY) DFX_DEPLOY("a", 1, "1", "1Gi", ""), claim, sizeof(claim));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_UNCONSOLIDATABLE, NULL), 1);
    unconsolidatable(x, 0, claim, "NodePool \"default\" has consolidation policy WhenEmpty, but node is not empty");
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTING, NULL), 0);
    efx_free(x);
}
END_TEST

START_TEST(test_consolidation_disabled)
{
    char claim[64];
    efx *x = one_node(POOL("m5.large", NEVER) DFX_DEPLOY("a", 1, "1", "1Gi", ""), claim, sizeof(claim));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_UNCONSOLIDATABLE, NULL), 1);
    unconsolidatable(x, 0, claim, "NodePool \"default\" has consolidation disabled");
    /* Karpenter checks this before emptiness: an emptied node of such a pool says the same, so nothing new */
    dfx_scale(x, "a", 0);
    efx_run_for(x, EFX_S(600));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_UNCONSOLIDATABLE, NULL), 1);
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 1);
    efx_free(x);
}
END_TEST

/* The only type the pool allows is the node's own: a replacement would cost the same. Then the pool becomes
 * WhenEmpty: another reason, recorded again; back to WhenEmptyOrUnderutilized, the first reason is recorded anew. */
START_TEST(test_no_cheaper_replacement_then_reason_changes)
{
    char claim[64];
    efx *x = one_node(POOL("m5.large", UNDERUTILIZED) DFX_DEPLOY("a", 1, "1500m", "1Gi", ""), claim, sizeof(claim));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_UNCONSOLIDATABLE, NULL), 1);
    unconsolidatable(x, 0, claim, "Can't replace with a cheaper node");
    dfx_put(x, POOL("m5.large", WHEN_EMPTY));
    efx_run_for(x, EFX_S(600));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_UNCONSOLIDATABLE, NULL), 2);
    unconsolidatable(x, 1, claim, "NodePool \"default\" has consolidation policy WhenEmpty, but node is not empty");
    dfx_put(x, POOL("m5.large", UNDERUTILIZED));
    efx_run_for(x, EFX_S(600));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_UNCONSOLIDATABLE, NULL), 3);
    unconsolidatable(x, 2, claim, "Can't replace with a cheaper node");
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTING, NULL), 0);
    efx_free(x);
}
END_TEST

/* Two pods that need a node each (hostname anti-affinity) on one node type: removing either node needs a new one
 * of the same price, so neither consolidates: single-node consolidation tries both, each recorded with that reason
 * (multi-node consolidation, which would need two new nodes, publishes nothing). */
START_TEST(test_each_candidate_tried_gets_its_reason)
{
    efx *x = dfx_new(POOL("m5.large", UNDERUTILIZED) DFX_DEPLOY("a", 2, "1", "1Gi", DFX_SPREAD("a")), NULL, false);
    dfx_settle(x, EFX_S(120));
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 2);
    efx_run_for(x, EFX_S(600));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_UNCONSOLIDATABLE, NULL), 2);
    const ns_decision *a = dfx_nth_method(x, NS_DECISION_UNCONSOLIDATABLE, "", 0);
    const ns_decision *b = dfx_nth_method(x, NS_DECISION_UNCONSOLIDATABLE, "", 1);
    ck_assert_str_ne(a->nodeclaims, b->nodeclaims);
    ck_assert_str_eq(a->reason, "Can't replace with a cheaper node");
    ck_assert_str_eq(b->reason, "Can't replace with a cheaper node");
    efx_free(x);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("disruption-unconsolidatable");
    TCase *tc = tcase_create("unconsolidatable");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, test_when_empty_pool_with_pods);
    tcase_add_test(tc, test_consolidation_disabled);
    tcase_add_test(tc, test_no_cheaper_replacement_then_reason_changes);
    tcase_add_test(tc, test_each_candidate_tried_gets_its_reason);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
