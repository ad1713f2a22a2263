/* Quantities, durations and resource lists. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "errors/ns_error.h"
#include "model/duration.h"
#include "model/quantity.h"
#include "model/resources.h"

static int64_t q(const char *text, int scale)
{
    int64_t v = -12345;
    ck_assert_msg(ns_quantity_parse(text, scale, "f", &v, NULL) == 0, "%s: %s", text, ns_error_message());
    return v;
}

START_TEST(test_quantity_suffixes)
{
    ck_assert_int_eq(q("1", NS_QTY_UNITS), 1);
    ck_assert_int_eq(q("2", NS_QTY_MILLI), 2000);
    ck_assert_int_eq(q("500m", NS_QTY_MILLI), 500);
    ck_assert_int_eq(q("1k", NS_QTY_UNITS), 1000);
    ck_assert_int_eq(q("1M", NS_QTY_UNITS), 1000000);
    ck_assert_int_eq(q("1G", NS_QTY_UNITS), 1000000000);
    ck_assert_int_eq(q("1T", NS_QTY_UNITS), INT64_C(1000000000000));
    ck_assert_int_eq(q("1P", NS_QTY_UNITS), INT64_C(1000000000000000));
    ck_assert_int_eq(q("1E", NS_QTY_UNITS), INT64_C(1000000000000000000));
    ck_assert_int_eq(q("1Ki", NS_QTY_UNITS), 1024);
    ck_assert_int_eq(q("1Mi", NS_QTY_UNITS), 1048576);
    ck_assert_int_eq(q("1Gi", NS_QTY_UNITS), INT64_C(1073741824));
    ck_assert_int_eq(q("1Ti", NS_QTY_UNITS), INT64_C(1099511627776));
    ck_assert_int_eq(q("1Pi", NS_QTY_UNITS), INT64_C(1125899906842624));
    ck_assert_int_eq(q("1Ei", NS_QTY_UNITS), INT64_C(1152921504606846976));
    ck_assert_int_eq(q("1500u", NS_QTY_MILLI), 2); /* 1.5m rounds up */
    ck_assert_int_eq(q("1000000n", NS_QTY_MILLI), 1);
}
END_TEST

START_TEST(test_quantity_fractions_and_exponents)
{
    ck_assert_int_eq(q("0.5", NS_QTY_MILLI), 500);
    ck_assert_int_eq(q(".5", NS_QTY_MILLI), 500);
    ck_assert_int_eq(q("1.", NS_QTY_UNITS), 1);
    ck_assert_int_eq(q("1.5Gi", NS_QTY_UNITS), INT64_C(1610612736));
    ck_assert_int_eq(q("0.9Gi", NS_QTY_UNITS), INT64_C(966367642)); /* 966367641.6 rounds up */
    ck_assert_int_eq(q("1e3", NS_QTY_UNITS), 1000);
    ck_assert_int_eq(q("1E3", NS_QTY_UNITS), 1000);
    ck_assert_int_eq(q("1e-3", NS_QTY_MILLI), 1);
    ck_assert_int_eq(q("12e+2", NS_QTY_UNITS), 1200);
    ck_assert_int_eq(q("+2", NS_QTY_UNITS), 2);
    ck_assert_int_eq(q("0", NS_QTY_MILLI), 0);
    ck_assert_int_eq(q("0.30000000000000004", NS_QTY_MILLI), 301);
}
END_TEST

START_TEST(test_quantity_rounds_up_like_kubernetes)
{
    bool exact = true;
    int64_t v;
    ck_assert_int_eq(ns_quantity_parse("0.1m", NS_QTY_MILLI, "cpu", &v, &exact), 0);
    ck_assert_int_eq(v, 1);
    ck_assert(!exact);
    ck_assert_int_eq(ns_quantity_parse("100m", NS_QTY_UNITS, "memory", &v, &exact), 0);
    ck_assert_int_eq(v, 1);
    ck_assert(!exact);
    ck_assert_int_eq(ns_quantity_parse("1.5", NS_QTY_UNITS, "x", &v, &exact), 0);
    ck_assert_int_eq(v, 2);
    ck_assert_int_eq(ns_quantity_parse("-1.5", NS_QTY_UNITS, "x", &v, &exact), 0);
    ck_assert_int_eq(v, -1); /* towards +infinity */
    ck_assert_int_eq(ns_quantity_parse("250m", NS_QTY_MILLI, "cpu", &v, &exact), 0);
    ck_assert(exact);
    ck_assert_int_eq(ns_quantity_parse("1e-40", NS_QTY_UNITS, "x", &v, &exact), 0);
    ck_assert_int_eq(v, 1);
}
END_TEST

static void bad(const char *text, const char *why)
{
    int64_t v;
    ck_assert_int_eq(ns_quantity_parse(text, NS_QTY_MILLI, "spec.containers[0].resources.requests.cpu", &v, NULL),
                     NS_ERR_INVALID_CONFIG);
    const char *msg = ns_error_message();
    ck_assert_msg(strstr(msg, "spec.containers[0].resources.requests.cpu: invalid quantity") == msg, "%s", msg);
    ck_assert_msg(strstr(msg, text) != NULL, "%s", msg);
    ck_assert_msg(strstr(msg, why) != NULL, "%s lacks %s", msg, why);
}

START_TEST(test_quantity_malformed)
{
    bad("", "empty");
    bad("abc", "no digits");
    bad("1x", "unknown suffix");
    bad("1 Gi", "unknown suffix");
    bad("1Gi ", "unknown suffix");
    bad("1e", "exponent has no digits");
    bad("1e1.5", "exponent is not an integer");
    bad("1.2.3", "unknown suffix");
    bad("--1", "no digits");
    bad("m", "no digits");
    bad("10000000000000000000", "does not fit");
    bad("9Ei", "does not fit");
    bad("1234567890123456789012345678901234567", "36 significant digits");
}
END_TEST

START_TEST(test_quantity_format)
{
    char buf[32];
    ck_assert_str_eq(ns_quantity_format(1500, NS_QTY_MILLI, false, buf, sizeof(buf)), "1500m");
    ck_assert_str_eq(ns_quantity_format(2000, NS_QTY_MILLI, false, buf, sizeof(buf)), "2");
    ck_assert_str_eq(ns_quantity_format(INT64_C(1610612736), NS_QTY_UNITS, true, buf, sizeof(buf)), "1536Mi");
    ck_assert_str_eq(ns_quantity_format(1000, NS_QTY_UNITS, true, buf, sizeof(buf)), "1000");
}
END_TEST

START_TEST(test_duration)
{
    int64_t ms;
    ck_assert_int_eq(ns_duration_parse("30s", false, "f", &ms), 0);
    ck_assert_int_eq(ms, 30000);
    ck_assert_int_eq(ns_duration_parse("1h30m", false, "f", &ms), 0);
    ck_assert_int_eq(ms, 5400000);
    ck_assert_int_eq(ns_duration_parse("720h", false, "f", &ms), 0);
    ck_assert_int_eq(ms, INT64_C(2592000000));
    ck_assert_int_eq(ns_duration_parse("1.5h", false, "f", &ms), 0);
    ck_assert_int_eq(ms, 5400000);
    ck_assert_int_eq(ns_duration_parse("250ms", false, "f", &ms), 0);
    ck_assert_int_eq(ms, 250);
    ck_assert_int_eq(ns_duration_parse("0", false, "f", &ms), 0);
    ck_assert_int_eq(ms, 0);
    ck_assert_int_eq(ns_duration_parse("Never", true, "f", &ms), 0);
    ck_assert_int_eq(ms, NS_DURATION_NEVER);
    ck_assert_int_eq(ns_duration_parse("Never", false, "spec.x", &ms), NS_ERR_INVALID_CONFIG);
    ck_assert_ptr_nonnull(strstr(ns_error_message(), "spec.x: invalid duration \"Never\""));
    ck_assert_int_eq(ns_duration_parse("10", false, "f", &ms), NS_ERR_INVALID_CONFIG);
    ck_assert_ptr_nonnull(strstr(ns_error_message(), "missing unit"));
    ck_assert_int_eq(ns_duration_parse("10d", false, "f", &ms), NS_ERR_INVALID_CONFIG);
    ck_assert_ptr_nonnull(strstr(ns_error_message(), "unknown unit"));
    ck_assert_int_eq(ns_duration_parse("-5s", false, "f", &ms), NS_ERR_INVALID_CONFIG);
    char buf[32];
    ck_assert_str_eq(ns_duration_format(5400000, buf, sizeof(buf)), "1h30m");
    ck_assert_str_eq(ns_duration_format(NS_DURATION_NEVER, buf, sizeof(buf)), "Never");
    ck_assert_str_eq(ns_duration_format(0, buf, sizeof(buf)), "0s");
}
END_TEST

START_TEST(test_resources)
{
    ns_res a = {0}, b = {0};
    ck_assert_int_eq(ns_res_set_text(&a, "cpu", "1500m", "r.cpu"), 0);
    ck_assert_int_eq(ns_res_set_text(&a, "memory", "1Gi", "r.memory"), 0);
    ck_assert_int_eq(ns_res_set_text(&a, "nvidia.com/gpu", "2", "r.gpu"), 0);
    ck_assert_int_eq(a.cpu_milli, 1500);
    ck_assert_int_eq(ns_res_get(&a, "nvidia.com/gpu"), 2);
    ck_assert_int_eq(ns_res_set_text(&b, "nvidia.com/gpu", "0.5", "spec.limits.gpu"), NS_ERR_INVALID_CONFIG);
    ck_assert_ptr_nonnull(strstr(ns_error_message(), "spec.limits.gpu: extended resource nvidia.com/gpu must be a whole number"));
    ck_assert_int_eq(ns_res_set_text(&b, "cpu", "4", "c"), 0);
    ck_assert_int_eq(ns_res_set_text(&b, "nvidia.com/gpu", "1", "g"), 0);
    char reason[128];
    ck_assert(!ns_res_fit(&a, &b, reason, sizeof(reason)));
    ck_assert_str_eq(reason, "memory: requested 1Gi, available 0");
    ns_res_set(&b, "memory", INT64_C(2147483648));
    ck_assert(!ns_res_fit(&a, &b, reason, sizeof(reason)));
    ck_assert_str_eq(reason, "nvidia.com/gpu: requested 2, available 1");
    ns_res_set(&b, "nvidia.com/gpu", 2);
    ck_assert(ns_res_fit(&a, &b, NULL, 0));
    ck_assert_int_eq(ns_res_max(&b, &a), 0);
    ck_assert_int_eq(b.cpu_milli, 4000);
    ck_assert_int_eq(ns_res_add(&b, &a), 0);
    ck_assert_int_eq(b.cpu_milli, 5500);
    ck_assert_int_eq(ns_res_get(&b, "nvidia.com/gpu"), 4);
    ck_assert_str_eq(ns_res_format(&a, reason, sizeof(reason)), "cpu=1500m memory=1Gi nvidia.com/gpu=2");
    ns_res_free(&a);
    ns_res_free(&b);
}
END_TEST

/* The core's lists have no slot count and take names up to Kubernetes' length (the ABI's hold 8 of 127). */
START_TEST(test_resources_unbounded)
{
    ns_res many = {0}, copy = {0};
    char name[NS_RES_NAME_MAX + 2];
    for (int i = 0; i < 40; i++) {
        snprintf(name, sizeof(name), "example.com/r%d", i);
        ck_assert_int_eq(ns_res_set(&many, name, i + 1), 0);
    }
    ck_assert_uint_eq(many.n_ext, 40);
    ck_assert_int_eq(ns_res_get(&many, "example.com/r39"), 40);
    memset(name, 'a', 253);
    name[253] = '/';
    memset(name + 254, 'b', 63);
    name[NS_RES_NAME_MAX] = '\0';
    ck_assert_int_eq(ns_res_set(&many, name, 7), 0);
    ck_assert_int_eq(ns_res_get(&many, name), 7);
    ck_assert_int_eq(ns_res_copy(&copy, &many), 0);
    ck_assert(ns_res_equal(&copy, &many));
    ck_assert_int_eq(ns_res_add(&copy, &many), 0);
    ck_assert_int_eq(ns_res_get(&copy, "example.com/r39"), 80);
    ck_assert(!ns_res_equal(&copy, &many));
    ck_assert_int_eq(ns_res_sub(&copy, &many), 0);
    ck_assert(ns_res_equal(&copy, &many));
    /* An absent resource equals a zero one. */
    ck_assert_int_eq(ns_res_set(&copy, "example.com/zero", 0), 0);
    ck_assert(ns_res_equal(&copy, &many));
    name[NS_RES_NAME_MAX] = 'c';
    name[NS_RES_NAME_MAX + 1] = '\0';
    ck_assert_int_eq(ns_res_set(&many, name, 1), NS_ERR_INVALID_CONFIG);
    ck_assert_ptr_nonnull(strstr(ns_error_message(), "(318 characters) is not a valid resource name: must be no more "
                                                     "than 63 characters"));
    ck_assert_int_eq(ns_res_set(&many, "", 1), NS_ERR_INVALID_CONFIG);
    ns_res_free(&many);
    ns_res_free(&copy);
    ns_res_free(NULL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("model-quantity");
    TCase *tc = tcase_create("quantity");
    tcase_add_test(tc, test_quantity_suffixes);
    tcase_add_test(tc, test_quantity_fractions_and_exponents);
    tcase_add_test(tc, test_quantity_rounds_up_like_kubernetes);
    tcase_add_test(tc, test_quantity_malformed);
    tcase_add_test(tc, test_quantity_format);
    tcase_add_test(tc, test_duration);
    tcase_add_test(tc, test_resources);
    tcase_add_test(tc, test_resources_unbounded);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
