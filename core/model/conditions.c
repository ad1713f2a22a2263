#include "model/conditions.h"

#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "model/model_util.h"

static ns_condition *find(const ns_conditions *c, const char *type)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->items[i].type, type) == 0)
            return &c->items[i];
    return NULL;
}

static void condition_free(ns_condition *x)
{
    free(x->type);
    free(x->status);
    free(x->reason);
    free(x->message);
}

int ns_conditions_set(ns_conditions *c, const char *type, const char *status, const char *reason, const char *message,
                      int64_t now_ms)
{
    ns_condition next = {0};
    ns_condition *cur = find(c, type);
    next.last_transition_ms = cur && strcmp(cur->status, status) == 0 ? cur->last_transition_ms : now_ms;
    if (!(next.type = ns_strdup(type)) || !(next.status = ns_strdup(status)) ||
        (reason && !(next.reason = ns_strdup(reason))) || (message && !(next.message = ns_strdup(message)))) {
        condition_free(&next);
        return NS_ERR_INTERNAL;
    }
    if (!cur) {
        if (ns_grow((void **)&c->items, &c->cap, c->n + 1, sizeof(*c->items)) < 0) {
            condition_free(&next);
            return NS_ERR_INTERNAL;
        }
        cur = &c->items[c->n++];
    } else {
        condition_free(cur);
    }
    *cur = next;
    return 0;
}

const ns_condition *ns_conditions_get(const ns_conditions *c, const char *type)
{
    return find(c, type);
}

bool ns_conditions_true(const ns_conditions *c, const char *type)
{
    const ns_condition *x = find(c, type);
    return x && strcmp(x->status, "True") == 0;
}

void ns_conditions_remove(ns_conditions *c, const char *type)
{
    ns_condition *x = find(c, type);
    if (!x)
        return;
    condition_free(x);
    size_t i = (size_t)(x - c->items);
    memmove(x, x + 1, (c->n - i - 1) * sizeof(*x));
    c->n--;
}

int ns_conditions_copy(const ns_conditions *src, ns_conditions *dst)
{
    for (size_t i = 0; i < src->n; i++) {
        const ns_condition *x = &src->items[i];
        if (ns_conditions_set(dst, x->type, x->status, x->reason, x->message, x->last_transition_ms) < 0) {
            ns_conditions_free(dst);
            return NS_ERR_INTERNAL;
        }
    }
    return 0;
}

void ns_conditions_free(ns_conditions *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++)
        condition_free(&c->items[i]);
    free(c->items);
    memset(c, 0, sizeof(*c));
}
