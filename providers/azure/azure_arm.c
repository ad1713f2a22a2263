/* ARM calls (azure_arm.h). */
#include "azure_arm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "azure_errors.h"

#define TOKEN_MAX 8192
#define MAX_POLLS 120
#define BACKOFF_BASE_MS 250
#define BACKOFF_CAP_MS 8000

static const char *header(const ns_http_response *r, const char *name)
{
    for (size_t i = 0; i < r->n_headers; i++)
        if (strcasecmp(r->headers[i].name, name) == 0)
            return r->headers[i].value;
    return NULL;
}

/* Retry-After in seconds (ARM never sends dates), capped; -1 when absent or unreadable. */
static int64_t retry_after_ms(const ns_http_response *r)
{
    const char *v = header(r, "retry-after");
    char *end = NULL;
    long secs = v ? strtol(v, &end, 10) : -1;
    if (!v || end == v || *end || secs < 0)
        return -1;
    return (secs > 120 ? 120 : secs) * 1000;
}

static int64_t backoff_ms(int attempt)
{
    int64_t ms = (int64_t)BACKOFF_BASE_MS << (attempt < 6 ? attempt : 6);
    return ms > BACKOFF_CAP_MS ? BACKOFF_CAP_MS : ms;
}

static bool on_arm_host(const az_state *s, const char *url)
{
    size_t n = strlen(s->arm);
    return strncmp(url, s->arm, n) == 0 && (url[n] == '/' || url[n] == '\0');
}

static int build_url(az_state *s, const char *target, const char *api_version, char *url, size_t len)
{
    int n;
    if (strncmp(target, "https://", 8) == 0 || strncmp(target, "http://", 7) == 0) {
        if (!on_arm_host(s, target))
            return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "ARM answered with a link off its host: %.200s", target);
        n = snprintf(url, len, "%s", target);
    } else {
        n = snprintf(url, len, "%s%s%sapi-version=%s", s->arm, target, strchr(target, '?') ? "&" : "?", api_version);
    }
    if (n < 0 || (size_t)n >= len)
        return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "ARM URL too long for %.200s", target);
    return NS_OK;
}

static void read_error(az_state *s, const ns_http_response *r, az_arm_error *e)
{
    const ns_host *h = s->host;
    e->status = r->status;
    e->code[0] = e->message[0] = '\0';
    ns_json *doc = h->json_parse(r->body, r->body_len);
    const ns_json *err = doc ? h->json_get(doc, "error") : NULL;
    const char *code = h->json_string(h->json_get(err, "code"));
    const char *msg = h->json_string(h->json_get(err, "message"));
    snprintf(e->code, sizeof(e->code), "%s", code ? code : "");
    snprintf(e->message, sizeof(e->message), "%s", msg ? msg : (r->body_len && !doc ? "(no JSON error)" : ""));
    h->json_free(doc);
}

static int report(az_state *s, const char *what, const az_arm_error *e, int attempts, int64_t retry_ms)
{
    int category = e->status == 0 ? NS_ERR_THROTTLED : az_error_category(e->code, e->status, e->message);
    int rc = NS_ERROR(s->host, s->ctx, category, "ARM %s failed: %s: %s (HTTP %ld, %d attempt%s)", what,
                      e->code[0] ? e->code : "no error code", e->message, e->status, attempts, attempts == 1 ? "" : "s");
    if (category == NS_ERR_THROTTLED)
        s->host->error_retry_after(s->ctx, retry_ms > 0 ? retry_ms : 1000);
    return rc;
}

static int take(az_state *s, ns_http_response *r, az_arm_result *res, const char *what)
{
    res->status = r->status;
    res->body = NULL;
    const char *async = header(r, "azure-asyncoperation");
    const char *loc = header(r, "location");
    snprintf(res->async_url, sizeof(res->async_url), "%s", async ? async : "");
    snprintf(res->location_url, sizeof(res->location_url), "%s", loc ? loc : "");
    if (r->body_len == 0)
        return NS_OK;
    res->body = s->host->json_parse(r->body, r->body_len);
    if (!res->body)
        return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "ARM %s: the answer (HTTP %ld) is not JSON: %.120s", what,
                        r->status, r->body);
    return NS_OK;
}

int az_arm_call(az_state *s, const char *method, const char *target, const char *api_version, const char *body,
                const char *what, az_arm_result *res, az_arm_error *err)
{
    const ns_host *h = s->host;
    az_arm_error local = {0};
    az_arm_error *e = err ? err : &local;
    memset(res, 0, sizeof(*res));
    memset(e, 0, sizeof(*e));
    char url[2048];
    int rc = build_url(s, target, api_version, url, sizeof(url));
    if (rc < 0)
        return rc;
    char *token = malloc(TOKEN_MAX);
    char *auth = malloc(TOKEN_MAX + 16);
    if (!token || !auth) {
        rc = NS_ERROR(h, s->ctx, NS_ERR_INTERNAL, "out of memory calling ARM %s", what);
        goto done;
    }
    bool refreshed = false;
    int64_t retry_ms = 0;
    for (int attempt = 1;; attempt++) {
        if ((rc = az_auth_token(s->auth, token, TOKEN_MAX)) < 0)
            goto done;
        snprintf(auth, TOKEN_MAX + 16, "Bearer %s", token);
        ns_http_header headers[] = {{"Authorization", auth}, {"Accept", "application/json"},
                                    {"Content-Type", "application/json; charset=utf-8"}};
        ns_http_request req = {.struct_size = sizeof(req), .method = method, .url = url, .headers = headers,
                               .n_headers = body ? 3u : 2u, .body = body, .body_len = body ? strlen(body) : 0,
                               .timeout_ms = s->timeout_ms, .max_retries = 0};
        ns_http_response *r = NULL;
        rc = h->http_request(s->ctx, &req, &r);
        bool retry;
        if (rc < 0 && rc != NS_ERR_THROTTLED)
            goto done; /* a TLS certificate refused, a malformed request: the host said why; retrying cannot help */
        if (rc < 0) {
            e->status = 0;
            snprintf(e->code, sizeof(e->code), "%s", "");
            snprintf(e->message, sizeof(e->message), "no answer from %s", s->arm);
            retry = rc == NS_ERR_THROTTLED;
            retry_ms = backoff_ms(attempt);
        } else if (r->status >= 200 && r->status < 300) {
            rc = take(s, r, res, what);
            h->http_response_free(r);
            goto done;
        } else {
            read_error(s, r, e);
            int64_t hinted = retry_after_ms(r);
            retry_ms = hinted >= 0 ? hinted : backoff_ms(attempt);
            retry = r->status == 429 || r->status >= 500;
            if (r->status == 401 && !refreshed) {
                az_auth_invalidate(s->auth, token);
                refreshed = true;
                retry = true;
                retry_ms = 0;
                attempt--; /* a refreshed token is not a retry of the same attempt */
            }
            h->http_response_free(r);
        }
        if (!retry || attempt >= s->max_attempts) {
            rc = report(s, what, e, attempt, retry_ms);
            goto done;
        }
        h->sleep_ms(s->ctx, retry_ms);
    }
done:
    if (token)
        memset(token, 0, TOKEN_MAX);
    if (auth)
        memset(auth, 0, TOKEN_MAX + 16);
    free(token);
    free(auth);
    if (rc < 0)
        az_arm_result_clear(s, res);
    return rc;
}

void az_arm_result_clear(az_state *s, az_arm_result *res)
{
    s->host->json_free(res->body);
    res->body = NULL;
}

/* One poll of Azure-AsyncOperation: *done when the status is terminal. */
static int poll_async(az_state *s, const char *url, const char *what, bool *done, az_arm_error *e)
{
    const ns_host *h = s->host;
    az_arm_result r;
    int rc = az_arm_call(s, "GET", url, NULL, NULL, what, &r, e);
    if (rc < 0)
        return rc;
    const char *status = h->json_string(h->json_get(r.body, "status"));
    *done = status && strcmp(status, "InProgress") != 0;
    if (status && (strcmp(status, "Failed") == 0 || strcmp(status, "Canceled") == 0)) {
        const ns_json *err = h->json_get(r.body, "error");
        const char *code = h->json_string(h->json_get(err, "code"));
        const char *msg = h->json_string(h->json_get(err, "message"));
        e->status = 200;
        snprintf(e->code, sizeof(e->code), "%s", code ? code : status);
        snprintf(e->message, sizeof(e->message), "%s", msg ? msg : "the operation failed");
        rc = report(s, what, e, 1, 0);
    } else if (!status) {
        rc = NS_ERROR(h, s->ctx, NS_ERR_INTERNAL, "ARM %s: the operation status has no \"status\"", what);
    }
    az_arm_result_clear(s, &r);
    return rc;
}

/* One poll of a Location URL: 202 = still running; another 2xx = done. */
static int poll_location(az_state *s, const char *url, const char *what, bool *done, az_arm_error *e)
{
    az_arm_result r;
    int rc = az_arm_call(s, "GET", url, NULL, NULL, what, &r, e);
    if (rc < 0)
        return rc;
    *done = r.status != 202;
    az_arm_result_clear(s, &r);
    return NS_OK;
}

int az_arm_wait(az_state *s, const az_arm_result *res, const char *what, az_arm_error *err)
{
    az_arm_error local = {0};
    az_arm_error *e = err ? err : &local;
    const char *url = res->async_url[0] ? res->async_url : res->location_url;
    if (!url[0] || (res->status == 200 && !res->async_url[0]))
        return NS_OK;
    char label[300];
    snprintf(label, sizeof(label), "%s (waiting for the operation)", what);
    for (int i = 0; i < MAX_POLLS; i++) {
        bool done = false;
        int rc = res->async_url[0] ? poll_async(s, url, label, &done, e) : poll_location(s, url, label, &done, e);
        if (rc < 0 || done)
            return rc;
        s->host->sleep_ms(s->ctx, i < 3 ? 100 : 1000);
    }
    return NS_ERROR(s->host, s->ctx, NS_ERR_THROTTLED, "ARM %s: the operation did not finish after %d polls", what,
                    MAX_POLLS);
}

int az_arm_list(az_state *s, const char *target, const char *api_version, const char *what, az_arm_item_cb cb,
                void *ctx)
{
    const ns_host *h = s->host;
    char *next = strdup(target);
    int rc = next ? NS_OK : NS_ERROR(h, s->ctx, NS_ERR_INTERNAL, "out of memory listing %s", what);
    for (int page = 0; rc == NS_OK && next; page++) {
        az_arm_result r;
        if ((rc = az_arm_call(s, "GET", next, api_version, NULL, what, &r, NULL)) < 0)
            break;
        free(next);
        next = NULL;
        const ns_json *value = h->json_get(r.body, "value");
        if (h->json_type(value) != NS_JSON_ARRAY) {
            rc = NS_ERROR(h, s->ctx, NS_ERR_INTERNAL, "ARM %s: the answer has no \"value\" array", what);
        } else {
            for (size_t i = 0; rc == NS_OK && i < h->json_size(value); i++)
                rc = cb(ctx, h->json_at(value, i));
        }
        const char *link = h->json_string(h->json_get(r.body, "nextLink"));
        if (rc == NS_OK && link && *link && !(next = strdup(link)))
            rc = NS_ERROR(h, s->ctx, NS_ERR_INTERNAL, "out of memory listing %s", what);
        az_arm_result_clear(s, &r);
        if (page > 1000)
            rc = NS_ERROR(h, s->ctx, NS_ERR_INTERNAL, "ARM %s: more than 1000 pages", what);
    }
    free(next);
    return rc;
}
