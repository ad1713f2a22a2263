/* The status last written per object (controller/status_table.h). */
#include "controller/status_table.h"

#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"

void ns_status_table_init(ns_status_table *t, size_t entry_size, void (*clear)(void *entry))
{
    memset(t, 0, sizeof(*t));
    t->size = entry_size;
    t->clear = clear;
}

void *ns_status_table_at(const ns_status_table *t, size_t i)
{
    return t->items + i * t->size;
}

static void free_entry(ns_status_table *t, ns_status_entry *e)
{
    if (t->clear)
        t->clear(e);
    free(e->key);
    free(e->body);
}

void ns_status_table_free(ns_status_table *t)
{
    for (size_t i = 0; i < t->n; i++)
        free_entry(t, ns_status_table_at(t, i));
    free(t->items);
    t->items = NULL;
    t->n = 0;
}

void *ns_status_table_find(ns_status_table *t, const char *key)
{
    for (size_t i = 0; i < t->n; i++) {
        ns_status_entry *e = ns_status_table_at(t, i);
        if (strcmp(e->key, key) == 0)
            return e;
    }
    char *grown = realloc(t->items, (t->n + 1) * t->size), *k = grown ? strdup(key) : NULL;
    if (grown)
        t->items = grown;
    if (!k) {
        NS_FAIL(NS_ERR_INTERNAL, "out of memory keeping the status of %s", key);
        return NULL;
    }
    ns_status_entry *e = ns_status_table_at(t, t->n++);
    memset(e, 0, t->size);
    e->key = k;
    return e;
}

void ns_status_table_remove(ns_status_table *t, size_t i)
{
    free_entry(t, ns_status_table_at(t, i));
    if (i != --t->n)
        memcpy(ns_status_table_at(t, i), ns_status_table_at(t, t->n), t->size);
}

bool ns_status_changed(const ns_status_entry *e, const char *body)
{
    return !e->body || strcmp(e->body, body) != 0;
}

void ns_status_keep(ns_status_entry *e, char **body)
{
    free(e->body);
    e->body = *body;
    *body = NULL;
}
