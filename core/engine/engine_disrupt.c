/*
 * Carrying out a disruption decision (the disruption controller's orchestration queue, kept in the objects): taint
 * the candidates, launch the replacements, and once every replacement is initialized hand the candidates to
 * termination; abandon the decision (untaint) when a replacement fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "context/ns_ctx.h"
#include "engine/engine_internal.h"
#include "errors/ns_error.h"
#include "model/model_util.h"

static const ns_taint disrupted_taint = {NS_TAINT_DISRUPTED_KEY, NULL, NS_EFFECT_NO_SCHEDULE};

static bool node_tainted(const ns_node *n)
{
    for (size_t i = 0; i < n->n_taints; i++)
        if (ns_taint_matches(&n->taints[i], &disrupted_taint))
            return true;
    return false;
}

int ns_engine_taint_disrupted(ns_engine *e, ns_node *n, const char *method)
{
    if (node_tainted(n))
        return NS_OK;
    int rc = e->writes.ops->add_node_taint(e->writes.ctx, n, &disrupted_taint);
    const ns_nodeclaim *claim = ns_engine_claim_of_node(e, n);
    return rc < 0 ? rc
                  : ns_engine_record(e, NS_DECISION_TAINTED_NODE, method, NULL, n->meta.name,
                                     claim ? claim->meta.name : NULL, NULL, "karpenter.sh/disrupted:NoSchedule");
}

static int validate(ns_engine *e, const ns_disruption_request *req)
{
    if (!req || !req->method || !req->reason || req->n_nodeclaims == 0 || (req->n_replacements && !req->replacements))
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "disrupting: method, reason and at least one candidate are required");
    for (size_t i = 0; i < req->n_nodeclaims; i++) {
        const char *name = req->nodeclaims[i];
        const ns_nodeclaim *claim = name ? ns_cluster_find_nodeclaim(e->cluster, name) : NULL;
        if (!claim)
            return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "disrupting (%s): nodeclaim %s does not exist", req->method,
                           name ? name : "(null)");
        if (!ns_claim_launched(claim) || ns_claim_deleting(claim) ||
            ns_labels_get(&claim->meta.annotations, NS_ANNOTATION_DISRUPTION_METHOD))
            return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "disrupting (%s): nodeclaim %s is %s", req->method, name,
                           !ns_claim_launched(claim) ? "not launched" : "already being disrupted or deleted");
        const ns_node *n = ns_engine_node_of_claim(e, claim);
        bool pods_may_block = !req->forceful && !(req->eventual && claim->termination_grace_period_ms >= 0);
        for (size_t p = 0; n && pods_may_block && p < e->cluster->n_pods; p++) {
            const ns_pod *pod = e->cluster->pods[p];
            if (ns_pod_do_not_disrupt(pod, ns_clock_now_ms()) && pod->node_name && strcmp(pod->node_name, n->meta.name) == 0)
                return NS_FAIL(NS_ERR_INVALID_ARGUMENT,
                               "disrupting (%s): nodeclaim %s runs pod %s/%s, annotated karpenter.sh/do-not-disrupt",
                               req->method, name, pod->meta.namespace_ ? pod->meta.namespace_ : "default",
                               pod->meta.name);
        }
    }
    return NS_OK;
}

static int append(char *buf, size_t len, const char *item)
{
    size_t used = strlen(buf);
    int w = snprintf(buf + used, len - used, "%s%s", used ? "," : "", item);
    return w < 0 || (size_t)w >= len - used ? NS_FAIL(NS_ERR_INTERNAL, "disrupting: name list too long") : 0;
}

/* Deletes the replacements named in the comma-separated list that exist and are not deleting yet, but `keep`. */
static int delete_replacements(ns_engine *e, const char *names, const char *keep, const char *method,
                               const char *reason)
{
    char list[4096], *save = NULL;
    snprintf(list, sizeof(list), "%s", names);
    int rc = NS_OK;
    for (char *name = strtok_r(list, ",", &save); name && rc == NS_OK; name = strtok_r(NULL, ",", &save)) {
        ns_nodeclaim *r = ns_cluster_find_nodeclaim(e->cluster, name);
        if (r && !ns_claim_deleting(r) && (!keep || strcmp(name, keep) != 0))
            rc = ns_engine_delete_claim(e, r, method, reason);
    }
    return rc;
}

static int engine_disrupt(ns_engine *e, const ns_disruption_request *req, char **replacement_names)
{
    if (replacement_names)
        *replacement_names = NULL;
    int rc = validate(e, req);
    if (rc < 0)
        return rc;
    size_t cap = 64 + (req->n_replacements + req->n_nodeclaims) * NS_NAME_MAX;
    char *repl = calloc(1, cap), *claims = calloc(1, cap), *nodes = calloc(1, cap);
    if (!repl || !claims || !nodes) {
        rc = NS_FAIL(NS_ERR_INTERNAL, "out of memory disrupting");
        goto out;
    }
    for (size_t i = 0; rc == NS_OK && i < req->n_replacements; i++) {
        char name[NS_NAME_MAX];
        if ((rc = ns_engine_create_claim(e, &req->replacements[i], true, name)) == NS_OK)
            rc = append(repl, cap, name);
    }
    for (size_t i = 0; rc == NS_OK && i < req->n_nodeclaims; i++) {
        ns_nodeclaim *claim = ns_cluster_find_nodeclaim(e->cluster, req->nodeclaims[i]);
        ns_labels *a = &claim->meta.annotations;
        if (ns_labels_set(a, NS_ANNOTATION_DISRUPTION_METHOD, req->method) < 0 ||
            ns_labels_set(a, NS_ANNOTATION_DISRUPTION_REASON, req->reason) < 0 ||
            (repl[0] && ns_labels_set(a, NS_ANNOTATION_DISRUPTION_REPLACEMENTS, repl) < 0) ||
            (req->forceful && ns_labels_set(a, NS_ANNOTATION_DISRUPTION_FORCEFUL, "true") < 0) ||
            (req->rollback && req->n_replacements > 1 &&
             ns_labels_set(a, NS_ANNOTATION_DISRUPTION_ROLLBACK, "true") < 0) ||
            ns_conditions_set(&claim->conditions, NS_COND_DISRUPTION_REASON, "True", req->reason, req->method,
                              ns_clock_now_ms()) < 0) {
            rc = NS_ERR_INTERNAL;
            break;
        }
        if ((rc = e->writes.ops->update_nodeclaim(e->writes.ctx, claim)) < 0 ||
            (rc = append(claims, cap, claim->meta.name)) < 0)
            break;
        ns_node *n = ns_engine_node_of_claim(e, claim);
        if (n && ((rc = append(nodes, cap, n->meta.name)) < 0 || (rc = ns_engine_taint_disrupted(e, n, req->method)) < 0))
            break;
    }
    if (rc == NS_OK) {
        char detail[1200];
        snprintf(detail, sizeof(detail), "%zu candidate(s), replacements [%s]", req->n_nodeclaims, repl);
        rc = ns_engine_record(e, NS_DECISION_DISRUPTING, req->method, req->reason, nodes, claims, NULL, detail);
    }
    /* Without replacements there is nothing to wait for. */
    for (size_t i = 0; rc == NS_OK && !repl[0] && i < req->n_nodeclaims; i++) {
        ns_nodeclaim *claim = ns_cluster_find_nodeclaim(e->cluster, req->nodeclaims[i]);
        if (claim)
            rc = ns_engine_delete_claim(e, claim, req->method, req->reason);
    }
    if (rc == NS_OK && replacement_names) {
        *replacement_names = repl;
        repl = NULL;
    }
    if (rc != NS_OK && repl && repl[0]) {
        /* Keep the first error; the deletions are a best effort after it. */
        int undo = delete_replacements(e, repl, NULL, req->method, "DisruptionFailed");
        (void)undo;
    }
out:
    free(repl);
    free(claims);
    free(nodes);
    return rc;
}

/* ---- Hand-over, run by the termination controller */

static int abandon(ns_engine *e, ns_nodeclaim *claim, const char *missing)
{
    char why[512];
    snprintf(why, sizeof(why), "replacement nodeclaim %s failed", missing);
    const char *method = ns_labels_get(&claim->meta.annotations, NS_ANNOTATION_DISRUPTION_METHOD);
    char method_copy[64];
    snprintf(method_copy, sizeof(method_copy), "%s", method ? method : "");
    const char *repl = ns_labels_get(&claim->meta.annotations, NS_ANNOTATION_DISRUPTION_REPLACEMENTS);
    const char *rollback = ns_labels_get(&claim->meta.annotations, NS_ANNOTATION_DISRUPTION_ROLLBACK);
    if (repl && rollback && strcmp(rollback, "true") == 0) {
        int rc = delete_replacements(e, repl, missing, method_copy, "DisruptionFailed");
        if (rc < 0)
            return rc;
    }
    ns_labels_remove(&claim->meta.annotations, NS_ANNOTATION_DISRUPTION_METHOD);
    ns_labels_remove(&claim->meta.annotations, NS_ANNOTATION_DISRUPTION_REASON);
    ns_labels_remove(&claim->meta.annotations, NS_ANNOTATION_DISRUPTION_REPLACEMENTS);
    ns_labels_remove(&claim->meta.annotations, NS_ANNOTATION_DISRUPTION_FORCEFUL);
    ns_labels_remove(&claim->meta.annotations, NS_ANNOTATION_DISRUPTION_ROLLBACK);
    ns_conditions_remove(&claim->conditions, NS_COND_DISRUPTION_REASON);
    int rc = e->writes.ops->update_nodeclaim(e->writes.ctx, claim);
    ns_node *n = rc < 0 ? NULL : ns_engine_node_of_claim(e, claim);
    if (rc == NS_OK)
        rc = ns_engine_record(e, NS_DECISION_DISRUPTION_ABORTED, method_copy, why, n ? n->meta.name : NULL,
                              claim->meta.name, NULL, NULL);
    if (rc == NS_OK && n && node_tainted(n) &&
        (rc = e->writes.ops->remove_node_taint(e->writes.ctx, n, NS_TAINT_DISRUPTED_KEY, NS_EFFECT_NO_SCHEDULE)) == 0)
        rc = ns_engine_record(e, NS_DECISION_UNTAINTED_NODE, method_copy, why, n->meta.name, claim->meta.name, NULL,
                              "karpenter.sh/disrupted:NoSchedule");
    return rc;
}

int ns_engine_disruption_handover(ns_engine *e, ns_nodeclaim *claim)
{
    const char *repl = ns_labels_get(&claim->meta.annotations, NS_ANNOTATION_DISRUPTION_REPLACEMENTS);
    const char *method = ns_labels_get(&claim->meta.annotations, NS_ANNOTATION_DISRUPTION_METHOD);
    if (!method || ns_claim_deleting(claim))
        return NS_OK;
    char list[4096], *save = NULL;
    snprintf(list, sizeof(list), "%s", repl ? repl : "");
    bool all_ready = true;
    for (char *name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        const ns_nodeclaim *r = ns_cluster_find_nodeclaim(e->cluster, name);
        if (!r || ns_claim_deleting(r))
            return abandon(e, claim, name);
        all_ready = all_ready && ns_claim_initialized(r);
    }
    if (!all_ready)
        return NS_OK;
    char m[64], reason[64];
    const char *rs = ns_labels_get(&claim->meta.annotations, NS_ANNOTATION_DISRUPTION_REASON);
    snprintf(m, sizeof(m), "%s", method);
    snprintf(reason, sizeof(reason), "%s", rs ? rs : "");
    return ns_engine_delete_claim(e, claim, m, reason);
}

/* ---- Entry points: each runs in the engine's context (its clock, logger and error sink). */

int ns_engine_disrupt(ns_engine *e, const ns_disruption_request *req, char **replacement_names)
{
    ns_ctx *previous = ns_ctx_enter(e->ctx);
    int rc = engine_disrupt(e, req, replacement_names);
    ns_ctx_leave(previous);
    return rc;
}
