/* NodePool disruption budgets: rounding, reasons, schedules, the most restrictive active budget, the default. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "disruption/budget.h"
#include "model/cron.h"
#include "errors/ns_error.h"

#define HOUR_MS INT64_C(3600000)
#define T(y, mo, d, h, mi) ns_cron_utc_ms((y), (mo), (d), (h), (mi))
/* 2024-06-10 is a Monday. */
#define MONDAY(h, mi) T(2024, 6, 10, (h), (mi))

static ns_budget count(int64_t n)
{
    return (ns_budget){.nodes = n};
}

static ns_budget percent(int64_t n)
{
    return (ns_budget){.nodes_percent = true, .nodes = n};
}

static ns_budget scheduled(ns_budget b, const char *schedule, int64_t duration_ms)
{
    b.schedule = (char *)schedule;
    b.duration_ms = duration_ms;
    return b;
}

static ns_budget for_reasons(ns_budget b, unsigned reasons)
{
    b.reasons = reasons;
    return b;
}

static int64_t allowed(const ns_budget *b, size_t n, int64_t nodes, unsigned reason, int64_t now)
{
    int64_t out = -1;
    ck_assert_msg(ns_budget_allowed(b, n, nodes, reason, now, &out) == 0, "%s", ns_error_message());
    return out;
}

START_TEST(test_percentages_round_up)
{
    ns_budget b = percent(10);
    ck_assert_int_eq(ns_budget_nodes(&b, 1), 1);  /* not 0: one node may go */
    ck_assert_int_eq(ns_budget_nodes(&b, 11), 2); /* 1.1 rounds up */
    ck_assert_int_eq(ns_budget_nodes(&b, 10), 1);
    ck_assert_int_eq(ns_budget_nodes(&b, 0), 0);
    b = percent(33);
    ck_assert_int_eq(ns_budget_nodes(&b, 3), 1); /* 0.99 */
    b = percent(34);
    ck_assert_int_eq(ns_budget_nodes(&b, 3), 2); /* 1.02 */
    b = percent(0);
    ck_assert_int_eq(ns_budget_nodes(&b, 1000), 0);
    b = percent(100);
    ck_assert_int_eq(ns_budget_nodes(&b, 7), 7);
    b = count(5);
    ck_assert_int_eq(ns_budget_nodes(&b, 2), 5); /* a count is not capped by the pool size */
}
END_TEST

START_TEST(test_default_is_ten_percent)
{
    ck_assert_int_eq(allowed(NULL, 0, 25, NS_REASON_EMPTY, 0), 3);
    ck_assert_int_eq(allowed(NULL, 0, 1, NS_REASON_DRIFTED, 0), 1);
    ck_assert_int_eq(allowed(NULL, 0, 0, NS_REASON_UNDERUTILIZED, 0), 0);
}
END_TEST

START_TEST(test_most_restrictive_wins)
{
    ns_budget b[] = {percent(20), count(3)};
    ck_assert_int_eq(allowed(b, 2, 100, NS_REASON_EMPTY, 0), 3);
    ck_assert_int_eq(allowed(b, 2, 10, NS_REASON_EMPTY, 0), 2);
    ck_assert_int_eq(allowed(b, 2, 11, NS_REASON_EMPTY, 0), 3); /* 2.2 rounds up to 3: ties the count */
}
END_TEST

START_TEST(test_reasons_filter)
{
    ns_budget b[] = {for_reasons(count(0), NS_REASON_DRIFTED), count(5),
                     for_reasons(count(2), NS_REASON_EMPTY | NS_REASON_UNDERUTILIZED)};
    ck_assert_int_eq(allowed(b, 3, 50, NS_REASON_DRIFTED, 0), 0);
    ck_assert_int_eq(allowed(b, 3, 50, NS_REASON_EMPTY, 0), 2);
    ck_assert_int_eq(allowed(b, 3, 50, NS_REASON_UNDERUTILIZED, 0), 2);
    /* Budgets only for other reasons leave this one unlimited (not the 10% default). */
    ns_budget only_drift[] = {for_reasons(count(1), NS_REASON_DRIFTED)};
    ck_assert_int_eq(allowed(only_drift, 1, 50, NS_REASON_EMPTY, 0), NS_BUDGET_UNLIMITED);
    ck_assert_int_eq(ns_budget_reason_name(NS_REASON_UNDERUTILIZED)[0], 'U');
    ck_assert_str_eq(ns_budget_reason_name(NS_REASON_EMPTY), "Empty");
    ck_assert_str_eq(ns_budget_reason_name(NS_REASON_DRIFTED), "Drifted");
}
END_TEST

START_TEST(test_schedules)
{
    /* No disruptions in business hours on weekdays, 10% otherwise. */
    ns_budget b[] = {scheduled(count(0), "0 9 * * mon-fri", 8 * HOUR_MS), percent(10)};
    ck_assert_int_eq(allowed(b, 2, 30, NS_REASON_DRIFTED, MONDAY(10, 0)), 0);
    ck_assert_int_eq(allowed(b, 2, 30, NS_REASON_DRIFTED, MONDAY(8, 59)), 3);
    ck_assert_int_eq(allowed(b, 2, 30, NS_REASON_DRIFTED, MONDAY(17, 0)), 3); /* the window has closed */
    ck_assert_int_eq(allowed(b, 2, 30, NS_REASON_DRIFTED, T(2024, 6, 8, 10, 0)), 3); /* Saturday */
}
END_TEST

START_TEST(test_overlapping_schedules)
{
    ns_budget b[] = {scheduled(count(2), "0 8 * * *", 4 * HOUR_MS), scheduled(count(1), "0 10 * * *", 4 * HOUR_MS),
                     percent(100)};
    ck_assert_int_eq(allowed(b, 3, 10, NS_REASON_EMPTY, MONDAY(7, 59)), 10);
    ck_assert_int_eq(allowed(b, 3, 10, NS_REASON_EMPTY, MONDAY(9, 0)), 2);
    ck_assert_int_eq(allowed(b, 3, 10, NS_REASON_EMPTY, MONDAY(11, 0)), 1); /* both active: the smaller */
    ck_assert_int_eq(allowed(b, 3, 10, NS_REASON_EMPTY, MONDAY(12, 30)), 1); /* only the second */
    ck_assert_int_eq(allowed(b, 3, 10, NS_REASON_EMPTY, MONDAY(14, 0)), 10);
}
END_TEST

START_TEST(test_midnight_wrap)
{
    ns_budget b[] = {scheduled(count(0), "0 22 * * *", 4 * HOUR_MS)};
    ck_assert_int_eq(allowed(b, 1, 10, NS_REASON_EMPTY, MONDAY(23, 0)), 0);
    ck_assert_int_eq(allowed(b, 1, 10, NS_REASON_EMPTY, T(2024, 6, 11, 1, 59)), 0);
    ck_assert_int_eq(allowed(b, 1, 10, NS_REASON_EMPTY, T(2024, 6, 11, 2, 0)), NS_BUDGET_UNLIMITED);
    ck_assert_int_eq(allowed(b, 1, 10, NS_REASON_EMPTY, MONDAY(21, 59)), NS_BUDGET_UNLIMITED);
}
END_TEST

START_TEST(test_zero_budget_and_remaining)
{
    ns_nodepool np = {.meta = {.name = "default"}};
    ns_budget b[] = {count(0)};
    np.budgets = b;
    np.n_budgets = 1;
    int64_t out = -1;
    ck_assert_int_eq(ns_budget_remaining(&np, 10, 0, NS_REASON_EMPTY, 0, &out), 0);
    ck_assert_int_eq(out, 0);

    ns_budget three[] = {count(3)};
    np.budgets = three;
    ck_assert_int_eq(ns_budget_remaining(&np, 10, 2, NS_REASON_EMPTY, 0, &out), 0);
    ck_assert_int_eq(out, 1);
    ck_assert_int_eq(ns_budget_remaining(&np, 10, 5, NS_REASON_EMPTY, 0, &out), 0);
    ck_assert_int_eq(out, 0); /* never negative */

    /* The default 10% of 4 nodes is 1; one NotReady or deleting node uses it up. */
    np.budgets = NULL;
    np.n_budgets = 0;
    ck_assert_int_eq(ns_budget_remaining(&np, 4, 1, NS_REASON_DRIFTED, 0, &out), 0);
    ck_assert_int_eq(out, 0);
}
END_TEST

START_TEST(test_invalid_schedule_fails_closed)
{
    ns_nodepool np = {.meta = {.name = "batch"}};
    ns_budget b[] = {percent(50), scheduled(count(9), "0 0 * * 9", HOUR_MS)};
    np.budgets = b;
    np.n_budgets = 2;
    int64_t out = -1;
    ck_assert_int_eq(ns_budget_remaining(&np, 10, 0, NS_REASON_EMPTY, 0, &out), NS_ERR_INVALID_CONFIG);
    ck_assert_int_eq(out, 0);
    const char *msg = ns_error_message();
    ck_assert_msg(strstr(msg, "NodePool batch: budget 1: schedule \"0 0 * * 9\": day-of-week field"), "%s", msg);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("budget");
    TCase *tc = tcase_create("budget");
    tcase_add_test(tc, test_percentages_round_up);
    tcase_add_test(tc, test_default_is_ten_percent);
    tcase_add_test(tc, test_most_restrictive_wins);
    tcase_add_test(tc, test_reasons_filter);
    tcase_add_test(tc, test_schedules);
    tcase_add_test(tc, test_overlapping_schedules);
    tcase_add_test(tc, test_midnight_wrap);
    tcase_add_test(tc, test_zero_budget_and_remaining);
    tcase_add_test(tc, test_invalid_schedule_fails_closed);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
