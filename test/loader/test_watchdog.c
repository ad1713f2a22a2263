/* The watchdog (plugin_watchdog.h) against real broken plugins (test_plugin.c's TP_CRASH_IN, TP_HANG_IN,
 * TP_LATE_CALLBACK): hangs become failed calls naming the provider and the method, crashes end the process with a
 * line naming them. */
#include <check.h>
#include <dlfcn.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "errors/ns_error.h"
#include "log/ns_log.h"
#include "plugin/plugin_loader.h"
#include "plugin/plugin_watchdog.h"

static char path_buf[4096];

static const char *variant(const char *name)
{
    snprintf(path_buf, sizeof(path_buf), "%s/%s.so", TP_DIR, name);
    return path_buf;
}

#define ck_assert_error_has(needle)                                                                                    \
    ck_assert_msg(strstr(ns_error_message(), (needle)) != NULL, "error '%s' lacks '%s'", ns_error_message(), (needle))

/* Hangs are forever (the plugins sleep without end), so a short deadline cannot be missed by a slow build; calls
 * that must succeed get a long one, so the sanitizer build on a loaded machine cannot miss theirs. */
#define HANG_DEADLINE_MS 1000
#define CALL_DEADLINE_MS (120 * 1000)
/* A hung call must come back by this; far above the deadline, far below Check's limit. */
#define RETURN_BOUND_S 20.0
static const ns_plugin_load_params quick = {.call_timeout_ms = HANG_DEADLINE_MS};
static const ns_plugin_load_params patient = {.call_timeout_ms = CALL_DEADLINE_MS};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static ns_launch_request one_launch(ns_nodeclass *nc, ns_launch_option *opt)
{
    *nc = (ns_nodeclass){.struct_size = sizeof(*nc), .api_version = "tin.example.com/v1", .kind = "TinNodeClass",
                         .name = "tin"};
    static ns_json *spec;
    nc->spec = spec;
    *opt = (ns_launch_option){.struct_size = sizeof(*opt), .instance_type = "tp.small", .zone = "zone-a",
                              .capacity_type = "on-demand", .price_per_hour = 0.5};
    return (ns_launch_request){.struct_size = sizeof(ns_launch_request), .cluster_name = "c", .nodeclaim_name = "nc-1",
                               .nodepool_name = "default", .client_token = "token-1", .nodeclass = nc,
                               .options = opt, .n_options = 1};
}

/* ---- hangs: in this process */

START_TEST(entry_that_never_returns_is_a_failed_load)
{
    ns_plugin *p = NULL;
    double t0 = now_s();
    ck_assert_int_eq(ns_plugin_load_file(variant("hang_entry"), &quick, &p), NS_ERR_INVALID_CONFIG);
    ck_assert_double_lt(now_s() - t0, RETURN_BOUND_S);
    ck_assert_ptr_null(p);
    ck_assert_error_has("hang_entry.so: nodesmith_provider_entry(): did not return within 1000 ms");
}
END_TEST

START_TEST(init_that_never_returns_is_a_failed_load)
{
    ns_plugin *p = NULL;
    double t0 = now_s();
    ck_assert_int_eq(ns_plugin_load_file(variant("hang_init"), &quick, &p), NS_ERR_THROTTLED);
    ck_assert_double_lt(now_s() - t0, RETURN_BOUND_S);
    ck_assert_ptr_null(p);
    ck_assert_error_has("hang_init.so: provider hang_init: init: did not return within 1000 ms");
}
END_TEST

START_TEST(launch_that_never_returns_is_a_failed_launch)
{
    ns_plugin *p = NULL;
    ck_assert_int_eq(ns_plugin_load_file(variant("hang_launch"), &patient, &p), NS_OK);
    ns_nodeclass nc;
    ns_launch_option opt;
    ns_launch_request req = one_launch(&nc, &opt);
    ns_launch_result result;
    ns_plugin_set_call_timeout(p, HANG_DEADLINE_MS);
    double t0 = now_s();
    ck_assert_int_eq(ns_plugin_launch(p, &req, &result), NS_ERR_THROTTLED);
    ck_assert_double_lt(now_s() - t0, RETURN_BOUND_S);
    ck_assert_error_has("provider hang_launch: launch nc-1: did not return within 1000 ms");
    ck_assert_str_eq(result.provider_id, "");
    /* Other methods still work; the plugin is never destroyed under its hung call. */
    ns_plugin_set_call_timeout(p, CALL_DEADLINE_MS);
    bool gone = false;
    ck_assert_int_eq(ns_plugin_terminate(p, "tp:///zone-a/i-1", &gone), NS_OK);
    ck_assert(gone);
    ns_plugin_unload(p);
    void *h = dlopen(variant("hang_launch"), RTLD_NOW | RTLD_NOLOAD);
    ck_assert_ptr_nonnull(h);
    ck_assert_int_eq(*(int *)dlsym(h, "tp_destroy_calls"), 0);
}
END_TEST

static int count_calls(void *ctx, const ns_instance *inst)
{
    (void)inst;
    ++*(int *)ctx;
    return 0;
}

START_TEST(abandoned_call_never_calls_back)
{
    ns_plugin *p = NULL;
    ck_assert_int_eq(ns_plugin_load_file(variant("late_callback"), &patient, &p), NS_OK);
    ns_plugin_set_call_timeout(p, HANG_DEADLINE_MS); /* the plugin sleeps 3 s before calling back */
    int calls = 0;
    ck_assert_int_eq(ns_plugin_list_instances(p, count_calls, &calls), NS_ERR_THROTTLED);
    ck_assert_error_has("provider late_callback: list_instances: did not return within 1000 ms");
    /* The provider wakes up and calls back: wait for the core's answer, which must be a refusal. */
    void *h = dlopen(variant("late_callback"), RTLD_NOW | RTLD_NOLOAD);
    ck_assert_ptr_nonnull(h);
    atomic_int *done = dlsym(h, "tp_late_callback_done");
    int *late_rc = dlsym(h, "tp_late_callback_rc");
    ck_assert(done && late_rc);
    for (int i = 0; i < 600 && !atomic_load(done); i++)
        usleep(100 * 1000);
    ck_assert_msg(atomic_load(done), "the provider never called back");
    ck_assert_int_eq(*late_rc, NS_ERR_INTERNAL);
    ck_assert_int_eq(calls, 0);
    ns_plugin_unload(p);
}
END_TEST

static int slow_callback(void *ctx, const ns_instance *inst)
{
    (void)inst;
    usleep(1500 * 1000); /* longer than the deadline, which only the provider's own time counts against */
    ++*(int *)ctx;
    return 0;
}

START_TEST(time_in_callbacks_does_not_count)
{
    ns_plugin *p = NULL;
    ck_assert_int_eq(ns_plugin_load_file(variant("good"), &patient, &p), NS_OK);
    ns_plugin_set_call_timeout(p, HANG_DEADLINE_MS);
    int calls = 0;
    ck_assert_int_eq(ns_plugin_list_instances(p, slow_callback, &calls), NS_OK);
    ck_assert_int_eq(calls, 2);
    ns_plugin_unload(p);
}
END_TEST

START_TEST(deadline_from_the_environment)
{
    ns_plugin *p = NULL;
    setenv(NS_CALL_TIMEOUT_ENV, "soon", 1);
    ck_assert_int_eq(ns_plugin_load_file(variant("good"), NULL, &p), NS_ERR_INVALID_CONFIG);
    ck_assert_error_has("NODESMITH_PROVIDER_TIMEOUT=soon: want a positive duration");
    setenv(NS_CALL_TIMEOUT_ENV, "1s", 1);
    ck_assert_int_eq(ns_plugin_load_file(variant("hang_init"), NULL, &p), NS_ERR_THROTTLED);
    ck_assert_error_has("init: did not return within 1000 ms");
    unsetenv(NS_CALL_TIMEOUT_ENV);
}
END_TEST

/* ---- crashes: in a child process, whose stderr and end the test reads */

typedef enum { LOAD_ONLY, LOAD_AND_LAUNCH } child_job;

static void run_child(const char *name, child_job job, int *status, char *err, size_t err_len)
{
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        dup2(fds[1], STDERR_FILENO);
        close(fds[0]);
        ns_plugin *p = NULL;
        if (ns_plugin_load_file(variant(name), NULL, &p) != NS_OK)
            _exit(3);
        if (job == LOAD_AND_LAUNCH) {
            ns_nodeclass nc;
            ns_launch_option opt;
            ns_launch_request req = one_launch(&nc, &opt);
            ns_launch_result result;
            ns_plugin_launch(p, &req, &result);
        }
        _exit(0);
    }
    close(fds[1]);
    size_t n = 0;
    ssize_t r;
    while (n + 1 < err_len && (r = read(fds[0], err + n, err_len - 1 - n)) > 0)
        n += (size_t)r;
    err[n] = '\0';
    close(fds[0]);
    ck_assert_int_eq(waitpid(pid, status, 0), pid);
}

static void assert_crash_reported(const char *name, child_job job, const char *line)
{
    int status;
    char err[8192];
    run_child(name, job, &status, err, sizeof(err));
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV, "%s: want death by SIGSEGV, status %d; stderr %s",
                  name, status, err);
    ck_assert_msg(strstr(err, line) != NULL, "%s: stderr lacks '%s': %s", name, line, err);
}

START_TEST(crash_in_entry_names_the_plugin)
{
    assert_crash_reported("crash_entry", LOAD_ONLY,
                          "crash_entry.so crashed in nodesmith_provider_entry: SIGSEGV (invalid memory access)");
}
END_TEST

START_TEST(crash_in_init_names_provider_and_method)
{
    assert_crash_reported("crash_init", LOAD_ONLY, "nodesmith: provider crash_init crashed in init: SIGSEGV");
}
END_TEST

START_TEST(crash_in_launch_names_provider_and_method)
{
    assert_crash_reported("crash_launch", LOAD_AND_LAUNCH, "nodesmith: provider crash_launch crashed in launch: SIGSEGV");
}
END_TEST

int main(void)
{
    ns_log_set_level(NS_LOG_ERROR);
    Suite *s = suite_create("watchdog");
    TCase *tc = tcase_create("watchdog");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, entry_that_never_returns_is_a_failed_load);
    tcase_add_test(tc, init_that_never_returns_is_a_failed_load);
    tcase_add_test(tc, launch_that_never_returns_is_a_failed_launch);
    tcase_add_test(tc, abandoned_call_never_calls_back);
    tcase_add_test(tc, time_in_callbacks_does_not_count);
    tcase_add_test(tc, deadline_from_the_environment);
    tcase_add_test(tc, crash_in_entry_names_the_plugin);
    tcase_add_test(tc, crash_in_init_names_provider_and_method);
    tcase_add_test(tc, crash_in_launch_names_provider_and_method);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
