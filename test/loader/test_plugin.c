/*
 * A minimal provider compiled several times with different defines, each variant breaking one loading rule, so
 * every loader refusal is exercised with a real shared object:
 *   TP_NO_ENTRY          exports no entry symbol
 *   TP_ABI=N             claims ABI version N
 *   TP_TABLE_SIZE=N      claims a table of N bytes
 *   TP_NO_LAUNCH         leaves the required launch method NULL
 *   TP_INIT_FAILS        init reports an invalid-config error
 *   TP_INIT_FAILS_LATE   init stores a partial state, then fails (destroy must still run)
 *   TP_BAD_OPTION        declares an option whose default does not parse as its type
 *   TP_NAME="x"          declares another name than its file
 *   TP_DRIFT_FIELDS      sets drift_fields (only with a header that has the field)
 *   TP_NO_KINDS          (ABI 3) declares no node-class kinds
 *   TP_BAD_KIND          (ABI 3) declares a kind in Kubernetes' own API group
 *   TP_BAD_DEFAULT       (ABI 6) declares a v1alpha5 default with an operator v1alpha5 did not have (Gte)
 *   TP_BAD_RESERVATION   (ABI 7) says its reservation can take -5 more instances
 *   TP_CRASH_IN="m"      crashes (raises SIGSEGV) in method m, "entry" being the entry function (the watchdog)
 *   TP_HANG_IN="m"       never returns from method m, or "entry"
 *   TP_LATE_CALLBACK     list_instances calls back only after 3 s (a call the watchdog abandons meanwhile) and
 *                        exports what the callback returned
 * With none of them it is a well-behaved provider whose state records what the loader did. Built with a header of
 * ABI 4 or later it reports a TinNodeClass's status (nodeclass_status); spec.statusBug makes it break one rule of
 * that method, so each of the core's checks meets a real plugin. Built with a header of ABI 5 or later it reads a
 * TinMeltScheduled node condition (message: the deadline in unix ms) as a spot interruption; the reasons
 * BugProviderID, BugNoID and BugFails break one rule of event_from_node_condition each. Built with a header of ABI
 * 6 or later it declares v1alpha5 Provisioner defaults: tin.example.com/alloy In [bronze] unless the Provisioner
 * names an alloy or a temper, and tin.example.com/purity Gt 90 unless it names a purity. Every build offers tp.small
 * on demand in zone-a and in reservation tr-1 there; built with a header of ABI 7 or later it says tr-1 can take 3
 * more instances (ns_offering.reservation_capacity), logs each poll with log_typed, and each poll delivers an
 * InstanceUnhealthy event for i-1, a CapacityReservationInterruption for i-2 and one of kind 99, which no ABI has.
 *
 * The same file is also built against every released provider.h kept in test/abi/ (the include path picks the
 * header), so the loader tests load a plugin of each released ABI. Its node-class kind is TinNodeClass
 * (tin.example.com/v1): a kind the core has never heard of, whose spec.gauge validate_nodeclass checks.
 */
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nodesmith/provider.h"

#ifndef TP_ABI
#define TP_ABI NS_PROVIDER_ABI_VERSION
#endif
#ifndef TP_NAME
#define TP_NAME "good"
#endif

typedef struct tp_state {
    const ns_host *host;
    ns_host_ctx *ctx;
    int64_t answer;
} tp_state;

/* Where destroy leaves its mark, read by the test through dlsym. */
NS_EXPORT int tp_destroy_calls;

#ifdef TP_LATE_CALLBACK
/* What the core answered the callback made after the watchdog gave up on the call, and when it has answered. */
NS_EXPORT int tp_late_callback_rc;
NS_EXPORT atomic_int tp_late_callback_done;
#endif

/* The misbehaviour the variant was built with, in the method it names. */
static void tp_misbehave(const char *where)
{
#ifdef TP_CRASH_IN
    /* A signal raised, not a NULL store: UBSan would halt on the store before any signal handler ran, and the
     * crash the watchdog names must be the same in the sanitizer build. */
    if (strcmp(where, TP_CRASH_IN) == 0)
        raise(SIGSEGV);
#endif
#ifdef TP_HANG_IN
    if (strcmp(where, TP_HANG_IN) == 0)
        for (;;)
            sleep(60);
#endif
    (void)where;
}

static int tp_init(const ns_host *host, ns_host_ctx *ctx, void **state)
{
    tp_misbehave("init");
    tp_state *s = calloc(1, sizeof(*s));
    if (!s)
        return host->error(ctx, NS_ERR_INTERNAL, __FILE__, __LINE__, "out of memory");
    s->host = host;
    s->ctx = ctx;
#ifdef TP_INIT_FAILS
    free(s);
    return host->error(ctx, NS_ERR_INVALID_CONFIG, __FILE__, __LINE__, "option answer: the account is closed");
#else
    *state = s;
#ifdef TP_INIT_FAILS_LATE
    return host->error(ctx, NS_ERR_UNAUTHORIZED, __FILE__, __LINE__, "credentials rejected by the cloud");
#endif
    s->answer = host->option_int(ctx, "answer");
    return NS_OK;
#endif
}

static void tp_destroy(void *state)
{
    tp_destroy_calls++;
    free(state);
}

static int tp_list_instance_types(void *state, const ns_nodeclass *nc, ns_instance_type_cb cb, void *cb_ctx)
{
    static const ns_label labels[] = {
        {"kubernetes.io/arch", "amd64"},
        {"kubernetes.io/os", "linux"},
        {"node.kubernetes.io/instance-type", "tp.small"},
    };
    ns_offering offerings[] = {
        {.struct_size = sizeof(ns_offering), .zone = "zone-a", .capacity_type = "on-demand", .price_per_hour = 0.5,
         .available = true},
        {.struct_size = sizeof(ns_offering), .zone = "zone-a", .capacity_type = "reserved", .price_per_hour = 0.1,
         .available = true, .reservation_id = "tr-1",
#if TP_ABI >= 7 && defined(TP_BAD_RESERVATION)
         .reservation_capacity = -5,
#elif TP_ABI >= 7
         .reservation_capacity = 3,
#endif
        },
    };
    ns_instance_type t = {
        .struct_size = sizeof(t),
        .name = "tp.small",
        .labels = labels,
        .n_labels = 3,
        .capacity = {.cpu_milli = 2000, .memory_bytes = 4LL << 30, .pods = 10, .ephemeral_storage_bytes = 20LL << 30},
        .kube_reserved = {.cpu_milli = 100, .memory_bytes = 512LL << 20},
        .offerings = offerings,
        .n_offerings = 2,
    };
    tp_state *s = state;
    /* The option "answer" scales the CPU so a test can see its config reached the provider. */
    t.capacity.cpu_milli += s->answer;
    return cb(cb_ctx, &t);
}

static int tp_launch(void *state, const ns_launch_request *req, ns_launch_result *out)
{
    tp_state *s = state;
    tp_misbehave("launch");
    return s->host->error(s->ctx, NS_ERR_INSUFFICIENT_CAPACITY, __FILE__, __LINE__, "no capacity for %s",
                          req->nodeclaim_name);
}

static int tp_terminate(void *state, const char *provider_id, bool *gone)
{
    *gone = true;
    return NS_OK;
}

static int tp_list_instances(void *state, ns_instance_cb cb, void *cb_ctx)
{
    tp_misbehave("list_instances");
#ifdef TP_LATE_CALLBACK
    sleep(3);
#endif
    ns_instance a = {.struct_size = sizeof(a)};
    snprintf(a.provider_id, sizeof(a.provider_id), "tp:///zone-a/i-1");
    snprintf(a.instance_type, sizeof(a.instance_type), "tp.small");
    a.state = NS_INSTANCE_RUNNING;
    int rc = cb(cb_ctx, &a);
#ifdef TP_LATE_CALLBACK
    tp_late_callback_rc = rc;
    atomic_store(&tp_late_callback_done, 1);
#endif
    if (rc != 0)
        return rc;
    snprintf(a.provider_id, sizeof(a.provider_id), "tp:///zone-a/i-2");
    return cb(cb_ctx, &a);
}

static int tp_poll_events(void *state, ns_event_cb cb, void *cb_ctx)
{
#if TP_ABI >= 7
    tp_state *s = state;
    static const int kinds[] = {NS_EVENT_INSTANCE_UNHEALTHY, NS_EVENT_CAPACITY_RESERVATION_INTERRUPTION, 99};
    if (NS_HAS_FIELD(s->host, ns_host, log_typed)) {
        ns_log_field f[] = {{"events", NS_LOG_FIELD_INT, {.integer = 3}},
                            {"long-poll", NS_LOG_FIELD_BOOL, {.boolean = false}}};
        s->host->log_typed(s->ctx, NS_LOG_INFO, "polled events", f, 2);
    }
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        ns_event ev = {.struct_size = sizeof(ev), .kind = (ns_event_kind)kinds[i], .time_ms = 1000};
        snprintf(ev.id, sizeof(ev.id), "tp-event-%zu", i);
        snprintf(ev.provider_id, sizeof(ev.provider_id), "tp:///zone-a/i-%zu", i + 1);
        int rc = cb(cb_ctx, &ev);
        if (rc != 0)
            return rc;
    }
#endif
    return NS_OK;
}

#if TP_ABI >= 2
/* TinNodeClass's only rule: spec.gauge, when given, is a number from 1 to 30. */
static int tp_validate_nodeclass(void *state, const ns_nodeclass *nc)
{
    tp_state *s = state;
    const ns_json *gauge = s->host->json_get(nc->spec, "gauge");
    if (!gauge)
        return NS_OK;
    double g = s->host->json_type(gauge) == NS_JSON_NUMBER ? s->host->json_number(gauge) : -1;
    if (g < 1 || g > 30)
        return s->host->error(s->ctx, NS_ERR_INVALID_CONFIG, __FILE__, __LINE__,
                              "%s %s: spec.gauge must be a number from 1 to 30", nc->kind, nc->name);
    return NS_OK;
}
#endif

#ifdef TP_DRIFT_FIELDS
static const char *const tp_drift_fields[] = {"TinNodeClass.gauge", NULL};
#endif

#if TP_ABI >= 3 && !defined(TP_NO_KINDS)
static const ns_nodeclass_kind tp_kinds[] = {
#ifdef TP_BAD_KIND
    {sizeof(ns_nodeclass_kind), "apps", "v1", "TinNodeClass", 0},
#else
    {sizeof(ns_nodeclass_kind), "tin.example.com", "v1", "TinNodeClass", NS_NODECLASS_KUBELET},
    {sizeof(ns_nodeclass_kind), "tin.example.com", "v1alpha1", "TinNodeClass", NS_NODECLASS_DEFAULT_V1BETA1_REF},
#endif
};
#endif

#if TP_ABI >= 4
/* TinNodeClass's status: the gauge it resolved (GaugeReady False above 20: no such wire in stock) and, when
 * spec.statusBug names a rule, a status that breaks it. */
static int tp_nodeclass_status(void *state, const ns_nodeclass *nc, ns_json **out)
{
    tp_state *s = state;
    const ns_host *h = s->host;
    const char *bug = h->json_string(h->json_get(nc->spec, "statusBug"));
    double gauge = h->json_number(h->json_get(nc->spec, "gauge"));
    bool stocked = gauge <= 20;
    if (bug && strcmp(bug, "throttled") == 0) {
        *out = h->json_new_object(); /* left beside an error: the core frees it */
        return h->error(s->ctx, NS_ERR_THROTTLED, __FILE__, __LINE__, "the stock service is busy");
    }
    if (bug && strcmp(bug, "no-status") == 0)
        return NS_OK;
    ns_json *status = h->json_new_object(), *conditions = h->json_new_array(), *c = h->json_new_object();
    if (stocked)
        h->json_add(status, "gauge", h->json_new_number(gauge));
    const char *type = bug && strcmp(bug, "ready") == 0 ? "Ready" : "GaugeReady";
    h->json_add(c, "type", h->json_new_string(type));
    h->json_add(c, "status", h->json_new_string(stocked ? "True" : "False"));
    h->json_add(c, "reason", h->json_new_string(bug && strcmp(bug, "reason") == 0 ? "gauge not found"
                                                : stocked                          ? "GaugeReady"
                                                                                   : "GaugeNotFound"));
    if (!stocked && !(bug && strcmp(bug, "no-message") == 0))
        h->json_add(c, "message", h->json_new_string("no wire of spec.gauge in stock (at most 20)"));
    if (bug && strcmp(bug, "timestamp") == 0)
        h->json_add(c, "lastTransitionTime", h->json_new_string("2026-11-23T22:00:00Z"));
    h->json_add(conditions, NULL, c);
    if (!(bug && strcmp(bug, "no-conditions") == 0))
        h->json_add(status, "conditions", conditions);
    else
        h->json_free(conditions);
    *out = status;
    return NS_OK;
}
#endif

#if TP_ABI >= 5
static int tp_event_from_node_condition(void *state, const ns_node_condition *c, ns_event *ev, bool *is_event)
{
    tp_state *s = state;
    *is_event = strcmp(c->type, "TinMeltScheduled") == 0;
    if (!*is_event)
        return NS_OK;
    if (strcmp(c->reason, "BugFails") == 0)
        return s->host->error(s->ctx, NS_ERR_INTERNAL, __FILE__, __LINE__, "the melt gauge is unreadable");
    ev->kind = NS_EVENT_SPOT_INTERRUPTION;
    ev->deadline_ms = strtoll(c->message, NULL, 10);
    ev->time_ms = c->last_transition_ms;
    snprintf(ev->id, sizeof(ev->id), "%s", strcmp(c->reason, "BugNoID") == 0 ? "" : "melt/1");
    snprintf(ev->provider_id, sizeof(ev->provider_id), "%s",
             strcmp(c->reason, "BugProviderID") == 0 ? "tp:///zone-a/i-other" : c->provider_id);
    snprintf(ev->detail, sizeof(ev->detail), "the wire melts");
    return NS_OK;
}
#endif

#if TP_ABI >= 6
static const char *const tp_alloy_keys[] = {"tin.example.com/alloy", "tin.example.com/temper"};
static const char *const tp_bronze[] = {"bronze"};
static const char *const tp_purity_keys[] = {"tin.example.com/purity"};
static const char *const tp_purity[] = {"90"};
static const ns_requirement_default tp_defaults[] = {
    {sizeof(ns_requirement_default), "tin.example.com/alloy", "In", tp_bronze, 1, tp_alloy_keys, 2},
#ifdef TP_BAD_DEFAULT
    {sizeof(ns_requirement_default), "tin.example.com/purity", "Gte", tp_purity, 1, tp_purity_keys, 1},
#else
    {sizeof(ns_requirement_default), "tin.example.com/purity", "Gt", tp_purity, 1, tp_purity_keys, 1},
#endif
};

static int tp_v1alpha5_defaults(void *state, ns_requirement_default_cb cb, void *cb_ctx)
{
    (void)state;
    for (size_t i = 0; i < sizeof(tp_defaults) / sizeof(tp_defaults[0]); i++) {
        int rc = cb(cb_ctx, &tp_defaults[i]);
        if (rc != 0)
            return rc;
    }
    return NS_OK;
}
#endif

#if TP_ABI >= 2
static int tp_get_instance(void *state, const char *provider_id, ns_instance *out)
{
    tp_state *s = state;
    return s->host->error(s->ctx, NS_ERR_NOT_FOUND, __FILE__, __LINE__, "instance %s not found", provider_id);
}
#endif

static const ns_option tp_options[] = {
#ifdef TP_BAD_OPTION
    {"answer", NS_OPT_INT, "forty-two", "an integer whose default is not one"},
#else
    {"answer", NS_OPT_INT, "0", "added to the CPU of tp.small"},
#endif
    {"greeting", NS_OPT_STRING, NULL, "any text"},
    {"enabled", NS_OPT_BOOL, "false", "a flag"},
    {"interval", NS_OPT_DURATION, "30s", "a duration"},
    {NULL, 0, NULL, NULL},
};

static const ns_provider tp_table = {
    .abi_version = TP_ABI,
#ifdef TP_TABLE_SIZE
    .struct_size = TP_TABLE_SIZE,
#else
    .struct_size = sizeof(ns_provider),
#endif
    .name = TP_NAME,
    .version = "0.0.1",
    .options = tp_options,
    .init = tp_init,
    .destroy = tp_destroy,
    .list_instance_types = tp_list_instance_types,
#ifndef TP_NO_LAUNCH
    .launch = tp_launch,
#endif
    .terminate = tp_terminate,
    .list_instances = tp_list_instances,
    .poll_events = tp_poll_events,
#if TP_ABI >= 2
    .get_instance = tp_get_instance,
    .validate_nodeclass = tp_validate_nodeclass,
#endif
#ifdef TP_DRIFT_FIELDS
    .drift_fields = tp_drift_fields,
#endif
#if TP_ABI >= 3 && !defined(TP_NO_KINDS)
    .nodeclass_kinds = tp_kinds,
    .n_nodeclass_kinds = sizeof(tp_kinds) / sizeof(tp_kinds[0]),
#endif
#if TP_ABI >= 4
    .nodeclass_status = tp_nodeclass_status,
#endif
#if TP_ABI >= 5
    .event_from_node_condition = tp_event_from_node_condition,
#endif
#if TP_ABI >= 6
    .v1alpha5_defaults = tp_v1alpha5_defaults,
#endif
};

#ifndef TP_NO_ENTRY
NS_EXPORT const ns_provider *nodesmith_provider_entry(void);
NS_EXPORT const ns_provider *nodesmith_provider_entry(void)
{
    tp_misbehave("entry");
    return &tp_table;
}
#else
NS_EXPORT const ns_provider *some_other_symbol(void);
NS_EXPORT const ns_provider *some_other_symbol(void)
{
    return &tp_table;
}
#endif
