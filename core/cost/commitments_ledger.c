/* The ledger of commitments.h: which commitment covers a node or an offering, what it has left, and the effective
 * price that follows. */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "cost/commitments.h"
#include "errors/ns_error.h"
#include "model/labels.h"

struct ns_commit_ledger {
    ns_commit_usage *u; /* one per commitment, in declared order */
    size_t n;
};

int ns_commit_ledger_new(const ns_commitments *c, ns_commit_ledger **out)
{
    *out = NULL;
    ns_commit_ledger *l = calloc(1, sizeof(*l));
    size_t n = c ? c->n : 0;
    if (l)
        l->u = calloc(n ? n : 1, sizeof(*l->u));
    if (!l || !l->u) {
        free(l);
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory for the ledger of %zu commitments", n);
    }
    for (size_t i = 0; i < n; i++)
        l->u[i].c = &c->items[i];
    l->n = n;
    *out = l;
    return NS_OK;
}

void ns_commit_ledger_free(ns_commit_ledger *l)
{
    if (!l)
        return;
    free(l->u);
    free(l);
}

size_t ns_commit_ledger_count(const ns_commit_ledger *l)
{
    return l ? l->n : 0;
}

const ns_commit_usage *ns_commit_ledger_usage(const ns_commit_ledger *l, size_t i)
{
    return l && i < l->n ? &l->u[i] : NULL;
}

static const char *label(const ns_commit_subject *s, const char *key)
{
    for (size_t i = 0; i < s->n_labels; i++)
        if (strcmp(s->labels[i].key, key) == 0)
            return s->labels[i].value;
    return NULL;
}

static bool same(const char *want, const char *have)
{
    return !want || (have && strcmp(want, have) == 0);
}

/* Commitments discount on-demand usage only; a scope field the subject cannot show (a type without a region label)
 * does not match, so a commitment is never applied where it may not hold. */
static bool covers(const ns_commitment *c, const ns_commit_subject *s)
{
    if (!s->capacity_type || strcmp(s->capacity_type, NS_CAPACITY_ON_DEMAND) != 0 || !s->instance_type)
        return false;
    if (c->instance_type && fnmatch(c->instance_type, s->instance_type, 0) != 0)
        return false;
    if (c->family && !same(c->family, label(s, c->family_label)))
        return false;
    return same(c->region, label(s, NS_LABEL_REGION)) && same(c->zone, s->zone);
}

/* What is left of u's commitment: instances, or dollars per hour. */
static double left(const ns_commit_usage *u)
{
    double l = u->c->amount - u->used;
    return l > 1e-9 ? l : 0;
}

/* The discounted price of one whole node of s under c. */
static double rate(const ns_commitment *c, const ns_commit_subject *s)
{
    return c->effective_price >= 0 ? c->effective_price : s->price_per_hour * (1 - c->discount);
}

/* The price of s under u with what u has left, and what it would consume. A spend commitment with less left than
 * the node's discounted rate buys that part at the discount; the rest of the node is paid at its own price. */
static double price_under(const ns_commit_usage *u, const ns_commit_subject *s, double *consumed)
{
    double r = rate(u->c, s);
    if (u->c->kind == NS_COMMIT_INSTANCES) {
        *consumed = 1;
        return r;
    }
    double spend = left(u) < r ? left(u) : r;
    *consumed = spend;
    return r > 0 ? spend + (1 - spend / r) * s->price_per_hour : 0;
}

/* The first commitment in declared order that covers s and has room, or NULL; *first_cover the first that covers s
 * at all. */
static ns_commit_usage *pick(const ns_commit_ledger *l, const ns_commit_subject *s, ns_commit_usage **first_cover)
{
    *first_cover = NULL;
    for (size_t i = 0; l && i < l->n; i++) {
        if (!covers(l->u[i].c, s))
            continue;
        if (!*first_cover)
            *first_cover = &l->u[i];
        /* An instance commitment has room for a whole instance or none. */
        if (l->u[i].c->kind == NS_COMMIT_INSTANCES ? left(&l->u[i]) >= 1 : left(&l->u[i]) > 0)
            return &l->u[i];
    }
    return NULL;
}

double ns_commit_ledger_price(const ns_commit_ledger *l, const ns_commit_subject *s)
{
    ns_commit_usage *first;
    ns_commit_usage *u = pick(l, s, &first);
    double consumed;
    return u ? price_under(u, s, &consumed) : s->price_per_hour;
}

double ns_commit_ledger_consume(ns_commit_ledger *l, const ns_commit_subject *s)
{
    ns_commit_usage *first;
    ns_commit_usage *u = pick(l, s, &first);
    if (!u) {
        if (first) {
            first->spilled_nodes++;
            first->spilled_per_hour += s->price_per_hour;
        }
        return s->price_per_hour;
    }
    double consumed;
    double price = price_under(u, s, &consumed);
    u->used += consumed;
    u->nodes++;
    /* The part of a node a spend commitment could not buy is paid on-demand: that part spills. */
    if (price > consumed && u->c->kind == NS_COMMIT_SPEND)
        u->spilled_per_hour += price - consumed;
    return price;
}
