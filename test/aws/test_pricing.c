/* The built-in on-demand prices (AWS's public Linux prices in us-east-1 and the GovCloud regions) against the price
 * lists in ../shared/data, and the estimate for types the tables lack. */
#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws_pricing_builtin.h"
#include "test_files.h"

static void check_table(const char *region, size_t at_least)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/aws-prices-%s.json", getenv("AWS_SHARED_DATA"), region);
    char *text = test_read_file(path, NULL);
    ck_assert_msg(text != NULL, "cannot read %s", path);
    cJSON *prices = cJSON_Parse(text);
    free(text);
    ck_assert_ptr_nonnull(prices);
    ck_assert(aws_builtin_has_region(region));
    ck_assert_uint_ge(aws_builtin_count(region), at_least);
    for (size_t i = 0; i < aws_builtin_count(region); i++) {
        const char *name = aws_builtin_name(region, i);
        if (i > 0)
            ck_assert_msg(strcmp(aws_builtin_name(region, i - 1), name) < 0, "%s: the table is not sorted at %s",
                          region, name);
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(prices, name);
        ck_assert_msg(p != NULL, "%s: %s is not in the price list", region, name);
        double listed = cJSON_IsNumber(p) ? p->valuedouble : strtod(p->valuestring, NULL);
        ck_assert_msg(fabs(aws_builtin_on_demand(region, name) - listed) < 1e-9, "%s %s: built-in %g, price list %g",
                      region, name, aws_builtin_on_demand(region, name), listed);
    }
    ck_assert_double_lt(aws_builtin_on_demand(region, "no.such-type"), 0);
    ck_assert_double_lt(aws_builtin_on_demand(region, NULL), 0);
    cJSON_Delete(prices);
}

START_TEST(test_builtin_table_matches_the_price_list)
{
    check_table("us-east-1", 100);
}
END_TEST

/* GovCloud has no Pricing API: its regions have tables of their own (AWS's GovCloud prices, about 1.2 times
 * us-east-1's); other regions use us-east-1's. */
START_TEST(test_govcloud_tables_match_their_price_lists)
{
    check_table("us-gov-west-1", 100);
    check_table("us-gov-east-1", 100);
    ck_assert_double_eq_tol(aws_builtin_on_demand("us-gov-west-1", "c5.large"), 0.102, 1e-9);
    ck_assert(!aws_builtin_has_region("eu-west-1"));
    ck_assert_double_eq_tol(aws_builtin_on_demand("eu-west-1", "c5.large"), 0.085, 1e-9);
    aws_ec2_instance_type z1d = {.name = "z1d.large", .vcpus = 2, .memory_mib = 16384};
    ck_assert_double_eq_tol(aws_estimate_on_demand("us-gov-east-1", &z1d),
                            AWS_ESTIMATE_GOVCLOUD_FACTOR * aws_estimate_on_demand("us-east-1", &z1d), 1e-9);
}
END_TEST

START_TEST(test_estimate)
{
    /* the rates are m5.large's and c5.large's prices solved for a vCPU and a GiB: they give those two back */
    aws_ec2_instance_type m5 = {.name = "m5.large", .vcpus = 2, .memory_mib = 8192};
    aws_ec2_instance_type c5 = {.name = "c5.large", .vcpus = 2, .memory_mib = 4096};
    aws_ec2_instance_type g4 = {.name = "g4dn.xlarge", .vcpus = 4, .memory_mib = 16384, .gpu_count = 1};
    ck_assert_double_eq_tol(aws_estimate_on_demand(NULL, &m5), 0.096, 1e-9);
    ck_assert_double_eq_tol(aws_estimate_on_demand(NULL, &c5), 0.085, 1e-9);
    ck_assert_double_eq_tol(aws_estimate_on_demand(NULL, &g4), 4 * 0.037 + 16 * 0.00275 + 0.40, 1e-9);
    /* within a quarter of the real price for the GPU type the documentation quotes */
    ck_assert_double_lt(fabs(aws_estimate_on_demand(NULL, &g4) - 0.526) / 0.526, 0.25);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("aws_pricing");
    TCase *tc = tcase_create("builtin");
    tcase_add_test(tc, test_builtin_table_matches_the_price_list);
    tcase_add_test(tc, test_govcloud_tables_match_their_price_lists);
    tcase_add_test(tc, test_estimate);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
