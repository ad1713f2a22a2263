/*
 * First-fit search over the planned claims. A max-tree over claims holds, per claim, the free cpu, memory and pod
 * slots on its roomiest remaining type; a walk skips every subtree that cannot hold one pod. The skip lists of the
 * hostname topologies (sched_skip.h) then jump over claims a count has closed to the group for good.
 */
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "sched/sched_internal.h"

void sched_tree_set(sched *s, size_t leaf, const int64_t v[3])
{
    size_t i = s->tree_leaves + leaf;
    memcpy(&s->tree[i * 3], v, 3 * sizeof(int64_t));
    for (i /= 2; i >= 1; i /= 2)
        for (int d = 0; d < 3; d++) {
            int64_t l = s->tree[(2 * i) * 3 + d], r = s->tree[(2 * i + 1) * 3 + d];
            s->tree[i * 3 + d] = l > r ? l : r;
        }
}

int sched_tree_grow(sched *s, size_t need)
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
        sched_tree_set(s, i, &old[(old_leaves + i) * 3]);
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

size_t sched_claim_next(sched *s, const sched_group *g, size_t from)
{
    for (;;) {
        size_t c = sched_tree_next(s, from, &g->req), moved = c;
        if (c == SIZE_MAX)
            return c;
        for (bool changed = true; changed;) {
            changed = false;
            for (size_t i = 0; i < g->n_skips; i++) {
                size_t m = sched_skip_find(&s->topos[g->skips[i] / 2].skip[g->skips[i] % 2], moved);
                changed = changed || m != moved;
                moved = m;
            }
        }
        if (moved == c)
            return c;
        from = moved;
    }
}

void sched_tree_update(sched *s, size_t ci)
{
    const sched_claim *c = &s->claims[ci];
    int64_t v[3] = {c->room.max[0] - c->used.v[SCHED_CPU], c->room.max[1] - c->used.v[SCHED_MEM],
                    c->room.max[2] - c->used.v[SCHED_PODS]};
    sched_tree_set(s, ci, v);
}
