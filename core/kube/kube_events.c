#include "kube/kube_events.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "errors/ns_error.h"
#include "kube/kube_resource.h"
#include "kube/kube_writes.h"
#include "model/hash.h"
#include "model/model_util.h"

#define MAX_REMEMBERED 4096

/* One event already written: its identity and where it lives. */
typedef struct seen_event {
    uint64_t key;
    char namespace_[64];
    char name[320];
    int count;
    int64_t last_ms;
} seen_event;

struct ns_kube_recorder {
    ns_kube_client *client;
    char *component;
    pthread_mutex_t lock;
    seen_event *seen;
    size_t n_seen;
    uint64_t serial;
};

int ns_kube_recorder_new(ns_kube_client *c, const char *component, ns_kube_recorder **out)
{
    ns_kube_recorder *r = calloc(1, sizeof(*r));
    if (!r || !(r->component = ns_strdup(component)) || !(r->seen = calloc(MAX_REMEMBERED, sizeof(seen_event)))) {
        ns_kube_recorder_free(r);
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory creating the event recorder");
    }
    r->client = c;
    pthread_mutex_init(&r->lock, NULL);
    *out = r;
    return 0;
}

void ns_kube_recorder_free(ns_kube_recorder *r)
{
    if (!r)
        return;
    if (r->component)
        pthread_mutex_destroy(&r->lock);
    free(r->component);
    free(r->seen);
    free(r);
}

static uint64_t event_key(const ns_kube_event_ref *ref, const char *type, const char *reason, const char *message)
{
    uint64_t h = NS_HASH_FNV_BASIS;
    const char *parts[] = {ref->api_version, ref->kind, ref->namespace_, ref->name, ref->uid, type, reason, message};
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
        h = ns_hash_field(h, parts[i]);
    return h;
}

static seen_event *find_seen(ns_kube_recorder *r, uint64_t key, int64_t now)
{
    for (size_t i = 0; i < r->n_seen; i++) {
        if (r->seen[i].key == key && now - r->seen[i].last_ms < NS_KUBE_EVENT_DEDUP_MS)
            return &r->seen[i];
    }
    return NULL;
}

/* The slot for a new event: a free one, else the oldest. */
static seen_event *new_slot(ns_kube_recorder *r)
{
    if (r->n_seen < MAX_REMEMBERED)
        return &r->seen[r->n_seen++];
    seen_event *oldest = &r->seen[0];
    for (size_t i = 1; i < r->n_seen; i++) {
        if (r->seen[i].last_ms < oldest->last_ms)
            oldest = &r->seen[i];
    }
    return oldest;
}

static int bump(ns_kube_recorder *r, seen_event *s, int64_t now)
{
    char ts[40];
    long status = 0;
    ns_clock_format_rfc3339(now - now % 1000, ts, sizeof(ts));
    /* metav1.Time has seconds precision: "2026-11-23T19:00:00Z". */
    snprintf(ts + 19, sizeof(ts) - 19, "Z");
    cJSON *patch = cJSON_CreateObject();
    cJSON_AddNumberToObject(patch, "count", s->count + 1);
    cJSON_AddStringToObject(patch, "lastTimestamp", ts);
    int rc = ns_kube_patch(r->client, &NS_KUBE_EVENTS, s->namespace_, s->name, NULL, NS_KUBE_MERGE_PATCH, patch, NULL,
                           &status, NULL);
    cJSON_Delete(patch);
    if (rc == 0) {
        s->count++;
        s->last_ms = now;
        return 0;
    }
    return status == 404 ? 1 : rc; /* the Event expired on the server: write a new one */
}

static int create(ns_kube_recorder *r, const ns_kube_event_ref *ref, const char *type, const char *reason,
                  const char *message, uint64_t key, int64_t now, seen_event **out)
{
    char ts[40], name[320];
    const char *ns = ref->namespace_ ? ref->namespace_ : "default";
    cJSON *created = NULL;
    ns_clock_format_rfc3339(now - now % 1000, ts, sizeof(ts));
    snprintf(ts + 19, sizeof(ts) - 19, "Z");
    /* client-go names events <object>.<hex unix nanoseconds>; a serial keeps two in one millisecond apart. */
    snprintf(name, sizeof(name), "%.250s.%llx", ref->name,
             (unsigned long long)now * 1000000ull + (unsigned long long)(r->serial++ % 1000000));
    cJSON *ev = cJSON_CreateObject();
    cJSON_AddStringToObject(ev, "apiVersion", "v1");
    cJSON_AddStringToObject(ev, "kind", "Event");
    cJSON *meta = cJSON_AddObjectToObject(ev, "metadata");
    cJSON_AddStringToObject(meta, "name", name);
    cJSON_AddStringToObject(meta, "namespace", ns);
    cJSON *inv = cJSON_AddObjectToObject(ev, "involvedObject");
    cJSON_AddStringToObject(inv, "apiVersion", ref->api_version);
    cJSON_AddStringToObject(inv, "kind", ref->kind);
    cJSON_AddStringToObject(inv, "name", ref->name);
    if (ref->namespace_)
        cJSON_AddStringToObject(inv, "namespace", ref->namespace_);
    if (ref->uid)
        cJSON_AddStringToObject(inv, "uid", ref->uid);
    cJSON_AddStringToObject(ev, "type", type);
    cJSON_AddStringToObject(ev, "reason", reason);
    cJSON_AddStringToObject(ev, "message", message);
    cJSON_AddNumberToObject(ev, "count", 1);
    cJSON_AddStringToObject(ev, "firstTimestamp", ts);
    cJSON_AddStringToObject(ev, "lastTimestamp", ts);
    cJSON *src = cJSON_AddObjectToObject(ev, "source");
    cJSON_AddStringToObject(src, "component", r->component);
    cJSON_AddStringToObject(ev, "reportingComponent", r->component);
    int rc = ns_kube_create(r->client, &NS_KUBE_EVENTS, ns, ev, NULL, &created);
    cJSON_Delete(ev);
    cJSON_Delete(created);
    if (rc < 0)
        return rc;
    seen_event *s = new_slot(r);
    s->key = key;
    snprintf(s->namespace_, sizeof(s->namespace_), "%s", ns);
    snprintf(s->name, sizeof(s->name), "%s", name);
    s->count = 1;
    s->last_ms = now;
    *out = s;
    return 0;
}

int ns_kube_record(ns_kube_recorder *r, const ns_kube_event_ref *ref, const char *type, const char *reason,
                   const char *message, int *count)
{
    int64_t now = ns_clock_now_ms();
    uint64_t key = event_key(ref, type, reason, message);
    int rc = 1;
    pthread_mutex_lock(&r->lock);
    seen_event *s = find_seen(r, key, now);
    if (s)
        rc = bump(r, s, now);
    if (rc == 1) {
        if (s)
            s->key = 0;
        ns_error_clear();
        rc = create(r, ref, type, reason, message, key, now, &s);
    }
    if (rc == 0 && count)
        *count = s->count;
    pthread_mutex_unlock(&r->lock);
    return rc;
}
