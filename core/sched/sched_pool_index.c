#include "sched/sched_pool_index.h"

#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"

typedef struct by_value {
    const sched_pool *p;
    size_t d;
} by_value;

static int order_cmp(const void *a, const void *b, void *ctx)
{
    const by_value *k = ctx;
    int64_t x = k->p->alloc[*(const uint32_t *)a].v[k->d], y = k->p->alloc[*(const uint32_t *)b].v[k->d];
    return x < y ? -1 : x > y;
}

int sched_pool_index_build(const sched *s, sched_pool *p)
{
    size_t n = p->n_types, w = p->words;
    p->ix_dims = s->n_dims;
    p->ix_order = calloc(s->n_dims, sizeof(*p->ix_order));
    p->ix_suffix = calloc(s->n_dims, sizeof(*p->ix_suffix));
    p->ix_pair = calloc(64 * w, sizeof(uint64_t));
    if (!p->ix_order || !p->ix_suffix || !p->ix_pair)
        return NS_FAIL(NS_ERR_INTERNAL, "NodePool %s: out of memory indexing instance types", p->np->meta.name);
    for (size_t i = 0; i < n; i++)
        for (uint64_t o = p->offers[i]; o; o &= o - 1)
            sched_bits_set(p->ix_pair + (size_t)__builtin_ctzll(o) * w, i);
    for (size_t d = 0; d < s->n_dims; d++) {
        uint32_t *order = malloc((n ? n : 1) * sizeof(*order));
        uint64_t *suffix = calloc((n + 1) * w, sizeof(uint64_t));
        p->ix_order[d] = order;
        p->ix_suffix[d] = suffix;
        if (!order || !suffix)
            return NS_FAIL(NS_ERR_INTERNAL, "NodePool %s: out of memory indexing instance types", p->np->meta.name);
        for (size_t i = 0; i < n; i++)
            order[i] = (uint32_t)i;
        qsort_r(order, n, sizeof(*order), order_cmp, &(by_value){p, d});
        /* suffix[r] = types at positions r.. of the order: the types with the r-th smallest value or more. */
        for (size_t r = n; r-- > 0;) {
            memcpy(suffix + r * w, suffix + (r + 1) * w, w * sizeof(uint64_t));
            sched_bits_set(suffix + r * w, order[r]);
        }
    }
    return NS_OK;
}

void sched_pool_index_free(sched_pool *p)
{
    for (size_t d = 0; d < p->ix_dims; d++) {
        free(p->ix_order ? p->ix_order[d] : NULL);
        free(p->ix_suffix ? p->ix_suffix[d] : NULL);
    }
    free(p->ix_order);
    free(p->ix_suffix);
    free(p->ix_pair);
}

void sched_pool_index_at_least(const sched_pool *p, size_t d, int64_t x, uint64_t *out)
{
    const uint32_t *order = p->ix_order[d];
    size_t lo = 0, hi = p->n_types;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (p->alloc[order[mid]].v[d] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    const uint64_t *suffix = p->ix_suffix[d] + lo * p->words;
    for (size_t w = 0; w < p->words; w++)
        out[w] &= suffix[w];
}

void sched_pool_index_all(const sched_pool *p, uint64_t *out)
{
    memset(out, 0, p->words * sizeof(uint64_t));
    for (size_t w = 0; w < p->n_types / 64; w++)
        out[w] = ~UINT64_C(0);
    if (p->n_types % 64)
        out[p->n_types / 64] = (UINT64_C(1) << (p->n_types % 64)) - 1;
}

void sched_pool_index_offered(const sched_pool *p, uint64_t pairs, uint64_t *any, uint64_t *out)
{
    memset(any, 0, p->words * sizeof(uint64_t));
    for (; pairs; pairs &= pairs - 1) {
        const uint64_t *b = p->ix_pair + (size_t)__builtin_ctzll(pairs) * p->words;
        for (size_t w = 0; w < p->words; w++)
            any[w] |= b[w];
    }
    for (size_t w = 0; w < p->words; w++)
        out[w] &= any[w];
}

/* The largest value of dimension d among `types`: the first of them from the top of the order. */
static int64_t top_value(const sched_pool *p, size_t d, const uint64_t *types)
{
    for (size_t r = p->n_types; r-- > 0;)
        if (sched_bits_get(types, p->ix_order[d][r]))
            return p->alloc[p->ix_order[d][r]].v[d];
    return INT64_MIN / 2;
}

void sched_pool_index_room(const sched_pool *p, const uint64_t *types, sched_room *room)
{
    room->max[0] = top_value(p, SCHED_CPU, types);
    room->max[1] = top_value(p, SCHED_MEM, types);
    room->max[2] = top_value(p, SCHED_PODS, types);
    room->offered = 0;
    for (uint64_t pairs = p->pairs; pairs; pairs &= pairs - 1) {
        size_t j = (size_t)__builtin_ctzll(pairs);
        const uint64_t *b = p->ix_pair + j * p->words;
        for (size_t w = 0; w < p->words; w++)
            if (b[w] & types[w]) {
                room->offered |= UINT64_C(1) << j;
                break;
            }
    }
}
