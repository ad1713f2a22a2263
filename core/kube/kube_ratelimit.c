#include "kube/kube_ratelimit.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>

#include "clock/ns_clock.h"
#include "errors/ns_error.h"

struct ns_kube_limiter {
    pthread_mutex_t lock;
    double qps;
    double burst;
    /* Tokens available at `at_ms`; may go negative: each waiter reserves its token, then sleeps off the debt. */
    double tokens;
    int64_t at_ms;
};

ns_kube_limiter *ns_kube_limiter_new(double qps, int burst)
{
    ns_kube_limiter *l = calloc(1, sizeof(*l));
    if (!l) {
        NS_FAIL(NS_ERR_INTERNAL, "out of memory creating a rate limiter");
        return NULL;
    }
    pthread_mutex_init(&l->lock, NULL);
    l->qps = qps;
    l->burst = burst > 0 ? burst : 1;
    l->tokens = l->burst;
    l->at_ms = ns_clock_now_ms();
    return l;
}

void ns_kube_limiter_free(ns_kube_limiter *l)
{
    if (!l)
        return;
    pthread_mutex_destroy(&l->lock);
    free(l);
}

int64_t ns_kube_limiter_wait(ns_kube_limiter *l)
{
    if (!l || l->qps <= 0)
        return 0;
    pthread_mutex_lock(&l->lock);
    int64_t now = ns_clock_now_ms();
    l->tokens += (double)(now - l->at_ms) * l->qps / 1000.0;
    if (l->tokens > l->burst)
        l->tokens = l->burst;
    l->at_ms = now;
    l->tokens -= 1.0;
    int64_t wait = l->tokens >= 0 ? 0 : (int64_t)ceil(-l->tokens * 1000.0 / l->qps);
    pthread_mutex_unlock(&l->lock);
    if (wait > 0)
        ns_clock_sleep_ms(wait);
    return wait;
}

static int env_number(const char *name, double dflt, double *out)
{
    const char *v = getenv(name);
    *out = dflt;
    if (!v || !*v)
        return 0;
    char *end = NULL;
    errno = 0;
    double d = strtod(v, &end);
    if (errno != 0 || *end != '\0' || !(d > 0) || d > 1e6)
        return NS_FAIL(NS_ERR_INVALID_CONFIG, "%s=\"%s\" is not a positive number", name, v);
    *out = d;
    return 0;
}

int ns_kube_limits_from_env(double *qps, int *burst)
{
    double b = 0;
    int rc = env_number("KUBE_CLIENT_QPS", NS_KUBE_DEFAULT_QPS, qps);
    if (rc == 0 && (rc = env_number("KUBE_CLIENT_BURST", NS_KUBE_DEFAULT_BURST, &b)) == 0) {
        if (b != floor(b))
            return NS_FAIL(NS_ERR_INVALID_CONFIG, "KUBE_CLIENT_BURST=\"%s\" is not a whole number",
                           getenv("KUBE_CLIENT_BURST"));
        *burst = (int)b;
    }
    return rc;
}
