/* Prices around the scheduler (commitments.h): instance types priced before a round, the round's claims re-priced
 * in order after it. The scheduler's algorithm is untouched. */
#include <stdlib.h>
#include <string.h>

#include "cost/commitments.h"
#include "errors/ns_error.h"

static ns_commit_subject subject(const ns_itype *t, const ns_itype_offering *of)
{
    return (ns_commit_subject){.instance_type = t->name, .labels = t->labels, .n_labels = t->n_labels,
                               .zone = of->zone, .capacity_type = of->capacity_type,
                               .price_per_hour = of->price_per_hour};
}

int ns_commit_priced_set(const ns_commit_ledger *l, const ns_itype_set *set, ns_itype_set *out)
{
    memset(out, 0, sizeof(*out));
    out->items = calloc(set->n ? set->n : 1, sizeof(*out->items));
    if (!out->items)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory pricing %zu instance types with commitments", set->n);
    for (size_t i = 0; i < set->n; i++) {
        const ns_itype *t = &set->items[i];
        ns_itype *p = &out->items[out->n++];
        *p = *t;
        p->offerings = malloc((t->n_offerings ? t->n_offerings : 1) * sizeof(*p->offerings));
        if (!p->offerings) {
            p->n_offerings = 0;
            ns_commit_priced_set_free(out);
            return NS_FAIL(NS_ERR_INTERNAL, "out of memory pricing instance type %s with commitments", t->name);
        }
        for (size_t o = 0; o < t->n_offerings; o++) {
            p->offerings[o] = t->offerings[o];
            ns_commit_subject s = subject(t, &t->offerings[o]);
            p->offerings[o].price_per_hour = ns_commit_ledger_price(l, &s);
        }
    }
    return NS_OK;
}

void ns_commit_priced_set_free(ns_itype_set *s)
{
    if (!s)
        return;
    for (size_t i = 0; s->items && i < s->n; i++)
        free(s->items[i].offerings);
    free(s->items);
    s->items = NULL;
    s->n = 0;
}

/* The offering an option stands for in the unpriced set, or NULL. */
static const ns_itype_offering *own_offering(const ns_itype *t, const ns_sched_option *o)
{
    for (size_t i = 0; t && i < t->n_offerings; i++)
        if (strcmp(t->offerings[i].zone, o->zone) == 0 && strcmp(t->offerings[i].capacity_type, o->capacity_type) == 0)
            return &t->offerings[i];
    return NULL;
}

typedef struct ranked {
    ns_sched_option o;
    size_t order;
} ranked;

static int ranked_cmp(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->o.price_per_hour != y->o.price_per_hour)
        return x->o.price_per_hour < y->o.price_per_hour ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Re-prices claim c's options with what the ledger has left into a list of its own, cheapest first, then lets the
 * cheapest consume. */
static int play_claim(ns_commit_ledger *l, const ns_itype_set *set, ns_sched_claim *c, ns_sched_option **list)
{
    ranked *r = malloc((c->n_options ? c->n_options : 1) * sizeof(*r));
    *list = malloc((c->n_options ? c->n_options : 1) * sizeof(**list));
    if (!r || !*list) {
        free(r);
        free(*list);
        *list = NULL;
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory pricing a claim's %zu launch options", c->n_options);
    }
    for (size_t i = 0; i < c->n_options; i++) {
        r[i] = (ranked){.o = c->options[i], .order = i};
        const ns_itype *t = set ? ns_itype_set_find(set, c->options[i].type->name) : NULL;
        const ns_itype_offering *of = own_offering(t, &c->options[i]);
        if (!of)
            continue;
        ns_commit_subject s = subject(t, of);
        r[i].o.price_per_hour = ns_commit_ledger_price(l, &s);
    }
    qsort(r, c->n_options, sizeof(*r), ranked_cmp);
    for (size_t i = 0; i < c->n_options; i++)
        (*list)[i] = r[i].o;
    if (c->n_options) {
        const ns_itype *t = set ? ns_itype_set_find(set, r[0].o.type->name) : NULL;
        const ns_itype_offering *of = own_offering(t, &r[0].o);
        if (of) {
            ns_commit_subject chosen = subject(t, of);
            ns_commit_ledger_consume(l, &chosen);
        }
    }
    free(r);
    c->options = *list;
    return NS_OK;
}

int ns_commit_ledger_play_round(ns_commit_ledger *l, const ns_itype_set *const *pool_types, ns_sched_result *r)
{
    if (ns_commit_ledger_count(l) == 0 || r->n_claims == 0)
        return NS_OK;
    ns_sched_option **lists = realloc(r->option_lists, (r->n_option_lists + r->n_claims) * sizeof(*lists));
    if (!lists)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory pricing %zu claims with commitments", r->n_claims);
    r->option_lists = lists;
    int rc = NS_OK;
    for (size_t i = 0; rc == NS_OK && i < r->n_claims; i++) {
        ns_sched_claim *c = &r->claims[i];
        ns_sched_option *list = NULL;
        rc = play_claim(l, pool_types[c->nodepool], c, &list);
        if (list)
            r->option_lists[r->n_option_lists++] = list;
    }
    return rc;
}
