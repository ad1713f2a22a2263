#include "http/http_client.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <curl/curl.h>
#include <openssl/rand.h>

#include "clock/ns_clock.h"
#include "errors/ns_error.h"

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void curl_init_once(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* Idle libcurl handles. A handle keeps its live connections (and TLS sessions) between transfers, so taking one from
 * here instead of creating a fresh handle per request is what reuses keep-alive connections. A pool rather than a
 * share object: libcurl does not support one connection cache used by concurrent threads. */
#define HANDLE_POOL_MAX 8
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static CURL *pool[HANDLE_POOL_MAX];
static size_t pool_n;

static CURL *handle_take(void)
{
    CURL *curl = NULL;
    pthread_mutex_lock(&pool_lock);
    if (pool_n > 0)
        curl = pool[--pool_n];
    pthread_mutex_unlock(&pool_lock);
    if (curl) {
        curl_easy_reset(curl); /* options back to defaults; the connection cache stays */
        return curl;
    }
    return curl_easy_init();
}

static void handle_give_back(CURL *curl)
{
    if (!curl)
        return;
    pthread_mutex_lock(&pool_lock);
    if (pool_n < HANDLE_POOL_MAX) {
        pool[pool_n++] = curl;
        curl = NULL;
    }
    pthread_mutex_unlock(&pool_lock);
    curl_easy_cleanup(curl);
}

typedef struct buffer {
    char *data;
    size_t len;
    size_t cap;
    size_t limit;    /* the largest body accepted */
    bool over_limit; /* set when the answer was cut for exceeding it */
} buffer;

static int buffer_append(buffer *b, const char *data, size_t len)
{
    if (b->len + len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + len + 1)
            cap *= 2;
        char *grown = realloc(b->data, cap);
        if (!grown)
            return -1;
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = '\0';
    return 0;
}

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *userdata)
{
    buffer *b = userdata;
    size_t len = size * nmemb;
    if (len > b->limit - b->len) {
        b->over_limit = true;
        return 0; /* libcurl aborts the transfer */
    }
    return buffer_append(b, ptr, len) == 0 ? len : 0;
}

typedef struct header_list {
    ns_http_header *items;
    size_t n;
    size_t cap;
} header_list;

static void header_list_clear(header_list *h)
{
    for (size_t i = 0; i < h->n; i++) {
        free((char *)h->items[i].name);
        free((char *)h->items[i].value);
    }
    free(h->items);
    memset(h, 0, sizeof(*h));
}

static size_t on_header(char *ptr, size_t size, size_t nmemb, void *userdata)
{
    header_list *h = userdata;
    size_t len = size * nmemb;
    /* A new status line starts a new response (redirects, 100-continue): keep only the last one's headers. */
    if (len >= 5 && strncmp(ptr, "HTTP/", 5) == 0) {
        header_list_clear(h);
        return len;
    }
    const char *colon = memchr(ptr, ':', len);
    if (!colon)
        return len;
    size_t name_len = (size_t)(colon - ptr);
    const char *v = colon + 1;
    const char *end = ptr + len;
    while (v < end && (*v == ' ' || *v == '\t'))
        v++;
    while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' '))
        end--;
    if (h->n >= NS_HTTP_MAX_HEADERS)
        return 0; /* a server sending thousands of headers is not one we talk to */
    if (h->n == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 16;
        ns_http_header *grown = realloc(h->items, cap * sizeof(*grown));
        if (!grown)
            return 0;
        h->items = grown;
        h->cap = cap;
    }
    char *name = strndup(ptr, name_len);
    char *value = strndup(v, (size_t)(end - v));
    if (!name || !value) {
        free(name);
        free(value);
        return 0;
    }
    for (char *c = name; *c; c++)
        *c = (char)tolower((unsigned char)*c);
    h->items[h->n++] = (ns_http_header){name, value};
    return len;
}

int64_t ns_http_backoff_ms(int attempt)
{
    int64_t ceiling = NS_HTTP_BACKOFF_BASE_MS;
    for (int i = 0; i < attempt && ceiling < NS_HTTP_BACKOFF_CAP_MS; i++)
        ceiling *= 2;
    if (ceiling > NS_HTTP_BACKOFF_CAP_MS)
        ceiling = NS_HTTP_BACKOFF_CAP_MS;
    uint32_t r = 0;
    if (RAND_bytes((unsigned char *)&r, sizeof(r)) != 1)
        r = (uint32_t)ns_clock_now_ms();
    return (int64_t)(r % (uint64_t)(ceiling + 1));
}

const char *ns_http_response_header(const ns_http_response *resp, const char *name)
{
    for (size_t i = 0; resp && i < resp->n_headers; i++) {
        if (strcasecmp(resp->headers[i].name, name) == 0)
            return resp->headers[i].value;
    }
    return NULL;
}

void ns_http_response_free(ns_http_response *resp)
{
    if (!resp)
        return;
    header_list h = {resp->headers, resp->n_headers, resp->n_headers};
    header_list_clear(&h);
    free(resp->body);
    free(resp);
}

static bool status_is_retryable(long status)
{
    return status == 429 || status == 502 || status == 503 || status == 504 || status == 500;
}

/* The CA bundle a request trusts and where that choice came from (for messages), or NULL for the system store. */
static const char *trusted_cas(const ns_http_request *req, const char **source)
{
    if (req->ca_bundle && *req->ca_bundle) {
        *source = "the provider's CA bundle setting";
        return req->ca_bundle;
    }
    const char *env = getenv(NS_HTTP_CA_BUNDLE_ENV);
    *source = "$" NS_HTTP_CA_BUNDLE_ENV;
    return env && *env ? env : NULL;
}

static bool is_certificate_error(CURLcode cc)
{
    return cc == CURLE_PEER_FAILED_VERIFICATION || cc == CURLE_SSL_CACERT_BADFILE || cc == CURLE_SSL_ISSUER_ERROR ||
           cc == CURLE_SSL_CERTPROBLEM || cc == CURLE_SSL_PINNEDPUBKEYNOTMATCH || cc == CURLE_SSL_CRL_BADFILE;
}

/* Describes a failed transfer and returns its category: a rejected certificate or an oversized answer cannot be
 * cured by trying again, a timeout or a refused connection can. */
static int transfer_failure(const ns_http_request *req, CURLcode cc, const char *detail, const buffer *body,
                            const char *ca_bundle, const char *ca_source)
{
    if (body->over_limit || cc == CURLE_FILESIZE_EXCEEDED)
        return NS_FAIL(NS_ERR_INTERNAL, "HTTP %s %s: answer larger than %zu bytes; refused", req->method, req->url,
                       body->limit);
    if (is_certificate_error(cc)) {
        if (ca_bundle)
            return NS_FAIL(NS_ERR_INVALID_CONFIG, "HTTP %s %s: TLS certificate error: %s (trusted CAs: %s, from %s)",
                           req->method, req->url, detail, ca_bundle, ca_source);
        return NS_FAIL(NS_ERR_INVALID_CONFIG,
                       "HTTP %s %s: TLS certificate error: %s (trusted CAs: the system store; name a PEM CA bundle "
                       "with $" NS_HTTP_CA_BUNDLE_ENV " or the provider's CA bundle setting)",
                       req->method, req->url, detail);
    }
    if (cc == CURLE_URL_MALFORMAT || cc == CURLE_UNSUPPORTED_PROTOCOL)
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "HTTP %s %s failed: %s", req->method, req->url, detail);
    if (cc == CURLE_SSL_CONNECT_ERROR)
        return NS_FAIL(NS_ERR_THROTTLED, "HTTP %s %s failed: TLS handshake: %s", req->method, req->url, detail);
    return NS_FAIL(NS_ERR_THROTTLED, "HTTP %s %s failed: %s", req->method, req->url, detail);
}

/* One attempt. Returns NS_OK with *resp, or an error category with the error recorded. */
static int perform_once(const ns_http_request *req, const char *user_agent, int64_t timeout_ms,
                        ns_http_response **resp)
{
    int rc = NS_ERR_INTERNAL;
    const char *ca_source = NULL;
    const char *ca_bundle = trusted_cas(req, &ca_source);
    CURL *curl = NULL;
    struct curl_slist *headers = NULL;
    buffer body = {.limit = req->max_response_bytes ? req->max_response_bytes : NS_HTTP_DEFAULT_MAX_RESPONSE_BYTES};
    header_list hdrs = {0};
    char errbuf[CURL_ERROR_SIZE] = "";
    if (ca_bundle && access(ca_bundle, R_OK) != 0) {
        rc = NS_FAIL(NS_ERR_INVALID_CONFIG, "HTTP %s %s: CA bundle %s (from %s) cannot be read: %s", req->method,
                     req->url, ca_bundle, ca_source, strerror(errno));
        goto cleanup;
    }
    if (!(curl = handle_take())) {
        rc = NS_FAIL(NS_ERR_INTERNAL, "HTTP %s %s: cannot create a libcurl handle", req->method, req->url);
        goto cleanup;
    }
    for (size_t i = 0; i < req->n_headers; i++) {
        char line[8192];
        snprintf(line, sizeof(line), "%s: %s", req->headers[i].name, req->headers[i].value);
        struct curl_slist *next = curl_slist_append(headers, line);
        if (!next) {
            rc = NS_FAIL(NS_ERR_INTERNAL, "HTTP %s %s: out of memory building headers", req->method, req->url);
            goto cleanup;
        }
        headers = next;
    }
    /* libcurl adds "Expect: 100-continue" to large bodies; signed APIs and small emulators do not want it. */
    struct curl_slist *next = curl_slist_append(headers, "Expect:");
    if (next)
        headers = next;
    curl_easy_setopt(curl, CURLOPT_URL, req->url);
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, req->method);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_USERAGENT, user_agent); /* a User-Agent header in req->headers wins */
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, (long)(timeout_ms < 10000 ? timeout_ms : 10000));
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 2L);
    /* An operator's CA bundle (a private cloud endpoint, a test emulator's generated CA) replaces the system's
     * trust store; verification itself is never turned off. */
    if (ca_bundle)
        curl_easy_setopt(curl, CURLOPT_CAINFO, ca_bundle);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)body.limit);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, &hdrs);
    if (strcmp(req->method, "HEAD") == 0)
        curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
    if (req->body) {
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, req->body);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
    }
    CURLcode cc = curl_easy_perform(curl);
    if (cc != CURLE_OK) {
        rc = transfer_failure(req, cc, errbuf[0] ? errbuf : curl_easy_strerror(cc), &body, ca_bundle, ca_source);
        goto cleanup;
    }
    ns_http_response *r = calloc(1, sizeof(*r));
    if (!r || (!body.data && buffer_append(&body, "", 0) != 0)) {
        free(r);
        rc = NS_FAIL(NS_ERR_INTERNAL, "HTTP %s %s: out of memory", req->method, req->url);
        goto cleanup;
    }
    r->struct_size = sizeof(*r);
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &r->status);
    r->body = body.data;
    r->body_len = body.len;
    r->headers = hdrs.items;
    r->n_headers = hdrs.n;
    body.data = NULL;
    hdrs = (header_list){0};
    *resp = r;
    rc = NS_OK;
cleanup:
    free(body.data);
    header_list_clear(&hdrs);
    curl_slist_free_all(headers);
    handle_give_back(curl);
    return rc;
}

static int64_t retry_after_hint_ms(const ns_http_response *resp)
{
    const char *v = ns_http_response_header(resp, "retry-after");
    if (!v)
        return 0;
    char *end = NULL;
    long secs = strtol(v, &end, 10);
    if (end == v || *end != '\0' || secs < 0 || secs > 3600)
        return 0;
    return (int64_t)secs * 1000;
}

int ns_http_perform_as(const ns_http_request *req, const char *user_agent, ns_http_response **resp)
{
    if (!req || !resp || !req->url || !req->method)
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "HTTP request: method, url and response pointer are required");
    *resp = NULL;
    pthread_once(&curl_once, curl_init_once);
    int64_t timeout = req->timeout_ms > 0 ? req->timeout_ms : NS_HTTP_DEFAULT_TIMEOUT_MS;
    int retries = req->max_retries < 0 ? NS_HTTP_DEFAULT_RETRIES : req->max_retries;
    for (int attempt = 0;; attempt++) {
        ns_http_response *r = NULL;
        int rc = perform_once(req, user_agent ? user_agent : NS_HTTP_USER_AGENT, timeout, &r);
        bool retry = attempt < retries && (rc == NS_ERR_THROTTLED || (rc == NS_OK && status_is_retryable(r->status)));
        if (!retry) {
            *resp = r;
            return rc;
        }
        int64_t wait = ns_http_backoff_ms(attempt + 1);
        int64_t hint = rc == NS_OK ? retry_after_hint_ms(r) : 0;
        ns_http_response_free(r);
        ns_clock_sleep_ms(hint > wait ? hint : wait);
    }
}

int ns_http_perform(const ns_http_request *req, ns_http_response **resp)
{
    return ns_http_perform_as(req, NULL, resp);
}
