/* Disruption candidates, budgets per pool and pod events (see disruption_internal.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "disruption/budget.h"
#include "engine/disruption_cost.h"
#include "disruption/disruption_internal.h"
#include "errors/ns_error.h"
#include "log/ns_log.h"
#include "model/duration.h"
#include "model/hash.h"
#include "model/labels.h"
#include "model/model_util.h"

const char *ds_method_name(ds_method m)
{
    return m == DS_EMPTY ? "empty" : m == DS_DRIFTED || m == DS_STATIC_DRIFTED ? "drifted" : "underutilized";
}

const char *ds_method_reason(ds_method m)
{
    return ns_budget_reason_name(ds_method_reason_bit(m));
}

unsigned ds_method_reason_bit(ds_method m)
{
    if (m == DS_EMPTY)
        return NS_REASON_EMPTY;
    return m == DS_DRIFTED || m == DS_STATIC_DRIFTED ? NS_REASON_DRIFTED : NS_REASON_UNDERUTILIZED;
}

static bool pod_finished(const ns_pod *p)
{
    return p->phase && (strcmp(p->phase, "Succeeded") == 0 || strcmp(p->phase, "Failed") == 0);
}

static bool annotated_true(const ns_labels *a, const char *key)
{
    const char *v = ns_labels_get(a, key);
    return v && strcmp(v, "true") == 0;
}

/* A claim already handed to disruption or termination. */
static bool being_disrupted(const ns_nodeclaim *claim, const ns_node *node)
{
    if (ns_claim_deleting(claim) || ns_labels_get(&claim->meta.annotations, NS_ANNOTATION_DISRUPTION_METHOD))
        return true;
    for (size_t i = 0; node && i < node->n_taints; i++)
        if (node->taints[i].key && strcmp(node->taints[i].key, NS_TAINT_DISRUPTED_KEY) == 0)
            return true;
    return false;
}

static void block(ds_candidate *c, const char *why, const char *pod)
{
    if (c->blocked)
        return;
    c->blocked = true;
    snprintf(c->blocked_why, sizeof(c->blocked_why), "%s", why);
    snprintf(c->blocked_pod, sizeof(c->blocked_pod), "%s", pod ? pod : "");
}

static int64_t last_pod_event(const ns_nodeclaim *claim)
{
    const char *v = ns_labels_get(&claim->meta.annotations, NS_ANNOTATION_LAST_POD_EVENT);
    return v ? strtoll(v, NULL, 10) : 0;
}

static double candidate_price(ns_engine *e, const ds_candidate *c)
{
    /* The offering's current price, as Karpenter compares against (not the price at launch). */
    const ns_nodeclaim *claim = c->claim;
    if (!c->instance_type || !c->zone || !c->capacity_type)
        return -1;
    return ns_engine_offering_price(e, claim->nodeclass_ref.kind, claim->nodeclass_ref.name, c->instance_type, c->zone,
                                    c->capacity_type);
}

/* With commitments, what each launched claim costs as the ledger charges it now (a covered node at its commitment's
 * effective price): a replacement must be cheaper than that, not than the offering's list price. *out is malloc'd,
 * one per cluster NodeClaim, or NULL without commitments. */
static int effective_prices(const ns_engine *e, double **out)
{
    *out = NULL;
    if (!ns_engine_has_commitments(e))
        return 0;
    size_t n = e->cluster->n_nodeclaims;
    ns_commit_ledger *l = NULL;
    if (!(*out = malloc((n ? n : 1) * sizeof(**out))))
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory pricing %zu nodeclaims with commitments", n);
    int rc = ns_engine_commit_ledger_without(e, NULL, 0, *out, &l);
    ns_commit_ledger_free(l);
    if (rc < 0) {
        free(*out);
        *out = NULL;
    }
    return rc;
}

static int fill(ns_engine *e, ds_candidate *c, int64_t now)
{
    ns_nodeclaim *claim = c->claim;
    const ns_labels *labels = &claim->meta.labels;
    c->instance_type = ns_labels_get(labels, NS_LABEL_INSTANCE_TYPE);
    c->capacity_type = ns_labels_get(labels, NS_LABEL_CAPACITY_TYPE);
    c->zone = ns_labels_get(labels, NS_LABEL_ZONE);
    c->price = candidate_price(e, c);
    c->holds_headroom = ns_engine_holds_headroom(e, c->node->meta.name);

    ns_pod **all = NULL;
    size_t n_all = 0;
    int rc = ns_engine_pods_on_node(e, c->node->meta.name, &all, &n_all);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < n_all; i++) {
        ns_pod *p = all[i];
        if (pod_finished(p))
            continue;
        all[c->n_pods++] = p;
        bool daemon = ns_engine_pod_is_daemon(p);
        if (!daemon && p->meta.deletion_ms == 0)
            c->n_reschedulable++;
        char ref[2 * NS_NAME_MAX];
        ns_engine_pod_ref(p, ref, sizeof(ref));
        if (ns_pod_do_not_disrupt(p, ns_clock_now_ms()))
            block(c, "Pod has \"karpenter.sh/do-not-disrupt\" annotation", ref);
        /* Pods termination never evicts (mirror pods, pods tolerating the disrupted taint) are not held to their
         * budgets (Karpenter's IsEvictable); a pod two budgets select can never be evicted, so it blocks. */
        if (!ns_engine_pod_stays_on_node(p) && ns_pdb_check_eviction(e->cluster, p) < 0) {
            block(c, "Pdb prevents pod evictions", ref);
            ns_error_clear();
        }
    }
    c->pods = all;
    c->eventual = c->blocked && claim->termination_grace_period_ms >= 0;
    if (annotated_true(&c->node->meta.annotations, NS_ANNOTATION_DO_NOT_DISRUPT) ||
        annotated_true(&claim->meta.annotations, NS_ANNOTATION_DO_NOT_DISRUPT)) {
        /* Karpenter checks the node before its pods: the node's sentence is the one reported, and no class of
         * disruption ignores it. */
        c->blocked = false;
        c->eventual = false;
        block(c, "Disruption is blocked through the \"karpenter.sh/do-not-disrupt\" annotation", NULL);
    }

    c->cost = ns_disruption_rescheduling_cost((const ns_pod *const *)c->pods, c->n_pods) *
              ns_disruption_lifetime_remaining(now, claim->meta.creation_ms, claim->expire_after_ms);

    const ns_condition *init = ns_conditions_get(&claim->conditions, NS_COND_INITIALIZED);
    int64_t since = last_pod_event(claim);
    if (init && init->last_transition_ms > since)
        since = init->last_transition_ms;
    int64_t after = c->pool->consolidate_after_ms;
    c->consolidatable = after != NS_DURATION_NEVER && now - since >= after;

    const ns_condition *drift = ns_conditions_get(&claim->conditions, NS_COND_DRIFTED);
    c->drifted = drift && strcmp(drift->status, "True") == 0;
    c->drifted_ms = drift ? drift->last_transition_ms : 0;
    return 0;
}

void ds_candidates_free(ds_candidates *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++)
        free(c->items[i].pods);
    free(c->items);
    c->items = NULL;
    c->n = 0;
}

int ds_candidates_build(ns_engine *e, ds_candidates *out)
{
    ns_cluster *cl = e->cluster;
    int64_t now = ns_clock_now_ms();
    out->n = 0;
    out->items = calloc(cl->n_nodeclaims ? cl->n_nodeclaims : 1, sizeof(*out->items));
    if (!out->items)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory listing disruption candidates");
    double *effective = NULL;
    int rc = effective_prices(e, &effective);
    for (size_t i = 0; rc == 0 && i < cl->n_nodeclaims; i++) {
        ns_nodeclaim *claim = cl->nodeclaims[i];
        if (!ns_claim_launched(claim) || !ns_claim_initialized(claim))
            continue;
        ns_node *node = ns_engine_node_of_claim(e, claim);
        const char *pool_name = ns_labels_get(&claim->meta.labels, NS_LABEL_NODEPOOL);
        if (!node || !pool_name || being_disrupted(claim, node))
            continue;
        size_t p = 0;
        while (p < cl->n_nodepools && strcmp(cl->nodepools[p]->meta.name, pool_name) != 0)
            p++;
        if (p == cl->n_nodepools)
            continue;
        ds_candidate *c = &out->items[out->n++];
        c->claim = claim;
        c->node = node;
        c->pool = cl->nodepools[p];
        c->pool_index = p;
        rc = fill(e, c, now);
        if (rc == 0 && effective && c->price >= 0 && effective[i] >= 0)
            c->price = effective[i];
    }
    free(effective);
    if (rc < 0)
        ds_candidates_free(out);
    return rc;
}

ds_candidate *ds_candidates_find(ds_candidates *c, const char *claim_name)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->items[i].claim->meta.name, claim_name) == 0)
            return &c->items[i];
    return NULL;
}

bool ds_candidate_eligible(const ds_candidate *c, ds_method m)
{
    if (c->blocked && !((m == DS_DRIFTED || m == DS_STATIC_DRIFTED) && c->eventual))
        return false;
    /* Karpenter's OwnedByStaticNodePool: only static drift takes a static pool's nodes. */
    bool is_static = ns_nodepool_is_static(c->pool);
    switch (m) {
    case DS_EMPTY:
        /* Karpenter's emptiness skips a node hosting buffer pods (HasBufferPods) */
        return !is_static && c->consolidatable && c->n_reschedulable == 0 && !c->holds_headroom;
    case DS_DRIFTED:
        return !is_static && c->drifted;
    case DS_STATIC_DRIFTED:
        return is_static && c->drifted;
    case DS_UNDERUTILIZED:
        return !is_static && c->consolidatable &&
               c->pool->consolidation_policy == NS_CONSOLIDATE_WHEN_EMPTY_OR_UNDERUTILIZED && c->instance_type &&
               c->capacity_type && c->zone && c->price >= 0;
    }
    return false;
}

/* Each pool's nodes (the first n_nodepools entries) and nodes being disrupted (the next n_nodepools), counted as
 * Karpenter's BuildDisruptionBudgetMapping does: managed, initialized nodes whose instance is not already terminating;
 * of them, those NotReady or being disrupted. `slots` blocks of n_nodepools, the rest zeroed; malloc'd (the caller
 * frees it), or NULL with NS_ERR_INTERNAL recorded. */
static int64_t *count_budget_nodes(ns_engine *e, size_t slots)
{
    ns_cluster *cl = e->cluster;
    size_t n = cl->n_nodepools;
    int64_t *nodes = calloc(n ? slots * n : 1, sizeof(*nodes));
    if (!nodes) {
        NS_FAIL(NS_ERR_INTERNAL, "out of memory computing disruption budgets");
        return NULL;
    }
    for (size_t i = 0; i < cl->n_nodeclaims; i++) {
        ns_nodeclaim *claim = cl->nodeclaims[i];
        if (!ns_claim_initialized(claim) || ns_conditions_true(&claim->conditions, NS_COND_INSTANCE_TERMINATING))
            continue;
        const char *pool_name = ns_labels_get(&claim->meta.labels, NS_LABEL_NODEPOOL);
        for (size_t p = 0; pool_name && p < n; p++) {
            if (strcmp(cl->nodepools[p]->meta.name, pool_name) != 0)
                continue;
            ns_node *node = ns_engine_node_of_claim(e, claim);
            nodes[p]++;
            if (!node || !node->ready || being_disrupted(claim, node))
                nodes[n + p]++;
            break;
        }
    }
    return nodes;
}

int ds_budgets(ns_engine *e, ds_method m, int64_t **out)
{
    ns_cluster *cl = e->cluster;
    size_t n = cl->n_nodepools;
    int64_t *nodes = count_budget_nodes(e, 3);
    if (!nodes)
        return NS_ERR_INTERNAL;
    int64_t *disrupting = nodes + n, *remaining = nodes + 2 * n;
    int64_t now = ns_clock_now_ms();
    for (size_t p = 0; p < n; p++) {
        if (ns_budget_remaining(cl->nodepools[p], nodes[p], disrupting[p], ds_method_reason_bit(m), now,
                                &remaining[p]) < 0) {
            /* Fail closed, as Karpenter does with a budget it cannot evaluate (remaining is 0), and say why. */
            ns_log(NS_LOG_ERROR, "disruption", "invalid disruption budget, no disruption in the NodePool", "NodePool",
                   cl->nodepools[p]->meta.name, "reason", ds_method_reason(m), "error", ns_error_message(), NULL);
            ns_error_clear();
        }
    }
    memmove(nodes, remaining, n * sizeof(*nodes));
    *out = nodes;
    return 0;
}

int ns_disruption_allowed(ns_engine *e, unsigned reason, int64_t **out)
{
    int64_t *nodes = count_budget_nodes(e, 2);
    if (!nodes)
        return NS_ERR_INTERNAL;
    int64_t now = ns_clock_now_ms();
    for (size_t p = 0; p < e->cluster->n_nodepools; p++) {
        const ns_nodepool *np = e->cluster->nodepools[p];
        /* A budget that cannot be evaluated allows 0 (Karpenter's MustGetAllowedDisruptions); ds_budgets logs why
         * each time a method evaluates it. */
        if (ns_budget_allowed(np->budgets, np->n_budgets, nodes[p], reason, now, &nodes[p]) < 0)
            ns_error_clear();
    }
    *out = nodes;
    return 0;
}

/* ---- Pod events */

static uint64_t pod_signature(const ns_cluster *cl, const char *node_name)
{
    uint64_t h = NS_HASH_SEED;
    for (size_t i = 0; i < cl->n_pods; i++) {
        const ns_pod *p = cl->pods[i];
        if (!p->node_name || strcmp(p->node_name, node_name) != 0 || pod_finished(p))
            continue;
        h = ns_hash_step(ns_hash_str(ns_hash_step(ns_hash_str(h, p->meta.namespace_), '/'), p->meta.name), ';');
    }
    return h;
}

void ds_pod_events_free(ds_pod_events *ev)
{
    if (!ev)
        return;
    for (size_t i = 0; i < ev->n; i++)
        free(ev->items[i].claim);
    free(ev->items);
    memset(ev, 0, sizeof(*ev));
}

/* Karpenter's podevents controller leaves a claim's last pod event alone for 10 s after it set it: during a scale-up
 * every binding changes a node's pods, and a write per claim per change would be a write per pod. */
#define POD_EVENT_DEDUPE_MS 10000

static int note_event(ns_engine *e, ns_nodeclaim *claim, int64_t now)
{
    int64_t last = last_pod_event(claim);
    if (last > 0 && now - last < POD_EVENT_DEDUPE_MS)
        return 0;
    char v[32];
    snprintf(v, sizeof(v), "%" PRId64, now);
    if (ns_labels_set(&claim->meta.annotations, NS_ANNOTATION_LAST_POD_EVENT, v) < 0)
        return NS_ERR_INTERNAL;
    return e->writes.ops->update_nodeclaim(e->writes.ctx, claim);
}

int ds_pod_events_update(ns_engine *e, ds_pod_events *ev)
{
    ns_cluster *cl = e->cluster;
    int64_t now = ns_clock_now_ms();
    /* Forget claims that are gone, keeping the order of the rest. */
    size_t kept = 0;
    for (size_t i = 0; i < ev->n; i++) {
        if (ns_cluster_find_nodeclaim(cl, ev->items[i].claim))
            ev->items[kept++] = ev->items[i];
        else
            free(ev->items[i].claim);
    }
    ev->n = kept;
    for (size_t i = 0; i < cl->n_nodeclaims; i++) {
        ns_nodeclaim *claim = cl->nodeclaims[i];
        if (!ns_claim_launched(claim))
            continue;
        ns_node *node = ns_engine_node_of_claim(e, claim);
        if (!node)
            continue;
        uint64_t sig = pod_signature(cl, node->meta.name);
        ds_pod_signature *s = NULL;
        for (size_t j = 0; j < ev->n && !s; j++)
            if (strcmp(ev->items[j].claim, claim->meta.name) == 0)
                s = &ev->items[j];
        if (s) {
            if (s->signature != sig) {
                s->signature = sig;
                int rc = note_event(e, claim, now);
                if (rc < 0)
                    return rc;
            }
            continue;
        }
        /* First sight (a new node, or a rebuilt engine): remember the pods; the event time on the claim stands. */
        if (ns_grow((void **)&ev->items, &ev->cap, ev->n + 1, sizeof(*ev->items)) < 0 ||
            !(ev->items[ev->n].claim = strdup(claim->meta.name)))
            return NS_FAIL(NS_ERR_INTERNAL, "out of memory tracking the pods of nodeclaim %s", claim->meta.name);
        ev->items[ev->n++].signature = sig;
    }
    return 0;
}
