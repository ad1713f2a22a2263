#include "simulation/engine_sim.h"

#include <string.h>

#include "clock/ns_clock.h"

#include "context/ns_ctx.h"
#include "engine/engine_internal.h"
#include "errors/ns_error.h"
#include "manifest/decoders.h"
#include "simulation/cluster_writes_mem.h"

int ns_engine_new(ns_cluster *cluster, ns_plugin *plugin, const ns_engine_config *cfg, ns_engine **out)
{
    *out = NULL;
    ns_cluster_writes store;
    bool stand_ins = cfg ? cfg->simulate_controllers : true;
    int rc = cluster ? ns_cluster_writes_mem_new(cluster, stand_ins, &store)
                     : NS_FAIL(NS_ERR_INVALID_ARGUMENT, "creating the engine: a cluster is required");
    if (rc != NS_OK)
        return rc;
    return ns_engine_new_with_store(cluster, plugin, cfg, store, out);
}

static int sim_scale_workload(ns_engine *e, const char *ns, const char *kind, const char *name, size_t replicas)
{
    return ns_cluster_writes_mem_scale(ns_engine_store(e), ns, kind, name, replicas);
}

static int sim_inject_event(ns_engine *e, const char *node_or_claim, ns_event_kind kind, int64_t deadline_ms)
{
    const ns_nodeclaim *claim = ns_cluster_find_nodeclaim(e->cluster, node_or_claim);
    const ns_node *node = ns_cluster_find_node(e->cluster, node_or_claim);
    const char *pid = claim && claim->provider_id ? claim->provider_id : node ? node->provider_id : NULL;
    if (!pid)
        return NS_FAIL(NS_ERR_NOT_FOUND, "injecting an event: no launched node or nodeclaim named %s",
                       node_or_claim);
    ns_fault f = {.struct_size = sizeof(f), .kind = NS_FAULT_INTERRUPT, .event = kind, .provider_id = pid,
                  .deadline_ms = deadline_ms};
    return ns_plugin_inject_fault(e->plugin, &f);
}

static int sim_set_node_condition(ns_engine *e, const char *name, const char *type, const char *status,
                                  const char *reason, const char *message)
{
    ns_node *n = ns_cluster_find_node(e->cluster, name);
    if (!n)
        return NS_FAIL(NS_ERR_NOT_FOUND, "setting condition %s on node %s: no such Node", type, name);
    int64_t now = ns_clock_now_ms();
    if (strcmp(type, "Ready") == 0) {
        bool ready = strcmp(status, "True") == 0, unknown = strcmp(status, "Unknown") == 0;
        if (ready != n->ready || unknown != n->ready_unknown)
            n->ready_since_ms = now;
        n->ready = ready;
        n->ready_unknown = unknown;
    } else if (ns_conditions_set(&n->conditions, type, status, reason, message, now) < 0)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory setting condition %s on node %s", type, name);
    return e->writes.ops->update_node_status(e->writes.ctx, n);
}

static int sim_inject_capacity_fault(ns_engine *e, const char *instance_type, const char *zone,
                                    const char *capacity_type, bool clear)
{
    ns_fault f = {.struct_size = sizeof(f), .kind = clear ? NS_FAULT_CLEAR : NS_FAULT_INSUFFICIENT_CAPACITY,
                  .instance_type = instance_type, .zone = zone, .capacity_type = capacity_type};
    int rc = ns_plugin_inject_fault(e->plugin, &f);
    e->types.listed_in_step = -1;
    return rc;
}

/* A packed pod is read-only: the patched pod is a copy that takes its place, with its do-not-disrupt re-read. */
static int sim_set_pod_meta(ns_engine *e, const char *ns, const char *name, bool annotation, const char *key,
                            const char *value)
{
    ns_pod *old = ns_cluster_find_pod(e->cluster, ns, name);
    if (!old)
        return NS_FAIL(NS_ERR_NOT_FOUND, "no Pod %s/%s", ns ? ns : "default", name);
    ns_pod *pod = ns_pod_copy(old);
    if (!pod || ns_labels_assign(annotation ? &pod->meta.annotations : &pod->meta.labels, key, value) < 0) {
        ns_pod_free(pod);
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory patching Pod %s/%s", ns ? ns : "default", name);
    }
    if (annotation && strcmp(key, NS_ANNOTATION_DO_NOT_DISRUPT) == 0)
        ns_decode_do_not_disrupt(pod);
    return ns_cluster_replace_pod(e->cluster, old, pod);
}

static int sim_set_object_meta(ns_engine *e, const char *kind, const char *ns, const char *name, bool annotation,
                               const char *key, const char *value)
{
    if (strcmp(kind, "Pod") == 0)
        return sim_set_pod_meta(e, ns, name, annotation, key, value);
    if (strcmp(kind, "Node") == 0) {
        ns_node *n = ns_cluster_find_node(e->cluster, name);
        if (!n)
            return NS_FAIL(NS_ERR_NOT_FOUND, "no Node %s", name);
        return annotation ? e->writes.ops->set_node_annotation(e->writes.ctx, n, key, value)
                          : e->writes.ops->set_node_label(e->writes.ctx, n, key, value);
    }
    ns_nodeclaim *claim = ns_cluster_find_nodeclaim(e->cluster, name);
    if (!claim)
        return NS_FAIL(NS_ERR_NOT_FOUND, "no NodeClaim %s", name);
    if (ns_labels_assign(annotation ? &claim->meta.annotations : &claim->meta.labels, key, value) < 0)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory patching NodeClaim %s", name);
    return e->writes.ops->update_nodeclaim(e->writes.ctx, claim);
}

/* Taints the new list does not have are removed, then each of the list is put (same key and effect: replaced). */
static int sim_set_node_taints(ns_engine *e, const char *name, const ns_taint *taints, size_t n)
{
    ns_node *node = ns_cluster_find_node(e->cluster, name);
    if (!node)
        return NS_FAIL(NS_ERR_NOT_FOUND, "no Node %s", name);
    int rc = 0;
    for (size_t i = node->n_taints; rc == 0 && i-- > 0;) {
        bool kept = false;
        for (size_t j = 0; j < n && !kept; j++)
            kept = ns_taint_matches(&node->taints[i], &taints[j]);
        if (!kept)
            rc = e->writes.ops->remove_node_taint(e->writes.ctx, node, node->taints[i].key, node->taints[i].effect);
    }
    for (size_t j = 0; rc == 0 && j < n; j++)
        rc = e->writes.ops->add_node_taint(e->writes.ctx, node, &taints[j]);
    return rc;
}

static int sim_set_node_unschedulable(ns_engine *e, const char *name, bool unschedulable)
{
    ns_node *node = ns_cluster_find_node(e->cluster, name);
    return node ? e->writes.ops->set_node_unschedulable(e->writes.ctx, node, unschedulable)
                : NS_FAIL(NS_ERR_NOT_FOUND, "no Node %s", name);
}

/* Runs in the engine's context, as every entry point of engine.h. */
int ns_engine_scale_workload(ns_engine *e, const char *ns, const char *kind, const char *name, size_t replicas)
{
    ns_ctx *previous = ns_ctx_enter(ns_plugin_ctx(ns_engine_plugin(e)));
    int rc = sim_scale_workload(e, ns, kind, name, replicas);
    ns_ctx_leave(previous);
    return rc;
}

/* Runs in the engine's context, as every entry point of engine.h. */
int ns_engine_inject_event(ns_engine *e, const char *node_or_claim, ns_event_kind kind, int64_t deadline_ms)
{
    ns_ctx *previous = ns_ctx_enter(ns_plugin_ctx(ns_engine_plugin(e)));
    int rc = sim_inject_event(e, node_or_claim, kind, deadline_ms);
    ns_ctx_leave(previous);
    return rc;
}

/* Runs in the engine's context, as every entry point of engine.h. */
int ns_engine_set_node_condition(ns_engine *e, const char *node, const char *type, const char *status,
                                 const char *reason, const char *message)
{
    ns_ctx *previous = ns_ctx_enter(ns_plugin_ctx(ns_engine_plugin(e)));
    int rc = sim_set_node_condition(e, node, type, status, reason, message);
    ns_ctx_leave(previous);
    return rc;
}

/* Runs in the engine's context, as every entry point of engine.h. */
int ns_engine_inject_capacity_fault(ns_engine *e, const char *instance_type, const char *zone,
                                    const char *capacity_type, bool clear)
{
    ns_ctx *previous = ns_ctx_enter(ns_plugin_ctx(ns_engine_plugin(e)));
    int rc = sim_inject_capacity_fault(e, instance_type, zone, capacity_type, clear);
    ns_ctx_leave(previous);
    return rc;
}

/* Runs in the engine's context, as every entry point of engine.h. */
int ns_engine_set_object_meta(ns_engine *e, const char *kind, const char *ns, const char *name, bool annotation,
                              const char *key, const char *value)
{
    ns_ctx *previous = ns_ctx_enter(ns_plugin_ctx(ns_engine_plugin(e)));
    int rc = sim_set_object_meta(e, kind, ns, name, annotation, key, value);
    if (rc < 0)
        ns_error_prefix("%s %s%s%s: metadata.%s.%s: ", kind, ns ? ns : "", ns ? "/" : "", name,
                        annotation ? "annotations" : "labels", key);
    ns_ctx_leave(previous);
    return rc;
}

/* Runs in the engine's context, as every entry point of engine.h. */
int ns_engine_set_node_taints(ns_engine *e, const char *node, const ns_taint *taints, size_t n)
{
    ns_ctx *previous = ns_ctx_enter(ns_plugin_ctx(ns_engine_plugin(e)));
    int rc = sim_set_node_taints(e, node, taints, n);
    if (rc < 0)
        ns_error_prefix("Node %s: spec.taints: ", node);
    ns_ctx_leave(previous);
    return rc;
}

/* Runs in the engine's context, as every entry point of engine.h. */
int ns_engine_set_node_unschedulable(ns_engine *e, const char *node, bool unschedulable)
{
    ns_ctx *previous = ns_ctx_enter(ns_plugin_ctx(ns_engine_plugin(e)));
    int rc = sim_set_node_unschedulable(e, node, unschedulable);
    if (rc < 0)
        ns_error_prefix("Node %s: spec.unschedulable: ", node);
    ns_ctx_leave(previous);
    return rc;
}

/* Runs in the engine's context, as every entry point of engine.h. */
int ns_engine_inject_launch_error(ns_engine *e, int error, int32_t count)
{
    ns_ctx *previous = ns_ctx_enter(ns_plugin_ctx(ns_engine_plugin(e)));
    ns_fault f = {.struct_size = sizeof(f), .kind = error == NS_ERR_THROTTLED ? NS_FAULT_THROTTLE : NS_FAULT_FAIL,
                  .method = "launch", .count = (uint32_t)count, .error = (ns_err)error};
    int rc = ns_plugin_inject_fault(e->plugin, &f);
    ns_ctx_leave(previous);
    return rc;
}

int ns_engine_inject_launch_timeout(ns_engine *e, int32_t count)
{
    ns_ctx *previous = ns_ctx_enter(ns_plugin_ctx(ns_engine_plugin(e)));
    int rc = ns_plugin_inject_hang(e->plugin, "launch", (uint32_t)count);
    ns_ctx_leave(previous);
    return rc;
}
