/*
 * NodePool status, kept current as Karpenter's nodepool counter and readiness controllers keep it: status.nodes and
 * status.resources (cpu, memory, pods, ephemeral-storage, nodes) summed over the pool's NodeClaims that are not being
 * deleted (capacity once launched), and the conditions ValidationSucceeded, NodeClassReady and the root Ready. A
 * merge patch of /status is sent only when what would be written changed since the last write.
 */
#ifndef NS_NODEPOOL_STATUS_H
#define NS_NODEPOOL_STATUS_H

#include "controller/controller_mirror.h"
#include "kube/kube_client.h"
#include "model/cluster.h"

typedef struct ns_nodepool_status ns_nodepool_status;

ns_nodepool_status *ns_nodepool_status_new(void); /* NULL with NS_ERR_INTERNAL recorded */
void ns_nodepool_status_free(ns_nodepool_status *s); /* accepts NULL */

/* One pass over c's NodePools. 0, or the first failed write's error after trying every pool. */
int ns_nodepool_status_sync(ns_nodepool_status *s, ns_kube_client *client, ns_mirror *mirror, const ns_cluster *c);

#endif
