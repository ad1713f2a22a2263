/*
 * Event rules: every event poll_events delivers is well formed, an event is delivered once, and an event the core
 * could not take (its callback returned non-zero) comes back on the next poll. With test hooks the suite injects
 * events for an instance it launched; without them it can only check what the provider emits on its own. The kinds
 * of provider ABI 7 carry the fields provider.h gives them: an unhealthy instance no deadline, a capacity
 * reservation interruption none before its notice, and a provider claiming an older ABI sends neither.
 */
#include <stdio.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "conf.h"

#define MAX_SEEN 64
#define MAX_POLLS 10

typedef struct seen {
    size_t n;
    ns_event events[MAX_SEEN];
    unsigned bad;
    char first_bad[600];
    unsigned bad_fields;
    char first_bad_fields[600];
    const char *refuse_for; /* refuse the first event for this provider ID */
    bool refused;
    char refused_id[NS_NAME_MAX];
} seen;

/* The last event kind a provider claiming `abi` may send: ABI 7 added kinds 6 and 7. */
static ns_event_kind last_kind(uint32_t abi)
{
    return abi >= 7 ? NS_EVENT_CAPACITY_RESERVATION_INTERRUPTION : NS_EVENT_INSTANCE_TERMINATED;
}

/* Why an event of a known kind breaks its kind's fields (provider.h, ns_event_kind), or NULL. */
static const char *kind_fields_broken(const ns_event *ev)
{
    if (ev->kind == NS_EVENT_INSTANCE_UNHEALTHY && ev->deadline_ms != 0)
        return "an unhealthy instance is terminated at once: deadline_ms must be 0";
    if (ev->kind == NS_EVENT_CAPACITY_RESERVATION_INTERRUPTION && ev->deadline_ms != 0 && ev->time_ms != 0 &&
        ev->deadline_ms < ev->time_ms)
        return "a capacity reservation interruption's deadline comes before its notice";
    return NULL;
}

static int on_event(void *ctx, const ns_event *ev)
{
    seen *s = ctx;
    ns_event_kind max_kind = last_kind(ns_plugin_abi_version(conf_plugin));

    if (ev->kind < NS_EVENT_SPOT_INTERRUPTION || ev->kind > max_kind || !ev->id[0] || !ev->provider_id[0] ||
        ev->time_ms < 0 || ev->deadline_ms < 0) {
        if (s->bad++ == 0)
            snprintf(s->first_bad, sizeof(s->first_bad),
                     "event \"%s\" of kind %d for \"%s\" at %lld, deadline %lld (kinds are 1..%d for provider ABI "
                     "%u; id and provider ID non-empty; times non-negative)",
                     ev->id, (int)ev->kind, ev->provider_id, (long long)ev->time_ms, (long long)ev->deadline_ms,
                     (int)max_kind, (unsigned)ns_plugin_abi_version(conf_plugin));
    } else if (kind_fields_broken(ev) && s->bad_fields++ == 0) {
        snprintf(s->first_bad_fields, sizeof(s->first_bad_fields),
                 "event \"%s\" of kind %d for \"%s\" at %lld, deadline %lld: %s", ev->id, (int)ev->kind,
                 ev->provider_id, (long long)ev->time_ms, (long long)ev->deadline_ms, kind_fields_broken(ev));
    }
    if (s->refuse_for && !s->refused && strcmp(ev->provider_id, s->refuse_for) == 0) {
        s->refused = true;
        snprintf(s->refused_id, sizeof(s->refused_id), "%s", ev->id);
        return 1;
    }
    if (s->n < MAX_SEEN)
        s->events[s->n++] = *ev;
    return 0;
}

static void poll_once(seen *s)
{
    int rc = ns_plugin_poll_events(conf_plugin, on_event, s);

    CONF_CHECK("poll-events", rc == NS_OK || (s->refused && rc == 1), "poll_events failed: %s", conf_last_error());
    CONF_CHECK("event-well-formed", s->bad == 0, "%u malformed events; first: %s", s->bad, s->first_bad);
    CONF_CHECK("event-kind-fields", s->bad_fields == 0, "%u events break their kind's fields; first: %s",
               s->bad_fields, s->first_bad_fields);
}

static const ns_event *find(const seen *s, const char *provider_id, ns_event_kind kind)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->events[i].provider_id, provider_id) == 0 && s->events[i].kind == kind)
            return &s->events[i];
    return NULL;
}

/* Polls (each poll may long-poll) until an event of `kind` for provider_id arrives. */
static const ns_event *poll_for(seen *s, const char *provider_id, ns_event_kind kind)
{
    for (int i = 0; i < MAX_POLLS && !find(s, provider_id, kind); i++)
        poll_once(s);
    return find(s, provider_id, kind);
}

static ns_fault interrupt(const char *provider_id, ns_event_kind kind)
{
    return (ns_fault){.struct_size = sizeof(ns_fault),
                      .kind = NS_FAULT_INTERRUPT,
                      .event = kind,
                      .provider_id = provider_id,
                      .deadline_ms = ns_clock_now_ms() + 120000};
}

/* Whatever the provider emits on its own is well formed; with hooks, one event of every kind of its ABI is. */
START_TEST(test_events_well_formed)
{
    seen s = {0};
    ns_launch_result r;
    ns_event_kind last = last_kind(ns_plugin_abi_version(conf_plugin));

    poll_once(&s);
    conf_launch_one(&r);
    /* Stopping and terminated last: after them the instance takes no more events. */
    static const ns_event_kind kinds[] = {
        NS_EVENT_SPOT_INTERRUPTION,  NS_EVENT_REBALANCE_RECOMMENDATION,          NS_EVENT_SCHEDULED_MAINTENANCE,
        NS_EVENT_INSTANCE_UNHEALTHY, NS_EVENT_CAPACITY_RESERVATION_INTERRUPTION, NS_EVENT_INSTANCE_STOPPING,
        NS_EVENT_INSTANCE_TERMINATED,
    };
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        ns_event_kind k = kinds[i];
        if (k > last)
            continue;
        ns_fault f = interrupt(r.provider_id, k);

        /* The ABI-7 kinds are optional to emit: a provider whose cloud has no such notice refuses to fake one. */
        if (k >= NS_EVENT_INSTANCE_UNHEALTHY) {
            int rc = ns_plugin_test_inject_fault(conf_plugin, &f);
            CONF_CHECK("event-kinds", rc != NS_ERR_UNSUPPORTED || !conf_cfg.require_all_kinds,
                       "--require-all-kinds, yet the test hook refuses an event of kind %d: %s", (int)k,
                       conf_last_error());
            if (rc == NS_ERR_UNSUPPORTED) {
                printf("conformance: provider emits no event of kind %d (%s)\n", (int)k, conf_last_error());
                fflush(stdout);
                continue;
            }
            CONF_CHECK("test-hooks", rc == NS_OK, "events: injecting an event of kind %d failed: %s", (int)k,
                       conf_last_error());
        } else if (!conf_inject_or_skip("events: one injected event of every kind", &f)) {
            break;
        }
        CONF_CHECK("event-delivery", poll_for(&s, r.provider_id, k) != NULL,
                   "an injected event of kind %d for %s never arrived in %d polls", (int)k, r.provider_id, MAX_POLLS);
    }
    conf_release_all();
}
END_TEST

START_TEST(test_event_delivered_once)
{
    seen s = {0}, later = {0};
    ns_launch_result r;
    ns_fault f;
    const ns_event *ev;

    conf_launch_one(&r);
    f = interrupt(r.provider_id, NS_EVENT_SPOT_INTERRUPTION);
    if (!conf_inject_or_skip("events: an injected spot interruption is delivered once", &f)) {
        conf_release_all();
        return;
    }
    ev = poll_for(&s, r.provider_id, NS_EVENT_SPOT_INTERRUPTION);
    CONF_CHECK("event-delivery", ev != NULL, "an injected spot interruption for %s never arrived in %d polls",
               r.provider_id, MAX_POLLS);
    CONF_CHECK("event-delivery", ev->deadline_ms > 0, "the spot interruption for %s has no deadline (the fault gave "
               "one)", r.provider_id);
    for (int i = 0; i < 3; i++)
        poll_once(&later);
    for (size_t i = 0; i < later.n; i++)
        CONF_CHECK("event-once", strcmp(later.events[i].id, ev->id) != 0,
                   "event %s for %s was delivered again on a later poll", ev->id, r.provider_id);
    conf_release_all();
}
END_TEST

START_TEST(test_event_kept_when_refused)
{
    seen first = {0}, second = {0};
    ns_launch_result r;
    ns_fault f;
    const ns_event *ev;

    conf_launch_one(&r);
    f = interrupt(r.provider_id, NS_EVENT_REBALANCE_RECOMMENDATION);
    if (!conf_inject_or_skip("events: a refused event is kept for the next poll", &f)) {
        conf_release_all();
        return;
    }
    first.refuse_for = r.provider_id;
    for (int i = 0; i < MAX_POLLS && !first.refused; i++)
        poll_once(&first);
    CONF_CHECK("event-delivery", first.refused, "an injected rebalance recommendation for %s never arrived in %d "
               "polls", r.provider_id, MAX_POLLS);
    ev = poll_for(&second, r.provider_id, NS_EVENT_REBALANCE_RECOMMENDATION);
    CONF_CHECK("event-kept", ev != NULL && strcmp(ev->id, first.refused_id) == 0,
               "event %s for %s was refused by the callback (non-zero) and was not delivered again", first.refused_id,
               r.provider_id);
    conf_release_all();
}
END_TEST

Suite *conf_suite_events(void)
{
    Suite *s = suite_create("events");
    TCase *tc = tcase_create("poll");

    tcase_add_checked_fixture(tc, conf_setup, conf_teardown);
    tcase_set_timeout(tc, conf_cfg.timeout_s);
    tcase_add_test(tc, test_events_well_formed);
    tcase_add_test(tc, test_event_delivered_once);
    tcase_add_test(tc, test_event_kept_when_refused);
    suite_add_tcase(s, tc);
    return s;
}
