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
 * the next step; karpenter.sh/do-not-disrupt pods are not evicted. Both wait at most until the claim's
 * terminationGracePeriod has run out, after which the remaining pods are deleted.
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

/* Evicts what may go now. *done when no pod is left on the node. */
static int drain(ns_engine *e, ns_nodeclaim *claim, ns_node *n, bool grace_expired, bool *done)
{
    *done = false;
    ns_pod **pods;
    size_t np;
    int rc = ns_engine_pods_on_node(e, n->meta.name, &pods, &np);
    if (rc < 0)
        return rc;
    int group = 4;
    for (size_t i = 0; i < np; i++) {
        if (pod_terminal(pods[i]))
            continue;
        int g = drain_group(pods[i]);
        group = g < group ? g : group;
    }
    if (group == 4) {
        *done = true;
        free(pods);
        return NS_OK;
    }
    /* Collect names first: evictions change the cluster's pod list. */
    char (*refs)[2][256] = calloc(np, sizeof(*refs));
    size_t nrefs = 0;
    if (!refs) {
        free(pods);
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory draining node %s", n->meta.name);
    }
    /* A pod already being deleted (evicted, waiting for its kubelet) is not evicted again; the node waits for it
     * until the grace period runs out. */
    for (size_t i = 0; i < np; i++)
        if (!pod_terminal(pods[i]) && (grace_expired || (!pods[i]->meta.deletion_ms && drain_group(pods[i]) == group))) {
            snprintf(refs[nrefs][0], 256, "%s", pods[i]->meta.namespace_ ? pods[i]->meta.namespace_ : "default");
            snprintf(refs[nrefs][1], 256, "%s", pods[i]->meta.name);
            nrefs++;
        }
    free(pods);
    for (size_t i = 0; rc == NS_OK && i < nrefs; i++) {
        ns_pod *pod = ns_cluster_find_pod(e->cluster, refs[i][0], refs[i][1]);
        if (!pod)
            continue;
        char ref[300];
        ns_engine_pod_ref(pod, ref, sizeof(ref));
        if (grace_expired) {
            rc = e->writes.ops->delete_pod(e->writes.ctx, pod, false);
            if (rc == NS_OK)
                rc = ns_engine_record(e, NS_DECISION_EVICTED_POD, "forced deletion",
                                      "terminationGracePeriod expired", n->meta.name, claim->meta.name, ref, NULL);
            continue;
        }
        if (ns_pod_do_not_disrupt(pod, ns_clock_now_ms())) {
            rc = blocked(e, claim, n, pod, "pod is annotated karpenter.sh/do-not-disrupt");
            continue;
        }
        rc = e->writes.ops->evict_pod(e->writes.ctx, pod, true);
        if (rc == NS_ERR_THROTTLED)
            rc = blocked(e, claim, n, pod, ns_error_message());
        else if (rc == NS_OK)
            rc = ns_engine_record(e, NS_DECISION_EVICTED_POD, "eviction", method_of(claim), n->meta.name,
                                  claim->meta.name, ref, NULL);
    }
    free(refs);
    if (rc == NS_OK) {
        /* Done when nothing is left; the next group starts at the next step otherwise. */
        ns_pod **left;
        size_t nl;
        if ((rc = ns_engine_pods_on_node(e, n->meta.name, &left, &nl)) == NS_OK) {
            size_t live = 0;
            for (size_t i = 0; i < nl; i++)
                live += !pod_terminal(left[i]);
            *done = live == 0;
            free(left);
        }
    }
    return rc;
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
    int64_t now = ns_clock_now_ms();
    ns_node *n = ns_engine_node_of_claim(e, claim);
    bool launched = ns_claim_launched(claim);
    bool gone = launched && instance_gone(e, claim);
    bool grace_expired = claim->termination_grace_period_ms >= 0 &&
                         now >= ns_saturating_add(claim->meta.deletion_ms, claim->termination_grace_period_ms);
    int rc = NS_OK;
    if (n) {
        if ((rc = ns_engine_taint_disrupted(e, n, method_of(claim))) < 0)
            return rc;
        /* An instance the cloud no longer knows is not drained, unless its Node is still Ready: then its kubelet
         * still runs, whatever the cloud says (Karpenter's check, after the node lifecycle controller's). */
        bool done = gone && !n->ready;
        if (!done && (rc = drain(e, claim, n, grace_expired, &done)) < 0)
            return rc;
        if (!done)
            return NS_OK;
    }
    if (launched && !gone) {
        bool ok;
        if ((rc = terminate_instance(e, claim, n, &ok)) < 0 || !ok)
            return rc;
    }
    if (n) {
        char node[NS_NAME_MAX];
        snprintf(node, sizeof(node), "%s", n->meta.name);
        if ((rc = e->writes.ops->delete_node(e->writes.ctx, n)) < 0 ||
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
