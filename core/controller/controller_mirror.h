/*
 * The mirror: the engine's ns_cluster kept as the informers' cache (Karpenter's cluster state).
 *
 * One informer per kind the engine reads (Pods, Nodes, NodePools, NodeClaims, PodDisruptionBudgets, DaemonSets,
 * StorageClasses, PersistentVolumes and PersistentVolumeClaims (whose topology binds a pod's node), VolumeAttachments,
 * Services, ReplicaSets, StatefulSets and ReplicationControllers (kube-scheduler's sources of a default topology
 * spread's selector), and the node-class kinds the loaded provider declares whose CRD the API server serves). Each object an informer
 * decodes is queued (the latest version of each object wins); ns_mirror_apply moves what is queued into the cluster
 * between engine steps, on the engine's thread, so the engine never sees an object change under it.
 *
 * Writes the engine makes are applied to the cluster at once by the Kubernetes cluster-writes layer, which then
 * raises the object's floor (ns_mirror_floor) to the resourceVersion the API server answered: a queued version older
 * than that (a watch event from before the write) is dropped instead of undoing the write in the cluster.
 *
 * NodePools and NodeClaims whose node class is not in the cluster are held aside (Karpenter leaves a NodePool whose
 * NodeClassReady is False alone) and come back once the class exists; the cluster handed to the engine is always
 * resolved (ns_cluster_resolve).
 *
 * Clusters still on Karpenter's v1alpha5 API: when the API server serves karpenter.sh/v1alpha5 Provisioners, they are
 * read through the manifests' converter into NodePools (converted_from_provisioner), each logged at WARN the first
 * time it is seen. A NodePool and a Provisioner of the same name cannot both be a pool: the NodePool is used and the
 * Provisioner set aside (logged) until the NodePool goes. Node classes of the kind a Provisioner's providerRef means
 * by default (the provider declares it, NS_NODECLASS_DEFAULT_V1ALPHA5_REF) are read through that provider like any
 * node class, and logged at WARN the first time each is seen.
 *
 * CapacityBuffers, PodTemplates and Deployments (Karpenter's CapacityBuffer feature): watched only when the caller
 * asks (the gate is on), buffers only when the API server serves autoscaling.x-k8s.io/v1beta1 capacitybuffers. A
 * buffer whose PodTemplate (or scalableRef's Deployment, StatefulSet, ReplicaSet) is not in the cluster, or whose
 * scalableRef names a kind Karpenter does not resolve, is held aside (Karpenter's buffer is then not
 * ReadyForProvisioning and has no virtual pod) and comes back once it resolves.
 *
 * Threading: informers decode on their own threads; every other function is for the engine's thread.
 */
#ifndef NS_CONTROLLER_MIRROR_H
#define NS_CONTROLLER_MIRROR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/kube_client.h"
#include "kube/kube_resource.h"
#include "model/cluster.h"
#include "model/nodeclass_kinds.h"

typedef enum ns_mirror_kind {
    NS_MIRROR_POD = 0,
    NS_MIRROR_NODE,
    NS_MIRROR_NODEPOOL,
    NS_MIRROR_NODECLAIM,
    NS_MIRROR_PDB,
    NS_MIRROR_DAEMONSET,
    NS_MIRROR_NODECLASS,   /* one informer per served node-class kind */
    NS_MIRROR_PROVISIONER, /* karpenter.sh/v1alpha5, when served: converted into NodePools */
    NS_MIRROR_STORAGECLASS, /* storage objects: volume topology (sched/sched_volumes.c) */
    NS_MIRROR_PV,
    NS_MIRROR_PVC,
    NS_MIRROR_VOLUMEATTACHMENT, /* what node termination waits for (engine/ctl_termination.c) */
    /* what a default topology spread's selector is deduced from (sched/sched_default_spread.c) */
    NS_MIRROR_SERVICE,
    NS_MIRROR_REPLICASET,
    NS_MIRROR_STATEFULSET,
    NS_MIRROR_REPLICATIONCONTROLLER,
    /* warm headroom, with the CapacityBuffer gate on (model/buffer.h) */
    NS_MIRROR_CAPACITYBUFFER,
    NS_MIRROR_PODTEMPLATE,
    NS_MIRROR_DEPLOYMENT, /* a buffer's scalableRef (ReplicaSets and StatefulSets are watched anyway) */
} ns_mirror_kind;

typedef struct ns_mirror ns_mirror;

/* Whether to read CapacityBuffers (with the PodTemplates and Deployments they name). */
typedef enum ns_mirror_buffers {
    NS_MIRROR_BUFFERS_OFF,
    NS_MIRROR_BUFFERS_GATED,     /* the controller's gate is on: a WARN when the API server does not serve them */
    NS_MIRROR_BUFFERS_IF_SERVED, /* simulate --from-cluster: read them when served, say nothing otherwise */
} ns_mirror_buffers;

/* The client and the kinds (borrowed) must outlive the mirror. Node-class kinds whose resource the API server does
 * not serve are left out (logged). *out is the caller's (ns_mirror_free). */
int ns_mirror_new(ns_kube_client *c, const ns_nodeclass_kinds *kinds, ns_mirror_buffers buffers, ns_mirror **out);
/* Stops the informers and frees everything queued or held aside. Accepts NULL. */
void ns_mirror_free(ns_mirror *m);

/* Starts every informer. 0 or NS_ERR_INTERNAL. */
int ns_mirror_start(ns_mirror *m);
/* Lists every resource once on the calling thread, with no watch: a snapshot for readers that must only get and
 * list (simulate --from-cluster). Instead of ns_mirror_start. 0 or the first list's error, naming the resource. */
int ns_mirror_list_once(ns_mirror *m);

/* True once every informer has listed its resource once. */
bool ns_mirror_synced(ns_mirror *m);
/* Waits until synced or timeout_ms; false on timeout (the informers keep trying). */
bool ns_mirror_wait_synced(ns_mirror *m, int64_t timeout_ms);

/* Moves everything queued into c (replacing, adding, removing objects), holds aside NodePools and NodeClaims without
 * their node class, and resolves c. Pods that became pending get pending_since_ms = now (the batch window starts when
 * the controller first sees a pod pending). *changed (may be NULL) counts the objects applied. 0 or an error. */
int ns_mirror_apply(ns_mirror *m, ns_cluster *c, size_t *changed);

/* After a write: queued versions of that object older than rv are stale. rv NULL or not a number: no floor. */
void ns_mirror_floor(ns_mirror *m, ns_mirror_kind kind, const char *ns, const char *name, const char *rv);

/* After a write that removed the object (its last finalizer went while it was being deleted): queued versions of it
 * are stale until its deletion arrives. */
void ns_mirror_gone(ns_mirror *m, ns_mirror_kind kind, const char *ns, const char *name);

/* The uid of a cached object (NodePools and Provisioners for owner references) into buf; 0 or NS_ERR_NOT_FOUND. */
int ns_mirror_uid(ns_mirror *m, ns_mirror_kind kind, const char *ns, const char *name, char *buf, size_t len);

/* The CapacityBuffers held aside because their PodTemplate is not in the cluster (borrowed until the next apply). */
ns_buffer *const *ns_mirror_held_buffers(const ns_mirror *m, size_t *n);

/* Stats for tests and /metrics: informers' decode errors and objects held aside. */
typedef struct ns_mirror_stats {
    uint64_t decode_errors;
    size_t held_aside;
    size_t informers;
} ns_mirror_stats;
void ns_mirror_get_stats(ns_mirror *m, ns_mirror_stats *out);

#endif
