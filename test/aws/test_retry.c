/* The standard-mode retry policy: attempts, backoff with full jitter, and the shared retry quota. */
#include <check.h>
#include <stdlib.h>

#include "aws_retry.h"

static double fixed_random(void *ctx)
{
    return *(double *)ctx;
}

static aws_retry_policy policy(aws_retry_quota *q, double *r)
{
    return (aws_retry_policy){AWS_RETRY_DEFAULT_MAX_ATTEMPTS, AWS_RETRY_MAX_BACKOFF_MS, q, fixed_random, r};
}

START_TEST(test_backoff_and_attempts)
{
    aws_retry_quota q;
    aws_retry_quota_init(&q, AWS_RETRY_QUOTA_CAPACITY);
    double r = 0.5;
    aws_retry_policy p = policy(&q, &r);
    aws_retry_call call = AWS_RETRY_CALL_INIT;
    int64_t delay = -1;
    /* attempt 1 failed: wait r * 1 s */
    ck_assert_int_eq(aws_retry_after_failure(&p, &call, AWS_RETRY_THROTTLING, &delay), AWS_RETRY_GO);
    ck_assert_int_eq(delay, 500);
    ck_assert_int_eq(call.attempts, 2);
    /* attempt 2 failed: wait r * 2 s */
    ck_assert_int_eq(aws_retry_after_failure(&p, &call, AWS_RETRY_TRANSIENT, &delay), AWS_RETRY_GO);
    ck_assert_int_eq(delay, 1000);
    /* attempt 3 failed: the default allows three attempts in all */
    ck_assert_int_eq(aws_retry_after_failure(&p, &call, AWS_RETRY_TRANSIENT, &delay), AWS_RETRY_ATTEMPTS_EXHAUSTED);
    ck_assert_int_eq(aws_retry_quota_available(&q), 490);
    aws_retry_quota_destroy(&q);
}
END_TEST

START_TEST(test_backoff_cap_and_jitter_range)
{
    double r = 0.999;
    aws_retry_policy p = {10, AWS_RETRY_MAX_BACKOFF_MS, NULL, fixed_random, &r};
    aws_retry_call call = AWS_RETRY_CALL_INIT;
    int64_t delay = 0, previous = -1;
    for (int i = 0; i < 9; i++) {
        ck_assert_int_eq(aws_retry_after_failure(&p, &call, AWS_RETRY_THROTTLING, &delay), AWS_RETRY_GO);
        ck_assert_int_le(delay, AWS_RETRY_MAX_BACKOFF_MS);
        ck_assert_int_ge(delay, previous);
        previous = delay;
    }
    ck_assert_int_eq(delay, AWS_RETRY_MAX_BACKOFF_MS); /* 0.999 * 256 s is capped at 20 s */

    /* The real random source stays within [0, 2^(n-1)) seconds. */
    aws_retry_policy real = {AWS_RETRY_DEFAULT_MAX_ATTEMPTS, AWS_RETRY_MAX_BACKOFF_MS, NULL, NULL, NULL};
    int64_t sum = 0;
    for (int i = 0; i < 200; i++) {
        aws_retry_call c = AWS_RETRY_CALL_INIT;
        ck_assert_int_eq(aws_retry_after_failure(&real, &c, AWS_RETRY_TRANSIENT, &delay), AWS_RETRY_GO);
        ck_assert(delay >= 0 && delay < 1000);
        sum += delay;
    }
    ck_assert(sum > 200 * 200 && sum < 200 * 800); /* the mean of 200 uniform draws lies near 500 ms */
}
END_TEST

START_TEST(test_not_retryable)
{
    double r = 0.1;
    aws_retry_quota q;
    aws_retry_quota_init(&q, AWS_RETRY_QUOTA_CAPACITY);
    aws_retry_policy p = policy(&q, &r);
    aws_retry_call call = AWS_RETRY_CALL_INIT;
    int64_t delay = -1;
    ck_assert_int_eq(aws_retry_after_failure(&p, &call, AWS_RETRY_NO, &delay), AWS_RETRY_NOT_RETRYABLE);
    ck_assert_int_eq(delay, -1);
    ck_assert_int_eq(aws_retry_quota_available(&q), AWS_RETRY_QUOTA_CAPACITY);
    aws_retry_quota_destroy(&q);
}
END_TEST

START_TEST(test_quota_costs_and_refunds)
{
    aws_retry_quota q;
    aws_retry_quota_init(&q, 22);
    double r = 0.0;
    aws_retry_policy p = policy(&q, &r);
    p.max_attempts = 100;
    aws_retry_call call = AWS_RETRY_CALL_INIT;
    int64_t delay;
    ck_assert_int_eq(aws_retry_after_failure(&p, &call, AWS_RETRY_TIMEOUT, &delay), AWS_RETRY_GO); /* 22 -> 12 */
    ck_assert_int_eq(aws_retry_after_failure(&p, &call, AWS_RETRY_THROTTLING, &delay), AWS_RETRY_GO); /* 12 -> 7 */
    ck_assert_int_eq(aws_retry_after_failure(&p, &call, AWS_RETRY_TIMEOUT, &delay), AWS_RETRY_QUOTA_EXHAUSTED);
    ck_assert_int_eq(aws_retry_after_failure(&p, &call, AWS_RETRY_TRANSIENT, &delay), AWS_RETRY_GO); /* 7 -> 2 */
    ck_assert_int_eq(aws_retry_quota_available(&q), 2);
    ck_assert_int_eq(aws_retry_after_failure(&p, &call, AWS_RETRY_TRANSIENT, &delay), AWS_RETRY_QUOTA_EXHAUSTED);
    /* success after retries gives back what the last retry took (5) */
    aws_retry_after_success(&p, &call);
    ck_assert_int_eq(aws_retry_quota_available(&q), 7);
    /* success at the first attempt gives back 1 */
    aws_retry_call fresh = AWS_RETRY_CALL_INIT;
    aws_retry_after_success(&p, &fresh);
    ck_assert_int_eq(aws_retry_quota_available(&q), 8);
    /* never above capacity */
    for (int i = 0; i < 100; i++)
        aws_retry_after_success(&p, &fresh);
    ck_assert_int_eq(aws_retry_quota_available(&q), 22);
    aws_retry_quota_destroy(&q);
}
END_TEST

START_TEST(test_decision_names)
{
    ck_assert_str_eq(aws_retry_decision_name(AWS_RETRY_QUOTA_EXHAUSTED), "retry quota exhausted");
    ck_assert_str_eq(aws_retry_kind_name(AWS_RETRY_TIMEOUT), "timeout");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("aws_retry");
    TCase *tc = tcase_create("standard");
    tcase_add_test(tc, test_backoff_and_attempts);
    tcase_add_test(tc, test_backoff_cap_and_jitter_range);
    tcase_add_test(tc, test_not_retryable);
    tcase_add_test(tc, test_quota_costs_and_refunds);
    tcase_add_test(tc, test_decision_names);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
