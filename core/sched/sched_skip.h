/*
 * Claims a hostname count has blocked for good. Counts only grow during a round, so a claim that fails a hostname
 * spread check (its count reached maxSkew) or an anti-affinity check (a matching pod, or a pod whose term matches,
 * is on it) fails that check for every later pod with the same constraint. Each such condition keeps "next claim
 * not blocked" links over claim indices (union-find with path halving), so the scan for candidate claims jumps over
 * blocked claims instead of retrying each one: the hostname anti-affinity fifth of Karpenter's benchmark would
 * otherwise scan every earlier claim per pod.
 */
#ifndef NS_SCHED_SKIP_H
#define NS_SCHED_SKIP_H

#include <stddef.h>
#include <stdint.h>

typedef struct sched_skip {
    uint32_t *next; /* cap + 1 links; next[i] == i when claim i is not blocked; next[cap] == cap */
    size_t cap;
} sched_skip;

/* Makes room for claims [0, n). 0 or NS_ERR_INTERNAL. */
int sched_skip_reserve(sched_skip *k, size_t n);
/* Marks claim c blocked. */
void sched_skip_block(sched_skip *k, size_t c);
/* The first claim index >= c that is not blocked (c itself when beyond the reserved range). */
size_t sched_skip_find(sched_skip *k, size_t c);
void sched_skip_free(sched_skip *k); /* members; accepts NULL */

#endif
