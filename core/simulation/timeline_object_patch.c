/* The `patch` action on Nodes, NodeClaims and Pods (docs/timeline.md, "patch"): their labels and annotations, and a
 * Node's taints and unschedulable flag, as `kubectl label`, `annotate`, `taint` and `cordon` change them at run time.
 * Decoded here from the timeline and applied through the engine's simulation hooks (simulation/engine_sim.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simulation/timeline_object_patch.h"
#include "engine/engine_internal.h"
#include "errors/ns_error.h"
#include "manifest/decoders.h"
#include "model/cluster.h"
#include "model/labels.h"
#include "model/model_util.h"
#include "model/names.h"
#include "simulation/engine_sim.h"
#include "simulation/timeline_pod_status.h"

#define MAX_COUNT 100000

void tl_kvs_free(ns_tl_kv *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++) {
        free(v[i].key);
        free(v[i].value);
    }
    free(v);
}

bool tl_object_patch_kind(const char *kind)
{
    return kind && (strcmp(kind, "Node") == 0 || strcmp(kind, "NodeClaim") == 0 || strcmp(kind, "Pod") == 0);
}

/* Labels the engine derives from the instance or owns through the lifecycle: changing one would make a node
 * disagree with its claim, its offering or its NodePool, which no Kubernetes client does to a Karpenter node. */
static bool engine_owned_label(const char *key)
{
    return ns_label_is_well_known(key) || strcmp(key, NS_LABEL_HOSTNAME) == 0 ||
           strcmp(key, NS_LABEL_REGISTERED) == 0 || strcmp(key, NS_LABEL_INITIALIZED) == 0;
}

static bool has_key(const ns_ynode *map, const char *key)
{
    for (size_t i = 0; map && map->kind == NS_Y_MAP && i < map->n; i++)
        if (strcmp(ns_ymap_key(map, i)->str, key) == 0)
            return true;
    return false;
}

/* metadata.labels or metadata.annotations: each key set to a string, or removed by null. */
static int decode_kvs(tl_ctx *c, const ns_ynode *meta, const char *path, const char *key, bool labels,
                      const char *kind, ns_tl_kv **out, size_t *n)
{
    int rc = 0;
    const ns_ynode *m = ns_dec_child(&c->dec, meta, path, key, NS_Y_MAP, &rc);
    if (!m)
        return rc;
    char p[NS_PATH_MAX], vp[NS_PATH_MAX];
    ns_path_key(p, sizeof(p), path, key);
    if (m->n == 0)
        return ns_dec_fail(&c->dec, m, p, "is empty (name the keys to set, or to remove with null)");
    if (!(*out = calloc(m->n, sizeof(**out))))
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory reading %s", p);
    for (size_t i = 0; i < m->n; i++) {
        const ns_ynode *k = ns_ymap_key(m, i), *v = ns_ymap_value(m, i);
        const char *why = NULL, *s = NULL;
        ns_path_key(vp, sizeof(vp), p, k->str);
        if (!ns_label_key_is_valid(k->str, &why))
            return ns_dec_fail(&c->dec, k, p, "key \"%s\" is invalid: %s", k->str, why);
        if (labels && strcmp(kind, "Pod") != 0 && engine_owned_label(k->str))
            return ns_dec_fail(&c->dec, k, vp, "is set by the engine from the instance and its NodePool; a %s's %s "
                               "cannot be changed", kind, k->str);
        bool null = v->kind == NS_Y_SCALAR && v->type == NS_YS_NULL;
        if (!null && (rc = ns_dec_scalar_string(&c->dec, v, vp, &s)) < 0)
            return rc;
        if (labels && s && !ns_label_value_is_valid(s, &why))
            return ns_dec_fail(&c->dec, v, vp, "label value \"%s\" is invalid: %s", s, why);
        (*out)[i].key = ns_strdup(k->str);
        (*out)[i].value = s ? ns_strdup(s) : NULL;
        *n = i + 1;
        if (!(*out)[i].key || (s && !(*out)[i].value))
            return NS_FAIL(NS_ERR_INTERNAL, "out of memory reading %s", vp);
    }
    return 0;
}

static const char *const node_spec_fields[] = {"taints", "unschedulable", NULL};

/* A Node's spec.taints (replaced whole; [] or null removes them all) and spec.unschedulable. NodeClaim specs are
 * immutable (Karpenter's CRD refuses any change) and a Pod's fields other than metadata are not patched here. */
static int decode_spec(tl_ctx *c, const ns_ynode *v, const char *path, ns_tl_step *s)
{
    int rc = 0;
    const ns_ynode *spec = ns_dec_child(&c->dec, v, path, "spec", NS_Y_MAP, &rc);
    if (!spec)
        return rc;
    char p[NS_PATH_MAX];
    ns_path_key(p, sizeof(p), path, "spec");
    if (strcmp(s->target.kind, "NodeClaim") == 0)
        return ns_dec_fail(&c->dec, spec, p, "a NodeClaim's spec is immutable (Karpenter's CRD refuses a change); "
                           "patch its metadata, or the Node's spec");
    if (strcmp(s->target.kind, "Pod") == 0)
        return ns_dec_fail(&c->dec, spec, p, "a Pod's spec is not patched by a timeline; patch its metadata, or "
                           "delete it and add a new one");
    bool unschedulable = false, has_unschedulable = false;
    if ((rc = ns_dec_fields(&c->dec, spec, p, node_spec_fields)) < 0 ||
        (rc = ns_decode_taints(&c->dec, spec, p, "taints", &s->taints, &s->n_taints)) < 0 ||
        (rc = ns_dec_bool(&c->dec, spec, p, "unschedulable", &unschedulable, &has_unschedulable)) < 0)
        return rc;
    s->set_taints = has_key(spec, "taints");
    s->unschedulable = has_unschedulable ? (unschedulable ? 1 : -1) : 0;
    if (!s->set_taints && !has_unschedulable)
        return ns_dec_fail(&c->dec, spec, p, "has nothing to change (give taints and/or unschedulable)");
    return 0;
}

static const char *const object_patch_fields[] = {"kind",     "namespace", "name", "nodepool", "count",
                                                  "selector", "metadata",  "spec", NULL};
static const char *const meta_fields[] = {"labels", "annotations", NULL};

/* Which objects: one by name; a NodePool's Nodes or NodeClaims (the first `count` by name); the Pods a selector
 * picks. */
static int decode_targets(tl_ctx *c, const ns_ynode *v, const char *path, ns_tl_step *s)
{
    int rc;
    bool has_count = false, pod = strcmp(s->target.kind, "Pod") == 0;
    char p[NS_PATH_MAX];
    if ((rc = ns_dec_string(&c->dec, v, path, "namespace", &s->target.namespace_)) < 0 ||
        (rc = ns_dec_string(&c->dec, v, path, "name", &s->target.name)) < 0 ||
        (rc = ns_dec_string(&c->dec, v, path, "nodepool", &s->nodepool)) < 0 ||
        (rc = ns_dec_int32(&c->dec, v, path, "count", 1, MAX_COUNT, &s->count, &has_count)) < 0 ||
        (rc = ns_decode_label_selector(&c->dec, v, path, "selector", &s->selector)) < 0)
        return rc;
    const char *bad = pod ? (s->nodepool ? "nodepool" : has_count ? "count" : NULL)
                          : (s->target.namespace_ ? "namespace" : s->selector.present ? "selector" : NULL);
    if (bad) {
        ns_path_key(p, sizeof(p), path, bad);
        return ns_dec_fail(&c->dec, ns_ymap_get(v, bad), p, "does not apply to a %s (%s)", s->target.kind,
                           pod ? "pods are picked by name or selector" : "it is cluster-scoped; pick by name or "
                                                                          "nodepool");
    }
    if (pod && !s->target.namespace_ && !(s->target.namespace_ = ns_strdup("default")))
        return NS_ERR_INTERNAL;
    bool by_name = s->target.name != NULL, by_other = pod ? s->selector.present : s->nodepool != NULL;
    if (by_name == by_other)
        return ns_dec_fail(&c->dec, v, path, "give exactly one of \"name\" or \"%s\"", pod ? "selector" : "nodepool");
    if (by_name && !*s->target.name) {
        ns_path_key(p, sizeof(p), path, "name");
        return ns_dec_fail(&c->dec, ns_ymap_get(v, "name"), p, "is empty");
    }
    if (has_count && !s->nodepool)
        return ns_dec_fail(&c->dec, ns_ymap_get(v, "count"), path, "count applies to a nodepool, not to one node");
    return 0;
}

int tl_decode_object_patch(tl_ctx *c, const ns_ynode *v, const char *path, ns_tl_step *s)
{
    int rc;
    if ((rc = ns_dec_fields(&c->dec, v, path, object_patch_fields)) < 0 ||
        (rc = ns_dec_string_required(&c->dec, v, path, "kind", &s->target.kind)) < 0 ||
        (rc = decode_targets(c, v, path, s)) < 0)
        return rc;
    const ns_ynode *meta = ns_dec_child(&c->dec, v, path, "metadata", NS_Y_MAP, &rc);
    if (rc < 0)
        return rc;
    char p[NS_PATH_MAX];
    ns_path_key(p, sizeof(p), path, "metadata");
    if (meta && ((rc = ns_dec_fields(&c->dec, meta, p, meta_fields)) < 0 ||
                 (rc = decode_kvs(c, meta, p, "labels", true, s->target.kind, &s->labels, &s->n_labels)) < 0 ||
                 (rc = decode_kvs(c, meta, p, "annotations", false, s->target.kind, &s->annotations,
                                  &s->n_annotations)) < 0))
        return rc;
    if ((rc = decode_spec(c, v, path, s)) < 0)
        return rc;
    if (!s->n_labels && !s->n_annotations && !s->set_taints && !s->unschedulable)
        return ns_dec_fail(&c->dec, v, path, "has nothing to change (give metadata%s)",
                           strcmp(s->target.kind, "Node") == 0 ? " and/or spec" : "");
    return 0;
}

/* ---- Applying */

/* Names of the objects to patch, collected first: a patched Pod is replaced in the cluster's list. */
typedef struct tl_names {
    char **v;
    size_t n, cap;
} tl_names;

static int names_add(tl_names *l, const char *s)
{
    char *copy = ns_strdup(s);
    if (!copy || ns_grow((void **)&l->v, &l->cap, l->n + 1, sizeof(char *)) < 0) {
        free(copy);
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory listing objects to patch");
    }
    l->v[l->n++] = copy;
    return 0;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The NodePool's Nodes or NodeClaims not being deleted, by name, the first `count` of them (all when 0). */
static int pool_objects(const ns_cluster *c, const ns_tl_step *s, bool nodes, tl_names *l)
{
    int rc = 0;
    size_t n = nodes ? c->n_nodes : c->n_nodeclaims;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const ns_meta *m = nodes ? &c->nodes[i]->meta : &c->nodeclaims[i]->meta;
        const char *pool = ns_labels_get(&m->labels, NS_LABEL_NODEPOOL);
        if (pool && strcmp(pool, s->nodepool) == 0 && m->deletion_ms == 0)
            rc = names_add(l, m->name);
    }
    if (rc == 0 && l->n == 0)
        return NS_FAIL(NS_ERR_NOT_FOUND, "NodePool %s has no %s to patch", s->nodepool, nodes ? "Nodes" : "NodeClaims");
    if (rc == 0)
        qsort(l->v, l->n, sizeof(char *), cmp_names);
    while (rc == 0 && s->count > 0 && l->n > (size_t)s->count)
        free(l->v[--l->n]);
    return rc;
}

static int patch_one(ns_engine *e, const ns_tl_step *s, const char *name)
{
    const char *kind = s->target.kind, *ns = s->target.namespace_;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < s->n_labels; i++)
        rc = ns_engine_set_object_meta(e, kind, ns, name, false, s->labels[i].key, s->labels[i].value);
    for (size_t i = 0; rc == 0 && i < s->n_annotations; i++)
        rc = ns_engine_set_object_meta(e, kind, ns, name, true, s->annotations[i].key, s->annotations[i].value);
    if (rc == 0 && s->set_taints)
        rc = ns_engine_set_node_taints(e, name, s->taints, s->n_taints);
    if (rc == 0 && s->unschedulable)
        rc = ns_engine_set_node_unschedulable(e, name, s->unschedulable > 0);
    return rc;
}

int tl_apply_object_patch(ns_engine *e, const ns_tl_step *s)
{
    if (s->target.name)
        return patch_one(e, s, s->target.name);
    const ns_cluster *c = ns_engine_cluster(e);
    tl_names l = {0};
    int rc = strcmp(s->target.kind, "Pod") == 0
                 ? tl_pod_names(c, s->target.namespace_, &s->selector, &l.v, &l.n)
                 : pool_objects(c, s, strcmp(s->target.kind, "Node") == 0, &l);
    for (size_t i = 0; rc == 0 && i < l.n; i++)
        rc = patch_one(e, s, l.v[i]);
    ns_strv_free(l.v, l.n);
    return rc;
}
