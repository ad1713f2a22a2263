#include "kube/kube_decode.h"

#include <string.h>

#include "errors/ns_error.h"
#include "manifest/json_tree.h"
#include "manifest/loader.h"
#include "model/cluster.h"

#define SOURCE "API server"

typedef enum which {
    W_POD,
    W_NODE,
    W_NODEPOOL,
    W_NODECLAIM,
    W_PDB,
    W_DAEMONSET,
    W_NODECLASS,
    W_BUFFER,
    W_PODTEMPLATE,
} which;

/* Moves the one object the scratch cluster holds out of it. The lists are the cluster's public fields; emptying one
 * hands its only object to the caller instead of to ns_cluster_free. */
static void *take_only(ns_cluster *c, which w)
{
    void ***list = NULL;
    size_t *n = NULL;
    switch (w) {
    case W_POD:
        list = (void ***)&c->pods, n = &c->n_pods;
        break;
    case W_NODE:
        list = (void ***)&c->nodes, n = &c->n_nodes;
        break;
    case W_NODEPOOL:
        list = (void ***)&c->nodepools, n = &c->n_nodepools;
        break;
    case W_NODECLAIM:
        list = (void ***)&c->nodeclaims, n = &c->n_nodeclaims;
        break;
    case W_PDB:
        list = (void ***)&c->pdbs, n = &c->n_pdbs;
        break;
    case W_DAEMONSET:
        list = (void ***)&c->daemonsets, n = &c->n_daemonsets;
        break;
    case W_NODECLASS:
        list = (void ***)&c->nodeclasses, n = &c->n_nodeclasses;
        break;
    case W_BUFFER:
        list = (void ***)&c->buffers, n = &c->n_buffers;
        break;
    case W_PODTEMPLATE:
        list = (void ***)&c->pod_templates, n = &c->n_pod_templates;
        break;
    }
    if (*n != 1)
        return NULL;
    *n = 0;
    return (*list)[0];
}

static int decode(const cJSON *obj, const char *what, const void *ctx, which w, void **typed)
{
    ns_jtree *tree = NULL;
    ns_cluster *scratch = ns_cluster_new();
    int rc;
    *typed = NULL;
    if (!scratch)
        return NS_ERR_INTERNAL;
    /* node classes need the kinds to be read at all; a v1alpha5 Provisioner's providerRef may name no kind, and the
     * kinds say which one it means */
    if (ctx && (w == W_NODECLASS || w == W_NODEPOOL))
        ns_cluster_set_kinds(scratch, ctx);
    if ((rc = ns_jtree_new(obj, &tree)) < 0 || (rc = ns_manifest_load_tree(scratch, SOURCE, ns_jtree_root(tree))) < 0)
        goto done;
    *typed = take_only(scratch, w);
    if (!*typed)
        rc = NS_FAIL(NS_ERR_INVALID_CONFIG, SOURCE ": %s: did not decode into one object", what);
done:
    ns_cluster_free(scratch);
    ns_jtree_free(tree);
    return rc;
}

#define DECODER(fn, w, type, free_fn)                                                                                \
    static int fn(const cJSON *obj, const char *what, const void *ctx, void **typed)                                \
    {                                                                                                                \
        return decode(obj, what, ctx, w, typed);                                                                     \
    }                                                                                                                \
    static void fn##_free(void *p)                                                                                   \
    {                                                                                                                \
        free_fn((type *)p);                                                                                          \
    }

DECODER(decode_pod, W_POD, ns_pod, ns_pod_free)

/* Pods for an informer's cache are packed (model/pod.h): a cluster's pods are most of the cache. */
static int decode_pod_packed(const cJSON *obj, const char *what, const void *ctx, void **typed)
{
    int rc = decode(obj, what, ctx, W_POD, typed);
    if (rc == 0 && !(*typed = ns_pod_pack(*typed)))
        rc = NS_ERR_INTERNAL;
    return rc;
}

static void pod_names(const void *typed, const char **namespace_, const char **name, const char **node_name)
{
    const ns_pod *pod = typed;
    *namespace_ = pod->meta.namespace_;
    *name = pod->meta.name;
    *node_name = pod->node_name;
}

DECODER(decode_node, W_NODE, ns_node, ns_node_free)
DECODER(decode_nodepool, W_NODEPOOL, ns_nodepool, ns_nodepool_free)
DECODER(decode_nodeclaim, W_NODECLAIM, ns_nodeclaim, ns_nodeclaim_free)
DECODER(decode_pdb, W_PDB, ns_pdb, ns_pdb_free)
DECODER(decode_daemonset, W_DAEMONSET, ns_daemonset, ns_daemonset_free)
DECODER(decode_nodeclass, W_NODECLASS, ns_nodeclass_def, ns_nodeclass_def_free)
DECODER(decode_buffer, W_BUFFER, ns_buffer, ns_buffer_free)
DECODER(decode_pod_template, W_PODTEMPLATE, ns_pod_template, ns_pod_template_free)

const ns_kube_decoder NS_KUBE_DECODE_POD = {.decode = decode_pod, .free = decode_pod_free};
const ns_kube_decoder NS_KUBE_DECODE_POD_PACKED = {.decode = decode_pod_packed, .free = decode_pod_free,
                                                  .names = pod_names};
const ns_kube_decoder NS_KUBE_DECODE_NODE = {.decode = decode_node, .free = decode_node_free};
const ns_kube_decoder NS_KUBE_DECODE_NODEPOOL = {.decode = decode_nodepool, .free = decode_nodepool_free};
const ns_kube_decoder NS_KUBE_DECODE_NODECLAIM = {.decode = decode_nodeclaim, .free = decode_nodeclaim_free};
const ns_kube_decoder NS_KUBE_DECODE_PDB = {.decode = decode_pdb, .free = decode_pdb_free};
const ns_kube_decoder NS_KUBE_DECODE_DAEMONSET = {.decode = decode_daemonset, .free = decode_daemonset_free};
const ns_kube_decoder NS_KUBE_DECODE_NODECLASS = {.decode = decode_nodeclass, .free = decode_nodeclass_free};
const ns_kube_decoder NS_KUBE_DECODE_CAPACITYBUFFER = {.decode = decode_buffer, .free = decode_buffer_free};
const ns_kube_decoder NS_KUBE_DECODE_PODTEMPLATE = {.decode = decode_pod_template, .free = decode_pod_template_free};

const ns_kube_decoder *ns_kube_decoder_for(const ns_kube_resource *r)
{
    static const struct {
        const char *group, *kind;
        const ns_kube_decoder *dec;
    } table[] = {
        {"", "Pod", &NS_KUBE_DECODE_POD_PACKED},
        {"", "Node", &NS_KUBE_DECODE_NODE},
        {"karpenter.sh", "NodePool", &NS_KUBE_DECODE_NODEPOOL},
        {"karpenter.sh", "NodeClaim", &NS_KUBE_DECODE_NODECLAIM},
        {"policy", "PodDisruptionBudget", &NS_KUBE_DECODE_PDB},
        {"apps", "DaemonSet", &NS_KUBE_DECODE_DAEMONSET},
        {"storage.k8s.io", "StorageClass", &NS_KUBE_DECODE_STORAGECLASS},
        {"", "PersistentVolume", &NS_KUBE_DECODE_PV},
        {"", "PersistentVolumeClaim", &NS_KUBE_DECODE_PVC},
        {"storage.k8s.io", "VolumeAttachment", &NS_KUBE_DECODE_VOLUMEATTACHMENT},
        {"coordination.k8s.io", "Lease", &NS_KUBE_DECODE_LEASE},
        {"apps", "Deployment", &NS_KUBE_DECODE_DEPLOYMENT},
        {"apps", "ReplicaSet", &NS_KUBE_DECODE_REPLICASET},
        {"apps", "StatefulSet", &NS_KUBE_DECODE_STATEFULSET},
        {"", "ReplicationController", &NS_KUBE_DECODE_REPLICATIONCONTROLLER},
        {"", "Service", &NS_KUBE_DECODE_SERVICE},
        {"autoscaling.x-k8s.io", "CapacityBuffer", &NS_KUBE_DECODE_CAPACITYBUFFER},
        {"", "PodTemplate", &NS_KUBE_DECODE_PODTEMPLATE},
    };
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        if (strcmp(table[i].group, r->group) == 0 && strcmp(table[i].kind, r->kind) == 0)
            return table[i].dec;
    }
    return NULL;
}
