#include "errors/ns_error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "context/ns_ctx.h"

static _Thread_local ns_error_record current;

static void copy_bounded(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src ? src : "");
}

char *ns_error_excerpt(const char *text, char *buf, size_t len)
{
    if (!len)
        return buf;
    text = text ? text : "";
    size_t n = strlen(text), shown = n > NS_EXCERPT_MAX ? NS_EXCERPT_MAX - 16 : n, off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < shown && off + 5 < len; i++) {
        unsigned char ch = (unsigned char)text[i];
        if (ch < 0x20 || ch == 0x7f)
            off += (size_t)snprintf(buf + off, len - off, "\\x%02x", ch);
        else
            buf[off++] = (char)ch;
    }
    buf[off < len ? off : len - 1] = '\0';
    if (shown < n && off < len)
        snprintf(buf + off, len - off, "... (%zu bytes)", n);
    return buf;
}

int ns_error_setv(int code, const char *file, int line, const char *fmt, va_list ap)
{
    memset(&current, 0, sizeof(current));
    current.code = code;
    vsnprintf(current.message, sizeof(current.message), fmt, ap);
    const char *base = file ? strrchr(file, '/') : NULL;
    copy_bounded(current.file, sizeof(current.file), base ? base + 1 : file);
    current.line = line;
    ns_ctx_error_report(ns_ctx_current(), &current);
    return code;
}

int ns_error_set(int code, const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ns_error_setv(code, file, line, fmt, ap);
    va_end(ap);
    return code;
}

int ns_error_prefix(const char *fmt, ...)
{
    char prefix[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof(prefix), fmt, ap);
    va_end(ap);
    size_t cap = sizeof(current.message);
    size_t plen = strlen(prefix);
    size_t keep = strlen(current.message);
    if (keep > cap - 1 - plen)
        keep = cap - 1 - plen;
    memmove(current.message + plen, current.message, keep);
    memcpy(current.message, prefix, plen);
    current.message[plen + keep] = '\0';
    return current.code;
}

void ns_error_set_retry_after(int64_t ms)
{
    current.retry_after_ms = ms;
}

void ns_error_add_unavailable(const char *instance_type, const char *zone, const char *capacity_type)
{
    if (current.n_unavailable >= NS_ERROR_MAX_UNAVAILABLE)
        return;
    ns_unavailable_offering *u = &current.unavailable[current.n_unavailable++];
    copy_bounded(u->instance_type, sizeof(u->instance_type), instance_type);
    copy_bounded(u->zone, sizeof(u->zone), zone);
    copy_bounded(u->capacity_type, sizeof(u->capacity_type), capacity_type);
}

const ns_error_record *ns_error_last(void)
{
    return &current;
}

const char *ns_error_message(void)
{
    return current.message;
}

void ns_error_clear(void)
{
    memset(&current, 0, sizeof(current));
}

void ns_error_restore(const ns_error_record *rec)
{
    if (rec != &current)
        current = *rec;
}

const char *ns_err_name(int code)
{
    switch (code) {
    case NS_OK: return "ok";
    case NS_ERR_NOT_FOUND: return "not found";
    case NS_ERR_INSUFFICIENT_CAPACITY: return "insufficient capacity";
    case NS_ERR_THROTTLED: return "throttled";
    case NS_ERR_UNAUTHORIZED: return "unauthorized";
    case NS_ERR_INVALID_CONFIG: return "invalid configuration";
    case NS_ERR_UNSUPPORTED: return "unsupported";
    case NS_ERR_INTERNAL: return "internal error";
    case NS_ERR_INVALID_ARGUMENT: return "invalid argument";
    default: return "unknown error";
    }
}
