/*
 * Concurrency rules: the core calls a provider from many threads at once. Launches with distinct tokens give
 * distinct instances, and launches racing on one token give one instance. Threads only record what happened;
 * assertions run on the test's own thread, where Check can report them.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"

#define N_THREADS 8
#define LAUNCHES_PER_THREAD 4

typedef struct launch_job {
    pthread_barrier_t *start;
    const conf_choice *choices;
    size_t n_choices;
    size_t first;                /* index of the first choice this thread uses */
    const char *shared_token;    /* NULL: a fresh token per launch */
    size_t n_launches;
    int rc[LAUNCHES_PER_THREAD];
    char error[LAUNCHES_PER_THREAD][256];
    char provider_id[LAUNCHES_PER_THREAD][NS_PROVIDER_ID_MAX];
} launch_job;

static void *run_job(void *arg)
{
    launch_job *job = arg;

    pthread_barrier_wait(job->start);
    for (size_t i = 0; i < job->n_launches; i++) {
        char token[NS_NAME_MAX];
        ns_launch_result r;

        if (job->shared_token)
            snprintf(token, sizeof(token), "%s", job->shared_token);
        else
            conf_token(token, sizeof(token));
        job->rc[i] = conf_launch(&job->choices[(job->first + i) % job->n_choices], 1, token, &r);
        snprintf(job->error[i], sizeof(job->error[i]), "%s", job->rc[i] == NS_OK ? "" : conf_last_error());
        snprintf(job->provider_id[i], sizeof(job->provider_id[i]), "%s", job->rc[i] == NS_OK ? r.provider_id : "");
    }
    return NULL;
}

/* Runs N_THREADS jobs released together by a barrier; fills `ids` with every provider ID returned. */
static void run_jobs(launch_job *jobs, const char *rule, conf_ids *ids)
{
    pthread_t threads[N_THREADS];
    pthread_barrier_t start;

    ck_assert_int_eq(pthread_barrier_init(&start, NULL, N_THREADS), 0);
    for (size_t t = 0; t < N_THREADS; t++) {
        jobs[t].start = &start;
        ck_assert_msg(pthread_create(&threads[t], NULL, run_job, &jobs[t]) == 0, "conformance: starting thread %zu "
                      "failed", t);
    }
    for (size_t t = 0; t < N_THREADS; t++)
        pthread_join(threads[t], NULL);
    pthread_barrier_destroy(&start);
    memset(ids, 0, sizeof(*ids));
    for (size_t t = 0; t < N_THREADS; t++) {
        for (size_t i = 0; i < jobs[t].n_launches; i++) {
            ck_assert_msg(jobs[t].rc[i] == NS_OK, "[%s] launch %zu of thread %zu failed: %s", rule, i, t,
                          jobs[t].error[i]);
            ck_assert_int_eq(conf_ids_add(ids, jobs[t].provider_id[i]), NS_OK);
        }
    }
}

static size_t distinct(const conf_ids *ids)
{
    size_t n = 0;

    for (size_t i = 0; i < ids->n; i++) {
        bool earlier = false;

        for (size_t j = 0; j < i && !earlier; j++)
            earlier = strcmp(ids->ids[i], ids->ids[j]) == 0;
        n += !earlier;
    }
    return n;
}

START_TEST(test_concurrent_distinct_tokens)
{
    const conf_choice *all;
    size_t n;
    launch_job jobs[N_THREADS];
    conf_ids ids, listed;

    all = conf_choices(&n);
    memset(jobs, 0, sizeof(jobs));
    for (size_t t = 0; t < N_THREADS; t++)
        jobs[t] = (launch_job){.choices = all, .n_choices = n, .first = t * LAUNCHES_PER_THREAD,
                               .n_launches = LAUNCHES_PER_THREAD};
    run_jobs(jobs, "concurrent-launch", &ids);
    CONF_CHECK("concurrent-launch", distinct(&ids) == N_THREADS * LAUNCHES_PER_THREAD,
               "%d threads x %d launches with distinct client tokens gave %zu distinct instances (want %d)", N_THREADS,
               LAUNCHES_PER_THREAD, distinct(&ids), N_THREADS * LAUNCHES_PER_THREAD);
    conf_list(&listed);
    for (size_t i = 0; i < ids.n; i++)
        CONF_CHECK("concurrent-launch", conf_ids_contains(&listed, ids.ids[i]),
                   "instance %s launched concurrently is missing from list_instances", ids.ids[i]);
    conf_ids_free(&ids);
    conf_ids_free(&listed);
    conf_release_all();
}
END_TEST

START_TEST(test_concurrent_same_token)
{
    const conf_choice *all;
    size_t n;
    launch_job jobs[N_THREADS];
    conf_ids ids, before, after;
    char token[NS_NAME_MAX];
    size_t fresh = 0;

    all = conf_choices(&n);
    conf_token(token, sizeof(token));
    conf_list(&before);
    memset(jobs, 0, sizeof(jobs));
    /* Every thread sends the same request, as a retried launch would. */
    for (size_t t = 0; t < N_THREADS; t++)
        jobs[t] = (launch_job){.choices = all, .n_choices = n, .first = 0, .shared_token = token, .n_launches = 1};
    run_jobs(jobs, "concurrent-idempotent", &ids);
    CONF_CHECK("concurrent-idempotent", distinct(&ids) == 1,
               "%d threads launching at once with client token %s got %zu distinct instances (want 1)", N_THREADS,
               token, distinct(&ids));
    conf_list(&after);
    for (size_t i = 0; i < after.n; i++)
        fresh += !conf_ids_contains(&before, after.ids[i]);
    CONF_CHECK("concurrent-idempotent", fresh == 1,
               "%d threads launching at once with client token %s left %zu new instances in list_instances (want 1)",
               N_THREADS, token, fresh);
    conf_ids_free(&ids);
    conf_ids_free(&before);
    conf_ids_free(&after);
    conf_release_all();
}
END_TEST

Suite *conf_suite_threads(void)
{
    Suite *s = suite_create("concurrency");
    TCase *tc = tcase_create("threads");

    tcase_add_checked_fixture(tc, conf_setup, conf_teardown);
    tcase_set_timeout(tc, conf_cfg.timeout_s);
    tcase_add_test(tc, test_concurrent_distinct_tokens);
    tcase_add_test(tc, test_concurrent_same_token);
    suite_add_tcase(s, tc);
    return s;
}
