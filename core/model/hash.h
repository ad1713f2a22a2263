/*
 * FNV-1a (64-bit), the core's one non-cryptographic hash: hash tables, change signatures, the NodePool and node-class
 * hashes, event de-duplication keys and generated name suffixes. Callers pass their seed, so every value stays what
 * it was before this header gathered the copies: NS_HASH_SEED is the seed the model and engine have always used (FNV's
 * offset basis with its last digit dropped; changing it would change the karpenter.sh/nodepool-hash annotations of
 * existing NodeClaims, and so drift every node), NS_HASH_FNV_BASIS is FNV's own, which the Kubernetes client uses.
 */
#ifndef NS_HASH_H
#define NS_HASH_H

#include <stddef.h>
#include <stdint.h>

#define NS_HASH_SEED UINT64_C(1469598103934665603)
#define NS_HASH_FNV_BASIS UINT64_C(14695981039346656037)
#define NS_HASH_PRIME UINT64_C(1099511628211)

/* One FNV-1a step: a byte, or a whole word where a caller mixes in a number. */
static inline uint64_t ns_hash_step(uint64_t h, uint64_t v)
{
    return (h ^ v) * NS_HASH_PRIME;
}

static inline uint64_t ns_hash_bytes(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++)
        h = ns_hash_step(h, p[i]);
    return h;
}

/* The bytes of s (NULL hashes as ""). */
static inline uint64_t ns_hash_str(uint64_t h, const char *s)
{
    for (; s && *s; s++)
        h = ns_hash_step(h, (unsigned char)*s);
    return h;
}

/* A field of a composite key: s and then 0xff, a byte no UTF-8 text holds, so consecutive fields cannot run together
 * ("ab" + "c" differs from "a" + "bc"). */
static inline uint64_t ns_hash_field(uint64_t h, const char *s)
{
    return ns_hash_step(ns_hash_str(h, s), 0xff);
}

#endif
