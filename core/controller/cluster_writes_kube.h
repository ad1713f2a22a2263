/*
 * The cluster-writes layer over the Kubernetes API (engine/cluster_writes.h): every write the engine makes goes to
 * the API server the way Karpenter makes it, and, once the server accepted it, into the controller's cluster at once
 * (so the rest of the step sees it) with the answered resourceVersion as the object's floor in the mirror.
 *
 *   NodeClaims   create: POST with generateName "<nodepool>-" (the server's name replaces the engine's), labels,
 *                annotations, the termination finalizer, an owner reference to the NodePool (blockOwnerDeletion),
 *                spec; then the status subresource. update: merge patch of labels, annotations and finalizers under
 *                the read resourceVersion (retried on 409), and a merge patch of /status. delete: DELETE with the uid
 *                precondition. Finalizer removal: ns_kube_remove_finalizer.
 *   Nodes        create (the simulated kubelet registering): POST, then /status (capacity, allocatable, Ready).
 *                Taints: read-modify-patch of spec.taints (retried on 409), so taints others add stay. Labels and
 *                unschedulable: merge patch. Status: strategic merge patch of the Ready condition and resources.
 *                Finalizer removal: the strategic $deleteFromPrimitiveList patch.
 *   Pods         evict: the Eviction API (a PDB's 429 is NS_ERR_THROTTLED). delete: DELETE with the uid precondition
 *                and a zero grace period when the engine forces it. create and bind are the kubelet's and
 *                kube-scheduler's jobs on a live cluster: NS_ERR_UNSUPPORTED.
 *   NodePools and node classes are the operator's: put/delete are NS_ERR_UNSUPPORTED.
 *   concurrently: the jobs on up to NS_WRITE_JOBS_THREADS threads (engine/write_jobs.h); what the Node and NodeClaim
 *                writes change besides their own object (the cluster's lists, the mirror's floors, the counters)
 *                changes under the store's lock.
 *
 * The layer does not own the client, the mirror or the cluster; they must outlive it.
 */
#ifndef NS_CLUSTER_WRITES_KUBE_H
#define NS_CLUSTER_WRITES_KUBE_H

#include "controller/controller_mirror.h"
#include "engine/cluster_writes.h"
#include "kube/kube_client.h"

/* *out's ctx is owned (ops->destroy frees it; ns_engine_new_with_store takes it). 0 or NS_ERR_INTERNAL. */
int ns_cluster_writes_kube_new(ns_kube_client *client, ns_mirror *mirror, ns_cluster *cluster,
                               ns_cluster_writes *out);

/* Counters for /metrics (karpenter_pods_eviction_requests_total and friends). */
typedef struct ns_kube_writes_stats {
    uint64_t nodeclaims_created;
    uint64_t evictions_ok, evictions_blocked, evictions_gone;
    uint64_t write_errors;
} ns_kube_writes_stats;
void ns_cluster_writes_kube_stats(const ns_cluster_writes *w, ns_kube_writes_stats *out);

#endif
