/*
 * The AWS SDKs' "standard" retry mode (botocore/retries/standard.py and quota.py), as a pure module:
 *   - at most max_attempts attempts per call (default 3, the first included);
 *   - a retry waits min(r * 2^(n-1) s, 20 s), r uniform in [0, 1) and n the number of attempts made so far
 *     (exponential backoff with full jitter);
 *   - every retry takes tokens from a quota shared by all calls of a client (500 to start with): 5 for a throttling or
 *     transient error, 10 for a timeout. When the quota cannot pay, the call stops retrying. A call that succeeds
 *     without retries puts 1 token back; one that succeeds after retries puts back what its last retry took. The
 *     quota never grows beyond its capacity.
 */
#ifndef NS_AWS_RETRY_H
#define NS_AWS_RETRY_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "aws_errors.h"

#define AWS_RETRY_DEFAULT_MAX_ATTEMPTS 3
#define AWS_RETRY_QUOTA_CAPACITY 500
#define AWS_RETRY_COST 5
#define AWS_RETRY_TIMEOUT_COST 10
#define AWS_RETRY_NO_RETRY_INCREMENT 1
#define AWS_RETRY_MAX_BACKOFF_MS 20000

/* A client's retry quota; thread-safe. */
typedef struct aws_retry_quota {
    pthread_mutex_t lock;
    int available;
    int capacity;
} aws_retry_quota;

void aws_retry_quota_init(aws_retry_quota *q, int capacity);
void aws_retry_quota_destroy(aws_retry_quota *q);
int aws_retry_quota_available(aws_retry_quota *q);

/* A uniform random number in [0, 1). */
typedef double (*aws_random_fn)(void *ctx);

/* The default source: OpenSSL's RAND_bytes (thread-safe). */
double aws_retry_random(void *ctx);

typedef struct aws_retry_policy {
    int max_attempts;       /* >= 1 */
    int64_t max_backoff_ms; /* cap of one wait */
    aws_retry_quota *quota; /* shared by the client's calls */
    aws_random_fn random;
    void *random_ctx;
} aws_retry_policy;

/* One call's progress. Start each call with AWS_RETRY_CALL_INIT. */
typedef struct aws_retry_call {
    int attempts;      /* attempts made so far */
    int last_acquired; /* tokens the last retry took; 0 = none */
} aws_retry_call;
#define AWS_RETRY_CALL_INIT {1, 0}

typedef enum aws_retry_decision {
    AWS_RETRY_GO = 0,           /* wait *delay_ms, then attempt again */
    AWS_RETRY_NOT_RETRYABLE,    /* the error is not one retrying can fix */
    AWS_RETRY_ATTEMPTS_EXHAUSTED,
    AWS_RETRY_QUOTA_EXHAUSTED,
} aws_retry_decision;

/* Decides after a failed attempt of kind `kind`. On AWS_RETRY_GO, *delay_ms is set, tokens are taken from the quota
 * and call->attempts counts the attempt about to be made. */
aws_retry_decision aws_retry_after_failure(const aws_retry_policy *p, aws_retry_call *call, aws_retry_kind kind,
                                           int64_t *delay_ms);

/* Records a successful answer (2xx): gives tokens back to the quota as described above. */
void aws_retry_after_success(const aws_retry_policy *p, const aws_retry_call *call);

/* A short name for a decision, for messages. */
const char *aws_retry_decision_name(aws_retry_decision d);

#endif
