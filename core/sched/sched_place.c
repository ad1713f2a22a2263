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
#include "sched/sched_internal.h"

bool sched_ports_conflict(const ns_pod *a, const ns_pod *b)
{
    for (size_t i = 0; i < a->n_host_ports; i++)
        for (size_t j = 0; j < b->n_host_ports; j++) {
            const ns_host_port *x = &a->host_ports[i], *y = &b->host_ports[j];
            if (x->port != y->port || strcmp(x->protocol, y->protocol) != 0)
                continue;
            if (strcmp(x->ip, y->ip) == 0 || strcmp(x->ip, "0.0.0.0") == 0 || strcmp(y->ip, "0.0.0.0") == 0)
                return true;
        }
    return false;
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

static uint32_t pairs_zones(const sched *s, uint64_t pairs)
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

/* How many pods of `req` fit on top of `used` in `free`. */
static int64_t fit_count(const sched *s, const sched_vec *free_, const sched_vec *used, const sched_vec *req,
                         int64_t limit)
{
    int64_t k = limit;
    for (size_t d = 0; d < s->n_dims && k > 0; d++) {
        if (req->v[d] <= 0)
            continue;
        int64_t room = free_->v[d] - used->v[d];
        int64_t n = room > 0 ? room / req->v[d] : 0;
        k = n < k ? n : k;
    }
    return k;
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
        unsigned flags = NS_TAINTS_IGNORE_EPHEMERAL | (g->tolerate_pns ? NS_TAINTS_IGNORE_PREFER_NO_SCHEDULE : 0);
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
    sched_vec zero = {{0}};
    int64_t k = fit_count(s, &n->free, &zero, &g->req, limit);
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

/* Distinct values of `key` among the kept types reach min_values. Zone and capacity type are offerings, not
 * labels, and are not counted here. */
static bool min_values_ok(const sched_pool *p, const uint64_t *keep, size_t words, const ns_requirement *r)
{
    if (r->min_values <= 0 || strcmp(r->key, NS_LABEL_ZONE) == 0 || strcmp(r->key, NS_LABEL_CAPACITY_TYPE) == 0)
        return true;
    const char *seen[NS_MIN_VALUES_MAX];
    size_t n_seen = 0;
    for (size_t i = sched_bits_first(keep, words); i != SIZE_MAX && n_seen < (size_t)r->min_values;
         i = sched_bits_next(keep, words, i)) {
        const char *v = ns_label_find(p->types[i]->labels, p->types[i]->n_labels, r->key);
        if (!v && strcmp(r->key, NS_LABEL_INSTANCE_TYPE) == 0)
            v = p->types[i]->name;
        bool dup = !v;
        for (size_t j = 0; j < n_seen && !dup; j++)
            dup = strcmp(seen[j], v) == 0;
        if (!dup)
            seen[n_seen++] = v;
    }
    return n_seen >= (size_t)r->min_values;
}

static bool all_min_values_ok(const sched_pool *p, const uint64_t *keep, size_t words, const ns_requirements *a,
                              const ns_requirements *b, char *why, size_t len)
{
    for (int side = 0; side < 2; side++) {
        const ns_requirements *r = side ? b : a;
        for (size_t i = 0; r && i < r->n; i++)
            if (!min_values_ok(p, keep, words, &r->items[i])) {
                if (why)
                    snprintf(why, len, "fewer than minValues %d distinct values of %s remain among the instance "
                             "types that fit", r->items[i].min_values, r->items[i].key);
                return false;
            }
    }
    return true;
}

static bool claim_has_req(const sched_claim *c, uint32_t id)
{
    for (size_t i = c->n_req_ids; i-- > 0;)
        if (c->req_ids[i] == id)
            return true;
    return false;
}

/* The largest k <= limit such that some type holds k more pods and minValues still hold; keep = those types. */
static int64_t fit_types(sched *s, const sched_pool *p, const sched_claim *c, const sched_group *g, uint64_t pairs,
                         int64_t limit, bool merged_min_values, uint64_t *keep, char *why, size_t len)
{
    const uint64_t *a = c->types, *b = g->pool_bits + c->pool * s->max_words;
    int64_t best = 0;
    for (size_t w = 0; w < p->words; w++) {
        uint64_t bits = a[w] & b[w];
        while (bits) {
            size_t i = w * 64 + (size_t)__builtin_ctzll(bits);
            bits &= bits - 1;
            int64_t f = (p->offers[i] & pairs) ? fit_count(s, &p->alloc[i], &c->used, &g->req, limit) : 0;
            s->fit[i] = f;
            best = f > best ? f : best;
        }
    }
    int64_t k = best;
    while (k > 0) {
        memset(keep, 0, p->words * sizeof(uint64_t));
        for (size_t w = 0; w < p->words; w++) {
            uint64_t bits = a[w] & b[w];
            while (bits) {
                size_t i = w * 64 + (size_t)__builtin_ctzll(bits);
                bits &= bits - 1;
                if (s->fit[i] >= k)
                    sched_bits_set(keep, i);
            }
        }
        if (!merged_min_values || all_min_values_ok(p, keep, p->words, &c->reqs, &g->reqs, why, len))
            return k;
        int64_t next = 0;
        for (size_t w = 0; w < p->words; w++) {
            uint64_t bits = a[w] & b[w];
            while (bits) {
                size_t i = w * 64 + (size_t)__builtin_ctzll(bits);
                bits &= bits - 1;
                if (s->fit[i] < k && s->fit[i] > next)
                    next = s->fit[i];
            }
        }
        k = next;
    }
    if (why && best == 0)
        snprintf(why, len, "no instance type left on the node has room for the pod");
    return 0;
}

static void tree_set(sched *s, size_t leaf, const int64_t v[3])
{
    size_t i = s->tree_leaves + leaf;
    memcpy(&s->tree[i * 3], v, 3 * sizeof(int64_t));
    for (i /= 2; i >= 1; i /= 2)
        for (int d = 0; d < 3; d++) {
            int64_t l = s->tree[(2 * i) * 3 + d], r = s->tree[(2 * i + 1) * 3 + d];
            s->tree[i * 3 + d] = l > r ? l : r;
        }
}

static int tree_grow(sched *s, size_t need)
{
    if (need <= s->tree_leaves)
        return NS_OK;
    size_t leaves = s->tree_leaves ? s->tree_leaves : 256;
    while (leaves < need)
        leaves *= 2;
    int64_t *t = malloc(2 * leaves * 3 * sizeof(int64_t));
    if (!t)
        return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory indexing %zu node claims", need);
    for (size_t i = 0; i < 2 * leaves * 3; i++)
        t[i] = -1;
    int64_t *old = s->tree;
    size_t old_leaves = s->tree_leaves;
    s->tree = t;
    s->tree_leaves = leaves;
    for (size_t i = 0; i < old_leaves; i++)
        tree_set(s, i, &old[(old_leaves + i) * 3]);
    free(old);
    return NS_OK;
}

static bool tree_ok(const sched *s, size_t node, const sched_vec *req)
{
    const int64_t *v = &s->tree[node * 3];
    return v[0] >= req->v[SCHED_CPU] && v[1] >= req->v[SCHED_MEM] && v[2] >= req->v[SCHED_PODS];
}

size_t sched_tree_next(const sched *s, size_t from, const sched_vec *req)
{
    if (from >= s->n_claims)
        return SIZE_MAX;
    /* Pre-order walk to the right of `from`, skipping subtrees whose maxima cannot hold the pod. The maxima are per
     * resource, so a subtree that passes may still hold no single claim that does: the walk then moves on. */
    size_t i = s->tree_leaves + from;
    for (;;) {
        if (tree_ok(s, i, req)) {
            if (i >= s->tree_leaves) {
                size_t leaf = i - s->tree_leaves;
                return leaf < s->n_claims ? leaf : SIZE_MAX;
            }
            i = 2 * i;
            continue;
        }
        while (i & 1) {
            i /= 2;
            if (i == 0)
                return SIZE_MAX;
        }
        i++;
    }
}

void sched_tree_update(sched *s, size_t ci)
{
    const sched_claim *c = &s->claims[ci];
    const sched_pool *p = &s->pools[c->pool];
    int64_t v[3] = {-1, -1, -1};
    for (size_t i = sched_bits_first(c->types, p->words); i != SIZE_MAX; i = sched_bits_next(c->types, p->words, i)) {
        int64_t cpu = p->alloc[i].v[SCHED_CPU] - c->used.v[SCHED_CPU];
        int64_t mem = p->alloc[i].v[SCHED_MEM] - c->used.v[SCHED_MEM];
        int64_t pods = p->alloc[i].v[SCHED_PODS] - c->used.v[SCHED_PODS];
        v[0] = cpu > v[0] ? cpu : v[0];
        v[1] = mem > v[1] ? mem : v[1];
        v[2] = pods > v[2] ? pods : v[2];
    }
    tree_set(s, ci, v);
}

/* Adds k pods of g to claim ci, whose new type set is keep and pair mask pairs. */
static int commit_claim(sched *s, sched_group *g, size_t ci, int64_t k, const uint64_t *keep, uint64_t pairs)
{
    sched_claim *c = &s->claims[ci];
    const sched_pool *p = &s->pools[c->pool];
    uint64_t offered = 0;
    memcpy(c->types, keep, p->words * sizeof(uint64_t));
    for (size_t i = sched_bits_first(keep, p->words); i != SIZE_MAX; i = sched_bits_next(keep, p->words, i))
        offered |= p->offers[i];
    c->pairs = pairs & offered;
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
    sched_topo_record(s, g, c->host, pairs_zones(s, c->pairs), k);
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
    uint32_t zones = pairs_zones(s, pairs);
    int64_t limit = g->pod->n_host_ports ? 1 : want;
    if (!sched_topo_allow(s, g, c->host, &zones, &limit, why, len) || limit <= 0)
        return 0;
    pairs &= zones_pairs(s, zones);
    bool min_values = ns_requirements_has_min_values(&p->reqs) || ns_requirements_has_min_values(&g->reqs);
    int64_t k = fit_types(s, p, c, g, pairs, limit, min_values, s->keep, why, len);
    if (k <= 0)
        return 0;
    return commit_claim(s, g, ci, k, s->keep, pairs) == NS_OK ? k : -1;
}

int64_t sched_try_claim(sched *s, sched_group *g, size_t ci, int64_t want)
{
    return try_claim(s, g, ci, want, NULL, 0);
}

static int claims_reserve(sched *s)
{
    if (s->n_claims < s->cap_claims)
        return tree_grow(s, s->n_claims + 1);
    size_t nc = s->cap_claims ? s->cap_claims * 2 : 64;
    sched_claim *n = realloc(s->claims, nc * sizeof(*n));
    if (!n)
        return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory for %zu node claims", nc);
    s->claims = n;
    s->cap_claims = nc;
    return tree_grow(s, s->n_claims + 1);
}

static void claim_release(sched_claim *c)
{
    free(c->types);
    ns_requirements_free(&c->reqs);
    free(c->req_ids);
    free(c->port_pods);
    memset(c, 0, sizeof(*c));
}

/* Subtracts the largest capacity the claim may launch with from the pool's remaining limits (Karpenter's
 * subtractMax), then drops types that no longer fit them. */
static void charge_limits(sched *s, sched_pool *p, const sched_claim *c)
{
    if (!p->has_limits)
        return;
    for (size_t d = 0; d < s->n_dims; d++) {
        int64_t max = 0;
        for (size_t i = sched_bits_first(c->types, p->words); i != SIZE_MAX;
             i = sched_bits_next(c->types, p->words, i))
            max = p->capacity[i].v[d] > max ? p->capacity[i].v[d] : max;
        p->remaining.v[d] -= max;
    }
    sched_pool_recompute_limits(s, p);
}

static void limits_reason(const sched *s, const sched_pool *p, char *why, size_t len)
{
    static const char *const names[] = {"cpu", "memory", "ephemeral-storage", "pods"};
    for (size_t d = 0; d < s->n_dims; d++) {
        if (!p->limited[d])
            continue;
        const char *name = d < SCHED_EXT0 ? names[d] : s->ext_names[d - SCHED_EXT0];
        snprintf(why, len, "all instance types exceed the NodePool's limits (%s remaining %lld)", name,
                 (long long)p->remaining.v[d]);
        if (p->remaining.v[d] <= 0)
            return;
    }
}

int64_t sched_new_claim_explain(sched *s, sched_group *g, int64_t want, char **why_pool)
{
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
        if (claims_reserve(s) != NS_OK || sched_topo_hosts(s, s->n_nodes + s->n_claims + 1) != NS_OK)
            return -1;
        sched_claim *c = &s->claims[s->n_claims];
        memset(c, 0, sizeof(*c));
        c->pool = (uint32_t)pi;
        c->host = (uint32_t)(s->n_nodes + s->n_claims);
        c->pairs = p->pairs;
        c->types = malloc(s->max_words * sizeof(uint64_t));
        if (!c->types || ns_requirements_copy(&p->reqs, &c->reqs) != NS_OK) {
            claim_release(c);
            return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory for a node claim");
        }
        memcpy(c->types, p->in_limits, p->words * sizeof(uint64_t));
        s->n_claims++;
        int64_t k = try_claim(s, g, s->n_claims - 1, want, why_pool ? why : NULL, sizeof(why));
        if (k > 0) {
            p->claim_seq++;
            charge_limits(s, p, c);
            return k;
        }
        s->n_claims--;
        claim_release(c);
        tree_set(s, s->n_claims, (int64_t[3]){-1, -1, -1});
        if (k < 0)
            return -1;
        if (why_pool)
            why_pool[pi] = strdup(why[0] ? why : "the pod's constraints cannot be met on a new node");
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
        claim_release(&s->claims[i]);
    free(s->claims);
    free(s->tree);
    for (size_t i = 0; s->nodes && i < s->n_nodes; i++)
        free(s->nodes[i].port_pods);
    free(s->nodes);
}
