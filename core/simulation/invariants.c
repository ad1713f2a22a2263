/* The invariant checker (see invariants.h). */
#include "simulation/invariants.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "engine/engine_internal.h"
#include "errors/ns_error.h"

#define MAX_NOTES 64

struct ns_invariants {
    ns_engine *e;
    ns_cluster_writes inner;   /* the writes the checker forwards to */
    ns_cluster_writes wrapper; /* what the engine calls while attached */
    char notes[MAX_NOTES][512]; /* violations seen by the wrapper since the last check */
    size_t n_notes, dropped;
    size_t total;
    /* When room for pending pods last appeared without a pod's own change: the checker was attached (pods pending
     * before the engine first ran), or a write that may make room went through (a pod or Node removed after
     * provisioning in a step, or by a timeline step, frees room under a NodePool's limits). A pending pod is given
     * its patience again from then: the engine acts on the change at its next step. */
    _Atomic int64_t room_ms; /* set by writes a store may run at once (its concurrently op) */
};

static void note(ns_invariants *inv, const char *fmt, ...) NS_PRINTF(2, 3);
static void note(ns_invariants *inv, const char *fmt, ...)
{
    if (inv->n_notes == MAX_NOTES) {
        inv->dropped++;
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(inv->notes[inv->n_notes++], sizeof(inv->notes[0]), fmt, ap);
    va_end(ap);
}

/* ---- PodDisruptionBudget arithmetic, written independently of the Eviction API's. */

static bool available(const ns_cluster *c, const ns_pod *p)
{
    if (!p->node_name || (p->phase && strcmp(p->phase, "Running") != 0 && strcmp(p->phase, "Pending") != 0))
        return false;
    for (size_t i = 0; i < c->n_nodes; i++)
        if (strcmp(c->nodes[i]->meta.name, p->node_name) == 0)
            return c->nodes[i]->ready;
    return false;
}

/* The first budget the removal of pod would take below its floor, or NULL. */
static const ns_pdb *budget_broken_by(const ns_cluster *c, const ns_pod *pod, int64_t *have, int64_t *floor)
{
    if (!available(c, pod))
        return NULL;
    for (size_t b = 0; b < c->n_pdbs; b++) {
        const ns_pdb *pdb = c->pdbs[b];
        if (!ns_pdb_selects(pdb, pod))
            continue;
        int64_t total = 0, up = 0;
        for (size_t i = 0; i < c->n_pods; i++) {
            const ns_pod *p = c->pods[i];
            bool done = p->phase && (strcmp(p->phase, "Succeeded") == 0 || strcmp(p->phase, "Failed") == 0);
            if (done || !ns_pdb_selects(pdb, p))
                continue;
            total++;
            up += available(c, p) ? 1 : 0;
        }
        int64_t need;
        if (pdb->min_available.set)
            need = pdb->min_available.percent ? (pdb->min_available.value * total + 99) / 100 : pdb->min_available.value;
        else if (pdb->max_unavailable.set)
            need = total - (pdb->max_unavailable.percent ? (pdb->max_unavailable.value * total + 99) / 100
                                                         : pdb->max_unavailable.value);
        else
            need = total;
        if (up - 1 < need) {
            *have = up;
            *floor = need;
            return pdb;
        }
    }
    return NULL;
}

/* Before a pod leaves: what would it break? Reported only if the write then succeeds. */
static void judge(ns_invariants *inv, const ns_pod *pod, bool voluntary, const char *how, char *out, size_t len)
{
    out[0] = '\0';
    if (!voluntary)
        return;
    char ref[300];
    ns_engine_pod_ref(pod, ref, sizeof(ref));
    if (ns_pod_do_not_disrupt(pod, ns_clock_now_ms())) {
        snprintf(out, len, "do-not-disrupt pod %s was %s voluntarily", ref, how);
        return;
    }
    int64_t have = 0, floor = 0;
    const ns_pdb *pdb = budget_broken_by(inv->e->cluster, pod, &have, &floor);
    if (pdb)
        snprintf(out, len, "%s of pod %s violated PodDisruptionBudget %s: %" PRId64 " available, %" PRId64 " needed",
                 how, ref, pdb->meta.name, have - 1, floor);
}

/* A pod leaving through `write` (the inner evict_pod or delete_pod): judged before, noted and making room only if
 * the write succeeds. */
static int pod_leaves(ns_invariants *inv, ns_pod *pod, bool voluntary, const char *how,
                      int (*write)(void *ctx, ns_pod *pod, bool voluntary))
{
    char verdict[512];
    judge(inv, pod, voluntary, how, verdict, sizeof(verdict));
    int rc = write(inv->inner.ctx, pod, voluntary);
    if (rc == NS_OK)
        inv->room_ms = ns_clock_now_ms();
    if (rc == NS_OK && verdict[0])
        note(inv, "%s", verdict);
    return rc;
}

static int w_evict_pod(void *ctx, ns_pod *pod, bool voluntary)
{
    ns_invariants *inv = ctx;
    return pod_leaves(inv, pod, voluntary, "evicted", inv->inner.ops->evict_pod);
}

static int w_delete_pod(void *ctx, ns_pod *pod, bool voluntary)
{
    ns_invariants *inv = ctx;
    return pod_leaves(inv, pod, voluntary, "deleted", inv->inner.ops->delete_pod);
}

/* Writes that may make room for pending pods (a Node or NodeClaim going, a taint or a cordon lifted, a Node's status
 * changing, a NodePool or node class changing; pods going, above) pass through and restart the pending pods'
 * patience (room_ms). */
#define ROOM(op, params, args)                                                                                         \
    static int w_##op params                                                                                           \
    {                                                                                                                  \
        ns_invariants *inv = ctx;                                                                                      \
        int rc = inv->inner.ops->op args;                                                                              \
        if (rc == NS_OK)                                                                                               \
            inv->room_ms = ns_clock_now_ms();                                                                          \
        return rc;                                                                                                     \
    }

/* Everything else passes straight through. */
#define FWD(op, params, args)                                                                                          \
    static int w_##op params                                                                                           \
    {                                                                                                                  \
        ns_invariants *inv = ctx;                                                                                      \
        return inv->inner.ops->op args;                                                                                \
    }
FWD(create_nodeclaim, (void *ctx, ns_nodeclaim *c), (inv->inner.ctx, c))
FWD(update_nodeclaim, (void *ctx, ns_nodeclaim *c), (inv->inner.ctx, c))
ROOM(delete_nodeclaim, (void *ctx, ns_nodeclaim *c), (inv->inner.ctx, c))
ROOM(remove_nodeclaim_finalizer, (void *ctx, ns_nodeclaim *c, const char *f), (inv->inner.ctx, c, f))
FWD(create_node, (void *ctx, ns_node *n), (inv->inner.ctx, n))
FWD(add_node_taint, (void *ctx, ns_node *n, const ns_taint *t), (inv->inner.ctx, n, t))
ROOM(remove_node_taint, (void *ctx, ns_node *n, const char *k, const char *eff), (inv->inner.ctx, n, k, eff))
FWD(set_node_label, (void *ctx, ns_node *n, const char *k, const char *v), (inv->inner.ctx, n, k, v))
FWD(set_node_annotation, (void *ctx, ns_node *n, const char *k, const char *v), (inv->inner.ctx, n, k, v))
ROOM(set_node_unschedulable, (void *ctx, ns_node *n, bool u), (inv->inner.ctx, n, u))
ROOM(update_node_status, (void *ctx, ns_node *n), (inv->inner.ctx, n))
ROOM(delete_node, (void *ctx, ns_node *n), (inv->inner.ctx, n))
ROOM(remove_node_finalizer, (void *ctx, ns_node *n, const char *f), (inv->inner.ctx, n, f))
FWD(create_pod, (void *ctx, ns_pod *p), (inv->inner.ctx, p))
FWD(bind_pod, (void *ctx, ns_pod *p, const char *node), (inv->inner.ctx, p, node))
ROOM(put_nodepool, (void *ctx, ns_nodepool *np), (inv->inner.ctx, np))
ROOM(delete_nodepool, (void *ctx, const char *name), (inv->inner.ctx, name))
ROOM(put_nodeclass, (void *ctx, ns_nodeclass_def *d), (inv->inner.ctx, d))

static int w_concurrently(void *ctx, size_t n, int (*job)(void *arg, size_t i), void *arg)
{
    ns_invariants *inv = ctx;
    return ns_cluster_writes_each(&inv->inner, n, job, arg);
}

static const ns_cluster_writes_ops watch_ops = {
    .create_nodeclaim = w_create_nodeclaim,
    .update_nodeclaim = w_update_nodeclaim,
    .delete_nodeclaim = w_delete_nodeclaim,
    .remove_nodeclaim_finalizer = w_remove_nodeclaim_finalizer,
    .create_node = w_create_node,
    .add_node_taint = w_add_node_taint,
    .remove_node_taint = w_remove_node_taint,
    .set_node_label = w_set_node_label,
    .set_node_annotation = w_set_node_annotation,
    .set_node_unschedulable = w_set_node_unschedulable,
    .update_node_status = w_update_node_status,
    .delete_node = w_delete_node,
    .remove_node_finalizer = w_remove_node_finalizer,
    .create_pod = w_create_pod,
    .bind_pod = w_bind_pod,
    .evict_pod = w_evict_pod,
    .delete_pod = w_delete_pod,
    .put_nodepool = w_put_nodepool,
    .delete_nodepool = w_delete_nodepool,
    .put_nodeclass = w_put_nodeclass,
    .concurrently = w_concurrently,
};

int ns_invariants_attach(ns_engine *e, ns_invariants **out)
{
    ns_invariants *inv = calloc(1, sizeof(*inv));
    if (!inv)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory creating the invariant checker");
    inv->e = e;
    inv->room_ms = ns_clock_now_ms();
    inv->inner = e->writes;
    inv->wrapper = (ns_cluster_writes){&watch_ops, inv};
    ns_engine_set_writes(e, &inv->wrapper);
    *out = inv;
    return NS_OK;
}

void ns_invariants_free(ns_invariants *inv)
{
    if (!inv)
        return;
    ns_engine_set_writes(inv->e, &inv->inner);
    free(inv);
}

void ns_invariants_outside_change(ns_invariants *inv)
{
    inv->room_ms = ns_clock_now_ms();
}

size_t ns_invariants_total(const ns_invariants *inv)
{
    return inv->total;
}

/* ---- State checks */

typedef struct report {
    char *buf;
    size_t len, used;
    int count;
} report;

static void add(report *r, const char *fmt, ...) NS_PRINTF(2, 3);
static void add(report *r, const char *fmt, ...)
{
    r->count++;
    if (!r->buf || r->used + 1 >= r->len)
        return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(r->buf + r->used, r->len - r->used, fmt, ap);
    va_end(ap);
    if (w > 0)
        r->used += (size_t)w < r->len - r->used ? (size_t)w : r->len - r->used - 1;
    if (r->used + 1 < r->len)
        r->buf[r->used++] = '\n', r->buf[r->used] = '\0';
}

typedef struct inst_list {
    ns_instance *items;
    size_t n;
} inst_list;

static int collect(void *ctx, const ns_instance *inst)
{
    inst_list *v = ctx;
    ns_instance *grown = realloc(v->items, (v->n + 1) * sizeof(*grown));
    if (!grown)
        return NS_ERR_INTERNAL;
    v->items = grown;
    v->items[v->n++] = *inst;
    return 0;
}

static int check_instances(ns_invariants *inv, report *r, int64_t now)
{
    ns_engine *e = inv->e;
    inst_list v = {0};
    int rc = ns_plugin_list_instances(e->plugin, collect, &v);
    if (rc != NS_OK) {
        free(v.items);
        return rc;
    }
    int64_t limit = e->cfg.orphan_gc_grace_ms + 2 * e->cfg.tick_ms;
    for (size_t i = 0; i < v.n; i++) {
        const ns_instance *inst = &v.items[i];
        bool owned = false;
        for (size_t c = 0; c < e->cluster->n_nodeclaims && !owned; c++) {
            const ns_nodeclaim *claim = e->cluster->nodeclaims[c];
            owned = (claim->provider_id && strcmp(claim->provider_id, inst->provider_id) == 0) ||
                    (!claim->provider_id && strcmp(claim->meta.name, inst->nodeclaim_name) == 0);
        }
        if (!owned && now - inst->launch_time_ms <= limit)
            ns_engine_due(e, inst->launch_time_ms + limit + 1);
        else if (!owned)
            add(r, "instance %s has run %" PRId64 "s without a nodeclaim (garbage collection grace %" PRId64 "s)",
                inst->provider_id, (now - inst->launch_time_ms) / 1000, e->cfg.orphan_gc_grace_ms / 1000);
    }
    free(v.items);
    return NS_OK;
}

/* Since when the pod could have been placed, as far as the checker can tell (see room_ms). */
static int64_t pending_for(const ns_invariants *inv, const ns_pod *p, int64_t now)
{
    return now - (p->pending_since_ms > inv->room_ms ? p->pending_since_ms : inv->room_ms);
}

static int check_pending(ns_invariants *inv, report *r, int64_t now)
{
    ns_engine *e = inv->e;
    int64_t patience = e->cfg.batch_max_ms + 2 * e->cfg.tick_ms;
    bool any = false;
    for (size_t i = 0; i < e->cluster->n_pods; i++) {
        const ns_pod *p = e->cluster->pods[i];
        if (!ns_sched_pod_is_pending(p))
            continue;
        int64_t waited = pending_for(inv, p, now);
        any = any || waited > patience;
        /* An event-driven run checks when stepping every tick would first blame the pod. */
        if (waited <= patience)
            ns_engine_due(e, now - waited + patience + 1);
    }
    if (!any)
        return NS_OK;
    ns_engine_plan plan;
    int rc = ns_engine_plan_run(e, NULL, &plan);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < plan.result.n_placement && i < e->cluster->n_pods; i++) {
        const ns_pod *p = e->cluster->pods[i];
        size_t at = plan.result.placement[i];
        if (!ns_sched_pod_is_pending(p) || pending_for(inv, p, now) <= patience || at == NS_SCHED_NOT_PENDING ||
            at == NS_SCHED_UNPLACED)
            continue;
        char ref[300];
        ns_engine_pod_ref(p, ref, sizeof(ref));
        if (at < plan.view.n_nodes && plan.bindable[at] && e->cfg.simulate_scheduler)
            add(r, "pod %s is pending although node %s can take it", ref, plan.view.nodes[at]->meta.name);
        else if (at >= plan.view.n_nodes && now >= e->launch_backoff_until_ms)
            add(r, "pod %s is pending with no nodeclaim on its way although NodePool %s can fit it", ref,
                e->cluster->nodepools[plan.result.claims[at - plan.view.n_nodes].nodepool]->meta.name);
    }
    ns_engine_plan_free(&plan);
    return NS_OK;
}

int ns_invariants_check(ns_invariants *inv, char *buf, size_t len)
{
    report r = {buf, len, 0, 0};
    if (buf && len)
        buf[0] = '\0';
    for (size_t i = 0; i < inv->n_notes; i++)
        add(&r, "%s", inv->notes[i]);
    if (inv->dropped)
        add(&r, "%zu more eviction violation(s) not listed", inv->dropped);
    inv->n_notes = inv->dropped = 0;
    int64_t now = ns_clock_now_ms();
    int rc = check_instances(inv, &r, now);
    if (rc == NS_OK)
        rc = check_pending(inv, &r, now);
    if (rc != NS_OK)
        return rc;
    inv->total += (size_t)r.count;
    return r.count;
}
