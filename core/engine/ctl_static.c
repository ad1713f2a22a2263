/*
 * Static capacity: Karpenter's static.provisioning and static.deprovisioning controllers (pkg/controllers/static),
 * behind the StaticCapacity gate (cfg.static_capacity). A NodePool with spec.replicas keeps that many NodeClaims,
 * whatever the pods ask for; the dynamic provisioner never launches into it (sched leaves static pools out).
 *
 * A pool's claims are counted as Karpenter's NodePoolState counts them: deleting, pending disruption (a disruption
 * in progress marked them: ns_engine_disrupt's annotations), and active (the rest, launched or not).
 * - Scale up, when active + pending disruption < replicas: replicas - active new claims from the template, as many
 *   as limits.nodes leaves room for (active + deleting + pending disruption count against it).
 * - Scale down, when active > replicas: the excess is deleted, first claims not launched yet, then claims whose node
 *   is empty (no pod, or DaemonSet pods only and none under an active do-not-disrupt), then the others: those
 *   without an active do-not-disrupt pod first, each group by disruption cost (rescheduling cost times lifetime
 *   remaining), cheapest first. Claims pending disruption are left alone (a replacement is on its way).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "engine/disruption_cost.h"
#include "engine/engine_internal.h"
#include "errors/ns_error.h"
#include "log/ns_log.h"
#include "model/labels.h"

static bool in_pool(const ns_nodeclaim *claim, const ns_nodepool *np)
{
    const char *pool = ns_labels_get(&claim->meta.labels, NS_LABEL_NODEPOOL);
    return pool && strcmp(pool, np->meta.name) == 0;
}

static bool pending_disruption(const ns_nodeclaim *claim)
{
    return !ns_claim_deleting(claim) && ns_labels_get(&claim->meta.annotations, NS_ANNOTATION_DISRUPTION_METHOD);
}

void ns_engine_static_count(const ns_cluster *c, const ns_nodepool *np, ns_static_count *n)
{
    memset(n, 0, sizeof(*n));
    for (size_t i = 0; i < c->n_nodeclaims; i++) {
        const ns_nodeclaim *claim = c->nodeclaims[i];
        if (!in_pool(claim, np))
            continue;
        if (ns_claim_deleting(claim))
            n->deleting++;
        else if (pending_disruption(claim))
            n->pending++;
        else
            n->active++;
    }
}

int64_t ns_engine_nodes_limit(const ns_nodepool *np)
{
    for (uint32_t i = 0; i < np->limits.max.n_ext; i++)
        if (strcmp(np->limits.max.ext[i].name, "nodes") == 0)
            return np->limits.max.ext[i].value;
    return INT64_MAX;
}

static int record_scale(ns_engine *e, ns_decision_kind kind, const ns_nodepool *np, int64_t current, int64_t count,
                        const char *claims)
{
    char reason[96], detail[NS_NAME_MAX + 64];
    snprintf(reason, sizeof(reason), "current %lld, desired %lld", (long long)current, (long long)np->replicas);
    snprintf(detail, sizeof(detail), "nodepool %s, %s %lld", np->meta.name,
             kind == NS_DECISION_STATIC_SCALE_UP ? "provision-count" : "deprovision-count", (long long)count);
    return ns_engine_record(e, kind, NULL, reason, NULL, claims, NULL, detail);
}

static int scale_up(ns_engine *e, size_t pool, const ns_static_count *n)
{
    const ns_nodepool *np = e->cluster->nodepools[pool];
    if (n->active + n->pending >= np->replicas)
        return NS_OK;
    int64_t room = ns_engine_nodes_limit(np) - (n->active + n->deleting + n->pending);
    int64_t count = np->replicas - n->active < room ? np->replicas - n->active : room;
    if (count <= 0) {
        ns_log(NS_LOG_DEBUG, "static.provisioning", "nodepool node limit reached", "NodePool", np->meta.name, NULL);
        return NS_OK;
    }
    int rc = ns_engine_refresh_types(e);
    if (rc < 0)
        return rc;
    ns_sched_input in = {.cluster = e->cluster, .pool_types = e->types.pool_types,
                         .pool_errors = e->types.pool_errors, .min_values_policy = e->cfg.min_values_policy,
                         .preference_policy = e->cfg.preference_policy,
                         .default_spread = e->cfg.default_spread, .n_default_spread = e->cfg.n_default_spread};
    ns_sched_result res;
    if ((rc = ns_sched_static_claims(&in, pool, (size_t)count, &res)) < 0) {
        if (rc == NS_ERR_INTERNAL)
            return rc;
        /* Karpenter's reconcile fails and is retried; the pool's claims wait for instance types it can use. */
        ns_log(NS_LOG_ERROR, "static.provisioning", "provisioning nodeclaims to satisfy replica count",
               "NodePool", np->meta.name, "error", ns_error_message(), NULL);
        return NS_OK;
    }
    if ((rc = record_scale(e, NS_DECISION_STATIC_SCALE_UP, np, n->active, count, NULL)) == NS_OK)
        for (size_t i = 0; rc == NS_OK && i < res.n_claims && (rc = ns_engine_check_stop(e)) == NS_OK; i++)
            rc = ns_engine_create_claim(e, &res.claims[i], true, NULL);
    ns_sched_result_free(&res);
    return rc;
}

/* A resolved candidate of scale-down: its claim's name, and where it goes in the order. */
typedef struct candidate {
    char name[NS_NAME_MAX];
    bool empty, do_not_disrupt;
    double cost;
} candidate;

static int candidate_cmp(const void *a, const void *b)
{
    const candidate *x = a, *y = b;
    if (x->empty != y->empty)
        return x->empty ? -1 : 1;
    if (x->do_not_disrupt != y->do_not_disrupt)
        return x->do_not_disrupt ? 1 : -1;
    if (x->cost != y->cost)
        return x->cost < y->cost ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int rank_claim(const ns_engine *e, const ns_nodeclaim *claim, int64_t now, candidate *out)
{
    const ns_node *node = ns_engine_node_of_claim(e, claim);
    ns_pod **pods = NULL;
    size_t n = 0;
    int rc = node ? ns_engine_pods_on_node(e, node->meta.name, &pods, &n) : NS_OK;
    if (rc < 0)
        return rc;
    bool daemons_only = true;
    out->do_not_disrupt = false;
    for (size_t i = 0; i < n; i++) {
        daemons_only = daemons_only && ns_pod_owned_by(pods[i], "DaemonSet");
        out->do_not_disrupt = out->do_not_disrupt || ns_pod_do_not_disrupt(pods[i], now);
    }
    snprintf(out->name, sizeof(out->name), "%s", claim->meta.name);
    out->empty = daemons_only && !out->do_not_disrupt;
    out->cost = ns_disruption_rescheduling_cost((const ns_pod *const *)pods, n) *
                ns_disruption_lifetime_remaining(now, claim->meta.creation_ms, claim->expire_after_ms);
    free(pods);
    return NS_OK;
}

/* The pool's claims scale-down may take, in its order: not launched first, then resolved ones ranked. */
static int scale_down_order(const ns_engine *e, const ns_nodepool *np, candidate **out, size_t *n)
{
    const ns_cluster *c = e->cluster;
    candidate *v = calloc(c->n_nodeclaims ? c->n_nodeclaims : 1, sizeof(*v));
    if (!v)
        return NS_FAIL(NS_ERR_INTERNAL, "NodePool %s: out of memory ranking its nodeclaims", np->meta.name);
    size_t k = 0, unresolved = 0;
    int64_t now = ns_clock_now_ms();
    int rc = NS_OK;
    for (size_t i = 0; i < c->n_nodeclaims; i++) {
        const ns_nodeclaim *claim = c->nodeclaims[i];
        if (in_pool(claim, np) && !ns_claim_deleting(claim) && !ns_claim_launched(claim))
            snprintf(v[k++].name, sizeof(v[0].name), "%s", claim->meta.name);
    }
    unresolved = k;
    for (size_t i = 0; rc == NS_OK && i < c->n_nodeclaims; i++) {
        const ns_nodeclaim *claim = c->nodeclaims[i];
        if (in_pool(claim, np) && ns_claim_launched(claim) && !ns_claim_deleting(claim) &&
            !pending_disruption(claim))
            rc = rank_claim(e, claim, now, &v[k++]);
    }
    if (rc < 0) {
        free(v);
        return rc;
    }
    qsort(v + unresolved, k - unresolved, sizeof(*v), candidate_cmp);
    *out = v;
    *n = k;
    return NS_OK;
}

static int scale_down(ns_engine *e, const ns_nodepool *np, const ns_static_count *n)
{
    int64_t excess = n->active - np->replicas;
    if (excess <= 0)
        return NS_OK;
    candidate *v = NULL;
    size_t k = 0;
    int rc = scale_down_order(e, np, &v, &k);
    if (rc < 0)
        return rc;
    size_t take = (size_t)excess < k ? (size_t)excess : k, len = 1;
    for (size_t i = 0; i < take; i++)
        len += strlen(v[i].name) + 1;
    char *names = calloc(1, len);
    if (!names) {
        free(v);
        return NS_FAIL(NS_ERR_INTERNAL, "NodePool %s: out of memory listing nodeclaims to delete", np->meta.name);
    }
    for (size_t i = 0; i < take; i++)
        snprintf(names + strlen(names), len - strlen(names), "%s%s", i ? "," : "", v[i].name);
    rc = record_scale(e, NS_DECISION_STATIC_SCALE_DOWN, np, n->active, excess, names);
    for (size_t i = 0; rc == NS_OK && i < take; i++) {
        ns_nodeclaim *claim = ns_cluster_find_nodeclaim(e->cluster, v[i].name);
        if (claim)
            rc = ns_engine_delete_claim(e, claim, "static", "Overprovisioned");
    }
    free(names);
    free(v);
    return rc;
}

int ns_ctl_static(ns_engine *e)
{
    if (!e->cfg.static_capacity)
        return NS_OK;
    for (size_t i = 0; i < e->cluster->n_nodepools; i++) {
        const ns_nodepool *np = e->cluster->nodepools[i];
        if (!ns_nodepool_is_static(np))
            continue;
        ns_static_count n;
        ns_engine_static_count(e->cluster, np, &n);
        int rc = n.active > np->replicas ? scale_down(e, np, &n) : scale_up(e, i, &n);
        if (rc < 0)
            return ns_error_prefix("NodePool %s: ", np->meta.name);
    }
    return NS_OK;
}
