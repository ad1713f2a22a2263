/*
 * Set queries over a pool's instance types, answered with bitsets instead of a scan: "types whose allocatable of
 * resource d is at least x" (types sorted by each resource, with the bitset of every suffix of that order) and
 * "types with an available offering in any of these (zone, capacity type) pairs". A claim's fit check then
 * costs a few binary searches and word ANDs, not one comparison per type, which is what dominates with hundreds of
 * types (Karpenter's benchmark has 400).
 */
#ifndef NS_SCHED_POOL_INDEX_H
#define NS_SCHED_POOL_INDEX_H

#include <stdbool.h>
#include <stdint.h>

#include "sched/sched_internal.h"

/* Builds the index of a pool whose types, alloc and offers are final. 0 or NS_ERR_INTERNAL. */
int sched_pool_index_build(const sched *s, sched_pool *p);
void sched_pool_index_free(sched_pool *p);
/* out &= types whose allocatable of dimension d is >= x. */
void sched_pool_index_at_least(const sched_pool *p, size_t d, int64_t x, uint64_t *out);
/* out &= types with an available offering in `pairs`; scratch holds p->words words. */
void sched_pool_index_offered(const sched_pool *p, uint64_t pairs, uint64_t *scratch, uint64_t *out);
/* out = every type of the pool. */
void sched_pool_index_all(const sched_pool *p, uint64_t *out);
/* The pairs offered by the types in `types`, and the most allocatable cpu, memory and pods among them. */
void sched_pool_index_room(const sched_pool *p, const uint64_t *types, sched_room *room);

#endif
