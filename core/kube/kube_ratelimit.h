/*
 * A client-side token bucket, as client-go's flowcontrol.NewTokenBucketRateLimiter: `burst` tokens at most,
 * refilled at `qps` per second; each request takes one, waiting for it when the bucket is empty. Karpenter sets
 * KUBE_CLIENT_QPS 200 and KUBE_CLIENT_BURST 300; leader election has a limiter of its own so throttled controllers
 * never delay lease renewal. Thread-safe; waits on the real clock (ns_clock_sleep_ms).
 */
#ifndef NS_KUBE_RATELIMIT_H
#define NS_KUBE_RATELIMIT_H

#include <stdint.h>

#define NS_KUBE_DEFAULT_QPS 200.0
#define NS_KUBE_DEFAULT_BURST 300

typedef struct ns_kube_limiter ns_kube_limiter;

/* qps <= 0 disables limiting. NULL with NS_ERR_INTERNAL on allocation failure. */
ns_kube_limiter *ns_kube_limiter_new(double qps, int burst);
void ns_kube_limiter_free(ns_kube_limiter *l); /* accepts NULL */

/* Takes a token, first sleeping as long as needed; returns the milliseconds waited. */
int64_t ns_kube_limiter_wait(ns_kube_limiter *l);

/* KUBE_CLIENT_QPS / KUBE_CLIENT_BURST from the environment, defaulting to Karpenter's 200 / 300. NS_ERR_INVALID_CONFIG
 * naming the variable when one is not a positive number. */
int ns_kube_limits_from_env(double *qps, int *burst);

#endif
