/* Applying one timeline step's action to a running engine, through the engine's timeline hooks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "engine/engine_internal.h"
#include "simulation/timeline_apply.h"
#include "errors/ns_error.h"
#include "manifest/loader.h"
#include "model/model_util.h"
#include "simulation/engine_sim.h"
#include "simulation/timeline_object_patch.h"
#include "simulation/timeline_pod_status.h"

static bool is_workload(const char *kind)
{
    return strcmp(kind, "Deployment") == 0 || strcmp(kind, "ReplicaSet") == 0 || strcmp(kind, "StatefulSet") == 0 ||
           strcmp(kind, "Job") == 0;
}

/* ---- Moving objects decoded into a scratch cluster into the engine's. The scratch cluster's list entry is cleared
 * before the hand-over, so whatever happens the object has exactly one owner; ns_cluster_free skips NULL entries. */

static int move_pods(ns_engine *e, ns_cluster *scratch)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < scratch->n_pods; i++) {
        ns_pod *pod = scratch->pods[i];
        scratch->pods[i] = NULL;
        rc = ns_engine_add_pod(e, pod);
    }
    return rc;
}

static int move_pdbs(ns_engine *e, ns_cluster *scratch)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < scratch->n_pdbs; i++) {
        ns_pdb *pdb = scratch->pdbs[i];
        scratch->pdbs[i] = NULL;
        /* The engine only reads budgets; a timeline adding one is the user writing to the API server. */
        rc = ns_cluster_add_pdb(ns_engine_cluster(e), pdb);
    }
    return rc;
}

/* The engine only reads VolumeAttachments (the attach-detach controller, or its stand-in, writes them); a timeline
 * adding one is that controller writing to the API server. */
static int move_volume_attachments(ns_engine *e, ns_cluster *scratch)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < scratch->n_volume_attachments; i++) {
        ns_volume_attachment *va = scratch->volume_attachments[i];
        scratch->volume_attachments[i] = NULL;
        va->meta.creation_ms = ns_clock_now_ms();
        rc = ns_cluster_add_volume_attachment(ns_engine_cluster(e), va);
    }
    return rc;
}

/* Warm headroom objects, as a user applies them: PodTemplates first, so a buffer added with its template resolves. A
 * buffer whose template (workload) is not there is kept with no chunk, as Karpenter keeps it not ready. */
static int move_buffers(ns_engine *e, ns_cluster *scratch)
{
    ns_cluster *c = ns_engine_cluster(e);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < scratch->n_pod_templates; i++) {
        ns_pod_template *t = scratch->pod_templates[i];
        scratch->pod_templates[i] = NULL;
        rc = ns_cluster_add_pod_template(c, t);
    }
    for (size_t i = 0; rc == 0 && i < scratch->n_buffers; i++) {
        ns_buffer *b = scratch->buffers[i];
        scratch->buffers[i] = NULL;
        rc = ns_cluster_add_buffer(c, b);
    }
    return rc;
}

/* A NodePool must name a node class the cluster has; it takes the class's kubelet settings as
 * ns_cluster_resolve gives them to pools loaded from manifests. */
static int put_nodepool(ns_engine *e, ns_nodepool *np)
{
    const ns_nodeclass_def *def = ns_cluster_nodeclass_for(ns_engine_cluster(e), &np->nodeclass_ref);
    int rc = 0;
    if (!def)
        rc = NS_FAIL(NS_ERR_INVALID_CONFIG, "NodePool %s: its node class %s %s is not in the cluster", np->meta.name,
                     np->nodeclass_ref.kind, np->nodeclass_ref.name);
    else if (!np->kubelet.present && def->kubelet.present)
        rc = ns_kubelet_config_copy(&def->kubelet, &np->kubelet);
    if (rc < 0) {
        ns_nodepool_free(np);
        return rc;
    }
    return ns_engine_put_nodepool(e, np);
}

static int move_pools_and_classes(ns_engine *e, ns_cluster *scratch)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < scratch->n_nodeclasses; i++) {
        ns_nodeclass_def *def = scratch->nodeclasses[i];
        scratch->nodeclasses[i] = NULL;
        rc = ns_engine_put_nodeclass(e, def);
    }
    for (size_t i = 0; rc == 0 && i < scratch->n_nodepools; i++) {
        ns_nodepool *np = scratch->nodepools[i];
        scratch->nodepools[i] = NULL;
        rc = put_nodepool(e, np);
    }
    return rc;
}

/* A scratch cluster that accepts the node-class kinds the engine's cluster does. */
static ns_cluster *scratch_for(ns_engine *e)
{
    ns_cluster *scratch = ns_cluster_new();
    if (scratch)
        ns_cluster_set_kinds(scratch, ns_engine_cluster(e)->kinds);
    return scratch;
}

/* Decodes a JSON document (one object) into a new scratch cluster. `what` names it in messages. */
static int decode_doc(ns_engine *e, const cJSON *doc, const char *what, ns_cluster **out)
{
    *out = NULL;
    char *text = cJSON_PrintUnformatted(doc);
    ns_cluster *scratch = scratch_for(e);
    int rc = text && scratch ? ns_manifest_load_string(scratch, what, text, strlen(text))
                             : NS_FAIL(NS_ERR_INTERNAL, "out of memory decoding %s", what);
    cJSON_free(text);
    if (rc < 0) {
        ns_cluster_free(scratch);
        return rc;
    }
    *out = scratch;
    return 0;
}

/* ---- Actions */

static int apply_add(ns_engine *e, const ns_tl_step *s, ns_tl_sources *src)
{
    ns_cluster *scratch = scratch_for(e);
    if (!scratch)
        return NS_ERR_INTERNAL;
    int rc = ns_manifest_load_string(scratch, s->manifest_source, s->manifest_text, s->manifest_len);
    if (rc == 0)
        rc = move_pools_and_classes(e, scratch);
    if (rc == 0)
        rc = move_pdbs(e, scratch);
    if (rc == 0)
        rc = move_volume_attachments(e, scratch);
    if (rc == 0)
        rc = move_buffers(e, scratch);
    if (rc == 0)
        rc = move_pods(e, scratch);
    if (rc == 0)
        rc = ns_tl_sources_add_text(src, s->manifest_source, s->manifest_text, s->manifest_len);
    ns_cluster_free(scratch);
    return rc;
}

/* A workload that never had a pod (replicas 0 in its manifest) has nothing the engine's workload controller could
 * copy: its pods are decoded from the manifest with the replica count set, and added. */
static int start_workload(ns_engine *e, const ns_tl_ref *w, int32_t replicas, const ns_tl_sources *src)
{
    const cJSON *doc = ns_tl_sources_get(src, w->kind, w->namespace_, w->name);
    if (!doc)
        return NS_FAIL(NS_ERR_NOT_FOUND, "%s %s/%s is not in the manifests", w->kind, w->namespace_, w->name);
    if (replicas == 0)
        return 0;
    cJSON *copy = cJSON_Duplicate(doc, true);
    cJSON *spec = copy ? cJSON_GetObjectItemCaseSensitive(copy, "spec") : NULL;
    int rc = 0;
    if (!cJSON_IsObject(spec))
        rc = NS_FAIL(NS_ERR_INVALID_CONFIG, "%s %s/%s has no spec", w->kind, w->namespace_, w->name);
    else if (strcmp(w->kind, "Job") != 0) {
        cJSON_DeleteItemFromObjectCaseSensitive(spec, "replicas");
        if (!cJSON_AddNumberToObject(spec, "replicas", replicas))
            rc = NS_ERR_INTERNAL;
    } else {
        /* A Job runs `parallelism` pods at once, capped by the completions left. */
        const cJSON *completions = cJSON_GetObjectItemCaseSensitive(spec, "completions");
        cJSON_DeleteItemFromObjectCaseSensitive(spec, "parallelism");
        cJSON_DeleteItemFromObjectCaseSensitive(spec, "suspend");
        if (!cJSON_AddNumberToObject(spec, "parallelism", replicas))
            rc = NS_ERR_INTERNAL;
        else if (cJSON_IsNumber(completions) && completions->valuedouble < replicas)
            cJSON_SetNumberValue(cJSON_GetObjectItemCaseSensitive(spec, "completions"), replicas);
    }
    char what[600];
    snprintf(what, sizeof(what), "%s %s/%s scaled to %d", w->kind, w->namespace_, w->name, (int)replicas);
    ns_cluster *scratch = NULL;
    if (rc == 0)
        rc = decode_doc(e, copy, what, &scratch);
    if (rc == 0)
        rc = move_pods(e, scratch);
    ns_cluster_free(scratch);
    cJSON_Delete(copy);
    return rc;
}

static int scale(ns_engine *e, const ns_tl_ref *w, int32_t replicas, const ns_tl_sources *src)
{
    int rc = ns_engine_scale_workload(e, w->namespace_, w->kind, w->name, (size_t)replicas);
    if (rc == NS_ERR_NOT_FOUND) {
        ns_error_clear();
        rc = start_workload(e, w, replicas, src);
    }
    return rc;
}

static bool labels_match(const ns_labels *labels, const void *selector)
{
    return ns_label_selector_matches(selector, labels);
}

/* Deleting a workload scales it to zero and forgets its manifest. */
static int delete_workload(ns_engine *e, const ns_tl_ref *w, ns_tl_sources *src)
{
    int rc = scale(e, w, 0, src);
    if (rc == 0)
        ns_tl_sources_remove(src, w->kind, w->namespace_, w->name);
    return rc;
}

static int delete_workloads(ns_engine *e, const ns_tl_step *s, ns_tl_sources *src)
{
    if (s->target.name)
        return delete_workload(e, &s->target, src);
    const char **names = NULL;
    size_t n = 0;
    int rc = ns_tl_sources_select(src, s->target.kind, s->target.namespace_, labels_match, &s->selector, &names, &n);
    char **copies = NULL;
    if (rc == 0 && n && ns_strv_copy((char *const *)names, n, &copies) < 0)
        rc = NS_ERR_INTERNAL;
    free(names);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        ns_tl_ref w = {.kind = s->target.kind, .namespace_ = s->target.namespace_, .name = copies[i]};
        rc = delete_workload(e, &w, src);
    }
    ns_strv_free(copies, n);
    return rc;
}

/* Names of the objects to delete, collected before deleting since deletion reorders the cluster's lists. */
typedef struct names {
    char **v;
    size_t n, cap;
} names;

static int names_add(names *l, const char *s)
{
    char *copy = ns_strdup(s);
    if (!copy || ns_grow((void **)&l->v, &l->cap, l->n + 1, sizeof(char *)) < 0) {
        free(copy);
        return NS_ERR_INTERNAL;
    }
    l->v[l->n++] = copy;
    return 0;
}

static int delete_pods(ns_engine *e, const ns_tl_step *s)
{
    if (s->target.name)
        return ns_engine_delete_pod_after(e, s->target.namespace_, s->target.name, s->grace_ms);
    const ns_cluster *c = ns_engine_cluster(e);
    names l = {0};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < c->n_pods; i++) {
        const ns_pod *p = c->pods[i];
        /* DaemonSet pods follow their nodes; deleting them would only have the DaemonSet put them back. */
        if (ns_engine_pod_is_daemon(p) || strcmp(p->meta.namespace_ ? p->meta.namespace_ : "default",
                                                 s->target.namespace_) != 0)
            continue;
        if (ns_label_selector_matches(&s->selector, &p->meta.labels))
            rc = names_add(&l, p->meta.name);
    }
    for (size_t i = 0; rc == 0 && i < l.n; i++)
        rc = ns_engine_delete_pod_after(e, s->target.namespace_, l.v[i], s->grace_ms);
    ns_strv_free(l.v, l.n);
    return rc;
}

static int delete_nodepools(ns_engine *e, const ns_tl_step *s, ns_tl_sources *src)
{
    const ns_cluster *c = ns_engine_cluster(e);
    names l = {0};
    int rc = 0;
    if (s->target.name)
        rc = names_add(&l, s->target.name);
    for (size_t i = 0; rc == 0 && !s->target.name && i < c->n_nodepools; i++)
        if (ns_label_selector_matches(&s->selector, &c->nodepools[i]->meta.labels))
            rc = names_add(&l, c->nodepools[i]->meta.name);
    for (size_t i = 0; rc == 0 && i < l.n; i++) {
        rc = ns_engine_delete_nodepool(e, l.v[i]);
        ns_tl_sources_remove(src, "NodePool", NULL, l.v[i]);
    }
    ns_strv_free(l.v, l.n);
    return rc;
}

/* Deleting a NodeClaim (or the Node of one) starts its termination, as `kubectl delete` would through the
 * karpenter.sh/termination finalizer. */
static int delete_claims(ns_engine *e, const ns_tl_step *s)
{
    const ns_cluster *c = ns_engine_cluster(e);
    bool nodes = strcmp(s->target.kind, "Node") == 0;
    names l = {0};
    int rc = 0;
    if (s->target.name)
        rc = names_add(&l, s->target.name);
    for (size_t i = 0; rc == 0 && !s->target.name && i < (nodes ? c->n_nodes : c->n_nodeclaims); i++) {
        const ns_meta *m = nodes ? &c->nodes[i]->meta : &c->nodeclaims[i]->meta;
        if (ns_label_selector_matches(&s->selector, &m->labels))
            rc = names_add(&l, m->name);
    }
    char reason[128];
    snprintf(reason, sizeof(reason), "deleted by timeline step %zu", s->index + 1);
    for (size_t i = 0; rc == 0 && i < l.n; i++) {
        ns_nodeclaim *claim = NULL;
        if (nodes) {
            const ns_node *node = ns_cluster_find_node(c, l.v[i]);
            claim = node ? ns_engine_claim_of_node(e, node) : NULL;
            if (!node)
                rc = NS_FAIL(NS_ERR_NOT_FOUND, "no Node named %s", l.v[i]);
            else if (!claim)
                rc = NS_FAIL(NS_ERR_UNSUPPORTED, "Node %s has no NodeClaim; only nodes the engine manages can be "
                                                 "deleted", l.v[i]);
        } else if (!(claim = ns_cluster_find_nodeclaim(c, l.v[i]))) {
            rc = NS_FAIL(NS_ERR_NOT_FOUND, "no NodeClaim named %s", l.v[i]);
        }
        if (rc == 0 && !ns_claim_deleting(claim))
            rc = ns_engine_delete_claim(e, claim, "manual", reason);
    }
    ns_strv_free(l.v, l.n);
    return rc;
}

/* Deleting a VolumeAttachment is the attach-detach controller detaching its volume. */
static int delete_volume_attachments(ns_engine *e, const ns_tl_step *s)
{
    ns_cluster *c = ns_engine_cluster(e);
    if (s->target.name) {
        ns_volume_attachment *va = ns_cluster_find_volume_attachment(c, s->target.name);
        return va ? ns_cluster_remove_volume_attachment(c, va)
                  : NS_FAIL(NS_ERR_NOT_FOUND, "no VolumeAttachment named %s", s->target.name);
    }
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < c->n_volume_attachments;) {
        ns_volume_attachment *va = c->volume_attachments[i];
        if (ns_label_selector_matches(&s->selector, &va->meta.labels))
            rc = ns_cluster_remove_volume_attachment(c, va); /* the list moves down: i stays */
        else
            i++;
    }
    return rc;
}

/* Deleting a CapacityBuffer takes its chunks away at the next round; deleting a PodTemplate leaves the buffers naming
 * it without chunks (Karpenter's PodTemplateNotFound). */
static int delete_buffer_objects(ns_engine *e, const ns_tl_step *s, ns_tl_sources *src)
{
    ns_cluster *c = ns_engine_cluster(e);
    bool buffers = strcmp(s->target.kind, "CapacityBuffer") == 0;
    const char *ns = s->target.namespace_;
    if (s->target.name) {
        void *o = buffers ? (void *)ns_cluster_find_buffer(c, ns, s->target.name)
                          : (void *)ns_cluster_find_pod_template(c, ns, s->target.name);
        if (!o)
            return NS_FAIL(NS_ERR_NOT_FOUND, "no %s named %s/%s", s->target.kind, ns, s->target.name);
        ns_tl_sources_remove(src, s->target.kind, ns, s->target.name);
        return buffers ? ns_cluster_remove_buffer(c, o) : ns_cluster_remove_pod_template(c, o);
    }
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < (buffers ? c->n_buffers : c->n_pod_templates);) {
        const ns_meta *m = buffers ? &c->buffers[i]->meta : &c->pod_templates[i]->meta;
        if (strcmp(m->namespace_ ? m->namespace_ : "default", ns) != 0 ||
            !ns_label_selector_matches(&s->selector, &m->labels)) {
            i++;
            continue;
        }
        ns_tl_sources_remove(src, s->target.kind, ns, m->name);
        rc = buffers ? ns_cluster_remove_buffer(c, c->buffers[i]) /* the list moves down: i stays */
                     : ns_cluster_remove_pod_template(c, c->pod_templates[i]);
    }
    return rc;
}

static int apply_delete(ns_engine *e, const ns_tl_step *s, ns_tl_sources *src)
{
    const char *kind = s->target.kind;
    if (strcmp(kind, "VolumeAttachment") == 0)
        return delete_volume_attachments(e, s);
    if (strcmp(kind, "Pod") == 0)
        return delete_pods(e, s);
    if (is_workload(kind))
        return delete_workloads(e, s, src);
    if (strcmp(kind, "NodePool") == 0)
        return delete_nodepools(e, s, src);
    if (strcmp(kind, "CapacityBuffer") == 0 || strcmp(kind, "PodTemplate") == 0)
        return delete_buffer_objects(e, s, src);
    return delete_claims(e, s);
}

/* The patched CapacityBuffer or PodTemplate replaces the old one; the next round counts the buffers' chunks, of the
 * template's new shape. */
static int replace_buffer_object(ns_engine *e, const ns_tl_ref *r, ns_cluster *scratch)
{
    ns_cluster *c = ns_engine_cluster(e);
    int rc = 0;
    if (strcmp(r->kind, "PodTemplate") == 0) {
        ns_pod_template *old = ns_cluster_find_pod_template(c, r->namespace_, r->name);
        rc = old ? ns_cluster_remove_pod_template(c, old) : 0;
    } else {
        ns_buffer *old = ns_cluster_find_buffer(c, r->namespace_, r->name);
        rc = old ? ns_cluster_remove_buffer(c, old) : 0;
    }
    return rc == 0 ? move_buffers(e, scratch) : rc;
}

static int apply_patch(ns_engine *e, const ns_tl_step *s, ns_tl_sources *src)
{
    const ns_tl_ref *r = &s->target;
    if (tl_object_patch_kind(r->kind))
        return tl_apply_object_patch(e, s);
    const cJSON *doc = ns_tl_sources_get(src, r->kind, r->namespace_, r->name);
    if (!doc && strcmp(r->kind, "NodePool") == 0 && ns_tl_sources_get(src, "Provisioner", NULL, r->name))
        return NS_FAIL(NS_ERR_NOT_FOUND, "NodePool %s was converted from a v1alpha5 Provisioner; patch it as kind "
                                         "Provisioner, in the Provisioner's fields", r->name);
    if (!doc)
        return NS_FAIL(NS_ERR_NOT_FOUND, "%s %s%s%s is not in the manifests", r->kind,
                       r->namespace_ ? r->namespace_ : "", r->namespace_ ? "/" : "", r->name);
    cJSON *patched = cJSON_Duplicate(doc, true);
    if (!patched)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory patching %s %s", r->kind, r->name);
    char what[600];
    snprintf(what, sizeof(what), "%s %s as patched", r->kind, r->name);
    ns_cluster *scratch = NULL;
    int rc = ns_json_merge_patch(&patched, s->patch);
    if (rc == 0)
        rc = decode_doc(e, patched, what, &scratch);
    bool buffer = strcmp(r->kind, "CapacityBuffer") == 0 || strcmp(r->kind, "PodTemplate") == 0;
    if (rc == 0 && !buffer && scratch->n_nodepools + scratch->n_nodeclasses != 1)
        rc = NS_FAIL(NS_ERR_INVALID_CONFIG, "%s: no loaded provider declares kind %s", what, r->kind);
    if (rc == 0 && buffer)
        rc = replace_buffer_object(e, r, scratch);
    else if (rc == 0)
        rc = move_pools_and_classes(e, scratch);
    ns_cluster_free(scratch);
    if (rc == 0)
        return ns_tl_sources_replace(src, r->kind, r->namespace_, r->name, patched);
    cJSON_Delete(patched);
    return rc;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The nodes of the step's NodePool not being deleted, by name, the first `count` of them (all when count is 0). */
static int pool_nodes(ns_engine *e, const ns_tl_step *s, const char *what, names *l)
{
    const ns_cluster *c = ns_engine_cluster(e);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < c->n_nodes; i++) {
        const char *pool = ns_labels_get(&c->nodes[i]->meta.labels, NS_LABEL_NODEPOOL);
        if (pool && strcmp(pool, s->nodepool) == 0 && c->nodes[i]->meta.deletion_ms == 0)
            rc = names_add(l, c->nodes[i]->meta.name);
    }
    if (rc == 0 && l->n == 0)
        rc = NS_FAIL(NS_ERR_NOT_FOUND, "NodePool %s has no nodes to %s", s->nodepool, what);
    if (rc == 0)
        qsort(l->v, l->n, sizeof(char *), cmp_names);
    if (rc == 0 && s->count > 0 && (size_t)s->count < l->n) {
        for (size_t i = (size_t)s->count; i < l->n; i++)
            free(l->v[i]);
        l->n = (size_t)s->count;
    }
    return rc;
}

static int apply_interrupt(ns_engine *e, const ns_tl_step *s)
{
    int64_t deadline = s->deadline_ms ? ns_clock_now_ms() + s->deadline_ms : 0;
    if (s->node)
        return ns_engine_inject_event(e, s->node, s->event, deadline);
    names l = {0};
    int rc = pool_nodes(e, s, "interrupt", &l);
    for (size_t i = 0; rc == 0 && i < l.n; i++)
        rc = ns_engine_inject_event(e, l.v[i], s->event, deadline);
    ns_strv_free(l.v, l.n);
    return rc;
}

static int apply_node_condition(ns_engine *e, const ns_tl_step *s)
{
    if (s->node)
        return ns_engine_set_node_condition(e, s->node, s->cond_type, s->cond_status, s->cond_reason,
                                            s->cond_message);
    names l = {0};
    int rc = pool_nodes(e, s, "set a condition on", &l);
    for (size_t i = 0; rc == 0 && i < l.n; i++)
        rc = ns_engine_set_node_condition(e, l.v[i], s->cond_type, s->cond_status, s->cond_reason, s->cond_message);
    ns_strv_free(l.v, l.n);
    return rc;
}

int tl_apply(ns_engine *e, const ns_timeline *t, const ns_tl_step *s, ns_tl_sources *sources)
{
    int rc = 0;
    switch (s->action) {
    case NS_TL_SCALE:
        rc = scale(e, &s->target, s->replicas, sources);
        break;
    case NS_TL_ADD:
        rc = apply_add(e, s, sources);
        break;
    case NS_TL_DELETE:
        rc = apply_delete(e, s, sources);
        break;
    case NS_TL_PATCH:
        rc = apply_patch(e, s, sources);
        break;
    case NS_TL_INTERRUPT:
        rc = apply_interrupt(e, s);
        break;
    case NS_TL_LAUNCH_FAILURE:
        rc = ns_engine_inject_capacity_fault(e, s->instance_type, s->zone, s->capacity_type, s->clear);
        break;
    case NS_TL_NODE_CONDITION:
        rc = apply_node_condition(e, s);
        break;
    case NS_TL_POD_STATUS:
        rc = tl_apply_pod_status(e, s);
        break;
    case NS_TL_LAUNCH_ERROR:
        rc = ns_engine_inject_launch_error(e, s->launch_error, s->count);
        break;
    case NS_TL_LAUNCH_TIMEOUT:
        rc = ns_engine_inject_launch_timeout(e, s->count);
        break;
    case NS_TL_ADVANCE:
        break;
    }
    if (rc < 0)
        ns_error_prefix("%s:%d: timeline step %zu: %s: ", t->path, s->action_line, s->index + 1,
                        ns_tl_action_name(s->action));
    return rc;
}
