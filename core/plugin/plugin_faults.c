#include "plugin/plugin_faults.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "errors/ns_error.h"
#include "model/model_util.h"

typedef struct entry {
    ns_fault_kind kind;
    char *method; /* NULL = any */
    char *instance_type, *zone, *capacity_type;
    uint32_t remaining;
    ns_err error;
    int64_t delay_ms;
    bool hang; /* a DELAY until the call's deadline (delay_ms), which then fails as the watchdog fails it */
} entry;

struct ns_fault_layer {
    pthread_mutex_t lock;
    entry *items;
    size_t n, cap;
};

ns_fault_layer *ns_fault_layer_new(void)
{
    ns_fault_layer *l = calloc(1, sizeof(*l));
    if (!l || pthread_mutex_init(&l->lock, NULL) != 0) {
        free(l);
        NS_FAIL(NS_ERR_INTERNAL, "out of memory for the fault layer");
        return NULL;
    }
    return l;
}

static void entry_free(entry *e)
{
    free(e->method);
    free(e->instance_type);
    free(e->zone);
    free(e->capacity_type);
}

static void clear_locked(ns_fault_layer *l)
{
    for (size_t i = 0; i < l->n; i++)
        entry_free(&l->items[i]);
    l->n = 0;
}

void ns_fault_layer_clear(ns_fault_layer *l)
{
    pthread_mutex_lock(&l->lock);
    clear_locked(l);
    pthread_mutex_unlock(&l->lock);
}

void ns_fault_layer_free(ns_fault_layer *l)
{
    if (!l)
        return;
    clear_locked(l);
    free(l->items);
    pthread_mutex_destroy(&l->lock);
    free(l);
}

static int push_entry(ns_fault_layer *l, entry e, bool oom);

int ns_fault_layer_add(ns_fault_layer *l, const ns_fault *f)
{
    if (f->kind == NS_FAULT_CLEAR) {
        ns_fault_layer_clear(l);
        return NS_OK;
    }
    if ((f->kind == NS_FAULT_THROTTLE || f->kind == NS_FAULT_FAIL || f->kind == NS_FAULT_DELAY) && f->count == 0)
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "inject fault: a throttle, failure or delay needs a count");
    if (f->kind == NS_FAULT_FAIL && (f->error >= NS_OK || f->error < NS_ERR_INVALID_ARGUMENT))
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "inject fault: %d is not an error category", (int)f->error);
    if (f->kind == NS_FAULT_DELAY && f->delay_ms <= 0)
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "inject fault: a delay needs delay_ms > 0");
    if (f->kind < NS_FAULT_INSUFFICIENT_CAPACITY || f->kind > NS_FAULT_DELAY)
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "inject fault: kind %d is not one the core produces", (int)f->kind);
    entry e = {.kind = f->kind, .remaining = f->count, .error = f->error, .delay_ms = f->delay_ms};
    bool oom = (f->method && !(e.method = ns_strdup(f->method))) ||
               (f->instance_type && !(e.instance_type = ns_strdup(f->instance_type))) ||
               (f->zone && !(e.zone = ns_strdup(f->zone))) ||
               (f->capacity_type && !(e.capacity_type = ns_strdup(f->capacity_type)));
    return push_entry(l, e, oom);
}

/* Appends e (whose strings were copied unless oom) or frees it. */
static int push_entry(ns_fault_layer *l, entry e, bool oom)
{
    pthread_mutex_lock(&l->lock);
    if (!oom && ns_grow((void **)&l->items, &l->cap, l->n + 1, sizeof(entry)) == 0)
        l->items[l->n++] = e;
    else
        oom = true;
    pthread_mutex_unlock(&l->lock);
    if (oom) {
        entry_free(&e);
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory recording a fault");
    }
    return NS_OK;
}

int ns_fault_layer_add_hang(ns_fault_layer *l, const char *method, uint32_t count, int64_t deadline_ms)
{
    if (count == 0 || deadline_ms <= 0)
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "inject fault: a hang needs a count and a deadline");
    entry e = {.kind = NS_FAULT_DELAY, .remaining = count, .delay_ms = deadline_ms, .hang = true};
    return push_entry(l, e, method && !(e.method = ns_strdup(method)));
}

static bool matches(const char *want, const char *have)
{
    return !want || (have && strcmp(want, have) == 0);
}

int ns_fault_layer_enter(ns_fault_layer *l, const char *method)
{
    entry hit = {0};
    pthread_mutex_lock(&l->lock);
    for (size_t i = 0; i < l->n && !hit.kind; i++) {
        entry *e = &l->items[i];
        if (e->kind == NS_FAULT_INSUFFICIENT_CAPACITY || e->remaining == 0 || !matches(e->method, method))
            continue;
        hit = *e;
        e->remaining--;
    }
    pthread_mutex_unlock(&l->lock);
    switch (hit.kind) {
    case NS_FAULT_THROTTLE:
        NS_FAIL(NS_ERR_THROTTLED, "%s: throttled (injected fault)", method);
        ns_error_set_retry_after(0);
        return NS_ERR_THROTTLED;
    case NS_FAULT_FAIL:
        return NS_FAIL(hit.error, "%s: failed with %s (injected fault)", method, ns_err_name(hit.error));
    case NS_FAULT_DELAY:
        ns_clock_sleep_ms(hit.delay_ms);
        if (hit.hang)
            return NS_FAIL(NS_ERR_THROTTLED, "%s: did not return within %lld ms; the call is abandoned and counts as "
                           "failed (injected hang)", method, (long long)hit.delay_ms);
        return NS_OK;
    default:
        return NS_OK;
    }
}

bool ns_fault_layer_no_capacity(ns_fault_layer *l, const char *instance_type, const char *zone,
                                const char *capacity_type)
{
    bool hit = false;
    pthread_mutex_lock(&l->lock);
    for (size_t i = 0; i < l->n && !hit; i++) {
        const entry *e = &l->items[i];
        hit = e->kind == NS_FAULT_INSUFFICIENT_CAPACITY && matches(e->instance_type, instance_type) &&
              matches(e->zone, zone) && matches(e->capacity_type, capacity_type);
    }
    pthread_mutex_unlock(&l->lock);
    return hit;
}

bool ns_fault_layer_has_capacity_faults(ns_fault_layer *l)
{
    bool any = false;
    pthread_mutex_lock(&l->lock);
    for (size_t i = 0; i < l->n && !any; i++)
        any = l->items[i].kind == NS_FAULT_INSUFFICIENT_CAPACITY;
    pthread_mutex_unlock(&l->lock);
    return any;
}
