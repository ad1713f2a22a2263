/* Existing capacity from manifests in a simulated cloud (simulation/engine_sim.h): a launched NodeClaim the manifests
 * describe gets an instance of its own offering, so the engine manages it as one it launched instead of garbage
 * collecting it as a claim whose instance is gone. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context/ns_ctx.h"
#include "engine/engine_internal.h"
#include "engine/launch_request.h"
#include "errors/ns_error.h"
#include "log/ns_log.h"
#include "model/model_util.h"
#include "simulation/engine_sim.h"

static int set_id(char **field, const char *id)
{
    char *copy = ns_strdup(id);
    if (!copy)
        return NS_ERR_INTERNAL;
    free(*field);
    *field = copy;
    return 0;
}

/* Launches the claim's offering (its instance-type, zone and capacity-type labels, which a launched claim carries)
 * with the claim's name as the client token, and gives the claim and its Node the instance's provider ID. */
static int back_claim(ns_engine *e, ns_nodeclaim *claim)
{
    const char *name = claim->meta.name;
    const char *type = ns_labels_get(&claim->meta.labels, NS_LABEL_INSTANCE_TYPE);
    const char *zone = ns_labels_get(&claim->meta.labels, NS_LABEL_ZONE);
    const char *capacity = ns_labels_get(&claim->meta.labels, NS_LABEL_CAPACITY_TYPE);
    if (!type || !zone || !capacity)
        return NS_FAIL(NS_ERR_INVALID_CONFIG, "NodeClaim %s (%s:%d): status.providerID is set, so its instance must "
                       "exist; give it the labels %s, %s and %s of the offering it runs on", name,
                       claim->meta.source_file ? claim->meta.source_file : "?", claim->meta.source_line,
                       NS_LABEL_INSTANCE_TYPE, NS_LABEL_ZONE, NS_LABEL_CAPACITY_TYPE);
    const ns_nodeclass_def *def = ns_cluster_nodeclass_for(e->cluster, &claim->nodeclass_ref);
    if (!def)
        return NS_FAIL(NS_ERR_INVALID_CONFIG, "NodeClaim %s: its node class %s %s is not in the manifests", name,
                       claim->nodeclass_ref.kind ? claim->nodeclass_ref.kind : "?",
                       claim->nodeclass_ref.name ? claim->nodeclass_ref.name : "?");
    ns_node *node = ns_engine_node_of_claim(e, claim);
    int rc = ns_engine_refresh_types(e);
    if (rc < 0)
        return rc;
    double price = ns_engine_offering_price(e, def->kind, def->meta.name, type, zone, capacity);
    if (price < 0)
        return NS_FAIL(NS_ERR_INVALID_CONFIG, "NodeClaim %s: node class %s %s offers no %s in %s as %s", name,
                       def->kind, def->meta.name, type, zone, capacity);
    ns_launch_option opt = {.struct_size = sizeof(opt), .instance_type = type, .zone = zone, .capacity_type = capacity,
                            .price_per_hour = price};
    ns_launch_request req;
    ns_launch_request_for(claim, e->cluster_name, &def->abi, &opt, 1, &req);
    ns_launch_result res;
    memset(&res, 0, sizeof(res));
    res.struct_size = sizeof(res);
    rc = ns_plugin_launch(e->plugin, &req, &res);
    if (rc < 0)
        return ns_error_prefix("NodeClaim %s: starting its %s/%s/%s instance in the simulated cloud: ", name, type,
                               zone, capacity);
    char was[NS_PROVIDER_ID_MAX];
    snprintf(was, sizeof(was), "%s", claim->provider_id);
    char num[32];
    snprintf(num, sizeof(num), "%.6f", price);
    /* The price the engine's claims carry, for cost and consolidation, unless the manifest gave one. */
    if (set_id(&claim->provider_id, res.provider_id) < 0 || (node && set_id(&node->provider_id, res.provider_id) < 0) ||
        (!ns_labels_get(&claim->meta.annotations, NS_ANNOTATION_PRICE) &&
         ns_labels_set(&claim->meta.annotations, NS_ANNOTATION_PRICE, num) < 0))
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory recording the instance of NodeClaim %s", name);
    if ((rc = e->writes.ops->update_nodeclaim(e->writes.ctx, claim)) < 0 ||
        (node && (rc = e->writes.ops->update_node_status(e->writes.ctx, node)) < 0))
        return rc;
    ns_log(NS_LOG_INFO, "simulate", "started the instance of a manifest nodeclaim", "NodeClaim", name, "Node",
           node ? node->meta.name : "", "manifest-provider-id", was, "provider-id", res.provider_id, NULL);
    return 0;
}

static int back_manifest_claims(ns_engine *e)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < e->cluster->n_nodeclaims; i++) {
        ns_nodeclaim *claim = e->cluster->nodeclaims[i];
        if (!claim->provider_id || !claim->provider_id[0] || ns_claim_deleting(claim))
            continue;
        ns_instance inst;
        memset(&inst, 0, sizeof(inst));
        inst.struct_size = sizeof(inst);
        rc = ns_plugin_get_instance(e->plugin, claim->provider_id, &inst);
        if (rc == NS_ERR_NOT_FOUND) {
            ns_error_clear();
            rc = back_claim(e, claim);
        }
    }
    return rc;
}

/* Runs in the engine's context, as every entry point of engine.h. */
int ns_engine_back_manifest_claims(ns_engine *e)
{
    ns_ctx *previous = ns_ctx_enter(ns_plugin_ctx(ns_engine_plugin(e)));
    int rc = back_manifest_claims(e);
    ns_ctx_leave(previous);
    return rc;
}
