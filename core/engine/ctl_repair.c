/*
 * Node repair (Karpenter's node.health controller, behind the NodeRepair feature gate: cfg.node_repair). The provider
 * declares its repair policies (list_repair_policies): a Node condition type and status that, held for the policy's
 * toleration since the condition's last transition, mean the node is broken. Such a node's NodeClaim is deleted at
 * once, whatever the disruption budgets and do-not-disrupt say, with its termination timestamp annotation set to now
 * so termination deletes its pods without waiting for evictions.
 *
 * The circuit breaker: no repair while more than 20% (rounded up) of the nodes of the claim's NodePool, or of the
 * whole cluster for a claim of no NodePool, match a policy (whether or not past its toleration); the claim is then
 * reported once as blocked ("node repair blocked", Karpenter's NodeRepairBlocked event) until that changes.
 *
 * The policies are listed at every step the gate is on (a provider that fails to answer is asked again at the next
 * tick, and the last list it gave is used meanwhile); engine_due.c wakes the engine when a matching condition reaches
 * its toleration.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "engine/engine_internal.h"
#include "errors/ns_error.h"
#include "log/ns_log.h"
#include "model/checked.h"
#include "model/labels.h"
#include "model/model_util.h"

/* Karpenter's allowedUnhealthyPercent. */
#define ALLOWED_UNHEALTHY_PERCENT 20

static void policies_clear(ns_engine_repair_policies *p)
{
    for (size_t i = 0; i < p->n; i++) {
        free(p->items[i].type);
        free(p->items[i].status);
    }
    free(p->items);
    memset(p, 0, sizeof(*p));
}

void ns_engine_repair_policies_free(ns_engine_repair_policies *p)
{
    if (p)
        policies_clear(p);
}

static int collect_policy(void *ctx, const ns_repair_policy *policy)
{
    ns_engine_repair_policies *p = ctx;
    if (ns_grow((void **)&p->items, &p->cap, p->n + 1, sizeof(*p->items)) < 0)
        return NS_ERR_INTERNAL;
    ns_engine_repair_policy *out = &p->items[p->n];
    memset(out, 0, sizeof(*out));
    out->toleration_ms = policy->toleration_ms > 0 ? policy->toleration_ms : 0;
    if (!(out->type = ns_strdup(policy->condition_type)) || !(out->status = ns_strdup(policy->condition_status))) {
        free(out->type);
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory copying repair policy %s=%s", policy->condition_type,
                       policy->condition_status);
    }
    p->n++;
    return NS_OK;
}

/* The provider's policies into e->repair; on a failure the previous list stays, the failure is logged and the engine
 * looks again at the next tick. */
static int list_policies(ns_engine *e)
{
    ns_engine_repair_policies fresh = {0};
    int code = ns_plugin_list_repair_policies(e->plugin, collect_policy, &fresh);
    if (code == NS_OK || code == NS_ERR_UNSUPPORTED) {
        policies_clear(&e->repair);
        e->repair = fresh;
        return NS_OK;
    }
    policies_clear(&fresh);
    ns_engine_busy(e);
    ns_log(NS_LOG_ERROR, "node.health", "failed listing repair policies", "error", ns_error_message(), NULL);
    return NS_OK;
}

bool ns_engine_repair_due(const ns_engine *e, const ns_node *n, const char **type, const char **status, int64_t *at_ms)
{
    bool found = false;
    for (size_t i = 0; i < e->repair.n; i++) {
        const ns_engine_repair_policy *p = &e->repair.items[i];
        int64_t since = 0;
        const char *st = ns_node_condition_status(n, p->type, &since);
        if (!st || strcmp(st, p->status) != 0)
            continue;
        int64_t end = ns_saturating_add(since, p->toleration_ms);
        /* the condition closest to its toleration decides, as Karpenter's findUnhealthyConditions */
        if (!found || end < *at_ms) {
            *type = p->type;
            *status = p->status;
            *at_ms = end;
            found = true;
        }
    }
    return found;
}

static bool matches_a_policy(const ns_engine *e, const ns_node *n)
{
    const char *type, *status;
    int64_t at;
    return ns_engine_repair_due(e, n, &type, &status, &at);
}

/* Karpenter's areNodesHealthy over the nodes of a NodePool (pool NULL: every node of the cluster): at most 20% of
 * them, rounded up, match a policy. */
static bool nodes_healthy(const ns_engine *e, const char *pool)
{
    size_t total = 0, unhealthy = 0;
    for (size_t i = 0; i < e->cluster->n_nodes; i++) {
        const ns_node *n = e->cluster->nodes[i];
        const char *label = ns_labels_get(&n->meta.labels, NS_LABEL_NODEPOOL);
        if (pool && (!label || strcmp(label, pool) != 0))
            continue;
        total++;
        unhealthy += matches_a_policy(e, n);
    }
    size_t threshold = (total * ALLOWED_UNHEALTHY_PERCENT + 99) / 100;
    return unhealthy <= threshold;
}

/* "claim|" entries of e->repair_blocked: the claims already reported as blocked while the breaker stays open. */
static bool blocked_reported(const ns_engine *e, const char *claim)
{
    for (size_t i = 0; i < e->n_repair_blocked; i++)
        if (strcmp(e->repair_blocked[i], claim) == 0)
            return true;
    return false;
}

static void forget_blocked(ns_engine *e, const char *claim)
{
    size_t k = 0;
    for (size_t i = 0; i < e->n_repair_blocked; i++) {
        if (strcmp(e->repair_blocked[i], claim) == 0)
            free(e->repair_blocked[i]);
        else
            e->repair_blocked[k++] = e->repair_blocked[i];
    }
    e->n_repair_blocked = k;
}

static int report_blocked(ns_engine *e, const ns_nodeclaim *claim, const ns_node *n, const char *pool)
{
    if (blocked_reported(e, claim->meta.name))
        return NS_OK;
    char **grown = realloc(e->repair_blocked, (e->n_repair_blocked + 1) * sizeof(*grown));
    if (!grown)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory recording blocked repair of nodeclaim %s", claim->meta.name);
    e->repair_blocked = grown;
    if (!(e->repair_blocked[e->n_repair_blocked] = ns_strdup(claim->meta.name)))
        return NS_ERR_INTERNAL;
    e->n_repair_blocked++;
    /* Karpenter's event messages, word for word */
    char why[128];
    if (pool)
        snprintf(why, sizeof(why), "more than %d%% nodes are unhealthy in the nodepool", ALLOWED_UNHEALTHY_PERCENT);
    else
        snprintf(why, sizeof(why), "more then %d%% nodes are unhealthy in the cluster", ALLOWED_UNHEALTHY_PERCENT);
    return ns_engine_record(e, NS_DECISION_REPAIR_BLOCKED, "repair", why, n->meta.name, claim->meta.name, NULL,
                            pool ? pool : "");
}

static int repair_claim(ns_engine *e, ns_nodeclaim *claim, void *ctx)
{
    (void)ctx;
    ns_node *n = ns_claim_launched(claim) ? ns_engine_node_of_claim(e, claim) : NULL;
    const char *type, *status;
    int64_t at, now = ns_clock_now_ms();
    if (!n || !ns_engine_repair_due(e, n, &type, &status, &at) || now < at) {
        forget_blocked(e, claim->meta.name);
        return NS_OK;
    }
    const char *pool = ns_labels_get(&claim->meta.labels, NS_LABEL_NODEPOOL);
    if (!nodes_healthy(e, pool))
        return report_blocked(e, claim, n, pool);
    forget_blocked(e, claim->meta.name);
    char name[NS_NAME_MAX], node[NS_NAME_MAX], why[256];
    snprintf(name, sizeof(name), "%s", claim->meta.name);
    snprintf(node, sizeof(node), "%s", n->meta.name);
    snprintf(why, sizeof(why), "node condition %s has been %s for longer than its toleration", type, status);
    bool deleting = ns_claim_deleting(claim);
    int rc = ns_engine_terminate_by(e, claim, now);
    if (rc < 0 || deleting)
        return rc;
    if ((rc = ns_engine_delete_claim(e, claim, "repair", "Unhealthy")) < 0)
        return rc;
    return ns_engine_record(e, NS_DECISION_UNHEALTHY_NODE, "repair", why, node, name, NULL, NULL);
}

int ns_ctl_repair(ns_engine *e)
{
    if (!e->cfg.node_repair)
        return NS_OK;
    int rc = list_policies(e);
    if (rc < 0 || e->repair.n == 0)
        return rc;
    return ns_engine_each_claim(e, repair_claim, NULL);
}
