/*
 * Provisioning (Karpenter's provisioner): once the batch window closes, schedule pending pods (and the pods of
 * nodes being deleted) over the view of initialized nodes and in-flight NodeClaims; the kube-scheduler stand-in
 * binds pods placed on initialized nodes; the scheduler's new claims become NodeClaims and are launched. A round
 * that changed what the next one sees (a launch given up, or pods deferred for reserved capacity while claims
 * launched) is followed by another at once, a bounded number of times. Then the headroom pass (engine_headroom.c)
 * places the CapacityBuffers' chunks around the real pods, every step the gate is on and a buffer asks for chunks,
 * pending pods or not.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "engine/engine_internal.h"
#include "errors/ns_error.h"
#include "log/ns_log.h"
#include "model/model_util.h"

typedef struct batch {
    size_t pending;
    int64_t oldest, newest; /* pending_since of the pending pods; 0 counts as "long ago" */
} batch;

static void batch_scan(const ns_cluster *c, batch *b)
{
    memset(b, 0, sizeof(*b));
    b->oldest = INT64_MAX;
    for (size_t i = 0; i < c->n_pods; i++) {
        const ns_pod *p = c->pods[i];
        if (!ns_sched_pod_is_pending(p))
            continue;
        b->pending++;
        b->oldest = p->pending_since_ms < b->oldest ? p->pending_since_ms : b->oldest;
        b->newest = p->pending_since_ms > b->newest ? p->pending_since_ms : b->newest;
    }
}

static bool has_leaving_pods(const ns_engine *e)
{
    for (size_t i = 0; i < e->cluster->n_nodeclaims; i++) {
        const ns_nodeclaim *claim = e->cluster->nodeclaims[i];
        const ns_node *n = ns_claim_launched(claim) ? ns_engine_node_of_claim(e, claim) : NULL;
        bool leaving = ns_claim_deleting(claim) || ns_labels_get(&claim->meta.annotations,
                                                                 NS_ANNOTATION_DISRUPTION_METHOD);
        if (!n || !leaving)
            continue;
        for (size_t p = 0; p < e->cluster->n_pods; p++) {
            const ns_pod *pod = e->cluster->pods[p];
            if (pod->node_name && strcmp(pod->node_name, n->meta.name) == 0 &&
                ns_engine_pod_currently_reschedulable(e, pod, ns_clock_now_ms()))
                return true;
        }
    }
    return false;
}

/* Karpenter lists up to five pods then "and N other(s)". */
static void pod_list(const ns_cluster *c, char *buf, size_t len)
{
    size_t off = 0, shown = 0, total = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < c->n_pods; i++) {
        if (!ns_sched_pod_is_pending(c->pods[i]))
            continue;
        total++;
        if (shown < 5 && off < len) {
            char ref[300];
            ns_engine_pod_ref(c->pods[i], ref, sizeof(ref));
            int w = snprintf(buf + off, len - off, "%s%s", shown ? ", " : "", ref);
            off += w > 0 ? (size_t)w : 0;
            shown++;
        }
    }
    if (total > shown && off < len)
        snprintf(buf + off, len - off, " and %zu other(s)", total - shown);
}

typedef struct bind {
    char *ns, *pod, *node;
} bind;

/* Pods actually pending in the cluster that the round put on a bindable node. */
static int collect_binds(const ns_engine *e, const ns_engine_plan *p, bind **out, size_t *n)
{
    *out = calloc(e->cluster->n_pods ? e->cluster->n_pods : 1, sizeof(**out));
    *n = 0;
    if (!*out)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory binding pods");
    for (size_t i = 0; i < p->result.n_placement && i < e->cluster->n_pods; i++) {
        size_t at = p->result.placement[i];
        const ns_pod *pod = e->cluster->pods[i];
        if (at >= p->view.n_nodes || !p->bindable[at] || !ns_sched_pod_is_pending(pod))
            continue;
        bind *b = &(*out)[(*n)++];
        if (!(b->ns = ns_strdup(pod->meta.namespace_ ? pod->meta.namespace_ : "default")) ||
            !(b->pod = ns_strdup(pod->meta.name)) || !(b->node = ns_strdup(p->view.nodes[at]->meta.name)))
            return NS_ERR_INTERNAL;
    }
    return NS_OK;
}

static void binds_free(bind *b, size_t n)
{
    for (size_t i = 0; b && i < n; i++) {
        free(b[i].ns);
        free(b[i].pod);
        free(b[i].node);
    }
    free(b);
}

static bool was_deferred(const ns_engine *e, const char *ref)
{
    for (size_t i = 0; i < e->n_deferred; i++)
        if (strcmp(e->deferred[i], ref) == 0)
            return true;
    return false;
}

/* An unschedulable pod is reported once per pending spell: when it became pending after the last round, or when the
 * last round deferred it (a deferral is no decision, so the first one comes now). */
static bool unschedulable_is_news(const ns_engine *e, const ns_pod *pod)
{
    char ref[300];
    ns_engine_pod_ref(pod, ref, sizeof(ref));
    return ns_sched_pod_is_pending(pod) &&
           (e->last_round_ms < 0 || pod->pending_since_ms > e->last_round_ms || was_deferred(e, ref));
}

/* Keeps the pods this round deferred, for the next round's unschedulable_is_news. */
static int keep_deferred(ns_engine *e, const ns_engine_plan *p)
{
    ns_strv_free(e->deferred, e->n_deferred);
    e->deferred = NULL;
    e->n_deferred = 0;
    size_t n = 0;
    for (size_t i = 0; i < p->result.n_unschedulable; i++)
        n += p->result.unschedulable[i].deferred;
    if (!n)
        return NS_OK;
    if (!(e->deferred = calloc(n, sizeof(*e->deferred))))
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory keeping %zu deferred pods", n);
    for (size_t i = 0; i < p->result.n_unschedulable; i++) {
        if (!p->result.unschedulable[i].deferred)
            continue;
        char ref[300];
        ns_engine_pod_ref(p->view.pods[p->result.unschedulable[i].pod], ref, sizeof(ref));
        if (!(e->deferred[e->n_deferred] = ns_strdup(ref)))
            return NS_FAIL(NS_ERR_INTERNAL, "out of memory keeping deferred pod %s", ref);
        e->n_deferred++;
    }
    return NS_OK;
}

/* Pods deferred for reserved capacity are not unschedulable: Karpenter records no event or error for them and logs
 * them once per round at debug level, five by name. */
static void log_deferred(const ns_engine_plan *p)
{
    char buf[1024] = "";
    size_t off = 0, shown = 0, total = 0;
    for (size_t i = 0; i < p->result.n_unschedulable; i++) {
        if (!p->result.unschedulable[i].deferred)
            continue;
        if (total++ < 5 && off < sizeof(buf)) {
            char ref[300];
            ns_engine_pod_ref(p->view.pods[p->result.unschedulable[i].pod], ref, sizeof(ref));
            int w = snprintf(buf + off, sizeof(buf) - off, "%s%s", shown++ ? ", " : "", ref);
            off += w > 0 ? (size_t)w : 0;
        }
    }
    if (total > shown && off < sizeof(buf))
        snprintf(buf + off, sizeof(buf) - off, " and %zu other(s)", total - shown);
    if (total)
        ns_log(NS_LOG_DEBUG, "provisioner", "deferring scheduling decision for provisionable pod(s) to future "
               "simulation due to limited reserved offering capacity", "Pods", buf, NULL);
}

static int record_unschedulable(ns_engine *e, const ns_engine_plan *p)
{
    int rc = NS_OK;
    log_deferred(p);
    for (size_t i = 0; rc == NS_OK && i < p->result.n_unschedulable; i++) {
        size_t idx = p->result.unschedulable[i].pod;
        const ns_pod *pod = p->view.pods[idx];
        bool by_limits = p->result.unschedulable[i].by_limits;
        if (p->result.unschedulable[i].deferred)
            continue;
        /* The log, not a decision, repeats at debug level; a pod waiting for room under a NodePool's limits is
         * reported once, when it starts waiting. */
        if (!unschedulable_is_news(e, pod)) {
            cJSON *f = by_limits ? NULL : cJSON_CreateObject();
            if (f && (!cJSON_AddItemToObject(f, "Pod", ns_log_ref(pod->meta.namespace_, pod->meta.name)) ||
                      !cJSON_AddStringToObject(f, "error", p->result.unschedulable[i].reason))) {
                cJSON_Delete(f);
                f = NULL;
            }
            if (!by_limits)
                ns_log_json(NS_LOG_DEBUG, "provisioner", "could not schedule pod", f);
            continue;
        }
        char ref[300];
        ns_engine_pod_ref(pod, ref, sizeof(ref));
        rc = ns_engine_record(e, by_limits ? NS_DECISION_HELD_BY_LIMITS : NS_DECISION_UNSCHEDULABLE_POD, NULL,
                              p->result.unschedulable[i].reason, NULL, NULL, ref, NULL);
    }
    return rc;
}

/* Where a round put each cluster pod it scheduled (a view node's name, or the NodeClaim created for it), for the
 * headroom pass: per cluster pod, owned strings or NULL. */
typedef struct pins {
    char **at;
    size_t n;
} pins;

static void pins_free(pins *p)
{
    ns_strv_free(p->at, p->n);
    memset(p, 0, sizeof(*p));
}

static int pins_take(pins *out, const ns_engine_plan *p, char (*names)[NS_NAME_MAX])
{
    pins_free(out);
    size_t n = p->n_cluster_pods < p->result.n_placement ? p->n_cluster_pods : p->result.n_placement;
    if (!(out->at = calloc(n ? n : 1, sizeof(*out->at))))
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory keeping the round's placements");
    out->n = n;
    for (size_t i = 0; i < n; i++) {
        size_t at = p->result.placement[i];
        const char *where = NULL;
        if (at < p->view.n_nodes)
            where = p->view.nodes[at]->meta.name;
        else if (at < p->view.n_nodes + p->result.n_claims && names[at - p->view.n_nodes][0])
            where = names[at - p->view.n_nodes];
        if (where && !(out->at[i] = ns_strdup(where)))
            return NS_FAIL(NS_ERR_INTERNAL, "out of memory keeping the round's placements");
    }
    return NS_OK;
}

static bool has_deferred(const ns_engine_plan *p)
{
    for (size_t i = 0; i < p->result.n_unschedulable; i++)
        if (p->result.unschedulable[i].deferred)
            return true;
    return false;
}

/* One round; *replan when the next round would decide differently: a claim it created was given up at once (its
 * offerings are now marked unavailable), or it deferred pods for reserved capacity and launched claims. Karpenter
 * leaves a deferred pod pending, so its pod controller triggers the provisioner again and that Solve lists the
 * instance types anew, where the launches have used up the reservations: the pod falls to another capacity type
 * (provisioner.go, ReservedOfferingErrors). Here the listing is made stale for the next round to read the
 * provider's counts after the launches. The placements go to *placed for the headroom pass. */
static int round_(ns_engine *e, bool *replan, pins *placed)
{
    *replan = false;
    bool launched = false;
    ns_engine_plan plan;
    int rc = ns_engine_plan_run(e, NULL, &plan);
    if (rc < 0)
        return rc;
    /* Karpenter's Schedule logs the pods it found only when the round computes new NodeClaims: not while they wait
     * for a claim already launching, nor when none of them can be placed (each then has its own error line). */
    if (plan.result.n_claims) {
        char pods[1024];
        pod_list(e->cluster, pods, sizeof(pods));
        ns_log(NS_LOG_INFO, "provisioner", "found provisionable pod(s)", "Pods", pods, NULL);
    }
    bind *binds = NULL;
    size_t n_binds = 0;
    if ((rc = record_unschedulable(e, &plan)) == NS_OK)
        rc = keep_deferred(e, &plan);
    if (rc == NS_OK && e->cfg.simulate_scheduler)
        rc = collect_binds(e, &plan, &binds, &n_binds);
    for (size_t i = 0; rc == NS_OK && i < n_binds; i++) {
        ns_pod *pod = ns_cluster_find_pod(e->cluster, binds[i].ns, binds[i].pod);
        if (pod)
            rc = e->writes.ops->bind_pod(e->writes.ctx, pod, binds[i].node);
    }
    binds_free(binds, n_binds);
    if (rc == NS_OK && plan.result.n_claims) {
        size_t on_claims = 0;
        for (size_t i = 0; i < plan.result.n_claims; i++)
            on_claims += plan.result.claims[i].n_pods;
        cJSON *f = cJSON_CreateObject();
        if (f && (!cJSON_AddNumberToObject(f, "nodeclaims", (double)plan.result.n_claims) ||
                  !cJSON_AddNumberToObject(f, "pods", (double)on_claims))) {
            cJSON_Delete(f);
            f = NULL;
        }
        ns_log_json(NS_LOG_INFO, "provisioner", "computed new nodeclaim(s) to fit pod(s)", f);
    }
    char (*names)[NS_NAME_MAX] = NULL;
    if (rc == NS_OK && !(names = calloc(plan.result.n_claims ? plan.result.n_claims : 1, sizeof(*names))))
        rc = NS_FAIL(NS_ERR_INTERNAL, "out of memory creating nodeclaims");
    /* Creating claims never removes objects the plan points to; launching may delete the claim just created. */
    /* A stop (a signal) ends the round between two launches rather than after all of them. */
    for (size_t i = 0; rc == NS_OK && i < plan.result.n_claims && (rc = ns_engine_check_stop(e)) == NS_OK; i++) {
        if ((rc = ns_engine_create_claim(e, &plan.result.claims[i], true, names[i])) == NS_OK) {
            const ns_nodeclaim *c = ns_cluster_find_nodeclaim(e->cluster, names[i]);
            *replan = *replan || !c || ns_claim_deleting(c);
            launched = launched || (c && !ns_claim_deleting(c) && ns_claim_launched(c));
        }
    }
    if (rc == NS_OK && launched && has_deferred(&plan)) {
        *replan = true;
        e->types.listed_in_step = -1; /* the plan still points into the sets: they are listed by the next round */
    }
    if (rc == NS_OK)
        rc = pins_take(placed, &plan, names);
    free(names);
    ns_engine_plan_free(&plan);
    e->last_round_ms = ns_clock_now_ms();
    return rc;
}

int ns_ctl_provisioner(ns_engine *e)
{
    batch b;
    batch_scan(e->cluster, &b);
    bool leaving = has_leaving_pods(e);
    if (!b.pending && !leaving)
        return ns_engine_headroom_round(e, NULL, 0);
    int64_t now = ns_clock_now_ms();
    /* The batch window: wait while pods keep arriving, but no longer than batch_max after the first. */
    bool window_open = b.pending && now - b.newest < e->cfg.batch_idle_ms && now - b.oldest < e->cfg.batch_max_ms;
    if (window_open && !leaving) {
        ns_engine_due(e, b.newest + e->cfg.batch_idle_ms); /* the window closes at the earlier of the two */
        ns_engine_due(e, b.oldest + e->cfg.batch_max_ms);
        return NS_OK;
    }
    /* A few rounds settle on offerings with capacity; a bound, since a provider whose counts do not move after a
     * launch (or offerings that keep failing) would have the rounds repeat: what is left waits for the next step,
     * as Karpenter's deferred pods wait for the next trigger. */
    bool replan = true;
    int rc = NS_OK;
    pins placed = {0};
    for (int i = 0; rc == NS_OK && replan && i < NS_PROVISIONING_ROUNDS_MAX; i++)
        rc = round_(e, &replan, &placed);
    if (rc == NS_OK)
        rc = ns_engine_headroom_round(e, (const char *const *)placed.at, placed.n);
    pins_free(&placed);
    return rc;
}
