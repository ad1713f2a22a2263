/*
 * Interruption (Karpenter's interruption controller): provider events drive actions.
 *   spot interruption warning  -> mark the offering unavailable, delete the claim (termination cordons it, the
 *                                 provisioner launches a replacement for its pods, the drain finishes before the
 *                                 deadline);
 *   scheduled maintenance      -> delete the claim the same way (no offering is marked);
 *   capacity reservation interruption -> the same, marking the claim's reserved offering unavailable;
 *   instance unhealthy         -> forceful: termination time now, then delete (no offering is marked);
 *   instance stopping/terminated -> the node is lost: delete its pods (their controllers recreate them pending),
 *                                 the Node and the claim;
 *   rebalance recommendation   -> recorded on the claim; acted on like maintenance with cfg.act_on_rebalance.
 * Events come from poll_events and from Node conditions: a notice only the instance itself can read (Azure's Scheduled
 * Events) is relayed by a node agent as a condition, and the provider says which announce an interruption
 * (event_from_node_condition, ABI 5). Such a condition holds for as long as the notice does, so an announcement is
 * acted on once: a claim already deleting only takes an earlier deadline, a rebalance is recorded once.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "engine/engine_internal.h"
#include "errors/ns_error.h"
#include "log/ns_log.h"
#include "model/model_util.h"

typedef struct events {
    ns_event *items;
    size_t n, cap;
} events;

static int collect(void *ctx, const ns_event *ev)
{
    events *v = ctx;
    if (ns_grow((void **)&v->items, &v->cap, v->n + 1, sizeof(*v->items)) < 0)
        return 1; /* keep the event for the next poll */
    v->items[v->n++] = *ev;
    return 0;
}

static const char *kind_name(ns_event_kind k)
{
    switch (k) {
    case NS_EVENT_SPOT_INTERRUPTION:
        return "SpotInterruption";
    case NS_EVENT_REBALANCE_RECOMMENDATION:
        return "RebalanceRecommendation";
    case NS_EVENT_SCHEDULED_MAINTENANCE:
        return "ScheduledChange";
    case NS_EVENT_INSTANCE_STOPPING:
        return "InstanceStopping";
    case NS_EVENT_INSTANCE_TERMINATED:
        return "InstanceTerminated";
    case NS_EVENT_INSTANCE_UNHEALTHY:
        return "InstanceUnhealthy";
    case NS_EVENT_CAPACITY_RESERVATION_INTERRUPTION:
        return "CapacityReservationInterruption";
    }
    return "Unknown";
}

static ns_nodeclaim *claim_by_provider_id(const ns_engine *e, const char *pid)
{
    for (size_t i = 0; i < e->cluster->n_nodeclaims; i++) {
        ns_nodeclaim *c = e->cluster->nodeclaims[i];
        if (c->provider_id && strcmp(c->provider_id, pid) == 0)
            return c;
    }
    return NULL;
}

static int annotate(ns_engine *e, ns_nodeclaim *claim, const char *key, int64_t value)
{
    char num[32];
    snprintf(num, sizeof(num), "%" PRId64, value);
    if (ns_labels_set(&claim->meta.annotations, key, num) < 0)
        return NS_ERR_INTERNAL;
    return e->writes.ops->update_nodeclaim(e->writes.ctx, claim);
}

/* Karpenter's markUnavailableOfferings: a spot interruption marks the claim's offering, and a capacity reservation
 * interruption the claim's reservation when the claim runs in one (capacityReservationProvider.MarkUnavailable on its
 * capacity-reservation-id label), so no new claim launches into it. The core launches into reserved capacity by
 * instance type and zone and the provider picks the reservation (launch options name no reservation), so the core's
 * name for the claim's reservation is its reserved offering of that type and zone (see docs/engine.md). */
static int mark_offering(ns_engine *e, const ns_nodeclaim *claim, const ns_event *ev)
{
    const ns_labels *l = &claim->meta.labels;
    const char *type = ns_labels_get(l, NS_LABEL_INSTANCE_TYPE), *zone = ns_labels_get(l, NS_LABEL_ZONE);
    const char *ct = ns_labels_get(l, NS_LABEL_CAPACITY_TYPE);
    if (!type || !zone || !ct)
        return NS_OK;
    if (ev->kind == NS_EVENT_SPOT_INTERRUPTION)
        return ns_engine_mark_unavailable(e, type, zone, ct, "spot interruption");
    if (ev->kind == NS_EVENT_CAPACITY_RESERVATION_INTERRUPTION && strcmp(ct, NS_CAPACITY_RESERVED) == 0)
        return ns_engine_mark_unavailable(e, type, zone, ct, "capacity reservation interruption");
    return NS_OK;
}

/* Warning events: the claim goes through termination, drained before the deadline, for the event's kind. */
static int disrupt(ns_engine *e, ns_nodeclaim *claim, const ns_event *ev)
{
    int rc = NS_OK;
    if (ev->deadline_ms)
        rc = annotate(e, claim, NS_ANNOTATION_INTERRUPTION_DEADLINE, ev->deadline_ms);
    if (rc == NS_OK)
        rc = mark_offering(e, claim, ev);
    return rc == NS_OK ? ns_engine_delete_claim(e, claim, "interruption", kind_name(ev->kind)) : rc;
}

/* Karpenter's ForcefulTermination (aws pkg/controllers/interruption/utils.go): termination time now, then delete. */
static int forceful(ns_engine *e, ns_nodeclaim *claim)
{
    int rc = ns_engine_terminate_by(e, claim, ns_clock_now_ms());
    return rc < 0 ? rc : ns_engine_delete_claim(e, claim, "interruption", "InstanceUnhealthy");
}

/* The instance is stopping or gone: nothing to drain, the pods are already lost. */
static int node_lost(ns_engine *e, ns_nodeclaim *claim, const ns_event *ev)
{
    ns_node *n = ns_engine_node_of_claim(e, claim);
    char node[NS_NAME_MAX] = "", name[NS_NAME_MAX];
    snprintf(name, sizeof(name), "%s", claim->meta.name);
    int rc = NS_OK;
    if (ev->kind == NS_EVENT_INSTANCE_STOPPING) {
        bool already;
        ns_engine_busy(e);
        if (ns_plugin_terminate(e->plugin, claim->provider_id, &already) != NS_OK)
            ns_log(NS_LOG_ERROR, "interruption", "failed terminating stopping instance", "NodeClaim", name, "error",
                   ns_error_message(), NULL);
    }
    if (n) {
        snprintf(node, sizeof(node), "%s", n->meta.name);
        /* A stopped kubelet's pods are gone: deleted, not evicted, and not a voluntary disruption. */
        ns_pod **pods;
        size_t np;
        if ((rc = ns_engine_pods_on_node(e, node, &pods, &np)) < 0)
            return rc;
        char (*refs)[2][256] = calloc(np ? np : 1, sizeof(*refs));
        if (!refs) {
            free(pods);
            return NS_FAIL(NS_ERR_INTERNAL, "out of memory removing node %s", node);
        }
        size_t nr = 0;
        for (size_t i = 0; i < np; i++)
            if (!ns_engine_pod_is_daemon(pods[i])) {
                snprintf(refs[nr][0], 256, "%s", pods[i]->meta.namespace_ ? pods[i]->meta.namespace_ : "default");
                snprintf(refs[nr][1], 256, "%s", pods[i]->meta.name);
                nr++;
            }
        free(pods);
        for (size_t i = 0; rc == NS_OK && i < nr; i++) {
            ns_pod *p = ns_cluster_find_pod(e->cluster, refs[i][0], refs[i][1]);
            char ref[600];
            snprintf(ref, sizeof(ref), "%s/%s", refs[i][0], refs[i][1]);
            if (p && (rc = e->writes.ops->delete_pod(e->writes.ctx, p, false)) == NS_OK)
                rc = ns_engine_record(e, NS_DECISION_POD_RESCHEDULED, "interruption", kind_name(ev->kind), node,
                                      name, ref, NULL);
        }
        free(refs);
        n = ns_cluster_find_node(e->cluster, node);
        if (rc == NS_OK && n && (rc = e->writes.ops->delete_node(e->writes.ctx, n)) == NS_OK)
            rc = ns_engine_record(e, NS_DECISION_NODE_LOST, "interruption", kind_name(ev->kind), node, name, NULL,
                                  ev->provider_id);
    }
    if (rc != NS_OK)
        return rc;
    claim = ns_cluster_find_nodeclaim(e->cluster, name);
    if (!claim)
        return NS_OK;
    if ((rc = ns_engine_delete_claim(e, claim, "interruption", kind_name(ev->kind))) < 0)
        return rc;
    claim = ns_cluster_find_nodeclaim(e->cluster, name);
    if (claim && (rc = e->writes.ops->remove_nodeclaim_finalizer(e->writes.ctx, claim, NS_FINALIZER_TERMINATION)) == 0)
        rc = ns_engine_record(e, NS_DECISION_DELETED_NODECLAIM, "interruption", kind_name(ev->kind), node[0] ? node : NULL,
                              name, NULL, NULL);
    return rc;
}

static int handle(ns_engine *e, const ns_event *ev)
{
    ns_nodeclaim *claim = claim_by_provider_id(e, ev->provider_id);
    if (!claim) {
        ns_log(NS_LOG_DEBUG, "interruption", "event for an instance no nodeclaim owns", "provider-id",
               ev->provider_id, "kind", kind_name(ev->kind), NULL);
        return NS_OK;
    }
    char detail[128] = "";
    if (ev->deadline_ms) {
        char when[32];
        ns_clock_format_rfc3339(ev->deadline_ms, when, sizeof(when));
        snprintf(detail, sizeof(detail), "deadline %s", when);
    }
    const ns_node *n = ns_engine_node_of_claim(e, claim);
    ns_decision_kind kind =
        ev->kind == NS_EVENT_REBALANCE_RECOMMENDATION ? NS_DECISION_REBALANCE_RECORDED : NS_DECISION_INTERRUPTION;
    int rc = ns_engine_record(e, kind, kind_name(ev->kind), ev->detail, n ? n->meta.name : NULL, claim->meta.name,
                              NULL, detail);
    if (rc < 0)
        return rc;
    switch (ev->kind) {
    case NS_EVENT_SPOT_INTERRUPTION:
    case NS_EVENT_SCHEDULED_MAINTENANCE:
    case NS_EVENT_CAPACITY_RESERVATION_INTERRUPTION:
        return disrupt(e, claim, ev);
    case NS_EVENT_INSTANCE_UNHEALTHY:
        return forceful(e, claim);
    case NS_EVENT_INSTANCE_STOPPING:
    case NS_EVENT_INSTANCE_TERMINATED:
        return node_lost(e, claim, ev);
    case NS_EVENT_REBALANCE_RECOMMENDATION:
        rc = annotate(e, claim, NS_ANNOTATION_REBALANCE, ev->time_ms ? ev->time_ms : ns_clock_now_ms());
        return rc == NS_OK && e->cfg.act_on_rebalance ? disrupt(e, claim, ev) : rc;
    }
    return NS_OK;
}

/* An event read from a node condition, seen again at every step while the condition holds. */
static int handle_announced(ns_engine *e, const ns_event *ev)
{
    ns_nodeclaim *claim = claim_by_provider_id(e, ev->provider_id);
    if (!claim)
        return NS_OK;
    const ns_labels *a = &claim->meta.annotations;
    if (ns_claim_deleting(claim)) {
        const char *cur = ns_labels_get(a, NS_ANNOTATION_INTERRUPTION_DEADLINE);
        bool earlier = ev->deadline_ms && (!cur || ev->deadline_ms < strtoll(cur, NULL, 10));
        return earlier ? annotate(e, claim, NS_ANNOTATION_INTERRUPTION_DEADLINE, ev->deadline_ms) : NS_OK;
    }
    if (ev->kind == NS_EVENT_REBALANCE_RECOMMENDATION && ns_labels_get(a, NS_ANNOTATION_REBALANCE))
        return NS_OK;
    return handle(e, ev);
}

/* Every True condition of every node of a NodeClaim, asked about once per step. */
static int node_conditions(ns_engine *e)
{
    int rc = NS_OK;
    for (size_t i = 0; rc == NS_OK && i < e->cluster->n_nodes; i++) {
        const ns_node *n = e->cluster->nodes[i];
        if (!n->provider_id || !n->conditions.n || !claim_by_provider_id(e, n->provider_id))
            continue;
        char node[NS_NAME_MAX];
        snprintf(node, sizeof(node), "%s", n->meta.name);
        for (size_t k = 0; rc == NS_OK && k < n->conditions.n; k++) {
            const ns_condition *c = &n->conditions.items[k];
            if (strcmp(c->status, "True") != 0)
                continue; /* an announcement is a condition turned True; the others are for repair policies */
            ns_node_condition arg = {.struct_size = sizeof(arg), .node_name = n->meta.name,
                                     .provider_id = n->provider_id, .type = c->type, .status = c->status,
                                     .reason = c->reason ? c->reason : "", .message = c->message ? c->message : "",
                                     .last_transition_ms = c->last_transition_ms};
            ns_event ev;
            bool is_event = false;
            int code = ns_plugin_event_from_node_condition(e->plugin, &arg, &ev, &is_event);
            if (code == NS_ERR_UNSUPPORTED)
                return NS_OK;
            if (code != NS_OK) {
                ns_engine_busy(e); /* asked again at the next step */
                ns_log(NS_LOG_ERROR, "interruption", "failed reading node condition", "Node", node, "condition",
                       c->type, "error", ns_error_message(), NULL);
            }
            else if (is_event && ev.deadline_ms > 0 && (rc = ns_engine_remember_deadline(e, ev.deadline_ms)) < 0)
                break;
            else if (is_event && (rc = handle_announced(e, &ev)) == NS_OK)
                n = ns_cluster_find_node(e->cluster, node); /* handling may remove the node (instance lost) */
            if (!n)
                break;
        }
    }
    return rc;
}

int ns_ctl_interruption(ns_engine *e)
{
    events v = {0};
    int code = ns_plugin_poll_events(e->plugin, collect, &v);
    if (code != NS_OK && code != NS_ERR_UNSUPPORTED) {
        ns_engine_busy(e); /* polled again at the next step */
        ns_log(NS_LOG_ERROR, "interruption", "failed polling provider events", "error", ns_error_message(), NULL);
    }
    int rc = NS_OK;
    /* The provider changes the instance at an event's deadline; the engine must look then. */
    for (size_t i = 0; rc == NS_OK && i < v.n; i++)
        if (v.items[i].deadline_ms > 0)
            rc = ns_engine_remember_deadline(e, v.items[i].deadline_ms);
    for (size_t i = 0; rc == NS_OK && i < v.n; i++)
        rc = handle(e, &v.items[i]);
    free(v.items);
    return rc == NS_OK ? node_conditions(e) : rc;
}
