/* Resource vectors and the arena that holds them, and the zone and capacity-type indices behind the pair masks. */
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "model/labels.h"
#include "sched/sched_internal.h"

static const char *const sched_cts[SCHED_N_CT] = {NS_CAPACITY_SPOT, NS_CAPACITY_ON_DEMAND, NS_CAPACITY_RESERVED};

/* Names are interned (model/intern.h), so a pointer comparison finds them. */
static int ext_index(const sched *s, const char *name)
{
    for (size_t i = SCHED_EXT0; i < s->n_dims; i++)
        if (s->ext_names[i - SCHED_EXT0] == name)
            return (int)i;
    return -1;
}

int sched_dims_add(sched *s, const ns_res *r)
{
    for (uint32_t i = 0; i < r->n_ext; i++) {
        if (ext_index(s, r->ext[i].name) >= 0)
            continue;
        size_t n = s->n_dims - SCHED_EXT0;
        if (n == s->cap_ext_names) {
            size_t cap = s->cap_ext_names ? 2 * s->cap_ext_names : 8;
            const char **grown = realloc(s->ext_names, cap * sizeof(*grown));
            if (!grown)
                return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory adding extended resource %s",
                               r->ext[i].name);
            s->ext_names = grown;
            s->cap_ext_names = cap;
        }
        s->ext_names[n] = r->ext[i].name;
        s->n_dims++;
    }
    return NS_OK;
}

/* Blocks of at least 64 KiB: a round's vectors are a few per pool, type, node and pod group. */
struct sched_block {
    sched_block *next;
    size_t used, cap; /* in int64_t units */
    int64_t data[];
};

#define SCHED_BLOCK_MIN 8192

void *sched_arena_alloc(sched *s, size_t bytes)
{
    size_t words = (bytes + sizeof(int64_t) - 1) / sizeof(int64_t);
    sched_block *b = s->arena;
    if (!b || b->cap - b->used < words) {
        size_t cap = words > SCHED_BLOCK_MIN ? words : SCHED_BLOCK_MIN;
        if (!(b = calloc(1, sizeof(*b) + cap * sizeof(int64_t))))
            return NULL;
        b->cap = cap;
        b->next = s->arena;
        s->arena = b;
    }
    void *at = b->data + b->used;
    b->used += words;
    return at;
}

void sched_arena_free(sched *s)
{
    while (s->arena) {
        sched_block *next = s->arena->next;
        free(s->arena);
        s->arena = next;
    }
}

int sched_vec_init(sched *s, sched_vec *v)
{
    if (!(v->v = sched_arena_alloc(s, s->n_dims * sizeof(int64_t))))
        return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory for a vector of %zu resources", s->n_dims);
    return NS_OK;
}

void sched_vec_from(const sched *s, const ns_res *r, sched_vec *out)
{
    memset(out->v, 0, s->n_dims * sizeof(int64_t));
    out->v[SCHED_CPU] = r->cpu_milli;
    out->v[SCHED_MEM] = r->memory_bytes;
    out->v[SCHED_EPH] = r->ephemeral_storage_bytes;
    out->v[SCHED_PODS] = r->pods;
    for (uint32_t i = 0; i < r->n_ext; i++) {
        int d = ext_index(s, r->ext[i].name);
        if (d >= 0)
            out->v[d] = r->ext[i].value;
    }
}

int sched_vec_to(const sched *s, const sched_vec *v, ns_res *out)
{
    ns_res_free(out);
    out->cpu_milli = v->v[SCHED_CPU];
    out->memory_bytes = v->v[SCHED_MEM];
    out->ephemeral_storage_bytes = v->v[SCHED_EPH];
    out->pods = v->v[SCHED_PODS];
    int rc = NS_OK;
    for (size_t d = SCHED_EXT0; rc == NS_OK && d < s->n_dims; d++)
        if (v->v[d] != 0)
            rc = ns_res_set(out, s->ext_names[d - SCHED_EXT0], v->v[d]);
    return rc;
}

int sched_zone_index(const sched *s, const char *zone)
{
    for (size_t i = 0; zone && i < s->n_zones; i++)
        if (strcmp(s->zones[i], zone) == 0)
            return (int)i;
    return -1;
}

int sched_ct_index(const char *capacity_type)
{
    for (int i = 0; capacity_type && i < SCHED_N_CT; i++)
        if (strcmp(sched_cts[i], capacity_type) == 0)
            return i;
    return -1;
}

const char *sched_ct_name(int index)
{
    return index >= 0 && index < SCHED_N_CT ? sched_cts[index] : NULL;
}

uint64_t sched_ct_pairs(const sched *s, int index)
{
    uint64_t pairs = 0;
    for (size_t z = 0; index >= 0 && z < s->n_zones; z++)
        pairs |= UINT64_C(1) << (z * SCHED_N_CT + (size_t)index);
    return pairs;
}

uint64_t sched_zone_pairs(int zone)
{
    return ((UINT64_C(1) << SCHED_N_CT) - 1) << (zone * SCHED_N_CT);
}

uint64_t sched_pairs_for(const sched *s, const ns_requirements *reqs)
{
    const ns_requirement *zr = ns_requirements_get(reqs, NS_LABEL_ZONE);
    const ns_requirement *cr = ns_requirements_get(reqs, NS_LABEL_CAPACITY_TYPE);
    uint64_t pairs = 0;
    for (size_t z = 0; z < s->n_zones; z++) {
        if (zr && !ns_requirement_has(zr, s->zones[z]))
            continue;
        for (int c = 0; c < SCHED_N_CT; c++)
            if (!cr || ns_requirement_has(cr, sched_cts[c]))
                pairs |= UINT64_C(1) << (z * SCHED_N_CT + (size_t)c);
    }
    return pairs;
}
