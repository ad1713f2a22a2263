/*
 * The provisioning round: build the tables, then Karpenter's queue. Each group is tried on existing nodes, then on
 * planned claims (fewest pods first, sched_place_planned), then on a new claim; a group that fails is relaxed one step
 * and queued again; the round ends when the queue has cycled without progress.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "log/ns_log.h"
#include "model/labels.h"
#include "model/resources.h"
#include "sched/sched_internal.h"

static int collect_zone(sched *s, const char *zone)
{
    if (!zone || sched_zone_index(s, zone) >= 0)
        return NS_OK;
    if (s->n_zones >= SCHED_MAX_ZONES)
        return NS_FAIL(NS_ERR_INVALID_CONFIG, "scheduling: more than %d zones (adding %s)", SCHED_MAX_ZONES, zone);
    s->zones[s->n_zones++] = zone;
    return NS_OK;
}

/* Extended resource names and zones, before any vector or mask is built. */
static int collect_dims(sched *s)
{
    const ns_cluster *cl = s->cl;
    int rc = NS_OK;
    for (size_t i = 0; rc == NS_OK && i < cl->n_pods; i++)
        rc = sched_dims_add(s, &cl->pods[i]->requests);
    for (size_t i = 0; rc == NS_OK && i < cl->n_daemonsets; i++)
        if (cl->daemonsets[i]->template_pod)
            rc = sched_dims_add(s, &cl->daemonsets[i]->template_pod->requests);
    for (size_t i = 0; rc == NS_OK && i < cl->n_nodes; i++) {
        rc = sched_dims_add(s, &cl->nodes[i]->allocatable);
        if (rc == NS_OK)
            rc = collect_zone(s, ns_labels_get(&cl->nodes[i]->meta.labels, NS_LABEL_ZONE));
    }
    for (size_t p = 0; rc == NS_OK && p < cl->n_nodepools; p++) {
        const ns_itype_set *set = s->in->pool_types ? s->in->pool_types[p] : NULL;
        rc = sched_dims_add(s, &cl->nodepools[p]->limits.max);
        for (size_t i = 0; rc == NS_OK && set && i < set->n; i++) {
            rc = sched_dims_add(s, &set->items[i].capacity);
            for (size_t o = 0; rc == NS_OK && o < set->items[i].n_offerings; o++)
                rc = collect_zone(s, set->items[i].offerings[o].zone);
        }
    }
    return rc;
}

typedef struct name_index {
    const char *name;
    size_t index;
} name_index;

static int name_cmp(const void *a, const void *b)
{
    return strcmp(((const name_index *)a)->name, ((const name_index *)b)->name);
}

static int nodes_build(sched *s, name_index **by_name)
{
    const ns_cluster *cl = s->cl;
    s->n_nodes = cl->n_nodes;
    s->nodes = calloc(s->n_nodes ? s->n_nodes : 1, sizeof(*s->nodes));
    *by_name = calloc(s->n_nodes ? s->n_nodes : 1, sizeof(**by_name));
    if (!s->nodes || !*by_name)
        return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory for %zu nodes", s->n_nodes);
    for (size_t i = 0; i < s->n_nodes; i++) {
        const ns_node *n = cl->nodes[i];
        sched_node *sn = &s->nodes[i];
        sn->node = n;
        sn->zone = sched_zone_index(s, ns_labels_get(&n->meta.labels, NS_LABEL_ZONE));
        sn->usable = n->ready && !n->unschedulable;
        sn->pool = -1;
        const char *pool = ns_labels_get(&n->meta.labels, NS_LABEL_NODEPOOL);
        for (size_t p = 0; pool && p < cl->n_nodepools; p++)
            if (strcmp(cl->nodepools[p]->meta.name, pool) == 0)
                sn->pool = (long)p;
        if (sched_vec_init(s, &sn->free) != NS_OK)
            return NS_ERR_INTERNAL;
        sched_vec_from(s, &n->allocatable, &sn->free);
        (*by_name)[i] = (name_index){n->meta.name ? n->meta.name : "", i};
    }
    qsort(*by_name, s->n_nodes, sizeof(**by_name), name_cmp);
    return NS_OK;
}

static long bound_node(const sched *s, const name_index *by_name, const ns_pod *pod)
{
    if (!pod->node_name || !pod->node_name[0])
        return -1;
    if (pod->phase && (strcmp(pod->phase, "Succeeded") == 0 || strcmp(pod->phase, "Failed") == 0))
        return -1;
    name_index key = {pod->node_name, 0};
    const name_index *hit = bsearch(&key, by_name, s->n_nodes, sizeof(*by_name), name_cmp);
    return hit ? (long)hit->index : -1;
}

/* Pods already on nodes use their resources and count in every topology. */
static int account_bound(sched *s, const name_index *by_name)
{
    const ns_cluster *cl = s->cl;
    sched_vec req;
    int rc = sched_vec_init(s, &req);
    for (size_t i = 0; rc == NS_OK && i < cl->n_pods; i++) {
        long n = bound_node(s, by_name, cl->pods[i]);
        if (n >= 0)
            rc = sched_topo_register_bound(s, cl->pods[i]);
    }
    for (size_t i = 0; rc == NS_OK && i < s->n_groups; i++)
        rc = sched_topo_link(s, &s->groups[i]);
    if (rc == NS_OK)
        rc = sched_topo_hosts(s, s->n_nodes + 1);
    for (size_t i = 0; rc == NS_OK && i < cl->n_pods; i++) {
        const ns_pod *pod = cl->pods[i];
        long n = bound_node(s, by_name, pod);
        if (n < 0)
            continue;
        sched_node *sn = &s->nodes[n];
        sched_vec_from(s, &pod->requests, &req);
        for (size_t d = 0; d < s->n_dims; d++)
            sn->free.v[d] -= req.v[d];
        sched_topo_record_pod(s, pod, (uint32_t)n, sn->zone);
        if (pod->n_host_ports) {
            const ns_pod **np = realloc(sn->port_pods, (sn->n_port_pods + 1) * sizeof(*np));
            if (!np)
                rc = NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory recording host ports");
            else
                (sn->port_pods = np)[sn->n_port_pods++] = pod;
        }
    }
    for (size_t i = 0; rc == NS_OK && i < s->n_groups; i++)
        rc = sched_group_prepare(s, &s->groups[i]);
    return rc;
}

/* True when placing a pod of g can open other claims to the next one: a zonal spread or affinity that counts the
 * group's own pods (a zone's count rises, so another zone's claims may meet the skew or the affinity). Such pods go
 * one at a time, as Karpenter offers each pod on its own; otherwise a batch goes where the first pod would. */
static bool placement_opens_claims(const sched *s, const sched_group *g)
{
    for (size_t i = 0; i < g->n_cons; i++) {
        const sched_constraint *c = &g->cons[i];
        const sched_topo *t = &s->topos[c->topo];
        if (c->active && c->self && !t->hostname && !t->keyed && t->kind != SCHED_TOPO_ANTI)
            return true;
    }
    return false;
}

/* 1 when every pod of the group is placed, 0 when some are left, negative on error. */
static int place_group(sched *s, sched_group *g)
{
    if (g->vol_why)
        return 0;
    /* Each pod of a group with a constraint on another key sees the counts the previous one left. */
    /* With reservations counted, pods go one at a time too: each pod may change what its claim holds (Karpenter adds
     * pods one by one, and a pod that would take away a claim's last reservation goes elsewhere). */
    bool keyed = sched_keyed_group(s, g), one = keyed || placement_opens_claims(s, g) || s->n_resv;
    while (g->done < g->n_pods) {
        int rc = keyed ? sched_group_prepare(s, g) : NS_OK;
        if (rc != NS_OK)
            return rc;
        if (g->keyed_why[0])
            return 0;
        int64_t want = keyed ? 1 : (int64_t)(g->n_pods - g->done), k = 0;
        for (size_t n = 0; n < s->n_nodes && k == 0; n++)
            k = sched_try_node(s, g, n, want);
        if (k == 0)
            k = sched_place_planned(s, g, want, one);
        if (k == 0)
            k = sched_new_claim(s, g, one ? 1 : want);
        if (k < 0)
            return (int)k;
        if (k == 0)
            return 0;
    }
    return 1;
}

static int solve(sched *s)
{
    size_t n = s->n_groups, head = 0, len = n;
    size_t *queue = malloc((n ? n : 1) * sizeof(size_t));
    size_t *last_len = malloc((n ? n : 1) * sizeof(size_t));
    if (!queue || !last_len) {
        free(queue);
        free(last_len);
        return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory for a queue of %zu groups", n);
    }
    for (size_t i = 0; i < n; i++) {
        queue[i] = i;
        last_len[i] = SIZE_MAX;
    }
    int rc = NS_OK;
    while (len > 0 && rc == NS_OK) {
        size_t gi = queue[head];
        if (last_len[gi] == len)
            break;
        head = (head + 1) % n;
        len--;
        sched_group *g = &s->groups[gi];
        int placed = place_group(s, g);
        if (placed < 0) {
            rc = placed;
            break;
        }
        if (placed)
            continue;
        char what[256] = "";
        /* A pod deferred for reserved capacity keeps its preferences (Karpenter's trySchedule). */
        bool relaxed = !g->vol_why && !g->resv_deferred && sched_group_relax(s, g, what, sizeof(what));
        if (relaxed) {
            ns_log(NS_LOG_DEBUG, "provisioner", "relaxing soft constraints for pod since it previously failed to "
                   "schedule", "pod", g->pod->meta.name ? g->pod->meta.name : "",
                   "namespace", g->pod->meta.namespace_ ? g->pod->meta.namespace_ : "default", "relaxation", what,
                   NULL);
            rc = sched_group_prepare(s, g);
            for (size_t i = 0; i < n; i++)
                last_len[i] = SIZE_MAX;
        }
        queue[(head + len) % n] = gi;
        len++;
        if (!relaxed)
            last_len[gi] = len;
    }
    free(queue);
    free(last_len);
    return rc;
}

static int explain(sched *s, sched_group *g)
{
    if (g->vol_why) {
        snprintf(g->reason, sizeof(g->reason), "%s", g->vol_why);
        return NS_OK;
    }
    if (g->keyed_why[0]) {
        snprintf(g->reason, sizeof(g->reason), "%s", g->keyed_why);
        return NS_OK;
    }
    char **why = calloc(s->n_pools ? s->n_pools : 1, sizeof(char *));
    if (!why)
        return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory explaining a failure");
    int64_t k = 1;
    while (g->done < g->n_pods && k > 0) {
        for (size_t p = 0; p < s->n_pools; p++) {
            free(why[p]);
            why[p] = NULL;
        }
        /* With reservations counted pods go one at a time here too (place_group): a batch could need a type no
         * reservation offers, and so pass where each of its pods is refused. */
        k = sched_new_claim_explain(s, g, s->n_resv ? 1 : (int64_t)(g->n_pods - g->done), why);
    }
    size_t off = 0;
    int w = snprintf(g->reason, sizeof(g->reason), "%s", s->n_pools ? "" : "no NodePool exists");
    g->by_limits = false;
    off = w > 0 ? (size_t)w : 0;
    for (size_t o = 0; o < s->n_pools && off < sizeof(g->reason); o++) {
        size_t p = s->pool_order[o];
        const char *text = g->pool_why[p];
        char buf[700];
        if (!text && why[p]) {
            snprintf(buf, sizeof(buf), "nodepool %s: %s", s->pools[p].np->meta.name, why[p]);
            text = buf;
        }
        if (!text)
            continue;
        /* Limits alone hold the pod back when the first pool that says something says limits and no pool says
         * anything else. */
        bool limits = text == buf && strncmp(why[p], SCHED_LIMITS_REASON, strlen(SCHED_LIMITS_REASON)) == 0;
        g->by_limits = limits && (off == 0 || g->by_limits);
        w = snprintf(g->reason + off, sizeof(g->reason) - off, "%s%s", off ? "; " : "", text);
        off += w > 0 ? (size_t)w : 0;
    }
    if (!g->reason[0])
        snprintf(g->reason, sizeof(g->reason), "the pod's constraints cannot be met by any existing node or NodePool");
    for (size_t p = 0; p < s->n_pools; p++)
        free(why[p]);
    free(why);
    return k < 0 ? (int)k : NS_OK;
}

static void sched_free(sched *s)
{
    sched_groups_free(s);
    sched_claims_free(s);
    sched_topos_free(s);
    sched_resv_free(s);
    sched_pools_free(s);
    free(s->placement);
    free(s->ext_names);
    sched_arena_free(s);
}

/* The vectors every part of the round shares, once collect_dims has fixed the dimensions. */
static int shared_vectors(sched *s)
{
    int rc = sched_vec_init(s, &s->zero);
    for (size_t i = 0; rc == NS_OK && i < sizeof(s->kubelet_tmp) / sizeof(s->kubelet_tmp[0]); i++)
        rc = sched_vec_init(s, &s->kubelet_tmp[i]);
    return rc;
}

/* The set-up both entry points share: no pod placed yet, the resource dimensions, the shared vectors and the pools.
 * The caller frees *s with sched_free whatever this returns. */
static int sched_begin(sched *s, const ns_sched_input *in, bool static_claims)
{
    memset(s, 0, sizeof(*s));
    s->in = in;
    s->cl = in->cluster;
    s->n_dims = SCHED_EXT0;
    s->static_claims = static_claims;
    s->placement = malloc((s->cl->n_pods ? s->cl->n_pods : 1) * sizeof(size_t));
    if (!s->placement)
        return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory for %zu pods", s->cl->n_pods);
    for (size_t i = 0; i < s->cl->n_pods; i++)
        s->placement[i] = NS_SCHED_NOT_PENDING;
    int rc = collect_dims(s);
    if (rc == NS_OK)
        rc = shared_vectors(s);
    if (rc == NS_OK)
        rc = sched_pools_build(s);
    if (rc == NS_OK && !static_claims)
        rc = sched_resv_build(s);
    return rc;
}

int ns_sched_run(const ns_sched_input *in, ns_sched_result *out)
{
    if (!in || !in->cluster || !out)
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "scheduling: input, cluster or result is NULL");
    memset(out, 0, sizeof(*out));
    sched s;
    name_index *by_name = NULL;
    int rc = sched_begin(&s, in, false);
    if (rc == NS_OK)
        rc = nodes_build(&s, &by_name);
    if (rc == NS_OK)
        rc = sched_groups_build(&s);
    for (size_t g = 0; rc == NS_OK && g < s.n_groups; g++)
        for (size_t i = 0; i < s.groups[g].n_pods; i++)
            s.placement[s.groups[g].pods[i]] = NS_SCHED_UNPLACED;
    if (rc == NS_OK)
        rc = account_bound(&s, by_name);
    if (rc == NS_OK)
        rc = solve(&s);
    for (size_t g = 0; rc == NS_OK && g < s.n_groups; g++)
        if (s.groups[g].done < s.groups[g].n_pods)
            rc = explain(&s, &s.groups[g]);
    if (rc == NS_OK && in->packing == NS_SCHED_PACKING_COST)
        rc = sched_cost_pack(&s);
    if (rc == NS_OK) {
        sched_resv_finish(&s);
        rc = sched_result_fill(&s, out);
    }
    free(by_name);
    sched_free(&s);
    return rc;
}

int ns_sched_static_claims(const ns_sched_input *in, size_t pool, size_t count, ns_sched_result *out)
{
    if (!in || !in->cluster || !out || pool >= in->cluster->n_nodepools)
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "static claims: input, cluster, result or NodePool index is invalid");
    memset(out, 0, sizeof(*out));
    sched s;
    int rc = sched_begin(&s, in, true);
    const sched_pool *p = rc == NS_OK ? &s.pools[pool] : NULL;
    if (p && (p->unusable || p->n_types == 0))
        rc = NS_FAIL(NS_ERR_INSUFFICIENT_CAPACITY, "NodePool %s: %s", p->np->meta.name,
                     p->unusable ? p->unusable : "no instance type satisfies its requirements");
    for (size_t i = 0; rc == NS_OK && i < count; i++)
        rc = sched_static_claim_add(&s, pool);
    if (rc == NS_OK)
        rc = sched_result_fill(&s, out);
    sched_free(&s);
    return rc;
}
