/*
 * Event-driven time: what tells a step that changed nothing from one that did, and what the engine's controllers
 * wait for. A step that changed nothing (no write, no decision, no launch or termination asked of the provider) would
 * be repeated identically at every following tick until one of the times declared here comes, so the run loop jumps
 * to the first tick at or after the earliest of them (ns_engine_next_step_ms). Declaring a time too many costs one
 * step; forgetting one makes the run differ from stepping every tick, which the timeline comparison test catches
 * (docs/engine.md, "Time").
 */
#include <stdlib.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "context/ns_ctx.h"
#include "engine/engine_internal.h"
#include "model/checked.h"
#include "model/model_util.h"

/* ---- Writes count as activity. */

static ns_engine *engine_of(void *ctx)
{
    return ctx;
}

/* Forwards to the store; a write that succeeded changed the cluster. */
#define COUNT(op, params, args)                                                                                        \
    static int c_##op params                                                                                           \
    {                                                                                                                  \
        ns_engine *e = engine_of(ctx);                                                                                 \
        int rc = e->store.ops->op args;                                                                                \
        if (rc == 0)                                                                                                   \
            e->activity++;                                                                                             \
        return rc;                                                                                                     \
    }
COUNT(create_nodeclaim, (void *ctx, ns_nodeclaim *c), (e->store.ctx, c))
COUNT(update_nodeclaim, (void *ctx, ns_nodeclaim *c), (e->store.ctx, c))
COUNT(delete_nodeclaim, (void *ctx, ns_nodeclaim *c), (e->store.ctx, c))
COUNT(remove_nodeclaim_finalizer, (void *ctx, ns_nodeclaim *c, const char *f), (e->store.ctx, c, f))
COUNT(create_node, (void *ctx, ns_node *n), (e->store.ctx, n))
COUNT(add_node_taint, (void *ctx, ns_node *n, const ns_taint *t), (e->store.ctx, n, t))
COUNT(remove_node_taint, (void *ctx, ns_node *n, const char *k, const char *eff), (e->store.ctx, n, k, eff))
COUNT(set_node_label, (void *ctx, ns_node *n, const char *k, const char *v), (e->store.ctx, n, k, v))
COUNT(set_node_annotation, (void *ctx, ns_node *n, const char *k, const char *v), (e->store.ctx, n, k, v))
COUNT(set_node_unschedulable, (void *ctx, ns_node *n, bool u), (e->store.ctx, n, u))
COUNT(update_node_status, (void *ctx, ns_node *n), (e->store.ctx, n))
COUNT(delete_node, (void *ctx, ns_node *n), (e->store.ctx, n))
COUNT(remove_node_finalizer, (void *ctx, ns_node *n, const char *f), (e->store.ctx, n, f))
COUNT(create_pod, (void *ctx, ns_pod *p), (e->store.ctx, p))
COUNT(bind_pod, (void *ctx, ns_pod *p, const char *node), (e->store.ctx, p, node))
COUNT(evict_pod, (void *ctx, ns_pod *p, bool voluntary), (e->store.ctx, p, voluntary))
COUNT(delete_pod, (void *ctx, ns_pod *p, bool voluntary), (e->store.ctx, p, voluntary))
COUNT(put_nodepool, (void *ctx, ns_nodepool *np), (e->store.ctx, np))
COUNT(delete_nodepool, (void *ctx, const char *name), (e->store.ctx, name))
COUNT(put_nodeclass, (void *ctx, ns_nodeclass_def *d), (e->store.ctx, d))

/* the jobs write through e->writes, so each counts */
static int c_concurrently(void *ctx, size_t n, int (*job)(void *arg, size_t i), void *arg)
{
    ns_engine *e = ctx;
    return ns_cluster_writes_each(&e->store, n, job, arg);
}

static const ns_cluster_writes_ops counting_ops = {
    .create_nodeclaim = c_create_nodeclaim,
    .update_nodeclaim = c_update_nodeclaim,
    .delete_nodeclaim = c_delete_nodeclaim,
    .remove_nodeclaim_finalizer = c_remove_nodeclaim_finalizer,
    .create_node = c_create_node,
    .add_node_taint = c_add_node_taint,
    .remove_node_taint = c_remove_node_taint,
    .set_node_label = c_set_node_label,
    .set_node_annotation = c_set_node_annotation,
    .set_node_unschedulable = c_set_node_unschedulable,
    .update_node_status = c_update_node_status,
    .delete_node = c_delete_node,
    .remove_node_finalizer = c_remove_node_finalizer,
    .create_pod = c_create_pod,
    .bind_pod = c_bind_pod,
    .evict_pod = c_evict_pod,
    .delete_pod = c_delete_pod,
    .put_nodepool = c_put_nodepool,
    .delete_nodepool = c_delete_nodepool,
    .put_nodeclass = c_put_nodeclass,
    .concurrently = c_concurrently,
};

void ns_engine_count_writes(ns_engine *e)
{
    e->counting = (ns_cluster_writes){&counting_ops, e};
    e->writes = e->counting;
}

/* ---- Due times. */

void ns_engine_busy(ns_engine *e)
{
    e->activity++;
}

static void due(ns_engine *e, int64_t now, int64_t at_ms)
{
    if (at_ms <= now)
        ns_engine_busy(e);
    else if (at_ms < e->wake_ms)
        e->wake_ms = at_ms;
}

void ns_engine_due(ns_engine *e, int64_t at_ms)
{
    due(e, ns_ctx_now_ms(e->ctx), at_ms);
}

/* A time in the future only: what has already passed was acted on by this step or never will be by time alone. */
static void due_later(ns_engine *e, int64_t now, int64_t at_ms)
{
    if (at_ms > now && at_ms < e->wake_ms)
        e->wake_ms = at_ms;
}

int ns_engine_remember_deadline(ns_engine *e, int64_t at_ms)
{
    for (size_t i = 0; i < e->n_deadlines; i++)
        if (e->deadlines[i] == at_ms)
            return NS_OK;
    if (ns_grow((void **)&e->deadlines, &e->cap_deadlines, e->n_deadlines + 1, sizeof(*e->deadlines)) < 0)
        return NS_ERR_INTERNAL;
    e->deadlines[e->n_deadlines++] = at_ms;
    return NS_OK;
}

/* Provider deadlines: the provider changes the instance then, and the next poll or listing shows it. */
static void provider_deadlines(ns_engine *e, int64_t now)
{
    size_t kept = 0;
    for (size_t i = 0; i < e->n_deadlines; i++)
        if (e->deadlines[i] > now) {
            due_later(e, now, e->deadlines[i]);
            e->deadlines[kept++] = e->deadlines[i];
        }
    e->n_deadlines = kept;
}

/* The kubelet stand-in registers a launched claim's Node after the registration delay and turns it ready after the
 * initialization delay; lifecycle gives an unregistered claim up at the registration TTL. */
static void lifecycle_times(ns_engine *e, const ns_nodeclaim *claim, const ns_node *node, int64_t now)
{
    if (ns_claim_deleting(claim))
        return;
    if (!ns_claim_registered(claim) && claim->meta.creation_ms)
        due_later(e, now, ns_saturating_add(claim->meta.creation_ms, e->cfg.registration_ttl_ms));
    const ns_condition *launched = ns_conditions_get(&claim->conditions, NS_COND_LAUNCHED);
    if (!node && launched && ns_claim_launched(claim) && e->cfg.registration_delay_ms >= 0)
        due_later(e, now, ns_saturating_add(launched->last_transition_ms, e->cfg.registration_delay_ms));
    if (node && !node->ready && !node->meta.deletion_ms && !ns_claim_initialized(claim))
        due_later(e, now, ns_saturating_add(node->meta.creation_ms, e->cfg.initialization_delay_ms));
}

/* Termination forces out what is left at the claim's terminationGracePeriod; a pod's own grace period and the
 * minimum drain time count back and forth from there. */
static void termination_times(ns_engine *e, const ns_nodeclaim *claim, const ns_node *node, int64_t now)
{
    if (!ns_claim_deleting(claim))
        return;
    int64_t deleted = claim->meta.deletion_ms;
    due_later(e, now, ns_saturating_add(deleted, 5000));
    /* the minimum drain time runs from the drain's start (its Drained condition turning Unknown), which voluntary
     * disruption puts after the replacements initialized, not from the deletion */
    const ns_condition *drained = ns_conditions_get(&claim->conditions, NS_COND_DRAINED);
    if (drained && strcmp(drained->status, "True") != 0)
        due_later(e, now, ns_saturating_add(drained->last_transition_ms, 5000));
    int64_t end;
    if (!ns_claim_termination_end(claim, &end))
        return;
    due_later(e, now, end);
    /* a pod is deleted strictly after the node's end minus its own grace period: the first instant past it */
    for (size_t i = 0; node && i < e->cluster->n_pods; i++) {
        const ns_pod *p = e->cluster->pods[i];
        if (p->node_name && strcmp(p->node_name, node->meta.name) == 0)
            due_later(e, now,
                      end - 1000 * (p->termination_grace_period_s >= 0 ? p->termination_grace_period_s : 30) + 1);
    }
}

/* A do-not-disrupt duration protects a pod until its start plus the duration. */
static void pod_times(ns_engine *e, int64_t now)
{
    for (size_t i = 0; i < e->cluster->n_pods; i++) {
        const ns_pod *p = e->cluster->pods[i];
        if (p->do_not_disrupt_ms > 0 && p->do_not_disrupt_ms != NS_DO_NOT_DISRUPT_ALWAYS && p->start_ms > 0)
            due_later(e, now, ns_saturating_add(p->start_ms, p->do_not_disrupt_ms));
    }
}

/* Node repair acts on a node once a policy's condition has held for its toleration. */
static void repair_times(ns_engine *e, int64_t now)
{
    if (!e->cfg.node_repair)
        return;
    for (size_t i = 0; i < e->cluster->n_nodes; i++) {
        const char *type, *status;
        int64_t at;
        if (ns_engine_repair_due(e, e->cluster->nodes[i], &type, &status, &at))
            due_later(e, now, at);
    }
}

/* The attach-detach stand-in deletes an attachment its volume's pods left the detach delay after they left. */
static void detach_times(ns_engine *e, int64_t now)
{
    for (size_t i = 0; i < e->cluster->n_volume_attachments; i++) {
        const ns_volume_attachment *va = e->cluster->volume_attachments[i];
        if (va->unused_since_ms)
            due_later(e, now, ns_saturating_add(va->unused_since_ms, e->cfg.volume_detach_delay_ms));
    }
}

void ns_engine_declare_due(ns_engine *e)
{
    int64_t now = ns_ctx_now_ms(e->ctx);
    ns_cluster *c = e->cluster;
    for (size_t i = 0; i < c->n_nodeclaims; i++) {
        const ns_nodeclaim *claim = c->nodeclaims[i];
        const ns_node *node = ns_claim_launched(claim) ? ns_engine_node_of_claim(e, claim) : NULL;
        lifecycle_times(e, claim, node, now);
        termination_times(e, claim, node, now);
    }
    pod_times(e, now);
    repair_times(e, now);
    detach_times(e, now);
    due_later(e, now, e->launch_backoff_until_ms);
    /* An unavailable offering is offered again from its entry's until_ms on. */
    for (size_t i = 0; i < e->unavailable.n; i++)
        due_later(e, now, e->unavailable.items[i].until_ms);
    provider_deadlines(e, now);
}

int64_t ns_engine_next_step_ms(const ns_engine *e, int64_t until_ms)
{
    int64_t now = ns_ctx_now_ms(e->ctx), tick = e->cfg.tick_ms;
    int64_t next = ns_saturating_add(now, tick);
    if (!e->cfg.every_tick && e->activity == e->activity_at_step && e->wake_ms > next) {
        if (e->wake_ms == INT64_MAX)
            next = until_ms;
        else {
            int64_t ticks = (e->wake_ms - now + tick - 1) / tick;
            next = ticks > (INT64_MAX - now) / tick ? INT64_MAX : now + ticks * tick;
        }
    }
    return next < until_ms ? next : until_ms;
}
