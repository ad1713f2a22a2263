/* The built-in on-demand prices (AWS's public us-east-1 Linux prices) against the price list in ../shared/data, and
 * the estimate for types the table lacks. */
#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws_pricing_builtin.h"
#include "test_files.h"

START_TEST(test_builtin_table_matches_the_price_list)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/aws-prices-us-east-1.json", getenv("AWS_SHARED_DATA"));
    char *text = test_read_file(path, NULL);
    ck_assert_msg(text != NULL, "cannot read %s", path);
    cJSON *prices = cJSON_Parse(text);
    free(text);
    ck_assert_ptr_nonnull(prices);
    ck_assert_uint_ge(aws_builtin_count(), 100);
    for (size_t i = 0; i < aws_builtin_count(); i++) {
        const char *name = aws_builtin_name(i);
        if (i > 0)
            ck_assert_msg(strcmp(aws_builtin_name(i - 1), name) < 0, "the table is not sorted at %s", name);
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(prices, name);
        ck_assert_msg(p != NULL, "%s is not in the price list", name);
        double listed = cJSON_IsNumber(p) ? p->valuedouble : strtod(p->valuestring, NULL);
        ck_assert_msg(fabs(aws_builtin_on_demand(name) - listed) < 1e-9, "%s: built-in %g, price list %g", name,
                      aws_builtin_on_demand(name), listed);
    }
    ck_assert_double_lt(aws_builtin_on_demand("no.such-type"), 0);
    ck_assert_double_lt(aws_builtin_on_demand(NULL), 0);
    cJSON_Delete(prices);
}
END_TEST

START_TEST(test_estimate)
{
    /* the rates are m5.large's and c5.large's prices solved for a vCPU and a GiB: they give those two back */
    aws_ec2_instance_type m5 = {.name = "m5.large", .vcpus = 2, .memory_mib = 8192};
    aws_ec2_instance_type c5 = {.name = "c5.large", .vcpus = 2, .memory_mib = 4096};
    aws_ec2_instance_type g4 = {.name = "g4dn.xlarge", .vcpus = 4, .memory_mib = 16384, .gpu_count = 1};
    ck_assert_double_eq_tol(aws_estimate_on_demand(&m5), 0.096, 1e-9);
    ck_assert_double_eq_tol(aws_estimate_on_demand(&c5), 0.085, 1e-9);
    ck_assert_double_eq_tol(aws_estimate_on_demand(&g4), 4 * 0.037 + 16 * 0.00275 + 0.40, 1e-9);
    /* within a quarter of the real price for the GPU type the documentation quotes */
    ck_assert_double_lt(fabs(aws_estimate_on_demand(&g4) - 0.526) / 0.526, 0.25);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("aws_pricing");
    TCase *tc = tcase_create("builtin");
    tcase_add_test(tc, test_builtin_table_matches_the_price_list);
    tcase_add_test(tc, test_estimate);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
