/* Entra ID tokens for ARM (azure_auth.h). */
#include "azure_auth.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOKEN_MAX 8192
#define REFRESH_MARGIN_MS (5 * 60 * 1000)

struct az_auth {
    const ns_host *host;
    ns_host_ctx *ctx;
    az_auth_mode mode;
    char tenant[64];
    char client_id[64];
    char *client_secret;
    char token_file[512];
    char authority[256];
    char imds[256];
    char resource[256];
    int64_t timeout_ms;
    int max_attempts;
    pthread_mutex_t lock;
    char token[TOKEN_MAX];
    int64_t expires_ms;
    int64_t refresh_ms;
};

static const char *const MODE_NAMES[] = {"auto", "client-secret", "workload-identity", "managed-identity"};

int az_auth_mode_parse(const char *name)
{
    for (int i = 0; i < 4; i++)
        if (name && strcmp(name, MODE_NAMES[i]) == 0)
            return i;
    return -1;
}

const char *az_auth_mode_name(const az_auth *a)
{
    return MODE_NAMES[a->mode];
}

static bool set(char *dst, size_t len, const char *src)
{
    size_t n = src ? strlen(src) : 0;
    if (n >= len)
        return false;
    memcpy(dst, src ? src : "", n + 1);
    return true;
}

void az_auth_free(az_auth *a)
{
    if (!a)
        return;
    if (a->client_secret) {
        memset(a->client_secret, 0, strlen(a->client_secret));
        free(a->client_secret);
    }
    memset(a->token, 0, sizeof(a->token));
    pthread_mutex_destroy(&a->lock);
    free(a);
}

static int choose_mode(const az_auth_config *c, az_auth_mode *out)
{
    const ns_host *h = c->host;
    az_auth_mode m = c->mode;
    bool secret = c->client_secret && *c->client_secret, file = c->token_file && *c->token_file;
    if (m == AZ_AUTH_AUTO)
        m = secret ? AZ_AUTH_CLIENT_SECRET : file ? AZ_AUTH_WORKLOAD_IDENTITY : AZ_AUTH_MANAGED_IDENTITY;
    if (m == AZ_AUTH_CLIENT_SECRET && !secret)
        return NS_ERROR(h, c->ctx, NS_ERR_INVALID_CONFIG,
                        "azure auth client-secret: no client secret (set AZURE_CLIENT_SECRET)");
    if (m == AZ_AUTH_WORKLOAD_IDENTITY && !file)
        return NS_ERROR(h, c->ctx, NS_ERR_INVALID_CONFIG, "azure auth workload-identity: no federated token file "
                        "(set the option federated_token_file or AZURE_FEDERATED_TOKEN_FILE)");
    if (m != AZ_AUTH_MANAGED_IDENTITY && (!c->tenant || !*c->tenant || !c->client_id || !*c->client_id))
        return NS_ERROR(h, c->ctx, NS_ERR_INVALID_CONFIG, "azure auth %s: tenant_id and client_id are required (the "
                        "options, or AZURE_TENANT_ID and AZURE_CLIENT_ID)", MODE_NAMES[m]);
    *out = m;
    return NS_OK;
}

int az_auth_new(const az_auth_config *c, az_auth **out)
{
    *out = NULL;
    az_auth *a = calloc(1, sizeof(*a));
    if (!a)
        return NS_ERROR(c->host, c->ctx, NS_ERR_INTERNAL, "out of memory creating the azure credential");
    pthread_mutex_init(&a->lock, NULL);
    a->host = c->host;
    a->ctx = c->ctx;
    a->timeout_ms = c->timeout_ms > 0 ? c->timeout_ms : 30000;
    a->max_attempts = c->max_attempts > 0 ? c->max_attempts : 3;
    int rc = choose_mode(c, &a->mode);
    if (rc < 0)
        goto fail;
    if (!set(a->tenant, sizeof(a->tenant), c->tenant) || !set(a->client_id, sizeof(a->client_id), c->client_id) ||
        !set(a->token_file, sizeof(a->token_file), c->token_file) ||
        !set(a->authority, sizeof(a->authority), c->authority) || !set(a->imds, sizeof(a->imds), c->imds) ||
        !set(a->resource, sizeof(a->resource), c->resource)) {
        rc = NS_ERROR(c->host, c->ctx, NS_ERR_INVALID_CONFIG, "azure auth: a tenant, client ID, token file or "
                      "endpoint setting is too long");
        goto fail;
    }
    if (a->mode == AZ_AUTH_CLIENT_SECRET && !(a->client_secret = strdup(c->client_secret))) {
        rc = NS_ERROR(c->host, c->ctx, NS_ERR_INTERNAL, "out of memory creating the azure credential");
        goto fail;
    }
    *out = a;
    return NS_OK;
fail:
    az_auth_free(a);
    return rc;
}

/* application/x-www-form-urlencoded value. */
static int form_append(char *dst, size_t len, size_t *at, const char *key, const char *value)
{
    static const char HEX[] = "0123456789ABCDEF";
    size_t n = *at;
    if (n && n < len)
        dst[n++] = '&';
    for (const char *p = key; *p && n < len; p++)
        dst[n++] = *p;
    if (n < len)
        dst[n++] = '=';
    for (const unsigned char *p = (const unsigned char *)value; *p; p++) {
        if (isalnum(*p) || strchr("-._~", *p)) {
            if (n + 1 >= len)
                return -1;
            dst[n++] = (char)*p;
        } else {
            if (n + 3 >= len)
                return -1;
            dst[n++] = '%';
            dst[n++] = HEX[*p >> 4];
            dst[n++] = HEX[*p & 15];
        }
    }
    if (n >= len)
        return -1;
    dst[n] = '\0';
    *at = n;
    return 0;
}

static int read_token_file(az_auth *a, char *out, size_t len)
{
    FILE *f = fopen(a->token_file, "r");
    if (!f)
        return NS_ERROR(a->host, a->ctx, NS_ERR_UNAUTHORIZED, "azure workload identity: cannot read the federated "
                        "token file %s: %s", a->token_file, strerror(errno));
    size_t n = fread(out, 1, len - 1, f);
    bool more = !feof(f);
    fclose(f);
    out[n] = '\0';
    while (n && isspace((unsigned char)out[n - 1]))
        out[--n] = '\0';
    if (more || n == 0)
        return NS_ERROR(a->host, a->ctx, NS_ERR_UNAUTHORIZED, "azure workload identity: the federated token file %s "
                        "is %s", a->token_file, n ? "too large" : "empty");
    return NS_OK;
}

/* The request for the mode: the token endpoint's form, or IMDS's URL. */
static int build_request(az_auth *a, char *url, size_t url_len, char *form, size_t form_len)
{
    size_t at = 0;
    form[0] = '\0';
    if (a->mode == AZ_AUTH_MANAGED_IDENTITY) {
        char q[1024];
        if (form_append(q, sizeof(q), &at, "resource", a->resource) < 0 ||
            (a->client_id[0] && form_append(q, sizeof(q), &at, "client_id", a->client_id) < 0))
            return NS_ERROR(a->host, a->ctx, NS_ERR_INTERNAL, "azure managed identity: request too long");
        snprintf(url, url_len, "%s/metadata/identity/oauth2/token?api-version=2018-02-01&%s", a->imds, q);
        return NS_OK;
    }
    char scope[300];
    size_t rlen = strlen(a->resource);
    snprintf(scope, sizeof(scope), "%.*s/.default", (int)(rlen && a->resource[rlen - 1] == '/' ? rlen - 1 : rlen),
             a->resource);
    snprintf(url, url_len, "%s/%s/oauth2/v2.0/token", a->authority, a->tenant);
    if (form_append(form, form_len, &at, "grant_type", "client_credentials") < 0 ||
        form_append(form, form_len, &at, "client_id", a->client_id) < 0 ||
        form_append(form, form_len, &at, "scope", scope) < 0)
        return NS_ERROR(a->host, a->ctx, NS_ERR_INTERNAL, "azure auth: request too long");
    if (a->mode == AZ_AUTH_CLIENT_SECRET)
        return form_append(form, form_len, &at, "client_secret", a->client_secret) < 0
                   ? NS_ERROR(a->host, a->ctx, NS_ERR_INTERNAL, "azure auth: client secret too long")
                   : NS_OK;
    char *assertion = malloc(TOKEN_MAX);
    if (!assertion)
        return NS_ERROR(a->host, a->ctx, NS_ERR_INTERNAL, "out of memory reading the federated token");
    int rc = read_token_file(a, assertion, TOKEN_MAX);
    if (rc == NS_OK && (form_append(form, form_len, &at, "client_assertion_type",
                                    "urn:ietf:params:oauth:client-assertion-type:jwt-bearer") < 0 ||
                        form_append(form, form_len, &at, "client_assertion", assertion) < 0))
        rc = NS_ERROR(a->host, a->ctx, NS_ERR_INTERNAL, "azure workload identity: federated token too long");
    memset(assertion, 0, TOKEN_MAX);
    free(assertion);
    return rc;
}

/* Reads the answer: Entra ID's expires_in (seconds, a number) or IMDS's expires_on (epoch seconds, a string). */
static int take_answer(az_auth *a, const ns_http_response *resp, int64_t now)
{
    const ns_host *h = a->host;
    ns_json *doc = h->json_parse(resp->body, resp->body_len);
    int rc = NS_OK;
    const char *what = a->mode == AZ_AUTH_MANAGED_IDENTITY ? "IMDS" : "the Entra ID token endpoint";
    if (!doc) {
        rc = NS_ERROR(h, a->ctx, NS_ERR_UNAUTHORIZED, "azure %s: %s answered HTTP %ld with no JSON",
                      MODE_NAMES[a->mode], what, resp->status);
        goto done;
    }
    if (resp->status != 200) {
        const char *code = h->json_string(h->json_get(doc, "error"));
        const char *desc = h->json_string(h->json_get(doc, "error_description"));
        rc = NS_ERROR(h, a->ctx, resp->status == 429 || resp->status >= 500 ? NS_ERR_THROTTLED : NS_ERR_UNAUTHORIZED,
                      "azure %s: %s refused the token request (HTTP %ld): %s: %.300s", MODE_NAMES[a->mode], what,
                      resp->status, code ? code : "no error code", desc ? desc : "");
        goto done;
    }
    const char *token = h->json_string(h->json_get(doc, "access_token"));
    int64_t lifetime_ms = 0;
    const ns_json *in = h->json_get(doc, "expires_in");
    const ns_json *on = h->json_get(doc, "expires_on");
    if (h->json_type(in) == NS_JSON_NUMBER)
        lifetime_ms = (int64_t)h->json_number(in) * 1000;
    else if (h->json_string(on))
        lifetime_ms = strtoll(h->json_string(on), NULL, 10) * 1000 - now;
    else if (h->json_string(in))
        lifetime_ms = strtoll(h->json_string(in), NULL, 10) * 1000;
    if (!token || !*token || lifetime_ms <= 0) {
        rc = NS_ERROR(h, a->ctx, NS_ERR_UNAUTHORIZED, "azure %s: %s's answer lacks access_token or a future expiry",
                      MODE_NAMES[a->mode], what);
        goto done;
    }
    if (!set(a->token, sizeof(a->token), token)) {
        rc = NS_ERROR(h, a->ctx, NS_ERR_UNAUTHORIZED, "azure %s: the access token is longer than %zu bytes",
                      MODE_NAMES[a->mode], sizeof(a->token) - 1);
        goto done;
    }
    int64_t margin = lifetime_ms / 2 < REFRESH_MARGIN_MS ? lifetime_ms / 2 : REFRESH_MARGIN_MS;
    a->expires_ms = now + lifetime_ms;
    a->refresh_ms = a->expires_ms - margin;
done:
    h->json_free(doc);
    return rc;
}

static int fetch(az_auth *a)
{
    const ns_host *h = a->host;
    char url[1400];
    char *form = malloc(TOKEN_MAX + 2048);
    if (!form)
        return NS_ERROR(h, a->ctx, NS_ERR_INTERNAL, "out of memory requesting an azure token");
    int rc = build_request(a, url, sizeof(url), form, TOKEN_MAX + 2048);
    for (int attempt = 1; rc == NS_OK; attempt++) {
        ns_http_header mi[] = {{"Metadata", "true"}};
        ns_http_header aad[] = {{"Content-Type", "application/x-www-form-urlencoded"}, {"Accept", "application/json"}};
        bool imds = a->mode == AZ_AUTH_MANAGED_IDENTITY;
        ns_http_request req = {.struct_size = sizeof(req), .method = imds ? "GET" : "POST", .url = url,
                               .headers = imds ? mi : aad, .n_headers = imds ? 1u : 2u, .body = imds ? NULL : form,
                               .body_len = imds ? 0 : strlen(form), .timeout_ms = a->timeout_ms, .max_retries = 0};
        ns_http_response *resp = NULL;
        int64_t now = h->now_ms(a->ctx);
        rc = h->http_request(a->ctx, &req, &resp);
        if (rc == NS_OK) {
            rc = take_answer(a, resp, now);
            h->http_response_free(resp);
        }
        if (rc != NS_ERR_THROTTLED || attempt >= a->max_attempts)
            break;
        h->sleep_ms(a->ctx, 200LL << attempt);
        rc = NS_OK;
    }
    memset(form, 0, TOKEN_MAX + 2048);
    free(form);
    if (rc == NS_OK) {
        ns_label fields[] = {{"mode", MODE_NAMES[a->mode]}};
        h->log(a->ctx, NS_LOG_DEBUG, "fetched an azure access token", fields, 1);
    }
    return rc;
}

int az_auth_token(az_auth *a, char *out, size_t len)
{
    pthread_mutex_lock(&a->lock);
    int rc = NS_OK;
    if (!a->token[0] || a->host->now_ms(a->ctx) >= a->refresh_ms)
        rc = fetch(a);
    if (rc == NS_OK && !set(out, len, a->token))
        rc = NS_ERROR(a->host, a->ctx, NS_ERR_INTERNAL, "azure auth: no room for the access token");
    pthread_mutex_unlock(&a->lock);
    return rc;
}

void az_auth_invalidate(az_auth *a, const char *token)
{
    pthread_mutex_lock(&a->lock);
    if (strcmp(a->token, token) == 0)
        a->token[0] = '\0';
    pthread_mutex_unlock(&a->lock);
}
