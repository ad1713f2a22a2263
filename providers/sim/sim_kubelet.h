/*
 * A node class's spec.kubelet (SimNodeClass, EC2NodeClass v1) as the sim reads it: the settings that change a type's
 * capacity and overhead, applied the way Karpenter's AWS provider does (pods from maxPods or the ENI limit, capped
 * by podsPerCore; kube-reserved memory of 11Mi per pod + 255Mi; kubeReserved and systemReserved per resource;
 * eviction thresholds from evictionHard and evictionSoft).
 */
#ifndef SIM_KUBELET_H
#define SIM_KUBELET_H

#include <stdbool.h>
#include <stdint.h>

#include "nodesmith/provider.h"

typedef struct sim_state sim_state;

/* A threshold as written: an amount in bytes, or a percentage of capacity. */
typedef struct sim_threshold {
    bool set;
    bool percent;
    double value; /* bytes, or percent */
} sim_threshold;

/* One reserved-resource list; has_* says which resources it names. */
typedef struct sim_reserved {
    bool has_cpu, has_memory, has_ephemeral;
    int64_t cpu_milli, memory_bytes, ephemeral_bytes;
} sim_reserved;

typedef struct sim_kubelet {
    bool has_max_pods;
    int64_t max_pods;
    int64_t pods_per_core; /* 0 = unset */
    sim_reserved kube_reserved, system_reserved;
    sim_threshold hard_memory, hard_nodefs, soft_memory, soft_nodefs;
} sim_kubelet;

/* Reads spec.kubelet (an object; NULL = none) of node class `kind`/`name` into *out. Unknown fields and malformed
 * values are NS_ERR_INVALID_CONFIG naming the node class and the field. */
int sim_kubelet_parse(sim_state *s, const char *kind, const char *name, const ns_json *kubelet, sim_kubelet *out);

/* A threshold's amount for a resource of `capacity` (0 for 100%, as the kubelet reads it), or `fallback` when unset;
 * with both hard and soft set, the larger. */
int64_t sim_threshold_amount(const sim_threshold *hard, const sim_threshold *soft, int64_t capacity,
                             int64_t fallback);

#endif
