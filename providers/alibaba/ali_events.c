/* poll_events: ECS system events from the MNS queue the operator names (CloudMonitor's or EventBridge's shape), and
 * the operation locks DescribeInstances shows on the cluster's instances (a preemptible instance being reclaimed is
 * locked "Recycling"). Each event carries the deadline the cloud gives:
 *   Instance:PreemptibleInstanceInterruption     spot interruption, 5 minutes after the event (ECS's notice)
 *   Instance:SystemMaintenance.*:Scheduled       scheduled maintenance, at content.notBefore
 *   Instance:SystemMaintenance.*:Inquiring       elevated risk (rebalance recommendation)
 *   Instance:StateChange Stopping / Deleted       instance stopping / terminated
 *   operation lock Recycling                      spot interruption, 5 minutes after the lock was first seen
 * A message is deleted from the queue once the core took its event (or when it is not about an instance). */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ali_json.h"
#include "ali_mns.h"
#include "ali_provider.h"

#define NOTICE_MS (5 * 60 * 1000)

/* "20190409T121826.922+0800" (CloudMonitor) or ISO 8601 (EventBridge) into unix milliseconds; -1 if neither. */
static int64_t event_time_ms(const char *s)
{
    int64_t iso = ali_parse_iso8601_ms(s);
    if (iso >= 0 || !s)
        return iso;
    int y, mo, d, h, mi, sec, ms = 0, off = 0;
    char sign = '+';
    if (sscanf(s, "%4d%2d%2dT%2d%2d%2d.%3d%c%4d", &y, &mo, &d, &h, &mi, &sec, &ms, &sign, &off) < 6)
        return -1;
    struct tm tm = {.tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_hour = h, .tm_min = mi, .tm_sec = sec};
    int64_t t = (int64_t)timegm(&tm) * 1000 + ms;
    int64_t offset_ms = ((off / 100) * 60 + off % 100) * 60000LL;
    return sign == '-' ? t + offset_ms : t - offset_ms;
}

/* A message body: JSON, or base64 of JSON (MNS subscriptions may encode it). */
static ns_json *parse_body(const ns_host *h, const char *body)
{
    ns_json *doc = h->json_parse(body, strlen(body));
    if (doc)
        return doc;
    size_t n = strlen(body);
    unsigned char *raw = malloc(n / 4 * 3 + 4);
    if (!raw)
        return NULL;
    int len = EVP_DecodeBlock(raw, (const unsigned char *)body, (int)n);
    while (len > 0 && raw[len - 1] == '\0')
        len--;
    doc = len > 0 ? h->json_parse((const char *)raw, (size_t)len) : NULL;
    free(raw);
    return doc;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Fills ev from one message; false when it is not an event about an instance. */
static bool event_of(ali_state *s, const ns_json *doc, const char *message_id, ns_event *ev)
{
    const ns_host *h = s->host;
    const char *name = ali_json_str(h, doc, "name"), *type = ali_json_str(h, doc, "type");
    const ns_json *content = h->json_get(doc, "content");
    const char *when = ali_json_str(h, doc, "eventTime");
    if (!name && type) { /* EventBridge: "ecs:Instance:PreemptibleInstanceInterruption", the content in "data" */
        name = strncmp(type, "ecs:", 4) == 0 ? type + 4 : type;
        content = h->json_get(doc, "data");
        when = ali_json_str(h, doc, "time");
    }
    const char *instance = ali_json_str(h, content, "instanceId");
    if (!name || !instance)
        return false;
    memset(ev, 0, sizeof(*ev));
    ev->struct_size = sizeof(*ev);
    int64_t t = event_time_ms(when);
    ev->time_ms = t >= 0 ? t : h->now_ms(s->ctx);
    const char *state = ali_json_str(h, content, "state");
    if (strcmp(name, "Instance:PreemptibleInstanceInterruption") == 0) {
        ev->kind = NS_EVENT_SPOT_INTERRUPTION;
        ev->deadline_ms = ev->time_ms + NOTICE_MS;
    } else if (strncmp(name, "Instance:SystemMaintenance.", 27) == 0 && ends_with(name, ":Scheduled")) {
        ev->kind = NS_EVENT_SCHEDULED_MAINTENANCE;
        int64_t nb = ali_parse_iso8601_ms(ali_json_str(h, content, "notBefore"));
        ev->deadline_ms = nb > 0 ? nb : 0;
    } else if (strncmp(name, "Instance:SystemMaintenance.", 27) == 0 && ends_with(name, ":Inquiring")) {
        ev->kind = NS_EVENT_REBALANCE_RECOMMENDATION;
    } else if (strcmp(name, "Instance:StateChange") == 0 && state && strcmp(state, "Stopping") == 0) {
        ev->kind = NS_EVENT_INSTANCE_STOPPING;
    } else if (strcmp(name, "Instance:StateChange") == 0 && state &&
               (strcmp(state, "Deleted") == 0 || strcmp(state, "Deleting") == 0)) {
        ev->kind = NS_EVENT_INSTANCE_TERMINATED;
    } else {
        return false;
    }
    const char *id = ali_json_str(h, doc, "id");
    snprintf(ev->id, sizeof(ev->id), "%.120s", id ? id : message_id);
    snprintf(ev->provider_id, sizeof(ev->provider_id), "%.60s.%.150s", s->region, instance);
    snprintf(ev->detail, sizeof(ev->detail), "%.200s on %.150s", name, instance);
    return true;
}

/* A message MNS shows again (its visibility timeout passed while the event waited) is not delivered twice. */
static bool delivered(const ali_state *s, const char *id)
{
    for (size_t i = 0; i < ALI_MAX_DELIVERED; i++)
        if (strcmp(s->delivered[i], id) == 0)
            return true;
    return false;
}

static void remember_delivered(ali_state *s, const char *id)
{
    ali_copy(s->delivered[s->next_delivered], NS_NAME_MAX, id);
    s->next_delivered = (s->next_delivered + 1) % ALI_MAX_DELIVERED;
}

/* Delivers the events the core refused before; false when it refuses again. */
static bool deliver_pending(ali_state *s, ns_event_cb cb, void *cb_ctx)
{
    while (s->n_pending) {
        ns_event ev = s->pending[0];
        char receipt[256];
        ali_copy(receipt, sizeof(receipt), s->pending_receipt[0]);
        if (cb(cb_ctx, &ev) != 0)
            return false;
        remember_delivered(s, ev.id);
        memmove(&s->pending[0], &s->pending[1], (s->n_pending - 1) * sizeof(s->pending[0]));
        memmove(&s->pending_receipt[0], &s->pending_receipt[1], (s->n_pending - 1) * sizeof(s->pending_receipt[0]));
        s->n_pending--;
        /* a receipt that expired meanwhile is not fatal: the message comes back, is known as delivered and is
         * deleted with its new receipt */
        if (receipt[0] && ali_mns_delete(s->host, s->ctx, s->credentials, s->queue_url, receipt) < 0) {
            ns_label f[] = {{"event", ev.id}};
            s->host->log(s->ctx, NS_LOG_WARN, "could not delete a delivered event's message; it is dropped when seen "
                         "again", f, 1);
        }
    }
    return true;
}

static void keep(ali_state *s, const ns_event *ev, const char *receipt)
{
    if (s->n_pending == ALI_MAX_PENDING)
        return; /* the message stays in the queue and comes back after its visibility timeout */
    s->pending[s->n_pending] = *ev;
    ali_copy(s->pending_receipt[s->n_pending], sizeof(s->pending_receipt[0]), receipt ? receipt : "");
    s->n_pending++;
}

static int poll_queue(ali_state *s, ns_event_cb cb, void *cb_ctx, bool *stopped)
{
    ali_mns_message m[ALI_MNS_MAX_BATCH];
    size_t n = 0;
    int rc = ali_mns_receive(s->host, s->ctx, s->credentials, s->queue_url, m, &n);
    for (size_t i = 0; rc == NS_OK && i < n; i++) {
        ns_json *doc = parse_body(s->host, m[i].body);
        ns_event ev;
        bool is_event = doc && event_of(s, doc, m[i].id, &ev);
        s->host->json_free(doc);
        bool pending = false;
        for (size_t k = 0; is_event && k < s->n_pending; k++)
            if (strcmp(s->pending[k].id, ev.id) == 0) {
                pending = true; /* shown again while it waits: only its newest receipt can delete it */
                ali_copy(s->pending_receipt[k], sizeof(s->pending_receipt[k]), m[i].receipt);
            }
        if (pending)
            continue;
        if (is_event && !delivered(s, ev.id)) {
            if (*stopped || cb(cb_ctx, &ev) != 0) {
                *stopped = true;
                keep(s, &ev, m[i].receipt);
                continue;
            }
            remember_delivered(s, ev.id);
        }
        if (!is_event) {
            ns_label f[] = {{"message-id", m[i].id}};
            s->host->log(s->ctx, NS_LOG_DEBUG, "ignored a queue message that is not an instance event", f, 1);
        }
        rc = ali_mns_delete(s->host, s->ctx, s->credentials, s->queue_url, m[i].receipt);
    }
    ali_mns_messages_free(m, n);
    return rc;
}

static bool lock_seen(ali_state *s, const char *id)
{
    for (size_t i = 0; i < s->n_seen_locks; i++)
        if (strcmp(s->seen_locks[i], id) == 0)
            return true;
    return false;
}

typedef struct locks_ctx {
    ali_state *s;
    ns_event_cb cb;
    void *cb_ctx;
    bool stopped;
} locks_ctx;

static int lock_one(ali_state *s, const ns_json *in, void *ctx)
{
    locks_ctx *lc = ctx;
    const ns_host *h = s->host;
    const char *id = ali_json_str(h, in, "InstanceId");
    const ns_json *locks = ali_json_list(h, in, "OperationLocks", "LockReason");
    bool recycling = false;
    for (size_t k = 0; k < h->json_size(locks); k++) {
        const char *r = ali_json_str(h, h->json_at(locks, k), "LockReason");
        recycling |= r && strcmp(r, "Recycling") == 0;
    }
    if (!id || !recycling || lock_seen(s, id))
        return NS_OK;
    ns_event ev = {.struct_size = sizeof(ev), .kind = NS_EVENT_SPOT_INTERRUPTION};
    int64_t now = h->now_ms(s->ctx);
    ev.time_ms = now;
    ev.deadline_ms = now + NOTICE_MS;
    snprintf(ev.id, sizeof(ev.id), "lock-%.100s", id);
    snprintf(ev.provider_id, sizeof(ev.provider_id), "%.60s.%.150s", s->region, id);
    snprintf(ev.detail, sizeof(ev.detail), "operation lock Recycling on %.150s", id);
    ali_copy(s->seen_locks[s->next_seen_lock], sizeof(s->seen_locks[0]), id);
    s->next_seen_lock = (s->next_seen_lock + 1) % ALI_MAX_SEEN_LOCKS;
    if (s->n_seen_locks < ALI_MAX_SEEN_LOCKS)
        s->n_seen_locks++;
    /* Delivery stops at the consumer's first refusal; later events are kept for the next poll, not dropped. */
    if (lc->stopped || lc->cb(lc->cb_ctx, &ev) != 0) {
        lc->stopped = true;
        keep(s, &ev, NULL);
    } else {
        remember_delivered(s, ev.id);
    }
    return NS_OK;
}

int ali_poll_events(void *state, ns_event_cb cb, void *cb_ctx)
{
    ali_state *s = state;
    int rc = NS_OK;
    pthread_mutex_lock(&s->poll_lock);
    if (!deliver_pending(s, cb, cb_ctx))
        goto out;
    bool stopped = false;
    if (s->queue_url[0] && (rc = poll_queue(s, cb, cb_ctx, &stopped)) < 0)
        goto out;
    int64_t now = s->host->now_ms(s->ctx);
    if (!stopped && (s->last_lock_poll_ms == 0 || now - s->last_lock_poll_ms >= s->lock_poll_ms)) {
        locks_ctx lc = {s, cb, cb_ctx, false};
        if ((rc = ali_each_owned_instance(s, "Recycling", lock_one, &lc)) == NS_OK)
            s->last_lock_poll_ms = now;
    }
out:
    pthread_mutex_unlock(&s->poll_lock);
    return rc;
}
