/*
 * The AWS provider as the core sees it: aws.so loaded with dlopen, its table from nodesmith_provider_entry, driven
 * through a fake host against the AWS emulator (which checks every signature with botocore).
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nodesmith/provider.h>

#include "emulator_process.h"
#include "fake_host.h"

static emulator emu;
static const ns_provider *provider;
static fake_host host;
static void *state;

static const char *NODECLASS_SPEC =
    "{\"subnetSelectorTerms\":[{\"tags\":{\"karpenter.sh/discovery\":\"demo\"}}],"
    "\"securityGroupSelectorTerms\":[{\"tags\":{\"karpenter.sh/discovery\":\"demo\"}}],"
    "\"amiSelectorTerms\":[{\"alias\":\"al2023@latest\"}],"
    "\"instanceProfile\":\"KarpenterNodeInstanceProfile-demo\",\"userData\":\"#!/bin/bash\\necho node\\n\"}";

static void setup(void)
{
    ck_assert_int_eq(emulator_control(&emu, "/_emulator/clear", "{}", NULL), 200);
    fake_host_init(&host);
    fake_host_set_option(&host, "cluster_name", "demo");
    fake_host_set_option(&host, "interruption_queue", "nodesmith-interruptions");
    fake_host_set_option(&host, "kubernetes_version", "1.30");
    fake_host_set_option(&host, "catalog_ttl", "300000");
    fake_host_set_option(&host, "max_attempts", "3");
    state = NULL;
    ck_assert_int_eq(provider->init(&host.table, (ns_host_ctx *)&host, &state), NS_OK);
}

static void teardown(void)
{
    provider->destroy(state);
}

typedef struct collected {
    cJSON *types; /* name -> {offerings: [[zone, capacity, price, available]], allocatable_cpu, labels} */
    int count;
} collected;

static int collect_type(void *ctx, const ns_instance_type *t)
{
    collected *c = ctx;
    cJSON *o = cJSON_CreateObject();
    cJSON *offs = cJSON_AddArrayToObject(o, "offerings");
    for (size_t i = 0; i < t->n_offerings; i++) {
        const ns_offering *off = NS_AT(t->offerings, i);
        cJSON *row = cJSON_CreateArray();
        cJSON_AddItemToArray(row, cJSON_CreateString(off->zone));
        cJSON_AddItemToArray(row, cJSON_CreateString(off->capacity_type));
        cJSON_AddItemToArray(row, cJSON_CreateNumber(off->price_per_hour));
        cJSON_AddItemToArray(row, cJSON_CreateBool(off->available));
        cJSON_AddItemToArray(offs, row);
    }
    int64_t alloc_cpu = t->capacity.cpu_milli - t->kube_reserved.cpu_milli - t->system_reserved.cpu_milli -
                        t->eviction_threshold.cpu_milli;
    int64_t alloc_mem = t->capacity.memory_bytes - t->kube_reserved.memory_bytes - t->system_reserved.memory_bytes -
                        t->eviction_threshold.memory_bytes;
    cJSON_AddNumberToObject(o, "allocatable_cpu", (double)alloc_cpu);
    cJSON_AddNumberToObject(o, "allocatable_mem_mib", (double)(alloc_mem / (1024 * 1024)));
    cJSON_AddNumberToObject(o, "pods", (double)t->capacity.pods);
    cJSON *labels = cJSON_AddObjectToObject(o, "labels");
    for (size_t i = 0; i < t->n_labels; i++)
        cJSON_AddStringToObject(labels, t->labels[i].key, t->labels[i].value);
    cJSON_AddItemToObject(c->types, t->name, o);
    c->count++;
    return 0;
}

static ns_nodeclass nodeclass(cJSON **spec_out, const char *spec_text)
{
    *spec_out = cJSON_Parse(spec_text);
    ck_assert_ptr_nonnull(*spec_out);
    return (ns_nodeclass){sizeof(ns_nodeclass), "karpenter.k8s.aws/v1", "EC2NodeClass", "default",
                          (const ns_json *)*spec_out};
}

static const cJSON *offering(const cJSON *type, const char *zone, const char *capacity)
{
    const cJSON *row;
    cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(type, "offerings"))
        if (strcmp(cJSON_GetArrayItem(row, 0)->valuestring, zone) == 0 &&
            strcmp(cJSON_GetArrayItem(row, 1)->valuestring, capacity) == 0)
            return row;
    return NULL;
}

START_TEST(test_init_requires_cluster_name)
{
    fake_host h;
    fake_host_init(&h);
    void *st = NULL;
    ck_assert_int_eq(provider->init(&h.table, (ns_host_ctx *)&h, &st), NS_ERR_INVALID_CONFIG);
    ck_assert_ptr_nonnull(strstr(h.last_error_message, "cluster_name is required"));
    provider->destroy(st); /* the core destroys a partly built state */
}
END_TEST

START_TEST(test_instance_types_offerings_and_prices)
{
    cJSON *spec;
    ns_nodeclass nc = nodeclass(&spec, NODECLASS_SPEC);
    collected c = {cJSON_CreateObject(), 0};
    ck_assert_int_eq(provider->list_instance_types(state, &nc, collect_type, &c), NS_OK);
    ck_assert_int_gt(c.count, 1000);
    const cJSON *m5 = cJSON_GetObjectItemCaseSensitive(c.types, "m5.large");
    ck_assert_ptr_nonnull(m5);
    const cJSON *od = offering(m5, "us-east-1a", "on-demand");
    const cJSON *spot = offering(m5, "us-east-1a", "spot");
    ck_assert_ptr_nonnull(od);
    ck_assert_ptr_nonnull(spot);
    ck_assert_double_eq_tol(cJSON_GetArrayItem(od, 2)->valuedouble, 0.096, 1e-9); /* aws-prices-us-east-1.json */
    ck_assert(cJSON_GetArrayItem(spot, 2)->valuedouble < 0.096 && cJSON_GetArrayItem(spot, 2)->valuedouble > 0);
    ck_assert(cJSON_IsTrue(cJSON_GetArrayItem(spot, 3)));
    ck_assert_int_eq((int)cJSON_GetObjectItemCaseSensitive(m5, "allocatable_cpu")->valuedouble, 1930);
    ck_assert_int_eq((int)cJSON_GetObjectItemCaseSensitive(m5, "allocatable_mem_mib")->valuedouble, 6903);
    ck_assert_int_eq((int)cJSON_GetObjectItemCaseSensitive(m5, "pods")->valuedouble, 29);
    const cJSON *labels = cJSON_GetObjectItemCaseSensitive(m5, "labels");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(labels, "kubernetes.io/arch")->valuestring, "amd64");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(labels, "topology.kubernetes.io/region")->valuestring,
                     "us-east-1");
    cJSON_Delete(c.types);
    cJSON_Delete(spec);

    /* A node class whose only subnet is in us-east-1b offers nothing elsewhere. */
    ns_nodeclass one_zone = nodeclass(&spec, "{\"subnetSelectorTerms\":[{\"id\":\"subnet-0e000000000000001\"}]}");
    c = (collected){cJSON_CreateObject(), 0};
    ck_assert_int_eq(provider->list_instance_types(state, &one_zone, collect_type, &c), NS_OK);
    m5 = cJSON_GetObjectItemCaseSensitive(c.types, "m5.large");
    ck_assert_ptr_null(offering(m5, "us-east-1a", "spot"));
    ck_assert_ptr_nonnull(offering(m5, "us-east-1b", "spot"));
    cJSON_Delete(c.types);
    cJSON_Delete(spec);
}
END_TEST

static int stop_at_first(void *ctx, const ns_instance_type *t)
{
    (*(int *)ctx)++;
    return 42;
}

START_TEST(test_callback_stops_listing)
{
    cJSON *spec;
    ns_nodeclass nc = nodeclass(&spec, NODECLASS_SPEC);
    int calls = 0;
    ck_assert_int_eq(provider->list_instance_types(state, &nc, stop_at_first, &calls), 42);
    ck_assert_int_eq(calls, 1);
    cJSON_Delete(spec);
}
END_TEST

static ns_launch_request request(const ns_nodeclass *nc, const ns_launch_option *options, size_t n, const char *token)
{
    return (ns_launch_request){.struct_size = sizeof(ns_launch_request),
                               .cluster_name = "demo",
                               .nodeclaim_name = token,
                               .nodepool_name = "default",
                               .client_token = token,
                               .nodeclass = nc,
                               .options = options,
                               .n_options = n};
}

typedef struct instances {
    char ids[16][NS_PROVIDER_ID_MAX];
    int n;
} instances;

static int collect_instance(void *ctx, const ns_instance *i)
{
    instances *c = ctx;
    if (c->n < 16)
        snprintf(c->ids[c->n++], NS_PROVIDER_ID_MAX, "%s", i->provider_id);
    return 0;
}

START_TEST(test_launch_lifecycle)
{
    cJSON *spec;
    ns_nodeclass nc = nodeclass(&spec, NODECLASS_SPEC);
    ck_assert_int_eq(emulator_control(&emu, "/_emulator/faults",
                                      "{\"kind\":\"ice\",\"instance_type\":\"m5.large\",\"zone\":\"us-east-1a\","
                                      "\"capacity_type\":\"spot\"}",
                                      NULL),
                     200);
    ns_launch_option options[] = {
        {sizeof(ns_launch_option), "m5.large", "us-east-1a", NS_CAPACITY_SPOT, 0.04},
        {sizeof(ns_launch_option), "m5.large", "us-east-1b", NS_CAPACITY_SPOT, 0.045},
        {sizeof(ns_launch_option), "m6g.large", "us-east-1a", NS_CAPACITY_SPOT, 0.05},
        {sizeof(ns_launch_option), "m5.large", "us-east-1a", NS_CAPACITY_ON_DEMAND, 0.096},
    };
    char token[64];
    snprintf(token, sizeof(token), "claim-%d-%lld", getpid(), (long long)host.clock_ms);
    ns_launch_request req = request(&nc, options, 4, token);
    ns_launch_result r = {.struct_size = sizeof(r)};
    ck_assert_int_eq(provider->launch(state, &req, &r), NS_OK);
    ck_assert_str_eq(r.capacity_type, "spot");
    ck_assert(!(strcmp(r.instance_type, "m5.large") == 0 && strcmp(r.zone, "us-east-1a") == 0));
    ck_assert_ptr_nonnull(strstr(r.provider_id, "aws:///"));
    ck_assert_ptr_nonnull(strstr(r.provider_id, r.zone));
    ck_assert_str_eq(r.image_id, strcmp(r.instance_type, "m6g.large") == 0 ? "ami-0e000000000000a32"
                                                                            : "ami-0e000000000000a64");
    ck_assert_int_eq(r.allocatable.cpu_milli, 1930);

    /* The same client token: the same instance. */
    ns_launch_result again = {.struct_size = sizeof(again)};
    ck_assert_int_eq(provider->launch(state, &req, &again), NS_OK);
    ck_assert_str_eq(again.provider_id, r.provider_id);

    ns_instance inst = {.struct_size = sizeof(inst)};
    ck_assert_int_eq(provider->get_instance(state, r.provider_id, &inst), NS_OK);
    ck_assert_int_eq(inst.state, NS_INSTANCE_RUNNING);
    ck_assert_str_eq(inst.nodeclaim_name, token);
    ck_assert_str_eq(inst.nodepool_name, "default");
    ck_assert_str_eq(inst.nodeclass_name, "default");
    ck_assert_str_eq(inst.capacity_type, "spot");

    instances all = {.n = 0};
    ck_assert_int_eq(provider->list_instances(state, collect_instance, &all), NS_OK);
    bool listed = false;
    for (int i = 0; i < all.n; i++)
        listed |= strcmp(all.ids[i], r.provider_id) == 0;
    ck_assert(listed);

    bool gone = true;
    ck_assert_int_eq(provider->terminate(state, r.provider_id, &gone), NS_OK);
    ck_assert(!gone);
    ck_assert_int_eq(provider->terminate(state, r.provider_id, &gone), NS_OK);
    ck_assert(gone);
    ck_assert_int_eq(provider->get_instance(state, r.provider_id, &inst), NS_ERR_NOT_FOUND);
    ck_assert_int_eq(provider->terminate(state, "aws:///us-east-1a/i-0000000000000dead", &gone), NS_OK);
    ck_assert(gone);
    ck_assert_int_eq(provider->terminate(state, "gce://nope", NULL), NS_ERR_INVALID_ARGUMENT);
    cJSON_Delete(spec);
}
END_TEST

START_TEST(test_launch_without_capacity_names_offerings)
{
    cJSON *spec;
    ns_nodeclass nc = nodeclass(&spec, NODECLASS_SPEC);
    emulator_control(&emu, "/_emulator/faults",
                     "{\"kind\":\"ice\",\"instance_type\":\"c5.large\",\"zone\":\"us-east-1a\",\"capacity_type\":"
                     "\"on-demand\"}",
                     NULL);
    emulator_control(&emu, "/_emulator/faults",
                     "{\"kind\":\"ice\",\"instance_type\":\"c5.large\",\"zone\":\"us-east-1b\",\"capacity_type\":"
                     "\"on-demand\"}",
                     NULL);
    ns_launch_option options[] = {
        {sizeof(ns_launch_option), "c5.large", "us-east-1a", NS_CAPACITY_ON_DEMAND, 0.085},
        {sizeof(ns_launch_option), "c5.large", "us-east-1b", NS_CAPACITY_ON_DEMAND, 0.085},
    };
    char token[64];
    snprintf(token, sizeof(token), "ice-%d-%lld", getpid(), (long long)host.clock_ms);
    ns_launch_request req = request(&nc, options, 2, token);
    ns_launch_result r = {.struct_size = sizeof(r)};
    ck_assert_int_eq(provider->launch(state, &req, &r), NS_ERR_INSUFFICIENT_CAPACITY);
    ck_assert_int_eq(host.n_unavailable, 2);
    ck_assert_str_eq(host.unavailable[0][0], "c5.large");
    ck_assert_str_eq(host.unavailable[0][2], "on-demand");

    /* The refused offerings now list as unavailable. */
    collected c = {cJSON_CreateObject(), 0};
    ck_assert_int_eq(provider->list_instance_types(state, &nc, collect_type, &c), NS_OK);
    const cJSON *c5 = cJSON_GetObjectItemCaseSensitive(c.types, "c5.large");
    ck_assert(cJSON_IsFalse(cJSON_GetArrayItem(offering(c5, "us-east-1a", "on-demand"), 3)));
    ck_assert(cJSON_IsTrue(cJSON_GetArrayItem(offering(c5, "us-east-1a", "spot"), 3)));
    cJSON_Delete(c.types);

    /* A launch whose options are all known to be out of capacity fails without calling CreateFleet. */
    fake_host_clear_error(&host);
    ck_assert_int_eq(provider->launch(state, &req, &r), NS_ERR_INSUFFICIENT_CAPACITY);
    ck_assert_int_eq(host.n_unavailable, 2);
    cJSON_Delete(spec);
}
END_TEST

typedef struct seen_events {
    int calls;
    int refuse_first;
    ns_event last;
} seen_events;

static int collect_event(void *ctx, const ns_event *ev)
{
    seen_events *s = ctx;
    s->calls++;
    s->last = *ev;
    if (s->refuse_first) {
        s->refuse_first = 0;
        return 7;
    }
    return 0;
}

START_TEST(test_interruption_events)
{
    cJSON *spec;
    ns_nodeclass nc = nodeclass(&spec, NODECLASS_SPEC);
    ns_launch_option options[] = {{sizeof(ns_launch_option), "m5.large", "us-east-1b", NS_CAPACITY_SPOT, 0.04}};
    char token[64];
    snprintf(token, sizeof(token), "evt-%d-%lld", getpid(), (long long)host.clock_ms);
    ns_launch_request req = request(&nc, options, 1, token);
    ns_launch_result r = {.struct_size = sizeof(r)};
    ck_assert_int_eq(provider->launch(state, &req, &r), NS_OK);
    const char *instance_id = strrchr(r.provider_id, '/') + 1;

    char body[256];
    snprintf(body, sizeof(body), "{\"kind\":\"spot-interruption\",\"instance_id\":\"%s\"}", instance_id);
    ck_assert_int_eq(emulator_control(&emu, "/_emulator/events", body, NULL), 200);
    ck_assert_int_eq(emulator_control(&emu, "/_emulator/events",
                                      "{\"kind\":\"rebalance\",\"instance_id\":\"i-0e00000000000gone\"}", NULL),
                     200);

    seen_events seen = {0, 1, {0}};
    ck_assert_int_eq(provider->poll_events(state, collect_event, &seen), 7); /* refused: kept */
    ck_assert_int_eq(seen.calls, 1);
    ck_assert_int_eq(seen.last.kind, NS_EVENT_SPOT_INTERRUPTION);
    ck_assert_str_eq(seen.last.provider_id, r.provider_id);
    ck_assert_int_eq(seen.last.deadline_ms - seen.last.time_ms, 120000);
    char first_id[NS_NAME_MAX];
    snprintf(first_id, sizeof(first_id), "%s", seen.last.id);

    /* Delivered again, accepted, deleted; the event about an unknown instance is dropped without a callback. */
    for (int i = 0; i < 3 && seen.calls < 2; i++)
        ck_assert_int_eq(provider->poll_events(state, collect_event, &seen), NS_OK);
    ck_assert_int_eq(seen.calls, 2);
    ck_assert_str_eq(seen.last.id, first_id);
    ck_assert_int_eq(provider->poll_events(state, collect_event, &seen), NS_OK);
    ck_assert_int_eq(seen.calls, 2);
    char *st = NULL;
    emulator_control(&emu, "/_emulator/state", NULL, &st);
    ck_assert_ptr_nonnull(strstr(st, "\"queue\": 0"));
    free(st);
    cJSON_Delete(spec);
}
END_TEST

int main(void)
{
    const char *plugin = getenv("AWS_PLUGIN");
    void *handle = plugin ? dlopen(plugin, RTLD_NOW | RTLD_LOCAL) : NULL;
    ns_provider_entry_fn entry = handle ? (ns_provider_entry_fn)dlsym(handle, NS_PROVIDER_ENTRY) : NULL;
    if (!entry) {
        fprintf(stderr, "cannot load the aws provider from %s: %s\n", plugin ? plugin : "(AWS_PLUGIN unset)",
                dlerror());
        return EXIT_FAILURE;
    }
    provider = entry();
    if (emulator_start(&emu) != 0)
        return EXIT_FAILURE;
    setenv("AWS_ENDPOINT_URL", emu.url, 1);
    setenv("AWS_ACCESS_KEY_ID", "AKIDEMULATOR", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "emulator/secret/key+EXAMPLE", 1);
    setenv("AWS_REGION", "us-east-1", 1);
    setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
    unsetenv("AWS_SESSION_TOKEN");
    unsetenv("AWS_ROLE_ARN");

    Suite *s = suite_create("aws_provider");
    TCase *plain = tcase_create("init");
    tcase_add_test(plain, test_init_requires_cluster_name);
    suite_add_tcase(s, plain);
    TCase *tc = tcase_create("emulated");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_instance_types_offerings_and_prices);
    tcase_add_test(tc, test_callback_stops_listing);
    tcase_add_test(tc, test_launch_lifecycle);
    tcase_add_test(tc, test_launch_without_capacity_names_offerings);
    tcase_add_test(tc, test_interruption_events);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    emulator_stop(&emu);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
