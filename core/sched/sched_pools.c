/*
 * Per-NodePool instance-type tables: the types the pool's requirements allow, sorted cheapest first, with their
 * allocatable resources after the pool's kubelet settings (sched_kubelet.h) and the DaemonSet pods that would run on
 * each (sched_daemons.c), their available offerings as a pair mask, and the pool's remaining limits.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "model/labels.h"
#include "model/resources.h"
#include "sched/sched_internal.h"
#include "sched/sched_kubelet.h"
#include "sched/sched_pool_index.h"
#include "sched/sched_pool_util.h"

typedef struct type_rank {
    const ns_itype *type;
    double price;
    uint64_t offers;
} type_rank;

static int rank_cmp(const void *a, const void *b)
{
    const type_rank *x = a, *y = b;
    if (x->price != y->price)
        return x->price < y->price ? -1 : 1;
    return strcmp(x->type->name, y->type->name);
}

/* Available offerings of a type as pairs, and the cheapest price among those in `allowed`. */
static uint64_t type_offers(const sched *s, const ns_itype *t, uint64_t allowed, double *cheapest)
{
    uint64_t offers = 0;
    *cheapest = INFINITY;
    for (size_t i = 0; i < t->n_offerings; i++) {
        const ns_itype_offering *o = &t->offerings[i];
        int z = sched_zone_index(s, o->zone), c = sched_ct_index(o->capacity_type);
        if (!o->available || z < 0 || c < 0)
            continue;
        uint64_t bit = UINT64_C(1) << (z * SCHED_N_CT + c);
        offers |= bit;
        if ((bit & allowed) && o->price_per_hour < *cheapest)
            *cheapest = o->price_per_hour;
    }
    return offers;
}

static int pool_types(sched *s, sched_pool *p, const ns_itype_set *set)
{
    type_rank *ranks = calloc(set->n ? set->n : 1, sizeof(*ranks));
    if (!ranks)
        return NS_FAIL(NS_ERR_INTERNAL, "NodePool %s: out of memory ranking %zu instance types", p->np->meta.name,
                       set->n);
    size_t n = 0;
    for (size_t i = 0; i < set->n; i++) {
        const ns_itype *t = &set->items[i];
        double price;
        uint64_t offers = type_offers(s, t, p->pairs, &price);
        if (!(offers & p->pairs) || !sched_type_satisfies(p, t, &p->reqs))
            continue;
        ranks[n++] = (type_rank){t, price, offers};
    }
    qsort(ranks, n, sizeof(*ranks), rank_cmp);
    p->n_types = n;
    p->words = sched_bits_words(n ? n : 1);
    p->types = calloc(n ? n : 1, sizeof(*p->types));
    p->alloc = calloc(n ? n : 1, sizeof(*p->alloc));
    p->capacity = calloc(n ? n : 1, sizeof(*p->capacity));
    p->offers = calloc(n ? n : 1, sizeof(*p->offers));
    p->price = calloc(n ? n : 1, sizeof(*p->price));
    p->in_limits = calloc(p->words, sizeof(uint64_t));
    p->offer_pair = calloc(n ? n : 1, sizeof(*p->offer_pair));
    if (!p->types || !p->alloc || !p->capacity || !p->offers || !p->price || !p->in_limits || !p->offer_pair) {
        free(ranks);
        return NS_FAIL(NS_ERR_INTERNAL, "NodePool %s: out of memory for %zu instance types", p->np->meta.name, n);
    }
    const ns_kubelet_config *kubelet = sched_kubelet_applies(s->cl, p->np) ? &p->np->kubelet : NULL;
    for (size_t i = 0; i < n; i++) {
        p->types[i] = ranks[i].type;
        p->offers[i] = ranks[i].offers;
        p->price[i] = ranks[i].price;
        const ns_itype *t = ranks[i].type;
        if (!(p->offer_pair[i] = malloc((t->n_offerings ? t->n_offerings : 1) * sizeof(int16_t)))) {
            free(ranks);
            return NS_FAIL(NS_ERR_INTERNAL, "NodePool %s: out of memory for offerings", p->np->meta.name);
        }
        for (size_t o = 0; o < t->n_offerings; o++) {
            int z = sched_zone_index(s, t->offerings[o].zone), c = sched_ct_index(t->offerings[o].capacity_type);
            p->offer_pair[i][o] = (int16_t)(t->offerings[o].available && z >= 0 && c >= 0 ? z * SCHED_N_CT + c : -1);
        }
        if (sched_vec_init(s, &p->alloc[i]) != NS_OK || sched_vec_init(s, &p->capacity[i]) != NS_OK) {
            free(ranks);
            return ns_error_prefix("NodePool %s: ", p->np->meta.name);
        }
        sched_kubelet_resources(s, ranks[i].type, kubelet, &p->alloc[i], &p->capacity[i]);
    }
    free(ranks);
    if (n == 0 && !p->unusable) {
        char buf[512];
        snprintf(buf, sizeof(buf), "no instance type of the node class satisfies the NodePool's requirements (%s)",
                 ns_requirements_format(&p->reqs, (char[400]){0}, 400));
        p->unusable = strdup(buf);
    }
    int rc = sched_daemons_build(s, p);
    if (rc == NS_OK)
        rc = sched_pool_limits(s, p);
    if (rc != NS_OK)
        return rc;
    sched_pool_recompute_limits(s, p);
    return sched_pool_index_build(s, p);
}

static int pool_prio_cmp(const void *a, const void *b, void *ctx)
{
    const sched *s = ctx;
    const ns_nodepool *x = s->cl->nodepools[*(const size_t *)a], *y = s->cl->nodepools[*(const size_t *)b];
    return ns_nodepool_cmp_priority(&x, &y);
}

int sched_pools_build(sched *s)
{
    const ns_cluster *cl = s->cl;
    s->n_pools = cl->n_nodepools;
    s->pools = calloc(s->n_pools ? s->n_pools : 1, sizeof(*s->pools));
    s->pool_order = calloc(s->n_pools ? s->n_pools : 1, sizeof(*s->pool_order));
    if (s->in->pool_types && ns_zone_labels_new(s->in->pool_types, s->n_pools, &s->zone_labels) != NS_OK)
        return ns_error_prefix("scheduling: ");
    if (!s->pools || !s->pool_order)
        return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory for %zu NodePools", s->n_pools);
    for (size_t i = 0; i < s->n_pools; i++) {
        sched_pool *p = &s->pools[i];
        const ns_itype_set *set = s->in->pool_types ? s->in->pool_types[i] : NULL;
        p->np = cl->nodepools[i];
        p->index = i;
        s->pool_order[i] = i;
        for (size_t t = 0; t < p->np->n_taints; t++)
            if (p->np->taints[t].effect && strcmp(p->np->taints[t].effect, NS_EFFECT_PREFER_NO_SCHEDULE) == 0)
                s->any_prefer_no_schedule = true;
        int rc = ns_nodepool_requirements(p->np, &p->reqs);
        if (rc == NS_OK)
            rc = ns_zone_labels_rewrite(s->zone_labels, &p->reqs);
        if (rc == NS_OK)
            rc = sched_pool_keys(p, set);
        if (rc != NS_OK)
            return rc;
        p->pairs = sched_pairs_for(s, &p->reqs);
        if (!set) {
            const char *why = s->in->pool_errors ? s->in->pool_errors[i] : NULL;
            p->unusable = strdup(why ? why : "no instance types were loaded for its node class");
        }
        if ((rc = pool_types(s, p, set ? set : &(ns_itype_set){NULL, 0})) != NS_OK)
            return rc;
    }
    qsort_r(s->pool_order, s->n_pools, sizeof(size_t), pool_prio_cmp, s);
    for (size_t i = 0; i < s->n_pools; i++)
        s->max_types = s->pools[i].n_types > s->max_types ? s->pools[i].n_types : s->max_types;
    s->max_words = sched_bits_words(s->max_types ? s->max_types : 1);
    s->scratch = calloc(s->max_words, sizeof(uint64_t));
    s->keep = calloc(s->max_words, sizeof(uint64_t));
    s->pairs_scratch = calloc(s->max_words, sizeof(uint64_t));
    s->fit = calloc(s->max_types ? s->max_types : 1, sizeof(int64_t));
    if (!s->scratch || !s->keep || !s->pairs_scratch || !s->fit)
        return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory for %zu instance types", s->max_types);
    return NS_OK;
}

void sched_pools_free(sched *s)
{
    for (size_t i = 0; s->pools && i < s->n_pools; i++) {
        sched_pool *p = &s->pools[i];
        ns_requirements_free(&p->reqs);
        free(p->types);
        free(p->alloc);
        free(p->capacity);
        free(p->offers);
        free(p->price);
        for (size_t t = 0; p->offer_pair && t < p->n_types; t++)
            free(p->offer_pair[t]);
        free(p->offer_pair);
        free(p->in_limits);
        free(p->keys);
        free(p->unusable);
        sched_daemons_free(p);
        sched_pool_index_free(p);
    }
    free(s->pools);
    ns_zone_labels_free(s->zone_labels);
    s->zone_labels = NULL;
    free(s->pool_order);
    free(s->scratch);
    free(s->keep);
    free(s->pairs_scratch);
    free(s->fit);
}
