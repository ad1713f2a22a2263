/*
 * Pending pods grouped by signature, ordered as Karpenter orders pods (cpu, then memory, descending), and each
 * group's view of the NodePools at its current relaxation level.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "model/labels.h"
#include "model/resources.h"
#include "sched/sched_internal.h"
#include "sched/sched_pool_index.h"
#include "sched/sched_pool_util.h"
#include "sched/sched_signature.h"
#include "sched/sched_volumes.h"

bool ns_sched_pod_is_pending(const ns_pod *pod)
{
    if (!pod || (pod->node_name && pod->node_name[0]) || pod->scheduling_gated)
        return false;
    if (pod->scheduler_name && strcmp(pod->scheduler_name, "default-scheduler") != 0)
        return false;
    if (pod->phase && (strcmp(pod->phase, "Succeeded") == 0 || strcmp(pod->phase, "Failed") == 0))
        return false;
    if (pod->sched_status == NS_POD_STATUS_OTHER)
        return false;
    return !ns_pod_owned_by(pod, "DaemonSet") && !ns_pod_owned_by(pod, "Node");
}

typedef struct sig_slot {
    uint64_t hash;
    size_t group; /* + 1; 0 = empty */
} sig_slot;

static int group_cmp(const void *a, const void *b)
{
    const sched_group *x = a, *y = b;
    if (x->req.v[SCHED_CPU] != y->req.v[SCHED_CPU])
        return x->req.v[SCHED_CPU] > y->req.v[SCHED_CPU] ? -1 : 1;
    if (x->req.v[SCHED_MEM] != y->req.v[SCHED_MEM])
        return x->req.v[SCHED_MEM] > y->req.v[SCHED_MEM] ? -1 : 1;
    return x->pods[0] < y->pods[0] ? -1 : x->pods[0] > y->pods[0];
}

/* Assigns each pending pod a group id (gid[i], SIZE_MAX for others) and fills s->groups' pod lists. */
static int assign_groups(sched *s, size_t *gid, char ***sigs_out)
{
    const ns_cluster *cl = s->cl;
    size_t n_slots = 64;
    while (n_slots < cl->n_pods * 2)
        n_slots *= 2;
    sig_slot *slots = calloc(n_slots, sizeof(*slots));
    size_t *counts = NULL, cap = 0;
    char **sigs = NULL;
    ns_key sb = {0};
    int rc = slots ? NS_OK : NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory grouping %zu pods", cl->n_pods);
    for (size_t i = 0; rc == NS_OK && i < cl->n_pods; i++) {
        gid[i] = SIZE_MAX;
        if (!ns_sched_pod_is_pending(cl->pods[i]))
            continue;
        if ((rc = sched_signature(cl->pods[i], s->in->n_default_spread > 0, &sb)) != NS_OK)
            break;
        uint64_t h = ns_key_hash(&sb);
        size_t at = (size_t)h & (n_slots - 1);
        while (slots[at].group && (slots[at].hash != h || strcmp(sigs[slots[at].group - 1], sb.buf) != 0))
            at = (at + 1) & (n_slots - 1);
        if (!slots[at].group) {
            if (s->n_groups == cap) {
                cap = cap ? cap * 2 : 64;
                size_t *nc = realloc(counts, cap * sizeof(*nc));
                char **ns = nc ? realloc(sigs, cap * sizeof(*ns)) : NULL;
                if (nc)
                    counts = nc;
                if (ns)
                    sigs = ns;
                if (!nc || !ns) {
                    rc = NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory grouping pods");
                    break;
                }
            }
            sigs[s->n_groups] = strdup(sb.buf);
            if (!sigs[s->n_groups]) {
                rc = NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory grouping pods");
                break;
            }
            counts[s->n_groups] = 0;
            slots[at].hash = h;
            slots[at].group = ++s->n_groups;
        }
        gid[i] = slots[at].group - 1;
        counts[gid[i]]++;
    }
    if (rc == NS_OK) {
        s->groups = calloc(s->n_groups ? s->n_groups : 1, sizeof(*s->groups));
        if (!s->groups)
            rc = NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory for %zu pod groups", s->n_groups);
    }
    for (size_t g = 0; rc == NS_OK && g < s->n_groups; g++)
        if (!(s->groups[g].pods = malloc(counts[g] * sizeof(size_t))))
            rc = NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory for a group of %zu pods", counts[g]);
    for (size_t i = 0; rc == NS_OK && i < cl->n_pods; i++)
        if (gid[i] != SIZE_MAX) {
            sched_group *g = &s->groups[gid[i]];
            g->pods[g->n_pods++] = i;
        }
    free(slots);
    free(counts);
    free(sb.buf);
    *sigs_out = sigs;
    return rc;
}

static int group_volumes(sched *s, sched_group *g)
{
    char why[640];
    int rc = sched_volume_requirements(s->cl, g->pod, &g->vol_reqs, why, sizeof(why));
    if (rc == NS_OK && why[0] && !(g->vol_why = strdup(why)))
        rc = NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory");
    if (rc == NS_OK && (rc = ns_zone_labels_rewrite(s->zone_labels, &g->vol_reqs)) != NS_OK)
        rc = ns_error_prefix("pod %s/%s: volume topology: ", g->pod->meta.namespace_, g->pod->meta.name);
    return rc;
}

int sched_groups_build(sched *s)
{
    size_t *gid = malloc((s->cl->n_pods ? s->cl->n_pods : 1) * sizeof(size_t));
    char **sigs = NULL;
    if (!gid)
        return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory for %zu pods", s->cl->n_pods);
    int rc = assign_groups(s, gid, &sigs);
    for (size_t g = 0; sigs && g < s->n_groups; g++)
        free(sigs[g]);
    free(sigs);
    free(gid);
    for (size_t i = 0; rc == NS_OK && i < s->n_groups; i++) {
        sched_group *g = &s->groups[i];
        g->pod = s->cl->pods[g->pods[0]];
        if ((rc = sched_vec_init(s, &g->req)) != NS_OK)
            break;
        sched_vec_from(s, &g->pod->requests, &g->req);
        if (g->req.v[SCHED_PODS] < 1)
            g->req.v[SCHED_PODS] = 1;
        if ((rc = group_volumes(s, g)) != NS_OK)
            break;
        g->req_term = g->pod->affinity.n_node_required ? 0 : -1;
        g->pref_node = g->pod->affinity.n_node_preferred ? 0 : -1;
    }
    if (rc != NS_OK)
        return rc;
    qsort(s->groups, s->n_groups, sizeof(*s->groups), group_cmp);
    for (size_t i = 0; rc == NS_OK && i < s->n_groups; i++) {
        rc = sched_topo_register(s, &s->groups[i]);
        sched_ignore_preferences(s, &s->groups[i]);
    }
    return rc;
}

/* The first single requirement of the pod that no type of the pool satisfies, for a reason people can act on. */
static const ns_requirement *blocking_requirement(const sched *s, const sched_pool *p, const sched_group *g)
{
    for (size_t r = 0; r < g->reqs.n; r++) {
        const ns_requirement *req = &g->reqs.items[r];
        ns_requirements one = {.items = (ns_requirement *)req, .n = 1, .cap = 1};
        bool any = false;
        if (strcmp(req->key, NS_LABEL_ZONE) == 0 || strcmp(req->key, NS_LABEL_CAPACITY_TYPE) == 0) {
            uint64_t pairs = sched_pairs_for(s, &one) & p->pairs;
            for (size_t i = 0; i < p->n_types && !any; i++)
                any = (p->offers[i] & pairs) != 0;
        }
        for (size_t i = 0; i < p->n_types && !any && strcmp(req->key, NS_LABEL_ZONE) != 0 &&
                           strcmp(req->key, NS_LABEL_CAPACITY_TYPE) != 0;
             i++)
            any = sched_type_satisfies(p, p->types[i], &one);
        if (!any)
            return req;
    }
    return NULL;
}

static void resource_name(const sched *s, size_t d, char *buf, size_t len)
{
    static const char *const base[] = {"cpu", "memory", "ephemeral-storage", "pods"};
    snprintf(buf, len, "%s", d < SCHED_EXT0 ? base[d] : s->ext_names[d - SCHED_EXT0]);
}

/* Why no type that passed the requirements can hold one pod: the resource missing on the roomiest types. */
static void resource_reason(const sched *s, const sched_pool *p, const sched_group *g, const uint64_t *reqbits,
                            char *why, size_t len)
{
    for (size_t d = 0; d < s->n_dims; d++) {
        if (g->req.v[d] <= 0)
            continue;
        int64_t best = -1;
        for (size_t i = sched_bits_first(reqbits, p->words); i != SIZE_MAX; i = sched_bits_next(reqbits, p->words, i))
            best = p->alloc[i].v[d] > best ? p->alloc[i].v[d] : best;
        if (best >= g->req.v[d])
            continue;
        char name[NS_NAME_MAX];
        resource_name(s, d, name, sizeof(name));
        snprintf(why, len, "no instance type has enough %s: the pod requests %lld, the most any type offers after "
                 "kubelet reservations and DaemonSet overhead is %lld", name, (long long)g->req.v[d],
                 (long long)(best < 0 ? 0 : best));
        return;
    }
    snprintf(why, len, "no single instance type has room for all of the pod's requests at once");
}

static int pool_view(sched *s, sched_group *g, size_t pi)
{
    sched_pool *p = &s->pools[pi];
    uint64_t *bits = g->pool_bits + pi * s->max_words;
    char why[640] = "";
    ns_compat_opts opts = {.allow_undefined_well_known = true, .extra_well_known = p->keys,
                           .n_extra_well_known = p->n_keys};
    char r[480];
    g->pool_ok[pi] = false;
    memset(bits, 0, s->max_words * sizeof(uint64_t));
    /* Karpenter's scheduler leaves static pools out (NewScheduler filters IsStatic), so they neither take a pod nor
     * appear in its reasons, whatever the StaticCapacity gate says. */
    if (ns_nodepool_is_static(p->np)) {
        free(g->pool_why[pi]);
        g->pool_why[pi] = NULL;
        return NS_OK;
    }
    if (p->unusable)
        snprintf(why, sizeof(why), "%s", p->unusable);
    else if (!ns_nodepool_tolerates(p->np, g->pod, g->tolerate_pns ? NS_TAINTS_IGNORE_PREFER_NO_SCHEDULE : 0, r,
                                    sizeof(r)))
        snprintf(why, sizeof(why), "%s", r);
    else if (!ns_requirements_compatible(&p->reqs, &g->reqs, &opts, r, sizeof(r)))
        snprintf(why, sizeof(why), "incompatible requirements, %s", r);
    if (!why[0]) {
        uint64_t pairs = p->pairs & sched_pairs_for(s, &g->reqs);
        g->pool_pairs[pi] = pairs;
        /* scratch: the types the requirements allow with an offering in pairs; bits: those that hold one pod. */
        sched_pool_index_all(p, s->scratch);
        sched_pool_index_offered(p, pairs, s->pairs_scratch, s->scratch);
        for (size_t i = sched_bits_first(s->scratch, p->words); g->reqs.n && i != SIZE_MAX;
             i = sched_bits_next(s->scratch, p->words, i))
            if (!sched_type_satisfies(p, p->types[i], &g->reqs))
                sched_bits_clear(s->scratch, i);
        bool any_req = sched_bits_any(s->scratch, p->words);
        const ns_pod *ds = any_req && g->pod->n_host_ports ? sched_daemons_port_block(p, g->pod, s->scratch) : NULL;
        memcpy(bits, s->scratch, p->words * sizeof(uint64_t));
        for (size_t d = 0; d < s->n_dims; d++)
            sched_pool_index_at_least(p, d, g->req.v[d], bits);
        bool any_open = sched_bits_any(s->scratch, p->words), any_fit = sched_bits_any(bits, p->words);
        if (!any_req) {
            const ns_requirement *req = blocking_requirement(s, p, g);
            snprintf(why, sizeof(why), "no instance type satisfies %s",
                     req ? ns_requirement_format(req, r, sizeof(r)) : ns_requirements_format(&g->reqs, r, sizeof(r)));
        } else if (!any_open) {
            const ns_host_port *hp = sched_ports_conflict_at(g->pod, ds);
            snprintf(why, sizeof(why), "every instance type that satisfies the pod's requirements runs a DaemonSet "
                     "taking a host port the pod asks for (DaemonSet %s/%s takes %s port %d)", ds->meta.namespace_,
                     ds->meta.name, hp->protocol, (int)hp->port);
        } else if (!any_fit) {
            resource_reason(s, p, g, s->scratch, why, sizeof(why));
        }
        memset(s->scratch, 0, s->max_words * sizeof(uint64_t));
    }
    free(g->pool_why[pi]);
    g->pool_why[pi] = NULL;
    if (why[0]) {
        char full[720];
        snprintf(full, sizeof(full), "nodepool %s: %s", p->np->meta.name, why);
        if (!(g->pool_why[pi] = strdup(full)))
            return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory");
        return NS_OK;
    }
    g->pool_ok[pi] = true;
    return NS_OK;
}

int sched_group_prepare(sched *s, sched_group *g)
{
    ns_requirements_free(&g->reqs);
    int rc = ns_pod_node_requirements(g->pod, g->req_term, g->pref_node, &g->reqs);
    if (rc == NS_OK)
        rc = ns_zone_labels_rewrite(s->zone_labels, &g->reqs);
    if (rc != NS_OK)
        return ns_error_prefix("pod %s/%s: ", g->pod->meta.namespace_, g->pod->meta.name);
    g->req_id = ++s->next_req_id;
    const ns_requirement *zr = ns_requirements_get(&g->reqs, NS_LABEL_ZONE);
    g->pod_zones = 0;
    for (size_t z = 0; z < s->n_zones; z++)
        g->pod_zones |= !zr || ns_requirement_has(zr, s->zones[z]) ? 1u << z : 0;
    /* Before the volumes: they constrain the node, not the domains the pod's own requirements allow. */
    if ((rc = sched_keyed_requirements(s, g)) != NS_OK)
        return rc;
    /* After pod_zones: the volumes constrain the node, not the domains the pod's own affinity counts in. */
    if ((rc = ns_requirements_add_all(&g->reqs, &g->vol_reqs)) != NS_OK)
        return rc;
    if (!g->pool_bits) {
        g->pool_bits = calloc((s->n_pools ? s->n_pools : 1) * s->max_words, sizeof(uint64_t));
        g->pool_pairs = calloc(s->n_pools ? s->n_pools : 1, sizeof(uint64_t));
        g->pool_ok = calloc(s->n_pools ? s->n_pools : 1, sizeof(bool));
        g->pool_why = calloc(s->n_pools ? s->n_pools : 1, sizeof(char *));
        g->node_ok = calloc(s->n_nodes ? s->n_nodes : 1, 1);
        if (!g->pool_bits || !g->pool_pairs || !g->pool_ok || !g->pool_why || !g->node_ok)
            return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory for a pod group");
    }
    memset(g->node_ok, 0, s->n_nodes ? s->n_nodes : 1);
    for (size_t p = 0; p < s->n_pools; p++)
        if ((rc = pool_view(s, g, p)) != NS_OK)
            return rc;
    return sched_topo_group_skips(s, g);
}

/* Deactivates the active preferred term of `src` that comes first in removal order. */
static bool remove_preferred(sched_group *g, uint8_t src, char *what, size_t len)
{
    sched_constraint *first = NULL;
    for (size_t i = 0; i < g->n_cons; i++) {
        sched_constraint *c = &g->cons[i];
        if (c->src == src && c->active && (!first || c->order < first->order))
            first = c;
    }
    if (!first)
        return false;
    first->active = false;
    snprintf(what, len, "removing: spec.affinity.%s.preferredDuringSchedulingIgnoredDuringExecution term of weight "
             "%d on %s", src == SCHED_SRC_AFF_PREF ? "podAffinity" : "podAntiAffinity", first->weight, first->key);
    return true;
}

bool sched_group_relax(sched *s, sched_group *g, char *what, size_t len)
{
    const ns_affinity *a = &g->pod->affinity;
    if (g->req_term >= 0 && (size_t)g->req_term + 1 < a->n_node_required) {
        snprintf(what, len, "removing: spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution "
                 "term %d", g->req_term);
        g->req_term++;
        return true;
    }
    if (remove_preferred(g, SCHED_SRC_AFF_PREF, what, len) || remove_preferred(g, SCHED_SRC_ANTI_PREF, what, len))
        return true;
    if (g->pref_node >= 0) {
        snprintf(what, len, "removing: spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution "
                 "term %d by weight", g->pref_node);
        g->pref_node = (size_t)g->pref_node + 1 < a->n_node_preferred ? g->pref_node + 1 : -1;
        return true;
    }
    for (size_t i = 0; i < g->n_cons; i++) {
        sched_constraint *c = &g->cons[i];
        if (c->src == SCHED_SRC_SPREAD && c->active && c->schedule_anyway) {
            c->active = false;
            snprintf(what, len, "removing: spec.topologySpreadConstraints on %s (ScheduleAnyway)", c->key);
            return true;
        }
    }
    if (s->any_prefer_no_schedule && !g->tolerate_pns) {
        g->tolerate_pns = true;
        snprintf(what, len, "adding: toleration for PreferNoSchedule taints");
        return true;
    }
    return false;
}

void sched_groups_free(sched *s)
{
    for (size_t i = 0; s->groups && i < s->n_groups; i++) {
        sched_group *g = &s->groups[i];
        free(g->pods);
        free(g->cons);
        free(g->counted_by);
        free(g->inverse);
        free(g->skips);
        ns_requirements_free(&g->reqs);
        ns_requirements_free(&g->vol_reqs);
        free(g->vol_why);
        free(g->pool_bits);
        free(g->pool_pairs);
        free(g->pool_ok);
        for (size_t p = 0; g->pool_why && p < s->n_pools; p++)
            free(g->pool_why[p]);
        free(g->pool_why);
        free(g->node_ok);
    }
    free(s->groups);
}
