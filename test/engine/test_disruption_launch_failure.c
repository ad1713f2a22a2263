/* A consolidation replacement whose launch runs out of capacity: it falls back to the next offering, or, with no
 * capacity anywhere, the disruption is abandoned and the candidate untainted, left running its pods. The capacity
 * goes between the provider's listing and the launch (the race a real cloud has), so the decision is still valid when
 * it is carried out. Decisions asserted from the log; the invariants checked after every step. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "disruption_fixture.h"
#include "errors/ns_error.h"
#include "model/labels.h"

static const char yaml[] =
    DFX_CLASS("{}") DFX_POOL("", DFX_CAPACITY("on-demand") DFX_TYPES("m5.large, m5.xlarge, m5.2xlarge"),
                             "    consolidationPolicy: WhenEmptyOrUnderutilized\n    consolidateAfter: 30s\n")
        "---\n" DFX_DEPLOY("a", 4, "1500m", "1Gi", "");

static bool decided(efx *x)
{
    return efx_count(x, NS_DECISION_DISRUPTION_INFO, "awaiting validation") > 0;
}

/* Runs to the step that carries out the replacement decision, with the capacity fault injected after that step's
 * instance-type listing. Returns the candidate's name in name. */
static efx *replace_with_fault(const char *type, char *name, size_t len)
{
    efx *x = dfx_new(yaml, NULL, false);
    dfx_settle(x, EFX_S(120));
    snprintf(name, len, "%s", efx_claim(x, 0)->meta.name);
    dfx_scale(x, "a", 1);
    ck_assert(efx_run_until(x, decided, EFX_S(60)));
    const ns_decision *d = efx_first(x, NS_DECISION_DISRUPTION_INFO, "awaiting validation");
    ck_assert(strstr(d->detail, "replacement-instance-types=m5.large,m5.xlarge") != NULL);
    efx_run_for(x, d->time_ms + x->cfg.stabilization_ms - x->cfg.tick_ms - efx_now());
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTING, NULL), 0);
    ns_clock_advance(x->cfg.tick_ms);
    ck_assert_int_eq(ns_engine_refresh_types(x->engine), NS_OK);
    ns_fault f = {.struct_size = sizeof(f), .kind = NS_FAULT_INSUFFICIENT_CAPACITY, .instance_type = type};
    ck_assert_int_eq(ns_plugin_inject_fault(x->plugin, &f), NS_OK);
    efx_step(x);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTING, name), 1);
    return x;
}

START_TEST(test_replacement_falls_back)
{
    char name[64];
    efx *x = replace_with_fault("m5.large", name, sizeof(name));
    const ns_decision *launched = efx_last(x, NS_DECISION_LAUNCHED_NODECLAIM, NULL);
    ck_assert(strstr(launched->detail, "m5.xlarge/") == launched->detail);
    dfx_settle(x, EFX_S(180));
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 1);
    ck_assert_str_eq(dfx_label(efx_claim(x, 0), NS_LABEL_INSTANCE_TYPE), "m5.xlarge");
    ck_assert_ptr_null(ns_cluster_find_nodeclaim(x->cluster, name));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTION_ABORTED, NULL), 0);
    ck_assert_uint_eq(efx_pods_on(x, efx_claim(x, 0)->meta.name), 1);
    efx_free(x);
}
END_TEST

START_TEST(test_no_capacity_abandons)
{
    char name[64];
    efx *x = replace_with_fault(NULL, name, sizeof(name));
    /* The replacement found no capacity among its options and was given up at once. */
    const ns_decision *d = dfx_nth_method(x, NS_DECISION_DISRUPTING, "underutilized", 0);
    char repl[64];
    const char *open = strchr(d->detail, '[');
    snprintf(repl, sizeof(repl), "%.*s", (int)strcspn(open + 1, "]"), open + 1);
    ck_assert_uint_ge(efx_count(x, NS_DECISION_LAUNCH_FAILED, repl), 1);
    ck_assert_uint_ge(efx_count(x, NS_DECISION_OFFERING_UNAVAILABLE, "m5.large/"), 1);
    efx_step(x);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTION_ABORTED, name), 1);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_UNTAINTED_NODE, name), 1);
    const ns_nodeclaim *c = ns_cluster_find_nodeclaim(x->cluster, name);
    ck_assert_ptr_nonnull(c);
    ck_assert(!ns_claim_deleting(c));
    ck_assert_ptr_null(ns_labels_get(&c->meta.annotations, NS_ANNOTATION_DISRUPTION_METHOD));
    ck_assert_ptr_null(ns_conditions_get(&c->conditions, NS_COND_DISRUPTION_REASON));
    ck_assert(!dfx_tainted(efx_node_of(x, c)));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_EVICTED_POD, NULL), 0);
    ck_assert_uint_eq(efx_pods_on(x, name), 1);
    ck_assert_ptr_null(ns_cluster_find_nodeclaim(x->cluster, repl));
    /* While there is no capacity nothing else is tried; once it is back the node is replaced. */
    efx_run_for(x, EFX_S(120));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTING, NULL), 1);
    ck_assert_uint_eq(efx_pods_on(x, name), 1);
    ck_assert_int_eq(ns_engine_inject_capacity_fault(x->engine, NULL, NULL, NULL, true), NS_OK);
    efx_run_for(x, EFX_S(600));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTING, NULL), 2);
    ck_assert(dfx_settled(x));
    ck_assert_ptr_null(ns_cluster_find_nodeclaim(x->cluster, name));
    ck_assert_str_eq(dfx_label(efx_claim(x, 0), NS_LABEL_INSTANCE_TYPE), "m5.large");
    efx_free(x);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("disruption-launch-failure");
    TCase *tc = tcase_create("launch-failure");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, test_replacement_falls_back);
    tcase_add_test(tc, test_no_capacity_abandons);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
