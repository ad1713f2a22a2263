/*
 * Which planned claim a pod goes to. Karpenter sorts the round's new claims by pod count before offering each pod
 * (Scheduler.add: sort.Slice by len(Pods), then addToInflightNode takes the first that accepts), so a pod goes to the
 * claim with the fewest pods that can take it.
 *
 * A tree over claims holds, per claim, the free cpu, memory and pod slots on its roomiest remaining type and its pod
 * count; each inner node holds the maxima of the free amounts and the minimum count below it. The search for the
 * claims with the fewest pods skips every subtree that cannot hold one pod or whose smallest count cannot beat the
 * claims found so far; the skip lists of the hostname topologies (sched_skip.h) say which claims a count has closed
 * to the group for good. A claim that refuses the pod is taken out of the tree until the placement ends.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "sched/sched_internal.h"

enum { T_CPU = 0, T_MEM, T_PODS, T_COUNT, T_ZONES, T_STRIDE };

static void tree_pull(sched *s, size_t i)
{
    const int64_t *l = &s->tree[(2 * i) * T_STRIDE], *r = &s->tree[(2 * i + 1) * T_STRIDE];
    int64_t *v = &s->tree[i * T_STRIDE];
    for (int d = T_CPU; d <= T_PODS; d++)
        v[d] = l[d] > r[d] ? l[d] : r[d];
    v[T_COUNT] = l[T_COUNT] < r[T_COUNT] ? l[T_COUNT] : r[T_COUNT];
    v[T_ZONES] = l[T_ZONES] | r[T_ZONES];
}

/* free: cpu, memory, pod slots (-1 each: no claim); count: the claim's pods (INT64_MAX: no claim); zones: the zones
 * (bit per zone) it may still launch in. */
static void tree_set(sched *s, size_t leaf, const int64_t free_[3], int64_t count, int64_t zones)
{
    size_t i = s->tree_leaves + leaf;
    memcpy(&s->tree[i * T_STRIDE], free_, 3 * sizeof(int64_t));
    s->tree[i * T_STRIDE + T_COUNT] = count;
    s->tree[i * T_STRIDE + T_ZONES] = zones;
    for (i /= 2; i >= 1; i /= 2)
        tree_pull(s, i);
}

void sched_tree_clear(sched *s, size_t leaf)
{
    tree_set(s, leaf, (int64_t[3]){-1, -1, -1}, INT64_MAX, 0);
}

int sched_tree_grow(sched *s, size_t need)
{
    if (need <= s->tree_leaves)
        return NS_OK;
    size_t leaves = s->tree_leaves ? s->tree_leaves : 256;
    while (leaves < need)
        leaves *= 2;
    int64_t *t = malloc(2 * leaves * T_STRIDE * sizeof(int64_t));
    if (!t)
        return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory indexing %zu node claims", need);
    for (size_t i = 0; i < 2 * leaves; i++) {
        t[i * T_STRIDE + T_CPU] = t[i * T_STRIDE + T_MEM] = t[i * T_STRIDE + T_PODS] = -1;
        t[i * T_STRIDE + T_COUNT] = INT64_MAX;
        t[i * T_STRIDE + T_ZONES] = 0;
    }
    int64_t *old = s->tree;
    size_t old_leaves = s->tree_leaves;
    s->tree = t;
    s->tree_leaves = leaves;
    for (size_t i = 0; i < old_leaves; i++) {
        const int64_t *v = &old[(old_leaves + i) * T_STRIDE];
        tree_set(s, i, v, v[T_COUNT], v[T_ZONES]);
    }
    free(old);
    return NS_OK;
}

void sched_tree_update(sched *s, size_t ci)
{
    const sched_claim *c = &s->claims[ci];
    int64_t v[3] = {c->room.max[0] - c->used.v[SCHED_CPU], c->room.max[1] - c->used.v[SCHED_MEM],
                    c->room.max[2] - c->used.v[SCHED_PODS]};
    tree_set(s, ci, v, (int64_t)c->n_pods, (int64_t)sched_pairs_zones(s, c->pairs));
}

/* zones: what the group may use (UINT32_MAX when the round knows no zone). */
static bool tree_ok(const sched *s, size_t node, const sched_vec *req, uint32_t zones)
{
    const int64_t *v = &s->tree[node * T_STRIDE];
    return v[T_CPU] >= req->v[SCHED_CPU] && v[T_MEM] >= req->v[SCHED_MEM] && v[T_PODS] >= req->v[SCHED_PODS] &&
           ((uint32_t)v[T_ZONES] & zones) != 0;
}

/* True when a hostname count has closed every claim in [lo, hi] to g (a skip list jumps past hi). */
static bool blocked(sched *s, const sched_group *g, size_t lo, size_t hi)
{
    for (size_t i = 0; i < g->n_skips; i++)
        if (sched_skip_find(&s->topos[g->skips[i] / 2].skip[g->skips[i] % 2], lo) > hi)
            return true;
    return false;
}

/* Candidate keys: pod count in the high half, claim index in the low half, so the smallest key is the claim with the
 * fewest pods and, among equals, the earliest. Karpenter's sort.Slice is not stable, so its order among claims with
 * equal counts is an artefact of the sort; creation order is nodesmith's. */
static uint64_t key_of(uint64_t count, size_t claim)
{
    return (count << 32) | (uint64_t)claim;
}

/* The two smallest keys among claims that may hold a pod of g in one of `zones` (UINT64_MAX when there are fewer).
 * The free maxima are per resource, so a subtree that passes may hold no single claim that does: leaves are checked
 * on their own. */
static void best_two(sched *s, const sched_group *g, uint32_t zones, uint64_t best[2])
{
    best[0] = best[1] = UINT64_MAX;
    if (!s->tree_leaves)
        return;
    unsigned levels = (unsigned)__builtin_ctzll((unsigned long long)s->tree_leaves);
    size_t stack[2 * 64];
    size_t sp = 0;
    stack[sp++] = 1;
    while (sp > 0) {
        size_t i = stack[--sp];
        int64_t count = s->tree[i * T_STRIDE + T_COUNT];
        if (count == INT64_MAX || !tree_ok(s, i, &g->req, zones))
            continue;
        unsigned depth = 63u - (unsigned)__builtin_clzll((unsigned long long)i);
        size_t leftmost = (i << (levels - depth)) - s->tree_leaves, span = (size_t)1 << (levels - depth);
        if (key_of((uint64_t)count, leftmost) >= best[1] || blocked(s, g, leftmost, leftmost + span - 1))
            continue;
        if (i < s->tree_leaves) {
            stack[sp++] = 2 * i + 1;
            stack[sp++] = 2 * i;
            continue;
        }
        if (leftmost >= s->n_claims)
            continue;
        uint64_t k = key_of((uint64_t)count, leftmost);
        if (k < best[0]) {
            best[1] = best[0];
            best[0] = k;
        } else {
            best[1] = k;
        }
    }
}

static int refuse(sched *s, size_t *n_refused, size_t c)
{
    if (*n_refused == s->cap_cand) {
        size_t cap = s->cap_cand ? 2 * s->cap_cand : 64;
        size_t *nc = realloc(s->cand, cap * sizeof(*nc));
        if (!nc)
            return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory listing %zu node claims", cap);
        s->cand = nc;
        s->cap_cand = cap;
    }
    s->cand[(*n_refused)++] = c;
    sched_tree_clear(s, c);
    return NS_OK;
}

/* The zones some claim could give g: those its zonal constraints allow in the pools it may use. */
static uint32_t group_zones(const sched *s, const sched_group *g)
{
    if (s->n_zones == 0)
        return UINT32_MAX;
    uint32_t pools = 0;
    for (size_t p = 0; p < s->n_pools; p++)
        if (g->pool_ok[p])
            pools |= sched_pairs_zones(s, g->pool_pairs[p]);
    return pools & sched_topo_zones(s, g);
}

int64_t sched_place_planned(sched *s, sched_group *g, int64_t want, bool one_at_a_time)
{
    size_t n_refused = 0;
    int64_t k = 0;
    uint32_t zones = group_zones(s, g);
    for (;;) {
        uint64_t best[2];
        best_two(s, g, zones, best);
        if (best[0] == UINT64_MAX)
            break;
        size_t c = (size_t)(best[0] & UINT32_MAX);
        int64_t limit = one_at_a_time ? 1 : want;
        if (best[1] != UINT64_MAX && !one_at_a_time) {
            /* The claim stays the first choice while its count is below the next candidate's (or equal, when it
             * is the earlier claim). */
            int64_t bound = (int64_t)(best[1] >> 32) - (int64_t)s->claims[c].n_pods +
                            (c < (size_t)(best[1] & UINT32_MAX) ? 1 : 0);
            limit = bound < limit ? bound : limit;
        }
        k = sched_try_claim(s, g, c, limit);
        if (k != 0)
            break;
        if (refuse(s, &n_refused, c) != NS_OK) {
            k = -1;
            break;
        }
    }
    for (size_t i = 0; i < n_refused; i++)
        sched_tree_update(s, s->cand[i]);
    return k;
}
