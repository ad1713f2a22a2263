#include "engine/launch_request.h"

#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "model/labels.h"
#include "model/resources.h"
#include "sched/sched.h"

static const ns_selector_req *req_in(const ns_nodeclaim *claim, const char *key)
{
    for (size_t i = 0; i < claim->n_requirements; i++)
        if (strcmp(claim->requirements[i].key, key) == 0 && claim->requirements[i].op == NS_OP_IN)
            return &claim->requirements[i];
    return NULL;
}

static bool allows(const ns_selector_req *r, const char *value)
{
    for (size_t i = 0; r && i < r->n_values; i++)
        if (strcmp(r->values[i], value) == 0)
            return true;
    return !r;
}

typedef struct ranked {
    ns_launch_choice c;
    size_t order;
} ranked;

static int ranked_cmp(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->c.opt.price_per_hour != y->c.opt.price_per_hour)
        return x->c.opt.price_per_hour < y->c.opt.price_per_hour ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Keeps the offerings of the first NS_SCHED_MAX_LAUNCH_TYPES distinct types met in price order. */
static size_t cut_types(ranked *r, size_t n)
{
    const ns_itype *kept[NS_SCHED_MAX_LAUNCH_TYPES];
    size_t n_kept = 0, k = 0;
    for (size_t i = 0; i < n; i++) {
        bool known = false;
        for (size_t j = 0; j < n_kept && !known; j++)
            known = kept[j] == r[i].c.type;
        if (!known && n_kept == NS_SCHED_MAX_LAUNCH_TYPES)
            continue;
        if (!known)
            kept[n_kept++] = r[i].c.type;
        r[k++] = r[i];
    }
    return k;
}

int ns_launch_options(const ns_itype_set *set, const ns_nodeclaim *claim, const ns_unavailable_cache *unavailable,
                      int64_t now_ms, ns_launch_choice **out, size_t *n)
{
    const ns_selector_req *types = req_in(claim, NS_LABEL_INSTANCE_TYPE);
    const ns_selector_req *zones = req_in(claim, NS_LABEL_ZONE);
    const ns_selector_req *cts = req_in(claim, NS_LABEL_CAPACITY_TYPE);
    size_t cap = 0;
    *out = NULL;
    *n = 0;
    for (size_t v = 0; types && v < types->n_values; v++) {
        const ns_itype *t = ns_itype_set_find(set, types->values[v]);
        cap += t ? t->n_offerings : 0;
    }
    ranked *r = malloc((cap ? cap : 1) * sizeof(*r));
    if (!r)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory listing the launch options of nodeclaim %s", claim->meta.name);
    size_t k = 0;
    for (size_t v = 0; types && v < types->n_values; v++) {
        const ns_itype *t = ns_itype_set_find(set, types->values[v]);
        if (!t || !ns_res_fit(&claim->requests, &t->allocatable, NULL, 0))
            continue;
        for (size_t o = 0; o < t->n_offerings; o++) {
            const ns_itype_offering *of = &t->offerings[o];
            if (!of->available || !allows(zones, of->zone) || !allows(cts, of->capacity_type) ||
                (unavailable && ns_unavailable_has(unavailable, t->name, of->zone, of->capacity_type, now_ms)))
                continue;
            r[k].c.type = t;
            r[k].c.opt = (ns_launch_option){.struct_size = sizeof(ns_launch_option), .instance_type = t->name,
                                            .zone = of->zone, .capacity_type = of->capacity_type,
                                            .price_per_hour = of->price_per_hour};
            r[k].order = k;
            k++;
        }
    }
    qsort(r, k, sizeof(*r), ranked_cmp);
    k = cut_types(r, k);
    ns_launch_choice *c = malloc((k ? k : 1) * sizeof(*c));
    for (size_t i = 0; c && i < k; i++)
        c[i] = r[i].c;
    free(r);
    if (!c)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory listing the launch options of nodeclaim %s", claim->meta.name);
    *out = c;
    *n = k;
    return NS_OK;
}

void ns_launch_request_for(const ns_nodeclaim *claim, const char *cluster_name, const ns_nodeclass *nodeclass,
                           const ns_launch_option *opts, size_t n_opts, ns_launch_request *req)
{
    const char *pool = ns_labels_get(&claim->meta.labels, NS_LABEL_NODEPOOL);
    *req = (ns_launch_request){
        .struct_size = sizeof(*req),
        .cluster_name = cluster_name,
        .nodeclaim_name = claim->meta.name,
        .nodepool_name = pool ? pool : "",
        .client_token = claim->meta.name,
        .nodeclass = nodeclass,
        .options = opts,
        .n_options = n_opts,
        .labels = claim->meta.labels.items,
        .n_labels = claim->meta.labels.n,
        .taints = claim->taints,
        .n_taints = claim->n_taints,
        .startup_taints = claim->startup_taints,
        .n_startup_taints = claim->n_startup_taints,
    };
}
