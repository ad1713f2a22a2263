#include "fake_host.h"

#include "curl_body.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>

static fake_host *self(ns_host_ctx *ctx)
{
    return (fake_host *)ctx;
}

static void append_log(fake_host *h, const char *text)
{
    size_t used = strlen(h->log);
    snprintf(h->log + used, sizeof(h->log) - used, "%s", text);
}

static void fh_log(ns_host_ctx *ctx, ns_log_level level, const char *message, const ns_label *fields, size_t n)
{
    static const char *const LEVELS[] = {"DEBUG", "INFO", "WARN", "ERROR"};
    fake_host *h = self(ctx);
    char line[2048];
    int len = snprintf(line, sizeof(line), "%s %s", LEVELS[level], message);
    for (size_t i = 0; i < n && len > 0 && (size_t)len < sizeof(line); i++)
        len += snprintf(line + len, sizeof(line) - (size_t)len, " %s=%s", fields[i].key,
                        fields[i].value ? fields[i].value : "(null)");
    append_log(h, line);
    append_log(h, "\n");
    if (getenv("AWS_TEST_VERBOSE"))
        fprintf(stderr, "%s\n", line);
}

static int fh_error(ns_host_ctx *ctx, int code, const char *file, int line, const char *fmt, ...) NS_PRINTF(5, 6);
static int fh_error(ns_host_ctx *ctx, int code, const char *file, int line, const char *fmt, ...)
{
    fake_host *h = self(ctx);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(h->last_error_message, sizeof(h->last_error_message), fmt, ap);
    va_end(ap);
    h->last_error = code;
    char logged[1200];
    snprintf(logged, sizeof(logged), "ERROR-RECORD %d %s\n", code, h->last_error_message);
    append_log(h, logged);
    if (getenv("AWS_TEST_VERBOSE"))
        fprintf(stderr, "error %d at %s:%d: %s\n", code, file, line, h->last_error_message);
    return code;
}

static void fh_retry_after(ns_host_ctx *ctx, int64_t ms)
{
    self(ctx)->last_retry_after_ms = ms;
}

static void fh_unavailable(ns_host_ctx *ctx, const char *type, const char *zone, const char *capacity_type)
{
    fake_host *h = self(ctx);
    if (h->n_unavailable >= 16)
        return;
    snprintf(h->unavailable[h->n_unavailable][0], 64, "%s", type ? type : "");
    snprintf(h->unavailable[h->n_unavailable][1], 64, "%s", zone ? zone : "");
    snprintf(h->unavailable[h->n_unavailable][2], 64, "%s", capacity_type ? capacity_type : "");
    h->n_unavailable++;
}

static int64_t fh_now(ns_host_ctx *ctx)
{
    return self(ctx)->clock_ms;
}

static void fh_sleep(ns_host_ctx *ctx, int64_t ms)
{
    fake_host *h = self(ctx);
    h->clock_ms += ms;
    h->slept_ms += ms;
}

static const char *find_option(fake_host *h, const char *key)
{
    for (int i = 0; i < 32 && h->options[i][0]; i++)
        if (strcmp(h->options[i][0], key) == 0)
            return h->options[i][1];
    return NULL;
}

static const char *fh_opt_string(ns_host_ctx *ctx, const char *key)
{
    return find_option(self(ctx), key);
}

static int64_t fh_opt_int(ns_host_ctx *ctx, const char *key)
{
    const char *v = find_option(self(ctx), key);
    return v ? strtoll(v, NULL, 10) : 0;
}

static bool fh_opt_bool(ns_host_ctx *ctx, const char *key)
{
    const char *v = find_option(self(ctx), key);
    return v && strcmp(v, "true") == 0;
}

static int64_t fh_opt_duration(ns_host_ctx *ctx, const char *key)
{
    const char *v = find_option(self(ctx), key);
    return v ? strtoll(v, NULL, 10) : 0;
}

typedef struct curl_headers {
    ns_http_header items[32];
    size_t n;
} curl_headers;

static size_t on_header(char *ptr, size_t size, size_t n, void *ud)
{
    curl_headers *hs = ud;
    size_t len = size * n;
    char *colon = memchr(ptr, ':', len);
    if (!colon || hs->n >= 32)
        return len;
    char *name = strndup(ptr, (size_t)(colon - ptr));
    const char *v = colon + 1;
    size_t vlen = len - (size_t)(v - ptr);
    while (vlen && (*v == ' ' || *v == '\t')) {
        v++;
        vlen--;
    }
    while (vlen && (v[vlen - 1] == '\r' || v[vlen - 1] == '\n' || v[vlen - 1] == ' '))
        vlen--;
    for (char *p = name; p && *p; p++)
        *p = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
    hs->items[hs->n].name = name;
    hs->items[hs->n].value = strndup(v, vlen);
    hs->n++;
    return len;
}

static int curl_request(const ns_http_request *req, ns_http_response *resp)
{
    CURL *c = curl_easy_init();
    if (!c)
        return NS_ERR_INTERNAL;
    curl_body body = {0};
    curl_headers hs = {0};
    struct curl_slist *list = NULL;
    for (size_t i = 0; i < req->n_headers; i++) {
        char line[8192];
        snprintf(line, sizeof(line), "%s: %s", req->headers[i].name, req->headers[i].value);
        list = curl_slist_append(list, line);
    }
    list = curl_slist_append(list, "Expect:");
    curl_easy_setopt(c, CURLOPT_URL, req->url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, req->method);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, list);
    if (req->body) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, req->body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)req->body_len);
    }
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, curl_body_collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &hs);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, req->timeout_ms > 0 ? (long)req->timeout_ms : 30000L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    CURLcode rc = curl_easy_perform(c);
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(list);
    curl_easy_cleanup(c);
    if (rc != CURLE_OK) {
        free(body.data);
        for (size_t i = 0; i < hs.n; i++) {
            free((char *)hs.items[i].name);
            free((char *)hs.items[i].value);
        }
        return NS_ERR_THROTTLED;
    }
    resp->status = status;
    resp->body = body.data ? body.data : strdup("");
    resp->body_len = body.len;
    resp->headers = calloc(hs.n ? hs.n : 1, sizeof(ns_http_header));
    memcpy(resp->headers, hs.items, hs.n * sizeof(ns_http_header));
    resp->n_headers = hs.n;
    return NS_OK;
}

static int fh_http(ns_host_ctx *ctx, const ns_http_request *req, ns_http_response **out)
{
    fake_host *h = self(ctx);
    h->http_requests++;
    *out = NULL;
    ns_http_response *resp = calloc(1, sizeof(*resp));
    if (!resp)
        return NS_ERR_INTERNAL;
    resp->struct_size = sizeof(*resp);
    int rc;
    if (h->responder) {
        fake_response fr = {0};
        rc = h->responder(h->responder_ctx, req, &fr);
        if (rc == NS_OK) {
            resp->status = fr.status;
            resp->body = strdup(fr.body ? fr.body : "");
            resp->body_len = strlen(resp->body);
            resp->headers = calloc(8, sizeof(ns_http_header));
            for (int i = 0; i < 8 && fr.headers[i][0]; i++) {
                resp->headers[i].name = strdup(fr.headers[i][0]);
                resp->headers[i].value = strdup(fr.headers[i][1]);
                resp->n_headers++;
            }
        }
    } else {
        rc = curl_request(req, resp);
    }
    if (rc != NS_OK) {
        free(resp);
        return fh_error(ctx, rc, __FILE__, __LINE__, "%s %s: transport failure", req->method, req->url);
    }
    *out = resp;
    return NS_OK;
}

static void fh_http_free(ns_http_response *resp)
{
    if (!resp)
        return;
    for (size_t i = 0; i < resp->n_headers; i++) {
        free((char *)resp->headers[i].name);
        free((char *)resp->headers[i].value);
    }
    free(resp->headers);
    free(resp->body);
    free(resp);
}

static ns_json *fh_json_parse(const char *text, size_t len)
{
    return (ns_json *)cJSON_ParseWithLength(text, len);
}

static char *fh_json_print(const ns_json *v)
{
    return cJSON_PrintUnformatted((const cJSON *)v);
}

static void fh_json_free(ns_json *v)
{
    cJSON_Delete((cJSON *)v);
}

static ns_json_type fh_json_type(const ns_json *v)
{
    const cJSON *j = (const cJSON *)v;
    if (!j)
        return NS_JSON_INVALID;
    if (cJSON_IsNull(j))
        return NS_JSON_NULL;
    if (cJSON_IsBool(j))
        return NS_JSON_BOOL;
    if (cJSON_IsNumber(j))
        return NS_JSON_NUMBER;
    if (cJSON_IsString(j))
        return NS_JSON_STRING;
    if (cJSON_IsArray(j))
        return NS_JSON_ARRAY;
    if (cJSON_IsObject(j))
        return NS_JSON_OBJECT;
    return NS_JSON_INVALID;
}

static const ns_json *fh_json_get(const ns_json *o, const char *key)
{
    return cJSON_IsObject((const cJSON *)o) ? (const ns_json *)cJSON_GetObjectItemCaseSensitive((const cJSON *)o, key)
                                            : NULL;
}

static size_t fh_json_size(const ns_json *v)
{
    return (size_t)cJSON_GetArraySize((const cJSON *)v);
}

static const ns_json *fh_json_at(const ns_json *v, size_t i)
{
    return (const ns_json *)cJSON_GetArrayItem((const cJSON *)v, (int)i);
}

static const char *fh_json_key(const ns_json *m)
{
    return m ? ((const cJSON *)m)->string : NULL;
}

static const char *fh_json_string(const ns_json *v)
{
    return cJSON_IsString((const cJSON *)v) ? ((const cJSON *)v)->valuestring : NULL;
}

static double fh_json_number(const ns_json *v)
{
    return cJSON_IsNumber((const cJSON *)v) ? ((const cJSON *)v)->valuedouble : 0;
}

static bool fh_json_bool(const ns_json *v)
{
    return cJSON_IsTrue((const cJSON *)v);
}

static ns_json *fh_new_object(void)
{
    return (ns_json *)cJSON_CreateObject();
}

static ns_json *fh_new_array(void)
{
    return (ns_json *)cJSON_CreateArray();
}

static ns_json *fh_new_string(const char *s)
{
    return (ns_json *)cJSON_CreateString(s);
}

static ns_json *fh_new_number(double n)
{
    return (ns_json *)cJSON_CreateNumber(n);
}

static ns_json *fh_new_bool(bool b)
{
    return (ns_json *)cJSON_CreateBool(b);
}

static int fh_json_add(ns_json *container, const char *key, ns_json *item)
{
    cJSON *c = (cJSON *)container;
    if (key ? !cJSON_AddItemToObject(c, key, (cJSON *)item) : !cJSON_AddItemToArray(c, (cJSON *)item))
        return NS_ERR_INTERNAL;
    return NS_OK;
}

static void fh_free(void *p)
{
    free(p);
}

void fake_host_init(fake_host *h)
{
    memset(h, 0, sizeof(*h));
    struct timeval tv;
    gettimeofday(&tv, NULL);
    h->clock_ms = (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
    h->table = (ns_host){
        .abi_version = NS_PROVIDER_ABI_VERSION,
        .struct_size = sizeof(ns_host),
        .log = fh_log,
        .error = fh_error,
        .error_retry_after = fh_retry_after,
        .error_unavailable_offering = fh_unavailable,
        .now_ms = fh_now,
        .sleep_ms = fh_sleep,
        .option_string = fh_opt_string,
        .option_int = fh_opt_int,
        .option_bool = fh_opt_bool,
        .option_duration_ms = fh_opt_duration,
        .http_request = fh_http,
        .http_response_free = fh_http_free,
        .free = fh_free,
        .json_parse = fh_json_parse,
        .json_print = fh_json_print,
        .json_free = fh_json_free,
        .json_type = fh_json_type,
        .json_get = fh_json_get,
        .json_size = fh_json_size,
        .json_at = fh_json_at,
        .json_key = fh_json_key,
        .json_string = fh_json_string,
        .json_number = fh_json_number,
        .json_bool = fh_json_bool,
        .json_new_object = fh_new_object,
        .json_new_array = fh_new_array,
        .json_new_string = fh_new_string,
        .json_new_number = fh_new_number,
        .json_new_bool = fh_new_bool,
        .json_add = fh_json_add,
    };
}

void fake_host_clear_error(fake_host *h)
{
    h->last_error = 0;
    h->last_error_message[0] = '\0';
    h->last_retry_after_ms = 0;
    h->n_unavailable = 0;
}

void fake_host_set_option(fake_host *h, const char *key, const char *value)
{
    for (int i = 0; i < 32; i++) {
        if (!h->options[i][0] || strcmp(h->options[i][0], key) == 0) {
            h->options[i][0] = key;
            h->options[i][1] = value;
            return;
        }
    }
}
