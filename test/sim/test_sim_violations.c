/* Each `violation` mode breaks exactly the rule it names, observably, so the conformance suite has something real to
 * catch. (The conformance suite's own tests check that it does catch them.) */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "sim_fixture.h"

static ns_plugin *load_violating(const char *mode)
{
    return sim_fx_load("violation", mode, NULL);
}

START_TEST(double_launch_ignores_the_client_token)
{
    ns_plugin *p = load_violating("double-launch");
    sim_fx_option opt = {"m5.large", "us-west-2a", "on-demand"};
    ns_launch_result a, b;
    ck_assert_int_eq(sim_fx_launch(p, NULL, "claim", "same", &opt, 1, &a), NS_OK);
    ck_assert_int_eq(sim_fx_launch(p, NULL, "claim", "same", &opt, 1, &b), NS_OK);
    ck_assert_str_ne(a.provider_id, b.provider_id);
    ck_assert_uint_eq(sim_fx_count_instances(p), 2);
    ns_plugin_unload(p);
}
END_TEST

START_TEST(missing_label_and_negative_price_corrupt_the_catalog)
{
    ns_plugin *p = load_violating("missing-label");
    sim_fx_nodeclass *nc = sim_fx_sim_nodeclass("{}");
    ns_itype_set set;
    sim_fx_types(p, &nc->abi, &set);
    ck_assert_ptr_null(ns_itype_label(ns_itype_set_find(&set, "m5.large"), "kubernetes.io/arch"));
    ck_assert_str_eq(ns_itype_label(ns_itype_set_find(&set, "m5.large"), "kubernetes.io/os"), "linux");
    ns_itype_set_free(&set);
    ns_plugin_unload(p);

    p = load_violating("negative-price");
    sim_fx_types(p, &nc->abi, &set);
    const ns_itype *t = ns_itype_set_find(&set, "m5.large");
    ck_assert_double_lt(sim_fx_offering(t, "us-west-2a", "spot")->price_per_hour, 0);
    ck_assert_double_gt(sim_fx_offering(t, "us-west-2a", "on-demand")->price_per_hour, 0);
    ns_itype_set_free(&set);
    sim_fx_nodeclass_free(nc);
    ns_plugin_unload(p);
}
END_TEST

START_TEST(ignore_zone_and_wrong_capacity_type_misreport_launches)
{
    ns_plugin *p = load_violating("ignore-zone");
    sim_fx_option opt = {"m5.large", "us-west-2b", "on-demand"};
    ns_launch_result r;
    ck_assert_int_eq(sim_fx_launch(p, NULL, "claim", NULL, &opt, 1, &r), NS_OK);
    ck_assert_str_ne(r.zone, "us-west-2b");
    ns_plugin_unload(p);

    p = load_violating("wrong-capacity-type");
    ck_assert_int_eq(sim_fx_launch(p, NULL, "claim", NULL, &opt, 1, &r), NS_OK);
    ck_assert_str_eq(r.zone, "us-west-2b");
    ck_assert_str_eq(r.capacity_type, "spot");
    ns_plugin_unload(p);
}
END_TEST

START_TEST(terminated_instances_linger_or_refuse_termination)
{
    ns_plugin *p = load_violating("terminate-not-idempotent");
    ns_launch_result r;
    sim_fx_launch_one(p, "claim", &r);
    ck_assert_int_eq(ns_plugin_terminate(p, r.provider_id, NULL), NS_OK);
    ck_assert_int_eq(ns_plugin_terminate(p, r.provider_id, NULL), NS_ERR_NOT_FOUND);
    ns_plugin_unload(p);

    p = load_violating("list-terminated");
    sim_fx_launch_one(p, "claim", &r);
    ck_assert_int_eq(ns_plugin_terminate(p, r.provider_id, NULL), NS_OK);
    ck_assert_uint_eq(sim_fx_count_instances(p), 1);
    ns_instance inst;
    ck_assert_int_eq(ns_plugin_get_instance(p, r.provider_id, &inst), NS_OK);
    ck_assert_int_eq(inst.state, NS_INSTANCE_TERMINATED);
    ns_plugin_unload(p);
}
END_TEST

static int count_event(void *ctx, const ns_event *e)
{
    (void)e;
    (*(int *)ctx)++;
    return 0;
}

START_TEST(repeat_events_redelivers)
{
    ns_plugin *p = load_violating("repeat-events");
    ns_launch_result r;
    sim_fx_launch_one(p, "claim", &r);
    ns_fault f = {.struct_size = sizeof(f), .kind = NS_FAULT_INTERRUPT, .event = NS_EVENT_REBALANCE_RECOMMENDATION,
                  .provider_id = r.provider_id};
    ck_assert_int_eq(ns_plugin_test_inject_fault(p, &f), NS_OK);
    int n = 0;
    ck_assert_int_eq(ns_plugin_poll_events(p, count_event, &n), NS_OK);
    ck_assert_int_eq(ns_plugin_poll_events(p, count_event, &n), NS_OK);
    ck_assert_int_eq(n, 2);
    ns_plugin_unload(p);
}
END_TEST

START_TEST(ice_without_offerings_omits_the_detail)
{
    ns_plugin *p = load_violating("ice-without-offerings");
    ns_fault f = {.struct_size = sizeof(f), .kind = NS_FAULT_INSUFFICIENT_CAPACITY};
    ck_assert_int_eq(ns_plugin_test_inject_fault(p, &f), NS_OK);
    sim_fx_option opt = {"m5.large", "us-west-2a", "on-demand"};
    ns_launch_result r;
    ck_assert_int_eq(sim_fx_launch(p, NULL, "claim", NULL, &opt, 1, &r), NS_ERR_INSUFFICIENT_CAPACITY);
    ck_assert_uint_eq(ns_error_last()->n_unavailable, 0);
    ns_plugin_unload(p);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sim-violations");
    TCase *tc = tcase_create("violations");
    tcase_add_test(tc, double_launch_ignores_the_client_token);
    tcase_add_test(tc, missing_label_and_negative_price_corrupt_the_catalog);
    tcase_add_test(tc, ignore_zone_and_wrong_capacity_type_misreport_launches);
    tcase_add_test(tc, terminated_instances_linger_or_refuse_termination);
    tcase_add_test(tc, repeat_events_redelivers);
    tcase_add_test(tc, ice_without_offerings_omits_the_detail);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
