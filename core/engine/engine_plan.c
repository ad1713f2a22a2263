/*
 * The scheduling view. Karpenter's scheduler sees in-flight NodeClaims as nodes, so pending pods that fit them create
 * nothing new, and it sees pods of deleting nodes as pods to place. The engine keeps no nominations: each round
 * re-simulates against this view, built from the objects alone.
 */
#include <stdlib.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "engine/engine_internal.h"
#include "errors/ns_error.h"
#include "model/model_util.h"
#include "model/resources.h"

static bool has_disrupted_taint(const ns_node *n)
{
    for (size_t i = 0; i < n->n_taints; i++)
        if (strcmp(n->taints[i].key, NS_TAINT_DISRUPTED_KEY) == 0)
            return true;
    return false;
}

static bool listed(const char *const *names, size_t n, const char *name)
{
    for (size_t i = 0; name && i < n; i++)
        if (strcmp(names[i], name) == 0)
            return true;
    return false;
}

static bool removed(const ns_engine_plan_opts *o, const char *name)
{
    return o && listed(o->removed_nodes, o->n_removed, name);
}

static bool closed(const ns_engine_plan_opts *o, const char *name)
{
    return o && listed(o->closed_nodes, o->n_closed, name);
}

/* Nodes whose pods are leaving: deleting claims, disrupted nodes, and the caller's removed nodes. */
static bool node_leaving(const ns_engine *e, const ns_node *n, const ns_engine_plan_opts *o)
{
    if (removed(o, n->meta.name) || n->meta.deletion_ms || has_disrupted_taint(n))
        return true;
    const ns_nodeclaim *claim = ns_engine_claim_of_node(e, n);
    return claim && ns_claim_deleting(claim);
}

static int own_node(ns_engine_plan *p, ns_node *n)
{
    ns_node **grown = realloc(p->own_nodes, (p->n_own_nodes + 1) * sizeof(*grown));
    if (!grown) {
        ns_node_free(n);
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory building the scheduling view");
    }
    p->own_nodes = grown;
    p->own_nodes[p->n_own_nodes++] = n;
    return 0;
}

static bool taint_is_startup(const ns_nodeclaim *claim, const ns_taint *t)
{
    for (size_t i = 0; claim && i < claim->n_startup_taints; i++)
        if (ns_taint_matches(&claim->startup_taints[i], t))
            return true;
    return false;
}

/* The taints a pod must tolerate once the node is initialized: drop startup, ephemeral and unregistered taints. */
static int lasting_taints(const ns_taint *src, size_t n, const ns_nodeclaim *claim, ns_node *dst)
{
    ns_taint keep[64];
    size_t k = 0;
    for (size_t i = 0; i < n && k < 64; i++) {
        const ns_taint *t = &src[i];
        if (ns_taint_is_known_ephemeral(t) || strcmp(t->key, NS_TAINT_UNREGISTERED_KEY) == 0 ||
            taint_is_startup(claim, t))
            continue;
        keep[k++] = *t;
    }
    if (k && ns_taints_copy(keep, k, &dst->taints) < 0)
        return NS_ERR_INTERNAL;
    dst->n_taints = k;
    return 0;
}

/* A registered but uninitialized node as it will be: ready, with only its lasting taints. */
static ns_node *future_node(const ns_node *n, const ns_nodeclaim *claim)
{
    ns_node *c = ns_node_new();
    if (!c)
        return NULL;
    if (ns_meta_copy(&n->meta, &c->meta) < 0 || (n->provider_id && !(c->provider_id = ns_strdup(n->provider_id))) ||
        lasting_taints(n->taints, n->n_taints, claim, c) < 0 || ns_res_copy(&c->capacity, &n->capacity) < 0 ||
        ns_res_copy(&c->allocatable, &n->allocatable) < 0) {
        ns_node_free(c);
        return NULL;
    }
    return c;
}

/* A node as it is, cordoned for the round: its pods stay, no new one comes. */
static ns_node *closed_node(const ns_node *n)
{
    ns_node *c = ns_node_new();
    if (!c)
        return NULL;
    if (ns_meta_copy(&n->meta, &c->meta) < 0 || (n->provider_id && !(c->provider_id = ns_strdup(n->provider_id))) ||
        (n->n_taints && ns_taints_copy(n->taints, n->n_taints, &c->taints) < 0) ||
        ns_res_copy(&c->capacity, &n->capacity) < 0 || ns_res_copy(&c->allocatable, &n->allocatable) < 0) {
        ns_node_free(c);
        return NULL;
    }
    c->n_taints = n->n_taints;
    c->ready = n->ready;
    c->unschedulable = true;
    return c;
}

static const ns_itype *claim_type(const ns_engine *e, const ns_nodeclaim *claim, const char *type_name)
{
    for (size_t s = 0; s < e->types.n; s++) {
        const ns_nodeclass_def *def = e->types.owner[s];
        if (e->types.errors[s] || !claim->nodeclass_ref.kind || strcmp(def->kind, claim->nodeclass_ref.kind) != 0 ||
            strcmp(def->meta.name, claim->nodeclass_ref.name) != 0)
            continue;
        const ns_itype *t = ns_itype_set_find(&e->types.sets[s], type_name);
        if (t)
            return t;
    }
    return NULL;
}

static const ns_selector_req *claim_req(const ns_nodeclaim *claim, const char *key)
{
    for (size_t i = 0; i < claim->n_requirements; i++)
        if (strcmp(claim->requirements[i].key, key) == 0 && claim->requirements[i].op == NS_OP_IN)
            return &claim->requirements[i];
    return NULL;
}

/* What an unlaunched claim is sure to have: the smallest allocatable among its instance types. 0 or
 * NS_ERR_INTERNAL. */
static int min_allocatable(const ns_engine *e, const ns_nodeclaim *claim, ns_res *out)
{
    const ns_selector_req *types = claim_req(claim, NS_LABEL_INSTANCE_TYPE);
    bool any = false;
    for (size_t i = 0; types && i < types->n_values; i++) {
        const ns_itype *t = claim_type(e, claim, types->values[i]);
        if (!t)
            continue;
        if (!any) {
            if (ns_res_copy(out, &t->allocatable) < 0)
                return NS_ERR_INTERNAL;
            any = true;
            continue;
        }
        out->cpu_milli = t->allocatable.cpu_milli < out->cpu_milli ? t->allocatable.cpu_milli : out->cpu_milli;
        out->memory_bytes =
            t->allocatable.memory_bytes < out->memory_bytes ? t->allocatable.memory_bytes : out->memory_bytes;
        out->pods = t->allocatable.pods < out->pods ? t->allocatable.pods : out->pods;
        out->ephemeral_storage_bytes = t->allocatable.ephemeral_storage_bytes < out->ephemeral_storage_bytes
                                           ? t->allocatable.ephemeral_storage_bytes
                                           : out->ephemeral_storage_bytes;
    }
    return any ? 0 : ns_res_copy(out, &claim->requests);
}

/* Adds the requests of the DaemonSet pods that run on n to *out. */
static int daemon_overhead(const ns_engine *e, const ns_node *n, ns_res *out)
{
    const ns_cluster *c = e->cluster;
    for (size_t i = 0; i < c->n_daemonsets; i++) {
        const ns_pod *tp = c->daemonsets[i]->template_pod;
        if (!tp || !ns_pod_matches_node(tp, n->meta.labels.items, n->meta.labels.n, n->meta.name, NULL, 0) ||
            !ns_pod_tolerates(tp, n->taints, n->n_taints, NULL, 0, NS_TAINTS_IGNORE_PREFER_NO_SCHEDULE, NULL, 0))
            continue;
        int rc = ns_res_add(out, &tp->requests);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* A NodeClaim with no Node yet, as the node it will register. */
static ns_node *claim_node(const ns_engine *e, const ns_nodeclaim *claim)
{
    ns_node *n = ns_node_new();
    if (!n)
        return NULL;
    const char *name = claim->node_name ? claim->node_name : claim->meta.name;
    int rc = ns_labels_copy(&claim->meta.labels, &n->meta.labels);
    if (rc == 0 && !(n->meta.name = ns_strdup(name)))
        rc = NS_ERR_INTERNAL;
    if (rc == 0)
        rc = ns_labels_set(&n->meta.labels, NS_LABEL_HOSTNAME, name);
    const char *type = ns_labels_get(&claim->meta.labels, NS_LABEL_INSTANCE_TYPE);
    const ns_itype *t = type ? claim_type(e, claim, type) : NULL;
    for (size_t i = 0; rc == 0 && t && i < t->n_labels; i++)
        if (!ns_labels_get(&n->meta.labels, t->labels[i].key))
            rc = ns_labels_set(&n->meta.labels, t->labels[i].key, t->labels[i].value);
    /* Unlaunched: the single-valued requirements are all that is known. */
    for (size_t i = 0; rc == 0 && !ns_claim_launched(claim) && i < claim->n_requirements; i++) {
        const ns_selector_req *r = &claim->requirements[i];
        if (r->op == NS_OP_IN && r->n_values == 1 && !ns_labels_get(&n->meta.labels, r->key))
            rc = ns_labels_set(&n->meta.labels, r->key, r->values[0]);
    }
    if (rc == 0)
        rc = lasting_taints(claim->taints, claim->n_taints, claim, n);
    if (rc == 0) {
        if (ns_claim_launched(claim)) {
            rc = ns_res_copy(&n->allocatable, &claim->allocatable);
            if (rc == 0)
                rc = ns_res_copy(&n->capacity, claim->capacity.cpu_milli ? &claim->capacity : &claim->allocatable);
        } else {
            rc = min_allocatable(e, claim, &n->allocatable);
            if (rc == 0)
                rc = ns_res_copy(&n->capacity, &n->allocatable);
        }
        ns_res ds = {0};
        if (rc == 0 && (rc = daemon_overhead(e, n, &ds)) == 0)
            rc = ns_res_sub(&n->allocatable, &ds);
        ns_res_free(&ds);
    }
    if (rc < 0) {
        ns_node_free(n);
        return NULL;
    }
    return n;
}

ns_pod *ns_engine_plan_pod(ns_engine_plan *p, const ns_pod *src)
{
    ns_pod *c = malloc(sizeof(*c));
    ns_pod **grown = c ? realloc(p->own_pods, (p->n_own_pods + 1) * sizeof(*grown)) : NULL;
    if (!grown) {
        free(c);
        NS_FAIL(NS_ERR_INTERNAL, "out of memory building the scheduling view");
        return NULL;
    }
    p->own_pods = grown;
    /* A shallow copy: it shares every owned pointer with the cluster's pod and is freed with free() alone. */
    *c = *src;
    p->own_pods[p->n_own_pods++] = c;
    return c;
}

static ns_pod *pod_variant(ns_engine_plan *p, const ns_pod *src, bool gated)
{
    ns_pod *c = ns_engine_plan_pod(p, src);
    if (!c)
        return NULL;
    if (gated)
        c->scheduling_gated = true;
    else {
        c->node_name = NULL;
        c->phase = NULL;
        c->sched_status = NS_POD_STATUS_NONE; /* rescheduled from a node, not waiting on the kube-scheduler */
    }
    return c;
}

/* The headroom pass: a pod the round would schedule stays where the first pass put it, or is left out. */
static int pin(ns_engine_plan *p, const ns_engine_plan_opts *o, size_t i)
{
    if (!ns_sched_pod_is_pending(p->view.pods[i]))
        return 0;
    const char *at = i < o->n_pinned ? o->pinned[i] : NULL;
    ns_pod *c = pod_variant(p, p->view.pods[i], !at);
    if (!c)
        return NS_ERR_INTERNAL;
    c->node_name = (char *)at; /* borrowed from the caller for the plan's life */
    p->view.pods[i] = c;
    return 0;
}

static int push_view_node(ns_engine_plan *p, size_t *cap, ns_node *n, ns_nodeclaim *claim, bool bindable)
{
    if (p->view.n_nodes == *cap) {
        size_t next = *cap ? *cap * 2 : 16;
        ns_node **nodes = realloc(p->view.nodes, next * sizeof(*nodes));
        ns_nodeclaim **claims = nodes ? realloc(p->node_claim, next * sizeof(*claims)) : NULL;
        bool *bind = claims ? realloc(p->bindable, next * sizeof(*bind)) : NULL;
        if (nodes)
            p->view.nodes = nodes;
        if (claims)
            p->node_claim = claims;
        if (!bind)
            return NS_FAIL(NS_ERR_INTERNAL, "out of memory building the scheduling view");
        p->bindable = bind;
        *cap = next;
    }
    p->node_claim[p->view.n_nodes] = claim;
    p->bindable[p->view.n_nodes] = bindable;
    p->view.nodes[p->view.n_nodes++] = n;
    return 0;
}

static int build_nodes(ns_engine *e, const ns_engine_plan_opts *o, ns_engine_plan *p)
{
    const ns_cluster *c = e->cluster;
    size_t cap = 0;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < c->n_nodes; i++) {
        ns_node *n = c->nodes[i];
        if (node_leaving(e, n, o))
            continue;
        ns_nodeclaim *claim = ns_engine_claim_of_node(e, n);
        if (claim && !ns_claim_initialized(claim)) {
            if (o && o->exclude_inflight)
                continue;
            ns_node *f = future_node(n, claim);
            if (!f || (rc = own_node(p, f)) < 0)
                return f ? rc : NS_ERR_INTERNAL;
            rc = push_view_node(p, &cap, f, claim, false);
            continue;
        }
        bool bindable = n->ready && !n->unschedulable;
        if (closed(o, n->meta.name)) {
            ns_node *f = closed_node(n);
            if (!f || (rc = own_node(p, f)) < 0)
                return f ? rc : NS_FAIL(NS_ERR_INTERNAL, "out of memory building the scheduling view");
            n = f;
        }
        rc = push_view_node(p, &cap, n, claim, bindable);
    }
    p->n_cluster_nodes = p->view.n_nodes;
    for (size_t i = 0; rc == 0 && !(o && o->exclude_inflight) && i < c->n_nodeclaims; i++) {
        ns_nodeclaim *claim = c->nodeclaims[i];
        if (ns_claim_deleting(claim) || ns_claim_initialized(claim) || ns_engine_node_of_claim(e, claim))
            continue;
        ns_node *n = claim_node(e, claim);
        if (!n || (rc = own_node(p, n)) < 0)
            return n ? rc : NS_ERR_INTERNAL;
        rc = push_view_node(p, &cap, n, claim, false);
    }
    return rc;
}

static int build_pods(ns_engine *e, const ns_engine_plan_opts *o, ns_engine_plan *p)
{
    const ns_cluster *c = e->cluster;
    p->view.pods = malloc((c->n_pods ? c->n_pods : 1) * sizeof(*p->view.pods));
    if (!p->view.pods)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory building the scheduling view");
    p->view.n_pods = c->n_pods;
    int64_t now = ns_clock_now_ms();
    for (size_t i = 0; i < c->n_pods; i++) {
        ns_pod *pod = c->pods[i];
        p->view.pods[i] = pod;
        ns_node *n = pod->node_name ? ns_cluster_find_node(c, pod->node_name) : NULL;
        /* A pod that cannot leave its node now stays bound to it, out of the view: no capacity waits for it. */
        bool leaving = n && node_leaving(e, n, o) && ns_engine_pod_currently_reschedulable(e, pod, now);
        /* With only_removed_pods, the pods of other leaving nodes stay out of the round as pending pods do. */
        bool hide = o && o->only_removed_pods &&
                    (ns_sched_pod_is_pending(pod) || (leaving && !removed(o, n->meta.name)));
        if ((leaving || hide) && !(p->view.pods[i] = pod_variant(p, pod, hide)))
            return NS_ERR_INTERNAL;
        if (o && o->pinned && pin(p, o, i) < 0)
            return NS_ERR_INTERNAL;
    }
    p->n_cluster_pods = c->n_pods;
    return o && o->headroom ? ns_engine_headroom_pods(e, p) : 0;
}

int ns_engine_plan_run(ns_engine *e, const ns_engine_plan_opts *opts, ns_engine_plan *out)
{
    memset(out, 0, sizeof(*out));
    int rc = ns_engine_refresh_types(e);
    if (rc < 0)
        return rc;
    out->view = *e->cluster;
    out->view.pods = NULL;
    out->view.nodes = NULL;
    out->view.n_nodes = 0;
    const ns_itype_set *const *pool_types = NULL;
    if ((rc = build_nodes(e, opts, out)) == 0 && (rc = build_pods(e, opts, out)) == 0 &&
        (rc = ns_engine_commit_plan_begin(e, opts ? opts->removed_nodes : NULL, opts ? opts->n_removed : 0, out,
                                           &pool_types)) == 0) {
        ns_sched_input in = {.cluster = &out->view, .pool_types = pool_types,
                             .pool_errors = e->types.pool_errors, .packing = e->cfg.packing,
                             .min_values_policy = e->cfg.min_values_policy,
                             .preference_policy = e->cfg.preference_policy,
                             .default_spread = e->cfg.default_spread, .n_default_spread = e->cfg.n_default_spread,
                             .reserved_mode = !e->cfg.reserved_capacity        ? NS_SCHED_RESERVED_OFF
                                              : opts && opts->reserved_fallback ? NS_SCHED_RESERVED_FALLBACK
                                                                                : NS_SCHED_RESERVED_STRICT};
        rc = ns_sched_run(&in, &out->result);
        if (rc == 0)
            rc = ns_engine_commit_plan_end(e, out);
    }
    if (rc < 0)
        ns_engine_plan_free(out);
    return rc;
}

void ns_engine_plan_free(ns_engine_plan *p)
{
    if (!p)
        return;
    ns_sched_result_free(&p->result);
    for (size_t i = 0; i < p->n_own_pods; i++)
        free(p->own_pods[i]);
    free(p->own_pods);
    for (size_t i = 0; i < p->n_own_nodes; i++)
        ns_node_free(p->own_nodes[i]);
    free(p->own_nodes);
    ns_strv_free(p->own_names, p->n_own_names);
    free(p->view.pods);
    free(p->view.nodes);
    free(p->node_claim);
    free(p->bindable);
    ns_engine_commit_plan_free(p);
    memset(p, 0, sizeof(*p));
}
