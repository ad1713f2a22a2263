/*
 * Checked arithmetic on values that come from users, manifests, providers or the clock: the one place the core adds,
 * subtracts or multiplies such int64 values, so no sum of quantities or time plus duration can wrap.
 *
 * The bounds are the ones Kubernetes and Go keep: a quantity's value at its unit fits an int64 (resource.Quantity's
 * Value() and MilliValue()), and a duration is at most Go's time.Duration maximum, INT64_MAX nanoseconds
 * (2562047h47m16.854775807s), which is NS_DURATION_MAX_MS in the core's milliseconds.
 */
#ifndef NS_CHECKED_H
#define NS_CHECKED_H

#include <stdbool.h>
#include <stdint.h>

#define NS_DURATION_MAX_MS (INT64_MAX / 1000000)

/* a + b, a - b, a * b into *out: true when the exact result fits an int64, false (and *out untouched) otherwise. */
static inline bool ns_checked_add(int64_t a, int64_t b, int64_t *out)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r))
        return false;
    *out = r;
    return true;
}

static inline bool ns_checked_sub(int64_t a, int64_t b, int64_t *out)
{
    int64_t r;
    if (__builtin_sub_overflow(a, b, &r))
        return false;
    *out = r;
    return true;
}

static inline bool ns_checked_mul(int64_t a, int64_t b, int64_t *out)
{
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r))
        return false;
    *out = r;
    return true;
}

/* a + b clamped to [INT64_MIN, INT64_MAX]: for deadlines, where "later than any time" is the right reading of a
 * sum too large to hold (a deletion time plus a grace period of Go's maximum never comes). */
static inline int64_t ns_saturating_add(int64_t a, int64_t b)
{
    int64_t r;
    if (!__builtin_add_overflow(a, b, &r))
        return r;
    return b > 0 ? INT64_MAX : INT64_MIN;
}

#endif
