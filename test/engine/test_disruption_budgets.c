/* Disruption budgets through the engine: a count, a percentage rounded up (against the nodes left at each decision),
 * Karpenter's default 10%, the most restrictive active budget winning, a budget for one reason, and a cron schedule
 * whose window the simulated clock crosses. Decisions asserted from the log; the invariants checked after every
 * step. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/controller_metrics.h"
#include "disruption_fixture.h"
#include "model/cron.h"
#include "errors/ns_error.h"

#define REQS DFX_CAPACITY("on-demand") DFX_TYPES("m5.xlarge")
#define EMPTY_AFTER "    consolidationPolicy: WhenEmpty\n    consolidateAfter: 30s\n"

/* n nodes with one pod each (the deployment "spread"). */
static efx *spread_nodes(const char *disruption, const char *spread_yaml, size_t n)
{
    char yaml[4096];
    snprintf(yaml, sizeof(yaml), "%s%s%s%s%s", DFX_CLASS("{}"),
             DFX_POOL("", REQS, ""), disruption, "---\n", spread_yaml);
    efx *x = dfx_new(yaml, NULL, false);
    dfx_settle(x, EFX_S(120));
    ck_assert_uint_eq(x->cluster->n_nodeclaims, n);
    return x;
}

/* n nodes with one pod each, all emptied at once. */
static efx *empty_nodes(const char *disruption, const char *spread_yaml, size_t n)
{
    efx *x = spread_nodes(disruption, spread_yaml, n);
    dfx_scale(x, "spread", 0);
    return x;
}

static bool all_gone(efx *x)
{
    return x->cluster->n_nodeclaims == 0;
}

/* The number of candidates of each "disrupting node(s)" decision of `method`, into sizes; returns how many. */
static size_t command_sizes(efx *x, const char *method, size_t *sizes, size_t max)
{
    size_t n = dfx_count_method(x, NS_DECISION_DISRUPTING, method);
    ck_assert_uint_le(n, max);
    for (size_t i = 0; i < n; i++) {
        const char *claims = dfx_nth_method(x, NS_DECISION_DISRUPTING, method, i)->nodeclaims;
        sizes[i] = 1;
        for (const char *c = claims; *c; c++)
            sizes[i] += *c == ',';
    }
    return n;
}

static void expect_sizes(efx *x, const char *method, const size_t *want, size_t n_want)
{
    size_t got[16];
    size_t n = command_sizes(x, method, got, 16);
    char text[128] = "";
    for (size_t i = 0; i < n; i++)
        snprintf(text + strlen(text), sizeof(text) - strlen(text), "%s%zu", i ? "," : "", got[i]);
    ck_assert_msg(n == n_want, "commands of sizes [%s], expected %zu commands", text, n_want);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(got[i] == want[i], "commands of sizes [%s]", text);
}

#define SPREAD(n) DFX_DEPLOY("spread", n, "1", "1Gi", DFX_SPREAD("spread"))

START_TEST(test_count)
{
    efx *x = empty_nodes(EMPTY_AFTER "    budgets: [{nodes: '2'}]\n", SPREAD(5), 5);
    ck_assert(efx_run_until(x, all_gone, EFX_S(600)));
    expect_sizes(x, "empty", (size_t[]){2, 2, 1}, 3);
    efx_free(x);
}
END_TEST

START_TEST(test_percentage_rounded_up)
{
    /* 25% of 5 nodes is 1.25: two at first; then 25% of 3, of 2 and of 1 all round up to one. */
    efx *x = empty_nodes(EMPTY_AFTER "    budgets: [{nodes: '25%'}]\n", SPREAD(5), 5);
    ck_assert(efx_run_until(x, all_gone, EFX_S(600)));
    expect_sizes(x, "empty", (size_t[]){2, 1, 1, 1}, 4);
    efx_free(x);
}
END_TEST

START_TEST(test_default_ten_percent)
{
    /* No budgets: Karpenter's default of 10%, rounded up to one of three nodes at a time. */
    efx *x = empty_nodes(EMPTY_AFTER, SPREAD(3), 3);
    ck_assert_uint_eq(ns_cluster_find_nodepool(x->cluster, "default")->n_budgets, 1);
    ck_assert(efx_run_until(x, all_gone, EFX_S(600)));
    expect_sizes(x, "empty", (size_t[]){1, 1, 1}, 3);
    efx_free(x);
}
END_TEST

START_TEST(test_most_restrictive_wins)
{
    /* For Empty: min(3, 50% of the nodes) while the Drifted-only budget of zero does not apply. */
    efx *x = empty_nodes(EMPTY_AFTER "    budgets: [{nodes: '3'}, {nodes: '50%'}, {nodes: '0', reasons: [Drifted]}]\n",
                         SPREAD(4), 4);
    ck_assert(efx_run_until(x, all_gone, EFX_S(600)));
    expect_sizes(x, "empty", (size_t[]){2, 1, 1}, 3);
    efx_free(x);
}
END_TEST

START_TEST(test_reasons)
{
    /* Drift is not allowed at all; emptiness is not limited. */
    static const char disruption[] = EMPTY_AFTER "    budgets: [{nodes: '0', reasons: [Drifted]}]\n";
    char yaml[4096];
    snprintf(yaml, sizeof(yaml), "%s%s%s---\n%s", DFX_CLASS("{tags: {v: '1'}}"), DFX_POOL("", REQS, ""), disruption,
             SPREAD(3));
    efx *x = dfx_new(yaml, NULL, false);
    dfx_settle(x, EFX_S(120));
    dfx_put(x, DFX_CLASS("{tags: {v: '2'}}"));
    efx_run_for(x, EFX_S(600));
    for (size_t i = 0; i < 3; i++)
        ck_assert_ptr_nonnull(ns_conditions_get(&efx_claim(x, i)->conditions, NS_COND_DRIFTED));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTING, NULL), 0);
    dfx_scale(x, "spread", 0);
    ck_assert(efx_run_until(x, all_gone, EFX_S(120)));
    expect_sizes(x, "empty", (size_t[]){3}, 1);
    ck_assert_uint_eq(dfx_count_method(x, NS_DECISION_DISRUPTING, "drifted"), 0);
    efx_free(x);
}
END_TEST

START_TEST(test_schedule_window)
{
    /* No emptiness between 14:30 and 15:00 UTC. The simulated clock starts at 14:13:20. */
    int64_t day = EFX_T0 - EFX_T0 % (INT64_C(86400) * 1000);
    int64_t opens = day + (14 * 60 + 30) * INT64_C(60000), closes = opens + 30 * INT64_C(60000);
    ck_assert_int_lt(EFX_T0, opens - EFX_S(600));
    efx *x = empty_nodes(EMPTY_AFTER "    budgets: [{nodes: '0', schedule: '30 14 * * *', duration: 30m}]\n",
                         SPREAD(2), 2);
    /* Before the window: both go at once (no budget applies, so no limit). */
    ck_assert(efx_run_until(x, all_gone, EFX_S(120)));
    expect_sizes(x, "empty", (size_t[]){2}, 1);
    ck_assert_int_lt(dfx_nth_method(x, NS_DECISION_DISRUPTING, "empty", 0)->time_ms, opens);

    /* New nodes, emptied five minutes into the window: they wait for it to close. */
    dfx_scale(x, "spread", 2);
    dfx_settle(x, EFX_S(120));
    efx_run_for(x, opens + EFX_S(300) - efx_now());
    dfx_scale(x, "spread", 0);
    efx_run_for(x, closes - EFX_S(1) - efx_now());
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTING, NULL), 1);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTION_INFO, NULL), 1);
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 2);
    ck_assert(efx_run_until(x, all_gone, EFX_S(60)));
    expect_sizes(x, "empty", (size_t[]){2, 2}, 2);
    const ns_decision *d = dfx_nth_method(x, NS_DECISION_DISRUPTING, "empty", 1);
    /* Decided when the window closed, carried out after the stabilisation window. */
    ck_assert_int_eq(d->time_ms, closes + EFX_S(15));
    bool active = true;
    ck_assert_int_eq(ns_cron_active("30 14 * * *", 30 * INT64_C(60000), closes, &active), 0);
    ck_assert(!active);
    efx_free(x);
}
END_TEST

/* karpenter_nodepools_allowed_disruptions{nodepool="default",reason=...} as the controller's /metrics renders it. */
static void expect_allowed(efx *x, const char *reason, const char *want)
{
    ns_metrics *m = ns_metrics_new();
    ns_controller_metrics *cm = ns_controller_metrics_new(m);
    ck_assert_ptr_nonnull(cm);
    ck_assert_msg(ns_controller_metrics_update(cm, x->engine, x->cluster, true) == 0, "%s", ns_error_message());
    char *text = ns_metrics_render(m);
    ck_assert_ptr_nonnull(text);
    char line[256];
    snprintf(line, sizeof(line), "\nkarpenter_nodepools_allowed_disruptions{nodepool=\"default\",reason=\"%s\"} %s\n",
             reason, want);
    ck_assert_msg(strstr(text, line), "no line%sin:\n%s", line, text);
    free(text);
    ns_controller_metrics_free(cm);
    ns_metrics_free(m);
}

START_TEST(test_allowed_disruptions_metric)
{
    /* Three nodes that stay (their pods do). Empty: 50% of 3 rounds up to 2. Drifted: the most restrictive of 50% and
     * its own 1. Underutilized: only the scheduled 0, so unlimited (Karpenter's MaxInt32) until 14:30, 0 in the
     * window. */
    int64_t day = EFX_T0 - EFX_T0 % (INT64_C(86400) * 1000);
    int64_t opens = day + (14 * 60 + 30) * INT64_C(60000);
    efx *x = spread_nodes(EMPTY_AFTER "    budgets: [{nodes: '50%', reasons: [Empty, Drifted]}, "
                                      "{nodes: '1', reasons: [Drifted]}, "
                                      "{nodes: '0', reasons: [Underutilized], schedule: '30 14 * * *', duration: 30m}]\n",
                          SPREAD(3), 3);
    ck_assert_int_lt(efx_now(), opens);
    expect_allowed(x, "Empty", "2");
    expect_allowed(x, "Drifted", "1");
    expect_allowed(x, "Underutilized", "2147483647");
    efx_run_for(x, opens + EFX_S(60) - efx_now());
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 3);
    expect_allowed(x, "Underutilized", "0");
    expect_allowed(x, "Empty", "2");
    /* No budgets: Karpenter's default 10% of 3 nodes, rounded up, for every reason. */
    dfx_put(x, DFX_CLASS("{}") DFX_POOL("", REQS, EMPTY_AFTER));
    expect_allowed(x, "Underutilized", "1");
    expect_allowed(x, "Drifted", "1");
    efx_free(x);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("disruption-budgets");
    TCase *tc = tcase_create("budgets");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, test_count);
    tcase_add_test(tc, test_percentage_rounded_up);
    tcase_add_test(tc, test_default_ten_percent);
    tcase_add_test(tc, test_most_restrictive_wins);
    tcase_add_test(tc, test_reasons);
    tcase_add_test(tc, test_schedule_window);
    tcase_add_test(tc, test_allowed_disruptions_metric);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
