/*
 * The simulated kubelet (in-memory cluster only, cfg.simulate_kubelet): a launched instance's Node registers
 * registration_delay_ms after the launch, not ready and tainted as a starting node is, and turns Ready
 * initialization_delay_ms later with its startup taints removed (by the agent that owns them, as a CNI daemon
 * would). Instances that are no longer running never register, and the Node of an instance that stopped running
 * turns NotReady: its kubelet stopped with it, as the node lifecycle controller then reports (garbage collection and
 * termination wait for that before they trust the cloud's word that the instance is gone).
 *
 * The stand-in makes a Node Ready once, to initialize it: a Node that turns NotReady or Unknown later (its instance
 * stopped, or a timeline stopped its kubelet) stays so until something says otherwise, as a broken node does, which is
 * what node repair acts on.
 */
#include <stdlib.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "engine/engine_internal.h"
#include "errors/ns_error.h"
#include "model/model_util.h"

static const ns_itype *instance_type_of(ns_engine *e, const ns_nodeclaim *claim)
{
    const char *type = ns_labels_get(&claim->meta.labels, NS_LABEL_INSTANCE_TYPE);
    for (size_t s = 0; type && s < e->types.n; s++) {
        const ns_nodeclass_def *def = e->types.owner[s];
        if (!e->types.errors[s] && claim->nodeclass_ref.kind && strcmp(def->kind, claim->nodeclass_ref.kind) == 0 &&
            strcmp(def->meta.name, claim->nodeclass_ref.name) == 0)
            return ns_itype_set_find(&e->types.sets[s], type);
    }
    return NULL;
}

/* The Node a claim's kubelet registers, or NULL (error recorded). Caller owns it. */
static ns_node *registering_node(ns_engine *e, const ns_nodeclaim *claim)
{
    ns_node *n = ns_node_new();
    if (!n) {
        NS_FAIL(NS_ERR_INTERNAL, "out of memory registering node %s", claim->meta.name);
        return NULL;
    }
    const ns_itype *t = instance_type_of(e, claim);
    static const ns_taint unregistered = {NS_TAINT_UNREGISTERED_KEY, NULL, NS_EFFECT_NO_EXECUTE};
    static const ns_taint not_ready = {NS_TAINT_NOT_READY_KEY, NULL, NS_EFFECT_NO_SCHEDULE};
    int rc = 0;
    if (!(n->meta.name = ns_strdup(claim->meta.name)) || !(n->provider_id = ns_strdup(claim->provider_id)) ||
        ns_labels_set(&n->meta.labels, NS_LABEL_HOSTNAME, claim->meta.name) < 0)
        rc = NS_ERR_INTERNAL;
    for (size_t i = 0; rc == 0 && t && i < t->n_labels; i++)
        rc = ns_labels_set(&n->meta.labels, t->labels[i].key, t->labels[i].value);
    for (size_t i = 0; rc == 0 && i < claim->meta.labels.n; i++)
        rc = ns_labels_set(&n->meta.labels, claim->meta.labels.items[i].key, claim->meta.labels.items[i].value);
    for (size_t i = 0; rc == 0 && i < claim->n_taints; i++)
        rc = ns_taints_append(&n->taints, &n->n_taints, &claim->taints[i]);
    for (size_t i = 0; rc == 0 && i < claim->n_startup_taints; i++)
        rc = ns_taints_append(&n->taints, &n->n_taints, &claim->startup_taints[i]);
    if (rc == 0 && (rc = ns_taints_append(&n->taints, &n->n_taints, &unregistered)) == 0)
        rc = ns_taints_append(&n->taints, &n->n_taints, &not_ready);
    if (rc == 0 && (rc = ns_res_copy(&n->capacity, &claim->capacity)) == 0)
        rc = ns_res_copy(&n->allocatable, &claim->allocatable);
    if (rc < 0) {
        ns_node_free(n);
        NS_FAIL(NS_ERR_INTERNAL, "out of memory registering node %s", claim->meta.name);
        return NULL;
    }
    n->ready = false;
    n->ready_since_ms = ns_clock_now_ms();
    return n;
}

static bool instance_running(ns_engine *e, const char *provider_id)
{
    ns_instance inst;
    memset(&inst, 0, sizeof(inst));
    inst.struct_size = sizeof(inst);
    return ns_plugin_get_instance(e->plugin, provider_id, &inst) == NS_OK &&
           (inst.state == NS_INSTANCE_PENDING || inst.state == NS_INSTANCE_RUNNING);
}

static int kubelet_stopped(const ns_cluster_writes *w, ns_node *n)
{
    n->ready = false;
    n->ready_unknown = false;
    n->ready_since_ms = ns_clock_now_ms();
    return w->ops->update_node_status(w->ctx, n);
}

static bool has_taint(const ns_node *n, const char *key, const char *effect)
{
    const ns_taint t = {key, NULL, effect};
    for (size_t i = 0; i < n->n_taints; i++)
        if (ns_taint_matches(&n->taints[i], &t))
            return true;
    return false;
}

/* The taints the stand-in takes off a starting node: the not-ready one and the claim's startup taints. */
static bool starting_taints(const ns_node *n, const ns_nodeclaim *claim)
{
    bool any = has_taint(n, NS_TAINT_NOT_READY_KEY, NS_EFFECT_NO_SCHEDULE);
    for (size_t i = 0; !any && i < claim->n_startup_taints; i++)
        any = has_taint(n, claim->startup_taints[i].key, claim->startup_taints[i].effect);
    return any;
}

/* A kubelet reports Ready; the not-ready taint is then taken off by the node lifecycle controller, which taints a
 * NotReady node (kube-controller-manager). Taken off before the status says Ready, the taint comes back from that
 * controller and stays until its next pass: the claim was initialized meanwhile, so provisioning saw a node no pod
 * could use and launched another (controller-e2e Test10). Hence the status first, then the taints (the not-ready one
 * for where no such controller runs, the startup taints as their agent would); a step that failed half-way resumes
 * here, since starting_taints keeps the node a starting one. */
static int become_ready(const ns_cluster_writes *w, ns_node *n, const ns_nodeclaim *claim)
{
    int rc = NS_OK;
    if (!n->ready) {
        n->ready = true;
        n->ready_unknown = false;
        n->ready_since_ms = ns_clock_now_ms();
        rc = w->ops->update_node_status(w->ctx, n);
    }
    if (rc == NS_OK && has_taint(n, NS_TAINT_NOT_READY_KEY, NS_EFFECT_NO_SCHEDULE))
        rc = w->ops->remove_node_taint(w->ctx, n, NS_TAINT_NOT_READY_KEY, NS_EFFECT_NO_SCHEDULE);
    for (size_t i = 0; rc == NS_OK && i < claim->n_startup_taints; i++)
        if (has_taint(n, claim->startup_taints[i].key, claim->startup_taints[i].effect))
            rc = w->ops->remove_node_taint(w->ctx, n, claim->startup_taints[i].key, claim->startup_taints[i].effect);
    return rc;
}

/* What a step's kubelets write, one Node each: they go out together through the store's concurrently op (many Nodes'
 * kubelets write at once; the controller's store sends them in parallel), so one slow write holds up no other Node. */
typedef enum { KUBELET_REGISTER, KUBELET_READY, KUBELET_STOPPED } kubelet_act;

typedef struct kubelet_write {
    kubelet_act act;
    ns_node *node;                /* KUBELET_REGISTER: owned until the job hands it to create_node */
    const ns_nodeclaim *claim;
} kubelet_write;

typedef struct kubelet_writes {
    const ns_cluster_writes *w;
    kubelet_write *items;
    size_t n, cap;
} kubelet_writes;

static int kubelet_job(void *arg, size_t i)
{
    kubelet_writes *k = arg;
    kubelet_write *it = &k->items[i];
    switch (it->act) {
    case KUBELET_REGISTER: {
        ns_node *n = it->node;
        it->node = NULL;
        return k->w->ops->create_node(k->w->ctx, n);
    }
    case KUBELET_READY: return become_ready(k->w, it->node, it->claim);
    case KUBELET_STOPPED: break;
    }
    return kubelet_stopped(k->w, it->node);
}

static int plan(kubelet_writes *k, kubelet_act act, ns_node *node, const ns_nodeclaim *claim)
{
    if (ns_grow((void **)&k->items, &k->cap, k->n + 1, sizeof(*k->items)) < 0) {
        if (act == KUBELET_REGISTER)
            ns_node_free(node);
        return NS_ERR_INTERNAL;
    }
    k->items[k->n++] = (kubelet_write){act, node, claim};
    return NS_OK;
}

int ns_ctl_kubelet(ns_engine *e)
{
    if (!e->cfg.simulate_kubelet)
        return NS_OK;
    int rc = ns_engine_refresh_types(e);
    int64_t now = ns_clock_now_ms();
    kubelet_writes k = {.w = &e->writes};
    for (size_t i = 0; rc == NS_OK && i < e->cluster->n_nodeclaims; i++) {
        const ns_nodeclaim *claim = e->cluster->nodeclaims[i];
        if (!ns_claim_launched(claim))
            continue;
        ns_node *n = ns_engine_node_of_claim(e, claim);
        /* An instance that is not running yet (or stopped) may start at any time: look again at the next step. */
        if (n) {
            bool running = instance_running(e, claim->provider_id);
            if (n->ready && !running)
                rc = plan(&k, KUBELET_STOPPED, n, claim);
            else if ((!n->ready || starting_taints(n, claim)) && !n->meta.deletion_ms &&
                     !ns_claim_initialized(claim) && now - n->meta.creation_ms >= e->cfg.initialization_delay_ms) {
                if (running)
                    rc = plan(&k, KUBELET_READY, n, claim);
                else
                    ns_engine_busy(e);
            }
            continue;
        }
        const ns_condition *launched = ns_conditions_get(&claim->conditions, NS_COND_LAUNCHED);
        if (ns_claim_deleting(claim) || e->cfg.registration_delay_ms < 0 || !launched ||
            now - launched->last_transition_ms < e->cfg.registration_delay_ms || ns_claim_registered(claim))
            continue;
        if (!instance_running(e, claim->provider_id))
            ns_engine_busy(e);
        else {
            ns_node *reg = registering_node(e, claim);
            rc = reg ? plan(&k, KUBELET_REGISTER, reg, claim) : NS_ERR_INTERNAL;
        }
    }
    /* Registering adds Nodes to the cluster: every claim and Node pointer above was taken before any write. */
    if (rc == NS_OK && k.n)
        rc = ns_cluster_writes_each(k.w, k.n, kubelet_job, &k);
    for (size_t i = 0; i < k.n; i++)
        if (k.items[i].act == KUBELET_REGISTER)
            ns_node_free(k.items[i].node); /* not handed over: an earlier step failed */
    free(k.items);
    return rc;
}
