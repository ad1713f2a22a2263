/*
 * A NodePool's kubelet settings applied to the core's copy of an instance type (Karpenter's instance-type overhead
 * rules, pkg/providers/instancetype/types.go in the AWS provider).
 *
 * Where each half lives: the provider computes a type's capacity and overhead for the node class it is given, so a
 * node class's spec.kubelet (kinds declared NS_NODECLASS_KUBELET) is the provider's to honour. v1alpha5
 * Provisioners and v1beta1 NodePools carry kubelet settings on the pool, which list_instance_types never sees; the core applies those
 * here. A pool whose settings are the node class's own (v1 pools, filled by ns_cluster_resolve) is left alone, since
 * the provider already used them.
 *
 * Rules, as Karpenter's:
 *   - pods: maxPods when set, else the type's capacity; podsPerCore > 0 caps it at podsPerCore x vCPUs.
 *   - kube-reserved memory follows the pod count for types that reserve it the AWS way (11Mi per pod + 255Mi of the
 *     type's own pod capacity): a pool that lowers maxPods to 20 reserves 475Mi, not the ENI-based amount.
 *   - kubeReserved and systemReserved replace the resources they name and keep the type's others (an explicit 0 is
 *     read as "not named": ns_res cannot tell them apart).
 *   - evictionHard and evictionSoft memory.available and nodefs.available replace the type's thresholds, the larger
 *     of the two when both are set; percentages are of the type's memory or ephemeral-storage capacity, and 100%
 *     disables the threshold.
 */
#ifndef NS_SCHED_KUBELET_H
#define NS_SCHED_KUBELET_H

#include <stdbool.h>

#include "sched/sched_internal.h"

/* True when the core must apply the pool's kubelet settings itself (see above). */
bool sched_kubelet_applies(const ns_cluster *cl, const ns_nodepool *np);
/* The type's allocatable (before DaemonSet overhead) and capacity under kubelet settings k (NULL: the provider's). */
void sched_kubelet_resources(const sched *s, const ns_itype *t, const ns_kubelet_config *k, sched_vec *alloc,
                             sched_vec *capacity);

#endif
