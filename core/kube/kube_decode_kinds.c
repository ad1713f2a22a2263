/* Decoders for the kinds that are not Pods, Nodes or Karpenter objects: StorageClasses, PVs, PVCs and Services through
 * the manifests' own decoders (manifest/decode_storage.c, decode_service.c); Leases and the workload owners, which
 * manifests expand into their pods instead, here. The JSON goes through manifest/json_tree.h and the manifest decoders' field helpers, so errors read as everywhere else ("API server: KIND NS/NAME: FIELD: why").
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
#include "model/service.h"
#include "model/storage.h"
#include "model/workload.h"

#define SOURCE "API server"

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

/* A storage object through its manifest decoder (decode_storage.c), leniently: the API server validated it. */
static int decode_tree(const cJSON *obj, const char *kind, void *out,
                       int (*decode)(ns_dec *d, const ns_ynode *root, bool strict, void *out))
{
    ns_jtree *tree = NULL;
    ns_dec d = {.file = SOURCE};
    snprintf(d.object, sizeof(d.object), "%s", kind);
    int rc = ns_jtree_new(obj, &tree);
    if (rc == 0 && ns_jtree_root(tree)->kind != NS_Y_MAP)
        rc = ns_dec_fail(&d, ns_jtree_root(tree), NULL, "expected a Kubernetes object");
    if (rc == 0)
        rc = decode(&d, ns_jtree_root(tree), false, out);
    ns_jtree_free(tree);
    return rc;
}

static int storage_class_of(ns_dec *d, const ns_ynode *root, bool strict, void *out)
{
    return ns_decode_storage_class(d, root, strict, out);
}

static int pv_of(ns_dec *d, const ns_ynode *root, bool strict, void *out)
{
    return ns_decode_pv(d, root, strict, out);
}

static int pvc_of(ns_dec *d, const ns_ynode *root, bool strict, void *out)
{
    return ns_decode_pvc(d, root, strict, out);
}

static int volume_attachment_of(ns_dec *d, const ns_ynode *root, bool strict, void *out)
{
    return ns_decode_volume_attachment(d, root, strict, out);
}

static int service_of(ns_dec *d, const ns_ynode *root, bool strict, void *out)
{
    return ns_decode_service(d, root, strict, out);
}

static int decode_storage_class(const cJSON *obj, const char *what, const void *ctx, void **typed)
{
    ns_storage_class *sc = calloc(1, sizeof(*sc));
    if (!sc)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory decoding %s", what);
    int rc = decode_tree(obj, "StorageClass", sc, storage_class_of);
    if (rc < 0) {
        ns_storage_class_free(sc);
        return rc;
    }
    *typed = sc;
    return 0;
}

static int decode_pv(const cJSON *obj, const char *what, const void *ctx, void **typed)
{
    ns_pv *pv = calloc(1, sizeof(*pv));
    if (!pv)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory decoding %s", what);
    int rc = decode_tree(obj, "PersistentVolume", pv, pv_of);
    if (rc < 0) {
        ns_pv_free(pv);
        return rc;
    }
    *typed = pv;
    return 0;
}

static int decode_pvc(const cJSON *obj, const char *what, const void *ctx, void **typed)
{
    ns_pvc *pvc = calloc(1, sizeof(*pvc));
    if (!pvc)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory decoding %s", what);
    int rc = decode_tree(obj, "PersistentVolumeClaim", pvc, pvc_of);
    if (rc < 0) {
        ns_pvc_free(pvc);
        return rc;
    }
    *typed = pvc;
    return 0;
}

static int decode_service(const cJSON *obj, const char *what, const void *ctx, void **typed)
{
    ns_service *svc = ns_service_new();
    if (!svc)
        return NS_ERR_INTERNAL;
    int rc = decode_tree(obj, "Service", svc, service_of);
    if (rc < 0) {
        ns_service_free(svc);
        return rc;
    }
    *typed = svc;
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

/* A ReplicationController's spec.selector is a plain label map, not a LabelSelector (the API server defaults it to
 * the template's labels): it becomes the selector's matchLabels. */
static int rc_selector(const parsed *p, ns_workload *w)
{
    int rc;
    const ns_ynode *sel = ns_dec_child(&p->d, p->spec, "spec", "selector", NS_Y_MAP, &rc);
    if (rc < 0 || !sel)
        return rc;
    w->selector.present = true;
    return ns_dec_label_map(&p->d, p->spec, "spec", "selector", &w->selector.match_labels);
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
        rc = strcmp(kind, "ReplicationController") == 0
                 ? rc_selector(&p, w)
                 : ns_decode_label_selector(&p.d, p.spec, "spec", "selector", &w->selector);
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
    /* the template a CapacityBuffer's scalableRef takes its shape from, decoded as manifests decode it */
    if (rc == 0 && p.spec && strcmp(kind, "ReplicationController") != 0)
        rc = ns_decode_workload_template(&p.d, p.spec, w->meta.namespace_, &w->template_pod);
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

static int decode_replicationcontroller(const cJSON *obj, const char *what, const void *ctx, void **typed)
{
    return decode_workload(obj, "ReplicationController", typed);
}

static void free_storage_class(void *p)
{
    ns_storage_class_free(p);
}

static void free_pv(void *p)
{
    ns_pv_free(p);
}

static int decode_volume_attachment(const cJSON *obj, const char *what, const void *ctx, void **typed)
{
    ns_volume_attachment *va = calloc(1, sizeof(*va));
    if (!va)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory decoding %s", what);
    int rc = decode_tree(obj, "VolumeAttachment", va, volume_attachment_of);
    if (rc < 0) {
        ns_volume_attachment_free(va);
        return rc;
    }
    *typed = va;
    return 0;
}

static void free_volume_attachment(void *p)
{
    ns_volume_attachment_free(p);
}

static void free_pvc(void *p)
{
    ns_pvc_free(p);
}

static void free_service(void *p)
{
    ns_service_free(p);
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
const ns_kube_decoder NS_KUBE_DECODE_VOLUMEATTACHMENT = {.decode = decode_volume_attachment,
                                                         .free = free_volume_attachment};
const ns_kube_decoder NS_KUBE_DECODE_LEASE = {.decode = decode_lease, .free = free_lease};
const ns_kube_decoder NS_KUBE_DECODE_DEPLOYMENT = {.decode = decode_deployment, .free = free_workload};
const ns_kube_decoder NS_KUBE_DECODE_REPLICASET = {.decode = decode_replicaset, .free = free_workload};
const ns_kube_decoder NS_KUBE_DECODE_STATEFULSET = {.decode = decode_statefulset, .free = free_workload};
const ns_kube_decoder NS_KUBE_DECODE_REPLICATIONCONTROLLER = {.decode = decode_replicationcontroller,
                                                              .free = free_workload};
const ns_kube_decoder NS_KUBE_DECODE_SERVICE = {.decode = decode_service, .free = free_service};
