/*
 * The watchdog every provider call runs under (docs/provider-abi.md, "Watchdog").
 *
 * A provider is foreign code in the core's address space: it can hang (a lost connection, a deadlock) or crash (a
 * NULL pointer). Neither can be undone in-process in general, so the core does what it can do safely:
 *   - Hangs: each call runs on a worker thread (plugin_workers.h) while the caller waits with a deadline. A call that
 *     misses it is abandoned: the caller gets NS_ERR_THROTTLED ("did not return within ...", naming the provider and
 *     the method), so the engine treats it as a failed call and retries later; the worker is left running, and
 *     whatever it still does cannot reach the caller (its inputs and outputs are copies the call owns, and the
 *     caller's callbacks are never called after the call was abandoned). Time spent in the caller's callbacks does
 *     not count against the deadline.
 *   - Crashes: a SIGSEGV, SIGBUS, SIGILL, SIGFPE or SIGABRT on a thread inside a provider call writes one line to
 *     stderr naming the provider, the method and the signal, then ends the process with that signal (a core dump
 *     stays possible). A fault anywhere else goes to the handler that was there before, so the core's own bugs and
 *     the sanitizers' reports are untouched. Callers that can do better in a child process (`nodesmith plugins`
 *     probes each plugin in one) see the line and the signal.
 */
#ifndef NS_PLUGIN_WATCHDOG_H
#define NS_PLUGIN_WATCHDOG_H

#include <stdbool.h>
#include <stdint.h>

/* The deadline of a call when nothing else says: long enough for a provider that retries a throttled cloud a few
 * times within one call, short enough that a wedged one is noticed. */
#define NS_CALL_TIMEOUT_DEFAULT_MS (5 * 60 * 1000)
/* Environment variable with a Go duration ("90s", "5m") overriding that default for every plugin loaded. */
#define NS_CALL_TIMEOUT_ENV "NODESMITH_PROVIDER_TIMEOUT"

/* The default deadline: $NODESMITH_PROVIDER_TIMEOUT when set, else NS_CALL_TIMEOUT_DEFAULT_MS. A value that does not
 * parse as a positive duration is NS_ERR_INVALID_CONFIG (recorded). */
int ns_call_default_timeout(int64_t *out_ms);

/* Runs fn(arg) for provider `who` (the provider's name, or the plugin's path before its name is known) and
 * `method` with a deadline of timeout_ms (<= 0: none, and the call runs on the calling thread).
 * Returns fn's return value with the worker's error record copied into the caller's; or NS_ERR_THROTTLED (recorded:
 * "did not return within N ms ...", for the caller to prefix) when the deadline passed; *abandoned (may be NULL)
 * tells the two apart. On return *handle is the caller's reference to the call and `arg` belongs to the call:
 * free_arg(arg) runs once both sides are done with it, so the caller reads its outputs from arg, then calls
 * ns_call_release(*handle). When *handle is NULL (out of memory, recorded) nothing ran and arg is still the
 * caller's. */
typedef struct ns_call ns_call;
int ns_call_run(const char *who, const char *method, int64_t timeout_ms, int (*fn)(void *arg), void *arg,
                void (*free_arg)(void *arg), ns_call **handle, bool *abandoned);
void ns_call_release(ns_call *call); /* accepts NULL */

/* For the core's callbacks, on the thread the provider calls them on: enter returns false when the call they belong
 * to was abandoned (the callback must not touch the caller's data: return an error instead); leave pairs with a true
 * enter. Outside a watched call enter returns true. */
bool ns_call_callback_enter(void);
void ns_call_callback_leave(void);

/* A function called from the crash handler, after the line on stderr, with that line (no newline) and before the
 * process ends; it runs in a signal handler on a broken thread, so it must be async-signal-safe or accept the risk
 * (the conformance suite reports the crash through Check with it). NULL removes it. */
void ns_call_set_crash_hook(void (*hook)(const char *line));

#endif
