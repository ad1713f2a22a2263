/* The ABI's frozen resource lists become the core's at the plugin layer; what a provider gets wrong is refused. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "plugin/plugin_resources.h"

START_TEST(abi_resources_convert)
{
    ns_resources abi = {.cpu_milli = 4000, .memory_bytes = 1 << 30, .pods = 29, .ephemeral_storage_bytes = 5,
                        .n_extended = 2};
    strcpy(abi.extended[0].name, "nvidia.com/gpu");
    abi.extended[0].value = 4;
    strcpy(abi.extended[1].name, "hugepages-2Mi");
    abi.extended[1].value = 2;
    ns_res r = {0};
    ck_assert_int_eq(ns_res_set(&r, "stale.example.com/x", 9), 0);
    ck_assert_int_eq(ns_res_from_abi(&abi, &r, "capacity"), 0);
    char buf[256];
    ck_assert_str_eq(ns_res_format(&r, buf, sizeof(buf)),
                     "cpu=4 memory=1Gi pods=29 ephemeral-storage=5 nvidia.com/gpu=4 hugepages-2Mi=2");
    ck_assert_int_eq(ns_res_get(&r, "stale.example.com/x"), 0);
    ns_res_free(&r);
}
END_TEST

START_TEST(abi_resources_refused)
{
    ns_resources abi = {.cpu_milli = 1, .n_extended = NS_MAX_EXTENDED_RESOURCES + 1};
    ns_res r = {0};
    ck_assert_int_eq(ns_res_from_abi(&abi, &r, "allocatable"), NS_ERR_INVALID_CONFIG);
    ck_assert_str_eq(ns_error_message(), "allocatable: 9 extended resources, the ABI allows at most 8");
    abi.n_extended = 1;
    memset(abi.extended[0].name, 'x', sizeof(abi.extended[0].name));
    ck_assert_int_eq(ns_res_from_abi(&abi, &r, "capacity"), NS_ERR_INVALID_CONFIG);
    ck_assert_ptr_nonnull(strstr(ns_error_message(), "capacity: extended resource 0 has no terminating NUL"));
    ck_assert_int_eq(r.cpu_milli, 0);
    ck_assert_ptr_null(r.ext);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("plugin-resources");
    TCase *tc = tcase_create("convert");
    tcase_add_test(tc, abi_resources_convert);
    tcase_add_test(tc, abi_resources_refused);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
