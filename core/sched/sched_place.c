/*
 * Placing a batch of a group's pods: on an existing node, on a claim planned in this round, or on a new claim.
 * Each attempt returns how many of the group's identical pods went there (0: none could), so a Deployment fills a
 * claim in one step instead of one pod at a time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "model/labels.h"
#include "model/quantity.h"
#include "sched/sched_internal.h"
#include "sched/sched_pool_index.h"

const ns_host_port *sched_ports_conflict_at(const ns_pod *a, const ns_pod *b)
{
    for (size_t i = 0; i < a->n_host_ports; i++)
        for (size_t j = 0; j < b->n_host_ports; j++) {
            const ns_host_port *x = &a->host_ports[i], *y = &b->host_ports[j];
            if (x->port != y->port || strcmp(x->protocol, y->protocol) != 0)
                continue;
            if (strcmp(x->ip, y->ip) == 0 || strcmp(x->ip, "0.0.0.0") == 0 || strcmp(y->ip, "0.0.0.0") == 0)
                return x;
        }
    return NULL;
}

bool sched_ports_conflict(const ns_pod *a, const ns_pod *b)
{
    return sched_ports_conflict_at(a, b) != NULL;
}

static bool ports_taken(const sched_group *g, const ns_pod *const *pods, size_t n)
{
    for (size_t i = 0; g->pod->n_host_ports && i < n; i++)
        if (sched_ports_conflict(g->pod, pods[i]))
            return true;
    return false;
}

static int add_port_pod(const ns_pod ***list, size_t *n, const ns_pod *pod)
{
    const ns_pod **nl = realloc(*list, (*n + 1) * sizeof(*nl));
    if (!nl)
        return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory recording host ports");
    nl[(*n)++] = pod;
    *list = nl;
    return NS_OK;
}

uint32_t sched_pairs_zones(const sched *s, uint64_t pairs)
{
    uint32_t zones = 0;
    for (size_t z = 0; z < s->n_zones; z++)
        if (pairs & sched_zone_pairs((int)z))
            zones |= 1u << z;
    return zones;
}

static uint64_t zones_pairs(const sched *s, uint32_t zones)
{
    uint64_t pairs = 0;
    for (size_t z = 0; z < s->n_zones; z++)
        if ((zones >> z) & 1u)
            pairs |= sched_zone_pairs((int)z);
    return pairs;
}

void sched_group_assign(sched *s, sched_group *g, size_t target, int64_t k)
{
    for (int64_t i = 0; i < k; i++)
        s->placement[g->pods[g->done++]] = target;
}

int64_t sched_try_node(sched *s, sched_group *g, size_t ni, int64_t want)
{
    sched_node *n = &s->nodes[ni];
    if (!n->usable)
        return 0;
    if (!g->node_ok[ni]) {
        const ns_labels *l = &n->node->meta.labels;
        /* Known ephemeral taints count here: the engine's view already dropped them from the managed nodes that are
         * not initialized, the only nodes where Karpenter ignores them. */
        unsigned flags = g->tolerate_pns ? NS_TAINTS_IGNORE_PREFER_NO_SCHEDULE : 0;
        bool ok = ns_requirements_match_labels(&g->reqs, l->items, l->n, NULL, 0) &&
                  ns_pod_tolerates(g->pod, n->node->taints, n->node->n_taints, NULL, 0, flags, NULL, 0);
        g->node_ok[ni] = ok ? 1 : 2;
    }
    if (g->node_ok[ni] != 1 || ports_taken(g, n->port_pods, n->n_port_pods))
        return 0;
    uint32_t zones = n->zone >= 0 ? 1u << n->zone : 0;
    int64_t limit = g->pod->n_host_ports ? 1 : want;
    if (!sched_topo_allow(s, g, (uint32_t)ni, &zones, &limit, NULL, 0))
        return 0;
    int64_t k = sched_fit_count(s, &n->free, &s->zero, &g->req, limit);
    if (k <= 0)
        return 0;
    if (g->pod->n_host_ports && add_port_pod(&n->port_pods, &n->n_port_pods, g->pod) != NS_OK)
        return -1;
    for (size_t d = 0; d < s->n_dims; d++)
        n->free.v[d] -= k * g->req.v[d];
    sched_topo_record(s, g, (uint32_t)ni, zones, k);
    sched_group_assign(s, g, ni, k);
    return k;
}

static bool claim_has_req(const sched_claim *c, uint32_t id)
{
    for (size_t i = c->n_req_ids; i-- > 0;)
        if (c->req_ids[i] == id)
            return true;
    return false;
}

/* Adds k pods of g to claim ci, whose new type set is keep and pair mask pairs. */
static int commit_claim(sched *s, sched_group *g, size_t ci, int64_t k, const uint64_t *keep, const sched_room *room,
                        uint64_t pairs)
{
    sched_claim *c = &s->claims[ci];
    const sched_pool *p = &s->pools[c->pool];
    memcpy(c->types, keep, p->words * sizeof(uint64_t));
    c->room = *room;
    c->pairs = pairs & room->offered;
    for (size_t d = 0; d < s->n_dims; d++)
        c->used.v[d] += k * g->req.v[d];
    if (!claim_has_req(c, g->req_id)) {
        uint32_t *ids = realloc(c->req_ids, (c->n_req_ids + 1) * sizeof(*ids));
        if (!ids || ns_requirements_add_all(&c->reqs, &g->reqs) != NS_OK) {
            if (ids)
                c->req_ids = ids;
            return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory merging requirements into a node claim");
        }
        c->req_ids = ids;
        c->req_ids[c->n_req_ids++] = g->req_id;
    }
    if (g->pod->n_host_ports && add_port_pod(&c->port_pods, &c->n_port_pods, g->pod) != NS_OK)
        return NS_ERR_INTERNAL;
    if (sched_keyed_narrow(s, g, c) != NS_OK || sched_resv_commit(s, c) != NS_OK)
        return NS_ERR_INTERNAL;
    sched_topo_record(s, g, c->host, sched_pairs_zones(s, c->pairs), k);
    sched_group_assign(s, g, s->n_nodes + ci, k);
    c->n_pods += (size_t)k;
    sched_tree_update(s, ci);
    return NS_OK;
}

static int64_t try_claim(sched *s, sched_group *g, size_t ci, int64_t want, char *why, size_t len)
{
    sched_claim *c = &s->claims[ci];
    const sched_pool *p = &s->pools[c->pool];
    if (!g->pool_ok[c->pool])
        return 0;
    uint64_t pairs = c->pairs & g->pool_pairs[c->pool];
    if (!pairs || ports_taken(g, c->port_pods, c->n_port_pods))
        return 0;
    bool known = claim_has_req(c, g->req_id);
    if (!known && !ns_requirements_intersects(&c->reqs, &g->reqs, why, len))
        return 0;
    uint32_t zones = sched_pairs_zones(s, pairs);
    int64_t limit = g->pod->n_host_ports ? 1 : want;
    if (!sched_topo_allow(s, g, c->host, &zones, &limit, why, len) || limit <= 0)
        return 0;
    pairs &= zones_pairs(s, zones);
    /* Under BestEffort a claim takes the pod whatever values are left; its minValues are lowered at the end. */
    bool min_values = s->in->min_values_policy == NS_SCHED_MIN_VALUES_STRICT &&
                      (ns_requirements_has_min_values(&p->reqs) || ns_requirements_has_min_values(&g->reqs));
    sched_room room;
    int64_t k = sched_fit_types(s, p, c, g, pairs, limit, min_values, s->keep, &room, why, len);
    if (k <= 0)
        return 0;
    if (sched_resv_plan(s, c, s->keep, pairs & room.offered) == SCHED_RESV_REFUSED) {
        s->resv_refused = true;
        if (why)
            snprintf(why, len, "%s", c->n_held ? "satisfying updated nodeclaim constraints would remove all "
                                                  "compatible reserved offering options"
                                                : "one or more instance types with compatible reserved offerings "
                                                  "are available, but could not be reserved");
        return 0;
    }
    return commit_claim(s, g, ci, k, s->keep, &room, pairs) == NS_OK ? k : -1;
}

int64_t sched_try_claim(sched *s, sched_group *g, size_t ci, int64_t want)
{
    return try_claim(s, g, ci, want, NULL, 0);
}

static int claims_reserve(sched *s)
{
    if (s->n_claims < s->cap_claims)
        return sched_tree_grow(s, s->n_claims + 1);
    size_t nc = s->cap_claims ? s->cap_claims * 2 : 64;
    sched_claim *n = realloc(s->claims, nc * sizeof(*n));
    if (n)
        s->claims = n;
    int64_t *used = n ? realloc(s->claim_used, nc * s->n_dims * sizeof(*used)) : NULL;
    if (!used)
        return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory for %zu node claims", nc);
    s->claim_used = used;
    s->cap_claims = nc;
    for (size_t i = 0; i < s->n_claims; i++)
        s->claims[i].used.v = used + i * s->n_dims;
    return sched_tree_grow(s, s->n_claims + 1);
}

void sched_claim_release(sched_claim *c)
{
    free(c->types);
    ns_requirements_free(&c->reqs);
    free(c->req_ids);
    free(c->port_pods);
    free(c->held);
    free(c->charged);
    memset(c, 0, sizeof(*c));
}

/* Subtracts the largest capacity the claim may launch with from the pool's remaining limits (Karpenter's
 * subtractMax), then drops types that no longer fit them. The claim keeps what it took, so cost packing can give it
 * back when it replaces the claim. 0 or NS_ERR_INTERNAL. */
static int charge_limits(sched *s, sched_pool *p, sched_claim *c)
{
    if (!p->has_limits)
        return NS_OK;
    if (!(c->charged = calloc(s->n_dims, sizeof(int64_t))))
        return NS_FAIL(NS_ERR_INTERNAL, "NodePool %s: out of memory counting a node claim against its limits",
                       p->np->meta.name);
    for (size_t d = 0; d < s->n_dims; d++) {
        int64_t max = 0;
        for (size_t i = sched_bits_first(c->types, p->words); i != SIZE_MAX;
             i = sched_bits_next(c->types, p->words, i))
            max = p->capacity[i].v[d] > max ? p->capacity[i].v[d] : max;
        p->remaining.v[d] -= max;
        c->charged[d] = max;
    }
    sched_pool_recompute_limits(s, p);
    return NS_OK;
}

/* Names the limit that blocks the pool (the first one used up, else the last limited one) with its value and what the
 * pool's nodes and this round's claims already use, so whoever reads it knows which number to raise. */
static void limits_reason(const sched *s, const sched_pool *p, char *why, size_t len)
{
    static const char *const names[] = {"cpu", "memory", "ephemeral-storage", "pods"};
    if (p->nodes_dim >= 0 && p->remaining.v[p->nodes_dim] <= 0) {
        snprintf(why, len, "node limits have been exhausted for the NodePool (limits.nodes, %lld remaining)",
                 (long long)p->remaining.v[p->nodes_dim]);
        return;
    }
    for (size_t d = 0; d < s->n_dims; d++) {
        if (!p->limited[d])
            continue;
        const char *name = d < SCHED_EXT0 ? names[d] : s->ext_names[d - SCHED_EXT0];
        int scale = d == SCHED_CPU ? NS_QTY_MILLI : NS_QTY_UNITS;
        bool bytes = d == SCHED_MEM || d == SCHED_EPH;
        char limit[48], used[48], left[48];
        snprintf(why, len, SCHED_LIMITS_REASON " (%s limit %s, in use %s, remaining %s)", name, ns_quantity_format(p->limit.v[d], scale, bytes, limit, sizeof(limit)),
                 ns_quantity_format(p->limit.v[d] - p->remaining.v[d], scale, bytes, used, sizeof(used)),
                 ns_quantity_format(p->remaining.v[d], scale, bytes, left, sizeof(left)));
        if (p->remaining.v[d] <= 0)
            return;
    }
}

/* A new claim of pool pi with the pool's requirements and offerings, no pod and no type allowed yet, appended to
 * s->claims; NULL (error recorded) when out of memory. */
static sched_claim *claim_open(sched *s, size_t pi)
{
    const sched_pool *p = &s->pools[pi];
    if (claims_reserve(s) != NS_OK || sched_topo_hosts(s, s->n_nodes + s->n_claims + 1) != NS_OK)
        return NULL;
    sched_claim *c = &s->claims[s->n_claims];
    memset(c, 0, sizeof(*c));
    c->used.v = s->claim_used + s->n_claims * s->n_dims;
    memset(c->used.v, 0, s->n_dims * sizeof(int64_t));
    c->pool = (uint32_t)pi;
    c->host = (uint32_t)(s->n_nodes + s->n_claims);
    c->pairs = p->pairs;
    c->types = calloc(s->max_words, sizeof(uint64_t));
    if (!c->types || ns_requirements_copy(&p->reqs, &c->reqs) != NS_OK) {
        sched_claim_release(c);
        NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory for a node claim");
        return NULL;
    }
    s->n_claims++;
    return c;
}

int sched_static_claim_add(sched *s, size_t pi)
{
    sched_claim *c = claim_open(s, pi);
    if (!c)
        return NS_ERR_INTERNAL;
    sched_pool_index_all(&s->pools[pi], c->types);
    return NS_OK;
}

int64_t sched_new_claim_explain(sched *s, sched_group *g, int64_t want, char **why_pool)
{
    g->resv_deferred = false;
    for (size_t o = 0; o < s->n_pools; o++) {
        size_t pi = s->pool_order[o];
        sched_pool *p = &s->pools[pi];
        char why[512] = "";
        if (!g->pool_ok[pi])
            continue;
        const uint64_t *gb = g->pool_bits + pi * s->max_words;
        bool any = false;
        for (size_t w = 0; w < p->words && !any; w++)
            any = (gb[w] & p->in_limits[w]) != 0;
        if (!any) {
            if (why_pool) {
                limits_reason(s, p, why, sizeof(why));
                why_pool[pi] = strdup(why);
            }
            continue;
        }
        sched_claim *c = claim_open(s, pi);
        if (!c)
            return -1;
        memcpy(c->types, p->in_limits, p->words * sizeof(uint64_t));
        s->resv_refused = false;
        int64_t k = try_claim(s, g, s->n_claims - 1, want, why_pool ? why : NULL, sizeof(why));
        if (k > 0) {
            p->claim_seq++;
            return charge_limits(s, p, c) == NS_OK ? k : -1;
        }
        s->n_claims--;
        sched_claim_release(c);
        sched_tree_clear(s, s->n_claims);
        if (k < 0)
            return -1;
        if (why_pool)
            why_pool[pi] = strdup(why[0] ? why : "the pod's constraints cannot be met on a new node");
        /* Karpenter's ReservedOfferingError: no lower-priority pool is tried, and the pod waits for a later round. */
        if (s->resv_refused) {
            g->resv_deferred = true;
            return 0;
        }
    }
    return 0;
}

int64_t sched_new_claim(sched *s, sched_group *g, int64_t want)
{
    return sched_new_claim_explain(s, g, want, NULL);
}

void sched_claims_free(sched *s)
{
    for (size_t i = 0; s->claims && i < s->n_claims; i++)
        sched_claim_release(&s->claims[i]);
    free(s->claims);
    free(s->claim_used);
    free(s->tree);
    free(s->cand);
    for (size_t i = 0; s->nodes && i < s->n_nodes; i++)
        free(s->nodes[i].port_pods);
    free(s->nodes);
}
