/*
 * NodePool limits at the start of a round, as Karpenter's scheduler computes them (updateRemainingResources over the
 * cluster state's active nodes): every Node of the pool, and every NodeClaim of the pool that has no Node yet,
 * uses its capacity and one node. An object being deleted is not counted (Karpenter passes nodes.Active(), without
 * those marked for deletion). `limits.nodes` is Karpenter's resources.Node: each instance type counts as one node, so
 * a pool whose node count reached its limit offers no type.
 */
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "model/labels.h"
#include "sched/sched_internal.h"

#define NODES_RESOURCE "nodes"

static long find_nodes_dim(const sched *s, const sched_pool *p)
{
    for (size_t d = SCHED_EXT0; d < s->n_dims; d++)
        if (p->limited[d] && strcmp(s->ext_names[d - SCHED_EXT0], NODES_RESOURCE) == 0)
            return (long)d;
    return -1;
}

static void charge(const sched *s, sched_pool *p, const ns_res *capacity, sched_vec *cap)
{
    sched_vec_from(s, capacity, cap);
    for (size_t d = 0; d < s->n_dims; d++)
        p->remaining.v[d] -= cap->v[d];
    if (p->nodes_dim >= 0)
        p->remaining.v[p->nodes_dim] -= 1;
}

static bool in_pool(const sched_pool *p, const ns_meta *meta)
{
    const char *pool = ns_labels_get(&meta->labels, NS_LABEL_NODEPOOL);
    return pool && strcmp(pool, p->np->meta.name) == 0 && meta->deletion_ms == 0;
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The Nodes' provider IDs and names, sorted, to tell which NodeClaims have a Node. NULL when out of memory. */
static const char **node_keys(const ns_cluster *cl, size_t *n)
{
    const char **keys = malloc((2 * cl->n_nodes + 1) * sizeof(*keys));
    *n = 0;
    for (size_t i = 0; keys && i < cl->n_nodes; i++) {
        if (cl->nodes[i]->provider_id)
            keys[(*n)++] = cl->nodes[i]->provider_id;
        if (cl->nodes[i]->meta.name)
            keys[(*n)++] = cl->nodes[i]->meta.name;
    }
    if (keys)
        qsort(keys, *n, sizeof(*keys), str_cmp);
    return keys;
}

static bool has_node(const char **keys, size_t n, const ns_nodeclaim *c)
{
    return (c->provider_id && bsearch(&c->provider_id, keys, n, sizeof(*keys), str_cmp)) ||
           (c->node_name && bsearch(&c->node_name, keys, n, sizeof(*keys), str_cmp));
}

int sched_pool_limits(sched *s, sched_pool *p)
{
    const ns_resource_limits *l = &p->np->limits;
    const ns_cluster *cl = s->cl;
    sched_vec cap;
    p->limited = sched_arena_alloc(s, s->n_dims * sizeof(bool));
    if (!p->limited || sched_vec_init(s, &p->limit) != NS_OK || sched_vec_init(s, &p->remaining) != NS_OK ||
        sched_vec_init(s, &cap) != NS_OK)
        return NS_FAIL(NS_ERR_INTERNAL, "NodePool %s: out of memory for its limits", p->np->meta.name);
    sched_vec_from(s, &l->max, &p->limit);
    sched_vec_from(s, &l->max, &p->remaining);
    p->limited[SCHED_CPU] = l->cpu;
    p->limited[SCHED_MEM] = l->memory;
    p->limited[SCHED_PODS] = l->pods;
    p->limited[SCHED_EPH] = l->ephemeral_storage;
    for (uint32_t i = 0; i < l->max.n_ext; i++)
        for (size_t d = SCHED_EXT0; d < s->n_dims; d++)
            if (s->ext_names[d - SCHED_EXT0] == l->max.ext[i].name)
                p->limited[d] = true;
    for (size_t d = 0; d < s->n_dims; d++)
        p->has_limits = p->has_limits || p->limited[d];
    p->nodes_dim = find_nodes_dim(s, p);
    for (size_t i = 0; p->nodes_dim >= 0 && i < p->n_types; i++)
        p->capacity[i].v[p->nodes_dim] = 1;
    if (!p->has_limits)
        return NS_OK;
    for (size_t i = 0; i < cl->n_nodes; i++)
        if (in_pool(p, &cl->nodes[i]->meta))
            charge(s, p, &cl->nodes[i]->capacity, &cap);
    size_t n_keys;
    const char **keys = node_keys(cl, &n_keys);
    if (!keys)
        return NS_FAIL(NS_ERR_INTERNAL, "NodePool %s: out of memory matching NodeClaims to Nodes", p->np->meta.name);
    for (size_t i = 0; i < cl->n_nodeclaims; i++)
        if (in_pool(p, &cl->nodeclaims[i]->meta) && !has_node(keys, n_keys, cl->nodeclaims[i]))
            charge(s, p, &cl->nodeclaims[i]->capacity, &cap);
    free(keys);
    return NS_OK;
}

void sched_pool_types_within(const sched *s, const sched_pool *p, const sched_vec *remaining, uint64_t *out)
{
    memset(out, 0, p->words * sizeof(uint64_t));
    for (size_t i = 0; i < p->n_types; i++) {
        bool fits = true;
        for (size_t d = 0; d < s->n_dims && fits; d++)
            fits = !p->limited[d] || p->capacity[i].v[d] <= remaining->v[d];
        if (fits)
            sched_bits_set(out, i);
    }
}

void sched_pool_recompute_limits(sched *s, sched_pool *p)
{
    sched_pool_types_within(s, p, &p->remaining, p->in_limits);
}
