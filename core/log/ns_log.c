#include "log/ns_log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "clock/ns_clock.h"
#include "context/ns_ctx.h"

void ns_log_set_output(FILE *out)
{
    ns_ctx_set_log_output(ns_ctx_current(), out);
}

void ns_log_set_level(ns_log_level level)
{
    ns_ctx_set_log_level(ns_ctx_current(), level);
}

int ns_log_parse_level(const char *text, ns_log_level *out)
{
    static const struct {
        const char *name;
        ns_log_level level;
    } names[] = {{"debug", NS_LOG_DEBUG}, {"info", NS_LOG_INFO}, {"warn", NS_LOG_WARN}, {"error", NS_LOG_ERROR}};
    for (size_t i = 0; text && i < sizeof(names) / sizeof(names[0]); i++) {
        if (strcasecmp(text, names[i].name) == 0) {
            *out = names[i].level;
            return NS_OK;
        }
    }
    return NS_ERR_INVALID_ARGUMENT;
}

int ns_log_key_is_secret(const char *key)
{
    static const char *const secret_words[] = {"secret", "token", "password", "credential", "authorization",
                                               "signature", "private-key", "private_key", "privatekey"};
    if (!key)
        return 0;
    for (size_t i = 0; i < sizeof(secret_words) / sizeof(secret_words[0]); i++) {
        if (strcasestr(key, secret_words[i]))
            return 1;
    }
    return 0;
}

static const char *level_name(ns_log_level level)
{
    switch (level) {
    case NS_LOG_DEBUG: return "DEBUG";
    case NS_LOG_INFO: return "INFO";
    case NS_LOG_WARN: return "WARN";
    default: return "ERROR";
    }
}

/* The frame, then the fields; a field may not overwrite the frame, and a secret's value is redacted. */
static void write_line(ns_log_level level, const char *logger, const char *message, cJSON *fields)
{
    ns_ctx *ctx = ns_ctx_current();
    char when[32];
    ns_clock_format_rfc3339(ns_ctx_now_ms(ctx), when, sizeof(when));
    cJSON *line = cJSON_CreateObject();
    if (!line)
        return;
    cJSON_AddStringToObject(line, "level", level_name(level));
    cJSON_AddStringToObject(line, "time", when);
    cJSON_AddStringToObject(line, "logger", logger ? logger : "controller");
    cJSON_AddStringToObject(line, "message", message ? message : "");
    while (fields && fields->child) {
        cJSON *f = cJSON_DetachItemViaPointer(fields, fields->child);
        if (!f->string || cJSON_GetObjectItemCaseSensitive(line, f->string)) {
            cJSON_Delete(f);
            continue;
        }
        if (ns_log_key_is_secret(f->string)) {
            cJSON_AddStringToObject(line, f->string, "<redacted>");
            cJSON_Delete(f);
            continue;
        }
        char *key = f->string;
        f->string = NULL;
        cJSON_AddItemToObject(line, key, f);
        free(key);
    }
    char *text = cJSON_PrintUnformatted(line);
    cJSON_Delete(line);
    if (!text)
        return;
    ns_ctx_log_write(ctx, text);
    free(text);
}

void ns_log_json(ns_log_level level, const char *logger, const char *message, cJSON *fields)
{
    if (level >= ns_ctx_log_level(ns_ctx_current()))
        write_line(level, logger, message, fields);
    cJSON_Delete(fields);
}

cJSON *ns_log_ref(const char *ns, const char *name)
{
    cJSON *ref = cJSON_CreateObject();
    if (ref && (!cJSON_AddStringToObject(ref, "name", name ? name : "") ||
                (ns && *ns && !cJSON_AddStringToObject(ref, "namespace", ns)))) {
        cJSON_Delete(ref);
        return NULL;
    }
    return ref;
}

void ns_log_fields(ns_log_level level, const char *logger, const char *message, const ns_label *fields,
                   size_t n_fields)
{
    if (level < ns_ctx_log_level(ns_ctx_current()))
        return;
    cJSON *o = cJSON_CreateObject();
    for (size_t i = 0; o && i < n_fields; i++)
        if (fields[i].key && !cJSON_GetObjectItemCaseSensitive(o, fields[i].key))
            cJSON_AddStringToObject(o, fields[i].key, fields[i].value ? fields[i].value : "");
    write_line(level, logger, message, o);
    cJSON_Delete(o);
}

void ns_log(ns_log_level level, const char *logger, const char *message, ...)
{
    enum { MAX_FIELDS = 32 };
    ns_label fields[MAX_FIELDS];
    size_t n = 0;
    va_list ap;
    va_start(ap, message);
    for (;;) {
        const char *key = va_arg(ap, const char *);
        if (!key)
            break;
        const char *value = va_arg(ap, const char *);
        if (n < MAX_FIELDS)
            fields[n++] = (ns_label){key, value};
    }
    va_end(ap);
    ns_log_fields(level, logger, message, fields, n);
}
