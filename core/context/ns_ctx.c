#include "context/ns_ctx.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

struct ns_ctx {
    atomic_bool simulated;
    atomic_int_fast64_t simulated_now_ms;
    pthread_mutex_t log_lock;
    FILE *log_out;
    ns_log_level log_min;
    ns_error_sink_fn sink;
    void *sink_arg;
};

static ns_ctx default_ctx = {.log_lock = PTHREAD_MUTEX_INITIALIZER, .log_min = NS_LOG_INFO};
static _Thread_local ns_ctx *current_ctx;

ns_ctx *ns_ctx_new(void)
{
    ns_ctx *ctx = calloc(1, sizeof(*ctx));
    if (!ctx)
        return NULL;
    if (pthread_mutex_init(&ctx->log_lock, NULL) != 0) {
        free(ctx);
        return NULL;
    }
    ctx->log_min = NS_LOG_INFO;
    return ctx;
}

void ns_ctx_free(ns_ctx *ctx)
{
    if (!ctx || ctx == &default_ctx)
        return;
    pthread_mutex_destroy(&ctx->log_lock);
    free(ctx);
}

ns_ctx *ns_ctx_default(void)
{
    return &default_ctx;
}

ns_ctx *ns_ctx_current(void)
{
    return current_ctx ? current_ctx : &default_ctx;
}

ns_ctx *ns_ctx_enter(ns_ctx *ctx)
{
    ns_ctx *previous = current_ctx;
    current_ctx = ctx;
    return previous;
}

void ns_ctx_leave(ns_ctx *previous)
{
    current_ctx = previous;
}

int64_t ns_ctx_now_ms(const ns_ctx *ctx)
{
    if (atomic_load(&ctx->simulated))
        return atomic_load(&((ns_ctx *)ctx)->simulated_now_ms);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void ns_ctx_sleep_ms(ns_ctx *ctx, int64_t ms)
{
    if (ms <= 0)
        return;
    if (atomic_load(&ctx->simulated)) {
        atomic_fetch_add(&ctx->simulated_now_ms, ms);
        return;
    }
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

void ns_ctx_use_simulated_clock(ns_ctx *ctx, int64_t start_ms)
{
    atomic_store(&ctx->simulated_now_ms, start_ms);
    atomic_store(&ctx->simulated, true);
}

void ns_ctx_use_real_clock(ns_ctx *ctx)
{
    atomic_store(&ctx->simulated, false);
}

bool ns_ctx_clock_is_simulated(const ns_ctx *ctx)
{
    return atomic_load(&((ns_ctx *)ctx)->simulated);
}

void ns_ctx_advance(ns_ctx *ctx, int64_t ms)
{
    if (atomic_load(&ctx->simulated) && ms > 0)
        atomic_fetch_add(&ctx->simulated_now_ms, ms);
}

void ns_ctx_set_log_output(ns_ctx *ctx, FILE *out)
{
    ctx->log_out = out;
}

void ns_ctx_set_log_level(ns_ctx *ctx, ns_log_level level)
{
    ctx->log_min = level;
}

ns_log_level ns_ctx_log_level(const ns_ctx *ctx)
{
    return ctx->log_min;
}

void ns_ctx_log_write(ns_ctx *ctx, const char *line)
{
    pthread_mutex_lock(&ctx->log_lock);
    FILE *out = ctx->log_out ? ctx->log_out : stderr;
    fputs(line, out);
    fputc('\n', out);
    fflush(out);
    pthread_mutex_unlock(&ctx->log_lock);
}

void ns_ctx_set_error_sink(ns_ctx *ctx, ns_error_sink_fn fn, void *arg)
{
    ctx->sink = fn;
    ctx->sink_arg = arg;
}

void ns_ctx_error_report(const ns_ctx *ctx, const struct ns_error_record *err)
{
    if (ctx->sink)
        ctx->sink(ctx->sink_arg, err);
}
