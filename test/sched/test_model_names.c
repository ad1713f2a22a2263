/* Kubernetes names and label values (apimachinery's limits and DNS rules), and generateName as Karpenter's
 * NodeClaims use it: bounded length, the alphabet, and a bounded number of draws. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "errors/ns_error.h"
#include "model/names.h"

START_TEST(test_dns_subdomain)
{
    const char *why;
    char name[300];
    ck_assert(ns_name_is_dns_subdomain("default", &why));
    ck_assert(ns_name_is_dns_subdomain("a.b-c.d9", &why));
    memset(name, 'a', 253);
    name[253] = '\0';
    ck_assert(ns_name_is_dns_subdomain(name, &why));
    name[253] = 'a';
    name[254] = '\0';
    ck_assert(!ns_name_is_dns_subdomain(name, &why));
    ck_assert(strstr(why, "253") != NULL);
    const char *bad[] = {"", "Default", "-a", "a-", "a..b", ".a", "a.", "a_b", "a b", "a.-b"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_msg(!ns_name_is_dns_subdomain(bad[i], &why), "%s accepted", bad[i]);
}
END_TEST

START_TEST(test_label_value_and_key)
{
    const char *why;
    char v[80];
    ck_assert(ns_label_value_is_valid("", &why));
    ck_assert(ns_label_value_is_valid("Team_A.1-x", &why));
    memset(v, 'x', 63);
    v[63] = '\0';
    ck_assert(ns_label_value_is_valid(v, &why));
    v[63] = 'x';
    v[64] = '\0';
    ck_assert(!ns_label_value_is_valid(v, &why));
    ck_assert(strstr(why, "63") != NULL);
    ck_assert(!ns_label_value_is_valid("-x", &why));
    ck_assert(!ns_label_value_is_valid("x y", &why));
    ck_assert(ns_label_key_is_valid("karpenter.sh/nodepool", &why));
    ck_assert(ns_label_key_is_valid("team", &why));
    ck_assert(!ns_label_key_is_valid("Karpenter.sh/nodepool", &why));
    ck_assert(!ns_label_key_is_valid("karpenter.sh/", &why));
    ck_assert(!ns_label_key_is_valid("/x", &why));
    ck_assert(!ns_label_key_is_valid("a/b/c", &why));
}
END_TEST

static bool taken_first_n(const char *name, void *ctx)
{
    (void)name;
    int *left = ctx;
    return (*left)-- > 0;
}

START_TEST(test_generate_name)
{
    ns_name_rng r;
    ns_name_rng_seed(&r, 42);
    char buf[NS_GENERATED_NAME_MAX + 1], pool[260];
    ck_assert_int_eq(ns_name_generate(&r, "default-", NULL, NULL, buf, sizeof(buf)), NS_OK);
    ck_assert_uint_eq(strlen(buf), 13);
    ck_assert(strncmp(buf, "default-", 8) == 0);
    ck_assert_uint_eq(strspn(buf + 8, "bcdfghjklmnpqrstvwxz2456789"), 5);
    /* A prefix of 250 characters (a NodePool of 249, "-" added) is cut to 58, as the API server's generator does. */
    memset(pool, 'p', 249);
    snprintf(pool + 249, sizeof(pool) - 249, "-");
    ck_assert_int_eq(ns_name_generate(&r, pool, NULL, NULL, buf, sizeof(buf)), NS_OK);
    ck_assert_uint_eq(strlen(buf), 63);
    ck_assert(strncmp(buf, pool, 58) == 0);
    /* Taken names are drawn again; a generator that never finds a free one gives up with an error. */
    int left = 3;
    ck_assert_int_eq(ns_name_generate(&r, "x-", taken_first_n, &left, buf, sizeof(buf)), NS_OK);
    ck_assert_int_eq(left, -1);
    left = 1000;
    ck_assert_int_eq(ns_name_generate(&r, "x-", taken_first_n, &left, buf, sizeof(buf)), NS_ERR_INTERNAL);
    ck_assert(strstr(ns_error_message(), "x-") != NULL);
    ck_assert_int_eq(ns_name_generate(&r, "x-", NULL, NULL, buf, 10), NS_ERR_INVALID_ARGUMENT);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("model-names");
    TCase *tc = tcase_create("names");
    tcase_add_test(tc, test_dns_subdomain);
    tcase_add_test(tc, test_label_value_and_key);
    tcase_add_test(tc, test_generate_name);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
