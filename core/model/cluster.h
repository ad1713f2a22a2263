/*
 * Everything loaded from manifests: one in-memory cluster.
 *
 * Order: each list keeps the order objects were added in (file order, then document order, then expansion order),
 * so the same inputs always give the same cluster. Names are unique per kind (per namespace for namespaced kinds);
 * adding a duplicate is an error naming both sources.
 *
 * Memory: the cluster owns every object added to it. The ns_cluster_add_* functions take ownership of the object
 * whether they succeed or not (on failure it is freed). Pointers to objects stay valid until ns_cluster_free: lists
 * hold pointers, so adding more objects never moves existing ones.
 */
#ifndef NS_CLUSTER_H
#define NS_CLUSTER_H

#include <stddef.h>

#include "model/buffer.h"
#include "model/daemonset.h"
#include "model/node.h"
#include "model/nodeclass.h"
#include "model/nodepool.h"
#include "model/pdb.h"
#include "model/pod.h"
#include "model/service.h"
#include "model/storage.h"
#include "model/workload.h"

struct ns_cluster_index;
struct ns_nodeclass_kinds;

typedef struct ns_cluster {
    ns_pod **pods;
    size_t n_pods;
    ns_node **nodes;
    size_t n_nodes;
    ns_nodepool **nodepools;
    size_t n_nodepools;
    ns_nodeclass_def **nodeclasses;
    size_t n_nodeclasses;
    ns_pdb **pdbs;
    size_t n_pdbs;
    ns_daemonset **daemonsets;
    size_t n_daemonsets;
    ns_nodeclaim **nodeclaims;
    size_t n_nodeclaims;
    /* Storage, for volume topology (sched_volumes.c). */
    ns_storage_class **storage_classes;
    size_t n_storage_classes;
    ns_pv **pvs;
    size_t n_pvs;
    ns_pvc **pvcs;
    size_t n_pvcs;
    /* What selects pods, for the selector of a default topology spread (sched/sched_default_spread.c): Services,
     * and the pod controllers kube-scheduler reads (ReplicaSet, StatefulSet, ReplicationController; kind, metadata
     * and selector only), one per kind, namespace and name. */
    ns_service **services;
    size_t n_services;
    ns_workload **pod_controllers;
    size_t n_pod_controllers;
    /* VolumeAttachments, which node termination waits for (engine/ctl_termination.c). */
    ns_volume_attachment **volume_attachments;
    size_t n_volume_attachments;
    /* Warm headroom (model/buffer.h): CapacityBuffers and PodTemplates, both namespaced. */
    ns_buffer **buffers;
    size_t n_buffers;
    ns_pod_template **pod_templates;
    size_t n_pod_templates;
    struct {
        size_t pods, nodes, nodepools, nodeclasses, pdbs, daemonsets, nodeclaims, storage_classes, pvs, pvcs,
            services, pod_controllers, volume_attachments, buffers, pod_templates;
    } cap;                          /* internal */
    struct ns_cluster_index *index; /* internal: pod name lookup */
    /* internal: the manifest loader's record of expanded workloads and of the owners loaded objects name
     * (model/expansions.h) */
    struct ns_expansions *expansions;
    /* The node-class kinds manifests may hold (model/nodeclass_kinds.h), borrowed: the loaded providers' kinds, set
     * with ns_cluster_set_kinds before manifests are loaded. NULL: no node class is accepted. */
    const struct ns_nodeclass_kinds *kinds;
    /* Pods loaded from manifests are packed (ns_pod_pack): read-only but for their binding. Set it with
     * ns_cluster_set_packed_pods for a cluster only the in-memory writes change (simulate's); a cluster whose pods
     * are changed in place (the controller's mirror, the kube decoders' scratch clusters) keeps ordinary pods. */
    bool packed_pods;
} ns_cluster;

/* An empty cluster; NULL with NS_ERR_INTERNAL recorded on allocation failure. Free with ns_cluster_free. */
ns_cluster *ns_cluster_new(void);
void ns_cluster_free(ns_cluster *c); /* the cluster and every object in it; accepts NULL */
/* Sets the node-class kinds (borrowed; they must outlive the cluster's manifest loading). */
void ns_cluster_set_kinds(ns_cluster *c, const struct ns_nodeclass_kinds *kinds);
void ns_cluster_set_packed_pods(ns_cluster *c, bool packed); /* before manifests are loaded */

/* Add an object (ownership passes to the cluster, even on failure). 0, NS_ERR_INVALID_CONFIG for a duplicate name
 * or a missing name, NS_ERR_INTERNAL on allocation failure. */
int ns_cluster_add_pod(ns_cluster *c, ns_pod *pod);
int ns_cluster_add_node(ns_cluster *c, ns_node *node);
int ns_cluster_add_nodepool(ns_cluster *c, ns_nodepool *np);
int ns_cluster_add_nodeclass(ns_cluster *c, ns_nodeclass_def *def); /* unique per kind and name */
int ns_cluster_add_pdb(ns_cluster *c, ns_pdb *pdb);
int ns_cluster_add_daemonset(ns_cluster *c, ns_daemonset *ds);
int ns_cluster_add_nodeclaim(ns_cluster *c, ns_nodeclaim *claim);
int ns_cluster_add_storage_class(ns_cluster *c, ns_storage_class *sc);
int ns_cluster_add_pv(ns_cluster *c, ns_pv *pv);
int ns_cluster_add_pvc(ns_cluster *c, ns_pvc *pvc);
int ns_cluster_add_service(ns_cluster *c, ns_service *svc);
/* w->kind is "ReplicaSet", "StatefulSet" or "ReplicationController"; unique per kind, namespace and name. */
int ns_cluster_add_pod_controller(ns_cluster *c, ns_workload *w);
int ns_cluster_add_volume_attachment(ns_cluster *c, ns_volume_attachment *va);
int ns_cluster_add_buffer(ns_cluster *c, ns_buffer *b);
int ns_cluster_add_pod_template(ns_cluster *c, ns_pod_template *t);

/* Remove and free an object (pointers to it become invalid; later objects move down one place in their list, which
 * keeps its order). NS_ERR_NOT_FOUND when the object is not in the cluster. */
int ns_cluster_remove_pod(ns_cluster *c, ns_pod *pod);
int ns_cluster_remove_node(ns_cluster *c, ns_node *node);
/* Put `pod` in the place of `old` (same namespace and name; its list position kept) and free `old`. The cluster owns
 * `pod` even on failure: NS_ERR_NOT_FOUND when old is not in the cluster, NS_ERR_INVALID_ARGUMENT for another name. */
int ns_cluster_replace_pod(ns_cluster *c, ns_pod *old, ns_pod *pod);
int ns_cluster_remove_nodeclaim(ns_cluster *c, ns_nodeclaim *claim);
int ns_cluster_remove_nodepool(ns_cluster *c, ns_nodepool *np);
int ns_cluster_remove_nodeclass(ns_cluster *c, ns_nodeclass_def *def);
int ns_cluster_remove_pdb(ns_cluster *c, ns_pdb *pdb);
int ns_cluster_remove_daemonset(ns_cluster *c, ns_daemonset *ds);
int ns_cluster_remove_storage_class(ns_cluster *c, ns_storage_class *sc);
int ns_cluster_remove_pv(ns_cluster *c, ns_pv *pv);
int ns_cluster_remove_pvc(ns_cluster *c, ns_pvc *pvc);
int ns_cluster_remove_volume_attachment(ns_cluster *c, ns_volume_attachment *va);
int ns_cluster_remove_service(ns_cluster *c, ns_service *svc);
int ns_cluster_remove_pod_controller(ns_cluster *c, ns_workload *w);
int ns_cluster_remove_buffer(ns_cluster *c, ns_buffer *b);
int ns_cluster_remove_pod_template(ns_cluster *c, ns_pod_template *t);
/* Take an object out of the cluster without freeing it (it becomes the caller's). NS_ERR_NOT_FOUND when absent. */
int ns_cluster_take_nodepool(ns_cluster *c, ns_nodepool *np);
int ns_cluster_take_nodeclaim(ns_cluster *c, ns_nodeclaim *claim);
int ns_cluster_take_buffer(ns_cluster *c, ns_buffer *b);

/* Lookups; NULL when absent. A NULL namespace means "default". The results belong to the cluster. */
ns_pod *ns_cluster_find_pod(const ns_cluster *c, const char *ns, const char *name);
ns_node *ns_cluster_find_node(const ns_cluster *c, const char *name);
ns_nodepool *ns_cluster_find_nodepool(const ns_cluster *c, const char *name);
ns_nodeclass_def *ns_cluster_find_nodeclass(const ns_cluster *c, const char *kind, const char *name);
ns_pdb *ns_cluster_find_pdb(const ns_cluster *c, const char *ns, const char *name);
ns_daemonset *ns_cluster_find_daemonset(const ns_cluster *c, const char *ns, const char *name);
ns_nodeclaim *ns_cluster_find_nodeclaim(const ns_cluster *c, const char *name);
ns_storage_class *ns_cluster_find_storage_class(const ns_cluster *c, const char *name);
ns_pv *ns_cluster_find_pv(const ns_cluster *c, const char *name);
ns_pvc *ns_cluster_find_pvc(const ns_cluster *c, const char *ns, const char *name);
ns_service *ns_cluster_find_service(const ns_cluster *c, const char *ns, const char *name);
ns_workload *ns_cluster_find_pod_controller(const ns_cluster *c, const char *kind, const char *ns, const char *name);
ns_volume_attachment *ns_cluster_find_volume_attachment(const ns_cluster *c, const char *name);
ns_buffer *ns_cluster_find_buffer(const ns_cluster *c, const char *ns, const char *name);
ns_pod_template *ns_cluster_find_pod_template(const ns_cluster *c, const char *ns, const char *name);
/* The shape of a buffer's chunk (borrowed from the cluster): its podTemplateRef's PodTemplate, or its scalableRef's
 * workload's pod template, whose spec.replicas go to *scalable_replicas (0 for a podTemplateRef); NULL when the
 * cluster has not that object (Karpenter's PodTemplateNotFound, ScalableRefNotFound) or the scalableRef is one
 * Karpenter cannot resolve (b->resolution_failed). */
const ns_pod *ns_cluster_buffer_shape(const ns_cluster *c, const ns_buffer *b, int32_t *scalable_replicas);
/* The node class a reference names (kind, name and, when the reference has one, API group must match). */
ns_nodeclass_def *ns_cluster_nodeclass_for(const ns_cluster *c, const ns_nodeclass_ref *ref);

/* Cross-object checks and fill-ins, run once after every manifest is loaded: each NodePool's and NodeClaim's
 * nodeClassRef must name a loaded node class, and each CapacityBuffer's podTemplateRef a loaded PodTemplate of its
 * namespace, its scalableRef (one Karpenter resolves) a loaded workload of its namespace (NS_ERR_INVALID_CONFIG
 * naming the object, its file and line), and a NodePool without kubelet settings takes its node class's
 * spec.kubelet. */
int ns_cluster_resolve(ns_cluster *c);

#endif
