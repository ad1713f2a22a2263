/* Launch, idempotency, capacity fallbacks, terminate, list and get, through the core's call wrappers. */
#include <check.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "errors/ns_error.h"
#include "sim_fixture.h"

#define START_MS 1700000000000LL

static void inject_ice(ns_plugin *p, const char *type, const char *zone, const char *capacity_type)
{
    ns_fault f = {.struct_size = sizeof(f), .kind = NS_FAULT_INSUFFICIENT_CAPACITY, .instance_type = type,
                  .zone = zone, .capacity_type = capacity_type};
    ck_assert_int_eq(ns_plugin_test_inject_fault(p, &f), NS_OK);
}

START_TEST(launch_picks_the_cheapest_option)
{
    ns_clock_use_simulated(START_MS);
    ns_plugin *p = sim_fx_load(NULL);
    sim_fx_nodeclass *nc = sim_fx_sim_nodeclass("{}");
    sim_fx_option opts[] = {
        {"m5.xlarge", "us-west-2a", "on-demand"}, {"m5.large", "us-west-2b", "on-demand"},
        {"r5.large", "us-west-2c", "spot"},       {"c6g.large", "us-west-2a", "spot"},
        {"c6g.large", "us-west-2b", "spot"},      {"m5.large", "us-west-2a", "spot"},
    };
    /* The expected winner comes from the prices the provider itself lists. */
    ns_itype_set set;
    sim_fx_types(p, &nc->abi, &set);
    size_t best = 0;
    double best_price = 1e9;
    for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
        const ns_itype *t = ns_itype_set_find(&set, opts[i].instance_type);
        double price = sim_fx_offering(t, opts[i].zone, opts[i].capacity_type)->price_per_hour;
        if (price < best_price) {
            best = i;
            best_price = price;
        }
    }
    ns_launch_result r;
    ck_assert_int_eq(sim_fx_launch(p, &nc->abi, "claim-a", "token-a", opts, 6, &r), NS_OK);
    ck_assert_str_eq(r.instance_type, opts[best].instance_type);
    ck_assert_str_eq(r.zone, opts[best].zone);
    ck_assert_str_eq(r.capacity_type, "spot");
    char expected_id[64];
    snprintf(expected_id, sizeof(expected_id), "sim:///%s/i-0000000000000001", opts[best].zone);
    ck_assert_str_eq(r.provider_id, expected_id);
    ck_assert_str_eq(r.image_id, "sim-linux-v1");
    ck_assert_int_eq(r.launch_time_ms, START_MS);
    const ns_itype *t = ns_itype_set_find(&set, r.instance_type);
    ck_assert_int_eq(r.allocatable.cpu_milli, t->allocatable.cpu_milli);
    ck_assert_int_eq(r.allocatable.memory_bytes, t->allocatable.memory_bytes);
    ck_assert_int_eq(r.allocatable.pods, t->allocatable.pods);

    sim_fx_option two[] = {{"m5.xlarge", "us-west-2a", "on-demand"}, {"m5.large", "us-west-2c", "on-demand"}};
    ck_assert_int_eq(sim_fx_launch(p, &nc->abi, "claim-b", "token-b", two, 2, &r), NS_OK);
    ck_assert_str_eq(r.instance_type, "m5.large");
    ck_assert_str_eq(r.provider_id, "sim:///us-west-2c/i-0000000000000002");
    ns_itype_set_free(&set);
    sim_fx_nodeclass_free(nc);
    ns_plugin_unload(p);
}
END_TEST

START_TEST(same_client_token_returns_the_same_instance)
{
    ns_plugin *p = sim_fx_load(NULL);
    sim_fx_option opt = {"c5.large", "us-west-2b", "on-demand"};
    ns_launch_result first, second, other;
    ck_assert_int_eq(sim_fx_launch(p, NULL, "claim", "tok-1", &opt, 1, &first), NS_OK);
    ck_assert_int_eq(sim_fx_launch(p, NULL, "claim", "tok-1", &opt, 1, &second), NS_OK);
    ck_assert_str_eq(first.provider_id, second.provider_id);
    ck_assert_int_eq(first.launch_time_ms, second.launch_time_ms);
    ck_assert_int_eq(sim_fx_launch(p, NULL, "claim-2", "tok-2", &opt, 1, &other), NS_OK);
    ck_assert_str_ne(first.provider_id, other.provider_id);
    ck_assert_uint_eq(sim_fx_count_instances(p), 2);
    ns_plugin_unload(p);
}
END_TEST

#define N_THREADS 8
#define PER_THREAD 25

typedef struct launcher {
    ns_plugin *p;
    int index;
    char ids[PER_THREAD][NS_PROVIDER_ID_MAX];
    char shared_id[NS_PROVIDER_ID_MAX];
    int failures;
} launcher;

static void *launch_many(void *arg)
{
    launcher *l = arg;
    sim_fx_option opts[] = {{"m6g.large", "us-west-2a", "spot"}, {"m6g.large", "us-west-2b", "spot"}};
    for (int i = 0; i < PER_THREAD; i++) {
        char token[64];
        snprintf(token, sizeof(token), "thread-%d-%d", l->index, i);
        ns_launch_result r;
        if (sim_fx_launch(l->p, NULL, token, token, opts, 2, &r) != NS_OK)
            l->failures++;
        snprintf(l->ids[i], sizeof(l->ids[i]), "%s", r.provider_id);
    }
    ns_launch_result r;
    if (sim_fx_launch(l->p, NULL, "shared-claim", "shared-token", opts, 2, &r) != NS_OK)
        l->failures++;
    snprintf(l->shared_id, sizeof(l->shared_id), "%s", r.provider_id);
    return NULL;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

START_TEST(concurrent_launches_are_distinct_and_idempotent)
{
    ns_plugin *p = sim_fx_load(NULL);
    static launcher ls[N_THREADS];
    pthread_t threads[N_THREADS];
    for (int t = 0; t < N_THREADS; t++) {
        ls[t] = (launcher){.p = p, .index = t};
        ck_assert_int_eq(pthread_create(&threads[t], NULL, launch_many, &ls[t]), 0);
    }
    for (int t = 0; t < N_THREADS; t++)
        pthread_join(threads[t], NULL);

    const char *all[N_THREADS * PER_THREAD];
    size_t n = 0;
    for (int t = 0; t < N_THREADS; t++) {
        ck_assert_int_eq(ls[t].failures, 0);
        ck_assert_str_eq(ls[t].shared_id, ls[0].shared_id);
        for (int i = 0; i < PER_THREAD; i++)
            all[n++] = ls[t].ids[i];
    }
    qsort(all, n, sizeof(all[0]), cmp_str);
    for (size_t i = 1; i < n; i++)
        ck_assert_str_ne(all[i - 1], all[i]);
    ck_assert_uint_eq(sim_fx_count_instances(p), N_THREADS * PER_THREAD + 1);
    ns_plugin_unload(p);
}
END_TEST

START_TEST(exhausted_offerings_are_skipped_and_shown_unavailable)
{
    ns_plugin *p = sim_fx_load(NULL);
    inject_ice(p, "m5.large", "us-west-2a", "on-demand");
    sim_fx_option opts[] = {{"m5.large", "us-west-2a", "on-demand"}, {"m5.xlarge", "us-west-2a", "on-demand"}};
    ns_launch_result r;
    ck_assert_int_eq(sim_fx_launch(p, NULL, "claim", "tok", opts, 2, &r), NS_OK);
    ck_assert_str_eq(r.instance_type, "m5.xlarge");

    sim_fx_nodeclass *nc = sim_fx_sim_nodeclass("{}");
    ns_itype_set set;
    sim_fx_types(p, &nc->abi, &set);
    const ns_itype *t = ns_itype_set_find(&set, "m5.large");
    ck_assert(!sim_fx_offering(t, "us-west-2a", "on-demand")->available);
    ck_assert(sim_fx_offering(t, "us-west-2a", "spot")->available);
    ck_assert(sim_fx_offering(t, "us-west-2b", "on-demand")->available);
    ns_itype_set_free(&set);
    sim_fx_nodeclass_free(nc);
    ns_plugin_unload(p);
}
END_TEST

START_TEST(no_capacity_anywhere_names_every_offering)
{
    ns_plugin *p = sim_fx_load(NULL);
    inject_ice(p, "m5.large", NULL, NULL);
    inject_ice(p, NULL, "us-west-2c", "spot");
    sim_fx_option opts[] = {{"m5.large", "us-west-2a", "on-demand"},
                            {"m5.large", "us-west-2b", "spot"},
                            {"c5.large", "us-west-2c", "spot"}};
    ns_launch_result r;
    ck_assert_int_eq(sim_fx_launch(p, NULL, "claim-ice", "tok", opts, 3, &r), NS_ERR_INSUFFICIENT_CAPACITY);
    const ns_error_record *e = ns_error_last();
    ck_assert_int_eq(e->code, NS_ERR_INSUFFICIENT_CAPACITY);
    sim_fx_assert_error_has("claim-ice");
    ck_assert_uint_eq(e->n_unavailable, 3);
    for (size_t i = 0; i < 3; i++) {
        ck_assert_str_eq(e->unavailable[i].instance_type, opts[i].instance_type);
        ck_assert_str_eq(e->unavailable[i].zone, opts[i].zone);
        ck_assert_str_eq(e->unavailable[i].capacity_type, opts[i].capacity_type);
    }
    ck_assert_uint_eq(sim_fx_count_instances(p), 0);

    sim_fx_option spare = {"c5.large", "us-west-2c", "on-demand"};
    ck_assert_int_eq(sim_fx_launch(p, NULL, "claim-ok", "tok2", &spare, 1, &r), NS_OK);
    ns_plugin_unload(p);
}
END_TEST

START_TEST(terminate_is_idempotent_and_hides_the_instance)
{
    ns_plugin *p = sim_fx_load(NULL);
    ns_launch_result r;
    sim_fx_launch_one(p, "claim", &r);
    ns_instance inst;
    ck_assert_int_eq(ns_plugin_get_instance(p, r.provider_id, &inst), NS_OK);

    bool gone = true;
    ck_assert_int_eq(ns_plugin_terminate(p, r.provider_id, &gone), NS_OK);
    ck_assert(!gone);
    ck_assert_int_eq(ns_plugin_terminate(p, r.provider_id, &gone), NS_OK);
    ck_assert(gone);
    ck_assert_int_eq(ns_plugin_terminate(p, "sim:///us-west-2a/i-00000000000000ff", &gone), NS_OK);
    ck_assert(gone);
    ck_assert_int_eq(ns_plugin_get_instance(p, r.provider_id, &inst), NS_ERR_NOT_FOUND);
    sim_fx_assert_error_has(r.provider_id);
    ck_assert_uint_eq(sim_fx_count_instances(p), 0);

    /* A terminated instance's token still answers with that instance, as EC2's idempotency window does. */
    ns_launch_result again;
    sim_fx_option opt = {"m5.large", "us-west-2a", NS_CAPACITY_ON_DEMAND};
    ck_assert_int_eq(sim_fx_launch(p, NULL, "claim", NULL, &opt, 1, &again), NS_OK);
    ck_assert_str_eq(again.provider_id, r.provider_id);
    ns_plugin_unload(p);
}
END_TEST

typedef struct seen {
    ns_instance items[8];
    size_t n;
} seen;

static int collect(void *ctx, const ns_instance *inst)
{
    seen *s = ctx;
    if (s->n < 8)
        s->items[s->n] = *inst;
    s->n++;
    return 0;
}

START_TEST(list_and_get_report_tags_and_state)
{
    ns_clock_use_simulated(START_MS);
    ns_plugin *p = sim_fx_load(NULL);
    sim_fx_nodeclass *nc = sim_fx_sim_nodeclass("{\"imageVersion\": \"2024.09\"}");
    sim_fx_option opt = {"r6g.large", "us-west-2b", "spot"};
    ns_launch_result r[3];
    const char *claims[] = {"claim-0", "claim-1", "claim-2"};
    for (size_t i = 0; i < 3; i++)
        ck_assert_int_eq(sim_fx_launch(p, &nc->abi, claims[i], NULL, &opt, 1, &r[i]), NS_OK);
    ck_assert_int_eq(ns_plugin_terminate(p, r[1].provider_id, NULL), NS_OK);

    seen s = {.n = 0};
    ck_assert_int_eq(ns_plugin_list_instances(p, collect, &s), NS_OK);
    ck_assert_uint_eq(s.n, 2);
    ck_assert_str_eq(s.items[0].provider_id, r[0].provider_id);
    ck_assert_str_eq(s.items[1].provider_id, r[2].provider_id);

    ns_instance inst;
    ck_assert_int_eq(ns_plugin_get_instance(p, r[2].provider_id, &inst), NS_OK);
    ck_assert_str_eq(inst.nodeclaim_name, "claim-2");
    ck_assert_str_eq(inst.nodepool_name, "default");
    ck_assert_str_eq(inst.nodeclass_name, "default");
    ck_assert_str_eq(inst.instance_type, "r6g.large");
    ck_assert_str_eq(inst.zone, "us-west-2b");
    ck_assert_str_eq(inst.capacity_type, "spot");
    ck_assert_str_eq(inst.image_id, "sim-linux-2024.09");
    ck_assert_int_eq(inst.state, NS_INSTANCE_RUNNING);
    ck_assert_int_eq(inst.launch_time_ms, START_MS);
    ck_assert_int_eq(ns_plugin_get_instance(p, "sim:///us-west-2a/i-0000000000000003", &inst), NS_ERR_NOT_FOUND);
    ck_assert_int_eq(ns_plugin_get_instance(p, "aws:///us-west-2a/i-0123", &inst), NS_ERR_NOT_FOUND);
    sim_fx_nodeclass_free(nc);
    ns_plugin_unload(p);
}
END_TEST

START_TEST(options_outside_the_catalog_are_rejected)
{
    ns_plugin *p = sim_fx_load(NULL);
    ns_launch_result r;
    sim_fx_option unknown = {"x9.huge", "us-west-2a", "on-demand"};
    ck_assert_int_eq(sim_fx_launch(p, NULL, "claim-x", NULL, &unknown, 1, &r), NS_ERR_INVALID_ARGUMENT);
    sim_fx_assert_error_has("unknown instance type x9.huge");
    sim_fx_option zone = {"m5.large", "eu-west-1a", "on-demand"};
    ck_assert_int_eq(sim_fx_launch(p, NULL, "claim-z", NULL, &zone, 1, &r), NS_ERR_INVALID_ARGUMENT);
    sim_fx_assert_error_has("zone eu-west-1a");
    sim_fx_option reserved = {"m5.large", "us-west-2a", "reserved"};
    ck_assert_int_eq(sim_fx_launch(p, NULL, "claim-r", NULL, &reserved, 1, &r), NS_ERR_INVALID_ARGUMENT);
    sim_fx_assert_error_has("capacity type reserved");

    sim_fx_nodeclass *only_b = sim_fx_sim_nodeclass("{\"zones\": [\"us-west-2b\"]}");
    sim_fx_option in_a = {"m5.large", "us-west-2a", "on-demand"};
    ck_assert_int_eq(sim_fx_launch(p, &only_b->abi, "claim-a", NULL, &in_a, 1, &r), NS_ERR_INVALID_ARGUMENT);
    sim_fx_nodeclass *windows = sim_fx_sim_nodeclass("{\"imageFamily\": \"Windows2019\"}");
    sim_fx_option graviton = {"m6g.large", "us-west-2a", "on-demand"};
    ck_assert_int_eq(sim_fx_launch(p, &windows->abi, "claim-w", NULL, &graviton, 1, &r), NS_ERR_INVALID_ARGUMENT);
    sim_fx_assert_error_has("m6g.large cannot run Windows");
    ck_assert_uint_eq(sim_fx_count_instances(p), 0);
    sim_fx_nodeclass_free(only_b);
    sim_fx_nodeclass_free(windows);
    ns_plugin_unload(p);
}
END_TEST

START_TEST(launch_latency_passes_on_the_host_clock)
{
    ns_clock_use_simulated(START_MS);
    ns_plugin *p = sim_fx_load("launch_latency", "45s", NULL);
    ns_launch_result r;
    sim_fx_launch_one(p, "slow", &r);
    ck_assert_int_eq(ns_clock_now_ms(), START_MS + 45000);
    ck_assert_int_eq(r.launch_time_ms, START_MS + 45000);
    ns_plugin_unload(p);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sim-launch");
    TCase *tc = tcase_create("launch");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, launch_picks_the_cheapest_option);
    tcase_add_test(tc, same_client_token_returns_the_same_instance);
    tcase_add_test(tc, concurrent_launches_are_distinct_and_idempotent);
    tcase_add_test(tc, exhausted_offerings_are_skipped_and_shown_unavailable);
    tcase_add_test(tc, no_capacity_anywhere_names_every_offering);
    tcase_add_test(tc, terminate_is_idempotent_and_hides_the_instance);
    tcase_add_test(tc, list_and_get_report_tags_and_state);
    tcase_add_test(tc, options_outside_the_catalog_are_rejected);
    tcase_add_test(tc, launch_latency_passes_on_the_host_clock);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
