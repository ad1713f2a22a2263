/*
 * The AWS provider as the core sees it: aws.so loaded with dlopen, its table from nodesmith_provider_entry, driven
 * through a fake host against the AWS emulator (which checks every signature with botocore).
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nodesmith/provider.h>

#include "aws_pricing_builtin.h"
#include "provider_fixture.h"

static const char *NODECLASS_SPEC =
    "{" PF_SPEC_BASE ",\"amiSelectorTerms\":[{\"alias\":\"al2023@latest\"}],"
    "\"instanceProfile\":\"KarpenterNodeInstanceProfile-demo\",\"userData\":\"#!/bin/bash\\necho node\\n\"}";

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
    return pf_nodeclass(spec_out, "EC2NodeClass", "default", spec_text);
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
    ck_assert_int_eq(pf_provider->init(&h.table, (ns_host_ctx *)&h, &st), NS_ERR_INVALID_CONFIG);
    ck_assert_ptr_nonnull(strstr(h.last_error_message, "cluster_name is required"));
    pf_provider->destroy(st); /* the core destroys a partly built state */
}
END_TEST

START_TEST(test_instance_types_offerings_and_prices)
{
    cJSON *spec;
    ns_nodeclass nc = nodeclass(&spec, NODECLASS_SPEC);
    collected c = {cJSON_CreateObject(), 0};
    ck_assert_int_eq(pf_provider->list_instance_types(pf_state, &nc, collect_type, &c), NS_OK);
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
    ns_nodeclass one_zone = nodeclass(&spec, "{\"subnetSelectorTerms\":[{\"id\":\"subnet-0e000000000000001\"}],"
                                             "\"securityGroupSelectorTerms\":[{\"id\":\"sg-0e000000000000001\"}],"
                                             "\"amiSelectorTerms\":[{\"alias\":\"al2023@latest\"}],\"role\":\"r\"}");
    c = (collected){cJSON_CreateObject(), 0};
    ck_assert_int_eq(pf_provider->list_instance_types(pf_state, &one_zone, collect_type, &c), NS_OK);
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
    ck_assert_int_eq(pf_provider->list_instance_types(pf_state, &nc, stop_at_first, &calls), 42);
    ck_assert_int_eq(calls, 1);
    cJSON_Delete(spec);
}
END_TEST

static ns_launch_request request(const ns_nodeclass *nc, const ns_launch_option *options, size_t n, const char *token)
{
    return pf_request(nc, options, n, token);
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
    ck_assert_int_eq(emulator_control(&pf_emu, "/_emulator/faults",
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
    snprintf(token, sizeof(token), "claim-%d-%lld", getpid(), (long long)pf_host.clock_ms);
    ns_launch_request req = request(&nc, options, 4, token);
    ns_launch_result r = {.struct_size = sizeof(r)};
    ck_assert_int_eq(pf_provider->launch(pf_state, &req, &r), NS_OK);
    ck_assert_str_eq(r.capacity_type, "spot");
    ck_assert(!(strcmp(r.instance_type, "m5.large") == 0 && strcmp(r.zone, "us-east-1a") == 0));
    ck_assert_ptr_nonnull(strstr(r.provider_id, "aws:///"));
    ck_assert_ptr_nonnull(strstr(r.provider_id, r.zone));
    ck_assert_str_eq(r.image_id, strcmp(r.instance_type, "m6g.large") == 0 ? "ami-0e000000000000a32"
                                                                            : "ami-0e000000000000a64");
    ck_assert_int_eq(r.allocatable.cpu_milli, 1930);

    /* The same client token: the same instance. */
    ns_launch_result again = {.struct_size = sizeof(again)};
    ck_assert_int_eq(pf_provider->launch(pf_state, &req, &again), NS_OK);
    ck_assert_str_eq(again.provider_id, r.provider_id);

    ns_instance inst = {.struct_size = sizeof(inst)};
    ck_assert_int_eq(pf_provider->get_instance(pf_state, r.provider_id, &inst), NS_OK);
    ck_assert_int_eq(inst.state, NS_INSTANCE_RUNNING);
    ck_assert_str_eq(inst.nodeclaim_name, token);
    ck_assert_str_eq(inst.nodepool_name, "default");
    ck_assert_str_eq(inst.nodeclass_name, "default");
    ck_assert_str_eq(inst.capacity_type, "spot");

    instances all = {.n = 0};
    ck_assert_int_eq(pf_provider->list_instances(pf_state, collect_instance, &all), NS_OK);
    bool listed = false;
    for (int i = 0; i < all.n; i++)
        listed |= strcmp(all.ids[i], r.provider_id) == 0;
    ck_assert(listed);

    bool gone = true;
    ck_assert_int_eq(pf_provider->terminate(pf_state, r.provider_id, &gone), NS_OK);
    ck_assert(!gone);
    ck_assert_int_eq(pf_provider->terminate(pf_state, r.provider_id, &gone), NS_OK);
    ck_assert(gone);
    ck_assert_int_eq(pf_provider->get_instance(pf_state, r.provider_id, &inst), NS_ERR_NOT_FOUND);
    ck_assert_int_eq(pf_provider->terminate(pf_state, "aws:///us-east-1a/i-0000000000000dead", &gone), NS_OK);
    ck_assert(gone);
    ck_assert_int_eq(pf_provider->terminate(pf_state, "gce://nope", NULL), NS_ERR_INVALID_ARGUMENT);
    cJSON_Delete(spec);
}
END_TEST

START_TEST(test_launch_without_capacity_names_offerings)
{
    cJSON *spec;
    ns_nodeclass nc = nodeclass(&spec, NODECLASS_SPEC);
    emulator_control(&pf_emu, "/_emulator/faults",
                     "{\"kind\":\"ice\",\"instance_type\":\"c5.large\",\"zone\":\"us-east-1a\",\"capacity_type\":"
                     "\"on-demand\"}",
                     NULL);
    emulator_control(&pf_emu, "/_emulator/faults",
                     "{\"kind\":\"ice\",\"instance_type\":\"c5.large\",\"zone\":\"us-east-1b\",\"capacity_type\":"
                     "\"on-demand\"}",
                     NULL);
    ns_launch_option options[] = {
        {sizeof(ns_launch_option), "c5.large", "us-east-1a", NS_CAPACITY_ON_DEMAND, 0.085},
        {sizeof(ns_launch_option), "c5.large", "us-east-1b", NS_CAPACITY_ON_DEMAND, 0.085},
    };
    char token[64];
    snprintf(token, sizeof(token), "ice-%d-%lld", getpid(), (long long)pf_host.clock_ms);
    ns_launch_request req = request(&nc, options, 2, token);
    ns_launch_result r = {.struct_size = sizeof(r)};
    ck_assert_int_eq(pf_provider->launch(pf_state, &req, &r), NS_ERR_INSUFFICIENT_CAPACITY);
    ck_assert_int_eq(pf_host.n_unavailable, 2);
    ck_assert_str_eq(pf_host.unavailable[0][0], "c5.large");
    ck_assert_str_eq(pf_host.unavailable[0][2], "on-demand");

    /* The provider keeps no cache of its own (the core's owns them): the offerings still list as available. */
    collected c = {cJSON_CreateObject(), 0};
    ck_assert_int_eq(pf_provider->list_instance_types(pf_state, &nc, collect_type, &c), NS_OK);
    const cJSON *c5 = cJSON_GetObjectItemCaseSensitive(c.types, "c5.large");
    ck_assert(cJSON_IsTrue(cJSON_GetArrayItem(offering(c5, "us-east-1a", "on-demand"), 3)));
    ck_assert(cJSON_IsTrue(cJSON_GetArrayItem(offering(c5, "us-east-1a", "spot"), 3)));
    cJSON_Delete(c.types);

    /* The same launch again (a retry): EC2 answers its client token with the first answer. */
    fake_host_clear_error(&pf_host);
    ck_assert_int_eq(pf_provider->launch(pf_state, &req, &r), NS_ERR_INSUFFICIENT_CAPACITY);
    ck_assert_int_eq(pf_host.n_unavailable, 2);
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

typedef struct health_seen {
    int calls;
    int refuse_call; /* 1-based call to refuse, 0 = none */
    ns_event events[8];
} health_seen;

static int collect_health(void *ctx, const ns_event *ev)
{
    health_seen *h = ctx;
    h->calls++;
    if (h->calls == h->refuse_call)
        return 9;
    if (h->calls <= 8)
        h->events[h->calls - 1] = *ev;
    return 0;
}

/* An AWS Health scheduled change as AWS sends it (startTime in RFC 1123) about two of our instances and one EC2 no
 * longer knows: one event per known instance, each with the start as its deadline and its own ID; the message is
 * deleted once both were taken, even when one was refused first. */
START_TEST(test_health_scheduled_change_every_entity)
{
    cJSON *spec;
    ns_nodeclass nc = nodeclass(&spec, NODECLASS_SPEC);
    ns_launch_option options[] = {{sizeof(ns_launch_option), "m5.large", "us-east-1a", NS_CAPACITY_ON_DEMAND, 0.1}};
    char ids[2][NS_PROVIDER_ID_MAX];
    for (int i = 0; i < 2; i++) {
        char token[64];
        snprintf(token, sizeof(token), "health-%d-%d-%lld", i, getpid(), (long long)pf_host.clock_ms);
        ns_launch_request req = request(&nc, options, 1, token);
        ns_launch_result r = {.struct_size = sizeof(r)};
        ck_assert_int_eq(pf_provider->launch(pf_state, &req, &r), NS_OK);
        snprintf(ids[i], sizeof(ids[i]), "%s", r.provider_id);
    }
    char body[512];
    snprintf(body, sizeof(body),
             "{\"kind\":\"scheduled-change\",\"instance_id\":\"%s\",\"instance_ids\":[\"%s\","
             "\"i-0e00000000000gone\",\"%s\"],\"start_epoch\":1893456000}",
             strrchr(ids[0], '/') + 1, strrchr(ids[0], '/') + 1, strrchr(ids[1], '/') + 1);
    pf_control("/_emulator/events", body);
    health_seen seen = {.refuse_call = 2};
    ck_assert_int_eq(pf_provider->poll_events(pf_state, collect_health, &seen), 9);
    ck_assert_int_eq(seen.calls, 2);
    for (int i = 0; i < 3 && seen.calls < 3; i++)
        ck_assert_int_eq(pf_provider->poll_events(pf_state, collect_health, &seen), NS_OK);
    ck_assert_int_eq(seen.calls, 3);
    ns_event *a = &seen.events[0], *b = &seen.events[2]; /* the second call was the refused one, delivered again */
    ck_assert_int_eq(a->kind, NS_EVENT_SCHEDULED_MAINTENANCE);
    ck_assert_int_eq(b->kind, NS_EVENT_SCHEDULED_MAINTENANCE);
    ck_assert_str_eq(a->provider_id, ids[0]);
    ck_assert_str_eq(b->provider_id, ids[1]);
    ck_assert_int_eq(a->deadline_ms, 1893456000000LL); /* "Tue, 01 Jan 2030 00:00:00 GMT" */
    ck_assert_int_eq(b->deadline_ms, 1893456000000LL);
    ck_assert_str_ne(a->id, b->id);
    ck_assert_int_eq(pf_provider->poll_events(pf_state, collect_health, &seen), NS_OK);
    ck_assert_int_eq(seen.calls, 3);
    cJSON *st = pf_control_get("/_emulator/state");
    ck_assert_int_eq(cJSON_GetObjectItemCaseSensitive(st, "queue")->valueint, 0);
    cJSON_Delete(st);
    cJSON_Delete(spec);
}
END_TEST

/* A capacity reservation interruption warning, under Karpenter's detail-type (its
 * messages/capacityreservationinterruption parser and CloudFormation rule) and under the name EC2's documentation of
 * interruptible reservations gives it with instance-termination-time: both are the ABI-7 kind, the deadline two
 * minutes after the message or the termination time it names. */
START_TEST(test_capacity_reservation_interruption_warning)
{
    cJSON *spec;
    ns_nodeclass nc = nodeclass(&spec, NODECLASS_SPEC);
    ns_launch_option options[] = {{sizeof(ns_launch_option), "m5.large", "us-east-1a", NS_CAPACITY_ON_DEMAND, 0.1}};
    char token[64];
    snprintf(token, sizeof(token), "cri-%d-%lld", getpid(), (long long)pf_host.clock_ms);
    ns_launch_request req = request(&nc, options, 1, token);
    ns_launch_result r = {.struct_size = sizeof(r)};
    ck_assert_int_eq(pf_provider->launch(pf_state, &req, &r), NS_OK);
    const char *instance_id = strrchr(r.provider_id, '/') + 1;
    char body[512];
    snprintf(body, sizeof(body), "{\"kind\":\"capacity-reservation-interruption\",\"instance_id\":\"%s\"}",
             instance_id);
    pf_control("/_emulator/events", body);
    health_seen seen = {0};
    for (int i = 0; i < 3 && seen.calls < 1; i++)
        ck_assert_int_eq(pf_provider->poll_events(pf_state, collect_health, &seen), NS_OK);
    ck_assert_int_eq(seen.calls, 1);
    ck_assert_int_eq(seen.events[0].kind, NS_EVENT_CAPACITY_RESERVATION_INTERRUPTION);
    ck_assert_str_eq(seen.events[0].provider_id, r.provider_id);
    ck_assert_int_gt(seen.events[0].time_ms, 0);
    ck_assert_int_eq(seen.events[0].deadline_ms - seen.events[0].time_ms, 120000);

    snprintf(body, sizeof(body),
             "{\"kind\":\"capacity-reservation-interruption\",\"instance_id\":\"%s\",\"detail_type\":\"EC2 "
             "Interruptible Capacity Reservation Instance Interruption Warning\",\"termination_time\":"
             "\"2030-01-01T00:00:00Z\"}",
             instance_id);
    pf_control("/_emulator/events", body);
    for (int i = 0; i < 3 && seen.calls < 2; i++)
        ck_assert_int_eq(pf_provider->poll_events(pf_state, collect_health, &seen), NS_OK);
    ck_assert_int_eq(seen.calls, 2);
    ck_assert_int_eq(seen.events[1].kind, NS_EVENT_CAPACITY_RESERVATION_INTERRUPTION);
    ck_assert_str_eq(seen.events[1].provider_id, r.provider_id);
    ck_assert_int_eq(seen.events[1].deadline_ms, 1893456000000LL);
    ck_assert_str_ne(seen.events[0].id, seen.events[1].id);
    cJSON_Delete(spec);
}
END_TEST

START_TEST(test_interruption_events)
{
    cJSON *spec;
    ns_nodeclass nc = nodeclass(&spec, NODECLASS_SPEC);
    ns_launch_option options[] = {{sizeof(ns_launch_option), "m5.large", "us-east-1b", NS_CAPACITY_SPOT, 0.04}};
    char token[64];
    snprintf(token, sizeof(token), "evt-%d-%lld", getpid(), (long long)pf_host.clock_ms);
    ns_launch_request req = request(&nc, options, 1, token);
    ns_launch_result r = {.struct_size = sizeof(r)};
    ck_assert_int_eq(pf_provider->launch(pf_state, &req, &r), NS_OK);
    const char *instance_id = strrchr(r.provider_id, '/') + 1;

    char body[256];
    snprintf(body, sizeof(body), "{\"kind\":\"spot-interruption\",\"instance_id\":\"%s\"}", instance_id);
    ck_assert_int_eq(emulator_control(&pf_emu, "/_emulator/events", body, NULL), 200);
    ck_assert_int_eq(emulator_control(&pf_emu, "/_emulator/events",
                                      "{\"kind\":\"rebalance\",\"instance_id\":\"i-0e00000000000gone\"}", NULL),
                     200);

    seen_events seen = {0, 1, {0}};
    ck_assert_int_eq(pf_provider->poll_events(pf_state, collect_event, &seen), 7); /* refused: kept */
    ck_assert_int_eq(seen.calls, 1);
    ck_assert_int_eq(seen.last.kind, NS_EVENT_SPOT_INTERRUPTION);
    ck_assert_str_eq(seen.last.provider_id, r.provider_id);
    ck_assert_int_eq(seen.last.deadline_ms - seen.last.time_ms, 120000);
    char first_id[NS_NAME_MAX];
    snprintf(first_id, sizeof(first_id), "%s", seen.last.id);

    /* Delivered again, accepted, deleted; the event about an unknown instance is dropped without a callback. */
    for (int i = 0; i < 3 && seen.calls < 2; i++)
        ck_assert_int_eq(pf_provider->poll_events(pf_state, collect_event, &seen), NS_OK);
    ck_assert_int_eq(seen.calls, 2);
    ck_assert_str_eq(seen.last.id, first_id);
    ck_assert_int_eq(pf_provider->poll_events(pf_state, collect_event, &seen), NS_OK);
    ck_assert_int_eq(seen.calls, 2);
    /* a malformed message is logged and deleted, never fatal */
    pf_control("/_emulator/events", "{\"kind\":\"raw\",\"body\":\"{not json\"}");
    ck_assert_int_eq(pf_provider->poll_events(pf_state, collect_event, &seen), NS_OK);
    ck_assert_int_eq(seen.calls, 2);
    ck_assert_ptr_nonnull(strstr(pf_host.log, "WARN aws interruption message is not JSON; deleted"));
    char *st = NULL;
    emulator_control(&pf_emu, "/_emulator/state", NULL, &st);
    ck_assert_ptr_nonnull(strstr(st, "\"queue\": 0"));
    /* a refused event waited in the provider, not in SQS: no permission beyond Karpenter's policy was needed */
    ck_assert_ptr_null(strstr(st, "ChangeMessageVisibility"));
    free(st);
    cJSON_Delete(spec);
}
END_TEST


static double od_price(const cJSON *types, const char *name)
{
    const cJSON *row = offering(cJSON_GetObjectItemCaseSensitive(types, name), "us-east-1a", "on-demand");
    ck_assert_msg(row != NULL, "%s has no on-demand offering in us-east-1a", name);
    return cJSON_GetArrayItem(row, 2)->valuedouble;
}

static cJSON *list_types(const ns_nodeclass *nc)
{
    collected c = {cJSON_CreateObject(), 0};
    ck_assert_msg(pf_provider->list_instance_types(pf_state, nc, collect_type, &c) == NS_OK, "%s",
                  pf_host.last_error_message);
    return c.types;
}

static int request_count(const char *action)
{
    cJSON *st = pf_control_get("/_emulator/state");
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(st, "requests"), action);
    int count = cJSON_IsNumber(n) ? n->valueint : 0;
    cJSON_Delete(st);
    return count;
}

/* Moves the host clock, and the emulator's with it (it refuses requests signed more than 5 minutes off its own). */
static void advance(int64_t ms)
{
    static int64_t total;
    total += ms;
    pf_host.clock_ms += ms;
    char body[64];
    snprintf(body, sizeof(body), "{\"offset_s\":%lld}", (long long)(total / 1000));
    pf_control("/_emulator/clock", body);
}

START_TEST(test_pricing_fallback_when_refused)
{
    pf_control("/_emulator/faults", "{\"kind\":\"error\",\"code\":\"AccessDeniedException\",\"status\":400,\"count\":50,"
                                    "\"actions\":[\"GetProducts\"]}");
    pf_reinit();
    cJSON *spec;
    ns_nodeclass nc = nodeclass(&spec, NODECLASS_SPEC);
    cJSON *types = list_types(&nc);
    /* m5.large is in the built-in table; z1d.large is not: 2 vCPUs and 16 GiB at the documented rates */
    ck_assert_double_eq_tol(od_price(types, "m5.large"), 0.096, 1e-9);
    ck_assert_double_eq_tol(aws_builtin_on_demand("us-east-1", "z1d.large"), -1, 1e-9);
    ck_assert_double_eq_tol(od_price(types, "z1d.large"), 2 * AWS_ESTIMATE_PER_VCPU + 16 * AWS_ESTIMATE_PER_GIB, 1e-9);
    ck_assert_ptr_nonnull(strstr(pf_host.log, "aws Pricing API unreachable; on-demand prices fall back"));
    ck_assert_ptr_nonnull(strstr(pf_host.log, "using=built-in prices and estimates"));
    cJSON_Delete(types);

    /* The API answers again: the next catalog refresh (host clock) asks it and its prices replace the fallback. */
    pf_control("/_emulator/clear", "{}");
    advance(300000);
    types = list_types(&nc);
    ck_assert_double_eq_tol(od_price(types, "z1d.large"), 0.186, 1e-9); /* aws-prices-us-east-1.json */
    cJSON_Delete(types);
    int asked = request_count("GetProducts");

    /* Within pricing_ttl a catalog refresh keeps the cached prices; after it they are asked for again. */
    advance(300000);
    cJSON_Delete(list_types(&nc));
    ck_assert_int_eq(request_count("GetProducts"), asked);
    advance(43200000);
    cJSON_Delete(list_types(&nc));
    ck_assert_int_gt(request_count("GetProducts"), asked);

    /* Refused again later: the last prices the API gave stay in use. */
    pf_control("/_emulator/faults", "{\"kind\":\"error\",\"code\":\"AccessDeniedException\",\"status\":400,\"count\":50,"
                                    "\"actions\":[\"GetProducts\"]}");
    advance(43200000);
    types = list_types(&nc);
    ck_assert_double_eq_tol(od_price(types, "z1d.large"), 0.186, 1e-9);
    ck_assert_ptr_nonnull(strstr(pf_host.log, "using=the last prices the Pricing API gave"));
    cJSON_Delete(types);
    cJSON_Delete(spec);
}
END_TEST

/* Karpenter's filters: on-demand market only (the emulator also lists each type in the CapacityBlock market, at
 * three times the price), and bare-metal types from their own product family, so they keep on-demand offerings. */
START_TEST(test_pricing_filters_like_karpenter)
{
    pf_reinit();
    cJSON *spec;
    ns_nodeclass nc = nodeclass(&spec, NODECLASS_SPEC);
    int asked = request_count("GetProducts");
    cJSON *types = list_types(&nc);
    ck_assert_double_eq_tol(od_price(types, "m5.large"), 0.096, 1e-9);   /* not the CapacityBlock price */
    ck_assert_double_eq_tol(od_price(types, "c5.metal"), 4.08, 1e-9);    /* aws-prices-us-east-1.json */
    ck_assert_double_eq_tol(od_price(types, "m7i.metal-24xl"), 5.32224, 1e-9);
    ck_assert_ptr_null(strstr(pf_host.log, "Pricing API unreachable"));
    ck_assert_int_gt(request_count("GetProducts"), asked + 2); /* pages of both families */
    cJSON_Delete(types);
    cJSON_Delete(spec);
}
END_TEST

/* An empty NextToken ends pagination; a token repeated by the server is an error, not an endless loop. */
START_TEST(test_pricing_page_tokens)
{
    pf_control("/_emulator/pricing", "{\"token_mode\":\"empty\"}");
    pf_reinit();
    cJSON *spec;
    ns_nodeclass nc = nodeclass(&spec, NODECLASS_SPEC);
    cJSON *types = list_types(&nc);
    ck_assert_double_eq_tol(od_price(types, "z1d.large"), 0.186, 1e-9);
    ck_assert_ptr_null(strstr(pf_host.log, "Pricing API unreachable"));
    cJSON_Delete(types);
    pf_control("/_emulator/pricing", "{\"token_mode\":\"repeat\"}");
    int asked = request_count("GetProducts");
    pf_reinit();
    types = list_types(&nc);
    pf_control("/_emulator/pricing", "{\"token_mode\":\"\"}");
    ck_assert_int_le(request_count("GetProducts") - asked, 2); /* the first page, and the one repeating its token */
    ck_assert_ptr_nonnull(strstr(pf_host.log, "aws Pricing API unreachable; on-demand prices fall back"));
    ck_assert_ptr_nonnull(strstr(pf_host.last_error_message, "repeats the page token"));
    ck_assert_double_eq_tol(od_price(types, "z1d.large"), 2 * AWS_ESTIMATE_PER_VCPU + 16 * AWS_ESTIMATE_PER_GIB, 1e-9);
    cJSON_Delete(types);
    cJSON_Delete(spec);
}
END_TEST

/* GovCloud has no Pricing API: the provider never calls one and prices come from the partition's built-in table. */
START_TEST(test_pricing_govcloud_uses_the_builtin_table)
{
    setenv("AWS_REGION", "us-gov-west-1", 1);
    pf_reinit();
    setenv("AWS_REGION", "us-east-1", 1);
    cJSON *spec;
    ns_nodeclass nc = nodeclass(&spec, NODECLASS_SPEC);
    int asked = request_count("GetProducts");
    cJSON *types = list_types(&nc);
    ck_assert_int_eq(request_count("GetProducts"), asked);
    ck_assert_double_eq_tol(od_price(types, "c5.large"), 0.102, 1e-9); /* aws-prices-us-gov-west-1.json */
    ck_assert_double_eq_tol(od_price(types, "z1d.large"),
                            AWS_ESTIMATE_GOVCLOUD_FACTOR * (2 * AWS_ESTIMATE_PER_VCPU + 16 * AWS_ESTIMATE_PER_GIB), 1e-9);
    ck_assert_ptr_nonnull(strstr(pf_host.log, "pricing APIs aren't available in AWS GovCloud regions"));
    ck_assert_ptr_null(strstr(pf_host.log, "Pricing API unreachable"));
    cJSON_Delete(types);
    cJSON_Delete(spec);
}
END_TEST

START_TEST(test_pricing_fallback_when_unreachable)
{
    setenv("AWS_ENDPOINT_URL_PRICING", "http://127.0.0.1:1", 1); /* nothing listens on port 1 */
    pf_reinit();
    unsetenv("AWS_ENDPOINT_URL_PRICING");
    cJSON *spec;
    ns_nodeclass nc = nodeclass(&spec, NODECLASS_SPEC);
    cJSON *types = list_types(&nc);
    ck_assert_double_eq_tol(od_price(types, "c5.large"), 0.085, 1e-9);
    ck_assert_double_eq_tol(od_price(types, "z1d.large"), 2 * AWS_ESTIMATE_PER_VCPU + 16 * AWS_ESTIMATE_PER_GIB, 1e-9);
    ck_assert_ptr_nonnull(strstr(pf_host.log, "aws Pricing API unreachable"));
    cJSON_Delete(types);
    cJSON_Delete(spec);
}
END_TEST

START_TEST(test_windows_node_class_lists_windows_types)
{
    cJSON *spec;
    ns_nodeclass nc = nodeclass(&spec, "{" PF_SPEC_BASE ",\"amiSelectorTerms\":[{\"alias\":\"windows2022@latest\"}],"
                                       "\"role\":\"KarpenterNodeRole-demo\"}");
    cJSON *types = list_types(&nc);
    ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(types, "m6g.large")); /* no arm64 Windows AMI */
    const cJSON *labels = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(types, "m5.large"), "labels");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(labels, "kubernetes.io/os")->valuestring, "windows");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(labels, "node.kubernetes.io/windows-build")->valuestring,
                     "10.0.20348");
    cJSON_Delete(types);
    cJSON_Delete(spec);
}
END_TEST

static int collect_policy(void *ctx, const ns_repair_policy *p)
{
    cJSON_AddNumberToObject(ctx, p->condition_type, (double)p->toleration_ms);
    ck_assert(strcmp(p->condition_status, "False") == 0 || strcmp(p->condition_status, "Unknown") == 0);
    return 0;
}

START_TEST(test_validate_and_repair_policies)
{
    cJSON *spec;
    ns_nodeclass nc = nodeclass(&spec, NODECLASS_SPEC);
    ck_assert_int_eq(pf_provider->validate_nodeclass(pf_state, &nc), NS_OK);
    cJSON_Delete(spec);
    nc = nodeclass(&spec, "{" PF_SPEC_BASE ",\"amiSelectorTerms\":[{\"alias\":\"al2023@latest\"}],\"role\":\"r\","
                          "\"metadataOptions\":{\"httpTokens\":\"required\",\"hopLimit\":2}}");
    ck_assert_int_eq(pf_provider->validate_nodeclass(pf_state, &nc), NS_ERR_INVALID_CONFIG);
    ck_assert_str_eq(pf_host.last_error_message, "EC2NodeClass default: spec.metadataOptions.hopLimit: unknown field");
    /* list and launch refuse it the same way */
    collected c = {cJSON_CreateObject(), 0};
    ck_assert_int_eq(pf_provider->list_instance_types(pf_state, &nc, collect_type, &c), NS_ERR_INVALID_CONFIG);
    cJSON_Delete(c.types);
    cJSON_Delete(spec);

    cJSON *policies = cJSON_CreateObject();
    ck_assert_int_eq(pf_provider->list_repair_policies(pf_state, collect_policy, policies), NS_OK);
    ck_assert_int_eq(cJSON_GetArraySize(policies), 7); /* Ready appears twice: False and Unknown */
    ck_assert_int_eq((int)cJSON_GetObjectItemCaseSensitive(policies, "Ready")->valuedouble, 1800000);
    ck_assert_int_eq((int)cJSON_GetObjectItemCaseSensitive(policies, "AcceleratedHardwareReady")->valuedouble, 600000);
    ck_assert_ptr_nonnull(cJSON_GetObjectItemCaseSensitive(policies, "ContainerRuntimeReady"));
    cJSON_Delete(policies);
}
END_TEST

START_TEST(test_test_hooks_need_the_option)
{
    ns_fault clear = {.struct_size = sizeof(clear), .kind = NS_FAULT_CLEAR};
    ck_assert_int_eq(pf_provider->test_inject_fault(pf_state, &clear), NS_ERR_UNSUPPORTED);
    pf_option("test_hooks", "true");
    pf_reinit();
    ck_assert_int_eq(pf_provider->test_inject_fault(pf_state, &clear), NS_OK);
    ns_fault bad = {.struct_size = sizeof(bad), .kind = NS_FAULT_FAIL, .method = "reboot", .count = 1,
                    .error = NS_ERR_INTERNAL};
    ck_assert_int_eq(pf_provider->test_inject_fault(pf_state, &bad), NS_ERR_INVALID_ARGUMENT);
    /* a failure injected for list_instances reaches it from EC2, in its category, once */
    ns_fault fail = {.struct_size = sizeof(fail), .kind = NS_FAULT_FAIL, .method = "list_instances", .count = 1,
                     .error = NS_ERR_UNAUTHORIZED};
    ck_assert_int_eq(pf_provider->test_inject_fault(pf_state, &fail), NS_OK);
    instances all = {.n = 0};
    ck_assert_int_eq(pf_provider->list_instances(pf_state, collect_instance, &all), NS_ERR_UNAUTHORIZED);
    ck_assert_ptr_nonnull(strstr(pf_host.last_error_message, "UnauthorizedOperation"));
    ck_assert_int_eq(pf_provider->list_instances(pf_state, collect_instance, &all), NS_OK);
    /* a throttle outlasts the client's retries */
    ns_fault throttle = {.struct_size = sizeof(throttle), .kind = NS_FAULT_THROTTLE, .method = "get_instance",
                         .count = 1};
    ck_assert_int_eq(pf_provider->test_inject_fault(pf_state, &throttle), NS_OK);
    ns_instance inst = {.struct_size = sizeof(inst)};
    ck_assert_int_eq(pf_provider->get_instance(pf_state, "aws:///us-east-1a/i-0e00000000000dead", &inst),
                     NS_ERR_THROTTLED);
    ck_assert_int_eq(pf_provider->get_instance(pf_state, "aws:///us-east-1a/i-0e00000000000dead", &inst),
                     NS_ERR_NOT_FOUND);
}
END_TEST

int main(void)
{
    if (pf_start() != 0)
        return EXIT_FAILURE;
    Suite *s = suite_create("aws_provider");
    TCase *plain = tcase_create("init");
    tcase_add_test(plain, test_init_requires_cluster_name);
    suite_add_tcase(s, plain);
    TCase *tc = tcase_create("emulated");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, pf_setup, pf_teardown);
    tcase_add_test(tc, test_instance_types_offerings_and_prices);
    tcase_add_test(tc, test_callback_stops_listing);
    tcase_add_test(tc, test_launch_lifecycle);
    tcase_add_test(tc, test_launch_without_capacity_names_offerings);
    tcase_add_test(tc, test_interruption_events);
    tcase_add_test(tc, test_capacity_reservation_interruption_warning);
    tcase_add_test(tc, test_health_scheduled_change_every_entity);
    tcase_add_test(tc, test_pricing_fallback_when_refused);
    tcase_add_test(tc, test_pricing_fallback_when_unreachable);
    tcase_add_test(tc, test_pricing_filters_like_karpenter);
    tcase_add_test(tc, test_pricing_page_tokens);
    tcase_add_test(tc, test_pricing_govcloud_uses_the_builtin_table);
    tcase_add_test(tc, test_windows_node_class_lists_windows_types);
    tcase_add_test(tc, test_validate_and_repair_policies);
    tcase_add_test(tc, test_test_hooks_need_the_option);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    pf_stop();
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
