/*
 * Workload owners of pods as the cluster reports them (Deployments, ReplicaSets, StatefulSets, ReplicationControllers,
 * whose plain label-map selector is kept as matchLabels): what Karpenter reads
 * of them (the replicas wanted and ready, the pod selector, a ReplicaSet's owning Deployment in meta.owner_*, a
 * StatefulSet's volume claim templates, the pod template a CapacityBuffer's scalableRef reads). Manifests expand
 * workloads into their pods and record the workload beside them (core/manifest/decode_workloads.c).
 *
 * Memory: a workload owns everything it points to; ns_workload_free frees it too and accepts NULL.
 */
#ifndef NS_WORKLOAD_H
#define NS_WORKLOAD_H

#include <stdint.h>

#include "model/meta.h"
#include "model/pod.h"
#include "model/selector.h"

typedef struct ns_workload {
    ns_meta meta;
    const char *kind;         /* "Deployment", "ReplicaSet", "StatefulSet" or "ReplicationController" (static) */
    int32_t replicas;         /* spec.replicas (Kubernetes' default 1) */
    int32_t ready_replicas;   /* status.readyReplicas */
    int32_t available_replicas; /* status.availableReplicas */
    int64_t observed_generation; /* status.observedGeneration */
    ns_label_selector selector; /* spec.selector */
    char **volume_claim_templates; /* StatefulSet: spec.volumeClaimTemplates[].metadata.name */
    size_t n_volume_claim_templates;
    ns_pod *template_pod; /* spec.template as a pod (Deployment, ReplicaSet, StatefulSet): a buffer's scalableRef
                             takes its shape from it (model/buffer.h); NULL for a ReplicationController */
} ns_workload;

void ns_workload_free(ns_workload *w);

#endif
