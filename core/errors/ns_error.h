/*
 * The core's error record, one per thread (libvirt's virReportError, OpenSSL's error queue).
 *
 * Functions return 0 or a negative ns_err category and describe the failure here first: what failed, on which
 * object, and why. Callers that add context wrap the message with ns_error_prefix. Provider errors arrive through
 * the host's error upcalls and land in the same record.
 */
#ifndef NS_ERROR_H
#define NS_ERROR_H

#include <stddef.h>
#include <stdint.h>

#include "nodesmith/provider.h"

#define NS_ERROR_MAX_UNAVAILABLE 64

typedef struct ns_unavailable_offering {
    char instance_type[NS_NAME_MAX];
    char zone[NS_ZONE_MAX];
    char capacity_type[NS_CAPACITY_TYPE_MAX];
} ns_unavailable_offering;

typedef struct ns_error_record {
    int code; /* NS_OK when no error is recorded */
    char message[1024];
    char file[128];
    int line;
    int64_t retry_after_ms; /* 0 = no hint */
    size_t n_unavailable;
    ns_unavailable_offering unavailable[NS_ERROR_MAX_UNAVAILABLE];
} ns_error_record;

/* Records an error for the calling thread, replacing any earlier one, and returns code. */
int ns_error_set(int code, const char *file, int line, const char *fmt, ...) NS_PRINTF(4, 5);
int ns_error_setv(int code, const char *file, int line, const char *fmt, va_list ap) NS_PRINTF(4, 0);
#define NS_FAIL(code, ...) ns_error_set((code), __FILE__, __LINE__, __VA_ARGS__)

/* Prepends context ("loading provider aws: ") to the current message; returns the current code. */
int ns_error_prefix(const char *fmt, ...) NS_PRINTF(1, 2);
void ns_error_set_retry_after(int64_t ms);
void ns_error_add_unavailable(const char *instance_type, const char *zone, const char *capacity_type);

/* The calling thread's record; valid until the thread's next ns_error_* call. Never NULL. */
const ns_error_record *ns_error_last(void);
const char *ns_error_message(void);
void ns_error_clear(void);
/* Makes *rec the calling thread's record as is, without reporting it to the context's sink again (it was reported
 * on the thread that set it): the plugin watchdog carries a provider call's record from its worker thread back to
 * the caller with it. */
void ns_error_restore(const ns_error_record *rec);

/* User text as a message quotes it: the text itself when it is at most NS_EXCERPT_MAX bytes, else its first bytes,
 * "..." and its length ("aaaa... (10240 bytes)"), so a long value cannot push the reason out of the 1024-byte
 * message. Control characters are written as \xNN. Always NUL-terminates; returns buf (size NS_EXCERPT_BUF). */
#define NS_EXCERPT_MAX 320 /* whole Kubernetes names (253) and label keys (317) */
#define NS_EXCERPT_BUF (4 * NS_EXCERPT_MAX + 32)
char *ns_error_excerpt(const char *text, char *buf, size_t len);

/* "not found", "insufficient capacity", ... */
const char *ns_err_name(int code);

#endif
