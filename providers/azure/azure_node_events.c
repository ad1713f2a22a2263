/* event_from_node_condition (ABI 5): the Scheduled Events a VM sees through its own IMDS, as AKS's node problem
 * detector relays them into Node conditions. The controller cannot poll another VM's IMDS, so these conditions are
 * the only way the real notice (Preempt with its NotBefore, ~30 s for spot) reaches the drain.
 *
 * The detector writes the event into the condition's message as "<EventType> <EventStatus>[: <NotBefore>]. <text>
 * EventId: <id>", NotBefore in RFC 1123 (GMT), and sets:
 *   PreemptionScheduled=True (reason SpotEvictionIncoming) for "Preempt Scheduled", "Preempt Started" and the
 *     advisory "SpotRebalanceRecommendation Advisory";
 *   VMEventScheduled=True for every event type: Freeze, Reboot, Redeploy, Preempt, Terminate.
 * What each becomes (AKS's own node auto-drain drains on Redeploy, Preempt and Terminate and leaves Freeze and
 * Reboot alone: the VM keeps its disks and comes back):
 *   Preempt                       -> spot interruption, deadline NotBefore
 *   Redeploy, Terminate           -> scheduled maintenance, deadline NotBefore
 *   SpotRebalanceRecommendation   -> rebalance recommendation
 *   Freeze, Reboot, anything else -> no event
 * A "Started" event, or a NotBefore that cannot be read, has no deadline: the drain starts at once (the reference
 * port's rule: failing closed is never worse than missing a mandatory eviction). A PreemptionScheduled=True whose
 * message names no known event is still a spot eviction, for the same reason. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "azure_provider.h"

typedef struct notice {
    char type[32];   /* "Preempt", "Redeploy", ... */
    char status[16]; /* "Scheduled", "Started", "Advisory" */
    int64_t not_before_ms; /* 0 when absent or unreadable */
    char event_id[64];     /* the Scheduled Event's EventId, or "" */
} notice;

/* The message with every run of whitespace made one space and none at either end. */
static void squeeze(const char *in, char *out, size_t len)
{
    size_t n = 0;
    bool space = false;
    for (; *in && n + 1 < len; in++) {
        if (isspace((unsigned char)*in)) {
            space = n > 0;
            continue;
        }
        if (space && n + 2 < len)
            out[n++] = ' ';
        space = false;
        out[n++] = *in;
    }
    out[n] = '\0';
}

/* "Sat, 01 Aug 2026 12:00:30 GMT" (or UTC; one-digit day allowed), up to a '.' or the end. Locale-free: the
 * month names are RFC 1123's. 0 when it is not such a time. */
static int64_t rfc1123_ms(const char *s)
{
    static const char MONTHS[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    char wday[4], mon[4], zone[4];
    int day, year, hh, mm, ss, used = 0;
    if (sscanf(s, "%3[A-Za-z], %d %3[A-Za-z] %d %d:%d:%d %3[A-Z]%n", wday, &day, mon, &year, &hh, &mm, &ss, zone,
               &used) != 8 ||
        (s[used] != '\0' && s[used] != '.' && s[used] != ' '))
        return 0;
    const char *m = strlen(mon) == 3 ? strstr(MONTHS, mon) : NULL;
    if (!m || (m - MONTHS) % 3 != 0 || (strcmp(zone, "GMT") != 0 && strcmp(zone, "UTC") != 0) || day < 1 ||
        day > 31 || year < 1970 || hh > 23 || mm > 59 || ss > 60 || hh < 0 || mm < 0 || ss < 0)
        return 0;
    struct tm tm = {.tm_year = year - 1900, .tm_mon = (int)((m - MONTHS) / 3), .tm_mday = day, .tm_hour = hh,
                    .tm_min = mm, .tm_sec = ss};
    time_t t = timegm(&tm);
    /* timegm normalises 31 Feb into March: such a date is not one Azure wrote. */
    struct tm back;
    if (t < 0 || !gmtime_r(&t, &back) || back.tm_mday != day)
        return 0;
    return (int64_t)t * 1000;
}

/* Reads "<Type> <Status>[: <NotBefore>]. ..." from the start of the message; false when it does not start so. */
static bool read_notice(const char *message, notice *out)
{
    char msg[NS_DETAIL_MAX * 2];
    squeeze(message, msg, sizeof(msg));
    memset(out, 0, sizeof(*out));
    int used = 0;
    if (sscanf(msg, "%31[A-Za-z] %15[A-Za-z]%n", out->type, out->status, &used) != 2)
        return false;
    const char *rest = msg + used;
    if (*rest == ':')
        out->not_before_ms = rfc1123_ms(rest + 1 + (rest[1] == ' '));
    else if (*rest != '.' && *rest != '\0')
        return false; /* "Preempt ScheduledX", "Preempt Started eventually": not the detector's words */
    const char *id = strstr(rest, "EventId: ");
    if (id)
        sscanf(id + 9, "%63[A-Za-z0-9-]", out->event_id);
    return true;
}

static bool is(const char *a, const char *b)
{
    return strcmp(a, b) == 0;
}

/* The event a notice announces, or false for none. */
static bool classify(const char *condition, const notice *n, bool readable, ns_event_kind *kind)
{
    bool preemption = is(condition, "PreemptionScheduled");
    if (readable && is(n->type, "SpotRebalanceRecommendation") && is(n->status, "Advisory")) {
        *kind = NS_EVENT_REBALANCE_RECOMMENDATION;
        return true;
    }
    bool scheduled = readable && (is(n->status, "Scheduled") || is(n->status, "Started"));
    if ((scheduled && is(n->type, "Preempt")) || preemption) {
        *kind = NS_EVENT_SPOT_INTERRUPTION;
        return true;
    }
    if (scheduled && (is(n->type, "Redeploy") || is(n->type, "Terminate"))) {
        *kind = NS_EVENT_SCHEDULED_MAINTENANCE;
        return true;
    }
    return false;
}

int az_event_from_node_condition(void *state, const ns_node_condition *c, ns_event *ev, bool *is_event)
{
    (void)state; /* the answer comes from the condition alone */
    *is_event = false;
    if (!is(c->status, "True") || !(is(c->type, "PreemptionScheduled") || is(c->type, "VMEventScheduled")))
        return NS_OK;
    notice n;
    bool readable = read_notice(c->message, &n);
    ns_event_kind kind;
    if (!classify(c->type, &n, readable, &kind))
        return NS_OK;
    ev->kind = kind;
    ev->time_ms = c->last_transition_ms;
    /* Only a Scheduled event's NotBefore is a deadline: Started is under way, an advisory's date promises nothing. */
    ev->deadline_ms = readable && is(n.status, "Scheduled") ? n.not_before_ms : 0;
    const char *vm = strrchr(c->provider_id, '/') ? strrchr(c->provider_id, '/') + 1 : c->provider_id;
    /* One announcement, one id: the EventId when the detector relays it, else what the announcement says. */
    if (n.event_id[0])
        snprintf(ev->id, sizeof(ev->id), "scheduled-event/%.40s/%s", vm, n.event_id);
    else
        snprintf(ev->id, sizeof(ev->id), "%.24s/%.40s/%.16s/%.16s/%lld", c->type, vm, readable ? n.type : "-",
                 readable ? n.status : "-", (long long)(n.not_before_ms ? n.not_before_ms : c->last_transition_ms));
    snprintf(ev->provider_id, sizeof(ev->provider_id), "%s", c->provider_id);
    snprintf(ev->detail, sizeof(ev->detail), "Scheduled Event relayed as Node condition %s=True: %s", c->type,
             c->message[0] ? c->message : "(no message)");
    *is_event = true;
    return NS_OK;
}
