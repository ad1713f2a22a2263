#include "ali_client.h"
#include "prov_digest.h"

#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name;
    const char *version;
} PRODUCTS[ALI_N_PRODUCTS] = {{"ecs", "2014-05-26"}, {"vpc", "2016-04-28"}, {"cs", "2015-12-15"}};

struct ali_client {
    const ns_host *host;
    ns_host_ctx *ctx;
    ali_credentials *credentials;
    char region[64];
    int max_attempts;
    int64_t timeout_ms;
    char urls[ALI_N_PRODUCTS][256]; /* "https://ecs.cn-hangzhou.aliyuncs.com" */
    char hosts[ALI_N_PRODUCTS][256]; /* the Host header: host[:port] */
};

static int set_url(ali_client *c, ali_product p, const char *url)
{
    const char *rest = strstr(url, "://");
    if (!rest || strncmp(url, "http", 4) != 0 || snprintf(c->urls[p], sizeof(c->urls[p]), "%s", url) >=
                                                     (int)sizeof(c->urls[p]))
        return NS_ERROR(c->host, c->ctx, NS_ERR_INVALID_CONFIG, "alibaba endpoint '%.100s' is not an http(s) URL",
                        url);
    size_t len = strlen(c->urls[p]);
    while (len && c->urls[p][len - 1] == '/')
        c->urls[p][--len] = '\0';
    rest += 3;
    size_t n = strcspn(rest, "/");
    snprintf(c->hosts[p], sizeof(c->hosts[p]), "%.*s", (int)n, rest);
    return NS_OK;
}

int ali_client_new(const ali_client_config *cfg, ali_client **out)
{
    *out = NULL;
    ali_client *c = calloc(1, sizeof(*c));
    if (!c)
        return NS_ERROR(cfg->host, cfg->ctx, NS_ERR_INTERNAL, "out of memory creating the alibaba client");
    c->host = cfg->host;
    c->ctx = cfg->ctx;
    c->credentials = cfg->credentials;
    c->max_attempts = cfg->max_attempts > 0 ? cfg->max_attempts : 3;
    c->timeout_ms = cfg->timeout_ms > 0 ? cfg->timeout_ms : 30000;
    snprintf(c->region, sizeof(c->region), "%s", cfg->region);
    for (int p = 0; p < ALI_N_PRODUCTS; p++) {
        char url[256];
        if (cfg->endpoint_url)
            snprintf(url, sizeof(url), "%s", cfg->endpoint_url);
        else if (p == ALI_ECS && strcmp(cfg->region, "cn-hangzhou") == 0 && !cfg->vpc_network)
            snprintf(url, sizeof(url), "https://ecs-cn-hangzhou.aliyuncs.com");
        else
            snprintf(url, sizeof(url), "https://%s%s.%s.aliyuncs.com", PRODUCTS[p].name,
                     cfg->vpc_network ? "-vpc" : "", cfg->region);
        int rc = set_url(c, (ali_product)p, url);
        if (rc < 0) {
            free(c);
            return rc;
        }
    }
    *out = c;
    return NS_OK;
}

void ali_client_free(ali_client *c)
{
    free(c);
}

const char *ali_client_endpoint(const ali_client *c, ali_product p)
{
    return c->urls[p];
}

ns_err ali_api_category(const char *code, long status)
{
    static const struct {
        const char *prefix;
        ns_err category;
    } TABLE[] = {
        {"Throttling", NS_ERR_THROTTLED},
        {"ServiceUnavailable", NS_ERR_THROTTLED},
        {"InternalError", NS_ERR_THROTTLED},
        {"OperationDenied.NoStock", NS_ERR_INSUFFICIENT_CAPACITY},
        {"NoStock", NS_ERR_INSUFFICIENT_CAPACITY},
        {"InvalidResourceType.NotSupported", NS_ERR_INSUFFICIENT_CAPACITY},
        {"Zone.NotOnSale", NS_ERR_INSUFFICIENT_CAPACITY},
        {"InvalidAccessKeyId", NS_ERR_UNAUTHORIZED},
        {"SignatureDoesNotMatch", NS_ERR_UNAUTHORIZED},
        {"IncompleteSignature", NS_ERR_UNAUTHORIZED},
        {"InvalidSecurityToken", NS_ERR_UNAUTHORIZED},
        {"Forbidden", NS_ERR_UNAUTHORIZED},
        {"NoPermission", NS_ERR_UNAUTHORIZED},
        {"IdempotentParameterMismatch", NS_ERR_INVALID_ARGUMENT},
        {"Unsupported", NS_ERR_UNSUPPORTED},
        {"InvalidAction", NS_ERR_UNSUPPORTED},
        {"MissingParameter", NS_ERR_INVALID_CONFIG},
        {"InvalidParameter", NS_ERR_INVALID_CONFIG},
    };
    if (code) {
        for (size_t i = 0; i < sizeof(TABLE) / sizeof(TABLE[0]); i++)
            if (strncmp(code, TABLE[i].prefix, strlen(TABLE[i].prefix)) == 0)
                return TABLE[i].category;
        size_t n = strlen(code);
        if (n > 9 && strcmp(code + n - 9, ".NotFound") == 0)
            return NS_ERR_NOT_FOUND;
        if (strncmp(code, "Invalid", 7) == 0)
            return NS_ERR_INVALID_CONFIG;
    }
    if (status >= 500 || status == 429)
        return NS_ERR_THROTTLED;
    if (status == 401 || status == 403)
        return NS_ERR_UNAUTHORIZED;
    if (status == 404)
        return NS_ERR_NOT_FOUND;
    return NS_ERR_INTERNAL;
}

typedef struct call {
    ali_product product;
    const char *action;
    const char *method;
    const char *path;
    ali_params *query;
    const char *body; /* NULL for RPC */
} call;

static int build_headers(ali_client *c, const call *k, const ali_creds *cr, ali_params *hs, const char *url_host)
{
    char date[21], nonce[33], sha[65];
    ali_iso8601(c->host->now_ms(c->ctx) / 1000, date);
    if (ali_nonce(nonce) < 0 || prov_sha256_hex(k->body, k->body ? strlen(k->body) : 0, sha) < 0)
        return NS_ERR_INTERNAL;
    ali_params_add(hs, "host", url_host);
    ali_params_add(hs, "x-acs-action", k->action);
    ali_params_add(hs, "x-acs-version", PRODUCTS[k->product].version);
    ali_params_add(hs, "x-acs-date", date);
    ali_params_add(hs, "x-acs-signature-nonce", nonce);
    ali_params_add(hs, "x-acs-content-sha256", sha);
    ali_params_add(hs, "accept", "application/json");
    if (k->body)
        ali_params_add(hs, "content-type", "application/json; charset=utf-8");
    if (cr->token[0]) {
        ali_params_add(hs, "x-acs-security-token", cr->token);
        ali_params_add(hs, "x-acs-accesskey-id", cr->access_key_id);
    }
    prov_buf auth = PROV_BUF_INIT;
    ali_acs3_input in = {k->method, k->path, k->query, hs, sha, cr->access_key_id, cr->secret};
    int rc = hs->failed ? NS_ERR_INTERNAL : ali_acs3_sign(&in, &auth, NULL);
    if (rc == NS_OK)
        ali_params_add(hs, "Authorization", prov_buf_str(&auth));
    prov_buf_free(&auth);
    return rc == NS_OK && hs->failed ? NS_ERR_INTERNAL : rc;
}

/* One signed attempt. NS_OK with *resp (any status), or an error: *sent tells a transport failure (true) from a
 * failure to get credentials or to sign (false), which is reported already. */
static int attempt(ali_client *c, const call *k, ns_http_response **resp, bool *sent)
{
    ali_creds cr;
    *sent = false;
    int rc = ali_credentials_get(c->credentials, &cr);
    if (rc < 0)
        return rc;
    ali_params hs = {0};
    prov_buf url = PROV_BUF_INIT;
    ns_http_header headers[16];
    if ((rc = build_headers(c, k, &cr, &hs, c->hosts[k->product])) < 0) {
        rc = NS_ERROR(c->host, c->ctx, NS_ERR_INTERNAL, "alibaba %s: signing the request failed", k->action);
        goto out;
    }
    prov_buf_printf(&url, "%s%s", c->urls[k->product], k->path);
    if (k->query->n) {
        prov_buf_puts(&url, "?");
        ali_query_string(&url, k->query);
    }
    size_t n = 0;
    for (size_t i = 0; i < hs.n && n < 16; i++)
        if (strcmp(hs.items[i].key, "host") != 0) /* libcurl sends the URL's host */
            headers[n++] = (ns_http_header){hs.items[i].key, hs.items[i].value};
    ns_http_request req = {.struct_size = sizeof(req),
                           .method = k->method,
                           .url = prov_buf_str(&url),
                           .headers = headers,
                           .n_headers = n,
                           .body = k->body,
                           .body_len = k->body ? strlen(k->body) : 0,
                           .timeout_ms = c->timeout_ms,
                           .max_retries = 0};
    *sent = !prov_buf_failed(&url);
    rc = *sent ? c->host->http_request(c->ctx, &req, resp)
               : NS_ERROR(c->host, c->ctx, NS_ERR_INTERNAL, "alibaba %s: out of memory", k->action);
out:
    ali_params_free(&hs);
    prov_buf_free(&url);
    return rc;
}

static void read_error(ali_client *c, const ns_http_response *resp, ns_json *doc, ali_api_error *e, char *msg,
                       size_t len)
{
    const ns_host *h = c->host;
    const char *code = h->json_string(h->json_get(doc, "Code"));
    const char *message = h->json_string(h->json_get(doc, "Message"));
    if (!code) /* ROA products answer in lower case */
        code = h->json_string(h->json_get(doc, "code"));
    if (!message)
        message = h->json_string(h->json_get(doc, "message"));
    snprintf(e->code, sizeof(e->code), "%s", code ? code : "");
    e->status = resp->status;
    snprintf(msg, len, "%s", message ? message : "");
}

static int64_t backoff_ms(int attempt_no)
{
    unsigned char r[4];
    uint32_t v = 0;
    if (RAND_bytes(r, sizeof(r)) == 1)
        v = (uint32_t)r[0] << 24 | (uint32_t)r[1] << 16 | (uint32_t)r[2] << 8 | r[3];
    int64_t cap = 200LL << (attempt_no < 6 ? attempt_no : 6);
    if (cap > 5000)
        cap = 5000;
    return (int64_t)((double)v / 4294967296.0 * (double)cap);
}

static int perform(ali_client *c, const call *k, ns_json **out, ali_api_error *err)
{
    const ns_host *h = c->host;
    ali_api_error local = {{0}, 0};
    if (!err)
        err = &local;
    *err = (ali_api_error){{0}, 0};
    *out = NULL;
    int rc = NS_ERR_INTERNAL;
    for (int i = 1; i <= c->max_attempts; i++) {
        ns_http_response *resp = NULL;
        bool sent;
        rc = attempt(c, k, &resp, &sent);
        char msg[400] = "";
        if (rc == NS_OK) {
            ns_json *doc = h->json_parse(resp->body, resp->body_len);
            if (resp->status >= 200 && resp->status < 300 && doc) {
                h->http_response_free(resp);
                *out = doc;
                return NS_OK;
            }
            read_error(c, resp, doc, err, msg, sizeof(msg));
            h->json_free(doc);
            long status = resp->status;
            h->http_response_free(resp);
            rc = status >= 200 && status < 300 ? NS_ERR_THROTTLED : (int)ali_api_category(err->code, status);
            if (rc != NS_ERR_THROTTLED || i == c->max_attempts)
                return NS_ERROR(h, c->ctx, rc, "alibaba %s %s: HTTP %ld %s: %s", PRODUCTS[k->product].name, k->action,
                                status, err->code[0] ? err->code : (status < 300 ? "an answer that is not JSON" : ""),
                                msg);
        } else if (!sent && rc != NS_ERR_THROTTLED) {
            return rc; /* credentials or signing: reported where it failed */
        } else if (rc != NS_ERR_THROTTLED || i == c->max_attempts) {
            return NS_ERROR(h, c->ctx, rc, "alibaba %s %s: no answer from %s after %d attempt(s)",
                            PRODUCTS[k->product].name, k->action, c->urls[k->product], i);
        }
        h->sleep_ms(c->ctx, backoff_ms(i));
    }
    return rc;
}

int ali_rpc(ali_client *c, ali_product p, const char *action, ali_params *params, ns_json **out, ali_api_error *err)
{
    if (!ali_params_get(params, "RegionId"))
        ali_params_add(params, "RegionId", c->region);
    if (params->failed)
        return NS_ERROR(c->host, c->ctx, NS_ERR_INTERNAL, "alibaba %s: out of memory", action);
    call k = {p, action, "POST", "/", params, NULL};
    return perform(c, &k, out, err);
}

int ali_roa(ali_client *c, const char *action, const char *method, const char *path, ali_params *query,
            const char *body, ns_json **out, ali_api_error *err)
{
    ali_params none = {0};
    call k = {ALI_CS, action, method, path, query ? query : &none, body};
    int rc = perform(c, &k, out, err);
    ali_params_free(&none);
    return rc;
}
