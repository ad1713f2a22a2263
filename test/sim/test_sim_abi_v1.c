/* The same sources built as sim_v1.so, claiming ABI 1: the loader accepts the short table and the core falls back
 * for what ABI 1 lacks (get_instance through list_instances; optional methods unsupported). */
#include <check.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "sim_fixture.h"

START_TEST(v1_module_claims_abi_1_with_a_short_table)
{
    ns_plugin *p = NULL;
    int rc = sim_fx_try_load(SIM_V1_SO, &p, "test_hooks", "true", NULL);
    ck_assert_msg(rc == NS_OK, "loading %s: %s", SIM_V1_SO, ns_error_message());
    ck_assert_uint_eq(ns_plugin_abi_version(p), 1);
    ck_assert_str_eq(ns_plugin_name(p), "sim_v1");
    const ns_provider *t = ns_plugin_table(p);
    ck_assert_uint_eq(t->struct_size, offsetof(ns_provider, get_instance));
    ck_assert_ptr_nonnull(t->launch);
    ck_assert_ptr_nonnull(t->poll_events);
    ck_assert_ptr_null(t->get_instance);
    ck_assert_ptr_null(t->check_drift);
    ck_assert_ptr_null(t->test_inject_fault);
    ns_plugin_unload(p);
}
END_TEST

START_TEST(get_falls_back_to_listing)
{
    ns_plugin *p = NULL;
    ck_assert_int_eq(sim_fx_try_load(SIM_V1_SO, &p, NULL), NS_OK);
    ns_launch_result a, b;
    sim_fx_launch_one(p, "first", &a);
    sim_fx_launch_one(p, "second", &b);
    ns_instance inst;
    ck_assert_int_eq(ns_plugin_get_instance(p, b.provider_id, &inst), NS_OK);
    ck_assert_str_eq(inst.provider_id, b.provider_id);
    ck_assert_str_eq(inst.nodeclaim_name, "second");
    ck_assert_int_eq(ns_plugin_terminate(p, b.provider_id, NULL), NS_OK);
    ck_assert_int_eq(ns_plugin_get_instance(p, b.provider_id, &inst), NS_ERR_NOT_FOUND);
    ck_assert_int_eq(ns_plugin_get_instance(p, a.provider_id, &inst), NS_OK);
    ns_plugin_unload(p);
}
END_TEST

START_TEST(abi_2_methods_are_unsupported)
{
    ns_plugin *p = NULL;
    ck_assert_int_eq(sim_fx_try_load(SIM_V1_SO, &p, NULL), NS_OK);
    sim_fx_nodeclass *nc = sim_fx_sim_nodeclass("{}");
    ck_assert_int_eq(ns_plugin_validate_nodeclass(p, &nc->abi), NS_ERR_UNSUPPORTED);
    ns_fault f = {.struct_size = sizeof(f), .kind = NS_FAULT_CLEAR};
    ck_assert_int_eq(ns_plugin_test_inject_fault(p, &f), NS_ERR_UNSUPPORTED);
    ns_itype_set set;
    sim_fx_types(p, &nc->abi, &set);
    ck_assert_uint_ge(set.n, 60);
    ns_itype_set_free(&set);
    sim_fx_nodeclass_free(nc);
    ns_plugin_unload(p);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sim-abi-v1");
    TCase *tc = tcase_create("abi-v1");
    tcase_add_test(tc, v1_module_claims_abi_1_with_a_short_table);
    tcase_add_test(tc, get_falls_back_to_listing);
    tcase_add_test(tc, abi_2_methods_are_unsupported);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
