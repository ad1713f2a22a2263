/*
 * NodePool status, kept current as Karpenter's nodepool counter and readiness controllers keep it: status.nodes and
 * status.resources (cpu, memory, pods, ephemeral-storage, nodes) summed over the pool's NodeClaims that are not being
 * deleted (capacity once launched), and the conditions ValidationSucceeded, NodeClassReady and the root Ready. A
 * merge patch of /status is sent only when what would be written changed since the last write.
 */
#ifndef NS_NODEPOOL_STATUS_H
#define NS_NODEPOOL_STATUS_H

#include <cjson/cJSON.h>

#include "controller/controller_mirror.h"
#include "kube/kube_client.h"
#include "model/cluster.h"

typedef struct ns_nodepool_status ns_nodepool_status;

ns_nodepool_status *ns_nodepool_status_new(void); /* NULL with NS_ERR_INTERNAL recorded */
void ns_nodepool_status_free(ns_nodepool_status *s); /* accepts NULL */

/* {"status": {nodes, resources, conditions}} of pool np in c, the conditions True since since_ms with np's generation
 * as observedGeneration. A new tree (the caller's, cJSON_Delete), or NULL on allocation failure. */
cJSON *ns_nodepool_status_json(const ns_nodepool *np, const ns_cluster *c, int64_t since_ms);

/* One pass over c's NodePools. 0, or the first failed write's error after trying every pool. */
int ns_nodepool_status_sync(ns_nodepool_status *s, ns_kube_client *client, ns_mirror *mirror, const ns_cluster *c);

#endif
