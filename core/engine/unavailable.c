#include "engine/unavailable.h"

#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "model/model_util.h"

static ns_unavailable_entry *unavailable_find(const ns_unavailable_cache *c, const char *type, const char *zone,
                                              const char *capacity_type)
{
    for (size_t i = 0; i < c->n; i++) {
        ns_unavailable_entry *x = &c->items[i];
        if (strcmp(x->instance_type, type) == 0 && strcmp(x->zone, zone) == 0 &&
            strcmp(x->capacity_type, capacity_type) == 0)
            return x;
    }
    return NULL;
}

int ns_unavailable_add(ns_unavailable_cache *c, const char *type, const char *zone, const char *capacity_type,
                       int64_t until_ms)
{
    ns_unavailable_entry *x = unavailable_find(c, type, zone, capacity_type);
    if (x) {
        if (until_ms > x->until_ms)
            x->until_ms = until_ms;
        return 0;
    }
    if (ns_grow((void **)&c->items, &c->cap, c->n + 1, sizeof(*c->items)) < 0)
        return NS_ERR_INTERNAL;
    ns_unavailable_entry e = {ns_strdup(type), ns_strdup(zone), ns_strdup(capacity_type), until_ms};
    if (!e.instance_type || !e.zone || !e.capacity_type) {
        free(e.instance_type);
        free(e.zone);
        free(e.capacity_type);
        return NS_ERR_INTERNAL;
    }
    c->items[c->n++] = e;
    return 0;
}

bool ns_unavailable_has(const ns_unavailable_cache *c, const char *type, const char *zone, const char *capacity_type,
                        int64_t now_ms)
{
    const ns_unavailable_entry *x = unavailable_find(c, type, zone, capacity_type);
    return x && x->until_ms > now_ms;
}

static void entry_free(ns_unavailable_entry *x)
{
    free(x->instance_type);
    free(x->zone);
    free(x->capacity_type);
}

void ns_unavailable_expire(ns_unavailable_cache *c, int64_t now_ms)
{
    size_t k = 0;
    for (size_t i = 0; i < c->n; i++) {
        if (c->items[i].until_ms > now_ms)
            c->items[k++] = c->items[i];
        else
            entry_free(&c->items[i]);
    }
    c->n = k;
}

void ns_unavailable_free(ns_unavailable_cache *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++)
        entry_free(&c->items[i]);
    free(c->items);
    memset(c, 0, sizeof(*c));
}
