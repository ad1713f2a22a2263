/*
 * Existing Nodes and Karpenter NodeClaims loaded from manifests (the cluster's current state).
 *
 * Memory: ns_node_free / ns_nodeclaim_free free the object and everything it owns (accept NULL).
 */
#ifndef NS_NODE_H
#define NS_NODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/conditions.h"
#include "model/meta.h"
#include "model/nodepool.h"
#include "model/requirements.h"
#include "model/resources.h"
#include "nodesmith/provider.h"

typedef struct ns_node {
    ns_meta meta; /* labels carry zone, instance type, karpenter.sh/nodepool, ... */
    char *provider_id;
    ns_taint *taints;
    size_t n_taints;
    bool unschedulable;
    ns_res capacity;    /* status.capacity */
    ns_res allocatable; /* status.allocatable; capacity when absent */
    bool ready;               /* status.conditions Ready=True; true when the manifest has no conditions */
    /* Ready is Unknown rather than False (only when !ready): the node controller stopped hearing from the kubelet,
     * which repair policies tell apart from a kubelet reporting NotReady. */
    bool ready_unknown;
    int64_t ready_since_ms;   /* when ready last changed (0 when unknown) */
    /* status.conditions other than Ready, whatever their status: what a node agent announces (for example AKS's node
     * problem detector's PreemptionScheduled, True), each True one of which the interruption controller asks the
     * provider about (event_from_node_condition, provider ABI 5), and what repair policies match (KernelReady False). */
    ns_conditions conditions;
} ns_node;

ns_node *ns_node_new(void);
void ns_node_free(ns_node *node);
/* The status of the node's condition `type` ("True", "False" or "Unknown"; Ready from ready and ready_unknown), with
 * its last transition time in *since_ms (may be NULL), or NULL when the node has no such condition. */
const char *ns_node_condition_status(const ns_node *node, const char *type, int64_t *since_ms);

typedef struct ns_nodeclaim {
    ns_meta meta; /* labels include karpenter.sh/nodepool */
    ns_taint *taints;
    size_t n_taints;
    ns_taint *startup_taints;
    size_t n_startup_taints;
    ns_selector_req *requirements;
    size_t n_requirements;
    ns_res requests; /* spec.resources.requests */
    ns_nodeclass_ref nodeclass_ref;
    int64_t expire_after_ms;             /* NS_DURATION_NEVER = never; default 720h */
    int64_t termination_grace_period_ms; /* -1 = not set */
    /* status */
    char *provider_id;
    char *node_name;
    char *image_id;
    ns_res capacity;
    ns_res allocatable;
    ns_conditions conditions; /* Launched, Registered, Initialized, Drifted, ... (see engine/engine.h) */
} ns_nodeclaim;

ns_nodeclaim *ns_nodeclaim_new(void);
void ns_nodeclaim_free(ns_nodeclaim *claim);

#endif
