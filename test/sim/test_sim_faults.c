/* Fault injection (throttle, fail, delay, clear, refusals) and cloud events with the state changes they announce. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "errors/ns_error.h"
#include "sim_fixture.h"

#define START_MS 1700000000000LL

static int inject(ns_plugin *p, ns_fault f)
{
    f.struct_size = sizeof(f);
    return ns_plugin_test_inject_fault(p, &f);
}

START_TEST(faults_are_refused_without_test_hooks)
{
    ns_plugin *p = NULL;
    ck_assert_int_eq(sim_fx_try_load(SIM_SO, &p, NULL), NS_OK);
    ck_assert_int_eq(inject(p, (ns_fault){.kind = NS_FAULT_THROTTLE, .count = 1}), NS_ERR_UNSUPPORTED);
    sim_fx_assert_error_has("test_hooks");
    ns_launch_result r;
    sim_fx_launch_one(p, "claim", &r);
    ns_plugin_unload(p);
}
END_TEST

START_TEST(throttle_fails_the_next_calls_with_a_retry_hint)
{
    ns_plugin *p = sim_fx_load(NULL);
    ck_assert_int_eq(inject(p, (ns_fault){.kind = NS_FAULT_THROTTLE, .method = "launch", .count = 2,
                                          .delay_ms = 2500}),
                     NS_OK);
    ns_launch_result r;
    sim_fx_option opt = {"m5.large", "us-west-2a", "on-demand"};
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(sim_fx_launch(p, NULL, "claim", NULL, &opt, 1, &r), NS_ERR_THROTTLED);
        ck_assert_int_eq(ns_error_last()->retry_after_ms, 2500);
        sim_fx_assert_error_has("launch: request rate exceeded");
    }
    /* Other methods were not throttled, and the third launch goes through. */
    ck_assert_uint_eq(sim_fx_count_instances(p), 0);
    ck_assert_int_eq(sim_fx_launch(p, NULL, "claim", NULL, &opt, 1, &r), NS_OK);

    ck_assert_int_eq(inject(p, (ns_fault){.kind = NS_FAULT_THROTTLE, .count = 1}), NS_OK);
    ns_instance inst;
    ck_assert_int_eq(ns_plugin_get_instance(p, r.provider_id, &inst), NS_ERR_THROTTLED);
    ck_assert_int_eq(ns_error_last()->retry_after_ms, 1000);
    ck_assert_int_eq(ns_plugin_get_instance(p, r.provider_id, &inst), NS_OK);
    ns_plugin_unload(p);
}
END_TEST

START_TEST(fail_returns_the_injected_category)
{
    ns_plugin *p = sim_fx_load(NULL);
    ns_launch_result r;
    sim_fx_launch_one(p, "claim", &r);
    ck_assert_int_eq(inject(p, (ns_fault){.kind = NS_FAULT_FAIL, .method = "terminate", .count = 1,
                                          .error = NS_ERR_UNAUTHORIZED}),
                     NS_OK);
    ck_assert_int_eq(ns_plugin_terminate(p, r.provider_id, NULL), NS_ERR_UNAUTHORIZED);
    sim_fx_assert_error_has("injected fault");
    ck_assert_uint_eq(sim_fx_count_instances(p), 1);
    ck_assert_int_eq(ns_plugin_terminate(p, r.provider_id, NULL), NS_OK);
    ck_assert_uint_eq(sim_fx_count_instances(p), 0);
    ns_plugin_unload(p);
}
END_TEST

START_TEST(delay_sleeps_on_the_host_clock)
{
    ns_clock_use_simulated(START_MS);
    ns_plugin *p = sim_fx_load(NULL);
    ck_assert_int_eq(inject(p, (ns_fault){.kind = NS_FAULT_DELAY, .method = "list_instances", .count = 1,
                                          .delay_ms = 3000}),
                     NS_OK);
    sim_fx_count_instances(p);
    ck_assert_int_eq(ns_clock_now_ms(), START_MS + 3000);
    sim_fx_count_instances(p);
    ck_assert_int_eq(ns_clock_now_ms(), START_MS + 3000);
    ns_plugin_unload(p);
}
END_TEST

START_TEST(clear_removes_every_fault)
{
    ns_plugin *p = sim_fx_load(NULL);
    ck_assert_int_eq(inject(p, (ns_fault){.kind = NS_FAULT_INSUFFICIENT_CAPACITY}), NS_OK);
    ck_assert_int_eq(inject(p, (ns_fault){.kind = NS_FAULT_FAIL, .count = 5, .error = NS_ERR_INTERNAL}), NS_OK);
    ck_assert_int_eq(ns_plugin_terminate(p, "sim:///us-west-2a/i-0000000000000001", NULL), NS_ERR_INTERNAL);
    ck_assert_int_eq(inject(p, (ns_fault){.kind = NS_FAULT_CLEAR}), NS_OK);
    ns_launch_result r;
    sim_fx_launch_one(p, "claim", &r);
    ck_assert_int_eq(ns_plugin_terminate(p, r.provider_id, NULL), NS_OK);
    ns_plugin_unload(p);
}
END_TEST

START_TEST(malformed_faults_are_refused)
{
    ns_plugin *p = sim_fx_load(NULL);
    ck_assert_int_eq(inject(p, (ns_fault){.kind = NS_FAULT_THROTTLE, .method = "lunch", .count = 1}),
                     NS_ERR_INVALID_ARGUMENT);
    sim_fx_assert_error_has("unknown method \"lunch\"");
    ck_assert_int_eq(inject(p, (ns_fault){.kind = NS_FAULT_THROTTLE, .count = 0}), NS_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(inject(p, (ns_fault){.kind = NS_FAULT_FAIL, .count = 1, .error = NS_OK}),
                     NS_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(inject(p, (ns_fault){.kind = NS_FAULT_INSUFFICIENT_CAPACITY, .instance_type = "zz.large"}),
                     NS_ERR_INVALID_ARGUMENT);
    sim_fx_assert_error_has("zz.large");
    ck_assert_int_eq(inject(p, (ns_fault){.kind = NS_FAULT_INTERRUPT, .event = NS_EVENT_SPOT_INTERRUPTION,
                                          .provider_id = "sim:///us-west-2a/i-0000000000000009"}),
                     NS_ERR_NOT_FOUND);
    sim_fx_assert_error_has("i-0000000000000009");
    ck_assert_int_eq(inject(p, (ns_fault){.kind = 99}), NS_ERR_INVALID_ARGUMENT);
    ns_plugin_unload(p);
}
END_TEST

typedef struct events {
    ns_event items[8];
    size_t n;
    int stop_after; /* 0: never stop */
} events;

static int collect(void *ctx, const ns_event *e)
{
    events *ev = ctx;
    if (ev->stop_after && (int)ev->n == ev->stop_after)
        return 1;
    if (ev->n < 8)
        ev->items[ev->n] = *e;
    ev->n++;
    return 0;
}

static events poll(ns_plugin *p)
{
    events ev = {.n = 0};
    ck_assert_int_eq(ns_plugin_poll_events(p, collect, &ev), NS_OK);
    return ev;
}

START_TEST(spot_interruption_is_delivered_once_then_reclaims_the_instance)
{
    ns_clock_use_simulated(START_MS);
    ns_plugin *p = sim_fx_load(NULL);
    sim_fx_option opt = {"c6g.large", "us-west-2a", "spot"};
    ns_launch_result r;
    ck_assert_int_eq(sim_fx_launch(p, NULL, "spot-claim", NULL, &opt, 1, &r), NS_OK);
    ck_assert_uint_eq(poll(p).n, 0);

    ck_assert_int_eq(inject(p, (ns_fault){.kind = NS_FAULT_INTERRUPT, .event = NS_EVENT_SPOT_INTERRUPTION,
                                          .provider_id = r.provider_id}),
                     NS_OK);
    events ev = poll(p);
    ck_assert_uint_eq(ev.n, 1);
    ck_assert_int_eq(ev.items[0].kind, NS_EVENT_SPOT_INTERRUPTION);
    ck_assert_str_eq(ev.items[0].provider_id, r.provider_id);
    ck_assert_int_eq(ev.items[0].time_ms, START_MS);
    ck_assert_int_eq(ev.items[0].deadline_ms, START_MS + 120000); /* EC2's two-minute warning */
    ck_assert_str_ne(ev.items[0].id, "");
    ck_assert_uint_eq(poll(p).n, 0);

    ns_instance inst;
    ns_clock_advance(119999);
    ck_assert_int_eq(ns_plugin_get_instance(p, r.provider_id, &inst), NS_OK);
    ck_assert_int_eq(inst.state, NS_INSTANCE_RUNNING);
    ns_clock_advance(1);
    ck_assert_int_eq(ns_plugin_get_instance(p, r.provider_id, &inst), NS_ERR_NOT_FOUND);
    ck_assert_uint_eq(sim_fx_count_instances(p), 0);
    ev = poll(p);
    ck_assert_uint_eq(ev.n, 1);
    ck_assert_int_eq(ev.items[0].kind, NS_EVENT_INSTANCE_TERMINATED);
    ck_assert_str_eq(ev.items[0].provider_id, r.provider_id);
    ck_assert_uint_eq(poll(p).n, 0);
    bool gone = false;
    ck_assert_int_eq(ns_plugin_terminate(p, r.provider_id, &gone), NS_OK);
    ck_assert(gone);
    ns_plugin_unload(p);
}
END_TEST

START_TEST(maintenance_and_stops_change_state)
{
    ns_clock_use_simulated(START_MS);
    ns_plugin *p = sim_fx_load(NULL);
    ns_launch_result a, b, c;
    sim_fx_launch_one(p, "a", &a);
    sim_fx_launch_one(p, "b", &b);
    sim_fx_launch_one(p, "c", &c);
    ck_assert_int_eq(inject(p, (ns_fault){.kind = NS_FAULT_INTERRUPT, .event = NS_EVENT_SCHEDULED_MAINTENANCE,
                                          .provider_id = a.provider_id, .deadline_ms = START_MS + 5000}),
                     NS_OK);
    ck_assert_int_eq(inject(p, (ns_fault){.kind = NS_FAULT_INTERRUPT, .event = NS_EVENT_INSTANCE_STOPPING,
                                          .provider_id = b.provider_id, .deadline_ms = START_MS + 1000}),
                     NS_OK);
    ck_assert_int_eq(inject(p, (ns_fault){.kind = NS_FAULT_INTERRUPT, .event = NS_EVENT_INSTANCE_TERMINATED,
                                          .provider_id = c.provider_id}),
                     NS_OK);
    events ev = poll(p);
    ck_assert_uint_eq(ev.n, 3);
    ck_assert_int_eq(ev.items[0].kind, NS_EVENT_SCHEDULED_MAINTENANCE);
    ck_assert_int_eq(ev.items[0].deadline_ms, START_MS + 5000);
    ck_assert_int_eq(ev.items[1].kind, NS_EVENT_INSTANCE_STOPPING);
    ck_assert_int_eq(ev.items[2].kind, NS_EVENT_INSTANCE_TERMINATED);
    ck_assert_str_ne(ev.items[0].id, ev.items[1].id);

    ns_instance inst;
    ck_assert_int_eq(ns_plugin_get_instance(p, b.provider_id, &inst), NS_OK);
    ck_assert_int_eq(inst.state, NS_INSTANCE_STOPPING);
    ck_assert_int_eq(ns_plugin_get_instance(p, c.provider_id, &inst), NS_ERR_NOT_FOUND);
    ns_clock_advance(5000);
    ck_assert_int_eq(ns_plugin_get_instance(p, b.provider_id, &inst), NS_OK);
    ck_assert_int_eq(inst.state, NS_INSTANCE_STOPPED);
    ck_assert_int_eq(ns_plugin_get_instance(p, a.provider_id, &inst), NS_OK);
    ck_assert_int_eq(inst.state, NS_INSTANCE_STOPPED);
    ev = poll(p);
    ck_assert_uint_eq(ev.n, 1);
    ck_assert_int_eq(ev.items[0].kind, NS_EVENT_INSTANCE_STOPPING);
    ck_assert_str_eq(ev.items[0].provider_id, a.provider_id);
    ck_assert_uint_eq(sim_fx_count_instances(p), 2);
    ns_plugin_unload(p);
}
END_TEST

START_TEST(events_refused_by_the_callback_are_kept)
{
    ns_plugin *p = sim_fx_load(NULL);
    ns_launch_result r;
    sim_fx_launch_one(p, "claim", &r);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(inject(p, (ns_fault){.kind = NS_FAULT_INTERRUPT, .event = NS_EVENT_REBALANCE_RECOMMENDATION,
                                              .provider_id = r.provider_id}),
                         NS_OK);
    events ev = {.n = 0, .stop_after = 1};
    ck_assert_int_eq(ns_plugin_poll_events(p, collect, &ev), 1);
    ck_assert_uint_eq(ev.n, 1);
    char first_id[NS_NAME_MAX];
    snprintf(first_id, sizeof(first_id), "%s", ev.items[0].id);
    events rest = poll(p);
    ck_assert_uint_eq(rest.n, 2);
    ck_assert_str_ne(rest.items[0].id, first_id);
    ck_assert_str_ne(rest.items[1].id, first_id);
    ck_assert_uint_eq(poll(p).n, 0);
    ns_plugin_unload(p);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sim-faults");
    TCase *tc = tcase_create("faults");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, faults_are_refused_without_test_hooks);
    tcase_add_test(tc, throttle_fails_the_next_calls_with_a_retry_hint);
    tcase_add_test(tc, fail_returns_the_injected_category);
    tcase_add_test(tc, delay_sleeps_on_the_host_clock);
    tcase_add_test(tc, clear_removes_every_fault);
    tcase_add_test(tc, malformed_faults_are_refused);
    tcase_add_test(tc, spot_interruption_is_delivered_once_then_reclaims_the_instance);
    tcase_add_test(tc, maintenance_and_stops_change_state);
    tcase_add_test(tc, events_refused_by_the_callback_are_kept);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
