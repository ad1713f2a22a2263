#include "sched_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "model/labels.h"
#include "model/resources.h"

static void die(const char *what)
{
    fprintf(stderr, "fixture: %s: %s\n", what, ns_error_message());
    abort();
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p)
        die("out of memory");
    return p;
}

static char *xstrdup(const char *s)
{
    char *d = strdup(s);
    if (!d)
        die("out of memory");
    return d;
}

static void parse_labels(ns_labels *l, const char *text)
{
    char *copy = xstrdup(text ? text : ""), *save = NULL;
    for (char *kv = strtok_r(copy, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq)
            die("label without '='");
        *eq = '\0';
        if (ns_labels_set(l, kv, eq + 1) != 0)
            die("setting a label");
    }
    free(copy);
}

/* "key Op v1|v2;key2 Exists" into an array of selector requirements. */
static ns_selector_req *parse_reqs(const char *text, size_t *n)
{
    char *copy = xstrdup(text ? text : ""), *save = NULL;
    ns_selector_req *v = xcalloc(16, sizeof(*v));
    *n = 0;
    for (char *one = strtok_r(copy, ";", &save); one; one = strtok_r(NULL, ";", &save)) {
        char key[128], op[32], values[256] = "";
        if (sscanf(one, "%127s %31s %255s", key, op, values) < 2 || *n >= 16)
            die("malformed requirement shorthand");
        ns_selector_req *r = &v[(*n)++];
        r->key = xstrdup(key);
        if (!ns_req_op_parse(op, &r->op))
            die("unknown operator");
        r->values = xcalloc(16, sizeof(char *));
        char *vs = NULL;
        for (char *val = strtok_r(values, "|", &vs); val && values[0]; val = strtok_r(NULL, "|", &vs))
            r->values[r->n_values++] = xstrdup(val);
        char *mv = strstr(one, "minValues=");
        if (mv)
            r->min_values = atoi(mv + strlen("minValues="));
    }
    free(copy);
    return v;
}

ns_itype *fx_type(ns_itype_set *set, const char *name, int64_t cpu_milli, int64_t mem_bytes, int64_t pods,
                  const char *labels, const char *offerings)
{
    ns_labels l = {0};
    parse_labels(&l, labels);
    if (!ns_labels_get(&l, NS_LABEL_INSTANCE_TYPE))
        ns_labels_set(&l, NS_LABEL_INSTANCE_TYPE, name);
    ns_offering offs[32];
    size_t n_offs = 0;
    char *copy = xstrdup(offerings), *save = NULL;
    for (char *o = strtok_r(copy, ",", &save); o && n_offs < 32; o = strtok_r(NULL, ",", &save)) {
        char *c1 = strchr(o, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            die("malformed offering shorthand");
        *c1 = *c2 = '\0';
        offs[n_offs++] = (ns_offering){.struct_size = sizeof(ns_offering), .zone = o, .capacity_type = c1 + 1,
                                       .price_per_hour = atof(c2 + 1), .available = true};
    }
    ns_instance_type it = {.struct_size = sizeof(it), .name = name, .labels = l.items, .n_labels = l.n,
                           .offerings = offs, .n_offerings = n_offs};
    it.capacity.cpu_milli = cpu_milli;
    it.capacity.memory_bytes = mem_bytes;
    it.capacity.pods = pods;
    it.capacity.ephemeral_storage_bytes = 100 * FX_GI;
    ns_itype *items = realloc(set->items, (set->n + 1) * sizeof(*items));
    if (!items)
        die("out of memory");
    set->items = items;
    if (ns_itype_copy(&it, &set->items[set->n]) != NS_OK)
        die("copying an instance type");
    free(copy);
    ns_labels_free(&l);
    return &set->items[set->n++];
}

void fx_type_extended(ns_itype *t, const char *name, int64_t value)
{
    if (ns_res_set(&t->capacity, name, value) != 0 || ns_res_set(&t->allocatable, name, value) != 0)
        die("setting an extended resource");
}

static ns_pod *new_pod(const char *name, int64_t cpu_milli, int64_t mem_bytes, const char *labels)
{
    ns_pod *p = ns_pod_new();
    if (!p)
        die("out of memory");
    p->meta.name = xstrdup(name);
    p->meta.namespace_ = xstrdup("default");
    parse_labels(&p->meta.labels, labels);
    p->containers = xcalloc(1, sizeof(ns_container));
    p->n_containers = 1;
    p->containers[0].name = xstrdup("app");
    p->containers[0].requests.cpu_milli = cpu_milli;
    p->containers[0].requests.memory_bytes = mem_bytes;
    if (ns_pod_compute_requests(p) != 0)
        die("computing a pod's requests");
    return p;
}

ns_pod *fx_pod(ns_cluster *c, const char *name, int64_t cpu_milli, int64_t mem_bytes, const char *labels)
{
    ns_pod *p = new_pod(name, cpu_milli, mem_bytes, labels);
    if (ns_cluster_add_pod(c, p) != 0)
        die("adding a pod");
    return p;
}

void fx_pod_extended(ns_pod *p, const char *name, int64_t value)
{
    if (ns_res_set(&p->containers[0].requests, name, value) != 0 || ns_pod_compute_requests(p) != 0)
        die("setting an extended request");
}

void fx_pod_selector(ns_pod *p, const char *labels)
{
    parse_labels(&p->node_selector, labels);
}

void fx_pod_required(ns_pod *p, const char *reqs)
{
    ns_affinity *a = &p->affinity;
    ns_node_selector_term *t = realloc(a->node_required, (a->n_node_required + 1) * sizeof(*t));
    if (!t)
        die("out of memory");
    a->node_required = t;
    memset(&t[a->n_node_required], 0, sizeof(*t));
    t[a->n_node_required].exprs = parse_reqs(reqs, &t[a->n_node_required].n_exprs);
    a->n_node_required++;
    a->has_node_required = true;
}

void fx_pod_preferred(ns_pod *p, int32_t weight, const char *reqs)
{
    ns_affinity *a = &p->affinity;
    ns_preferred_node_term *t = realloc(a->node_preferred, (a->n_node_preferred + 1) * sizeof(*t));
    if (!t)
        die("out of memory");
    a->node_preferred = t;
    memset(&t[a->n_node_preferred], 0, sizeof(*t));
    t[a->n_node_preferred].weight = weight;
    t[a->n_node_preferred].term.exprs = parse_reqs(reqs, &t[a->n_node_preferred].term.n_exprs);
    a->n_node_preferred++;
}

void fx_pod_tolerate(ns_pod *p, const char *key, const char *effect)
{
    ns_toleration *t = realloc(p->tolerations, (p->n_tolerations + 1) * sizeof(*t));
    if (!t)
        die("out of memory");
    p->tolerations = t;
    memset(&t[p->n_tolerations], 0, sizeof(*t));
    t[p->n_tolerations].key = key ? xstrdup(key) : NULL;
    t[p->n_tolerations].exists = true;
    t[p->n_tolerations].effect = effect ? xstrdup(effect) : NULL;
    p->n_tolerations++;
}

static void selector(ns_label_selector *s, const char *labels)
{
    s->present = true;
    parse_labels(&s->match_labels, labels);
}

void fx_pod_spread(ns_pod *p, const char *key, int32_t max_skew, bool schedule_anyway, const char *sel)
{
    ns_topology_spread *t = realloc(p->spread, (p->n_spread + 1) * sizeof(*t));
    if (!t)
        die("out of memory");
    p->spread = t;
    memset(&t[p->n_spread], 0, sizeof(*t));
    t[p->n_spread].max_skew = max_skew;
    t[p->n_spread].topology_key = xstrdup(key);
    t[p->n_spread].when_unsatisfiable = schedule_anyway ? NS_SCHEDULE_ANYWAY : NS_DO_NOT_SCHEDULE;
    t[p->n_spread].node_taints_policy = NS_POLICY_IGNORE;
    selector(&t[p->n_spread].selector, sel);
    p->n_spread++;
}

void fx_pod_affinity(ns_pod *p, const char *key, const char *sel, bool anti, int32_t preferred_weight)
{
    ns_affinity *a = &p->affinity;
    ns_pod_affinity_term term = {0};
    term.topology_key = xstrdup(key);
    selector(&term.selector, sel);
    if (preferred_weight > 0) {
        ns_weighted_pod_affinity_term **v = anti ? &a->anti_preferred : &a->pod_preferred;
        size_t *n = anti ? &a->n_anti_preferred : &a->n_pod_preferred;
        ns_weighted_pod_affinity_term *nv = realloc(*v, (*n + 1) * sizeof(*nv));
        if (!nv)
            die("out of memory");
        nv[*n] = (ns_weighted_pod_affinity_term){preferred_weight, term};
        *v = nv;
        (*n)++;
        return;
    }
    ns_pod_affinity_term **v = anti ? &a->anti_required : &a->pod_required;
    size_t *n = anti ? &a->n_anti_required : &a->n_pod_required;
    ns_pod_affinity_term *nv = realloc(*v, (*n + 1) * sizeof(*nv));
    if (!nv)
        die("out of memory");
    nv[*n] = term;
    *v = nv;
    (*n)++;
}

void fx_pod_host_port(ns_pod *p, int32_t port)
{
    ns_host_port *hp = realloc(p->host_ports, (p->n_host_ports + 1) * sizeof(*hp));
    if (!hp)
        die("out of memory");
    p->host_ports = hp;
    memset(&hp[p->n_host_ports], 0, sizeof(*hp));
    snprintf(hp[p->n_host_ports].ip, sizeof(hp->ip), "0.0.0.0");
    snprintf(hp[p->n_host_ports].protocol, sizeof(hp->protocol), "TCP");
    hp[p->n_host_ports++].port = port;
}

ns_nodepool *fx_pool(ns_cluster *c, const char *name, int32_t weight, const char *reqs)
{
    ns_nodepool *np = ns_nodepool_new();
    if (!np)
        die("out of memory");
    np->meta.name = xstrdup(name);
    np->weight = weight;
    np->requirements = parse_reqs(reqs, &np->n_requirements);
    if (ns_cluster_add_nodepool(c, np) != 0)
        die("adding a NodePool");
    return np;
}

void fx_pool_taint(ns_nodepool *np, const char *key, const char *value, const char *effect)
{
    ns_taint *t = realloc(np->taints, (np->n_taints + 1) * sizeof(*t));
    if (!t)
        die("out of memory");
    np->taints = t;
    t[np->n_taints++] = (ns_taint){xstrdup(key), value ? xstrdup(value) : NULL, xstrdup(effect)};
}

ns_node *fx_node(ns_cluster *c, const char *name, int64_t cpu_milli, int64_t mem_bytes, int64_t pods,
                 const char *labels)
{
    ns_node *n = ns_node_new();
    if (!n)
        die("out of memory");
    n->meta.name = xstrdup(name);
    parse_labels(&n->meta.labels, labels);
    n->capacity.cpu_milli = n->allocatable.cpu_milli = cpu_milli;
    n->capacity.memory_bytes = n->allocatable.memory_bytes = mem_bytes;
    n->capacity.pods = n->allocatable.pods = pods;
    n->ready = true;
    if (ns_cluster_add_node(c, n) != 0)
        die("adding a node");
    return n;
}

ns_nodeclaim *fx_nodeclaim(ns_cluster *c, const char *name, const char *pool, int64_t cpu_milli,
                           const char *provider_id, const char *node_name)
{
    ns_nodeclaim *nc = ns_nodeclaim_new();
    if (!nc)
        die("out of memory");
    nc->meta.name = xstrdup(name);
    if (ns_labels_set(&nc->meta.labels, NS_LABEL_NODEPOOL, pool) != 0)
        die("out of memory");
    nc->capacity.cpu_milli = nc->allocatable.cpu_milli = cpu_milli;
    nc->capacity.memory_bytes = nc->allocatable.memory_bytes = 16 * FX_GI;
    nc->capacity.pods = nc->allocatable.pods = 110;
    nc->provider_id = xstrdup(provider_id);
    nc->node_name = node_name ? xstrdup(node_name) : NULL;
    if (ns_cluster_add_nodeclaim(c, nc) != 0)
        die("adding a nodeclaim");
    return nc;
}

ns_pod *fx_daemonset(ns_cluster *c, const char *name, int64_t cpu_milli, int64_t mem_bytes)
{
    ns_daemonset *ds = ns_daemonset_new();
    if (!ds)
        die("out of memory");
    ds->meta.name = xstrdup(name);
    ds->meta.namespace_ = xstrdup("kube-system");
    ns_pod *tp = new_pod(name, cpu_milli, mem_bytes, "");
    ds->template_pod = tp;
    free(tp->meta.namespace_);
    tp->meta.namespace_ = xstrdup("kube-system"); /* a DaemonSet's pods live in its namespace */
    tp->meta.owner_kind = xstrdup("DaemonSet");
    tp->meta.owner_name = xstrdup(name);
    if (ns_cluster_add_daemonset(c, ds) != 0)
        die("adding a DaemonSet");
    return tp;
}

void fx_run(const ns_cluster *c, const ns_itype_set *set, const ns_itype_set *const *sets, ns_sched_result *r)
{
    fx_run_packing(c, set, sets, NS_SCHED_PACKING_KARPENTER, r);
}

void fx_run_packing(const ns_cluster *c, const ns_itype_set *set, const ns_itype_set *const *sets,
                    ns_sched_packing packing, ns_sched_result *r)
{
    const ns_itype_set *all[64];
    for (size_t i = 0; i < c->n_nodepools && i < 64; i++)
        all[i] = sets ? sets[i] : set;
    ns_sched_input in = {.cluster = c, .pool_types = all, .packing = packing};
    if (ns_sched_run(&in, r) != NS_OK)
        die("scheduling");
}

long fx_pod_index(const ns_cluster *c, const char *name)
{
    for (size_t i = 0; i < c->n_pods; i++)
        if (strcmp(c->pods[i]->meta.name, name) == 0)
            return (long)i;
    return -1;
}

const ns_sched_claim *fx_claim_of(const ns_cluster *c, const ns_sched_result *r, const char *pod)
{
    long i = fx_pod_index(c, pod);
    if (i < 0 || r->placement[i] == NS_SCHED_UNPLACED || r->placement[i] == NS_SCHED_NOT_PENDING ||
        r->placement[i] < c->n_nodes)
        return NULL;
    return &r->claims[r->placement[i] - c->n_nodes];
}

const char *fx_reason(const ns_cluster *c, const ns_sched_result *r, const char *pod)
{
    long i = fx_pod_index(c, pod);
    for (size_t u = 0; u < r->n_unschedulable; u++)
        if ((long)r->unschedulable[u].pod == i)
            return r->unschedulable[u].reason;
    return NULL;
}

const char *fx_claim_zone(const ns_sched_claim *claim)
{
    const ns_requirement *z = ns_requirements_get(&claim->requirements, NS_LABEL_ZONE);
    return z && !z->complement && z->n_values == 1 ? z->values[0] : NULL;
}
