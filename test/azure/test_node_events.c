/*
 * azure.so's event_from_node_condition (ABI 5) through the core's loader and its checking wrapper: the Node
 * conditions AKS's node problem detector sets from Scheduled Events, in the message shapes the reference port's
 * interruption controller parses (Azure/karpenter-provider-azure pkg/controllers/node/interruption), each becoming
 * the event and deadline docs/providers/azure.md lists.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "azure_fixture.h"
#include "errors/ns_error.h"
#include "log/ns_log.h"

#define VM_ID "azure:///subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/MC_demo/providers/" \
              "Microsoft.Compute/virtualMachines/aks-spot-abcde"
/* Sat, 01 Aug 2026 12:00:30 GMT */
#define NOT_BEFORE_MS INT64_C(1785585630000)
#define SEEN_MS INT64_C(1785585592000)

static ns_plugin *plugin;

static void setup(void)
{
    plugin = azf_load(NULL);
}

static void teardown(void)
{
    ns_plugin_unload(plugin);
}

static bool ask(const char *type, const char *status, const char *message, ns_event *ev)
{
    ns_node_condition c = {.struct_size = sizeof(c), .node_name = "aks-spot-abcde", .provider_id = VM_ID,
                           .type = type, .status = status, .reason = "SpotEvictionIncoming", .message = message,
                           .last_transition_ms = SEEN_MS};
    bool is_event = false;
    memset(ev, 0, sizeof(*ev));
    ck_assert_msg(ns_plugin_event_from_node_condition(plugin, &c, ev, &is_event) == NS_OK, "%s: %s", message,
                  ns_error_message());
    return is_event;
}

typedef struct expect {
    const char *type;
    const char *message;
    ns_event_kind kind; /* 0: no event */
    int64_t deadline_ms;
} expect;

static const expect CASES[] = {
    /* PreemptionScheduled, as the reference port's tests write its messages. */
    {"PreemptionScheduled", "Preempt Scheduled: Sat, 01 Aug 2026 12:00:30 GMT. For more information, see "
     "https://aka.ms/aks-spot-eviction. EventId: A1B2C3D4-E5F6-4A7B-8C9D-0E1F2A3B4C5D", NS_EVENT_SPOT_INTERRUPTION,
     NOT_BEFORE_MS},
    {"PreemptionScheduled", "Preempt Scheduled: Sat, 01 Aug 2026 12:00:30 UTC", NS_EVENT_SPOT_INTERRUPTION,
     NOT_BEFORE_MS},
    {"PreemptionScheduled", " \nPreempt  Scheduled:\tSat,  1 Aug 2026 12:00:30 GMT. ", NS_EVENT_SPOT_INTERRUPTION,
     NOT_BEFORE_MS},
    {"PreemptionScheduled", "Preempt Started: . For more information, see https://example.com.",
     NS_EVENT_SPOT_INTERRUPTION, 0},
    {"PreemptionScheduled", "Preempt Started: Sat, 01 Aug 2026 12:00:30 GMT.", NS_EVENT_SPOT_INTERRUPTION, 0},
    {"PreemptionScheduled", "SpotRebalanceRecommendation Advisory: . For more information, see https://example.com.",
     NS_EVENT_REBALANCE_RECOMMENDATION, 0},
    {"PreemptionScheduled", "SpotRebalanceRecommendation Advisory: Preempt Scheduled: Sat, 01 Aug 2026 12:00:30 GMT.",
     NS_EVENT_REBALANCE_RECOMMENDATION, 0},
    /* A deadline it cannot read, or no message at all: drain at once rather than miss the eviction. */
    {"PreemptionScheduled", "Preempt Scheduled: soon. EventId: not-a-guid", NS_EVENT_SPOT_INTERRUPTION, 0},
    {"PreemptionScheduled", "", NS_EVENT_SPOT_INTERRUPTION, 0},
    {"PreemptionScheduled", "Preempt Scheduled: Sat, 01 Aug 2026 12:00:30 PST.", NS_EVENT_SPOT_INTERRUPTION, 0},
    {"PreemptionScheduled", "Preempt Scheduled: 2026-08-01T12:00:30Z.", NS_EVENT_SPOT_INTERRUPTION, 0},
    {"PreemptionScheduled", "Preempt Scheduled: Sat, 32 Aug 2026 12:00:30 GMT.", NS_EVENT_SPOT_INTERRUPTION, 0},
    {"PreemptionScheduled", "Preempt Scheduled: Sat, 01 Aug 2026 12:00:30 GMTinvalid.", NS_EVENT_SPOT_INTERRUPTION, 0},
    {"PreemptionScheduled", "Preempt Scheduled: Sat, 31 Feb 2026 12:00:30 GMT.", NS_EVENT_SPOT_INTERRUPTION, 0},
    {"PreemptionScheduled", "Preempt Scheduled. Sat, 01 Aug 2026 12:00:30 GMT.", NS_EVENT_SPOT_INTERRUPTION, 0},
    /* VMEventScheduled: every Scheduled Event type; AKS drains on Redeploy, Preempt and Terminate only. */
    {"VMEventScheduled", "Preempt Scheduled: Sat, 01 Aug 2026 12:00:30 GMT.", NS_EVENT_SPOT_INTERRUPTION,
     NOT_BEFORE_MS},
    {"VMEventScheduled", "Redeploy Scheduled: Sat, 01 Aug 2026 12:00:30 GMT. EventId: 5B0C9F52-2C6F-4F1B-9E0A-1",
     NS_EVENT_SCHEDULED_MAINTENANCE, NOT_BEFORE_MS},
    {"VMEventScheduled", "Terminate Scheduled: Sat, 01 Aug 2026 12:00:30 GMT.", NS_EVENT_SCHEDULED_MAINTENANCE,
     NOT_BEFORE_MS},
    {"VMEventScheduled", "Redeploy Started.", NS_EVENT_SCHEDULED_MAINTENANCE, 0},
    {"VMEventScheduled", "Freeze Scheduled: Sat, 01 Aug 2026 12:00:30 GMT.", 0, 0},
    {"VMEventScheduled", "Reboot Scheduled: Sat, 01 Aug 2026 12:00:30 GMT.", 0, 0},
    {"VMEventScheduled", "VM has no scheduled event", 0, 0},
    {"VMEventScheduled", "NotPreempt Scheduled: Sat, 01 Aug 2026 12:00:30 GMT.", 0, 0},
    {"VMEventScheduled", "Preempt ScheduledSomething: Sat, 01 Aug 2026 12:00:30 GMT.", 0, 0},
    /* Conditions the detector sets for other things. */
    {"KernelDeadlock", "Preempt Scheduled: Sat, 01 Aug 2026 12:00:30 GMT.", 0, 0},
    {"FrequentKubeletRestart", "", 0, 0},
};

START_TEST(conditions_become_events)
{
    for (size_t i = 0; i < sizeof(CASES) / sizeof(CASES[0]); i++) {
        const expect *x = &CASES[i];
        ns_event ev;
        bool is_event = ask(x->type, "True", x->message, &ev);
        ck_assert_msg(is_event == (x->kind != 0), "%s \"%s\": event %d, expected %d", x->type, x->message, is_event,
                      x->kind != 0);
        if (!is_event)
            continue;
        ck_assert_msg(ev.kind == x->kind && ev.deadline_ms == x->deadline_ms,
                      "%s \"%s\": kind %d deadline %lld, expected kind %d deadline %lld", x->type, x->message, ev.kind,
                      (long long)ev.deadline_ms, x->kind, (long long)x->deadline_ms);
        ck_assert_str_eq(ev.provider_id, VM_ID);
        ck_assert_int_eq(ev.time_ms, SEEN_MS);
        ck_assert_msg(strstr(ev.detail, x->type) != NULL, "detail '%s' names no condition", ev.detail);
    }
}
END_TEST

/* A condition that is not True announces nothing, whatever its message. */
START_TEST(false_conditions_are_no_events)
{
    ns_event ev;
    ck_assert(!ask("PreemptionScheduled", "False", "Preempt Scheduled: Sat, 01 Aug 2026 12:00:30 GMT.", &ev));
    ck_assert(!ask("VMEventScheduled", "Unknown", "Redeploy Scheduled: Sat, 01 Aug 2026 12:00:30 GMT.", &ev));
}
END_TEST

/* The detector re-asserts the condition every few seconds: one announcement keeps one id, another gets another. */
START_TEST(one_announcement_one_id)
{
    ns_event a, b, c, d;
    const char *with_id = "Preempt Scheduled: Sat, 01 Aug 2026 12:00:30 GMT. EventId: A1B2C3D4-E5F6-4A7B-8C9D-0E1F2A3B";
    ck_assert(ask("PreemptionScheduled", "True", with_id, &a));
    ck_assert(ask("VMEventScheduled", "True", with_id, &b));
    ck_assert_str_eq(a.id, b.id); /* the same Scheduled Event seen through both conditions */
    ck_assert_msg(strstr(a.id, "A1B2C3D4-E5F6-4A7B-8C9D-0E1F2A3B") != NULL, "id %s lacks the EventId", a.id);
    ck_assert(ask("PreemptionScheduled", "True", "Preempt Scheduled: Sat, 01 Aug 2026 12:00:30 GMT.", &c));
    ck_assert(ask("PreemptionScheduled", "True", "Preempt Scheduled: Sat, 01 Aug 2026 12:00:50 GMT.", &d));
    ck_assert_str_ne(c.id, d.id);
    ck_assert(ask("PreemptionScheduled", "True", " Preempt Scheduled:  Sat, 01 Aug 2026 12:00:30 GMT", &d));
    ck_assert_str_eq(c.id, d.id);
}
END_TEST

int main(void)
{
    ns_log_set_level(NS_LOG_ERROR);
    Suite *s = suite_create("azure-node-events");
    TCase *tc = tcase_create("azure-node-events");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, conditions_become_events);
    tcase_add_test(tc, false_conditions_are_no_events);
    tcase_add_test(tc, one_announcement_one_id);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
