/*
 * A context: the clock, the logger and the error sink one engine (or one command) runs with, as OpenSSL's library
 * context (OSSL_LIB_CTX) holds what one user of the library runs with.
 *
 * Each thread has a current context, the process's default one unless it entered another (ns_ctx_enter), as
 * OpenSSL's OSSL_LIB_CTX_set0_default sets a thread's default library context. The core's services read the
 * current one: ns_clock_* (clock/ns_clock.h) its clock, ns_log (log/ns_log.h) its output, level and clock for the
 * line's time, and every error recorded (errors/ns_error.h) also goes to its sink. An engine enters its context for
 * the length of each of its calls (engine/engine.h), so engines with different clocks can run in parallel threads.
 * A provider reaches the context of the plugin it was loaded into through its host table: host->now_ms, sleep_ms,
 * log and error read the ns_host_ctx they are given, never a global.
 *
 * Threading: a context may be used by several threads (its clock is atomic, its log lines are written whole), but
 * its settings are set before it is shared. Memory: ns_ctx_new's result is the caller's (ns_ctx_free); it must
 * outlive every plugin loaded into it and every engine using it. The default context is never freed.
 */
#ifndef NS_CTX_H
#define NS_CTX_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "nodesmith/provider.h"

typedef struct ns_ctx ns_ctx;
struct ns_error_record;

/* Receives every error recorded while the context is current (the record as set, before any prefix). */
typedef void (*ns_error_sink_fn)(void *arg, const struct ns_error_record *err);

/* A new context: real clock, log lines to stderr at INFO, no error sink. NULL on allocation failure. */
ns_ctx *ns_ctx_new(void);
void ns_ctx_free(ns_ctx *ctx); /* accepts NULL and ignores the default context */
/* The process's default context (what a thread uses until it enters another). */
ns_ctx *ns_ctx_default(void);
/* The calling thread's current context; never NULL. */
ns_ctx *ns_ctx_current(void);
/* Makes ctx (NULL: the default) the calling thread's current context and returns the previous one, which the caller
 * gives back to ns_ctx_leave. Calls nest. */
ns_ctx *ns_ctx_enter(ns_ctx *ctx);
void ns_ctx_leave(ns_ctx *previous);

/* Clock: real by default; a simulated clock only moves when advanced or slept on. */
int64_t ns_ctx_now_ms(const ns_ctx *ctx);
void ns_ctx_sleep_ms(ns_ctx *ctx, int64_t ms);
void ns_ctx_use_simulated_clock(ns_ctx *ctx, int64_t start_ms);
void ns_ctx_use_real_clock(ns_ctx *ctx);
bool ns_ctx_clock_is_simulated(const ns_ctx *ctx);
void ns_ctx_advance(ns_ctx *ctx, int64_t ms); /* simulated clock only */

/* Logger: where lines go (NULL: stderr) and the lowest level written. */
void ns_ctx_set_log_output(ns_ctx *ctx, FILE *out);
void ns_ctx_set_log_level(ns_ctx *ctx, ns_log_level level);
ns_log_level ns_ctx_log_level(const ns_ctx *ctx);
/* Writes one finished line (the logger formats it) and a newline, whole. */
void ns_ctx_log_write(ns_ctx *ctx, const char *line);

/* Error sink: fn(arg, record) for every error recorded while ctx is current; fn NULL removes it. */
void ns_ctx_set_error_sink(ns_ctx *ctx, ns_error_sink_fn fn, void *arg);
void ns_ctx_error_report(const ns_ctx *ctx, const struct ns_error_record *err);

#endif
