/* Commitments in the engine (cost/commitments.h): the ledger of what the cluster's nodes already consume, and the
 * instance types priced with what is left, for provisioning rounds and launches. */
#include <stdlib.h>
#include <string.h>

#include "engine/engine_internal.h"
#include "errors/ns_error.h"
#include "model/labels.h"

/* A node's own price: its offering's in the listed instance types (any node class's), else the price it was
 * launched at. */
static double own_price(const ns_engine *e, const char *type, const char *zone, const char *ct,
                        const ns_labels *annotations)
{
    for (size_t s = 0; type && zone && ct && s < e->types.n; s++) {
        const ns_itype *t = ns_itype_set_find(&e->types.sets[s], type);
        for (size_t o = 0; t && o < t->n_offerings; o++)
            if (strcmp(t->offerings[o].zone, zone) == 0 && strcmp(t->offerings[o].capacity_type, ct) == 0)
                return t->offerings[o].price_per_hour;
    }
    const char *price = annotations ? ns_labels_get(annotations, NS_ANNOTATION_PRICE) : NULL;
    return price ? strtod(price, NULL) : 0;
}

static double consume(const ns_engine *e, ns_commit_ledger *l, const ns_meta *m)
{
    const char *type = ns_labels_get(&m->labels, NS_LABEL_INSTANCE_TYPE);
    const char *zone = ns_labels_get(&m->labels, NS_LABEL_ZONE);
    const char *ct = ns_labels_get(&m->labels, NS_LABEL_CAPACITY_TYPE);
    ns_commit_subject s = {.instance_type = type, .labels = m->labels.items, .n_labels = m->labels.n, .zone = zone,
                           .capacity_type = ct, .price_per_hour = own_price(e, type, zone, ct, &m->annotations)};
    return ns_commit_ledger_consume(l, &s);
}

static bool removed(const char *const *names, size_t n, const char *name)
{
    for (size_t i = 0; name && i < n; i++)
        if (strcmp(names[i], name) == 0)
            return true;
    return false;
}

int ns_engine_commit_ledger_without(const ns_engine *e, const char *const *removed_nodes, size_t n_removed,
                                    double *claim_prices, ns_commit_ledger **out)
{
    int rc = ns_commit_ledger_new(e->cfg.commitments, out);
    if (rc < 0)
        return rc;
    /* Launched NodeClaims first, in the cluster's order, then the Nodes no NodeClaim owns (static or unmanaged):
     * every running instance consumes once. */
    const ns_cluster *c = e->cluster;
    for (size_t i = 0; i < c->n_nodeclaims; i++) {
        const ns_nodeclaim *claim = c->nodeclaims[i];
        bool runs = ns_claim_launched(claim) && !removed(removed_nodes, n_removed, claim->node_name);
        double price = runs ? consume(e, *out, &claim->meta) : -1;
        if (claim_prices)
            claim_prices[i] = price;
    }
    for (size_t i = 0; i < c->n_nodes; i++)
        if (!ns_engine_claim_of_node(e, c->nodes[i]) && !removed(removed_nodes, n_removed, c->nodes[i]->meta.name))
            consume(e, *out, &c->nodes[i]->meta);
    return NS_OK;
}

int ns_engine_commit_ledger(const ns_engine *e, ns_commit_ledger **out)
{
    return ns_engine_commit_ledger_without(e, NULL, 0, NULL, out);
}

bool ns_engine_has_commitments(const ns_engine *e)
{
    return e->cfg.commitments && e->cfg.commitments->n > 0;
}

int ns_engine_commit_plan_begin(const ns_engine *e, const char *const *removed_nodes, size_t n_removed,
                                ns_engine_plan *p, const ns_itype_set *const **pool_types)
{
    *pool_types = e->types.pool_types;
    if (!ns_engine_has_commitments(e))
        return NS_OK;
    int rc = ns_engine_commit_ledger_without(e, removed_nodes, n_removed, NULL, &p->ledger);
    if (rc == NS_OK && !(p->priced = calloc(e->types.n ? e->types.n : 1, sizeof(*p->priced))))
        rc = NS_FAIL(NS_ERR_INTERNAL, "out of memory pricing %zu instance-type sets with commitments", e->types.n);
    for (size_t s = 0; rc == NS_OK && s < e->types.n; s++, p->n_priced++)
        rc = ns_commit_priced_set(p->ledger, &e->types.sets[s], &p->priced[s]);
    if (rc == NS_OK &&
        !(p->priced_pool_types = calloc(e->types.n_pools ? e->types.n_pools : 1, sizeof(*p->priced_pool_types))))
        rc = NS_FAIL(NS_ERR_INTERNAL, "out of memory pricing %zu NodePools with commitments", e->types.n_pools);
    /* A pool's set is one of e->types.sets: its priced copy has the same index. */
    for (size_t i = 0; rc == NS_OK && i < e->types.n_pools; i++)
        p->priced_pool_types[i] = e->types.pool_types[i] ? &p->priced[e->types.pool_types[i] - e->types.sets] : NULL;
    if (rc == NS_OK)
        *pool_types = p->priced_pool_types;
    return rc;
}

int ns_engine_commit_plan_end(const ns_engine *e, ns_engine_plan *p)
{
    return p->ledger ? ns_commit_ledger_play_round(p->ledger, e->types.pool_types, &p->result) : NS_OK;
}

void ns_engine_commit_plan_free(ns_engine_plan *p)
{
    for (size_t s = 0; p->priced && s < p->n_priced; s++)
        ns_commit_priced_set_free(&p->priced[s]);
    free(p->priced);
    free(p->priced_pool_types);
    ns_commit_ledger_free(p->ledger);
}

const ns_itype *ns_engine_commit_unpriced(const ns_engine *e, const ns_engine_plan *p, const ns_itype *t)
{
    for (size_t s = 0; p->priced && s < p->n_priced && s < e->types.n; s++)
        if (t >= p->priced[s].items && t < p->priced[s].items + p->priced[s].n &&
            (size_t)(t - p->priced[s].items) < e->types.sets[s].n)
            return &e->types.sets[s].items[t - p->priced[s].items];
    return t;
}

int ns_engine_commit_launch_set(const ns_engine *e, const ns_itype_set *set, ns_itype_set *priced)
{
    memset(priced, 0, sizeof(*priced));
    ns_commit_ledger *l = NULL;
    int rc = ns_engine_commit_ledger(e, &l);
    if (rc == NS_OK)
        rc = ns_commit_priced_set(l, set, priced);
    ns_commit_ledger_free(l);
    return rc;
}
