/*
 * Decoders from API server objects (JSON) into the engine's model types, for informers: the same per-kind decoders
 * that read manifests (core/manifest), fed the JSON through manifest/json_tree.h, so a field means the same thing
 * in a manifest and in the cluster and there is one decoder per kind. An object with a bad or unexpected field is an
 * NS_ERR_INVALID_CONFIG error "API server: KIND NS/NAME: FIELD.PATH: what is wrong".
 *
 * typed objects: Pod -> ns_pod (NS_KUBE_DECODE_POD: an ordinary pod the caller may take and change;
 * NS_KUBE_DECODE_POD_PACKED: a packed, read-only pod (ns_pod_pack) whose names the cache entry borrows, what an
 * informer that keeps pods in its cache uses), Node -> ns_node, NodePool and karpenter.sh/v1alpha5 Provisioner ->
 * ns_nodepool (decoder_ctx, may be NULL: the loaded providers' ns_nodeclass_kinds, which say the kind a Provisioner's
 * providerRef means when it names none), NodeClaim -> ns_nodeclaim,
 * PodDisruptionBudget -> ns_pdb, DaemonSet -> ns_daemonset, node classes -> ns_nodeclass_def (decoder_ctx: the
 * loaded providers' ns_nodeclass_kinds; the provider's validate_nodeclass runs on each, as for manifests),
 * CapacityBuffer -> ns_buffer and PodTemplate -> ns_pod_template (model/buffer.h, manifest/decode_buffer.c).
 */
#ifndef NS_KUBE_DECODE_H
#define NS_KUBE_DECODE_H

#include "kube/kube_informer.h"

extern const ns_kube_decoder NS_KUBE_DECODE_POD, NS_KUBE_DECODE_POD_PACKED, NS_KUBE_DECODE_NODE,
    NS_KUBE_DECODE_NODEPOOL, NS_KUBE_DECODE_NODECLAIM, NS_KUBE_DECODE_PDB, NS_KUBE_DECODE_DAEMONSET,
    NS_KUBE_DECODE_NODECLASS, NS_KUBE_DECODE_CAPACITYBUFFER, NS_KUBE_DECODE_PODTEMPLATE;
/* kube_decode_kinds.c: StorageClass -> ns_storage_class, PersistentVolume -> ns_pv, PersistentVolumeClaim -> ns_pvc
 * (model/storage.h), Service -> ns_service (model/service.h), through the manifests' decoders, lenient on fields, and
 * kinds manifests never decode into a model object: Lease -> ns_lease (model/lease.h), Deployment, ReplicaSet,
 * StatefulSet, ReplicationController -> ns_workload (model/workload.h). */
extern const ns_kube_decoder NS_KUBE_DECODE_STORAGECLASS, NS_KUBE_DECODE_PV, NS_KUBE_DECODE_PVC,
    NS_KUBE_DECODE_VOLUMEATTACHMENT, NS_KUBE_DECODE_LEASE, NS_KUBE_DECODE_DEPLOYMENT, NS_KUBE_DECODE_REPLICASET,
    NS_KUBE_DECODE_STATEFULSET, NS_KUBE_DECODE_REPLICATIONCONTROLLER, NS_KUBE_DECODE_SERVICE;

/* The decoder for a built-in resource (for Pods the packed one), or NULL for kinds the cache keeps by identity and
 * indexes only (Events, Namespaces). Informers of
 * the node-class kinds providers declare use NS_KUBE_DECODE_NODECLASS. */
const ns_kube_decoder *ns_kube_decoder_for(const ns_kube_resource *r);

#endif
