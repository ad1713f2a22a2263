#include "aws_retry.h"

#include <math.h>

#include <openssl/rand.h>

void aws_retry_quota_init(aws_retry_quota *q, int capacity)
{
    pthread_mutex_init(&q->lock, NULL);
    q->available = capacity;
    q->capacity = capacity;
}

void aws_retry_quota_destroy(aws_retry_quota *q)
{
    if (q)
        pthread_mutex_destroy(&q->lock);
}

int aws_retry_quota_available(aws_retry_quota *q)
{
    pthread_mutex_lock(&q->lock);
    int n = q->available;
    pthread_mutex_unlock(&q->lock);
    return n;
}

static bool quota_acquire(aws_retry_quota *q, int amount)
{
    pthread_mutex_lock(&q->lock);
    bool ok = q->available >= amount;
    if (ok)
        q->available -= amount;
    pthread_mutex_unlock(&q->lock);
    return ok;
}

static void quota_release(aws_retry_quota *q, int amount)
{
    pthread_mutex_lock(&q->lock);
    q->available = q->available + amount > q->capacity ? q->capacity : q->available + amount;
    pthread_mutex_unlock(&q->lock);
}

double aws_retry_random(void *ctx)
{
    uint64_t r = 0;
    if (RAND_bytes((unsigned char *)&r, sizeof(r)) != 1)
        return 0.5; /* RAND_bytes only fails when the generator cannot seed; a fixed midpoint keeps backoff sane */
    return (double)(r >> 11) / 9007199254740992.0; /* 53 random bits -> [0, 1) */
}

aws_retry_decision aws_retry_after_failure(const aws_retry_policy *p, aws_retry_call *call, aws_retry_kind kind,
                                           int64_t *delay_ms)
{
    if (kind == AWS_RETRY_NO)
        return AWS_RETRY_NOT_RETRYABLE;
    if (call->attempts >= p->max_attempts)
        return AWS_RETRY_ATTEMPTS_EXHAUSTED;
    int cost = kind == AWS_RETRY_TIMEOUT ? AWS_RETRY_TIMEOUT_COST : AWS_RETRY_COST;
    if (p->quota && !quota_acquire(p->quota, cost))
        return AWS_RETRY_QUOTA_EXHAUSTED;
    call->last_acquired = p->quota ? cost : 0;
    double r = p->random ? p->random(p->random_ctx) : aws_retry_random(NULL);
    double wait = r * 1000.0 * ldexp(1.0, call->attempts - 1);
    *delay_ms = wait > (double)p->max_backoff_ms ? p->max_backoff_ms : (int64_t)wait;
    call->attempts++;
    return AWS_RETRY_GO;
}

void aws_retry_after_success(const aws_retry_policy *p, const aws_retry_call *call)
{
    if (!p->quota)
        return;
    quota_release(p->quota, call->last_acquired ? call->last_acquired : AWS_RETRY_NO_RETRY_INCREMENT);
}

const char *aws_retry_decision_name(aws_retry_decision d)
{
    switch (d) {
    case AWS_RETRY_GO:
        return "retrying";
    case AWS_RETRY_NOT_RETRYABLE:
        return "not retryable";
    case AWS_RETRY_ATTEMPTS_EXHAUSTED:
        return "attempts exhausted";
    case AWS_RETRY_QUOTA_EXHAUSTED:
        return "retry quota exhausted";
    }
    return "unknown";
}
