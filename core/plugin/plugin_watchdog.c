#include "plugin/plugin_watchdog.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config/scalar_parse.h"
#include "context/ns_ctx.h"
#include "errors/ns_error.h"
#include "plugin/plugin_workers.h"


struct ns_call {
    pthread_mutex_t lock;
    pthread_cond_t cond; /* on CLOCK_MONOTONIC */
    int refs;            /* the caller's and the worker's */
    bool done, abandoned;
    int in_callback;
    int64_t callback_ms; /* time spent in the caller's callbacks: it extends the deadline */
    int64_t callback_start_ms;
    int rc;
    ns_error_record err;
    ns_ctx *ctx; /* the caller's current context, entered by the worker */
    char who[256];
    char method[64];
    int (*fn)(void *);
    void *arg;
    void (*free_arg)(void *);
};

/* The call the running thread is inside (read by the crash handler), and whether it is in one of the core's
 * callbacks rather than in the provider. */
static _Thread_local ns_call *tl_call;
static _Thread_local bool tl_in_callback;

static void (*_Atomic crash_hook)(const char *line);

static const int crash_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
static struct sigaction previous_action[sizeof(crash_signals) / sizeof(crash_signals[0])];
static pthread_once_t handler_once = PTHREAD_ONCE_INIT;

static int64_t monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int ns_call_default_timeout(int64_t *out_ms)
{
    const char *env = getenv(NS_CALL_TIMEOUT_ENV);
    *out_ms = NS_CALL_TIMEOUT_DEFAULT_MS;
    if (!env || !*env)
        return NS_OK;
    int64_t ms;
    if (ns_parse_duration_ms(env, &ms) != 0 || ms <= 0)
        return NS_FAIL(NS_ERR_INVALID_CONFIG, "%s=%.64s: want a positive duration such as 90s or 5m",
                       NS_CALL_TIMEOUT_ENV, env);
    *out_ms = ms;
    return NS_OK;
}

void ns_call_set_crash_hook(void (*hook)(const char *line))
{
    atomic_store(&crash_hook, hook);
}

/* ---- crash reporting (async-signal-safe: fixed buffers, write(2)) */

static size_t append(char *buf, size_t len, size_t cap, const char *s)
{
    while (*s && len + 1 < cap)
        buf[len++] = *s++;
    buf[len] = '\0';
    return len;
}

static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGSEGV: return "SIGSEGV (invalid memory access)";
    case SIGBUS: return "SIGBUS (bus error)";
    case SIGILL: return "SIGILL (illegal instruction)";
    case SIGFPE: return "SIGFPE (arithmetic fault)";
    case SIGABRT: return "SIGABRT (aborted)";
    default: return "a fatal signal";
    }
}

static size_t signal_index(int sig)
{
    for (size_t i = 0; i < sizeof(crash_signals) / sizeof(crash_signals[0]); i++)
        if (crash_signals[i] == sig)
            return i;
    return 0;
}

/* A fault outside a provider call is not the watchdog's: give it to whoever handled it before (a sanitizer, or
 * the default action, which the returning fault then meets again). */
static void chain(int sig, siginfo_t *info, void *uctx)
{
    const struct sigaction *prev = &previous_action[signal_index(sig)];
    if ((prev->sa_flags & SA_SIGINFO) && prev->sa_sigaction) {
        prev->sa_sigaction(sig, info, uctx);
        return;
    }
    if (prev->sa_handler != SIG_DFL && prev->sa_handler != SIG_IGN) {
        prev->sa_handler(sig);
        return;
    }
    signal(sig, SIG_DFL);
    if (sig == SIGABRT || (info && info->si_code <= 0)) /* sent, not a fault: it would not come back by itself */
        raise(sig);
}

static void on_crash(int sig, siginfo_t *info, void *uctx)
{
    ns_call *c = tl_call;
    if (!c || tl_in_callback) {
        chain(sig, info, uctx);
        return;
    }
    char line[512];
    size_t n = 0;
    size_t cap = sizeof(line) - 1; /* room for the newline */
    line[0] = '\0';
    n = append(line, n, cap, "nodesmith: provider ");
    n = append(line, n, cap, c->who);
    n = append(line, n, cap, " crashed in ");
    n = append(line, n, cap, c->method);
    n = append(line, n, cap, ": ");
    n = append(line, n, cap, signal_name(sig));
    n = append(line, n, cap, "; the process stops (a crash inside a plugin cannot be recovered)");
    line[n] = '\n'; /* one write, so the line stays whole */
    if (write(STDERR_FILENO, line, n + 1) < 0) {
        /* Nothing else to tell anyone with. */
    }
    line[n] = '\0';
    void (*hook)(const char *) = atomic_load(&crash_hook);
    if (hook)
        hook(line);
    signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
    _exit(128 + sig);
}

static void install_handler(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_crash;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof(crash_signals) / sizeof(crash_signals[0]); i++)
        sigaction(crash_signals[i], &sa, &previous_action[i]);
}

/* ---- calls */

static void call_free(ns_call *c)
{
    if (c->free_arg)
        c->free_arg(c->arg);
    pthread_cond_destroy(&c->cond);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

void ns_call_release(ns_call *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->lock);
    int left = --c->refs;
    pthread_mutex_unlock(&c->lock);
    if (left == 0)
        call_free(c);
}

/* Runs the call's function as the provider's: the crash handler names it while it runs. */
static int run_fn(ns_call *c)
{
    ns_call *outer = tl_call;
    bool outer_in_callback = tl_in_callback;
    tl_call = c;
    tl_in_callback = false;
    int rc = c->fn(c->arg);
    tl_call = outer;
    tl_in_callback = outer_in_callback;
    return rc;
}

/* A call as a worker runs it (plugin_workers.h): in the caller's context, its error record handed back. */
static void run_call(void *arg)
{
    ns_call *c = arg;
    ns_ctx *previous = ns_ctx_enter(c->ctx);
    ns_error_clear();
    int rc = run_fn(c);
    ns_ctx_leave(previous);
    /* The worker lets go of the call in the same step that says it is done: once its caller has the answer, no
     * reference of the worker's is left, so a process forked then (Check's test runner) has nothing half-held. */
    pthread_mutex_lock(&c->lock);
    c->rc = rc;
    c->err = *ns_error_last();
    c->done = true;
    bool last = --c->refs == 0; /* the caller gave up on the call and let go of it already */
    pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->lock);
    if (last)
        call_free(c);
}

static ns_call *call_new(const char *who, const char *method, int (*fn)(void *), void *arg, void (*free_arg)(void *))
{
    ns_call *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->cond, &attr);
    pthread_condattr_destroy(&attr);
    c->refs = 1;
    c->ctx = ns_ctx_current();
    snprintf(c->who, sizeof(c->who), "%s", who ? who : "?");
    snprintf(c->method, sizeof(c->method), "%s", method ? method : "?");
    c->fn = fn;
    c->arg = arg;
    c->free_arg = free_arg;
    return c;
}

/* Waits for the worker until the deadline, not counting time the worker spends in the caller's callbacks. Called and
 * returns with c->lock held; true when the call finished. */
static bool wait_for(ns_call *c, int64_t timeout_ms)
{
    int64_t start = monotonic_ms();
    while (!c->done) {
        if (c->in_callback) {
            pthread_cond_wait(&c->cond, &c->lock);
            continue;
        }
        int64_t deadline = start + timeout_ms + c->callback_ms;
        if (monotonic_ms() >= deadline)
            return false;
        struct timespec ts = {.tv_sec = deadline / 1000, .tv_nsec = (long)(deadline % 1000) * 1000000L};
        pthread_cond_timedwait(&c->cond, &c->lock, &ts);
    }
    return true;
}

static int abandon(ns_call *c, int64_t timeout_ms)
{
    c->abandoned = true;
    return NS_FAIL(NS_ERR_THROTTLED,
                   "did not return within %lld ms; the call is abandoned and counts as failed (the provider may "
                   "still finish it in the background; the deadline is --provider-timeout or %s)",
                   (long long)timeout_ms, NS_CALL_TIMEOUT_ENV);
}

int ns_call_run(const char *who, const char *method, int64_t timeout_ms, int (*fn)(void *arg), void *arg,
                void (*free_arg)(void *arg), ns_call **handle, bool *abandoned)
{
    *handle = NULL;
    if (abandoned)
        *abandoned = false;
    pthread_once(&handler_once, install_handler);
    ns_call *c = call_new(who, method, fn, arg, free_arg);
    if (!c)
        return NS_FAIL(NS_ERR_INTERNAL, "provider %s: %s: out of memory", who, method);
    *handle = c;
    if (timeout_ms <= 0) {
        ns_error_clear();
        return run_fn(c);
    }
    c->refs = 2;
    int err = ns_workers_submit(run_call, c);
    if (err != 0) {
        c->refs = 1;
        return NS_FAIL(NS_ERR_THROTTLED, "provider %s: %s: cannot start a worker thread: %s", who, method,
                       strerror(err));
    }
    pthread_mutex_lock(&c->lock);
    bool finished = wait_for(c, timeout_ms);
    int rc = finished ? c->rc : abandon(c, timeout_ms);
    if (finished)
        ns_error_restore(&c->err);
    pthread_mutex_unlock(&c->lock);
    if (abandoned)
        *abandoned = !finished;
    return rc;
}

bool ns_call_callback_enter(void)
{
    ns_call *c = tl_call;
    if (!c)
        return true;
    pthread_mutex_lock(&c->lock);
    bool go = !c->abandoned;
    if (go && c->in_callback++ == 0)
        c->callback_start_ms = monotonic_ms();
    pthread_mutex_unlock(&c->lock);
    if (go)
        tl_in_callback = true;
    return go;
}

void ns_call_callback_leave(void)
{
    ns_call *c = tl_call;
    if (!c)
        return;
    tl_in_callback = false;
    pthread_mutex_lock(&c->lock);
    if (--c->in_callback == 0)
        c->callback_ms += monotonic_ms() - c->callback_start_ms;
    pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->lock);
}
