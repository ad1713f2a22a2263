/* The scheduling simulation behind consolidation and drift (Karpenter's SimulateScheduling). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "disruption/disruption_internal.h"
#include "errors/ns_error.h"
#include "model/duration.h"
#include "model/labels.h"

void ds_sim_free(ds_sim *s)
{
    if (!s)
        return;
    ns_engine_plan_free(&s->plan);
    free(s->needed);
    memset(s, 0, sizeof(*s));
}

static const char *unschedulable_reason(const ns_sched_result *r, size_t pod)
{
    for (size_t i = 0; i < r->n_unschedulable; i++)
        if (r->unschedulable[i].pod == pod)
            return r->unschedulable[i].reason;
    return "no node or new claim fits it";
}

static bool on_removed_node(const ns_pod *p, ds_candidate *const *cands, size_t n)
{
    for (size_t i = 0; p->node_name && i < n; i++)
        if (strcmp(cands[i]->node->meta.name, p->node_name) == 0)
            return true;
    return false;
}

static int need_claim(ds_sim *s, size_t claim)
{
    for (size_t i = 0; i < s->n_needed; i++)
        if (s->needed[i] == claim)
            return 0;
    size_t *grown = realloc(s->needed, (s->n_needed + 1) * sizeof(*grown));
    if (!grown)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory simulating a disruption");
    s->needed = grown;
    s->needed[s->n_needed++] = claim;
    return 0;
}

/* Karpenter's IsUnderConsolidateAfter: an initialized claim of a NodePool with a consolidateAfter (not Never, not 0)
 * whose last pod event, or else its initialization, is more recent than that. */
static bool under_consolidate_after(const ns_engine *e, const ns_nodeclaim *claim, int64_t now)
{
    const char *name = ns_labels_get(&claim->meta.labels, NS_LABEL_NODEPOOL);
    const ns_nodepool *np = name ? ns_cluster_find_nodepool(e->cluster, name) : NULL;
    const ns_condition *init = ns_conditions_get(&claim->conditions, NS_COND_INITIALIZED);
    if (!np || np->consolidate_after_ms == NS_DURATION_NEVER || np->consolidate_after_ms == 0 || !init ||
        strcmp(init->status, "True") != 0)
        return false;
    const char *v = ns_labels_get(&claim->meta.annotations, NS_ANNOTATION_LAST_POD_EVENT);
    int64_t since = v ? strtoll(v, NULL, 10) : 0;
    if (since == 0)
        since = init->last_transition_ms;
    return now - since < np->consolidate_after_ms;
}

/* The Nodes of claims under their consolidateAfter window, into names[*n...] (room for every claim). */
static void closed_nodes(const ns_engine *e, const char **names, size_t *n)
{
    int64_t now = ns_clock_now_ms();
    for (size_t i = 0; i < e->cluster->n_nodeclaims; i++) {
        const ns_nodeclaim *claim = e->cluster->nodeclaims[i];
        if (claim->node_name && under_consolidate_after(e, claim, now))
            names[(*n)++] = claim->node_name;
    }
}

#define MAX_POD_ERRORS 5 /* Karpenter's MaxErrors in NonPendingPodSchedulingErrors */

/* One more pod without a place (see ds_sim.reason). */
static void pod_error(ds_sim *s, const char *ref, const char *err, size_t *n_errors)
{
    size_t used = strlen(s->reason);
    if (*n_errors == 0) {
        s->all_scheduled = false;
        used = (size_t)snprintf(s->reason, sizeof(s->reason), "not all pods would schedule, ");
    }
    if (*n_errors < MAX_POD_ERRORS && used < sizeof(s->reason))
        snprintf(s->reason + used, sizeof(s->reason) - used, "%s => %s ", ref, err);
    (*n_errors)++;
}

int ds_simulate(ns_engine *e, ds_candidate *const *cands, size_t n, bool consolidation, ds_sim *out)
{
    memset(out, 0, sizeof(*out));
    size_t n_claims = e->cluster->n_nodeclaims, n_closed = 0;
    const char **names = calloc(n ? n : 1, sizeof(*names));
    const char **shut = calloc(n_claims ? n_claims : 1, sizeof(*shut));
    if (!names || !shut) {
        free(names);
        free(shut);
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory simulating the disruption of %zu node(s)", n);
    }
    for (size_t i = 0; i < n; i++)
        names[i] = cands[i]->node->meta.name;
    if (consolidation)
        closed_nodes(e, shut, &n_closed);
    /* The CapacityBuffers' chunks are pending pods of the simulation, as Karpenter's SimulateScheduling gets them from
     * GetPendingPods: a replacement must hold them too, and a new claim they need counts. */
    ns_engine_plan_opts opts = {.removed_nodes = names,
                                .n_removed = n,
                                .closed_nodes = shut,
                                .n_closed = n_closed,
                                .headroom = ns_engine_get_config(e)->capacity_buffer,
                                .reserved_fallback = true};
    int rc = ns_engine_plan_run(e, &opts, &out->plan);
    free(names);
    free(shut);
    if (rc < 0)
        return ns_error_prefix("simulating the disruption of %zu node(s): ", n);

    /* Every pod that must move needs a place, and a place on an existing node only counts when that node is
     * initialized: otherwise the pods would wait for it. Pods are matched by index: the view keeps the cluster's
     * pod order. */
    const ns_cluster *cl = e->cluster;
    const ns_sched_result *r = &out->plan.result;
    int64_t now = ns_clock_now_ms();
    out->all_scheduled = true;
    size_t n_errors = 0;
    for (size_t i = 0; i < cl->n_pods && i < r->n_placement; i++) {
        const ns_pod *p = cl->pods[i];
        /* Pods that cannot leave now were left out of the round, as Karpenter leaves them out of its simulation. */
        if (!on_removed_node(p, cands, n) || !ns_engine_pod_currently_reschedulable(e, p, now))
            continue;
        char ref[2 * NS_NAME_MAX];
        ns_engine_pod_ref(p, ref, sizeof(ref));
        size_t where = r->placement[i];
        if (where == NS_SCHED_UNPLACED || where == NS_SCHED_NOT_PENDING) {
            pod_error(out, ref, where == NS_SCHED_UNPLACED ? unschedulable_reason(r, i) : "it is not schedulable",
                      &n_errors);
        } else if (where < out->plan.view.n_nodes && !out->plan.bindable[where]) {
            /* Karpenter's UninitializedNodeError */
            const ns_node *node = out->plan.view.nodes[where];
            const ns_nodeclaim *claim = ns_engine_claim_of_node(e, node);
            char err[3 * NS_NAME_MAX];
            snprintf(err, sizeof(err), "would schedule against uninitialized %s%s%snode/%s", claim ? "nodeclaim/" : "",
                     claim ? claim->meta.name : "", claim ? ", " : "", node->meta.name);
            pod_error(out, ref, err, &n_errors);
        } else if (where >= out->plan.view.n_nodes && out->all_scheduled) {
            rc = need_claim(out, where - out->plan.view.n_nodes);
            if (rc < 0)
                return rc;
        }
    }
    /* A chunk that cannot be placed does not block, as pending pods do not (AllNonPendingPodsScheduled). */
    for (size_t i = out->plan.n_cluster_pods; out->all_scheduled && i < r->n_placement; i++)
        if (r->placement[i] >= out->plan.view.n_nodes && r->placement[i] < out->plan.view.n_nodes + r->n_claims &&
            (rc = need_claim(out, r->placement[i] - out->plan.view.n_nodes)) < 0)
            return rc;
    size_t used = strlen(out->reason);
    if (n_errors > MAX_POD_ERRORS && used < sizeof(out->reason))
        snprintf(out->reason + used, sizeof(out->reason) - used, " and %zu other(s)", n_errors - MAX_POD_ERRORS);
    return 0;
}

void ds_sim_consol(const ds_sim *s, ns_consol_sim *out)
{
    const ns_sched_result *r = &s->plan.result;
    out->all_scheduled = s->all_scheduled;
    out->unscheduled_reason = s->reason;
    out->n_new_claims = s->n_needed;
    out->claim = s->n_needed == 1 ? &r->claims[s->needed[0]] : NULL;
    out->all_claims = r->claims;
    out->needed = s->needed;
}
