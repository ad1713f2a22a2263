/* The engine: construction, the step loop, the decision log and history, and the timeline hooks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "context/ns_ctx.h"
#include "engine/engine_internal.h"
#include "errors/ns_error.h"
#include "log/ns_log.h"
#include "model/model_util.h"

void ns_engine_config_default(ns_engine_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->struct_size = sizeof(*cfg);
    cfg->cluster_name = "nodesmith";
    cfg->registration_ttl_ms = 15 * 60 * 1000;
    cfg->registration_delay_ms = 30 * 1000;
    cfg->initialization_delay_ms = 15 * 1000;
    cfg->batch_idle_ms = 1000;
    cfg->batch_max_ms = 10 * 1000;
    cfg->stabilization_ms = 15 * 1000;
    cfg->orphan_gc_grace_ms = 30 * 1000;
    cfg->unavailable_offering_ttl_ms = 3 * 60 * 1000;
    cfg->tick_ms = 1000;
    cfg->act_on_rebalance = false;
    cfg->simulate_kubelet = true;
    cfg->simulate_scheduler = true;
    cfg->simulate_controllers = true;
    cfg->volume_detach_delay_ms = 10000;
    cfg->reserved_capacity = true;
}

static void store_destroy(ns_cluster_writes *store)
{
    if (store->ops && store->ops->destroy)
        store->ops->destroy(store->ctx);
    memset(store, 0, sizeof(*store));
}

int ns_engine_new_with_store(ns_cluster *cluster, ns_plugin *plugin, const ns_engine_config *cfg,
                             ns_cluster_writes store, ns_engine **out)
{
    *out = NULL;
    if (!cluster || !plugin || !store.ops) {
        store_destroy(&store);
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT,
                       "creating the engine: a cluster, a provider plugin and a cluster-writes store are required");
    }
    ns_engine *e = calloc(1, sizeof(*e));
    if (!e) {
        store_destroy(&store);
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory creating the engine");
    }
    e->store = store;
    ns_engine_count_writes(e);
    e->wake_ms = INT64_MAX;
    ns_engine_config_default(&e->cfg);
    if (cfg)
        memcpy(&e->cfg, cfg, cfg->struct_size && cfg->struct_size < sizeof(*cfg) ? cfg->struct_size : sizeof(*cfg));
    e->cfg.struct_size = sizeof(e->cfg);
    if (e->cfg.tick_ms <= 0)
        e->cfg.tick_ms = 1000;
    e->cluster = cluster;
    e->plugin = plugin;
    e->ctx = ns_plugin_ctx(plugin);
    e->types.listed_in_step = -1;
    e->last_round_ms = -1;
    /* Reproducible for the same clock and cluster; a rebuilt engine over a cluster that already holds claims draws
     * another sequence than the engine before it. */
    ns_name_rng_seed(&e->names, (uint64_t)ns_ctx_now_ms(e->ctx) ^ ((uint64_t)cluster->n_nodeclaims * UINT64_C(0x9e3779b97f4a7c15)));
    int rc = NS_OK;
    if (!(e->cluster_name = ns_strdup(e->cfg.cluster_name ? e->cfg.cluster_name : "nodesmith")))
        rc = NS_FAIL(NS_ERR_INTERNAL, "out of memory creating the engine");
    e->cfg.cluster_name = e->cluster_name;
    if (rc != NS_OK) {
        ns_engine_free(e);
        return rc;
    }
    *out = e;
    return NS_OK;
}

void ns_engine_free(ns_engine *e)
{
    if (!e)
        return;
    for (size_t i = 0; i < e->n_controllers; i++) {
        if (e->controllers[i].free_ctx)
            e->controllers[i].free_ctx(e->controllers[i].ctx);
        free(e->controllers[i].name);
    }
    for (size_t i = 0; i < e->n_decisions; i++)
        free(e->decisions[i].method); /* the block of all six texts (engine_record) */
    free(e->decisions);
    free(e->history);
    free(e->deadlines);
    ns_strv_free(e->blocked, e->n_blocked);
    ns_strv_free(e->deferred, e->n_deferred);
    ns_strv_free(e->repair_blocked, e->n_repair_blocked);
    ns_engine_repair_policies_free(&e->repair);
    ns_engine_headroom_free(&e->headroom);
    ns_engine_types_free(&e->types);
    ns_unavailable_free(&e->unavailable);
    store_destroy(&e->store);
    free(e->cluster_name);
    free(e->listing_error);
    free(e);
}

void ns_engine_set_stop_flag(ns_engine *e, const volatile sig_atomic_t *flag)
{
    e->stop = flag;
}

int ns_engine_check_stop(const ns_engine *e)
{
    return e->stop && *e->stop ? NS_FAIL(NS_ERR_INTERNAL, "stopped by a signal") : NS_OK;
}

const char *ns_engine_listing_error(const ns_engine *e)
{
    return e->listing_error;
}

int64_t ns_engine_steps(const ns_engine *e)
{
    return e->step_seq;
}

const ns_engine_config *ns_engine_get_config(const ns_engine *e)
{
    return &e->cfg;
}

ns_cluster *ns_engine_cluster(const ns_engine *e)
{
    return e->cluster;
}

ns_plugin *ns_engine_plugin(const ns_engine *e)
{
    return e->plugin;
}

ns_cluster_writes *ns_engine_store(ns_engine *e)
{
    return &e->store;
}

void ns_engine_set_writes(ns_engine *e, const ns_cluster_writes *w)
{
    e->writes = *w;
}

int ns_engine_register_controller(ns_engine *e, const char *name, ns_engine_controller_fn fn, void *ctx,
                                  void (*free_ctx)(void *ctx))
{
    if (!fn || !name)
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "registering a controller: a name and a function are required");
    if (e->n_controllers == NS_ENGINE_MAX_CONTROLLERS)
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "registering controller %s: at most %d controllers", name,
                       NS_ENGINE_MAX_CONTROLLERS);
    char *copy = ns_strdup(name);
    if (!copy)
        return NS_ERR_INTERNAL;
    e->controllers[e->n_controllers++] = (ns_engine_controller){copy, fn, ctx, free_ctx};
    return NS_OK;
}

/* ---- Step */

static int run_controller(ns_engine *e, const char *name, int (*fn)(ns_engine *))
{
    int rc = fn(e);
    if (rc != NS_OK)
        ns_error_prefix("%s controller: ", name);
    return rc;
}

static int engine_step(ns_engine *e)
{
    e->activity_at_step = e->activity;
    e->wake_ms = INT64_MAX;
    ns_unavailable_expire(&e->unavailable, ns_clock_now_ms());
    static const struct {
        const char *name;
        int (*fn)(ns_engine *);
    } before[] = {{"interruption", ns_ctl_interruption}, {"garbage collection", ns_ctl_gc},
                  {"kubelet", ns_ctl_kubelet},           {"attach-detach", ns_ctl_attach_detach},
                  {"node repair", ns_ctl_repair},
                  {"lifecycle", ns_ctl_lifecycle},
                  {"disruption hand-over", ns_ctl_handover}, {"static capacity", ns_ctl_static},
                  {"provisioning", ns_ctl_provisioner}};
    int rc = NS_OK;
    for (size_t i = 0; rc == NS_OK && i < sizeof(before) / sizeof(before[0]); i++)
        rc = run_controller(e, before[i].name, before[i].fn);
    for (size_t i = 0; rc == NS_OK && i < e->n_controllers; i++)
        if ((rc = e->controllers[i].fn(e, e->controllers[i].ctx)) != NS_OK)
            ns_error_prefix("%s controller: ", e->controllers[i].name);
    if (rc == NS_OK)
        rc = run_controller(e, "termination", ns_ctl_termination);
    /* A listing made before the step (or during it) serves the rest of it; the next step lists again. */
    e->step_seq++;
    if (rc == NS_OK) {
        if (ns_grow((void **)&e->history, &e->cap_history, e->n_history + 1, sizeof(*e->history)) < 0)
            return NS_ERR_INTERNAL;
        ns_engine_sample_now(e, &e->history[e->n_history++]);
        ns_engine_declare_due(e);
    }
    return rc;
}

static int engine_run_until(ns_engine *e, int64_t until_ms)
{
    int rc = ns_engine_step(e);
    while (rc == NS_OK && ns_clock_is_simulated() && ns_clock_now_ms() < until_ms &&
           (rc = ns_engine_check_stop(e)) == NS_OK) {
        ns_clock_advance(ns_engine_next_step_ms(e, until_ms) - ns_clock_now_ms());
        rc = ns_engine_step(e);
    }
    return rc;
}

int ns_engine_run_for(ns_engine *e, int64_t ms)
{
    return ns_engine_run_until(e, ns_ctx_now_ms(e->ctx) + ms);
}

static void engine_advance_clock(ns_engine *e, int64_t ms)
{
    (void)e;
    ns_clock_advance(ms);
}

/* ---- Decisions */

static const char *const kind_messages[] = {
    [NS_DECISION_CREATED_NODECLAIM] = "created nodeclaim",
    [NS_DECISION_LAUNCHED_NODECLAIM] = "launched nodeclaim",
    [NS_DECISION_LAUNCH_FAILED] = "failed launching nodeclaim",
    [NS_DECISION_OFFERING_UNAVAILABLE] = "marked offering unavailable",
    [NS_DECISION_REGISTERED_NODECLAIM] = "registered nodeclaim",
    [NS_DECISION_INITIALIZED_NODECLAIM] = "initialized nodeclaim",
    [NS_DECISION_REGISTRATION_TIMEOUT] = "nodeclaim registration timed out",
    [NS_DECISION_DISRUPTING] = "disrupting node(s)",
    [NS_DECISION_DISRUPTION_ABORTED] = "abandoned disruption",
    [NS_DECISION_TAINTED_NODE] = "tainted node",
    [NS_DECISION_UNTAINTED_NODE] = "untainted node",
    [NS_DECISION_EVICTED_POD] = "evicted pod",
    [NS_DECISION_EVICTION_BLOCKED] = "eviction blocked",
    [NS_DECISION_TERMINATED_INSTANCE] = "terminated instance",
    [NS_DECISION_DELETED_NODE] = "deleted node",
    [NS_DECISION_DELETED_NODECLAIM] = "deleted nodeclaim",
    [NS_DECISION_INTERRUPTION] = "received interruption event",
    [NS_DECISION_REBALANCE_RECORDED] = "recorded rebalance recommendation",
    [NS_DECISION_GC_INSTANCE] = "garbage collected instance",
    [NS_DECISION_GC_NODECLAIM] = "garbage collected nodeclaim",
    [NS_DECISION_NODE_LOST] = "removed node of terminated instance",
    [NS_DECISION_POD_RESCHEDULED] = "re-planned pod",
    [NS_DECISION_UNSCHEDULABLE_POD] = "could not schedule pod",
    [NS_DECISION_DISRUPTION_INFO] = "disruption",
    [NS_DECISION_DISRUPTION_BLOCKED] = "disruption blocked",
    [NS_DECISION_HELD_BY_LIMITS] = "pod held back by NodePool limits",
    [NS_DECISION_UNHEALTHY_NODE] = "deleting unhealthy node",
    [NS_DECISION_REPAIR_BLOCKED] = "node repair blocked",
    [NS_DECISION_UNCONSOLIDATABLE] = "unconsolidatable",
    [NS_DECISION_STATIC_SCALE_UP] = "provisioning nodeclaims to satisfy replica count",
    [NS_DECISION_STATIC_SCALE_DOWN] = "deprovisioning nodeclaims to satisfy replica count",
};

const char *ns_decision_kind_message(ns_decision_kind kind)
{
    size_t k = (size_t)kind;
    return k < sizeof(kind_messages) / sizeof(kind_messages[0]) && kind_messages[k] ? kind_messages[k] : "decision";
}

const ns_decision *ns_engine_decisions(const ns_engine *e, size_t *n)
{
    *n = e->n_decisions;
    return e->decisions;
}

/* Which controller logs the kind, as Karpenter names its loggers. */
static const char *logger_of(ns_decision_kind kind)
{
    switch (kind) {
    case NS_DECISION_CREATED_NODECLAIM:
    case NS_DECISION_UNSCHEDULABLE_POD:
    case NS_DECISION_HELD_BY_LIMITS:
    case NS_DECISION_POD_RESCHEDULED:
        return "provisioner";
    case NS_DECISION_DISRUPTING:
    case NS_DECISION_DISRUPTION_ABORTED:
    case NS_DECISION_DISRUPTION_INFO:
    case NS_DECISION_DISRUPTION_BLOCKED:
    case NS_DECISION_UNCONSOLIDATABLE:
        return "disruption";
    case NS_DECISION_TAINTED_NODE:
    case NS_DECISION_UNTAINTED_NODE:
    case NS_DECISION_EVICTED_POD:
    case NS_DECISION_EVICTION_BLOCKED:
    case NS_DECISION_DELETED_NODE:
    case NS_DECISION_TERMINATED_INSTANCE:
        return "node.termination";
    case NS_DECISION_INTERRUPTION:
    case NS_DECISION_REBALANCE_RECORDED:
        return "interruption";
    case NS_DECISION_GC_INSTANCE:
    case NS_DECISION_GC_NODECLAIM:
    case NS_DECISION_NODE_LOST:
        return "nodeclaim.garbagecollection";
    case NS_DECISION_UNHEALTHY_NODE:
    case NS_DECISION_REPAIR_BLOCKED:
        return "node.health";
    case NS_DECISION_STATIC_SCALE_UP:
        return "static.provisioning";
    case NS_DECISION_STATIC_SCALE_DOWN:
        return "static.deprovisioning";
    default:
        return "nodeclaim.lifecycle";
    }
}

static int engine_record(ns_engine *e, ns_decision_kind kind, const char *method, const char *reason, const char *nodes,
                     const char *nodeclaims, const char *pods, const char *detail)
{
    if (ns_grow((void **)&e->decisions, &e->cap_decisions, e->n_decisions + 1, sizeof(*e->decisions)) < 0)
        return NS_ERR_INTERNAL;
    ns_decision d = {.time_ms = ns_clock_now_ms(), .kind = kind, .message = ns_decision_kind_message(kind)};
    /* The six texts share one allocation that starts at method (a simulation records a few decisions per claim, and
     * most of the texts are empty). */
    const char *texts[] = {method, reason, nodes, nodeclaims, pods, detail};
    char **fields_of[] = {&d.method, &d.reason, &d.nodes, &d.nodeclaims, &d.pods, &d.detail};
    size_t len[6], total = 0;
    for (size_t i = 0; i < 6; i++)
        total += (len[i] = texts[i] ? strlen(texts[i]) : 0) + 1;
    char *block = malloc(total);
    if (!block)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory recording a decision (%s)", d.message);
    for (size_t i = 0; i < 6; i++) {
        memcpy(block, texts[i] ? texts[i] : "", len[i] + 1);
        *fields_of[i] = block;
        block += len[i] + 1;
    }
    e->decisions[e->n_decisions++] = d;
    e->activity++;
    ns_log_level level = kind == NS_DECISION_LAUNCH_FAILED || kind == NS_DECISION_UNSCHEDULABLE_POD ? NS_LOG_ERROR
                         : kind == NS_DECISION_EVICTION_BLOCKED || kind == NS_DECISION_DISRUPTION_ABORTED ||
                                   kind == NS_DECISION_REPAIR_BLOCKED
                             ? NS_LOG_WARN
                         : kind == NS_DECISION_DISRUPTION_BLOCKED || kind == NS_DECISION_UNCONSOLIDATABLE
                             ? NS_LOG_DEBUG
                             : NS_LOG_INFO;
    ns_engine_log_decision(e, &d, level, logger_of(kind));
    return NS_OK;
}

/* ---- History */

void ns_engine_sample_now(const ns_engine *e, ns_engine_sample *out)
{
    const ns_cluster *c = e->cluster;
    memset(out, 0, sizeof(*out));
    out->time_ms = ns_ctx_now_ms(e->ctx);
    out->nodes = c->n_nodes;
    for (size_t i = 0; i < c->n_nodes; i++) {
        const ns_node *n = c->nodes[i];
        const ns_nodeclaim *claim = ns_engine_claim_of_node(e, n);
        out->nodes_ready += n->ready && (!claim || ns_claim_initialized(claim));
    }
    out->nodeclaims = c->n_nodeclaims;
    for (size_t i = 0; i < c->n_pods; i++) {
        const ns_pod *p = c->pods[i];
        if (ns_sched_pod_is_pending(p))
            out->pods_pending++;
        else if (p->node_name && !ns_engine_pod_is_daemon(p))
            out->pods_bound++;
    }
    for (size_t i = 0; i < c->n_nodeclaims; i++) {
        const ns_nodeclaim *claim = c->nodeclaims[i];
        const char *price = ns_labels_get(&claim->meta.annotations, NS_ANNOTATION_PRICE);
        if (ns_claim_launched(claim) && price)
            out->cost_per_hour += strtod(price, NULL);
    }
    out->decisions = e->n_decisions;
    ns_engine_headroom_sample(e, out);
}

const ns_engine_sample *ns_engine_history(const ns_engine *e, size_t *n)
{
    *n = e->n_history;
    return e->history;
}

/* ---- Timeline hooks */

static int engine_add_pod(ns_engine *e, ns_pod *pod)
{
    return e->writes.ops->create_pod(e->writes.ctx, pod);
}

static int engine_delete_pod(ns_engine *e, const char *ns, const char *name)
{
    ns_pod *p = ns_cluster_find_pod(e->cluster, ns, name);
    if (!p)
        return NS_FAIL(NS_ERR_NOT_FOUND, "deleting pod %s/%s: no such pod", ns ? ns : "default", name);
    return e->writes.ops->delete_pod(e->writes.ctx, p, false);
}

static int engine_put_nodepool(ns_engine *e, ns_nodepool *np)
{
    /* The NodePool CRD's transition rule: an update cannot add or remove spec.replicas. */
    const ns_nodepool *old = ns_cluster_find_nodepool(e->cluster, np->meta.name);
    if (old && ns_nodepool_is_static(old) != ns_nodepool_is_static(np)) {
        int refused = NS_FAIL(NS_ERR_INVALID_CONFIG, "NodePool %s: spec.replicas %s: Cannot transition NodePool "
                              "between static (replicas set) and dynamic (replicas unset) provisioning modes",
                              np->meta.name, ns_nodepool_is_static(np) ? "added" : "removed");
        ns_nodepool_free(np);
        return refused;
    }
    int rc = e->writes.ops->put_nodepool(e->writes.ctx, np);
    e->types.listed_in_step = -1;
    return rc;
}

static int engine_delete_nodepool(ns_engine *e, const char *name)
{
    int rc = e->writes.ops->delete_nodepool(e->writes.ctx, name);
    e->types.listed_in_step = -1;
    return rc;
}

static int engine_put_nodeclass(ns_engine *e, ns_nodeclass_def *def)
{
    int rc = e->writes.ops->put_nodeclass(e->writes.ctx, def);
    e->types.listed_in_step = -1;
    return rc;
}

/* ---- Entry points: each runs in the engine's context (its clock, logger and error sink). */

#define IN_CONTEXT(e, statement)                                                                                       \
    do {                                                                                                               \
        ns_ctx *previous_ = ns_ctx_enter((e)->ctx);                                                                    \
        statement;                                                                                                     \
        ns_ctx_leave(previous_);                                                                                       \
    } while (0)

int ns_engine_step(ns_engine *e)
{
    int rc;
    IN_CONTEXT(e, rc = engine_step(e));
    return rc;
}

int ns_engine_run_until(ns_engine *e, int64_t until_ms)
{
    int rc;
    IN_CONTEXT(e, rc = engine_run_until(e, until_ms));
    return rc;
}

void ns_engine_advance_clock(ns_engine *e, int64_t ms)
{
    IN_CONTEXT(e, engine_advance_clock(e, ms));
}

int ns_engine_record(ns_engine *e, ns_decision_kind kind, const char *method, const char *reason, const char *nodes,
                     const char *nodeclaims, const char *pods, const char *detail)
{
    int rc;
    IN_CONTEXT(e, rc = engine_record(e, kind, method, reason, nodes, nodeclaims, pods, detail));
    return rc;
}

int ns_engine_add_pod(ns_engine *e, ns_pod *pod)
{
    int rc;
    IN_CONTEXT(e, rc = engine_add_pod(e, pod));
    return rc;
}

int ns_engine_delete_pod(ns_engine *e, const char *ns, const char *name)
{
    int rc;
    IN_CONTEXT(e, rc = engine_delete_pod(e, ns, name));
    return rc;
}

int ns_engine_put_nodepool(ns_engine *e, ns_nodepool *np)
{
    int rc;
    IN_CONTEXT(e, rc = engine_put_nodepool(e, np));
    return rc;
}

int ns_engine_delete_nodepool(ns_engine *e, const char *name)
{
    int rc;
    IN_CONTEXT(e, rc = engine_delete_nodepool(e, name));
    return rc;
}

int ns_engine_put_nodeclass(ns_engine *e, ns_nodeclass_def *def)
{
    int rc;
    IN_CONTEXT(e, rc = engine_put_nodeclass(e, def));
    return rc;
}
