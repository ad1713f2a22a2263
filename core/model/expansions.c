#include "model/expansions.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "model/model_util.h"

typedef struct entry {
    char *key; /* kind "/" namespace "/" name: unique, since neither a kind nor a namespace holds a "/" */
    bool owned;
    char **pods;
    size_t n_pods, cap_pods;
} entry;

struct ns_expansions {
    entry *items; /* sorted by key */
    size_t n, cap;
};

void ns_expansions_free(ns_expansions *x)
{
    if (!x)
        return;
    for (size_t i = 0; i < x->n; i++) {
        free(x->items[i].key);
        ns_strv_free(x->items[i].pods, x->items[i].n_pods);
    }
    free(x->items);
    free(x);
}

static char *make_key(const char *kind, const char *ns, const char *name)
{
    size_t len = strlen(kind) + strlen(ns ? ns : "") + strlen(name) + 3;
    char *key = malloc(len);
    if (!key) {
        NS_FAIL(NS_ERR_INTERNAL, "out of memory recording workload %s %s/%s", kind, ns ? ns : "", name);
        return NULL;
    }
    snprintf(key, len, "%s/%s/%s", kind, ns ? ns : "", name);
    return key;
}

static entry *find(const ns_expansions *x, const char *kind, const char *ns, const char *name)
{
    char *key = x ? make_key(kind, ns, name) : NULL;
    bool found = false;
    size_t at = key ? ns_sorted_find(x->items, x->n, sizeof(entry), offsetof(entry, key), key, &found) : 0;
    free(key);
    return found ? &x->items[at] : NULL;
}

/* The entry of KIND NS/NAME, added when absent; NULL with NS_ERR_INTERNAL recorded. */
static entry *get(ns_expansions **xp, const char *kind, const char *ns, const char *name)
{
    if (!*xp && !(*xp = calloc(1, sizeof(**xp)))) {
        NS_FAIL(NS_ERR_INTERNAL, "out of memory recording workload %s %s/%s", kind, ns ? ns : "", name);
        return NULL;
    }
    ns_expansions *x = *xp;
    char *key = make_key(kind, ns, name);
    if (!key)
        return NULL;
    bool found;
    size_t at = ns_sorted_find(x->items, x->n, sizeof(entry), offsetof(entry, key), key, &found);
    if (found) {
        free(key);
        return &x->items[at];
    }
    if (ns_grow((void **)&x->items, &x->cap, x->n + 1, sizeof(entry)) < 0) {
        free(key);
        return NULL;
    }
    memmove(&x->items[at + 1], &x->items[at], (x->n - at) * sizeof(entry));
    x->items[at] = (entry){.key = key};
    x->n++;
    return &x->items[at];
}

int ns_expansions_mark_owned(ns_expansions **x, const char *kind, const char *ns, const char *name)
{
    entry *e = get(x, kind, ns, name);
    if (!e)
        return NS_ERR_INTERNAL;
    e->owned = true;
    return 0;
}

bool ns_expansions_owned(const ns_expansions *x, const char *kind, const char *ns, const char *name)
{
    const entry *e = find(x, kind, ns, name);
    return e && e->owned;
}

int ns_expansions_add_pod(ns_expansions **x, const char *kind, const char *ns, const char *name, const char *pod)
{
    entry *e = get(x, kind, ns, name);
    if (!e || ns_grow((void **)&e->pods, &e->cap_pods, e->n_pods + 1, sizeof(char *)) < 0)
        return NS_ERR_INTERNAL;
    if (!(e->pods[e->n_pods] = ns_strdup(pod)))
        return NS_ERR_INTERNAL;
    e->n_pods++;
    return 0;
}

void ns_expansions_take_pods(ns_expansions *x, const char *kind, const char *ns, const char *name, char ***pods,
                             size_t *n)
{
    entry *e = find(x, kind, ns, name);
    *pods = e ? e->pods : NULL;
    *n = e ? e->n_pods : 0;
    if (e) {
        e->pods = NULL;
        e->n_pods = e->cap_pods = 0;
    }
}
