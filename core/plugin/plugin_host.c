/* The host upcalls: what the core lends a provider (OpenSSL's core dispatch table). */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context/ns_ctx.h"
#include "errors/ns_error.h"
#include "http/http_client.h"
#include "json/host_json.h"
#include "log/ns_log.h"
#include "plugin/plugin_internal.h"

/* The core context of the plugin whose upcall this is (a provider with no ns_host_ctx gets the current one). */
static ns_ctx *core_of(const ns_host_ctx *ctx)
{
    return ctx && ctx->core ? ctx->core : ns_ctx_current();
}

static void host_log(ns_host_ctx *ctx, ns_log_level level, const char *message, const ns_label *fields,
                     size_t n_fields)
{
    if (level < NS_LOG_DEBUG || level > NS_LOG_ERROR)
        level = NS_LOG_ERROR;
    ns_ctx *previous = ns_ctx_enter(core_of(ctx));
    ns_log_fields(level, ctx ? ctx->logger : "provider", message, fields, n_fields);
    ns_ctx_leave(previous);
}

/* One typed field as the JSON value it logs as; NULL only when out of memory. */
static cJSON *typed_value(const ns_log_field *f)
{
    char digits[24];
    switch (f->type) {
    case NS_LOG_FIELD_STRING:
        return cJSON_CreateString(f->value.string ? f->value.string : "");
    case NS_LOG_FIELD_INT:
        /* Raw digits: a cJSON number is a double, which would round counts above 2^53. */
        snprintf(digits, sizeof(digits), "%" PRId64, f->value.integer);
        return cJSON_CreateRaw(digits);
    case NS_LOG_FIELD_NUMBER:
        return isfinite(f->value.number) ? cJSON_CreateNumber(f->value.number) : cJSON_CreateNull();
    case NS_LOG_FIELD_BOOL:
        return cJSON_CreateBool(f->value.boolean);
    case NS_LOG_FIELD_JSON:
        return f->value.json ? cJSON_Duplicate((const cJSON *)f->value.json, true) : cJSON_CreateNull();
    }
    return cJSON_CreateNull(); /* provider.h: a type this host does not know logs as null */
}

/* ABI 7: the line log writes, with each value of its own JSON type (redaction and the frame are ns_log_json's). */
static void host_log_typed(ns_host_ctx *ctx, ns_log_level level, const char *message, const ns_log_field *fields,
                           size_t n_fields)
{
    if (level < NS_LOG_DEBUG || level > NS_LOG_ERROR)
        level = NS_LOG_ERROR;
    ns_ctx *previous = ns_ctx_enter(core_of(ctx));
    if (level >= ns_ctx_log_level(ns_ctx_current())) {
        cJSON *o = cJSON_CreateObject();
        for (size_t i = 0; o && fields && i < n_fields; i++) {
            const ns_log_field *f = &fields[i];
            if (!f->key || cJSON_GetObjectItemCaseSensitive(o, f->key))
                continue; /* as log: the first value of a key is the one written */
            cJSON *v = typed_value(f);
            if (!v || !cJSON_AddItemToObject(o, f->key, v)) {
                cJSON_Delete(v);
                cJSON_Delete(o);
                o = NULL; /* out of memory: a line without its fields would mislead, so none */
            }
        }
        if (o)
            ns_log_json(level, ctx ? ctx->logger : "provider", message, o);
    }
    ns_ctx_leave(previous);
}

static int host_error(ns_host_ctx *ctx, int code, const char *file, int line, const char *fmt, ...) NS_PRINTF(5, 6);
static int host_error(ns_host_ctx *ctx, int code, const char *file, int line, const char *fmt, ...)
{
    ns_ctx *previous = ns_ctx_enter(core_of(ctx));
    va_list ap;
    va_start(ap, fmt);
    ns_error_setv(code, file, line, fmt, ap);
    va_end(ap);
    ns_ctx_leave(previous);
    return code;
}

static void host_error_retry_after(ns_host_ctx *ctx, int64_t ms)
{
    (void)ctx;
    ns_error_set_retry_after(ms);
}

static void host_error_unavailable(ns_host_ctx *ctx, const char *instance_type, const char *zone,
                                   const char *capacity_type)
{
    (void)ctx;
    ns_error_add_unavailable(instance_type, zone, capacity_type);
}

static int64_t host_now_ms(ns_host_ctx *ctx)
{
    return ns_ctx_now_ms(core_of(ctx));
}

static void host_sleep_ms(ns_host_ctx *ctx, int64_t ms)
{
    ns_ctx_sleep_ms(core_of(ctx), ms);
}

/* A provider reading an option it never declared has a bug worth a log line, not a crash. */
static const ns_option_values *declared(ns_host_ctx *ctx, const char *key)
{
    if (!ctx || !ctx->plugin)
        return NULL;
    if (!ns_option_values_declared(ctx->plugin->options, key)) {
        ns_log(NS_LOG_WARN, ctx->logger, "provider read an option it does not declare", "option", key ? key : "",
               NULL);
        return NULL;
    }
    return ctx->plugin->options;
}

static const char *host_option_string(ns_host_ctx *ctx, const char *key)
{
    return ns_option_values_string(declared(ctx, key), key);
}

static int64_t host_option_int(ns_host_ctx *ctx, const char *key)
{
    return ns_option_values_int(declared(ctx, key), key);
}

static bool host_option_bool(ns_host_ctx *ctx, const char *key)
{
    return ns_option_values_bool(declared(ctx, key), key);
}

static int64_t host_option_duration_ms(ns_host_ctx *ctx, const char *key)
{
    return ns_option_values_duration_ms(declared(ctx, key), key);
}

static int host_http_request(ns_host_ctx *ctx, const ns_http_request *req, ns_http_response **resp)
{
    if (!req || !resp || req->struct_size < offsetof(ns_http_request, max_retries) + sizeof(int))
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "provider %s: http_request: request missing or its struct_size too small",
                       ctx && ctx->plugin ? ctx->plugin->name : "?");
    ns_http_request copy = {0};
    memcpy(&copy, req, req->struct_size < sizeof(copy) ? req->struct_size : sizeof(copy));
    char user_agent[3 * NS_NAME_MAX];
    const ns_plugin *p = ctx ? ctx->plugin : NULL;
    snprintf(user_agent, sizeof(user_agent), "%s %s/%s", NS_HTTP_USER_AGENT, p && p->name ? p->name : "provider",
             p && p->table.version ? p->table.version : "unknown");
    /* Retries wait on the plugin's clock. */
    ns_ctx *previous = ns_ctx_enter(core_of(ctx));
    int rc = ns_http_perform_as(&copy, user_agent, resp);
    ns_ctx_leave(previous);
    return rc;
}

static void host_free(void *ptr)
{
    free(ptr);
}

static const ns_host host_table = {
    .abi_version = NS_PROVIDER_ABI_VERSION,
    .struct_size = sizeof(ns_host),
    .log = host_log,
    .error = host_error,
    .error_retry_after = host_error_retry_after,
    .error_unavailable_offering = host_error_unavailable,
    .now_ms = host_now_ms,
    .sleep_ms = host_sleep_ms,
    .option_string = host_option_string,
    .option_int = host_option_int,
    .option_bool = host_option_bool,
    .option_duration_ms = host_option_duration_ms,
    .http_request = host_http_request,
    .http_response_free = ns_http_response_free,
    .free = host_free,
    .json_parse = ns_host_json_parse,
    .json_print = ns_host_json_print,
    .json_free = ns_host_json_free,
    .json_type = ns_host_json_type,
    .json_get = ns_host_json_get,
    .json_size = ns_host_json_size,
    .json_at = ns_host_json_at,
    .json_key = ns_host_json_key,
    .json_string = ns_host_json_string,
    .json_number = ns_host_json_number,
    .json_bool = ns_host_json_bool,
    .json_new_object = ns_host_json_new_object,
    .json_new_array = ns_host_json_new_array,
    .json_new_string = ns_host_json_new_string,
    .json_new_number = ns_host_json_new_number,
    .json_new_bool = ns_host_json_new_bool,
    .json_add = ns_host_json_add,
    .log_typed = host_log_typed,
};

const ns_host *ns_plugin_host_table(void)
{
    return &host_table;
}
