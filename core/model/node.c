#include "model/node.h"

#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"

ns_node *ns_node_new(void)
{
    ns_node *node = calloc(1, sizeof(*node));
    if (!node) {
        NS_FAIL(NS_ERR_INTERNAL, "out of memory allocating a Node");
        return NULL;
    }
    node->ready = true;
    return node;
}

void ns_node_free(ns_node *node)
{
    if (!node)
        return;
    ns_meta_free(&node->meta);
    free(node->provider_id);
    ns_taints_free(node->taints, node->n_taints);
    ns_res_free(&node->capacity);
    ns_res_free(&node->allocatable);
    ns_conditions_free(&node->conditions);
    free(node);
}

const char *ns_node_condition_status(const ns_node *node, const char *type, int64_t *since_ms)
{
    if (strcmp(type, "Ready") == 0) {
        if (since_ms)
            *since_ms = node->ready_since_ms;
        return node->ready ? "True" : node->ready_unknown ? "Unknown" : "False";
    }
    const ns_condition *c = ns_conditions_get(&node->conditions, type);
    if (c && since_ms)
        *since_ms = c->last_transition_ms;
    return c ? c->status : NULL;
}

ns_nodeclaim *ns_nodeclaim_new(void)
{
    ns_nodeclaim *claim = calloc(1, sizeof(*claim));
    if (!claim) {
        NS_FAIL(NS_ERR_INTERNAL, "out of memory allocating a NodeClaim");
        return NULL;
    }
    claim->expire_after_ms = INT64_C(720) * 3600 * 1000;
    claim->termination_grace_period_ms = -1;
    return claim;
}

void ns_nodeclaim_free(ns_nodeclaim *claim)
{
    if (!claim)
        return;
    ns_meta_free(&claim->meta);
    ns_taints_free(claim->taints, claim->n_taints);
    ns_taints_free(claim->startup_taints, claim->n_startup_taints);
    ns_selector_reqs_free(claim->requirements, claim->n_requirements);
    ns_nodeclass_ref_free(&claim->nodeclass_ref);
    free(claim->provider_id);
    free(claim->node_name);
    free(claim->image_id);
    ns_conditions_free(&claim->conditions);
    ns_res_free(&claim->requests);
    ns_res_free(&claim->capacity);
    ns_res_free(&claim->allocatable);
    free(claim);
}
