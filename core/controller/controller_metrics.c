/* Engine decisions and cluster state into Karpenter's metric families. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/controller_metrics.h"
#include "disruption/budget.h"
#include "disruption/disruption.h"
#include "errors/ns_error.h"
#include "model/labels.h"

/* What a NodeClaim's counters are labelled with, remembered while it exists: it is gone when its deletion is
 * counted. */
typedef struct claim_info {
    char *claim, *node, *pool, *zone, *capacity_type;
    bool seen; /* in the cluster at the last update */
    bool min_values_relaxed; /* its karpenter.sh/nodeclaim-min-values-relaxed is "true" */
} claim_info;

struct ns_controller_metrics {
    ns_metrics *m;
    size_t decisions_seen;
    claim_info *claims;
    size_t n_claims;
};

static void info_free(claim_info *i)
{
    free(i->claim);
    free(i->node);
    free(i->pool);
    free(i->zone);
    free(i->capacity_type);
}

ns_controller_metrics *ns_controller_metrics_new(ns_metrics *m)
{
    ns_controller_metrics *cm = calloc(1, sizeof(*cm));
    if (!cm) {
        NS_FAIL(NS_ERR_INTERNAL, "out of memory keeping metrics");
        return NULL;
    }
    cm->m = m;
    return cm;
}

void ns_controller_metrics_free(ns_controller_metrics *cm)
{
    if (!cm)
        return;
    for (size_t i = 0; i < cm->n_claims; i++)
        info_free(&cm->claims[i]);
    free(cm->claims);
    free(cm);
}

static char *dup_or_empty(const char *s)
{
    return strdup(s ? s : "");
}

/* Remembers the labels of every claim in the cluster (its Node's zone once registered). */
static int remember_claims(ns_controller_metrics *cm, const ns_cluster *c)
{
    for (size_t i = 0; i < cm->n_claims; i++)
        cm->claims[i].seen = false;
    for (size_t k = 0; k < c->n_nodeclaims; k++) {
        const ns_nodeclaim *claim = c->nodeclaims[k];
        claim_info *found = NULL;
        for (size_t i = 0; i < cm->n_claims && !found; i++)
            if (strcmp(cm->claims[i].claim, claim->meta.name) == 0)
                found = &cm->claims[i];
        if (!found) {
            claim_info *grown = realloc(cm->claims, (cm->n_claims + 1) * sizeof(*grown));
            if (!grown)
                return NS_FAIL(NS_ERR_INTERNAL, "out of memory keeping metrics");
            cm->claims = grown;
            found = &cm->claims[cm->n_claims++];
            memset(found, 0, sizeof(*found));
        }
        const ns_node *n = claim->node_name ? ns_cluster_find_node(c, claim->node_name) : NULL;
        const char *zone = n ? ns_labels_get(&n->meta.labels, NS_LABEL_ZONE) : NULL;
        claim_info fresh = {
            dup_or_empty(claim->meta.name), dup_or_empty(claim->node_name),
            dup_or_empty(ns_labels_get(&claim->meta.labels, NS_LABEL_NODEPOOL)),
            dup_or_empty(zone ? zone : ns_labels_get(&claim->meta.labels, NS_LABEL_ZONE)),
            dup_or_empty(n ? ns_labels_get(&n->meta.labels, NS_LABEL_CAPACITY_TYPE)
                           : ns_labels_get(&claim->meta.labels, NS_LABEL_CAPACITY_TYPE)),
            true,
            ns_labels_get(&claim->meta.annotations, NS_ANNOTATION_MIN_VALUES_RELAXED) &&
                strcmp(ns_labels_get(&claim->meta.annotations, NS_ANNOTATION_MIN_VALUES_RELAXED), "true") == 0,
        };
        if (!fresh.claim || !fresh.node || !fresh.pool || !fresh.zone || !fresh.capacity_type) {
            info_free(&fresh);
            return NS_FAIL(NS_ERR_INTERNAL, "out of memory keeping metrics");
        }
        info_free(found);
        *found = fresh;
    }
    return 0;
}

static const claim_info *info_by(const ns_controller_metrics *cm, const char *claim, const char *node)
{
    for (size_t i = 0; i < cm->n_claims; i++)
        if ((claim && *claim && strcmp(cm->claims[i].claim, claim) == 0) ||
            (node && *node && strcmp(cm->claims[i].node, node) == 0))
            return &cm->claims[i];
    return NULL;
}

static int count_decision(ns_controller_metrics *cm, const ns_decision *d)
{
    char labels[1024];
    const claim_info *ci = info_by(cm, d->nodeclaims, d->nodes);
    const char *pool = ci ? ci->pool : "", *zone = ci ? ci->zone : "", *ct = ci ? ci->capacity_type : "";
    switch (d->kind) {
    case NS_DECISION_CREATED_NODECLAIM: {
        /* Karpenter counts a claim without the annotation as not relaxed. */
        const char *kv[] = {"min_values_relaxed", ci && ci->min_values_relaxed ? "true" : "false", "nodepool", pool,
                            "reason", "provisioned"};
        return ns_metrics_add(cm->m, "karpenter_nodeclaims_created_total", ns_metrics_labels(labels, sizeof(labels),
                              3, kv), 1);
    }
    case NS_DECISION_DELETED_NODECLAIM: {
        const char *kv[] = {"capacity_type", ct, "nodepool", pool, "zone", zone};
        return ns_metrics_add(cm->m, "karpenter_nodeclaims_terminated_total",
                              ns_metrics_labels(labels, sizeof(labels), 3, kv), 1);
    }
    case NS_DECISION_REGISTERED_NODECLAIM:
    case NS_DECISION_DELETED_NODE: {
        const char *kv[] = {"nodepool", pool, "zone", zone};
        return ns_metrics_add(cm->m, d->kind == NS_DECISION_DELETED_NODE ? "karpenter_nodes_terminated_total"
                                                                           : "karpenter_nodes_created_total",
                              ns_metrics_labels(labels, sizeof(labels), 2, kv), 1);
    }
    case NS_DECISION_EVICTED_POD:
    case NS_DECISION_EVICTION_BLOCKED: {
        /* forced deletions and pods held by do-not-disrupt send no eviction request */
        if ((d->kind == NS_DECISION_EVICTED_POD && strcmp(d->method, "eviction") != 0) ||
            (d->kind == NS_DECISION_EVICTION_BLOCKED && strstr(d->reason, "do-not-disrupt")))
            return 0;
        const char *kv[] = {"code", d->kind == NS_DECISION_EVICTED_POD ? "200" : "429"};
        return ns_metrics_add(cm->m, "karpenter_pods_eviction_requests_total",
                              ns_metrics_labels(labels, sizeof(labels), 1, kv), 1);
    }
    default: return 0;
    }
}

static int pool_gauges(ns_controller_metrics *cm, const ns_cluster *c)
{
    static const char *const resources[] = {"cpu", "memory", "pods", "ephemeral-storage"};
    ns_metrics_reset(cm->m, "karpenter_nodepools_usage");
    ns_metrics_reset(cm->m, "karpenter_nodepools_limit");
    int rc = 0;
    for (size_t p = 0; rc == 0 && p < c->n_nodepools; p++) {
        const ns_nodepool *np = c->nodepools[p];
        ns_res used = {0};
        for (size_t k = 0; rc == 0 && k < c->n_nodeclaims; k++) {
            const char *pool = ns_labels_get(&c->nodeclaims[k]->meta.labels, NS_LABEL_NODEPOOL);
            if (pool && strcmp(pool, np->meta.name) == 0 && !c->nodeclaims[k]->meta.deletion_ms)
                rc = ns_res_add(&used, &c->nodeclaims[k]->capacity);
        }
        const bool limited[] = {np->limits.cpu, np->limits.memory, np->limits.pods, np->limits.ephemeral_storage};
        for (size_t r = 0; rc == 0 && r < 4; r++) {
            char labels[512];
            const char *kv[] = {"nodepool", np->meta.name, "resource_type", resources[r]};
            ns_metrics_labels(labels, sizeof(labels), 2, kv);
            /* cpu as cores, the others in their units, as Karpenter's gauges */
            double v = r == 0 ? (double)used.cpu_milli / 1000 : (double)ns_res_get(&used, resources[r]);
            rc = ns_metrics_set(cm->m, "karpenter_nodepools_usage", labels, v);
            if (rc == 0 && limited[r]) {
                double l = r == 0 ? (double)np->limits.max.cpu_milli / 1000
                                  : (double)ns_res_get(&np->limits.max, resources[r]);
                rc = ns_metrics_set(cm->m, "karpenter_nodepools_limit", labels, l);
            }
        }
        ns_res_free(&used);
    }
    return rc;
}

/* karpenter_nodepools_allowed_disruptions for each pool and disruption reason, as the disruption methods evaluate
 * the budgets (Karpenter sets it in BuildDisruptionBudgetMapping, for each method's reason). */
static int budget_gauges(ns_controller_metrics *cm, ns_engine *e)
{
    const ns_cluster *c = ns_engine_cluster(e);
    static const unsigned reasons[] = {NS_REASON_EMPTY, NS_REASON_DRIFTED, NS_REASON_UNDERUTILIZED};
    ns_metrics_reset(cm->m, "karpenter_nodepools_allowed_disruptions");
    int rc = 0;
    for (size_t r = 0; rc == 0 && r < sizeof(reasons) / sizeof(reasons[0]); r++) {
        int64_t *allowed = NULL;
        if ((rc = ns_disruption_allowed(e, reasons[r], &allowed)) < 0)
            break;
        for (size_t p = 0; rc == 0 && p < c->n_nodepools; p++) {
            char labels[512];
            const char *kv[] = {"nodepool", c->nodepools[p]->meta.name, "reason", ns_budget_reason_name(reasons[r])};
            rc = ns_metrics_set(cm->m, "karpenter_nodepools_allowed_disruptions",
                                ns_metrics_labels(labels, sizeof(labels), 2, kv), (double)allowed[p]);
        }
        free(allowed);
    }
    return rc;
}

int ns_controller_metrics_update(ns_controller_metrics *cm, ns_engine *e, const ns_cluster *c, bool synced)
{
    char labels[512];
#if defined(__x86_64__)
    const char *arch = "amd64";
#elif defined(__aarch64__)
    const char *arch = "arm64";
#else
    const char *arch = "unknown";
#endif
    const char *kv[] = {"commit", "", "goarch", arch, "goversion", "", "version", NS_VERSION};
    int rc = ns_metrics_set(cm->m, "karpenter_build_info", ns_metrics_labels(labels, sizeof(labels), 4, kv), 1);
    if (rc == 0)
        rc = ns_metrics_set(cm->m, "karpenter_cluster_state_synced", "", synced ? 1 : 0);
    if (rc < 0 || !c)
        return rc;
    if ((rc = ns_metrics_set(cm->m, "karpenter_cluster_state_node_count", "", (double)c->n_nodes)) < 0)
        return rc;
    size_t n = 0;
    const ns_decision *d = e ? ns_engine_decisions(e, &n) : NULL;
    /* the claims the cluster holds now are remembered before counting (new claims), and the ones gone are
     * forgotten after (deleted claims) */
    rc = remember_claims(cm, c);
    for (size_t i = cm->decisions_seen; rc == 0 && i < n; i++)
        rc = count_decision(cm, &d[i]);
    cm->decisions_seen = n;
    for (size_t i = cm->n_claims; rc == 0 && i-- > 0;) {
        if (cm->claims[i].seen)
            continue;
        info_free(&cm->claims[i]);
        cm->claims[i] = cm->claims[--cm->n_claims];
    }
    if (rc == 0)
        rc = pool_gauges(cm, c);
    return rc == 0 && e ? budget_gauges(cm, e) : rc;
}
