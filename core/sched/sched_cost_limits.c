/*
 * Cost packing under a NodePool's limits: what the pass's classes take from their pools' limits and which types their
 * new claims may launch (sched_cost_limits.h). Karpenter's subtractMax charges a new claim the largest capacity among
 * the types it may launch, so a bin's claim is made with only the types that hold the bin.
 */
#include <string.h>

#include "sched/sched_cost_limits.h"

/* Adds to v what the class's claims took from their pool's limits when they were made. */
static void give_back(const sched *s, const cost_class *k, int64_t *v)
{
    for (size_t i = 0; i < k->n_claims; i++)
        for (size_t d = 0; s->claims[k->claims[i]].charged && d < s->n_dims; d++)
            v[d] += s->claims[k->claims[i]].charged[d];
}

void sched_cost_bin_types(const sched *s, const cost_class *k, const cost_bin *bin, sched_vec *used, uint64_t *out,
                          int64_t *charge)
{
    const sched_pool *p = &s->pools[k->pool];
    sched_claim view = {.pool = (uint32_t)k->pool, .pairs = k->pairs};
    memcpy(out, k->types, p->words * sizeof(uint64_t));
    memset(used->v, 0, s->n_dims * sizeof(int64_t));
    for (size_t f = bin->first; f < bin->first + bin->n; f++) {
        const cost_fill *fl = &k->plan.fills[f];
        const sched_group *g = k->items[fl->item].g;
        for (size_t d = 0; d < s->n_dims; d++)
            used->v[d] += fl->k * g->req.v[d];
        for (size_t w = 0; w < p->words; w++)
            out[w] &= g->pool_bits[k->pool * s->max_words + w];
    }
    size_t cheapest = SIZE_MAX;
    double best = -1;
    for (size_t i = sched_bits_first(out, p->words); i != SIZE_MAX; i = sched_bits_next(out, p->words, i)) {
        double price = sched_claim_type_price(p, &view, i);
        bool fits = price >= 0;
        for (size_t d = 0; d < s->n_dims && fits; d++)
            fits = used->v[d] <= p->alloc[i].v[d];
        if (!fits)
            sched_bits_clear(out, i);
        else if (best < 0 || price < best) {
            best = price;
            cheapest = i;
        }
    }
    if (charge)
        memset(charge, 0, s->n_dims * sizeof(int64_t));
    for (size_t i = sched_bits_first(out, p->words); i != SIZE_MAX; i = sched_bits_next(out, p->words, i)) {
        bool small = true;
        for (size_t d = 0; k->tight && d < s->n_dims && small; d++)
            small = !p->limited[d] || p->capacity[i].v[d] <= p->capacity[cheapest].v[d];
        if (!small) {
            sched_bits_clear(out, i);
            continue;
        }
        for (size_t d = 0; charge && d < s->n_dims; d++)
            charge[d] = p->capacity[i].v[d] > charge[d] ? p->capacity[i].v[d] : charge[d];
    }
}

/* The class's bins, each charged as sched_cost_bin_types says, fit avail; avail is then what they leave. */
static bool bins_fit(const sched *s, const cost_class *k, int64_t *avail, sched_vec *used, uint64_t *mask,
                     int64_t *charge)
{
    const sched_pool *p = &s->pools[k->pool];
    int64_t *left = charge + s->n_dims;
    memcpy(left, avail, s->n_dims * sizeof(int64_t));
    for (size_t b = 0; b < k->plan.n_bins; b++) {
        sched_cost_bin_types(s, k, &k->plan.bins[b], used, mask, charge);
        for (size_t d = 0; d < s->n_dims; d++)
            left[d] -= charge[d];
    }
    for (size_t d = 0; d < s->n_dims; d++)
        if (p->limited[d] && left[d] < 0)
            return false;
    memcpy(avail, left, s->n_dims * sizeof(int64_t));
    return true;
}

bool sched_cost_fits_limits(const sched *s, cost_class *k, int64_t *avail, sched_vec *used, uint64_t *mask,
                            int64_t *charge)
{
    k->tight = false;
    if (bins_fit(s, k, avail, used, mask, charge))
        return true;
    k->tight = true;
    return bins_fit(s, k, avail, used, mask, charge);
}

void sched_cost_class_room(const sched *s, const cost_class *k, const int64_t *pool_avail, int64_t *avail,
                           uint64_t *types)
{
    const sched_pool *p = &s->pools[k->pool];
    if (!p->has_limits) {
        memcpy(types, p->in_limits, p->words * sizeof(uint64_t));
        return;
    }
    memcpy(avail, pool_avail, s->n_dims * sizeof(int64_t));
    give_back(s, k, avail);
    sched_pool_types_within(s, p, &(sched_vec){avail}, types);
}

void sched_cost_limits_give_back(sched *s, const cost_class *classes, size_t n_classes, int64_t *saved)
{
    for (size_t pi = 0; pi < s->n_pools; pi++)
        memcpy(saved + pi * s->n_dims, s->pools[pi].remaining.v, s->n_dims * sizeof(int64_t));
    for (size_t i = 0; i < n_classes; i++)
        if (s->pools[classes[i].pool].has_limits)
            give_back(s, &classes[i], s->pools[classes[i].pool].remaining.v);
    for (size_t pi = 0; pi < s->n_pools; pi++)
        if (s->pools[pi].has_limits)
            sched_pool_recompute_limits(s, &s->pools[pi]);
}

void sched_cost_limits_restore(sched *s, const int64_t *saved)
{
    for (size_t pi = 0; pi < s->n_pools; pi++)
        if (s->pools[pi].has_limits) {
            memcpy(s->pools[pi].remaining.v, saved + pi * s->n_dims, s->n_dims * sizeof(int64_t));
            sched_pool_recompute_limits(s, &s->pools[pi]);
        }
}
