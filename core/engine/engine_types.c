/* Instance types per node class (listed at most once per clock reading), with unavailable offerings hidden. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "engine/engine_internal.h"
#include "errors/ns_error.h"
#include "log/ns_log.h"
#include "model/model_util.h"

/* ---- Instance types */

void ns_engine_types_free(ns_engine_types *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++) {
        ns_itype_set_free(&t->sets[i]);
        free(t->errors[i]);
    }
    free(t->sets);
    free(t->errors);
    free(t->owner);
    free(t->pool_types);
    free(t->pool_errors);
    free(t->pool_nodeclass);
    memset(t, 0, sizeof(*t));
    t->listed_in_step = -1;
}

static void apply_unavailable(const ns_engine *e, ns_itype_set *set)
{
    int64_t now = ns_clock_now_ms();
    for (size_t i = 0; i < set->n; i++)
        for (size_t o = 0; o < set->items[i].n_offerings; o++) {
            ns_itype_offering *of = &set->items[i].offerings[o];
            if (of->available &&
                ns_unavailable_has(&e->unavailable, set->items[i].name, of->zone, of->capacity_type, now))
                of->available = false;
        }
}

static long set_of(ns_engine *e, const ns_nodeclass_def *def)
{
    for (size_t s = 0; s < e->types.n; s++)
        if (e->types.owner[s] == def)
            return (long)s;
    size_t s = e->types.n;
    ns_engine_types *t = &e->types;
    t->owner[s] = def;
    memset(&t->sets[s], 0, sizeof(t->sets[s]));
    t->errors[s] = NULL;
    t->n++;
    if (ns_itype_set_load(e->plugin, &def->abi, &t->sets[s]) != NS_OK) {
        char buf[1200];
        snprintf(buf, sizeof(buf), "listing instance types for %s %s failed: %s", def->kind, def->meta.name,
                 ns_error_message());
        ns_log(NS_LOG_ERROR, "provisioner", "could not list instance types", "nodeclass", def->meta.name, "error",
               ns_error_message(), NULL);
        if (!(t->errors[s] = ns_strdup(buf)) || (!e->listing_error && !(e->listing_error = ns_strdup(buf))))
            return -1;
    } else {
        apply_unavailable(e, &t->sets[s]);
    }
    return (long)s;
}

int ns_engine_refresh_types(ns_engine *e)
{
    const ns_cluster *c = e->cluster;
    /* Once per step, not per clock reading: a scheduling plan points into these sets until the step's claims are
     * created, and a real clock moves during the step. */
    if (e->types.listed_in_step == e->step_seq && e->types.n_pools == c->n_nodepools)
        return NS_OK;
    ns_engine_types_free(&e->types);
    ns_engine_types *t = &e->types;
    size_t n = c->n_nodepools ? c->n_nodepools : 1;
    t->sets = calloc(n, sizeof(*t->sets));
    t->errors = calloc(n, sizeof(*t->errors));
    t->owner = calloc(n, sizeof(*t->owner));
    t->pool_types = calloc(n, sizeof(*t->pool_types));
    t->pool_errors = calloc(n, sizeof(*t->pool_errors));
    t->pool_nodeclass = calloc(n, sizeof(*t->pool_nodeclass));
    if (!t->sets || !t->errors || !t->owner || !t->pool_types || !t->pool_errors || !t->pool_nodeclass) {
        ns_engine_types_free(t);
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory listing instance types for %zu NodePools", n);
    }
    t->n_pools = c->n_nodepools;
    for (size_t p = 0; p < c->n_nodepools; p++) {
        const ns_nodepool *np = c->nodepools[p];
        const ns_nodeclass_def *def = ns_cluster_nodeclass_for(c, &np->nodeclass_ref);
        if (!def) {
            t->pool_errors[p] = "its node class is not in the cluster";
            continue;
        }
        long s = set_of(e, def);
        if (s < 0) {
            ns_engine_types_free(t);
            return NS_ERR_INTERNAL;
        }
        t->pool_nodeclass[p] = &def->abi;
        if (t->errors[s])
            t->pool_errors[p] = t->errors[s];
        else
            t->pool_types[p] = &t->sets[s];
    }
    t->listed_in_step = e->step_seq;
    return NS_OK;
}

double ns_engine_offering_price(const ns_engine *e, const char *nodeclass_kind, const char *nodeclass_name,
                                const char *type, const char *zone, const char *capacity_type)
{
    for (size_t s = 0; s < e->types.n; s++) {
        const ns_nodeclass_def *def = e->types.owner[s];
        if (e->types.errors[s] || strcmp(def->kind, nodeclass_kind) != 0 ||
            strcmp(def->meta.name, nodeclass_name) != 0)
            continue;
        const ns_itype *t = ns_itype_set_find(&e->types.sets[s], type);
        for (size_t o = 0; t && o < t->n_offerings; o++)
            if (strcmp(t->offerings[o].zone, zone) == 0 && strcmp(t->offerings[o].capacity_type, capacity_type) == 0)
                return t->offerings[o].price_per_hour;
    }
    return -1;
}

int ns_engine_mark_unavailable(ns_engine *e, const char *type, const char *zone, const char *capacity_type,
                               const char *why)
{
    int64_t now = ns_clock_now_ms();
    if (ns_unavailable_has(&e->unavailable, type, zone, capacity_type, now))
        return NS_OK;
    if (ns_unavailable_add(&e->unavailable, type, zone, capacity_type, now + e->cfg.unavailable_offering_ttl_ms) < 0)
        return NS_ERR_INTERNAL;
    for (size_t s = 0; s < e->types.n; s++)
        if (!e->types.errors[s])
            apply_unavailable(e, &e->types.sets[s]);
    char detail[256];
    snprintf(detail, sizeof(detail), "%s/%s/%s", type, zone, capacity_type);
    return ns_engine_record(e, NS_DECISION_OFFERING_UNAVAILABLE, NULL, why, NULL, NULL, NULL, detail);
}
