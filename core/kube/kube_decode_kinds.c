/* Decoders for the kinds manifests never decode into a model object (StorageClasses, PVs, PVCs, Leases, and the
 * workload owners, which manifests expand into their pods instead): the JSON goes through manifest/json_tree.h and
 * the manifest decoders' field helpers, so errors read as everywhere else ("API server: KIND NS/NAME: FIELD: why").
 * The API server has validated the schema, so fields nodesmith does not model are ignored; the ones it reads must
 * have their type. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "kube/kube_decode.h"
#include "manifest/decoders.h"
#include "manifest/json_tree.h"
#include "model/lease.h"
#include "model/model_util.h"
#include "model/storage.h"
#include "model/workload.h"

#define SOURCE "API server"

/* Node selector terms at map.key: [{matchExpressions: [...]}] (PV node affinity), or with topology_style the
 * StorageClass form [{matchLabelExpressions: [{key, values}]}] (each an In requirement). */
static int decode_terms(const ns_dec *d, const ns_ynode *map, const char *path, const char *key, bool topology_style,
                        ns_node_selector_term **out, size_t *n)
{
    int rc = 0;
    char base[NS_PATH_MAX], p[NS_PATH_MAX], q[NS_PATH_MAX];
    const ns_ynode *seq = ns_dec_child(d, map, path, key, NS_Y_SEQ, &rc);
    if (!seq || rc < 0)
        return rc;
    ns_path_key(base, sizeof(base), path, key);
    if (seq->n && !(*out = calloc(seq->n, sizeof(**out))))
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory decoding %s", d->object);
    for (size_t i = 0; i < seq->n && rc == 0; i++) {
        ns_node_selector_term *t = &(*out)[i];
        *n = i + 1;
        ns_path_index(p, sizeof(p), base, i);
        if (seq->items[i]->kind != NS_Y_MAP)
            return ns_dec_fail(d, seq->items[i], p, "expected a node selector term");
        if (!topology_style) {
            rc = ns_decode_selector_reqs(d, seq->items[i], p, "matchExpressions", NS_OPS_NODE_AFFINITY, &t->exprs,
                                         &t->n_exprs);
            if (rc == 0)
                rc = ns_decode_selector_reqs(d, seq->items[i], p, "matchFields", NS_OPS_NODE_AFFINITY, &t->fields,
                                             &t->n_fields);
            continue;
        }
        const ns_ynode *exprs = ns_dec_child(d, seq->items[i], p, "matchLabelExpressions", NS_Y_SEQ, &rc);
        if (!exprs || rc < 0)
            continue;
        ns_path_key(q, sizeof(q), p, "matchLabelExpressions");
        if (exprs->n && !(t->exprs = calloc(exprs->n, sizeof(*t->exprs))))
            return NS_FAIL(NS_ERR_INTERNAL, "out of memory decoding %s", d->object);
        for (size_t j = 0; j < exprs->n && rc == 0; j++) {
            char r[NS_PATH_MAX];
            ns_selector_req *req = &t->exprs[j];
            t->n_exprs = j + 1;
            req->op = NS_OP_IN;
            ns_path_index(r, sizeof(r), q, j);
            if (exprs->items[j]->kind != NS_Y_MAP)
                rc = ns_dec_fail(d, exprs->items[j], r, "expected {key, values}");
            else if ((rc = ns_dec_string_required(d, exprs->items[j], r, "key", &req->key)) == 0)
                rc = ns_dec_strings(d, exprs->items[j], r, "values", &req->values, &req->n_values);
        }
    }
    return rc;
}

/* spec.x.storage (a quantity) in bytes; 0 when absent. */
static int decode_storage(const ns_dec *d, const ns_ynode *map, const char *path, const char *key, int64_t *out)
{
    ns_res r = {0};
    int rc = ns_dec_resources(d, map, path, key, &r, NULL);
    *out = ns_res_get(&r, "storage");
    ns_res_free(&r);
    return rc;
}

/* The object's tree, its metadata into *meta and its spec and status (either may be NULL). */
typedef struct parsed {
    ns_jtree *tree;
    ns_dec d;
    const ns_ynode *root, *spec, *status;
} parsed;

static int parse(const cJSON *obj, const char *kind, bool namespaced, ns_meta *meta, parsed *p)
{
    int rc;
    memset(p, 0, sizeof(*p));
    p->d.file = SOURCE;
    snprintf(p->d.object, sizeof(p->d.object), "%s", kind);
    if ((rc = ns_jtree_new(obj, &p->tree)) < 0)
        return rc;
    p->root = ns_jtree_root(p->tree);
    if (p->root->kind != NS_Y_MAP)
        return ns_dec_fail(&p->d, p->root, NULL, "expected a Kubernetes object");
    if ((rc = ns_decode_top_fields(&p->d, p->root, NULL)) < 0 ||
        (rc = ns_decode_meta(&p->d, p->root, kind, namespaced, meta)) < 0)
        return rc;
    p->spec = ns_dec_child(&p->d, p->root, "", "spec", NS_Y_MAP, &rc);
    if (rc == 0)
        p->status = ns_dec_child(&p->d, p->root, "", "status", NS_Y_MAP, &rc);
    return rc;
}

static int decode_storage_class(const cJSON *obj, const char *what, const void *ctx, void **typed)
{
    parsed p;
    ns_storage_class *sc = calloc(1, sizeof(*sc));
    if (!sc)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory decoding %s", what);
    /* a StorageClass keeps its fields at the top level, not under spec */
    static const char *const top[] = {"provisioner", "parameters", "reclaimPolicy", "mountOptions",
                                      "allowVolumeExpansion", "volumeBindingMode", "allowedTopologies", NULL};
    char *mode = NULL;
    int rc = ns_jtree_new(obj, &p.tree);
    if (rc == 0) {
        p.d = (ns_dec){.file = SOURCE};
        snprintf(p.d.object, sizeof(p.d.object), "StorageClass");
        p.root = ns_jtree_root(p.tree);
        if (p.root->kind != NS_Y_MAP)
            rc = ns_dec_fail(&p.d, p.root, NULL, "expected a Kubernetes object");
    }
    if (rc == 0 && (rc = ns_decode_top_fields(&p.d, p.root, top)) == 0 &&
        (rc = ns_decode_meta(&p.d, p.root, "StorageClass", false, &sc->meta)) == 0 &&
        (rc = ns_dec_string_required(&p.d, p.root, "", "provisioner", &sc->provisioner)) == 0 &&
        (rc = ns_dec_string(&p.d, p.root, "", "volumeBindingMode", &mode)) == 0)
        rc = decode_terms(&p.d, p.root, "", "allowedTopologies", true, &sc->allowed_topologies,
                          &sc->n_allowed_topologies);
    if (rc == 0) {
        sc->wait_for_first_consumer = mode && strcmp(mode, "WaitForFirstConsumer") == 0;
        const char *def = ns_labels_get(&sc->meta.annotations, "storageclass.kubernetes.io/is-default-class");
        sc->is_default = def && strcmp(def, "true") == 0;
    }
    free(mode);
    ns_jtree_free(p.tree);
    if (rc < 0) {
        ns_storage_class_free(sc);
        return rc;
    }
    *typed = sc;
    return 0;
}

static int decode_pv(const cJSON *obj, const char *what, const void *ctx, void **typed)
{
    parsed p;
    ns_pv *pv = calloc(1, sizeof(*pv));
    if (!pv)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory decoding %s", what);
    int rc = parse(obj, "PersistentVolume", false, &pv->meta, &p);
    const ns_ynode *aff = NULL, *req = NULL, *csi = NULL, *claim = NULL;
    if (rc == 0 && p.spec) {
        if ((rc = decode_storage(&p.d, p.spec, "spec", "capacity", &pv->capacity_bytes)) == 0)
            rc = ns_dec_string(&p.d, p.spec, "spec", "storageClassName", &pv->storage_class);
        if (rc == 0 && (csi = ns_dec_child(&p.d, p.spec, "spec", "csi", NS_Y_MAP, &rc)) != NULL)
            rc = ns_dec_string(&p.d, csi, "spec.csi", "driver", &pv->csi_driver);
        if (rc == 0 && (claim = ns_dec_child(&p.d, p.spec, "spec", "claimRef", NS_Y_MAP, &rc)) != NULL &&
            (rc = ns_dec_string(&p.d, claim, "spec.claimRef", "namespace", &pv->claim_namespace)) == 0)
            rc = ns_dec_string(&p.d, claim, "spec.claimRef", "name", &pv->claim_name);
        if (rc == 0 && (aff = ns_dec_child(&p.d, p.spec, "spec", "nodeAffinity", NS_Y_MAP, &rc)) != NULL &&
            (req = ns_dec_child(&p.d, aff, "spec.nodeAffinity", "required", NS_Y_MAP, &rc)) != NULL)
            rc = decode_terms(&p.d, req, "spec.nodeAffinity.required", "nodeSelectorTerms", false, &pv->node_affinity,
                              &pv->n_node_affinity);
    }
    if (rc == 0 && p.status)
        rc = ns_dec_string(&p.d, p.status, "status", "phase", &pv->phase);
    ns_jtree_free(p.tree);
    if (rc < 0) {
        ns_pv_free(pv);
        return rc;
    }
    *typed = pv;
    return 0;
}

static int decode_pvc(const cJSON *obj, const char *what, const void *ctx, void **typed)
{
    parsed p;
    ns_pvc *pvc = calloc(1, sizeof(*pvc));
    if (!pvc)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory decoding %s", what);
    int rc = parse(obj, "PersistentVolumeClaim", true, &pvc->meta, &p);
    const ns_ynode *res = NULL;
    if (rc == 0 && p.spec) {
        if ((rc = ns_dec_string(&p.d, p.spec, "spec", "storageClassName", &pvc->storage_class)) == 0)
            rc = ns_dec_string(&p.d, p.spec, "spec", "volumeName", &pvc->volume_name);
        if (rc == 0 && (res = ns_dec_child(&p.d, p.spec, "spec", "resources", NS_Y_MAP, &rc)) != NULL)
            rc = decode_storage(&p.d, res, "spec.resources", "requests", &pvc->request_bytes);
    }
    if (rc == 0 && p.status)
        rc = ns_dec_string(&p.d, p.status, "status", "phase", &pvc->phase);
    ns_jtree_free(p.tree);
    if (rc < 0) {
        ns_pvc_free(pvc);
        return rc;
    }
    *typed = pvc;
    return 0;
}

static int decode_lease(const cJSON *obj, const char *what, const void *ctx, void **typed)
{
    parsed p;
    ns_lease *l = calloc(1, sizeof(*l));
    if (!l)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory decoding %s", what);
    int rc = parse(obj, "Lease", true, &l->meta, &p);
    if (rc == 0 && p.spec && (rc = ns_dec_string(&p.d, p.spec, "spec", "holderIdentity", &l->holder)) == 0 &&
        (rc = ns_dec_int32(&p.d, p.spec, "spec", "leaseDurationSeconds", 0, INT32_MAX, &l->duration_s, NULL)) == 0 &&
        (rc = ns_dec_int32(&p.d, p.spec, "spec", "leaseTransitions", 0, INT32_MAX, &l->transitions, NULL)) == 0 &&
        (rc = ns_decode_time(&p.d, p.spec, "spec", "acquireTime", &l->acquire_ms)) == 0)
        rc = ns_decode_time(&p.d, p.spec, "spec", "renewTime", &l->renew_ms);
    ns_jtree_free(p.tree);
    if (rc < 0) {
        ns_lease_free(l);
        return rc;
    }
    *typed = l;
    return 0;
}

static int decode_workload(const cJSON *obj, const char *kind, void **typed)
{
    parsed p;
    ns_workload *w = calloc(1, sizeof(*w));
    if (!w)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory decoding %s", kind);
    w->kind = kind;
    w->replicas = 1;
    int rc = parse(obj, kind, true, &w->meta, &p);
    if (rc == 0 && p.spec &&
        (rc = ns_dec_int32(&p.d, p.spec, "spec", "replicas", 0, INT32_MAX, &w->replicas, NULL)) == 0)
        rc = ns_decode_label_selector(&p.d, p.spec, "spec", "selector", &w->selector);
    const ns_ynode *vct = p.spec && rc == 0 ? ns_dec_child(&p.d, p.spec, "spec", "volumeClaimTemplates", NS_Y_SEQ, &rc)
                                            : NULL;
    if (vct && vct->n && !(w->volume_claim_templates = calloc(vct->n, sizeof(char *))))
        rc = NS_FAIL(NS_ERR_INTERNAL, "out of memory decoding %s", p.d.object);
    for (size_t i = 0; vct && rc == 0 && i < vct->n; i++) {
        char path[NS_PATH_MAX], meta_path[NS_PATH_MAX];
        ns_path_index(path, sizeof(path), "spec.volumeClaimTemplates", i);
        const ns_ynode *meta = vct->items[i]->kind == NS_Y_MAP
                                   ? ns_dec_child(&p.d, vct->items[i], path, "metadata", NS_Y_MAP, &rc)
                                   : NULL;
        if (rc == 0 && !meta)
            rc = ns_dec_fail(&p.d, vct->items[i], path, "expected a claim template with metadata.name");
        ns_path_key(meta_path, sizeof(meta_path), path, "metadata");
        if (rc == 0 &&
            (rc = ns_dec_string_required(&p.d, meta, meta_path, "name", &w->volume_claim_templates[i])) == 0)
            w->n_volume_claim_templates = i + 1;
    }
    if (rc == 0 && p.status &&
        (rc = ns_dec_int32(&p.d, p.status, "status", "readyReplicas", 0, INT32_MAX, &w->ready_replicas, NULL)) == 0 &&
        (rc = ns_dec_int32(&p.d, p.status, "status", "availableReplicas", 0, INT32_MAX, &w->available_replicas,
                           NULL)) == 0)
        rc = ns_dec_int(&p.d, p.status, "status", "observedGeneration", 0, INT64_MAX, &w->observed_generation, NULL);
    ns_jtree_free(p.tree);
    if (rc < 0) {
        ns_workload_free(w);
        return rc;
    }
    *typed = w;
    return 0;
}

static int decode_deployment(const cJSON *obj, const char *what, const void *ctx, void **typed)
{
    return decode_workload(obj, "Deployment", typed);
}

static int decode_replicaset(const cJSON *obj, const char *what, const void *ctx, void **typed)
{
    return decode_workload(obj, "ReplicaSet", typed);
}

static int decode_statefulset(const cJSON *obj, const char *what, const void *ctx, void **typed)
{
    return decode_workload(obj, "StatefulSet", typed);
}

static void free_storage_class(void *p)
{
    ns_storage_class_free(p);
}

static void free_pv(void *p)
{
    ns_pv_free(p);
}

static void free_pvc(void *p)
{
    ns_pvc_free(p);
}

static void free_lease(void *p)
{
    ns_lease_free(p);
}

static void free_workload(void *p)
{
    ns_workload_free(p);
}

const ns_kube_decoder NS_KUBE_DECODE_STORAGECLASS = {.decode = decode_storage_class, .free = free_storage_class};
const ns_kube_decoder NS_KUBE_DECODE_PV = {.decode = decode_pv, .free = free_pv};
const ns_kube_decoder NS_KUBE_DECODE_PVC = {.decode = decode_pvc, .free = free_pvc};
const ns_kube_decoder NS_KUBE_DECODE_LEASE = {.decode = decode_lease, .free = free_lease};
const ns_kube_decoder NS_KUBE_DECODE_DEPLOYMENT = {.decode = decode_deployment, .free = free_workload};
const ns_kube_decoder NS_KUBE_DECODE_REPLICASET = {.decode = decode_replicaset, .free = free_workload};
const ns_kube_decoder NS_KUBE_DECODE_STATEFULSET = {.decode = decode_statefulset, .free = free_workload};
