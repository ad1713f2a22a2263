/* The cluster-writes layer over the Kubernetes API: each write goes to the server, then into the local cluster. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "controller/cluster_writes_kube.h"
#include "controller/kube_objects.h"
#include "engine/write_jobs.h"
#include "errors/ns_error.h"
#include "kube/kube_writes.h"
#include "model/labels.h"
#include "model/model_util.h"

typedef struct kstore {
    ns_kube_client *c; /* thread-safe */
    ns_mirror *m;
    ns_cluster *cluster;
    ns_kube_writes_stats st;
    /* Node writes run at once (k_concurrently): what they change besides their own Node (the mirror's floors, the
     * cluster's lists, the counters) changes under this lock */
    pthread_mutex_t lock;
} kstore;

static const char *nz(const char *s)
{
    return s ? s : "";
}

static const char *rv_of(const cJSON *obj)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"),
                                                      "resourceVersion");
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Counts a failed write (the error is already recorded) and returns it. */
static int failed(kstore *s, int rc)
{
    pthread_mutex_lock(&s->lock);
    s->st.write_errors++;
    pthread_mutex_unlock(&s->lock);
    return rc;
}

/* The answered resourceVersion as the object's floor in the mirror. */
static void floor_at(kstore *s, ns_mirror_kind kind, const char *ns, const char *name, const cJSON *answer)
{
    pthread_mutex_lock(&s->lock);
    ns_mirror_floor(s->m, kind, ns, name, rv_of(answer));
    pthread_mutex_unlock(&s->lock);
}

/* ---- NodeClaims and Nodes: cluster-scoped objects a finalizer may hold */

/* DELETE of the cluster-scoped object meta names, which is then deleting. 1 when it is gone (the API server no longer
 * has it, or no finalizer holds it): it has left the mirror and the caller removes it from the cluster; 0 while
 * finalizers hold it; or the error. */
static int delete_object(kstore *s, const ns_kube_resource *r, ns_mirror_kind kind, ns_meta *meta,
                         const ns_kube_delete_opts *o)
{
    long status = 0;
    int rc = ns_kube_delete(s->c, r, NULL, meta->name, o, &status);
    if (rc < 0 && status != 404)
        return failed(s, rc);
    ns_error_clear();
    if (!meta->deletion_ms)
        meta->deletion_ms = ns_clock_now_ms();
    if (meta->n_finalizers && status != 404)
        return 0;
    ns_mirror_gone(s->m, kind, NULL, meta->name);
    return 1;
}

/* Removes finalizer from the cluster-scoped object meta names. 1 when that was the last one of a deleting object:
 * it has left the mirror and the caller removes it from the cluster; 0 otherwise; or the error. */
static int remove_finalizer(kstore *s, const ns_kube_resource *r, ns_mirror_kind kind, ns_meta *meta,
                            const char *finalizer)
{
    int rc = ns_kube_remove_finalizer(s->c, r, NULL, meta->name, finalizer);
    if (rc < 0)
        return failed(s, rc);
    ns_meta_remove_finalizer(meta, finalizer);
    if (!meta->deletion_ms || meta->n_finalizers)
        return 0;
    ns_mirror_gone(s->m, kind, NULL, meta->name);
    return 1;
}

/* ---- NodeClaims */

/* The claim's owner: its pool, or the v1alpha5 Provisioner the pool was converted from. */
static int claim_owner(kstore *s, const ns_nodeclaim *claim, char *uid, size_t len, ns_kube_owner *out)
{
    const char *pool = ns_labels_get(&claim->meta.labels, NS_LABEL_NODEPOOL);
    if (!pool)
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "creating NodeClaim %s: no %s label", nz(claim->meta.name),
                       NS_LABEL_NODEPOOL);
    const ns_nodepool *np = ns_cluster_find_nodepool(s->cluster, pool);
    bool provisioner = np && np->converted_from_provisioner;
    *out = (ns_kube_owner){.api_version = provisioner ? "karpenter.sh/v1alpha5" : "karpenter.sh/v1",
                           .kind = provisioner ? "Provisioner" : "NodePool", .name = pool, .uid = uid};
    return ns_mirror_uid(s->m, provisioner ? NS_MIRROR_PROVISIONER : NS_MIRROR_NODEPOOL, NULL, pool, uid, len);
}

static int k_create_nodeclaim(void *ctx, ns_nodeclaim *claim)
{
    kstore *s = ctx;
    ns_kube_owner owner = {0};
    char uid[128];
    cJSON *obj = NULL, *out = NULL, *status = NULL, *after = NULL;
    int rc = claim_owner(s, claim, uid, sizeof(uid), &owner);
    const char *pool = owner.name;
    if (rc == 0 && !(obj = ns_kube_nodeclaim_json(claim, &owner)))
        rc = NS_ERR_INTERNAL;
    if (rc == 0)
        rc = ns_kube_create(s->c, &NS_KUBE_NODECLAIMS, NULL, obj, NULL, &out);
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(out, "metadata");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(meta, "name");
    if (rc == 0 && !cJSON_IsString(name))
        rc = NS_FAIL(NS_ERR_INTERNAL, "creating a NodeClaim of NodePool %s: the answer has no metadata.name", pool);
    if (rc == 0) {
        char *server_name = ns_strdup(name->valuestring);
        if (!server_name)
            rc = NS_ERR_INTERNAL;
        else {
            free(claim->meta.name);
            claim->meta.name = server_name;
        }
    }
    /* the conditions' observedGeneration is the generation the API server gave the new claim */
    const cJSON *generation = cJSON_GetObjectItemCaseSensitive(meta, "generation");
    if (rc == 0 && cJSON_IsNumber(generation))
        claim->meta.generation = (int64_t)generation->valuedouble;
    if (rc == 0 && !(status = ns_kube_nodeclaim_status_json(claim)))
        rc = NS_ERR_INTERNAL;
    /* status is a subresource: the create ignores it */
    if (rc == 0)
        rc = ns_kube_patch(s->c, &NS_KUBE_NODECLAIMS, NULL, claim->meta.name, "status", NS_KUBE_MERGE_PATCH, status,
                           NULL, NULL, &after);
    if (rc == 0) {
        const cJSON *ct = cJSON_GetObjectItemCaseSensitive(meta, "creationTimestamp");
        if (!cJSON_IsString(ct) || ns_clock_parse_rfc3339(ct->valuestring, &claim->meta.creation_ms) < 0)
            claim->meta.creation_ms = ns_clock_now_ms();
        floor_at(s, NS_MIRROR_NODECLAIM, NULL, claim->meta.name, after);
        s->st.nodeclaims_created++;
    }
    cJSON_Delete(obj);
    cJSON_Delete(status);
    cJSON_Delete(out);
    cJSON_Delete(after);
    if (rc < 0) {
        ns_nodeclaim_free(claim);
        return failed(s, rc);
    }
    return ns_cluster_add_nodeclaim(s->cluster, claim);
}

/* Merge-patch entries for a string map: keys whose value differs, and null for keys the object no longer has. 0 with
 * *changed telling whether anything differs, or NS_ERR_INTERNAL. */
static int map_patch(const cJSON *current, const ns_labels *want, cJSON *patch, const char *key, bool *changed)
{
    cJSON *m = cJSON_CreateObject();
    if (!m)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory building a patch");
    size_t n = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, current)
        if (it->string && !ns_labels_get(want, it->string) && (n++, !cJSON_AddNullToObject(m, it->string)))
            goto oom;
    for (size_t i = 0; i < want->n; i++) {
        const cJSON *cur = cJSON_GetObjectItemCaseSensitive(current, want->items[i].key);
        if (cJSON_IsString(cur) && strcmp(cur->valuestring, nz(want->items[i].value)) == 0)
            continue;
        n++;
        if (!cJSON_AddStringToObject(m, want->items[i].key, nz(want->items[i].value)))
            goto oom;
    }
    if (!n) {
        cJSON_Delete(m);
        return 0;
    }
    *changed = true;
    if (!cJSON_AddItemToObject(patch, key, m))
        goto oom;
    return 0;
oom:
    cJSON_Delete(m);
    return NS_FAIL(NS_ERR_INTERNAL, "out of memory building a patch");
}

static bool same_strings(const cJSON *list, char *const *v, size_t n)
{
    if ((size_t)cJSON_GetArraySize(list) != n)
        return false;
    size_t i = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, list)
        if (!cJSON_IsString(it) || strcmp(it->valuestring, v[i++]) != 0)
            return false;
    return true;
}

/* read-modify-patch of a claim's metadata (labels, annotations, finalizers) */
static int claim_meta_patch(void *ud, const cJSON *current, cJSON **patch)
{
    const ns_meta *want = ud;
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(current, "metadata");
    cJSON *p = cJSON_CreateObject(), *m = cJSON_AddObjectToObject(p, "metadata");
    bool changed = false;
    int rc = m ? 0 : NS_FAIL(NS_ERR_INTERNAL, "out of memory building a patch");
    if (rc == 0)
        rc = map_patch(cJSON_GetObjectItemCaseSensitive(meta, "labels"), &want->labels, m, "labels", &changed);
    if (rc == 0)
        rc = map_patch(cJSON_GetObjectItemCaseSensitive(meta, "annotations"), &want->annotations, m, "annotations",
                       &changed);
    if (rc == 0 && !same_strings(cJSON_GetObjectItemCaseSensitive(meta, "finalizers"), want->finalizers,
                                 want->n_finalizers)) {
        changed = true;
        if (!cJSON_AddItemToObject(m, "finalizers", ns_model_strings_json(want->finalizers, want->n_finalizers)))
            rc = NS_ERR_INTERNAL;
    }
    if (rc < 0 || !changed) {
        cJSON_Delete(p);
        return rc < 0 ? rc : 1;
    }
    *patch = p;
    return 0;
}

static int k_update_nodeclaim(void *ctx, ns_nodeclaim *claim)
{
    kstore *s = ctx;
    cJSON *out = NULL, *status = ns_kube_nodeclaim_status_json(claim);
    int rc = status ? 0 : NS_ERR_INTERNAL;
    if (rc == 0)
        rc = ns_kube_patch_retry(s->c, &NS_KUBE_NODECLAIMS, NULL, claim->meta.name, NULL, claim_meta_patch,
                                 &claim->meta, NULL, NULL);
    if (rc == 0)
        rc = ns_kube_patch(s->c, &NS_KUBE_NODECLAIMS, NULL, claim->meta.name, "status", NS_KUBE_MERGE_PATCH, status,
                           NULL, NULL, &out);
    if (rc == 0)
        floor_at(s, NS_MIRROR_NODECLAIM, NULL, claim->meta.name, out);
    cJSON_Delete(status);
    cJSON_Delete(out);
    return rc < 0 ? failed(s, rc) : 0;
}

static int k_delete_nodeclaim(void *ctx, ns_nodeclaim *claim)
{
    kstore *s = ctx;
    char uid[128];
    ns_kube_delete_opts o = {.grace_period_s = -1};
    if (ns_mirror_uid(s->m, NS_MIRROR_NODECLAIM, NULL, claim->meta.name, uid, sizeof(uid)) == 0)
        o.uid = uid;
    ns_error_clear();
    int rc = delete_object(s, &NS_KUBE_NODECLAIMS, NS_MIRROR_NODECLAIM, &claim->meta, &o);
    return rc == 1 ? ns_cluster_remove_nodeclaim(s->cluster, claim) : rc;
}

static int k_remove_nodeclaim_finalizer(void *ctx, ns_nodeclaim *claim, const char *finalizer)
{
    kstore *s = ctx;
    int rc = remove_finalizer(s, &NS_KUBE_NODECLAIMS, NS_MIRROR_NODECLAIM, &claim->meta, finalizer);
    return rc == 1 ? ns_cluster_remove_nodeclaim(s->cluster, claim) : rc;
}

/* ---- Nodes */

static int k_create_node(void *ctx, ns_node *node)
{
    kstore *s = ctx;
    cJSON *obj = ns_kube_node_json(node), *status = ns_kube_node_status_json(node, ns_clock_now_ms());
    cJSON *out = NULL, *after = NULL;
    int rc = obj && status ? 0 : NS_ERR_INTERNAL;
    if (rc == 0)
        rc = ns_kube_create(s->c, &NS_KUBE_NODES, NULL, obj, NULL, &out);
    if (rc == 0)
        rc = ns_kube_patch(s->c, &NS_KUBE_NODES, NULL, node->meta.name, "status", NS_KUBE_STRATEGIC_PATCH, status,
                           NULL, NULL, &after);
    if (rc == 0) {
        node->meta.creation_ms = ns_clock_now_ms();
        floor_at(s, NS_MIRROR_NODE, NULL, node->meta.name, after);
    }
    cJSON_Delete(obj);
    cJSON_Delete(status);
    cJSON_Delete(out);
    cJSON_Delete(after);
    if (rc < 0) {
        ns_node_free(node);
        return failed(s, rc);
    }
    pthread_mutex_lock(&s->lock);
    rc = ns_cluster_add_node(s->cluster, node);
    pthread_mutex_unlock(&s->lock);
    return rc;
}

typedef struct taint_edit {
    const ns_taint *add;       /* or NULL */
    const char *key, *effect;  /* remove */
} taint_edit;

static bool taint_is(const cJSON *t, const char *key, const char *effect)
{
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(t, "key"), *e = cJSON_GetObjectItemCaseSensitive(t, "effect");
    return cJSON_IsString(k) && strcmp(k->valuestring, key) == 0 &&
           (!effect || (cJSON_IsString(e) && strcmp(e->valuestring, effect) == 0));
}

/* read-modify-patch of spec.taints: taints others added (the node lifecycle controller's) stay */
static int taints_patch(void *ud, const cJSON *current, cJSON **patch)
{
    const taint_edit *ed = ud;
    const cJSON *taints = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(current, "spec"), "taints");
    const char *key = ed->add ? ed->add->key : ed->key, *effect = ed->add ? ed->add->effect : ed->effect;
    cJSON *p = cJSON_CreateObject(), *spec = cJSON_AddObjectToObject(p, "spec");
    cJSON *list = spec ? cJSON_AddArrayToObject(spec, "taints") : NULL;
    if (!list) {
        cJSON_Delete(p);
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory building a taint patch");
    }
    bool found = false;
    const cJSON *t;
    cJSON_ArrayForEach(t, taints) {
        if (taint_is(t, key, effect)) {
            found = true;
            if (!ed->add)
                continue;
        }
        cJSON_AddItemToArray(list, cJSON_Duplicate(t, true));
    }
    if (ed->add && found) {
        /* replace its value: drop the old entry, append the new */
        cJSON *it = list->child;
        while (it && !taint_is(it, key, effect))
            it = it->next;
        cJSON_Delete(cJSON_DetachItemViaPointer(list, it));
    }
    if (!ed->add && !found) {
        cJSON_Delete(p);
        return 1;
    }
    if (ed->add) {
        cJSON *one = ns_model_taints_json(ed->add, 1);
        cJSON *item = one ? cJSON_DetachItemFromArray(one, 0) : NULL;
        cJSON_Delete(one);
        if (!item) {
            cJSON_Delete(p);
            return NS_FAIL(NS_ERR_INTERNAL, "out of memory building a taint patch");
        }
        cJSON_AddItemToArray(list, item);
    }
    *patch = p;
    return 0;
}

static int node_patch_retry(kstore *s, ns_node *node, const taint_edit *ed)
{
    cJSON *out = NULL;
    int rc = ns_kube_patch_retry(s->c, &NS_KUBE_NODES, NULL, node->meta.name, NULL, taints_patch, (void *)ed, NULL,
                                 &out);
    if (rc == 0 && out)
        floor_at(s, NS_MIRROR_NODE, NULL, node->meta.name, out);
    cJSON_Delete(out);
    return rc < 0 ? failed(s, rc) : 0;
}

static int k_add_node_taint(void *ctx, ns_node *node, const ns_taint *taint)
{
    kstore *s = ctx;
    taint_edit ed = {.add = taint};
    int rc = node_patch_retry(s, node, &ed);
    if (rc == 0 && (rc = ns_taints_put(&node->taints, &node->n_taints, taint)) < 0)
        ns_error_prefix("tainting the mirror of node %s: ", node->meta.name);
    return rc;
}

static int k_remove_node_taint(void *ctx, ns_node *node, const char *key, const char *effect)
{
    kstore *s = ctx;
    taint_edit ed = {.key = key, .effect = effect};
    int rc = node_patch_retry(s, node, &ed);
    if (rc == 0)
        ns_taints_remove(node->taints, &node->n_taints, key, effect);
    return rc;
}

static int node_merge(kstore *s, ns_node *node, const char *sub, const char *type, cJSON *patch)
{
    cJSON *out = NULL;
    int rc = patch ? ns_kube_patch(s->c, &NS_KUBE_NODES, NULL, node->meta.name, sub, type, patch, NULL, NULL, &out)
                   : NS_FAIL(NS_ERR_INTERNAL, "out of memory building a patch of node %s", node->meta.name);
    if (rc == 0)
        floor_at(s, NS_MIRROR_NODE, NULL, node->meta.name, out);
    cJSON_Delete(out);
    cJSON_Delete(patch);
    return rc < 0 ? failed(s, rc) : 0;
}

/* One key of metadata.labels or metadata.annotations (field), by merge patch; value NULL removes it. */
static int set_node_map(kstore *s, ns_node *node, const char *field, ns_labels *map, const char *key, const char *value)
{
    cJSON *p = cJSON_CreateObject(), *m = cJSON_AddObjectToObject(p, "metadata");
    cJSON *l = m ? cJSON_AddObjectToObject(m, field) : NULL;
    if (l && !(value ? cJSON_AddStringToObject(l, key, value) : cJSON_AddNullToObject(l, key)))
        l = NULL;
    if (!l) {
        cJSON_Delete(p);
        p = NULL;
    }
    int rc = node_merge(s, node, NULL, NS_KUBE_MERGE_PATCH, p);
    return rc < 0 ? rc : ns_labels_assign(map, key, value);
}

static int k_set_node_label(void *ctx, ns_node *node, const char *key, const char *value)
{
    return set_node_map(ctx, node, "labels", &node->meta.labels, key, value);
}

static int k_set_node_annotation(void *ctx, ns_node *node, const char *key, const char *value)
{
    return set_node_map(ctx, node, "annotations", &node->meta.annotations, key, value);
}

static int k_set_node_unschedulable(void *ctx, ns_node *node, bool unschedulable)
{
    kstore *s = ctx;
    cJSON *p = cJSON_CreateObject(), *spec = cJSON_AddObjectToObject(p, "spec");
    if (!spec || !cJSON_AddBoolToObject(spec, "unschedulable", unschedulable)) {
        cJSON_Delete(p);
        p = NULL;
    }
    int rc = node_merge(s, node, NULL, NS_KUBE_MERGE_PATCH, p);
    if (rc == 0)
        node->unschedulable = unschedulable;
    return rc;
}

static int k_update_node_status(void *ctx, ns_node *node)
{
    kstore *s = ctx;
    return node_merge(s, node, "status", NS_KUBE_STRATEGIC_PATCH, ns_kube_node_status_json(node, ns_clock_now_ms()));
}

static int k_delete_node(void *ctx, ns_node *node)
{
    kstore *s = ctx;
    ns_kube_delete_opts o = {.grace_period_s = -1};
    int rc = delete_object(s, &NS_KUBE_NODES, NS_MIRROR_NODE, &node->meta, &o);
    return rc == 1 ? ns_cluster_remove_node(s->cluster, node) : rc;
}

static int k_remove_node_finalizer(void *ctx, ns_node *node, const char *finalizer)
{
    kstore *s = ctx;
    int rc = remove_finalizer(s, &NS_KUBE_NODES, NS_MIRROR_NODE, &node->meta, finalizer);
    return rc == 1 ? ns_cluster_remove_node(s->cluster, node) : rc;
}

/* ---- Pods */

static int k_create_pod(void *ctx, ns_pod *pod)
{
    (void)ctx;
    int rc = NS_FAIL(NS_ERR_UNSUPPORTED, "creating pod %s: on a live cluster pods come from their controllers",
                     nz(pod->meta.name));
    ns_pod_free(pod);
    return rc;
}

static int k_bind_pod(void *ctx, ns_pod *pod, const char *node_name)
{
    (void)ctx;
    return NS_FAIL(NS_ERR_UNSUPPORTED, "binding pod %s to %s: on a live cluster kube-scheduler binds pods",
                   nz(pod->meta.name), node_name);
}

static int k_evict_pod(void *ctx, ns_pod *pod, bool voluntary)
{
    kstore *s = ctx;
    (void)voluntary;
    char uid[128];
    const char *ns = pod->meta.namespace_ ? pod->meta.namespace_ : "default";
    bool have_uid = ns_mirror_uid(s->m, NS_MIRROR_POD, ns, pod->meta.name, uid, sizeof(uid)) == 0;
    ns_error_clear();
    ns_kube_evict_result res;
    int rc = ns_kube_evict(s->c, ns, pod->meta.name, have_uid ? uid : NULL, &res);
    if (rc < 0)
        return failed(s, rc);
    switch (res) {
    case NS_KUBE_EVICTED:
        s->st.evictions_ok++;
        pod->meta.deletion_ms = ns_clock_now_ms(); /* its kubelet stops it; the mirror removes it then */
        return 0;
    case NS_KUBE_EVICT_BLOCKED:
        s->st.evictions_blocked++;
        return NS_FAIL(NS_ERR_THROTTLED, "evicting pod %s/%s: a PodDisruptionBudget does not allow it now", ns,
                       pod->meta.name);
    case NS_KUBE_EVICT_GONE: break;
    }
    s->st.evictions_gone++;
    ns_mirror_gone(s->m, NS_MIRROR_POD, ns, pod->meta.name);
    return ns_cluster_remove_pod(s->cluster, pod);
}

static int k_delete_pod(void *ctx, ns_pod *pod, bool voluntary)
{
    kstore *s = ctx;
    char uid[128];
    const char *ns = pod->meta.namespace_ ? pod->meta.namespace_ : "default";
    /* the engine deletes pods outright only when their grace ran out (or their node is lost): no more waiting */
    ns_kube_delete_opts o = {.grace_period_s = voluntary ? -1 : 0};
    if (ns_mirror_uid(s->m, NS_MIRROR_POD, ns, pod->meta.name, uid, sizeof(uid)) == 0)
        o.uid = uid;
    ns_error_clear();
    long status = 0;
    int rc = ns_kube_delete(s->c, &NS_KUBE_PODS, ns, pod->meta.name, &o, &status);
    if (rc < 0 && status != 404 && status != 409)
        return failed(s, rc);
    ns_error_clear();
    ns_mirror_gone(s->m, NS_MIRROR_POD, ns, pod->meta.name);
    return ns_cluster_remove_pod(s->cluster, pod);
}

/* ---- NodePools and node classes: the operator's objects */

static int k_put_nodepool(void *ctx, ns_nodepool *np)
{
    (void)ctx;
    int rc = NS_FAIL(NS_ERR_UNSUPPORTED, "writing NodePool %s: NodePools are the operator's (kubectl apply)",
                     nz(np->meta.name));
    ns_nodepool_free(np);
    return rc;
}

static int k_delete_nodepool(void *ctx, const char *name)
{
    (void)ctx;
    return NS_FAIL(NS_ERR_UNSUPPORTED, "deleting NodePool %s: NodePools are the operator's (kubectl delete)", name);
}

static int k_put_nodeclass(void *ctx, ns_nodeclass_def *def)
{
    (void)ctx;
    int rc = NS_FAIL(NS_ERR_UNSUPPORTED, "writing %s %s: node classes are the operator's (kubectl apply)",
                     nz(def->kind), nz(def->meta.name));
    ns_nodeclass_def_free(def);
    return rc;
}

/* Each write a round trip to the API server: the jobs go out over a few connections at once. */
static int k_concurrently(void *ctx, size_t n, int (*job)(void *arg, size_t i), void *arg)
{
    (void)ctx;
    return ns_write_jobs_run(n, NS_WRITE_JOBS_THREADS, INT64_MAX, job, arg);
}

static void k_destroy(void *ctx)
{
    kstore *s = ctx;
    pthread_mutex_destroy(&s->lock);
    free(s);
}

static const ns_cluster_writes_ops kube_ops = {
    .create_nodeclaim = k_create_nodeclaim,
    .update_nodeclaim = k_update_nodeclaim,
    .delete_nodeclaim = k_delete_nodeclaim,
    .remove_nodeclaim_finalizer = k_remove_nodeclaim_finalizer,
    .create_node = k_create_node,
    .add_node_taint = k_add_node_taint,
    .remove_node_taint = k_remove_node_taint,
    .set_node_label = k_set_node_label,
    .set_node_annotation = k_set_node_annotation,
    .set_node_unschedulable = k_set_node_unschedulable,
    .update_node_status = k_update_node_status,
    .delete_node = k_delete_node,
    .remove_node_finalizer = k_remove_node_finalizer,
    .create_pod = k_create_pod,
    .bind_pod = k_bind_pod,
    .evict_pod = k_evict_pod,
    .delete_pod = k_delete_pod,
    .put_nodepool = k_put_nodepool,
    .delete_nodepool = k_delete_nodepool,
    .put_nodeclass = k_put_nodeclass,
    .concurrently = k_concurrently,
    .destroy = k_destroy,
};

int ns_cluster_writes_kube_new(ns_kube_client *client, ns_mirror *mirror, ns_cluster *cluster,
                               ns_cluster_writes *out)
{
    kstore *s = calloc(1, sizeof(*s));
    if (!s)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory building the Kubernetes writes layer");
    s->c = client;
    s->m = mirror;
    s->cluster = cluster;
    pthread_mutex_init(&s->lock, NULL);
    out->ops = &kube_ops;
    out->ctx = s;
    return 0;
}

void ns_cluster_writes_kube_stats(const ns_cluster_writes *w, ns_kube_writes_stats *out)
{
    kstore *s = w->ctx;
    pthread_mutex_lock(&s->lock);
    *out = s->st;
    pthread_mutex_unlock(&s->lock);
}
