/*
 * How many of a group's pods a claim can still take: the instance types that hold them, and minValues.
 */
#include <stdio.h>
#include <string.h>

#include "model/labels.h"
#include "sched/sched_internal.h"
#include "sched/sched_pool_index.h"

int64_t sched_fit_count(const sched *s, const sched_vec *free_, const sched_vec *used, const sched_vec *req,
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

/* Distinct zones or capacity types among the launch options left: the kept types' offerings within `pairs`. */
static size_t offering_values(const sched *s, const sched_pool *p, const uint64_t *keep, uint64_t pairs, bool zone)
{
    uint64_t offered = 0;
    for (size_t i = sched_bits_first(keep, p->words); i != SIZE_MAX; i = sched_bits_next(keep, p->words, i))
        offered |= p->offers[i];
    offered &= pairs;
    size_t n = 0;
    if (zone) {
        for (size_t z = 0; z < s->n_zones; z++)
            n += (offered & sched_zone_pairs((int)z)) != 0;
        return n;
    }
    for (size_t ct = 0; ct < SCHED_N_CT; ct++) {
        bool any = false;
        for (size_t z = 0; z < s->n_zones && !any; z++)
            any = (offered >> (z * SCHED_N_CT + ct)) & 1u;
        n += any;
    }
    return n;
}

size_t sched_min_values_count(const sched *s, const sched_pool *p, const uint64_t *keep, uint64_t pairs,
                              const ns_requirement *r)
{
    bool zone = strcmp(r->key, NS_LABEL_ZONE) == 0;
    if (zone || strcmp(r->key, NS_LABEL_CAPACITY_TYPE) == 0)
        return offering_values(s, p, keep, pairs, zone);
    const char *seen[NS_MIN_VALUES_MAX];
    size_t n_seen = 0;
    for (size_t i = sched_bits_first(keep, p->words); i != SIZE_MAX && n_seen < (size_t)r->min_values;
         i = sched_bits_next(keep, p->words, i)) {
        const char *v = ns_label_find(p->types[i]->labels, p->types[i]->n_labels, r->key);
        if (!v && strcmp(r->key, NS_LABEL_INSTANCE_TYPE) == 0)
            v = p->types[i]->name;
        bool dup = !v;
        for (size_t j = 0; j < n_seen && !dup; j++)
            dup = strcmp(seen[j], v) == 0;
        if (!dup)
            seen[n_seen++] = v;
    }
    return n_seen;
}

static bool min_values_ok(const sched *s, const sched_pool *p, const uint64_t *keep, uint64_t pairs,
                          const ns_requirement *r)
{
    return r->min_values <= 0 || sched_min_values_count(s, p, keep, pairs, r) >= (size_t)r->min_values;
}

static bool all_min_values_ok(const sched *s, const sched_pool *p, const uint64_t *keep, uint64_t pairs,
                              const ns_requirements *a, const ns_requirements *b, char *why, size_t len)
{
    for (int side = 0; side < 2; side++) {
        const ns_requirements *r = side ? b : a;
        for (size_t i = 0; r && i < r->n; i++)
            if (!min_values_ok(s, p, keep, pairs, &r->items[i])) {
                if (why)
                    snprintf(why, len, "fewer than minValues %d distinct values of %s remain among the launch options "
                             "that fit", r->items[i].min_values, r->items[i].key);
                return false;
            }
    }
    return true;
}

static void room_add(sched_room *r, const sched_pool *p, size_t i)
{
    const int64_t *v = p->alloc[i].v;
    r->max[0] = v[SCHED_CPU] > r->max[0] ? v[SCHED_CPU] : r->max[0];
    r->max[1] = v[SCHED_MEM] > r->max[1] ? v[SCHED_MEM] : r->max[1];
    r->max[2] = v[SCHED_PODS] > r->max[2] ? v[SCHED_PODS] : r->max[2];
    r->offered |= p->offers[i];
}

static void room_init(sched_room *r)
{
    r->max[0] = r->max[1] = r->max[2] = INT64_MIN / 2;
    r->offered = 0;
}

void sched_room_of(const sched_pool *p, const uint64_t *keep, sched_room *room)
{
    room_init(room);
    for (size_t i = sched_bits_first(keep, p->words); i != SIZE_MAX; i = sched_bits_next(keep, p->words, i))
        room_add(room, p, i);
}

/* Types that hold `limit` more pods (fit_count >= limit), found with the pool's index: for each requested resource,
 * the types with at least used + limit x request of it. The common case, since a claim usually has some type with
 * room for the whole batch. False when none does. */
static bool keep_full_batch(sched *s, const sched_pool *p, const uint64_t *a, const uint64_t *b, const sched_claim *c,
                            const sched_group *g, uint64_t pairs, int64_t limit, uint64_t *keep, sched_room *room)
{
    for (size_t w = 0; w < p->words; w++)
        keep[w] = a[w] & b[w];
    for (size_t d = 0; d < s->n_dims; d++) {
        if (g->req.v[d] <= 0)
            continue;
        if (limit > (INT64_MAX - (c->used.v[d] > 0 ? c->used.v[d] : 0)) / g->req.v[d])
            return false;
        sched_pool_index_at_least(p, d, c->used.v[d] + limit * g->req.v[d], keep);
    }
    sched_pool_index_offered(p, pairs, s->pairs_scratch, keep);
    if (!sched_bits_any(keep, p->words))
        return false;
    sched_pool_index_room(p, keep, room);
    return true;
}

int64_t sched_fit_types(sched *s, const sched_pool *p, const sched_claim *c, const sched_group *g, uint64_t pairs,
                        int64_t limit, bool merged_min_values, uint64_t *keep, sched_room *room, char *why,
                        size_t len)
{
    const uint64_t *a = c->types, *b = g->pool_bits + c->pool * s->max_words;
    if (keep_full_batch(s, p, a, b, c, g, pairs, limit, keep, room) &&
        (!merged_min_values || all_min_values_ok(s, p, keep, pairs, &c->reqs, &g->reqs, NULL, 0)))
        return limit;
    int64_t best = 0;
    for (size_t w = 0; w < p->words; w++) {
        uint64_t bits = a[w] & b[w];
        while (bits) {
            size_t i = w * 64 + (size_t)__builtin_ctzll(bits);
            bits &= bits - 1;
            int64_t f = (p->offers[i] & pairs) ? sched_fit_count(s, &p->alloc[i], &c->used, &g->req, limit) : 0;
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
        if (!merged_min_values || all_min_values_ok(s, p, keep, pairs, &c->reqs, &g->reqs, why, len)) {
            sched_room_of(p, keep, room);
            return k;
        }
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
