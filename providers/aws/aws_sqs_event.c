/* EventBridge messages of the interruption queue into the core's events (aws_sqs_event.h). */
#include "aws_sqs_event.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws_parse_util.h"

/* EC2 gives a spot instance, and one in an interruptible capacity reservation, two minutes between the warning and
 * the termination. */
#define SPOT_NOTICE_MS (2 * 60 * 1000)

static bool copy_fits(char *dst, size_t len, const char *src)
{
    int n = snprintf(dst, len, "%s", src ? src : "");
    return n >= 0 && (size_t)n < len;
}

static bool add_event(aws_sqs_events *out, const ns_event *ev, const char *instance)
{
    aws_sqs_event *e = &out->items[out->n];
    if (!instance || strncmp(instance, "i-", 2) != 0 || !copy_fits(e->instance, sizeof(e->instance), instance))
        return false;
    e->ev = *ev;
    out->n++;
    return true;
}

/* AWS Health's scheduled changes name their start in RFC 1123 ("Sat, 05 Jun 2021 08:00:00 GMT"); ISO 8601 is
 * accepted too. */
static int64_t health_start_ms(const char *text)
{
    int64_t ms = 0;
    if (!aws_parse_rfc1123_ms(text, &ms) && !aws_parse_iso8601_ms(text, &ms))
        return 0;
    return ms;
}

/* An interruptible capacity reservation's warning names the termination in instance-termination-time; without it,
 * EC2's documented notice is two minutes, as for spot. */
static int64_t reservation_deadline_ms(const ns_host *h, const ns_json *detail, int64_t when)
{
    int64_t ms = 0;
    if (aws_parse_iso8601_ms(h->json_string(h->json_get(detail, "instance-termination-time")), &ms))
        return ms;
    return when ? when + SPOT_NOTICE_MS : 0;
}

/* The event's kind and deadline from its detail-type; false for a message nodesmith does not act on. *entities is
 * set for an AWS Health event (its affected entities). */
static bool classify(const ns_host *h, const char *type, const ns_json *detail, int64_t when, ns_event *ev,
                     const ns_json **entities)
{
    if (strcmp(type, "EC2 Spot Instance Interruption Warning") == 0) {
        ev->kind = NS_EVENT_SPOT_INTERRUPTION;
        ev->deadline_ms = when ? when + SPOT_NOTICE_MS : 0;
    } else if (strcmp(type, "EC2 Capacity Reservation Instance Interruption Warning") == 0 ||
               strcmp(type, "EC2 Interruptible Capacity Reservation Instance Interruption Warning") == 0) {
        ev->kind = NS_EVENT_CAPACITY_RESERVATION_INTERRUPTION;
        ev->deadline_ms = reservation_deadline_ms(h, detail, when);
    } else if (strcmp(type, "EC2 Instance Rebalance Recommendation") == 0) {
        ev->kind = NS_EVENT_REBALANCE_RECOMMENDATION;
    } else if (strcmp(type, "EC2 Instance State-change Notification") == 0) {
        const char *state = h->json_string(h->json_get(detail, "state"));
        if (state && (strcmp(state, "stopping") == 0 || strcmp(state, "stopped") == 0))
            ev->kind = NS_EVENT_INSTANCE_STOPPING;
        else if (state && (strcmp(state, "shutting-down") == 0 || strcmp(state, "terminated") == 0))
            ev->kind = NS_EVENT_INSTANCE_TERMINATED;
        else
            return false;
    } else if (strcmp(type, "AWS Health Event") == 0) {
        const char *category = h->json_string(h->json_get(detail, "eventTypeCategory"));
        *entities = h->json_get(detail, "affectedEntities");
        if (!category || strcmp(category, "scheduledChange") != 0 || h->json_size(*entities) == 0)
            return false;
        ev->kind = NS_EVENT_SCHEDULED_MAINTENANCE;
        ev->deadline_ms = health_start_ms(h->json_string(h->json_get(detail, "startTime")));
    } else {
        return false;
    }
    return true;
}

/* The events of one parsed message into out->items (allocated here). */
static bool read_events(const ns_host *h, const ns_json *msg, aws_sqs_events *out)
{
    const char *type = h->json_string(h->json_get(msg, "detail-type"));
    const ns_json *detail = h->json_get(msg, "detail");
    const char *id = h->json_string(h->json_get(msg, "id"));
    int64_t when = 0;
    aws_parse_iso8601_ms(h->json_string(h->json_get(msg, "time")), &when);
    const char *target = h->json_string(h->json_get(detail, "instance-id"));
    ns_event ev = {.struct_size = sizeof(ev), .time_ms = when};
    const ns_json *entities = NULL;
    if (!type || !id || !copy_fits(ev.id, sizeof(ev.id), id) || !classify(h, type, detail, when, &ev, &entities))
        return false;
    size_t cap = entities ? h->json_size(entities) : 1;
    if (!(out->items = calloc(cap, sizeof(*out->items))))
        return false;
    if (!entities) {
        snprintf(ev.detail, sizeof(ev.detail), "%s for %s", type, target ? target : "");
        return add_event(out, &ev, target);
    }
    /* Every affected instance gets its own event, with an ID of its own for de-duplication. */
    for (size_t i = 0; i < cap; i++) {
        const char *instance = h->json_string(h->json_get(h->json_at(entities, i), "entityValue"));
        ns_event one = ev;
        int n = snprintf(one.id, sizeof(one.id), "%s/%s", id, instance ? instance : "");
        snprintf(one.detail, sizeof(one.detail), "%s for %s", type, instance ? instance : "");
        if (n > 0 && (size_t)n < sizeof(one.id))
            add_event(out, &one, instance);
    }
    return out->n > 0;
}

bool aws_sqs_event_read(const ns_host *h, const char *body, aws_sqs_events *out, bool *not_json, char *detail_type,
                        size_t detail_type_len)
{
    *out = (aws_sqs_events){0};
    ns_json *msg = body ? h->json_parse(body, strlen(body)) : NULL;
    *not_json = msg == NULL;
    copy_fits(detail_type, detail_type_len, h->json_string(h->json_get(msg, "detail-type")));
    bool relevant = msg && read_events(h, msg, out);
    h->json_free(msg);
    if (!relevant)
        aws_sqs_events_free(out);
    return relevant;
}

void aws_sqs_events_free(aws_sqs_events *e)
{
    free(e->items);
    *e = (aws_sqs_events){0};
}
