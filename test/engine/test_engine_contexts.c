/* Two engines in two threads at once, each in its own context (context/ns_ctx.h) with its own simulated clock, log
 * and error sink: each engine's decisions, history and NodeClaims carry its own clock's times, the provider's launch
 * times (host->now_ms) are its context's, each log holds only its own lines, each error sink only its own errors, and
 * the process's default context is untouched. The two threads step in lock-step so their work interleaves. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context/ns_ctx.h"
#include "engine/engine.h"
#include "errors/ns_error.h"
#include "manifest/loader.h"
#include "simulation/engine_sim.h"
#include "test_kinds.h"

static const char manifests[] =
    "apiVersion: nodesmith.io/v1\nkind: SimNodeClass\nmetadata: {name: default}\nspec: {}\n---\n"
    "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\nspec:\n  template:\n    spec:\n"
    "      nodeClassRef: {group: nodesmith.io, kind: SimNodeClass, name: default}\n"
    "      requirements: [{key: kubernetes.io/arch, operator: In, values: [amd64]}]\n---\n"
    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 4\n"
    "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n"
    "      containers: [{name: web, image: nginx, resources: {requests: {cpu: '2', memory: 1Gi}}}]\n";

#define RUN_MS (120 * 1000)
#define SLICES 12

static pthread_barrier_t lockstep;

typedef struct run {
    int64_t t0;
    const char *missing_id; /* an instance only this run asks for */
    ns_ctx *ctx;
    FILE *log;
    size_t sink_errors;
    bool sink_saw_own, sink_saw_other;
    /* results, checked by the main thread */
    int rc;
    char error[1024];
    int64_t clock_after;
    size_t decisions, decisions_out_of_window, launched, samples_out_of_window;
    size_t instances, launch_times_out_of_window;
    int get_missing_rc;
} run;

static run runs[2];

static void sink(void *arg, const ns_error_record *err)
{
    run *r = arg;
    r->sink_errors++;
    r->sink_saw_own = r->sink_saw_own || strstr(err->message, r->missing_id);
    r->sink_saw_other = r->sink_saw_other || strstr(err->message, runs[r == &runs[0]].missing_id);
}

static bool in_window(const run *r, int64_t t)
{
    return t >= r->t0 && t <= r->t0 + RUN_MS;
}

static int count_instance(void *ctx, const ns_instance *inst)
{
    run *r = ctx;
    r->instances++;
    r->launch_times_out_of_window += !in_window(r, inst->launch_time_ms);
    return NS_OK;
}

static void *drive(void *arg)
{
    run *r = arg;
    ns_cluster *cluster = test_cluster_new();
    ns_plugin *plugin = NULL;
    ns_engine *engine = NULL;
    ns_plugin_load_params params = {.ctx = r->ctx};
    r->rc = cluster ? ns_manifest_load_string(cluster, "contexts.yaml", manifests, strlen(manifests)) : NS_ERR_INTERNAL;
    if (r->rc == NS_OK)
        r->rc = ns_cluster_resolve(cluster);
    if (r->rc == NS_OK)
        r->rc = ns_plugin_load_file(SIM_SO, &params, &plugin);
    if (r->rc == NS_OK)
        r->rc = ns_engine_new(cluster, plugin, NULL, &engine);
    for (int i = 0; i < SLICES; i++) {
        pthread_barrier_wait(&lockstep);
        if (r->rc == NS_OK)
            r->rc = ns_engine_run_for(engine, RUN_MS / SLICES);
    }
    if (r->rc != NS_OK) {
        snprintf(r->error, sizeof(r->error), "%s", ns_error_message());
    } else {
        size_t n;
        const ns_decision *d = ns_engine_decisions(engine, &n);
        r->decisions = n;
        for (size_t i = 0; i < n; i++) {
            r->decisions_out_of_window += !in_window(r, d[i].time_ms);
            r->launched += d[i].kind == NS_DECISION_LAUNCHED_NODECLAIM;
        }
        const ns_engine_sample *h = ns_engine_history(engine, &n);
        for (size_t i = 0; i < n; i++)
            r->samples_out_of_window += !in_window(r, h[i].time_ms);
        ns_plugin_list_instances(plugin, count_instance, r);
        ns_instance inst;
        r->get_missing_rc = ns_plugin_get_instance(plugin, r->missing_id, &inst);
        r->clock_after = ns_ctx_now_ms(r->ctx);
    }
    ns_engine_free(engine);
    ns_plugin_unload(plugin);
    ns_cluster_free(cluster);
    return NULL;
}

/* Every line of the run's log carries a time in its own year. */
static void check_log(run *r, const char *year)
{
    char line[8192];
    size_t lines = 0;
    rewind(r->log);
    while (fgets(line, sizeof(line), r->log)) {
        lines++;
        char want[32];
        snprintf(want, sizeof(want), "\"time\":\"%s-", year);
        ck_assert_msg(strstr(line, want) != NULL, "a line of the %s run's log is not in %s: %s", year, year, line);
    }
    ck_assert_msg(lines > 5, "the %s run's log has %zu lines", year, lines);
}

START_TEST(test_two_engines_two_clocks)
{
    int64_t before = ns_ctx_now_ms(ns_ctx_default());
    runs[0] = (run){.t0 = INT64_C(1767225600000), .missing_id = "sim:///us-west-2a/i-00000000000000aa"}; /* 2026 */
    runs[1] = (run){.t0 = INT64_C(1924992000000), .missing_id = "sim:///us-west-2a/i-00000000000000bb"}; /* 2031 */
    pthread_t threads[2];
    ck_assert_int_eq(pthread_barrier_init(&lockstep, NULL, 2), 0);
    for (int i = 0; i < 2; i++) {
        run *r = &runs[i];
        ck_assert_ptr_nonnull(r->ctx = ns_ctx_new());
        ck_assert_ptr_nonnull(r->log = tmpfile());
        ns_ctx_use_simulated_clock(r->ctx, r->t0);
        ns_ctx_set_log_output(r->ctx, r->log);
        ns_ctx_set_error_sink(r->ctx, sink, r);
    }
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(pthread_create(&threads[i], NULL, drive, &runs[i]), 0);
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(pthread_join(threads[i], NULL), 0);
    pthread_barrier_destroy(&lockstep);
    const char *years[] = {"2026", "2031"};
    for (int i = 0; i < 2; i++) {
        run *r = &runs[i];
        ck_assert_msg(r->rc == NS_OK, "run %d: %s", i, r->error);
        ck_assert_int_eq(r->clock_after, r->t0 + RUN_MS);
        ck_assert_uint_gt(r->launched, 0);
        ck_assert_uint_eq(r->decisions_out_of_window, 0);
        ck_assert_uint_eq(r->samples_out_of_window, 0);
        ck_assert_uint_gt(r->instances, 0);
        ck_assert_uint_eq(r->launch_times_out_of_window, 0);
        ck_assert_int_eq(r->get_missing_rc, NS_ERR_NOT_FOUND);
        ck_assert_msg(r->sink_saw_own, "run %d's error sink missed its own provider error", i);
        ck_assert_msg(!r->sink_saw_other, "run %d's error sink saw the other run's error", i);
        check_log(r, years[i]);
        fclose(r->log);
        ns_ctx_free(r->ctx);
    }
    /* The default context kept its real clock. */
    ck_assert(!ns_ctx_clock_is_simulated(ns_ctx_default()));
    ck_assert_int_ge(ns_ctx_now_ms(ns_ctx_default()), before);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("engine-contexts");
    TCase *tc = tcase_create("contexts");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_two_engines_two_clocks);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
