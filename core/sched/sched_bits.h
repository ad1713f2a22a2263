/*
 * Bitsets over instance types (bit i = the i-th cheapest type of a NodePool), as arrays of 64-bit words.
 */
#ifndef NS_SCHED_BITS_H
#define NS_SCHED_BITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

static inline size_t sched_bits_words(size_t n)
{
    return (n + 63) / 64;
}

static inline void sched_bits_set(uint64_t *b, size_t i)
{
    b[i / 64] |= UINT64_C(1) << (i % 64);
}

static inline bool sched_bits_get(const uint64_t *b, size_t i)
{
    return (b[i / 64] >> (i % 64)) & 1u;
}

static inline void sched_bits_clear(uint64_t *b, size_t i)
{
    b[i / 64] &= ~(UINT64_C(1) << (i % 64));
}

static inline bool sched_bits_any(const uint64_t *b, size_t words)
{
    for (size_t w = 0; w < words; w++)
        if (b[w])
            return true;
    return false;
}

static inline size_t sched_bits_count(const uint64_t *b, size_t words)
{
    size_t n = 0;
    for (size_t w = 0; w < words; w++)
        n += (size_t)__builtin_popcountll(b[w]);
    return n;
}

/* Iterate set bits: for (size_t i = sched_bits_first(b, w); i != SIZE_MAX; i = sched_bits_next(b, w, i)) */
static inline size_t sched_bits_next(const uint64_t *b, size_t words, size_t after)
{
    size_t i = after + 1;
    size_t w = i / 64;
    if (w >= words)
        return SIZE_MAX;
    uint64_t cur = b[w] & (~UINT64_C(0) << (i % 64));
    for (;;) {
        if (cur)
            return w * 64 + (size_t)__builtin_ctzll(cur);
        if (++w >= words)
            return SIZE_MAX;
        cur = b[w];
    }
}

static inline size_t sched_bits_first(const uint64_t *b, size_t words)
{
    return sched_bits_next(b, words, (size_t)-1);
}

#endif
