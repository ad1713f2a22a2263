/* StorageClasses, PersistentVolumes and PersistentVolumeClaims (model/storage.h), for manifests and, through
 * manifest/json_tree.h, for the API server's objects (kube/kube_decode_kinds.c): one decoder per kind. Only the
 * fields volume topology reads are kept. Manifests are checked strictly (an unknown field is an error, as for every
 * manifest kind); the API server has validated its objects, which may carry fields newer than this list. */
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "manifest/decoders.h"
#include "model/labels.h"
#include "model/resources.h"

static const char *const sc_top_fields[] = {"provisioner", "parameters", "reclaimPolicy", "mountOptions",
                                            "allowVolumeExpansion", "volumeBindingMode", "allowedTopologies",
                                            NULL};

/* Every PersistentVolumeSpec field of Kubernetes 1.31: the volume sources, which nodesmith only needs to tell a
 * local or hostPath volume from the others, are accepted and otherwise ignored. */
static const char *const pv_spec_fields[] = {
    "accessModes", "awsElasticBlockStore", "azureDisk", "azureFile", "capacity", "cephfs", "cinder", "claimRef",
    "csi", "fc", "flexVolume", "flocker", "gcePersistentDisk", "glusterfs", "hostPath", "iscsi", "local",
    "mountOptions", "nfs", "nodeAffinity", "persistentVolumeReclaimPolicy", "photonPersistentDisk",
    "portworxVolume", "quobyte", "rbd", "scaleIO", "storageClassName", "storageos", "volumeAttributesClassName",
    "volumeMode", "vsphereVolume", NULL,
};

static const char *const pvc_spec_fields[] = {"accessModes", "dataSource", "dataSourceRef", "resources", "selector",
                                              "storageClassName", "volumeAttributesClassName", "volumeMode",
                                              "volumeName", NULL};

static const char *const status_fields[] = {"phase", "accessModes", "capacity", "conditions",
                                            "allocatedResources", "allocatedResourceStatuses",
                                            "currentVolumeAttributesClassName", "modifyVolumeStatus", "message",
                                            "reason", "lastPhaseTransitionTime", NULL};

static int check_fields(const ns_dec *d, const ns_ynode *map, const char *path, const char *const *known, bool strict)
{
    return strict && map ? ns_dec_fields(d, map, path, known) : 0;
}

/* One StorageClass topology term: matchLabelExpressions [{key, values}], each an In requirement. */
static int decode_topology_term(const ns_dec *d, const ns_ynode *term, const char *p, ns_node_selector_term *t)
{
    int rc = 0;
    char q[NS_PATH_MAX];
    const ns_ynode *exprs = ns_dec_child(d, term, p, "matchLabelExpressions", NS_Y_SEQ, &rc);
    if (!exprs || rc < 0)
        return rc;
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
    return rc;
}

/* Node selector terms at map.key: [{matchExpressions: [...]}] (PV node affinity), or with topology_style the
 * StorageClass form [{matchLabelExpressions: [{key, values}]}]. */
static int decode_terms(const ns_dec *d, const ns_ynode *map, const char *path, const char *key, bool topology_style,
                        ns_node_selector_term **out, size_t *n)
{
    int rc = 0;
    char base[NS_PATH_MAX], p[NS_PATH_MAX];
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
        if (topology_style) {
            rc = decode_topology_term(d, seq->items[i], p, t);
            continue;
        }
        rc = ns_decode_selector_reqs(d, seq->items[i], p, "matchExpressions", NS_OPS_NODE_AFFINITY, &t->exprs,
                                     &t->n_exprs);
        if (rc == 0)
            rc = ns_decode_selector_reqs(d, seq->items[i], p, "matchFields", NS_OPS_NODE_AFFINITY, &t->fields,
                                         &t->n_fields);
    }
    return rc;
}

/* map.key.storage (a quantity) in bytes; 0 when absent. */
static int decode_bytes(const ns_dec *d, const ns_ynode *map, const char *path, const char *key, int64_t *out)
{
    ns_res r = {0};
    int rc = ns_dec_resources(d, map, path, key, &r, NULL);
    *out = ns_res_get(&r, "storage");
    ns_res_free(&r);
    return rc;
}

int ns_decode_storage_class(ns_dec *d, const ns_ynode *root, bool strict, ns_storage_class *sc)
{
    char *mode = NULL;
    int rc;
    /* a StorageClass keeps its fields at the top level, not under spec */
    if ((rc = ns_decode_top_fields(d, root, sc_top_fields)) == 0 &&
        (rc = ns_decode_meta(d, root, "StorageClass", false, &sc->meta)) == 0 &&
        (rc = ns_dec_string_required(d, root, "", "provisioner", &sc->provisioner)) == 0 &&
        (rc = ns_dec_string(d, root, "", "volumeBindingMode", &mode)) == 0)
        rc = decode_terms(d, root, "", "allowedTopologies", true, &sc->allowed_topologies,
                          &sc->n_allowed_topologies);
    if (rc == 0 && strict && mode && strcmp(mode, "WaitForFirstConsumer") != 0 && strcmp(mode, "Immediate") != 0)
        rc = ns_dec_fail(d, ns_ymap_get(root, "volumeBindingMode"), "volumeBindingMode",
                         "\"%s\" is not a binding mode (Immediate or WaitForFirstConsumer)", mode);
    if (rc == 0) {
        sc->wait_for_first_consumer = mode && strcmp(mode, "WaitForFirstConsumer") == 0;
        const char *def = ns_labels_get(&sc->meta.annotations, "storageclass.kubernetes.io/is-default-class");
        sc->is_default = def && strcmp(def, "true") == 0;
    }
    free(mode);
    return rc;
}

/* spec and status of an object (either may be NULL), their fields checked when strict. */
static int spec_status(const ns_dec *d, const ns_ynode *root, const char *const *spec_fields, bool strict,
                       const ns_ynode **spec, const ns_ynode **status)
{
    int rc = 0;
    *spec = ns_dec_child(d, root, "", "spec", NS_Y_MAP, &rc);
    if (rc == 0)
        *status = ns_dec_child(d, root, "", "status", NS_Y_MAP, &rc);
    if (rc == 0)
        rc = check_fields(d, *spec, "spec", spec_fields, strict);
    if (rc == 0)
        rc = check_fields(d, *status, "status", status_fields, strict);
    return rc;
}

int ns_decode_pv(ns_dec *d, const ns_ynode *root, bool strict, ns_pv *pv)
{
    const ns_ynode *spec = NULL, *status = NULL, *aff = NULL, *req = NULL, *csi = NULL, *claim = NULL;
    int rc;
    if ((rc = ns_decode_top_fields(d, root, NULL)) < 0 ||
        (rc = ns_decode_meta(d, root, "PersistentVolume", false, &pv->meta)) < 0 ||
        (rc = spec_status(d, root, pv_spec_fields, strict, &spec, &status)) < 0)
        return rc;
    if (spec) {
        pv->local = ns_ymap_get(spec, "local") || ns_ymap_get(spec, "hostPath");
        if ((rc = decode_bytes(d, spec, "spec", "capacity", &pv->capacity_bytes)) == 0)
            rc = ns_dec_string(d, spec, "spec", "storageClassName", &pv->storage_class);
        if (rc == 0 && (csi = ns_dec_child(d, spec, "spec", "csi", NS_Y_MAP, &rc)) != NULL)
            rc = ns_dec_string(d, csi, "spec.csi", "driver", &pv->csi_driver);
        if (rc == 0 && (claim = ns_dec_child(d, spec, "spec", "claimRef", NS_Y_MAP, &rc)) != NULL &&
            (rc = ns_dec_string(d, claim, "spec.claimRef", "namespace", &pv->claim_namespace)) == 0)
            rc = ns_dec_string(d, claim, "spec.claimRef", "name", &pv->claim_name);
        if (rc == 0 && (aff = ns_dec_child(d, spec, "spec", "nodeAffinity", NS_Y_MAP, &rc)) != NULL &&
            (req = ns_dec_child(d, aff, "spec.nodeAffinity", "required", NS_Y_MAP, &rc)) != NULL)
            rc = decode_terms(d, req, "spec.nodeAffinity.required", "nodeSelectorTerms", false, &pv->node_affinity,
                              &pv->n_node_affinity);
    }
    if (rc == 0 && status)
        rc = ns_dec_string(d, status, "status", "phase", &pv->phase);
    return rc;
}

int ns_decode_pvc(ns_dec *d, const ns_ynode *root, bool strict, ns_pvc *pvc)
{
    const ns_ynode *spec = NULL, *status = NULL, *res = NULL;
    int rc;
    if ((rc = ns_decode_top_fields(d, root, NULL)) < 0 ||
        (rc = ns_decode_meta(d, root, "PersistentVolumeClaim", true, &pvc->meta)) < 0 ||
        (rc = spec_status(d, root, pvc_spec_fields, strict, &spec, &status)) < 0)
        return rc;
    if (spec) {
        if ((rc = ns_dec_string(d, spec, "spec", "storageClassName", &pvc->storage_class)) == 0)
            rc = ns_dec_string(d, spec, "spec", "volumeName", &pvc->volume_name);
        if (rc == 0 && (res = ns_dec_child(d, spec, "spec", "resources", NS_Y_MAP, &rc)) != NULL)
            rc = decode_bytes(d, res, "spec.resources", "requests", &pvc->request_bytes);
    }
    if (rc == 0 && status)
        rc = ns_dec_string(d, status, "status", "phase", &pvc->phase);
    return rc;
}

int ns_load_storage_class(ns_dec *d, const ns_ynode *root, ns_cluster *c)
{
    ns_storage_class *sc = calloc(1, sizeof(*sc));
    if (!sc)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory decoding a StorageClass");
    int rc = ns_decode_storage_class(d, root, true, sc);
    if (rc < 0) {
        ns_storage_class_free(sc);
        return rc;
    }
    return ns_cluster_add_storage_class(c, sc);
}

int ns_load_pv(ns_dec *d, const ns_ynode *root, ns_cluster *c)
{
    ns_pv *pv = calloc(1, sizeof(*pv));
    if (!pv)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory decoding a PersistentVolume");
    int rc = ns_decode_pv(d, root, true, pv);
    if (rc < 0) {
        ns_pv_free(pv);
        return rc;
    }
    return ns_cluster_add_pv(c, pv);
}

int ns_load_pvc(ns_dec *d, const ns_ynode *root, ns_cluster *c)
{
    ns_pvc *pvc = calloc(1, sizeof(*pvc));
    if (!pvc)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory decoding a PersistentVolumeClaim");
    int rc = ns_decode_pvc(d, root, true, pvc);
    if (rc < 0) {
        ns_pvc_free(pvc);
        return rc;
    }
    return ns_cluster_add_pvc(c, pvc);
}
