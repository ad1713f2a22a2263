/*
 * Termination (Karpenter's node termination and nodeclaim finalizer): for each deleting NodeClaim, taint its Node
 * karpenter.sh/disrupted:NoSchedule, drain in Karpenter's order through the Eviction API, terminate the instance,
 * delete the Node, and remove the karpenter.sh/termination finalizer.
 *
 * The drain starts at once, as Karpenter's does: a forceful deletion (by hand, at expiry, on an interruption) does not
 * wait for capacity, while the provisioner launches it for the leaving pods from the same step on. Only voluntary
 * disruption waits, before the claim is deleted: its replacements initialize first (ns_engine_disruption_handover).
 *
 * Drain order: non-critical pods, then non-critical DaemonSet pods, then critical pods, then critical DaemonSet
 * pods; a group starts only when the one before it is gone. Evictions a PodDisruptionBudget refuses are retried at
 * the next step; karpenter.sh/do-not-disrupt pods are not evicted. With a terminationGracePeriod on the claim, each
 * pod still there is deleted at the node's termination time minus the pod's own grace period. Mirror pods and pods
 * tolerating the disrupted taint are neither evicted nor waited for. The node counts as drained no sooner than five
 * seconds after its drain started.
 *
 * Once drained, the node waits for its VolumeAttachments to be deleted (the attach-detach controller detaches the
 * volumes of the pods that left), as Karpenter's awaitVolumeDetachment does: up to the claim's termination time,
 * past which it goes on with the attachments left and the VolumesDetached condition False. Attachments of inline
 * volumes and of the volumes of pods that cannot be drained (that stay on the node) are not waited for.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "engine/engine_internal.h"
#include "errors/ns_error.h"
#include "log/ns_log.h"
#include "model/checked.h"
#include "model/model_util.h"

static const char *method_of(const ns_nodeclaim *claim)
{
    const char *m = ns_labels_get(&claim->meta.annotations, NS_ANNOTATION_DISRUPTION_METHOD);
    return m ? m : "deletion";
}

static bool pod_terminal(const ns_pod *p)
{
    return p->phase && (strcmp(p->phase, "Succeeded") == 0 || strcmp(p->phase, "Failed") == 0);
}

static int drain_group(const ns_pod *p)
{
    return (ns_engine_pod_is_critical(p) ? 2 : 0) + (ns_engine_pod_is_daemon(p) ? 1 : 0);
}

/* Records a blocked eviction once per claim, pod and reason (the engine's memory only dedupes the log). */
static int blocked(ns_engine *e, const ns_nodeclaim *claim, const ns_node *n, const ns_pod *pod, const char *why)
{
    char key[1400], ref[300];
    ns_engine_pod_ref(pod, ref, sizeof(ref));
    snprintf(key, sizeof(key), "%s|%s|%s", claim->meta.name, ref, why);
    for (size_t i = 0; i < e->n_blocked; i++)
        if (strcmp(e->blocked[i], key) == 0)
            return NS_OK;
    char **grown = realloc(e->blocked, (e->n_blocked + 1) * sizeof(*grown));
    if (!grown || !(grown[e->n_blocked] = ns_strdup(key))) {
        if (grown)
            e->blocked = grown;
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory recording a blocked eviction");
    }
    e->blocked = grown;
    e->n_blocked++;
    return ns_engine_record(e, NS_DECISION_EVICTION_BLOCKED, method_of(claim), why, n->meta.name, claim->meta.name,
                            ref, NULL);
}

static void forget_blocked(ns_engine *e, const char *claim)
{
    size_t len = strlen(claim), k = 0;
    for (size_t i = 0; i < e->n_blocked; i++) {
        if (strncmp(e->blocked[i], claim, len) == 0 && e->blocked[i][len] == '|')
            free(e->blocked[i]);
        else
            e->blocked[k++] = e->blocked[i];
    }
    e->n_blocked = k;
}

/* Karpenter's IsWaitingEviction: a pod the node waits for. Terminal pods are done; pods that stay on the node
 * (mirror pods, pods tolerating the disrupted taint) and pods stuck terminating for over a minute are not waited for. */
static bool waiting_eviction(const ns_pod *p, int64_t now)
{
    return !pod_terminal(p) && !ns_engine_pod_stays_on_node(p) && !(p->meta.deletion_ms && now - p->meta.deletion_ms > 60000);
}

/* Karpenter's needsForceDelete: once the claim has a termination time (a terminationGracePeriod, or node repair's
 * termination timestamp), a pod is deleted once that time minus the pod's own terminationGracePeriodSeconds has
 * passed (30 when unset, the API server's default), so that it has its full grace period to stop before the instance
 * goes; strictly after that instant. */
static bool force_delete_due(const ns_nodeclaim *claim, const ns_pod *p, int64_t now)
{
    int64_t node_end;
    if (!ns_claim_termination_end(claim, &node_end))
        return false;
    int64_t pod_grace_ms = (p->termination_grace_period_s >= 0 ? p->termination_grace_period_s : 30) * 1000;
    return now > node_end - pod_grace_ms;
}

/* The pods to act on now, by namespace and name (evictions change the cluster's pod list): every pod due for
 * deletion, whatever its group (a budget on an earlier group must not hold back a pod past its deadline), and the
 * pods of the first group with any left that are not being deleted already. */
static size_t to_act_on(const ns_nodeclaim *claim, ns_pod **pods, size_t np, int64_t now, char (*refs)[2][256])
{
    int group = 4;
    for (size_t i = 0; i < np; i++)
        if (waiting_eviction(pods[i], now) && !force_delete_due(claim, pods[i], now) && drain_group(pods[i]) < group)
            group = drain_group(pods[i]);
    size_t n = 0;
    for (size_t i = 0; i < np; i++) {
        const ns_pod *p = pods[i];
        if (!waiting_eviction(p, now) ||
            !(force_delete_due(claim, p, now) || (!p->meta.deletion_ms && drain_group(p) == group)))
            continue;
        snprintf(refs[n][0], 256, "%s", p->meta.namespace_ ? p->meta.namespace_ : "default");
        snprintf(refs[n][1], 256, "%s", p->meta.name);
        n++;
    }
    return n;
}

static int drain_pod(ns_engine *e, ns_nodeclaim *claim, ns_node *n, ns_pod *pod, int64_t now)
{
    char ref[300];
    ns_engine_pod_ref(pod, ref, sizeof(ref));
    if (force_delete_due(claim, pod, now)) {
        int rc = e->writes.ops->delete_pod(e->writes.ctx, pod, false);
        return rc < 0 ? rc
                      : ns_engine_record(e, NS_DECISION_EVICTED_POD, "forced deletion",
                                         "the node's termination time comes within the pod's own grace period",
                                         n->meta.name, claim->meta.name, ref, NULL);
    }
    if (ns_pod_do_not_disrupt(pod, now))
        return blocked(e, claim, n, pod, "pod is annotated karpenter.sh/do-not-disrupt");
    int rc = e->writes.ops->evict_pod(e->writes.ctx, pod, true);
    if (rc == NS_ERR_THROTTLED)
        return blocked(e, claim, n, pod, ns_error_message());
    return rc < 0 ? rc
                  : ns_engine_record(e, NS_DECISION_EVICTED_POD, "eviction", method_of(claim), n->meta.name,
                                     claim->meta.name, ref, NULL);
}

/* Evicts (or deletes) what may go now. *done when the node has no pod left to wait for. */
static int drain(ns_engine *e, ns_nodeclaim *claim, ns_node *n, bool *done)
{
    *done = false;
    int64_t now = ns_clock_now_ms();
    ns_pod **pods;
    size_t np;
    int rc = ns_engine_pods_on_node(e, n->meta.name, &pods, &np);
    if (rc < 0)
        return rc;
    char (*refs)[2][256] = calloc(np ? np : 1, sizeof(*refs));
    if (!refs) {
        free(pods);
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory draining node %s", n->meta.name);
    }
    size_t nrefs = to_act_on(claim, pods, np, now, refs);
    free(pods);
    for (size_t i = 0; rc == NS_OK && i < nrefs; i++) {
        ns_pod *pod = ns_cluster_find_pod(e->cluster, refs[i][0], refs[i][1]);
        if (pod)
            rc = drain_pod(e, claim, n, pod, now);
    }
    free(refs);
    if (rc < 0 || (rc = ns_engine_pods_on_node(e, n->meta.name, &pods, &np)) < 0)
        return rc;
    size_t left = 0;
    for (size_t i = 0; i < np; i++)
        left += waiting_eviction(pods[i], now);
    free(pods);
    *done = left == 0;
    return NS_OK;
}

/* Karpenter's minimum drain time: the Drained condition turns Unknown when the drain starts, and the node is not
 * counted drained until five seconds later, so pods bound just before the taint was seen are drained too. */
#define MIN_DRAIN_MS 5000

static int start_drain(ns_engine *e, ns_nodeclaim *claim)
{
    if (ns_conditions_get(&claim->conditions, NS_COND_DRAINED))
        return NS_OK;
    if (ns_conditions_set(&claim->conditions, NS_COND_DRAINED, "Unknown", "Draining", "Draining", ns_clock_now_ms()) < 0)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory marking nodeclaim %s draining", claim->meta.name);
    return e->writes.ops->update_nodeclaim(e->writes.ctx, claim);
}

static int finish_drain(ns_engine *e, ns_nodeclaim *claim, bool *done)
{
    const ns_condition *c = ns_conditions_get(&claim->conditions, NS_COND_DRAINED);
    int64_t now = ns_clock_now_ms();
    *done = c && strcmp(c->status, "True") == 0;
    if (*done || (c && now - c->last_transition_ms < MIN_DRAIN_MS))
        return NS_OK;
    if (ns_conditions_set(&claim->conditions, NS_COND_DRAINED, "True", "Drained", NULL, now) < 0)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory marking nodeclaim %s drained", claim->meta.name);
    *done = true;
    return e->writes.ops->update_nodeclaim(e->writes.ctx, claim);
}

/* Karpenter's IsDrainable: pods the drain neither evicts nor waits for keep their volumes attached. */
static bool drainable(const ns_pod *p, int64_t now)
{
    return !ns_engine_pod_stays_on_node(p) && !(p->meta.deletion_ms && now - p->meta.deletion_ms > 60000);
}

/* Karpenter's pendingVolumeAttachments: the node's attachments of persistent volumes no undrainable pod there uses. */
static size_t pending_attachments(const ns_engine *e, const ns_node *n, int64_t now, const char **first)
{
    size_t pending = 0;
    for (size_t i = 0; i < e->cluster->n_volume_attachments; i++) {
        const ns_volume_attachment *va = e->cluster->volume_attachments[i];
        if (!va->pv_name || strcmp(va->node_name, n->meta.name) != 0)
            continue;
        bool kept = false;
        for (size_t j = 0; !kept && j < e->cluster->n_pods; j++) {
            const ns_pod *p = e->cluster->pods[j];
            kept = p->node_name && strcmp(p->node_name, n->meta.name) == 0 && !drainable(p, now) &&
                   ns_engine_pod_uses_pv(e, p, va->pv_name);
        }
        if (!kept && pending++ == 0)
            *first = va->meta.name;
    }
    return pending;
}

/* Sets the claim's VolumesDetached condition, writing it only when it changes. */
static int set_volumes_detached(ns_engine *e, ns_nodeclaim *claim, const char *status, const char *reason)
{
    const ns_condition *c = ns_conditions_get(&claim->conditions, NS_COND_VOLUMES_DETACHED);
    if (c && strcmp(c->status, status) == 0 && strcmp(c->reason ? c->reason : "", reason) == 0)
        return NS_OK;
    if (ns_conditions_set(&claim->conditions, NS_COND_VOLUMES_DETACHED, status, reason, reason, ns_clock_now_ms()) < 0)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory setting VolumesDetached on nodeclaim %s", claim->meta.name);
    return e->writes.ops->update_nodeclaim(e->writes.ctx, claim);
}

/* Karpenter's awaitVolumeDetachment. *done when no attachment holds the node, or its termination time has come. */
static int await_volume_detachment(ns_engine *e, ns_nodeclaim *claim, const ns_node *n, bool *done)
{
    int64_t now = ns_clock_now_ms(), end;
    const char *first = NULL;
    size_t pending = pending_attachments(e, n, now, &first);
    *done = true;
    if (pending == 0)
        return set_volumes_detached(e, claim, "True", "VolumesDetached");
    if (ns_claim_termination_end(claim, &end) && now >= end)
        return set_volumes_detached(e, claim, "False", "TerminationGracePeriodElapsed");
    *done = false;
    const ns_condition *c = ns_conditions_get(&claim->conditions, NS_COND_VOLUMES_DETACHED);
    if (!c || strcmp(c->status, "Unknown") != 0) {
        char count[24];
        snprintf(count, sizeof(count), "%zu", pending);
        ns_log(NS_LOG_INFO, "node.termination", "awaiting volume detachment", "NodeClaim", claim->meta.name, "Node",
               n->meta.name, "volumeattachments", count, "first", first, NULL);
    }
    return set_volumes_detached(e, claim, "Unknown", "AwaitingVolumeDetachment");
}

static bool instance_gone(ns_engine *e, const ns_nodeclaim *claim)
{
    ns_instance inst;
    memset(&inst, 0, sizeof(inst));
    inst.struct_size = sizeof(inst);
    int rc = ns_plugin_get_instance(e->plugin, claim->provider_id, &inst);
    return rc == NS_ERR_NOT_FOUND || (rc == NS_OK && inst.state == NS_INSTANCE_TERMINATED);
}

static int terminate_instance(ns_engine *e, ns_nodeclaim *claim, const ns_node *n, bool *ok)
{
    bool already = false;
    *ok = false;
    /* Recorded first, so a retry after a failed call (or a restart) knows the instance is on its way out. */
    if (!ns_conditions_true(&claim->conditions, NS_COND_INSTANCE_TERMINATING)) {
        if (ns_conditions_set(&claim->conditions, NS_COND_INSTANCE_TERMINATING, "True", "InstanceTerminating", NULL,
                              ns_clock_now_ms()) < 0)
            return NS_ERR_INTERNAL;
        int rc = e->writes.ops->update_nodeclaim(e->writes.ctx, claim);
        if (rc < 0)
            return rc;
    }
    int code = ns_plugin_terminate(e->plugin, claim->provider_id, &already);
    ns_engine_busy(e); /* until the instance is gone, termination asks again at every step */
    if (code != NS_OK) {
        /* Retried next step: a throttled or failing terminate must not lose the finalizer. */
        ns_log(NS_LOG_ERROR, "node.termination", "failed terminating instance", "NodeClaim", claim->meta.name,
               "provider-id", claim->provider_id, "error", ns_error_message(), NULL);
        return NS_OK;
    }
    *ok = true;
    if (already)
        return NS_OK;
    return ns_engine_record(e, NS_DECISION_TERMINATED_INSTANCE, method_of(claim), NULL, n ? n->meta.name : NULL,
                            claim->meta.name, NULL, claim->provider_id);
}

static int finish(ns_engine *e, ns_nodeclaim *claim)
{
    char name[NS_NAME_MAX], method[64], reason[128];
    const char *r = ns_labels_get(&claim->meta.annotations, NS_ANNOTATION_DISRUPTION_REASON);
    snprintf(name, sizeof(name), "%s", claim->meta.name);
    snprintf(method, sizeof(method), "%s", method_of(claim));
    snprintf(reason, sizeof(reason), "%s", r ? r : "");
    int rc = e->writes.ops->remove_nodeclaim_finalizer(e->writes.ctx, claim, NS_FINALIZER_TERMINATION);
    forget_blocked(e, name);
    return rc < 0 ? rc : ns_engine_record(e, NS_DECISION_DELETED_NODECLAIM, method, reason, NULL, name, NULL, NULL);
}

static int terminate_claim(ns_engine *e, ns_nodeclaim *claim)
{
    ns_node *n = ns_engine_node_of_claim(e, claim);
    bool launched = ns_claim_launched(claim);
    bool gone = launched && instance_gone(e, claim);
    int rc = NS_OK;
    if (n) {
        if ((rc = ns_engine_taint_disrupted(e, n, method_of(claim))) < 0)
            return rc;
        /* An instance the cloud no longer knows is not drained, unless its Node is still Ready: then its kubelet
         * still runs, whatever the cloud says (Karpenter's check, after the node lifecycle controller's). */
        if (!gone || n->ready) {
            bool done;
            if ((rc = start_drain(e, claim)) < 0 || (rc = drain(e, claim, n, &done)) < 0 || !done ||
                (rc = finish_drain(e, claim, &done)) < 0 || !done ||
                (rc = await_volume_detachment(e, claim, n, &done)) < 0 || !done)
                return rc;
        }
    }
    if (launched && !gone) {
        bool ok;
        if ((rc = terminate_instance(e, claim, n, &ok)) < 0 || !ok)
            return rc;
    }
    if (n) {
        char node[NS_NAME_MAX];
        snprintf(node, sizeof(node), "%s", n->meta.name);
        /* Karpenter's node termination controller removes its finalizer once the node is drained and its instance
         * gone; a Node from manifests may carry it (the engine's own do not). Read first: deleting may free n. */
        bool finalizer = ns_meta_has_finalizer(&n->meta, NS_FINALIZER_TERMINATION);
        if ((rc = e->writes.ops->delete_node(e->writes.ctx, n)) < 0 ||
            (finalizer && (rc = e->writes.ops->remove_node_finalizer(e->writes.ctx, n, NS_FINALIZER_TERMINATION)) < 0) ||
            (rc = ns_engine_record(e, NS_DECISION_DELETED_NODE, method_of(claim), NULL, node, claim->meta.name, NULL,
                                   NULL)) < 0)
            return rc;
    }
    return finish(e, claim);
}

static int terminate_if_deleting(ns_engine *e, ns_nodeclaim *claim, void *ctx)
{
    if (ns_claim_deleting(claim) && ns_meta_has_finalizer(&claim->meta, NS_FINALIZER_TERMINATION))
        return terminate_claim(e, claim);
    return NS_OK;
}

int ns_ctl_termination(ns_engine *e)
{
    return ns_engine_each_claim(e, terminate_if_deleting, NULL);
}

static int handover_if_live(ns_engine *e, ns_nodeclaim *claim, void *ctx)
{
    return ns_claim_deleting(claim) ? NS_OK : ns_engine_disruption_handover(e, claim);
}

int ns_ctl_handover(ns_engine *e)
{
    return ns_engine_each_claim(e, handover_if_live, NULL);
}
