/*
 * The engine's model objects as the API server's JSON, written the way Karpenter writes them: the one encoder of
 * NodeClaims and Nodes for the controller (decoding is core/kube's, through core/manifest); their pieces are
 * model/model_json.h's.
 *
 * Every function returns a new cJSON tree (the caller's, cJSON_Delete) or NULL with NS_ERR_INTERNAL recorded.
 */
#ifndef NS_KUBE_OBJECTS_H
#define NS_KUBE_OBJECTS_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "model/conditions.h"
#include "model/labels.h"
#include "model/model_json.h"
#include "model/node.h"
#include "model/resources.h"

/* The object a NodeClaim belongs to: its NodePool (karpenter.sh/v1 NodePool), or the v1alpha5 Provisioner it was
 * converted from (karpenter.sh/v1alpha5 Provisioner), so the API server's garbage collector deletes the claims with
 * the object that is really there. */
typedef struct ns_kube_owner {
    const char *api_version;
    const char *kind;
    const char *name;
    const char *uid;
} ns_kube_owner;

/* Appends to list one condition as operatorpkg's SetCondition writes it: type, status, reason, message,
 * lastTransitionTime (since_ms) and observedGeneration, the generation of the object it is written on (omitted at 0,
 * as omitempty does). false on allocation failure (nothing recorded: the caller names the object). */
bool ns_kube_condition_add(cJSON *list, const char *type, const char *status, const char *reason, const char *message,
                           int64_t since_ms, int64_t generation);
/* A NodeClaim to create: generateName "<pool name>-", labels, annotations, finalizers, an owner reference to `pool`
 * (blockOwnerDeletion), and spec (taints, startupTaints, requirements, resources, nodeClassRef, expireAfter,
 * terminationGracePeriod when set). */
cJSON *ns_kube_nodeclaim_json(const ns_nodeclaim *claim, const ns_kube_owner *pool);
/* {"status": {providerID, nodeName, imageID, capacity, allocatable, conditions}} for a /status merge patch; the
 * conditions' observedGeneration is the claim's metadata.generation. */
cJSON *ns_kube_nodeclaim_status_json(const ns_nodeclaim *claim);
/* A Node to create: name, labels, annotations, spec.providerID, spec.taints, spec.unschedulable. */
cJSON *ns_kube_node_json(const ns_node *node);
/* {"status": {capacity, allocatable, conditions: [Ready]}} for a /status strategic merge patch; now_ms stamps the
 * heartbeat. */
cJSON *ns_kube_node_status_json(const ns_node *node, int64_t now_ms);

#endif
