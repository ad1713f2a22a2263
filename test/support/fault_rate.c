#include "fault_rate.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "errors/ns_error.h"

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

void fr_name_claims(fr_run *r)
{
    unsigned run = (unsigned)time(NULL) ^ ((unsigned)getpid() << 12);
    for (int i = 0; i < FR_CLAIMS; i++)
        snprintf(r->claims[i].token, sizeof(r->claims[i].token), "fault-%x-%d", run, i);
}

typedef struct fr_thread {
    fr_run *run;
    int first;
} fr_thread;

static void *launch_thread(void *arg)
{
    const fr_thread *t = arg;
    fr_run *r = t->run;
    for (int i = t->first; i < t->first + FR_CLAIMS_PER_THREAD; i++) {
        fr_claim *c = &r->claims[i];
        ns_launch_request req = {.struct_size = sizeof(req), .cluster_name = r->cluster_name,
                                 .nodeclaim_name = c->token, .nodepool_name = FR_NODEPOOL, .client_token = c->token,
                                 .nodeclass = r->nodeclass, .options = r->options, .n_options = r->n_options};
        int rc;
        do {
            c->result = (ns_launch_result){.struct_size = sizeof(c->result)};
            rc = ns_plugin_launch(r->plugin, &req, &c->result);
            c->tries++;
            bool retryable = rc == NS_ERR_THROTTLED || (r->capacity_is_retryable && rc == NS_ERR_INSUFFICIENT_CAPACITY);
            if (rc != NS_OK && !retryable && !c->bad_code) {
                c->bad_code = rc;
                snprintf(c->bad_message, sizeof(c->bad_message), "%s", ns_error_message());
            }
            if (rc != NS_OK)
                pause_ms(r->pause_ms);
        } while (rc != NS_OK && c->tries < r->max_tries);
    }
    return NULL;
}

int fr_launch_all(fr_run *r)
{
    pthread_t threads[FR_THREADS];
    fr_thread args[FR_THREADS];
    for (int t = 0; t < FR_THREADS; t++) {
        args[t] = (fr_thread){r, t * FR_CLAIMS_PER_THREAD};
        ck_assert_int_eq(pthread_create(&threads[t], NULL, launch_thread, &args[t]), 0);
    }
    for (int t = 0; t < FR_THREADS; t++)
        pthread_join(threads[t], NULL);
    int retried = 0;
    for (int i = 0; i < FR_CLAIMS; i++) {
        const fr_claim *c = &r->claims[i];
        ck_assert_msg(!c->bad_code, "%s: a launch failed with %s, not a retryable error: %s", c->token,
                      ns_err_name(c->bad_code), c->bad_message);
        ck_assert_msg(c->result.provider_id[0], "%s never launched in %d tries", c->token, r->max_tries);
        retried += c->tries > 1;
    }
    return retried;
}

static int collect(void *ctx, const ns_instance *inst)
{
    fr_listed *l = ctx;
    if (strcmp(inst->nodepool_name, FR_NODEPOOL) == 0 && l->n < 64)
        snprintf(l->ids[l->n++], NS_PROVIDER_ID_MAX, "%s", inst->provider_id);
    return 0;
}

void fr_list_pool(const fr_run *r, fr_listed *l)
{
    int rc, tries = 0;
    do {
        l->n = 0;
        rc = ns_plugin_list_instances(r->plugin, collect, l);
        ck_assert_msg(rc == NS_OK || rc == NS_ERR_THROTTLED, "list_instances: %s", ns_error_message());
    } while (rc != NS_OK && ++tries < r->max_tries);
    ck_assert_int_eq(rc, NS_OK);
}

void fr_terminate(const fr_run *r, const fr_listed *l)
{
    for (int i = 0; i < l->n; i++) {
        int rc, tries = 0;
        do {
            rc = ns_plugin_terminate(r->plugin, l->ids[i], NULL);
            ck_assert_msg(rc == NS_OK || rc == NS_ERR_THROTTLED, "terminate %s: %s", l->ids[i], ns_error_message());
        } while (rc != NS_OK && ++tries < r->max_tries);
        ck_assert_int_eq(rc, NS_OK);
    }
}

int fr_faults_injected(const cJSON *injected, const char *const kinds[], int n)
{
    int total = 0;
    for (int k = 0; k < n; k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(injected, kinds[k]);
        ck_assert_msg(cJSON_IsNumber(v) && v->valueint > 0, "no %s fault was injected", kinds[k]);
        total += v->valueint;
    }
    return total;
}

int fr_sum_counts(const cJSON *counts)
{
    int sum = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, counts)
        sum += cJSON_IsNumber(v) ? v->valueint : 0;
    return sum;
}

const char *fr_tag(const cJSON *resource, const char *tags, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(resource, tags), key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

int fr_run_test(const char *name, const TTest *test)
{
    Suite *s = suite_create(name);
    TCase *tc = tcase_create("faults");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed;
}
