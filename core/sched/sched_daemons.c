/*
 * DaemonSet overhead per instance type, as Karpenter's buildDaemonOverheadGroups computes it: a DaemonSet counts on a
 * type of a pool only where its pod would run there (it tolerates the pool's taints, PreferNoSchedule always; one of
 * its required node-affinity terms, with its nodeSelector, is compatible with the pool's requirements and satisfied
 * by the type). Types with the same set of DaemonSets form one group: the group's summed requests come off their
 * allocatable, and its DaemonSets' host ports are taken on them.
 *
 * Karpenter removes the terms that failed from the shared DaemonSet pod while it walks the types, so a term that
 * failed on an earlier type is not tried on later ones; here every term is tried on every type (docs/simulate.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "model/labels.h"
#include "model/resources.h"
#include "model/taints.h"
#include "sched/sched_internal.h"
#include "sched/sched_pool_util.h"

/* One requirement set per required node-affinity term of a DaemonSet pod (one set when it has none), each with
 * whether the pool's requirements allow it. */
typedef struct ds_terms {
    ns_requirements *reqs;
    bool *pool_ok;
    uint64_t *pairs;
    size_t n;
} ds_terms;

static void ds_terms_free(ds_terms *t)
{
    for (size_t i = 0; t->reqs && i < t->n; i++)
        ns_requirements_free(&t->reqs[i]);
    free(t->reqs);
    free(t->pool_ok);
    free(t->pairs);
    memset(t, 0, sizeof(*t));
}

static int ds_terms_build(sched *s, const sched_pool *p, const ns_pod *tp, ds_terms *out)
{
    ns_compat_opts opts = {.allow_undefined_well_known = true, .extra_well_known = p->keys,
                           .n_extra_well_known = p->n_keys};
    size_t n = tp->affinity.n_node_required ? tp->affinity.n_node_required : 1;
    out->reqs = calloc(n, sizeof(*out->reqs));
    out->pool_ok = calloc(n, sizeof(*out->pool_ok));
    out->pairs = calloc(n, sizeof(*out->pairs));
    if (!out->reqs || !out->pool_ok || !out->pairs)
        return NS_FAIL(NS_ERR_INTERNAL, "NodePool %s: out of memory for DaemonSet %s/%s", p->np->meta.name,
                       tp->meta.namespace_, tp->meta.name);
    out->n = n;
    for (size_t i = 0; i < n; i++) {
        int rc = ns_pod_node_requirements(tp, tp->affinity.n_node_required ? (int)i : -1, -1, &out->reqs[i]);
        if (rc == NS_OK)
            rc = ns_zone_labels_rewrite(s->zone_labels, &out->reqs[i]);
        if (rc != NS_OK)
            return ns_error_prefix("NodePool %s, DaemonSet %s/%s: ", p->np->meta.name, tp->meta.namespace_,
                                   tp->meta.name);
        out->pool_ok[i] = ns_requirements_compatible(&p->reqs, &out->reqs[i], &opts, NULL, 0);
        out->pairs[i] = sched_pairs_for(s, &out->reqs[i]);
    }
    return NS_OK;
}

/* Marks in `on` (one bitset per DaemonSet, p->words each) the types each DaemonSet runs on. */
static int ds_compatibility(sched *s, const sched_pool *p, uint64_t *on)
{
    const ns_cluster *cl = s->cl;
    for (size_t d = 0; d < cl->n_daemonsets; d++) {
        const ns_pod *tp = cl->daemonsets[d]->template_pod;
        if (!tp || !ns_pod_tolerates(tp, p->np->taints, p->np->n_taints, NULL, 0,
                                     NS_TAINTS_IGNORE_PREFER_NO_SCHEDULE, NULL, 0))
            continue;
        ds_terms terms = {0};
        int rc = ds_terms_build(s, p, tp, &terms);
        for (size_t i = 0; rc == NS_OK && i < p->n_types; i++)
            for (size_t t = 0; t < terms.n; t++)
                if (terms.pool_ok[t] && (p->offers[i] & terms.pairs[t]) &&
                    sched_type_satisfies(p, p->types[i], &terms.reqs[t])) {
                    sched_bits_set(on + d * p->words, i);
                    break;
                }
        ds_terms_free(&terms);
        if (rc != NS_OK)
            return rc;
    }
    return NS_OK;
}

/* The group of type i: an existing one with the same DaemonSets, or a new one. */
static int ds_group_for(sched *s, sched_pool *p, const uint64_t *on, size_t i)
{
    const ns_cluster *cl = s->cl;
    for (size_t g = 0; g < p->n_ds_groups; g++) {
        size_t first = sched_bits_first(p->ds_groups[g].types, p->words);
        bool same = true;
        for (size_t d = 0; d < cl->n_daemonsets && same; d++)
            same = sched_bits_get(on + d * p->words, first) == sched_bits_get(on + d * p->words, i);
        if (same) {
            sched_bits_set(p->ds_groups[g].types, i);
            p->ds_group_of[i] = (uint32_t)g;
            return NS_OK;
        }
    }
    sched_ds_group *ng = realloc(p->ds_groups, (p->n_ds_groups + 1) * sizeof(*ng));
    if (!ng)
        return NS_FAIL(NS_ERR_INTERNAL, "NodePool %s: out of memory grouping DaemonSets", p->np->meta.name);
    p->ds_groups = ng;
    sched_ds_group *grp = &p->ds_groups[p->n_ds_groups++];
    memset(grp, 0, sizeof(*grp));
    grp->types = sched_arena_alloc(s, p->words * sizeof(uint64_t));
    if (!grp->types || sched_vec_init(s, &grp->overhead) != NS_OK)
        return NS_FAIL(NS_ERR_INTERNAL, "NodePool %s: out of memory grouping DaemonSets", p->np->meta.name);
    sched_bits_set(grp->types, i);
    p->ds_group_of[i] = (uint32_t)(p->n_ds_groups - 1);
    sched_vec req;
    if (sched_vec_init(s, &req) != NS_OK)
        return NS_FAIL(NS_ERR_INTERNAL, "NodePool %s: out of memory grouping DaemonSets", p->np->meta.name);
    for (size_t d = 0; d < cl->n_daemonsets; d++) {
        const ns_pod *tp = cl->daemonsets[d]->template_pod;
        if (!sched_bits_get(on + d * p->words, i))
            continue;
        sched_vec_from(s, &tp->requests, &req);
        for (size_t k = 0; k < s->n_dims; k++)
            grp->overhead.v[k] += req.v[k];
        if (tp->n_host_ports) {
            const ns_pod **np = realloc(grp->port_pods, (grp->n_port_pods + 1) * sizeof(*np));
            if (!np)
                return NS_FAIL(NS_ERR_INTERNAL, "NodePool %s: out of memory recording DaemonSet host ports",
                               p->np->meta.name);
            (grp->port_pods = np)[grp->n_port_pods++] = tp;
        }
    }
    return NS_OK;
}

int sched_daemons_build(sched *s, sched_pool *p)
{
    p->ds_group_of = calloc(p->n_types ? p->n_types : 1, sizeof(*p->ds_group_of));
    uint64_t *on = calloc((s->cl->n_daemonsets ? s->cl->n_daemonsets : 1) * p->words, sizeof(uint64_t));
    int rc = p->ds_group_of && on ? NS_OK
                                  : NS_FAIL(NS_ERR_INTERNAL, "NodePool %s: out of memory for DaemonSet overhead",
                                            p->np->meta.name);
    if (rc == NS_OK)
        rc = ds_compatibility(s, p, on);
    for (size_t i = 0; rc == NS_OK && i < p->n_types; i++) {
        rc = ds_group_for(s, p, on, i);
        const sched_vec *o = rc == NS_OK ? &p->ds_groups[p->ds_group_of[i]].overhead : NULL;
        for (size_t d = 0; o && d < s->n_dims; d++)
            p->alloc[i].v[d] -= o->v[d];
    }
    free(on);
    return rc;
}

void sched_daemons_free(sched_pool *p)
{
    for (size_t g = 0; p->ds_groups && g < p->n_ds_groups; g++)
        free(p->ds_groups[g].port_pods);
    free(p->ds_groups);
    free(p->ds_group_of);
    p->ds_groups = NULL;
    p->ds_group_of = NULL;
    p->n_ds_groups = 0;
}

const ns_pod *sched_daemons_port_block(const sched_pool *p, const ns_pod *pod, uint64_t *types)
{
    const ns_pod *blocker = NULL;
    for (size_t g = 0; pod->n_host_ports && g < p->n_ds_groups; g++) {
        const sched_ds_group *grp = &p->ds_groups[g];
        for (size_t k = 0; k < grp->n_port_pods; k++) {
            if (!sched_ports_conflict(pod, grp->port_pods[k]))
                continue;
            for (size_t w = 0; w < p->words; w++)
                types[w] &= ~grp->types[w];
            blocker = blocker ? blocker : grp->port_pods[k];
            break;
        }
    }
    return blocker;
}

int sched_daemons_claim_overhead(sched *s, const sched_claim *c, ns_res *out)
{
    const sched_pool *p = &s->pools[c->pool];
    sched_vec min;
    if (sched_vec_init(s, &min) != NS_OK)
        return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory for a claim's DaemonSet overhead");
    bool any = false;
    for (size_t g = 0; g < p->n_ds_groups; g++) {
        const sched_ds_group *grp = &p->ds_groups[g];
        bool used = false;
        for (size_t w = 0; w < p->words && !used; w++)
            used = (c->types[w] & grp->types[w]) != 0;
        for (size_t d = 0; used && d < s->n_dims; d++)
            min.v[d] = !any || grp->overhead.v[d] < min.v[d] ? grp->overhead.v[d] : min.v[d];
        any = any || used;
    }
    return sched_vec_to(s, &min, out);
}
