/*
 * Decoders for the pieces Kubernetes kinds share, and the per-kind entry points the loader dispatches to.
 * Internal to core/manifest. Every function returns 0 or a negative ns_err with a FILE:LINE message recorded.
 * Outputs are owned by the caller (ns_*_free from core/model), including on error where partially filled.
 */
#ifndef NS_MANIFEST_DECODERS_H
#define NS_MANIFEST_DECODERS_H

#include <stdbool.h>
#include <stddef.h>

#include "manifest/decode.h"
#include "manifest/yaml_doc.h"
#include "model/cluster.h"
#include "model/conditions.h"
#include "model/kubelet.h"
#include "model/meta.h"
#include "model/nodeclass_kinds.h"
#include "model/nodepool.h"
#include "model/pod.h"
#include "model/requirements.h"
#include "model/selector.h"
#include "model/service.h"
#include "model/storage.h"
#include "model/taints.h"

/* Which operators a list of requirements may use. */
typedef enum ns_ops_allowed {
    NS_OPS_LABEL_SELECTOR, /* In, NotIn, Exists, DoesNotExist */
    NS_OPS_NODE_AFFINITY,  /* ... plus Gt, Lt */
    NS_OPS_KARPENTER,      /* ... plus Gte, Lte and minValues */
} ns_ops_allowed;

/* metadata of a top-level object: validates its fields, fills out (name, namespace defaulted to "default" when
 * namespaced, labels, annotations, controller owner, source file and line) and sets d->object to "KIND [NS/]NAME". */
int ns_decode_meta(ns_dec *d, const ns_ynode *obj, const char *kind, bool namespaced, ns_meta *out);
/* Refuses an object whose metadata.name (already decoded into `name`) is longer than `max` characters, a limit
 * tighter than Kubernetes' 253 for the reason `why`, at the name's line. */
int ns_decode_name_max(const ns_dec *d, const ns_ynode *obj, const char *name, size_t max, const char *why);
/* Checks the top-level fields of an object: apiVersion, kind, metadata, spec, status plus `extra` (NULL-ended, may
 * be NULL). */
int ns_decode_top_fields(const ns_dec *d, const ns_ynode *obj, const char *const *extra);

int ns_decode_taints(const ns_dec *d, const ns_ynode *map, const char *path, const char *key, ns_taint **out,
                     size_t *n);
/* An RFC 3339 time (metav1.Time or MicroTime) at map.key into *out, unix ms (absent: *out unchanged). */
int ns_decode_time(const ns_dec *d, const ns_ynode *map, const char *path, const char *key, int64_t *out);
/* metav1.Condition list (type, status, reason, message, lastTransitionTime) at map.key into out (absent: empty). */
int ns_decode_conditions(const ns_dec *d, const ns_ynode *map, const char *path, const char *key, ns_conditions *out);
int ns_decode_tolerations(const ns_dec *d, const ns_ynode *map, const char *path, const char *key,
                          ns_toleration **out, size_t *n);
int ns_decode_selector_reqs(const ns_dec *d, const ns_ynode *map, const char *path, const char *key,
                            ns_ops_allowed ops, ns_selector_req **out, size_t *n);
int ns_decode_label_selector(const ns_dec *d, const ns_ynode *map, const char *path, const char *key,
                             ns_label_selector *out);
int ns_decode_kubelet(const ns_dec *d, const ns_ynode *map, const char *path, const char *key, bool provisioner,
                      ns_kubelet_config *out);

/* The pod's karpenter.sh/do-not-disrupt annotation into do_not_disrupt_ms ("true", or a positive Go duration); an
 * invalid value is ignored with a WARN naming the pod, as Karpenter ignores it with an event. Also after a patch. */
void ns_decode_do_not_disrupt(ns_pod *pod);
/* A pod spec into pod (which already has its metadata); computes the effective requests. */
int ns_decode_pod_spec(const ns_dec *d, const ns_ynode *spec, const char *path, ns_pod *pod);
/* The pod spec's volumes backed by PersistentVolumeClaims into pod->volumes (decode_volumes.c). */
int ns_decode_pod_volumes(const ns_dec *d, const ns_ynode *spec, const char *path, ns_pod *pod);
/* Storage kinds from their object (metadata included) into *out (decode_storage.c). strict: unknown spec and status
 * fields are errors (manifests); the API server's objects may carry fields newer than nodesmith's lists. */
int ns_decode_storage_class(ns_dec *d, const ns_ynode *root, bool strict, ns_storage_class *out);
int ns_decode_pv(ns_dec *d, const ns_ynode *root, bool strict, ns_pv *out);
int ns_decode_pvc(ns_dec *d, const ns_ynode *root, bool strict, ns_pvc *out);
/* A Service (metadata and spec.selector) into *out (decode_service.c); strict as for the storage kinds. */
int ns_decode_service(ns_dec *d, const ns_ynode *root, bool strict, ns_service *out);
/* One topologySpreadConstraints item at node t (path p) into *out (decode_pod.c). */
int ns_decode_topology_spread(const ns_dec *d, const ns_ynode *t, const char *p, ns_topology_spread *out);
int ns_decode_volume_attachment(ns_dec *d, const ns_ynode *root, bool strict, ns_volume_attachment *out);
/* A PodTemplateSpec (metadata + spec) into a new pod in namespace ns; *out owned by the caller. */
int ns_decode_pod_template(const ns_dec *d, const ns_ynode *tmpl, const char *path, const char *ns, ns_pod **out);
/* A workload's spec.template (Deployment, ReplicaSet, StatefulSet; spec not NULL, its template required) as a pod without name or owner, the shape
 * a CapacityBuffer's scalableRef takes, for manifests and informers alike (decode_workloads.c); *out owned by the
 * caller. */
int ns_decode_workload_template(const ns_dec *d, const ns_ynode *spec, const char *ns, ns_pod **out);

/* Per-kind loaders: decode root and add the result(s) to the cluster. `api_version` is the object's. */
int ns_load_pod(ns_dec *d, const ns_ynode *root, ns_cluster *c);
int ns_load_workload(ns_dec *d, const ns_ynode *root, const char *kind, ns_cluster *c);
int ns_load_daemonset(ns_dec *d, const ns_ynode *root, ns_cluster *c);
int ns_load_pdb(ns_dec *d, const ns_ynode *root, const char *api_version, ns_cluster *c);
int ns_load_node(ns_dec *d, const ns_ynode *root, ns_cluster *c);
int ns_load_nodepool(ns_dec *d, const ns_ynode *root, const char *api_version, ns_cluster *c);
int ns_load_provisioner(ns_dec *d, const ns_ynode *root, ns_cluster *c);
int ns_load_nodeclaim(ns_dec *d, const ns_ynode *root, ns_cluster *c);
int ns_load_storage_class(ns_dec *d, const ns_ynode *root, ns_cluster *c);
int ns_load_pv(ns_dec *d, const ns_ynode *root, ns_cluster *c);
int ns_load_pvc(ns_dec *d, const ns_ynode *root, ns_cluster *c);
int ns_load_service(ns_dec *d, const ns_ynode *root, ns_cluster *c);
int ns_load_volume_attachment(ns_dec *d, const ns_ynode *root, ns_cluster *c);
int ns_load_capacity_buffer(ns_dec *d, const ns_ynode *root, ns_cluster *c); /* decode_buffer.c */
int ns_load_pod_template(ns_dec *d, const ns_ynode *root, ns_cluster *c);
/* A node class of a kind a loaded provider declares (info), validated by that provider. */
int ns_load_nodeclass(ns_dec *d, const ns_ynode *root, const char *api_version, const char *kind,
                      const ns_nodeclass_kind_info *info, ns_cluster *c);

#endif
