/*
 * Kubelet settings that change what fits on a node (Karpenter's KubeletConfiguration: v1alpha5 Provisioner
 * kubeletConfiguration, v1beta1 NodePool template.spec.kubelet, and a node class's spec.kubelet when its provider
 * declares the kind with NS_NODECLASS_KUBELET).
 */
#ifndef NS_KUBELET_H
#define NS_KUBELET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/labels.h"
#include "model/resources.h"
#include "nodesmith/provider.h"

typedef struct ns_kubelet_config {
    bool present; /* false: nothing was configured; every has_* below is false */
    bool has_max_pods;
    int32_t max_pods;
    bool has_pods_per_core;
    int32_t pods_per_core;
    bool has_kube_reserved;
    ns_res kube_reserved; /* cpu, memory, ephemeral-storage, pid (as extended "pid") */
    bool has_system_reserved;
    ns_res system_reserved;
    /* Eviction thresholds by signal ("memory.available" -> "100Mi" or "10%"), kept as written. */
    ns_labels eviction_hard;
    ns_labels eviction_soft;
    ns_labels eviction_soft_grace_period; /* signal -> duration text */
    bool has_eviction_max_pod_grace_period;
    int32_t eviction_max_pod_grace_period;
    bool has_image_gc_high;
    int32_t image_gc_high_threshold_percent;
    bool has_image_gc_low;
    int32_t image_gc_low_threshold_percent;
    bool has_cpu_cfs_quota;
    bool cpu_cfs_quota;
    char **cluster_dns;
    size_t n_cluster_dns;
} ns_kubelet_config;

int ns_kubelet_config_copy(const ns_kubelet_config *src, ns_kubelet_config *dst); /* 0 or NS_ERR_INTERNAL */
void ns_kubelet_config_free(ns_kubelet_config *k);                               /* members; accepts NULL */

#endif
