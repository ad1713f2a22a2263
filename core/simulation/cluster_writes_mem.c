/*
 * The in-memory cluster-writes layer: applies each write to an ns_cluster, and stands in for the Kubernetes parts an
 * in-memory cluster lacks: the Eviction API's budget check, the pod garbage collector, and (when simulate_controllers
 * is set) workload controllers: a deleted pod of a ReplicaSet, StatefulSet or Job comes back pending, DaemonSet pods
 * are created with each Node and deleted with it, and workloads can be scaled from a remembered template.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "simulation/cluster_writes_mem.h"
#include "errors/ns_error.h"
#include "model/model_util.h"

typedef struct mem_template {
    char *ns;
    char *kind; /* the pods' owner kind */
    char *name; /* the pods' owner name */
    ns_pod *pod;
} mem_template;

typedef struct mem_store {
    ns_cluster *c;
    bool simulate_controllers;
    mem_template *templates;
    size_t n_templates, cap_templates;
    uint64_t pod_seq; /* suffix salt for new replicas */
} mem_store;

static const char *nz(const char *s)
{
    return s ? s : "";
}

static const char *ns_of(const ns_pod *p)
{
    return p->meta.namespace_ ? p->meta.namespace_ : "default";
}

static bool has_ptr(void *const *list, size_t n, const void *obj)
{
    for (size_t i = 0; i < n; i++)
        if (list[i] == obj)
            return true;
    return false;
}

static int absent(const char *kind, const char *name)
{
    return NS_FAIL(NS_ERR_NOT_FOUND, "%s %s is not in the cluster", kind, nz(name));
}

static bool recreated_by_controller(const ns_pod *p)
{
    return ns_pod_owned_by(p, "ReplicaSet") || ns_pod_owned_by(p, "StatefulSet") || ns_pod_owned_by(p, "Job");
}

static mem_template *template_find(mem_store *s, const char *ns, const char *kind, const char *name)
{
    for (size_t i = 0; i < s->n_templates; i++) {
        mem_template *t = &s->templates[i];
        if (strcmp(t->ns, ns) == 0 && strcmp(t->kind, kind) == 0 && strcmp(t->name, name) == 0)
            return t;
    }
    return NULL;
}

/* Remembers the first pod seen of a workload as its template, as the workload object would hold it. */
static int template_remember(mem_store *s, const ns_pod *p)
{
    if (!p->meta.owner_kind || !p->meta.owner_name ||
        template_find(s, ns_of(p), p->meta.owner_kind, p->meta.owner_name))
        return 0;
    if (ns_grow((void **)&s->templates, &s->cap_templates, s->n_templates + 1, sizeof(*s->templates)) < 0)
        return NS_ERR_INTERNAL;
    mem_template t = {ns_strdup(ns_of(p)), ns_strdup(p->meta.owner_kind), ns_strdup(p->meta.owner_name),
                      ns_pod_copy(p)};
    if (!t.ns || !t.kind || !t.name || !t.pod) {
        free(t.ns);
        free(t.kind);
        free(t.name);
        ns_pod_free(t.pod);
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory remembering the template of %s %s", p->meta.owner_kind,
                       p->meta.owner_name);
    }
    free(t.pod->node_name);
    t.pod->node_name = NULL;
    free(t.pod->phase);
    t.pod->phase = NULL;
    t.pod->sched_status = NS_POD_STATUS_NONE;
    s->templates[s->n_templates++] = t;
    return 0;
}

static int set_str(char **field, const char *value)
{
    char *copy = NULL;
    if (value && !(copy = ns_strdup(value)))
        return NS_ERR_INTERNAL;
    free(*field);
    *field = copy;
    return 0;
}

/* A deleted pod: the workload controller's replacement (same object, pending again) or gone for good. */
static int pod_gone(mem_store *s, ns_pod *p)
{
    if (s->simulate_controllers && recreated_by_controller(p) && !(p->phase && strcmp(p->phase, "Succeeded") == 0)) {
        if (template_remember(s, p) < 0 || ns_pod_set_binding(p, NULL, "Pending") < 0)
            return NS_ERR_INTERNAL;
        p->pending_since_ms = ns_clock_now_ms();
        p->meta.deletion_ms = 0;
        return 0;
    }
    return ns_cluster_remove_pod(s->c, p);
}

/* ---- NodeClaims */

static int m_create_nodeclaim(void *ctx, ns_nodeclaim *claim)
{
    mem_store *s = ctx;
    if (!claim->meta.creation_ms)
        claim->meta.creation_ms = ns_clock_now_ms();
    return ns_cluster_add_nodeclaim(s->c, claim);
}

static int m_update_nodeclaim(void *ctx, ns_nodeclaim *claim)
{
    mem_store *s = ctx;
    return has_ptr((void *const *)s->c->nodeclaims, s->c->n_nodeclaims, claim) ? 0
                                                                               : absent("NodeClaim", claim->meta.name);
}

static int m_delete_nodeclaim(void *ctx, ns_nodeclaim *claim)
{
    mem_store *s = ctx;
    if (!has_ptr((void *const *)s->c->nodeclaims, s->c->n_nodeclaims, claim))
        return absent("NodeClaim", claim->meta.name);
    if (!claim->meta.deletion_ms)
        claim->meta.deletion_ms = ns_clock_now_ms();
    return claim->meta.n_finalizers ? 0 : ns_cluster_remove_nodeclaim(s->c, claim);
}

static int m_remove_nodeclaim_finalizer(void *ctx, ns_nodeclaim *claim, const char *finalizer)
{
    mem_store *s = ctx;
    if (!has_ptr((void *const *)s->c->nodeclaims, s->c->n_nodeclaims, claim))
        return absent("NodeClaim", claim->meta.name);
    ns_meta_remove_finalizer(&claim->meta, finalizer);
    return claim->meta.deletion_ms && !claim->meta.n_finalizers ? ns_cluster_remove_nodeclaim(s->c, claim) : 0;
}

/* ---- Nodes */

/* The DaemonSet controller's choice: the template matches the node's labels and tolerates its taints, except those
 * every DaemonSet pod tolerates while a node starts (not-ready, unreachable, unschedulable, unregistered). */
static bool daemon_runs_on(const ns_daemonset *ds, const ns_node *n)
{
    const ns_pod *tp = ds->template_pod;
    if (!tp || !ns_pod_matches_node(tp, n->meta.labels.items, n->meta.labels.n, n->meta.name, NULL, 0))
        return false;
    for (size_t i = 0; i < n->n_taints; i++) {
        const ns_taint *t = &n->taints[i];
        if (ns_taint_is_known_ephemeral(t) || strcmp(t->key, "node.kubernetes.io/unschedulable") == 0)
            continue;
        if (t->effect && strcmp(t->effect, NS_EFFECT_PREFER_NO_SCHEDULE) == 0)
            continue;
        if (!ns_tolerations_tolerate(tp->tolerations, tp->n_tolerations, t))
            return false;
    }
    return true;
}

static int create_daemon_pods(mem_store *s, const ns_node *n)
{
    for (size_t i = 0; i < s->c->n_daemonsets; i++) {
        const ns_daemonset *ds = s->c->daemonsets[i];
        if (!daemon_runs_on(ds, n))
            continue;
        char name[512];
        snprintf(name, sizeof(name), "%s-%s", nz(ds->meta.name), nz(n->meta.name));
        if (ns_cluster_find_pod(s->c, ds->meta.namespace_, name))
            continue;
        ns_pod *p = ns_pod_copy(ds->template_pod);
        if (!p || set_str(&p->meta.name, name) < 0 || ns_pod_set_binding(p, n->meta.name, "Running") < 0) {
            ns_pod_free(p);
            return NS_FAIL(NS_ERR_INTERNAL, "out of memory creating DaemonSet pod %s", name);
        }
        p->meta.creation_ms = ns_clock_now_ms();
        int rc = ns_cluster_add_pod(s->c, p);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int m_create_node(void *ctx, ns_node *node)
{
    mem_store *s = ctx;
    if (!node->meta.creation_ms)
        node->meta.creation_ms = ns_clock_now_ms();
    int rc = ns_cluster_add_node(s->c, node);
    if (rc == 0 && s->simulate_controllers)
        rc = create_daemon_pods(s, node);
    return rc;
}

static int node_known(mem_store *s, const ns_node *node)
{
    return has_ptr((void *const *)s->c->nodes, s->c->n_nodes, node) ? 0 : absent("Node", node->meta.name);
}

static int m_add_node_taint(void *ctx, ns_node *node, const ns_taint *taint)
{
    mem_store *s = ctx;
    int rc = node_known(s, node);
    if (rc == 0 && (rc = ns_taints_put(&node->taints, &node->n_taints, taint)) < 0)
        ns_error_prefix("tainting node %s: ", nz(node->meta.name));
    return rc;
}

static int m_remove_node_taint(void *ctx, ns_node *node, const char *key, const char *effect)
{
    mem_store *s = ctx;
    int rc = node_known(s, node);
    if (rc == 0)
        ns_taints_remove(node->taints, &node->n_taints, key, effect);
    return rc;
}

static int set_node_map(mem_store *s, ns_node *node, ns_labels *map, const char *key, const char *value)
{
    int rc = node_known(s, node);
    return rc < 0 ? rc : ns_labels_assign(map, key, value);
}

static int m_set_node_label(void *ctx, ns_node *node, const char *key, const char *value)
{
    return set_node_map(ctx, node, &node->meta.labels, key, value);
}

static int m_set_node_annotation(void *ctx, ns_node *node, const char *key, const char *value)
{
    return set_node_map(ctx, node, &node->meta.annotations, key, value);
}

static int m_set_node_unschedulable(void *ctx, ns_node *node, bool unschedulable)
{
    mem_store *s = ctx;
    int rc = node_known(s, node);
    if (rc == 0)
        node->unschedulable = unschedulable;
    return rc;
}

static int m_update_node_status(void *ctx, ns_node *node)
{
    return node_known(ctx, node);
}

/* The pod garbage collector: pods bound to a Node that no longer exists are deleted (and recreated by their
 * controllers); DaemonSet pods simply go. */
static int node_removed(mem_store *s, const char *name)
{
    for (size_t i = s->c->n_pods; i-- > 0;) {
        ns_pod *p = s->c->pods[i];
        if (!p->node_name || strcmp(p->node_name, name) != 0)
            continue;
        int rc = ns_pod_owned_by(p, "DaemonSet") || ns_pod_owned_by(p, "Node") ? ns_cluster_remove_pod(s->c, p)
                                                                                 : pod_gone(s, p);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int remove_node_now(mem_store *s, ns_node *node)
{
    char *name = ns_strdup(node->meta.name);
    if (!name)
        return NS_ERR_INTERNAL;
    int rc = ns_cluster_remove_node(s->c, node);
    if (rc == 0)
        rc = node_removed(s, name);
    free(name);
    return rc;
}

static int m_delete_node(void *ctx, ns_node *node)
{
    mem_store *s = ctx;
    int rc = node_known(s, node);
    if (rc < 0)
        return rc;
    if (!node->meta.deletion_ms)
        node->meta.deletion_ms = ns_clock_now_ms();
    return node->meta.n_finalizers ? 0 : remove_node_now(s, node);
}

static int m_remove_node_finalizer(void *ctx, ns_node *node, const char *finalizer)
{
    mem_store *s = ctx;
    int rc = node_known(s, node);
    if (rc < 0)
        return rc;
    ns_meta_remove_finalizer(&node->meta, finalizer);
    return node->meta.deletion_ms && !node->meta.n_finalizers ? remove_node_now(s, node) : 0;
}

/* ---- Pods */

static int m_create_pod(void *ctx, ns_pod *pod)
{
    mem_store *s = ctx;
    int64_t now = ns_clock_now_ms();
    if (!pod->meta.creation_ms)
        pod->meta.creation_ms = now;
    if (!pod->node_name)
        pod->pending_since_ms = now;
    else if (!pod->start_ms)
        pod->start_ms = now;
    return ns_cluster_add_pod(s->c, pod);
}

static int pod_known(mem_store *s, const ns_pod *pod)
{
    return ns_cluster_find_pod(s->c, pod->meta.namespace_, nz(pod->meta.name)) == pod
               ? 0
               : NS_FAIL(NS_ERR_NOT_FOUND, "pod %s/%s is not in the cluster", ns_of(pod), nz(pod->meta.name));
}

static int m_bind_pod(void *ctx, ns_pod *pod, const char *node_name)
{
    mem_store *s = ctx;
    int rc = pod_known(s, pod);
    if (rc < 0)
        return rc;
    if (!ns_cluster_find_node(s->c, node_name))
        return NS_FAIL(NS_ERR_NOT_FOUND, "binding pod %s/%s: node %s does not exist", ns_of(pod),
                       nz(pod->meta.name), node_name);
    if (ns_pod_set_binding(pod, node_name, "Running") < 0)
        return NS_ERR_INTERNAL;
    pod->pending_since_ms = 0;
    pod->start_ms = ns_clock_now_ms(); /* the simulated kubelet starts it at once */
    return 0;
}

static int m_evict_pod(void *ctx, ns_pod *pod, bool voluntary)
{
    mem_store *s = ctx;
    int rc = pod_known(s, pod);
    if (rc == 0)
        rc = ns_pdb_check_eviction(s->c, pod);
    return rc < 0 ? rc : pod_gone(s, pod);
}

static int m_delete_pod(void *ctx, ns_pod *pod, bool voluntary)
{
    mem_store *s = ctx;
    int rc = pod_known(s, pod);
    return rc < 0 ? rc : pod_gone(s, pod);
}

/* ---- NodePools and node classes */

static int m_put_nodepool(void *ctx, ns_nodepool *np)
{
    mem_store *s = ctx;
    ns_nodepool *old = np->meta.name ? ns_cluster_find_nodepool(s->c, np->meta.name) : NULL;
    if (old && ns_cluster_remove_nodepool(s->c, old) < 0) {
        ns_nodepool_free(np);
        return NS_ERR_INTERNAL;
    }
    return ns_cluster_add_nodepool(s->c, np);
}

static int m_delete_nodepool(void *ctx, const char *name)
{
    mem_store *s = ctx;
    ns_nodepool *np = ns_cluster_find_nodepool(s->c, name);
    return np ? ns_cluster_remove_nodepool(s->c, np) : absent("NodePool", name);
}

static int m_put_nodeclass(void *ctx, ns_nodeclass_def *def)
{
    mem_store *s = ctx;
    ns_nodeclass_def *old = def->meta.name ? ns_cluster_find_nodeclass(s->c, def->kind, def->meta.name) : NULL;
    if (old && ns_cluster_remove_nodeclass(s->c, old) < 0) {
        ns_nodeclass_def_free(def);
        return NS_ERR_INTERNAL;
    }
    return ns_cluster_add_nodeclass(s->c, def);
}

static void mem_destroy(void *ctx)
{
    mem_store *s = ctx;
    for (size_t i = 0; s && i < s->n_templates; i++) {
        free(s->templates[i].ns);
        free(s->templates[i].kind);
        free(s->templates[i].name);
        ns_pod_free(s->templates[i].pod);
    }
    if (s)
        free(s->templates);
    free(s);
}

static const ns_cluster_writes_ops mem_ops = {
    .create_nodeclaim = m_create_nodeclaim,
    .update_nodeclaim = m_update_nodeclaim,
    .delete_nodeclaim = m_delete_nodeclaim,
    .remove_nodeclaim_finalizer = m_remove_nodeclaim_finalizer,
    .create_node = m_create_node,
    .add_node_taint = m_add_node_taint,
    .remove_node_taint = m_remove_node_taint,
    .set_node_label = m_set_node_label,
    .set_node_annotation = m_set_node_annotation,
    .set_node_unschedulable = m_set_node_unschedulable,
    .update_node_status = m_update_node_status,
    .delete_node = m_delete_node,
    .remove_node_finalizer = m_remove_node_finalizer,
    .create_pod = m_create_pod,
    .bind_pod = m_bind_pod,
    .evict_pod = m_evict_pod,
    .delete_pod = m_delete_pod,
    .put_nodepool = m_put_nodepool,
    .delete_nodepool = m_delete_nodepool,
    .put_nodeclass = m_put_nodeclass,
    .destroy = mem_destroy,
};

int ns_cluster_writes_mem_new(ns_cluster *cluster, bool simulate_controllers, ns_cluster_writes *out)
{
    mem_store *s = calloc(1, sizeof(*s));
    if (!s)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory creating the in-memory cluster store");
    s->c = cluster;
    s->simulate_controllers = simulate_controllers;
    out->ops = &mem_ops;
    out->ctx = s;
    /* Workloads present at start keep their template even if they are scaled to zero first thing. */
    for (size_t i = 0; simulate_controllers && i < cluster->n_pods; i++)
        if (recreated_by_controller(cluster->pods[i]) && template_remember(s, cluster->pods[i]) < 0) {
            ns_cluster_writes_mem_free(out);
            return NS_ERR_INTERNAL;
        }
    return 0;
}

void ns_cluster_writes_mem_free(ns_cluster_writes *w)
{
    if (!w || w->ops != &mem_ops)
        return;
    mem_destroy(w->ctx);
    w->ops = NULL;
    w->ctx = NULL;
}

/* ---- Scaling */

static bool workload_pod(const ns_pod *p, const char *ns, const char *kind, const char *name)
{
    if (strcmp(ns_of(p), ns) != 0 || !p->meta.owner_kind || !p->meta.owner_name)
        return false;
    if (strcmp(kind, "Deployment") == 0) {
        size_t len = strlen(name);
        return strcmp(p->meta.owner_kind, "ReplicaSet") == 0 && strncmp(p->meta.owner_name, name, len) == 0 &&
               p->meta.owner_name[len] == '-' && !strchr(p->meta.owner_name + len + 1, '-');
    }
    return strcmp(p->meta.owner_kind, kind) == 0 && strcmp(p->meta.owner_name, name) == 0;
}

/* Newest first: later creation, then (StatefulSet ordinals, expansion order) later in the cluster's list. */
static ns_pod *newest(mem_store *s, const char *ns, const char *kind, const char *name)
{
    ns_pod *best = NULL;
    for (size_t i = 0; i < s->c->n_pods; i++) {
        ns_pod *p = s->c->pods[i];
        if (workload_pod(p, ns, kind, name) && (!best || p->meta.creation_ms >= best->meta.creation_ms))
            best = p;
    }
    return best;
}

static int add_replica(mem_store *s, const mem_template *t, size_t ordinal)
{
    char name[512];
    bool sts = strcmp(t->kind, "StatefulSet") == 0;
    for (;;) {
        if (sts)
            snprintf(name, sizeof(name), "%s-%zu", t->name, ordinal++);
        else
            snprintf(name, sizeof(name), "%s-r%05llu", t->name, (unsigned long long)(++s->pod_seq % 100000));
        if (!ns_cluster_find_pod(s->c, t->ns, name))
            break;
    }
    ns_pod *p = ns_pod_copy(t->pod);
    if (!p || set_str(&p->meta.name, name) < 0) {
        ns_pod_free(p);
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory creating pod %s/%s", t->ns, name);
    }
    p->meta.creation_ms = 0;
    return m_create_pod(s, p);
}

int ns_cluster_writes_mem_scale(ns_cluster_writes *w, const char *ns, const char *kind, const char *name,
                                size_t replicas)
{
    if (!w || w->ops != &mem_ops)
        return NS_FAIL(NS_ERR_UNSUPPORTED, "scaling %s %s: only the in-memory cluster runs workload controllers",
                       kind, name);
    mem_store *s = w->ctx;
    ns = ns ? ns : "default";
    size_t have = 0;
    for (size_t i = 0; i < s->c->n_pods; i++) {
        const ns_pod *p = s->c->pods[i];
        if (workload_pod(p, ns, kind, name)) {
            have++;
            if (template_remember(s, p) < 0)
                return NS_ERR_INTERNAL;
        }
    }
    const mem_template *t = NULL;
    for (size_t i = 0; i < s->n_templates && !t; i++) {
        const mem_template *x = &s->templates[i];
        if (strcmp(x->ns, ns) == 0 && workload_pod(x->pod, ns, kind, name))
            t = x;
    }
    if (!t)
        return NS_FAIL(NS_ERR_NOT_FOUND, "scaling %s %s/%s: the workload has no pods and no known template", kind,
                       ns, name);
    int rc = 0;
    for (; rc == 0 && have > replicas; have--)
        rc = ns_cluster_remove_pod(s->c, newest(s, ns, kind, name));
    for (size_t ord = have; rc == 0 && have < replicas; have++)
        rc = add_replica(s, t, ord);
    /* the workload's spec.replicas, which a CapacityBuffer's percentage takes (model/buffer.h) */
    ns_workload *wl = ns_cluster_find_pod_controller(s->c, kind, ns, name);
    if (rc == 0 && wl)
        wl->replicas = (int32_t)replicas;
    return rc;
}
