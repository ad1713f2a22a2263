/* Budget cron schedules: robfig/cron's standard syntax, UTC evaluation and Karpenter's active window. */
#define _DEFAULT_SOURCE /* gmtime_r */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/cron.h"
#include "errors/ns_error.h"

#define MIN_MS INT64_C(60000)
#define HOUR_MS (60 * MIN_MS)
#define DAY_MS (24 * HOUR_MS)
#define T(y, mo, d, h, mi) ns_cron_utc_ms((y), (mo), (d), (h), (mi))

static ns_cron parse(const char *s)
{
    ns_cron c;
    ck_assert_msg(ns_cron_parse(s, &c) == 0, "%s: %s", s, ns_error_message());
    return c;
}

static void assert_error(const char *s, const char *needle)
{
    ns_cron c;
    ck_assert_msg(ns_cron_parse(s, &c) == NS_ERR_INVALID_CONFIG, "%s parsed", s);
    ck_assert_msg(strstr(ns_error_message(), needle), "%s: error '%s' lacks '%s'", s, ns_error_message(), needle);
}

static bool active(const char *s, int64_t duration_ms, int64_t now)
{
    bool a = false;
    ck_assert_msg(ns_cron_active(s, duration_ms, now, &a) == 0, "%s: %s", s, ns_error_message());
    return a;
}

START_TEST(test_calendar_matches_gmtime)
{
    /* Every day from 1970 to past 2400 (leap centuries included): our civil arithmetic agrees with the C library,
     * and a schedule naming just that weekday fires on it. */
    static const char *const names[] = {"SUN", "mon", "Tue", "wed", "THU", "fri", "sat"};
    ns_cron weekday[7];
    for (int w = 0; w < 7; w++) {
        char s[32];
        snprintf(s, sizeof(s), "0 0 * * %s", names[w]);
        weekday[w] = parse(s);
    }
    for (int64_t day = 0; day < 160000; day++) {
        time_t t = (time_t)(day * 86400);
        struct tm tm;
        ck_assert_ptr_nonnull(gmtime_r(&t, &tm));
        int64_t ms = T(tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, 0, 0);
        ck_assert_int_eq(ms, day * DAY_MS);
        for (int w = 0; w < 7; w++)
            ck_assert_int_eq(ns_cron_matches(&weekday[w], ms), w == tm.tm_wday);
    }
    ck_assert_int_eq(T(2024, 2, 29, 0, 0), INT64_C(1709164800000));
}
END_TEST

START_TEST(test_fields_lists_ranges_steps_names)
{
    ns_cron c = parse("*/15 9-17 * * MON-FRI");
    ck_assert_uint_eq(c.minutes, (UINT64_C(1) << 0) | (UINT64_C(1) << 15) | (UINT64_C(1) << 30) | (UINT64_C(1) << 45));
    ck_assert_uint_eq(c.hours, 0x3fe00u); /* 9..17 */
    ck_assert_uint_eq(c.weekdays, 0x3eu); /* 1..5 */
    ck_assert(c.days_star);
    ck_assert(!c.weekdays_star);

    c = parse("5/20 0,12 1-10/3 jan,Jul-SEP ?");
    ck_assert_uint_eq(c.minutes, (UINT64_C(1) << 5) | (UINT64_C(1) << 25) | (UINT64_C(1) << 45));
    ck_assert_uint_eq(c.hours, (1u << 0) | (1u << 12));
    ck_assert_uint_eq(c.days, (1u << 1) | (1u << 4) | (1u << 7) | (1u << 10));
    ck_assert_uint_eq(c.months, (1u << 1) | (1u << 7) | (1u << 8) | (1u << 9));
    ck_assert(c.weekdays_star);

    /* "*" with a step above 1 is not a star for day matching; with /1 it still is. */
    ck_assert(!parse("0 0 */2 * *").days_star);
    ck_assert(parse("0 0 */1 * *").days_star);
    /* Blanks of any width separate fields. */
    c = parse("  0\t0   1 *  *  ");
    ck_assert_uint_eq(c.days, 1u << 1);
}
END_TEST

START_TEST(test_macros)
{
    static const char *const pairs[][2] = {
        {"@yearly", "0 0 1 1 *"}, {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"}, {"@weekly", "0 0 * * 0"},
        {"@daily", "0 0 * * *"},  {"@midnight", "0 0 * * *"}, {"@hourly", "0 * * * *"},
    };
    for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
        ns_cron a = parse(pairs[i][0]), b = parse(pairs[i][1]);
        ck_assert_msg(memcmp(&a, &b, sizeof(a)) == 0, "%s differs from %s", pairs[i][0], pairs[i][1]);
    }
    ns_cron weekly = parse("@weekly");
    ck_assert(ns_cron_matches(&weekly, T(2024, 6, 9, 0, 0)));  /* a Sunday */
    ck_assert(!ns_cron_matches(&weekly, T(2024, 6, 10, 0, 0))); /* a Monday */
}
END_TEST

START_TEST(test_errors_name_the_field)
{
    assert_error("0 25 * * *", "hour field \"25\": 25 is above the maximum 23");
    assert_error("60 * * * *", "minute field \"60\"");
    assert_error("0 0 0 * *", "day-of-month field \"0\": 0 is below the minimum 1");
    assert_error("0 0 * 13 *", "month field \"13\"");
    assert_error("0 0 * * 7", "day-of-week field \"7\": 7 is above the maximum 6");
    assert_error("0 0 * * MON-", "day-of-week field \"MON-\": a value is missing");
    assert_error("0 0 * * monday", "day-of-week field \"monday\": \"monday\" is not a number or a three-letter name");
    assert_error("0 0 * FOO *", "month field \"FOO\"");
    assert_error("x * * * *", "minute field \"x\": \"x\" is not a number");
    assert_error("0 MON * * *", "hour field \"MON\""); /* names only where the field has them */
    assert_error("5-2 * * * *", "minute field \"5-2\": the range starts at 5, after its end 2");
    assert_error("*/0 * * * *", "the step must be a positive number");
    assert_error("1/2/3 * * * *", "too many slashes");
    assert_error("1-2-3 * * * *", "too many hyphens");
    assert_error("1,,2 * * * *", "minute field \"1,,2\": a value is missing");
    assert_error("* * * *", "expected exactly 5 fields");
    assert_error("* * * * * *", "found 6");
    assert_error("TZ=UTC 0 * * *", "minute field \"TZ=UTC\"");
    assert_error("@every 1h", "unknown macro");
    assert_error("", "is empty");
    assert_error("0 0 30 2 *", "day-of-month field \"30\"");
    assert_error("0 0 31 4,6,9,11 *", "never fires");
    /* With a real day-of-week the day-of-month alone need not occur: it fires on Mondays. */
    parse("0 0 30 2 MON");
    /* February 29 happens. */
    parse("0 0 29 2 *");
}
END_TEST

START_TEST(test_day_of_month_or_day_of_week)
{
    /* Both restricted: either matches (robfig/cron, like Vixie cron). */
    ns_cron c = parse("0 0 13 * FRI");
    ck_assert(ns_cron_matches(&c, T(2024, 6, 7, 0, 0)));  /* Friday the 7th */
    ck_assert(ns_cron_matches(&c, T(2024, 6, 13, 0, 0))); /* Thursday the 13th */
    ck_assert(!ns_cron_matches(&c, T(2024, 6, 12, 0, 0)));
    /* Day-of-week is a star: both must match. */
    c = parse("0 0 13 * *");
    ck_assert(!ns_cron_matches(&c, T(2024, 6, 7, 0, 0)));
    c = parse("0 0 13 * */1");
    ck_assert(!ns_cron_matches(&c, T(2024, 6, 9, 0, 0)));
    /* "*\/2" is not a star: either field matches; Sunday (0) is even. */
    c = parse("0 0 13 * */2");
    ck_assert(ns_cron_matches(&c, T(2024, 6, 9, 0, 0)));
    ck_assert(!ns_cron_matches(&c, T(2024, 6, 10, 0, 0))); /* Monday the 10th */
    /* Only the start of the minute's hour and minute count. */
    c = parse("30 9 * * *");
    ck_assert(ns_cron_matches(&c, T(2024, 6, 10, 9, 30) + 59999));
    ck_assert(!ns_cron_matches(&c, T(2024, 6, 10, 9, 31)));
}
END_TEST

START_TEST(test_prev_and_next)
{
    ns_cron c = parse("0 9 * * MON-FRI");
    int64_t hit = 0;
    ck_assert(ns_cron_prev(&c, T(2024, 6, 8, 12, 0), 0, &hit)); /* Saturday noon */
    ck_assert_int_eq(hit, T(2024, 6, 7, 9, 0));
    ck_assert(ns_cron_prev(&c, T(2024, 6, 7, 9, 0), 0, &hit)); /* at a hit: that hit */
    ck_assert_int_eq(hit, T(2024, 6, 7, 9, 0));
    ck_assert(ns_cron_prev(&c, T(2024, 6, 7, 8, 59), 0, &hit));
    ck_assert_int_eq(hit, T(2024, 6, 6, 9, 0));
    ck_assert(!ns_cron_prev(&c, T(2024, 6, 8, 12, 0), T(2024, 6, 7, 9, 1), &hit)); /* bounded */

    ck_assert(ns_cron_next(&c, T(2024, 6, 7, 9, 0), T(2030, 1, 1, 0, 0), &hit)); /* strictly after */
    ck_assert_int_eq(hit, T(2024, 6, 10, 9, 0));
    ck_assert(ns_cron_next(&c, T(2024, 6, 7, 8, 59) + 59999, T(2030, 1, 1, 0, 0), &hit));
    ck_assert_int_eq(hit, T(2024, 6, 7, 9, 0));
    ck_assert(!ns_cron_next(&c, T(2024, 6, 7, 9, 0), T(2024, 6, 10, 8, 59), &hit));

    c = parse("0 0 29 2 *");
    ck_assert(ns_cron_prev(&c, T(2027, 6, 1, 0, 0), 0, &hit));
    ck_assert_int_eq(hit, T(2024, 2, 29, 0, 0));
    ck_assert(ns_cron_next(&c, T(2024, 3, 1, 0, 0), T(2100, 1, 1, 0, 0), &hit));
    ck_assert_int_eq(hit, T(2028, 2, 29, 0, 0));
    /* 2100 is not a leap year. */
    ck_assert(ns_cron_next(&c, T(2096, 3, 1, 0, 0), T(2200, 1, 1, 0, 0), &hit));
    ck_assert_int_eq(hit, T(2104, 2, 29, 0, 0));
}
END_TEST

START_TEST(test_active_window)
{
    /* Active while the latest hit is less than the duration ago: [hit, hit + duration). */
    ck_assert(active("@daily", HOUR_MS, T(2024, 6, 10, 0, 0)));
    ck_assert(active("@daily", HOUR_MS, T(2024, 6, 10, 1, 0) - 1));
    ck_assert(!active("@daily", HOUR_MS, T(2024, 6, 10, 1, 0)));
    ck_assert(!active("@daily", HOUR_MS, T(2024, 6, 9, 23, 59)));
    /* Across midnight: 22:00 for 4 hours covers 01:59 the next day, not 02:00, and not 21:59. */
    ck_assert(active("0 22 * * *", 4 * HOUR_MS, T(2024, 6, 11, 1, 59)));
    ck_assert(!active("0 22 * * *", 4 * HOUR_MS, T(2024, 6, 11, 2, 0)));
    ck_assert(!active("0 22 * * *", 4 * HOUR_MS, T(2024, 6, 10, 21, 59)));
    /* Across a week and a year. */
    ck_assert(active("0 22 * * SUN", 6 * HOUR_MS, T(2024, 6, 10, 3, 0))); /* Monday 03:00 */
    ck_assert(!active("0 22 * * SUN", 6 * HOUR_MS, T(2024, 6, 11, 3, 0)));
    ck_assert(active("0 23 31 12 *", 2 * HOUR_MS, T(2025, 1, 1, 0, 30)));
    /* Business hours: 9:00 for 8 hours on weekdays. */
    ck_assert(active("0 9 * * MON-FRI", 8 * HOUR_MS, T(2024, 6, 10, 16, 59)));
    ck_assert(!active("0 9 * * MON-FRI", 8 * HOUR_MS, T(2024, 6, 10, 17, 0)));
    ck_assert(!active("0 9 * * MON-FRI", 8 * HOUR_MS, T(2024, 6, 8, 10, 0))); /* Saturday */
    /* A duration longer than the period keeps it active for good. */
    ck_assert(active("@hourly", 2 * HOUR_MS, T(2024, 6, 10, 5, 17)));
    /* No schedule: always active; an invalid one is an error. */
    ck_assert(active(NULL, 0, T(2024, 6, 10, 5, 17)));
    bool a = false;
    ck_assert_int_eq(ns_cron_active("0 0 * * 8", HOUR_MS, 0, &a), NS_ERR_INVALID_CONFIG);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cron");
    TCase *tc = tcase_create("cron");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_calendar_matches_gmtime);
    tcase_add_test(tc, test_fields_lists_ranges_steps_names);
    tcase_add_test(tc, test_macros);
    tcase_add_test(tc, test_errors_name_the_field);
    tcase_add_test(tc, test_day_of_month_or_day_of_week);
    tcase_add_test(tc, test_prev_and_next);
    tcase_add_test(tc, test_active_window);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
