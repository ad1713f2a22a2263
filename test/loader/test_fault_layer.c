/*
 * The core's fault layer in front of a provider that has no test hooks at all (good.so): insufficient capacity,
 * throttling, failures and delays come from the core's call wrappers, so simulations and tests can inject them for
 * any provider; interruption events stay the provider's (refused here, since good.so has no test_inject_fault).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "cloud/instance_types.h"
#include "errors/ns_error.h"
#include "log/ns_log.h"
#include "plugin/plugin_loader.h"

#define ck_assert_error_has(needle)                                                                                    \
    ck_assert_msg(strstr(ns_error_message(), (needle)) != NULL, "error '%s' lacks '%s'", ns_error_message(), (needle))

static ns_plugin *p;
static ns_nodeclass nc = {.struct_size = sizeof(nc), .api_version = "tin.example.com/v1", .kind = "TinNodeClass",
                          .name = "tin"};

static void setup(void)
{
    ck_assert_int_eq(ns_plugin_load_file(TP_DIR "/good.so", NULL, &p), NS_OK);
    ck_assert_ptr_null(ns_plugin_table(p)->test_inject_fault);
}

static void teardown(void)
{
    ns_plugin_unload(p);
}

/* Launches with the two options given; good.so itself always answers "no capacity for <claim>". */
static int launch(const char *zone_a, const char *zone_b)
{
    ns_launch_option opts[2] = {
        {.struct_size = sizeof(ns_launch_option), .instance_type = "tp.small", .zone = zone_a,
         .capacity_type = "on-demand", .price_per_hour = 0.5},
        {.struct_size = sizeof(ns_launch_option), .instance_type = "tp.small", .zone = zone_b,
         .capacity_type = "on-demand", .price_per_hour = 0.5},
    };
    ns_launch_request req = {.struct_size = sizeof(req), .nodeclaim_name = "c-1", .client_token = "t-1",
                             .nodeclass = &nc, .options = opts, .n_options = 2};
    ns_launch_result res;
    return ns_plugin_launch(p, &req, &res);
}

START_TEST(insufficient_capacity_for_any_provider)
{
    ns_fault f = {.struct_size = sizeof(f), .kind = NS_FAULT_INSUFFICIENT_CAPACITY, .instance_type = "tp.small",
                  .zone = "zone-a"};
    ck_assert_int_eq(ns_plugin_inject_fault(p, &f), NS_OK);
    ns_itype_set set;
    ck_assert_int_eq(ns_itype_set_load(p, &nc, &set), NS_OK);
    ck_assert(!set.items[0].offerings[0].available); /* zone-a reads as without capacity */
    ns_itype_set_free(&set);
    /* Both options on the faulted offering: refused by the core, naming it, before the provider. */
    ck_assert_int_eq(launch("zone-a", "zone-a"), NS_ERR_INSUFFICIENT_CAPACITY);
    ck_assert_error_has("(injected fault)");
    ck_assert_uint_eq(ns_error_last()->n_unavailable, 2);
    ck_assert_str_eq(ns_error_last()->unavailable[0].zone, "zone-a");
    /* One option left: the provider is called with it (and answers with its own message). */
    ck_assert_int_eq(launch("zone-a", "zone-b"), NS_ERR_INSUFFICIENT_CAPACITY);
    ck_assert_error_has("no capacity for c-1");
    ns_fault clear = {.struct_size = sizeof(clear), .kind = NS_FAULT_CLEAR};
    ck_assert_int_eq(ns_plugin_inject_fault(p, &clear), NS_OK);
    ck_assert_int_eq(ns_itype_set_load(p, &nc, &set), NS_OK);
    ck_assert(set.items[0].offerings[0].available);
    ns_itype_set_free(&set);
}
END_TEST

static int count_instance_stub(void *ctx, const ns_instance *inst)
{
    return 0;
}

START_TEST(throttle_and_failure_count_down_per_method)
{
    ns_fault f = {.struct_size = sizeof(f), .kind = NS_FAULT_THROTTLE, .method = "list_instances", .count = 2};
    ck_assert_int_eq(ns_plugin_inject_fault(p, &f), NS_OK);
    ns_fault g = {.struct_size = sizeof(g), .kind = NS_FAULT_FAIL, .count = 1, .error = NS_ERR_UNAUTHORIZED};
    ck_assert_int_eq(ns_plugin_inject_fault(p, &g), NS_OK);
    ns_instance inst;
    /* The any-method failure is consumed by the first call of any method. */
    ck_assert_int_eq(ns_plugin_get_instance(p, "tp:///zone-a/i-1", &inst), NS_ERR_UNAUTHORIZED);
    ck_assert_error_has("provider good: get_instance: failed with");
    ck_assert_int_eq(ns_plugin_get_instance(p, "tp:///zone-a/i-1", &inst), NS_ERR_NOT_FOUND);
    ns_itype_set set;
    ck_assert_int_eq(ns_itype_set_load(p, &nc, &set), NS_OK);
    ns_itype_set_free(&set);
    bool gone;
    ck_assert_int_eq(ns_plugin_terminate(p, "tp:///zone-a/i-1", &gone), NS_OK);
    /* The list_instances throttle is untouched by the other methods' calls. */
    ck_assert_int_eq(ns_plugin_list_instances(p, count_instance_stub, NULL), NS_ERR_THROTTLED);
}
END_TEST

static int count_instance(void *ctx, const ns_instance *inst)
{
    (*(int *)ctx)++;
    return 0;
}

START_TEST(throttle_reaches_only_its_method)
{
    ns_fault f = {.struct_size = sizeof(f), .kind = NS_FAULT_THROTTLE, .method = "list_instances", .count = 2};
    ck_assert_int_eq(ns_plugin_inject_fault(p, &f), NS_OK);
    int n = 0;
    ck_assert_int_eq(ns_plugin_list_instances(p, count_instance, &n), NS_ERR_THROTTLED);
    ck_assert_error_has("provider good: list_instances: throttled (injected fault)");
    ck_assert_int_eq(ns_plugin_list_instances(p, count_instance, &n), NS_ERR_THROTTLED);
    ck_assert_int_eq(n, 0);
    ck_assert_int_eq(ns_plugin_list_instances(p, count_instance, &n), NS_OK);
    ck_assert_int_eq(n, 2);
}
END_TEST

START_TEST(delay_sleeps_on_the_core_clock)
{
    ns_clock_use_simulated(1000000);
    ns_fault f = {.struct_size = sizeof(f), .kind = NS_FAULT_DELAY, .method = "terminate", .count = 1,
                  .delay_ms = 45000};
    ck_assert_int_eq(ns_plugin_inject_fault(p, &f), NS_OK);
    bool gone;
    ck_assert_int_eq(ns_plugin_terminate(p, "tp:///zone-a/i-1", &gone), NS_OK);
    ck_assert_int_eq(ns_clock_now_ms(), 1045000);
    ck_assert_int_eq(ns_plugin_terminate(p, "tp:///zone-a/i-1", &gone), NS_OK);
    ck_assert_int_eq(ns_clock_now_ms(), 1045000);
}
END_TEST

/* A hang (a launch timeout in timelines): the call waits out the plugin's deadline on the core's clock and fails as the
 * watchdog fails it, without reaching the provider (good.so would answer "no capacity"); refused without a deadline. */
START_TEST(hang_until_the_call_deadline)
{
    ns_clock_use_simulated(1000000);
    ns_plugin_set_call_timeout(p, 90000);
    ck_assert_int_eq(ns_plugin_inject_hang(p, "launch", 1), NS_OK);
    ck_assert_int_eq(launch("zone-a", "zone-b"), NS_ERR_THROTTLED);
    ck_assert_error_has("launch: did not return within 90000 ms");
    ck_assert_ptr_null(strstr(ns_error_message(), "no capacity"));
    ck_assert_int_eq(ns_clock_now_ms(), 1090000);
    ck_assert_int_eq(launch("zone-a", "zone-b"), NS_ERR_INSUFFICIENT_CAPACITY);
    ck_assert_int_eq(ns_clock_now_ms(), 1090000);
    /* CLEAR removes hangs not yet used */
    ck_assert_int_eq(ns_plugin_inject_hang(p, "launch", 5), NS_OK);
    ns_fault clear = {.struct_size = sizeof(clear), .kind = NS_FAULT_CLEAR};
    ck_assert_int_eq(ns_plugin_inject_fault(p, &clear), NS_OK);
    ck_assert_int_eq(launch("zone-a", "zone-b"), NS_ERR_INSUFFICIENT_CAPACITY);
    ck_assert_int_eq(ns_plugin_inject_hang(p, "launch", 0), NS_ERR_INVALID_ARGUMENT);
    ns_plugin_set_call_timeout(p, -1);
    ck_assert_int_eq(ns_plugin_inject_hang(p, "launch", 1), NS_ERR_INVALID_CONFIG);
    ck_assert_error_has("have no deadline");
}
END_TEST

START_TEST(interruptions_are_the_providers_and_bad_faults_refused)
{
    ns_fault f = {.struct_size = sizeof(f), .kind = NS_FAULT_INTERRUPT, .event = NS_EVENT_SPOT_INTERRUPTION,
                  .provider_id = "tp:///zone-a/i-1"};
    ck_assert_int_eq(ns_plugin_inject_fault(p, &f), NS_ERR_UNSUPPORTED);
    ck_assert_error_has("does not support test_inject_fault (interruption events)");
    ns_fault none = {.struct_size = sizeof(none), .kind = NS_FAULT_FAIL, .count = 0, .error = NS_ERR_INTERNAL};
    ck_assert_int_eq(ns_plugin_inject_fault(p, &none), NS_ERR_INVALID_ARGUMENT);
    ns_fault bad = {.struct_size = sizeof(bad), .kind = NS_FAULT_FAIL, .count = 1, .error = 7};
    ck_assert_int_eq(ns_plugin_inject_fault(p, &bad), NS_ERR_INVALID_ARGUMENT);
    ck_assert_error_has("7 is not an error category");
}
END_TEST

int main(void)
{
    ns_log_set_level(NS_LOG_ERROR);
    Suite *s = suite_create("fault-layer");
    TCase *tc = tcase_create("fault-layer");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, insufficient_capacity_for_any_provider);
    tcase_add_test(tc, throttle_and_failure_count_down_per_method);
    tcase_add_test(tc, throttle_reaches_only_its_method);
    tcase_add_test(tc, delay_sleeps_on_the_core_clock);
    tcase_add_test(tc, hang_until_the_call_deadline);
    tcase_add_test(tc, interruptions_are_the_providers_and_bad_faults_refused);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
