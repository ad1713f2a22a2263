/*
 * event_from_node_condition (ABI 5) for the simulated cloud: its node agent announces an interruption the way AKS's
 * node problem detector relays Azure's Scheduled Events, as a Node condition, so timelines and engine tests can drive
 * the core's condition path without a cloud. The condition:
 *   type    SimInterruptionScheduled, status True
 *   reason  SpotInterruption, ScheduledMaintenance or RebalanceRecommendation (the timeline's event names)
 *   message the deadline, RFC 3339 in UTC ("2026-08-01T12:00:30Z" or "...30.000Z"), or anything else for none
 * The event's id is the reason and the deadline (else the condition's transition time): one announcement, one id.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "sim_events.h"

static const struct {
    const char *reason;
    ns_event_kind kind;
} SIM_CONDITION_EVENTS[] = {
    {"SpotInterruption", NS_EVENT_SPOT_INTERRUPTION},
    {"ScheduledMaintenance", NS_EVENT_SCHEDULED_MAINTENANCE},
    {"RebalanceRecommendation", NS_EVENT_REBALANCE_RECOMMENDATION},
};

/* "YYYY-MM-DDTHH:MM:SS[.fff]Z" -> unix ms; 0 for anything else. */
static int64_t utc_ms(const char *s)
{
    struct tm tm = {0};
    int used = 0;
    if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
               &tm.tm_sec, &used) != 6 || used == 0)
        return 0;
    const char *rest = s + used;
    int64_t frac = 0, scale = 100; /* milliseconds: the first three digits of the fraction */
    if (*rest == '.')
        for (rest++; *rest >= '0' && *rest <= '9'; rest++, scale /= 10)
            frac += scale * (*rest - '0');
    if (strcmp(rest, "Z") != 0)
        return 0;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    time_t t = timegm(&tm);
    return t > 0 ? (int64_t)t * 1000 + frac : 0;
}

int sim_event_from_node_condition(void *state, const ns_node_condition *c, ns_event *ev, bool *is_event)
{
    (void)state; /* the answer comes from the condition alone; no injected fault delays or fails it */
    *is_event = false;
    if (strcmp(c->type, "SimInterruptionScheduled") != 0 || strcmp(c->status, "True") != 0)
        return NS_OK;
    size_t i = 0, n = sizeof(SIM_CONDITION_EVENTS) / sizeof(SIM_CONDITION_EVENTS[0]);
    while (i < n && strcmp(SIM_CONDITION_EVENTS[i].reason, c->reason) != 0)
        i++;
    if (i == n)
        return NS_OK;
    ev->kind = SIM_CONDITION_EVENTS[i].kind;
    ev->time_ms = c->last_transition_ms;
    ev->deadline_ms = utc_ms(c->message);
    snprintf(ev->id, sizeof(ev->id), "condition/%s/%.80s/%lld", c->reason, c->node_name,
             (long long)(ev->deadline_ms ? ev->deadline_ms : c->last_transition_ms));
    snprintf(ev->provider_id, sizeof(ev->provider_id), "%s", c->provider_id);
    snprintf(ev->detail, sizeof(ev->detail), "announced by Node condition SimInterruptionScheduled=True (%s)",
             c->reason);
    *is_event = true;
    return NS_OK;
}
