#include "kube/kube_client.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>
#include <openssl/crypto.h>

#include "clock/ns_clock.h"
#include "errors/ns_error.h"
#include "http/http_client.h"
#include "kube/kube_auth.h"
#include "kube/kube_ratelimit.h"

#ifndef NS_VERSION
#define NS_VERSION "0.0.0"
#endif

#define MAX_BODY_BYTES (512u << 20)
/* Connections kept open per client family (watches hold one each while they run; the rest are reused). */
#define MAX_CONNECTIONS 64

/* What a client and its siblings share: configuration, credentials, connection cache. */
typedef struct kube_shared {
    ns_kube_config *cfg;
    ns_kube_auth *auth;
    CURLSH *share;
    pthread_mutex_t locks[CURL_LOCK_DATA_LAST];
    char *connect_to; /* "NAME:PORT:HOST:PORT" when tls-server-name differs from the server's host */
    char *base_url;   /* the URL prefix requests use */
    atomic_ulong requests, retries, connections, wait_ms;
} kube_shared;

struct ns_kube_client {
    kube_shared *shared;
    bool owns_shared;
    ns_kube_limiter *limiter;
    int max_retries;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void curl_init_once(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

const char *ns_kube_user_agent(void)
{
    return "nodesmith/" NS_VERSION;
}

static void share_lock(CURL *h, curl_lock_data data, curl_lock_access access, void *ud)
{
    kube_shared *s = ud;
    pthread_mutex_lock(&s->locks[data]);
}

static void share_unlock(CURL *h, curl_lock_data data, void *ud)
{
    kube_shared *s = ud;
    pthread_mutex_unlock(&s->locks[data]);
}

static void shared_free(kube_shared *s)
{
    if (!s)
        return;
    if (s->share)
        curl_share_cleanup(s->share);
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_destroy(&s->locks[i]);
    ns_kube_auth_free(s->auth);
    ns_kube_config_free(s->cfg);
    free(s->connect_to);
    free(s->base_url);
    free(s);
}

/* With tls-server-name the URL names that host (so SNI and verification use it) and CURLOPT_CONNECT_TO sends the
 * connection to the server's real address. */
static int setup_urls(kube_shared *s)
{
    const ns_kube_config *cfg = s->cfg;
    if (!cfg->tls_server_name || strncmp(cfg->server, "https://", 8) != 0) {
        s->base_url = strdup(cfg->server);
        return s->base_url ? 0 : NS_FAIL(NS_ERR_INTERNAL, "out of memory");
    }
    CURLU *u = curl_url();
    char *host = NULL, *port = NULL, *url = NULL;
    int rc = 0;
    if (!u || curl_url_set(u, CURLUPART_URL, cfg->server, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) != CURLUE_OK ||
        curl_url_set(u, CURLUPART_HOST, cfg->tls_server_name, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_URL, &url, 0) != CURLUE_OK) {
        rc = NS_FAIL(NS_ERR_INVALID_CONFIG, "%s: server %s with tls-server-name %s is not a valid URL", cfg->source,
                     cfg->server, cfg->tls_server_name);
        goto done;
    }
    size_t len = strlen(cfg->tls_server_name) + strlen(host) + 2 * strlen(port) + 4;
    if (!(s->connect_to = malloc(len)) || !(s->base_url = strdup(url))) {
        rc = NS_FAIL(NS_ERR_INTERNAL, "out of memory");
        goto done;
    }
    snprintf(s->connect_to, len, "%s:%s:%s:%s", cfg->tls_server_name, port, host, port);
    size_t n = strlen(s->base_url);
    while (n > 0 && s->base_url[n - 1] == '/')
        s->base_url[--n] = '\0';
done:
    curl_free(host);
    curl_free(port);
    curl_free(url);
    curl_url_cleanup(u);
    return rc;
}

static int shared_new(ns_kube_config *cfg, kube_shared **out)
{
    kube_shared *s = calloc(1, sizeof(*s));
    int rc;
    if (!s) {
        ns_kube_config_free(cfg);
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory creating the Kubernetes client");
    }
    s->cfg = cfg;
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_init(&s->locks[i], NULL);
    if ((rc = ns_kube_auth_new(cfg, &s->auth)) < 0 || (rc = setup_urls(s)) < 0)
        goto fail;
    if (!(s->share = curl_share_init())) {
        rc = NS_FAIL(NS_ERR_INTERNAL, "cannot create a libcurl share");
        goto fail;
    }
    curl_share_setopt(s->share, CURLSHOPT_LOCKFUNC, share_lock);
    curl_share_setopt(s->share, CURLSHOPT_UNLOCKFUNC, share_unlock);
    curl_share_setopt(s->share, CURLSHOPT_USERDATA, s);
    curl_share_setopt(s->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
    curl_share_setopt(s->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    curl_share_setopt(s->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    *out = s;
    return 0;
fail:
    shared_free(s);
    return rc;
}

int ns_kube_client_new(ns_kube_config *cfg, const ns_kube_client_options *opts, ns_kube_client **out)
{
    pthread_once(&curl_once, curl_init_once);
    double qps = 0;
    int burst = 0, rc;
    ns_kube_client *c = NULL;
    *out = NULL;
    if ((rc = ns_kube_limits_from_env(&qps, &burst)) < 0) {
        ns_kube_config_free(cfg);
        return rc;
    }
    if (opts && opts->qps > 0)
        qps = opts->qps;
    if (opts && opts->burst > 0)
        burst = opts->burst;
    if (!(c = calloc(1, sizeof(*c)))) {
        ns_kube_config_free(cfg);
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory creating the Kubernetes client");
    }
    c->max_retries = opts && opts->max_retries >= 0 ? opts->max_retries : NS_KUBE_MAX_RETRIES;
    c->owns_shared = true;
    if ((rc = shared_new(cfg, &c->shared)) < 0 || !(c->limiter = ns_kube_limiter_new(qps, burst))) {
        rc = rc < 0 ? rc : NS_ERR_INTERNAL;
        ns_kube_client_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

int ns_kube_client_new_sibling(ns_kube_client *parent, double qps, int burst, ns_kube_client **out)
{
    ns_kube_client *c = calloc(1, sizeof(*c));
    if (!c || !(c->limiter = ns_kube_limiter_new(qps, burst))) {
        free(c);
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory creating a Kubernetes client");
    }
    c->shared = parent->shared;
    c->max_retries = parent->max_retries;
    *out = c;
    return 0;
}

void ns_kube_client_free(ns_kube_client *c)
{
    if (!c)
        return;
    if (c->owns_shared)
        shared_free(c->shared);
    ns_kube_limiter_free(c->limiter);
    free(c);
}

const ns_kube_config *ns_kube_client_config(const ns_kube_client *c)
{
    return c->shared->cfg;
}

void ns_kube_resp_clear(ns_kube_resp *resp)
{
    free(resp->body);
    memset(resp, 0, sizeof(*resp));
}

void ns_kube_client_stats(const ns_kube_client *c, ns_kube_stats *out)
{
    out->requests = c->shared->requests;
    out->retries = c->shared->retries;
    out->connections = c->shared->connections;
    out->limiter_wait_ms = c->shared->wait_ms;
}

/* One attempt's state, seen by the curl callbacks. */
typedef struct attempt {
    CURL *curl;
    const ns_kube_req *req;
    char *body;
    size_t len, cap;
    int64_t retry_after_ms;
    bool streamed;  /* bytes went to on_data: the attempt cannot be repeated */
    bool stopped;   /* on_data or cancel asked to stop */
    bool too_large;
    bool http2;
} attempt;

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *ud)
{
    attempt *a = ud;
    size_t n = size * nmemb;
    long status = 0;
    curl_easy_getinfo(a->curl, CURLINFO_RESPONSE_CODE, &status);
    if (a->req->on_data && status >= 200 && status < 300) {
        a->streamed = true;
        if (!a->req->on_data(a->req->ud, ptr, n)) {
            a->stopped = true;
            return 0;
        }
        return n;
    }
    if (a->len + n + 1 > a->cap) {
        size_t cap = a->cap ? a->cap : 16384;
        while (cap < a->len + n + 1)
            cap *= 2;
        char *grown = cap <= MAX_BODY_BYTES ? realloc(a->body, cap) : NULL;
        if (!grown) {
            a->too_large = true;
            return 0;
        }
        a->body = grown;
        a->cap = cap;
    }
    memcpy(a->body + a->len, ptr, n);
    a->len += n;
    a->body[a->len] = '\0';
    return n;
}

static size_t on_header(char *ptr, size_t size, size_t nmemb, void *ud)
{
    attempt *a = ud;
    size_t n = size * nmemb;
    if (n > 12 && strncasecmp(ptr, "retry-after:", 12) == 0) {
        char *end = NULL;
        long secs = strtol(ptr + 12, &end, 10);
        if (end != ptr + 12 && secs >= 0 && secs <= 3600)
            a->retry_after_ms = secs * 1000;
    }
    return n;
}

static int on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
    attempt *a = ud;
    if (a->req->cancel && atomic_load(a->req->cancel)) {
        a->stopped = true;
        return 1;
    }
    return 0;
}

static struct curl_slist *build_headers(const ns_kube_req *req, const ns_kube_creds *creds)
{
    struct curl_slist *h = NULL, *next;
    char line[8192];
    const char *fixed[] = {"Accept: application/json", "Expect:"};
    for (size_t i = 0; i < 2; i++) {
        if (!(next = curl_slist_append(h, fixed[i])))
            goto fail;
        h = next;
    }
    if (req->body) {
        snprintf(line, sizeof(line), "Content-Type: %s", req->content_type ? req->content_type : "application/json");
        if (!(next = curl_slist_append(h, line)))
            goto fail;
        h = next;
    }
    if (creds->token) {
        snprintf(line, sizeof(line), "Authorization: Bearer %s", creds->token);
        next = curl_slist_append(h, line);
        OPENSSL_cleanse(line, sizeof(line));
        if (!next)
            goto fail;
        h = next;
    }
    return h;
fail:
    curl_slist_free_all(h);
    return NULL;
}

static void set_tls(CURL *curl, const kube_shared *s, const ns_kube_creds *creds)
{
    const ns_kube_config *cfg = s->cfg;
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 2L);
    if (cfg->ca_pem) {
        struct curl_blob ca = {cfg->ca_pem, cfg->ca_len, CURL_BLOB_NOCOPY};
        curl_easy_setopt(curl, CURLOPT_CAINFO_BLOB, &ca);
    }
    const char *cert = creds->cert_pem ? creds->cert_pem : cfg->cert_pem;
    size_t cert_len = creds->cert_pem ? creds->cert_len : cfg->cert_len;
    const char *key = creds->key_pem ? creds->key_pem : cfg->key_pem;
    size_t key_len = creds->key_pem ? creds->key_len : cfg->key_len;
    if (cert && key) {
        struct curl_blob cb = {(void *)cert, cert_len, CURL_BLOB_COPY};
        struct curl_blob kb = {(void *)key, key_len, CURL_BLOB_COPY};
        curl_easy_setopt(curl, CURLOPT_SSLCERT_BLOB, &cb);
        curl_easy_setopt(curl, CURLOPT_SSLCERTTYPE, "PEM");
        curl_easy_setopt(curl, CURLOPT_SSLKEY_BLOB, &kb);
        curl_easy_setopt(curl, CURLOPT_SSLKEYTYPE, "PEM");
    }
    if (cfg->username && cfg->password) {
        curl_easy_setopt(curl, CURLOPT_USERNAME, cfg->username);
        curl_easy_setopt(curl, CURLOPT_PASSWORD, cfg->password);
    }
}

/* One attempt. 0 with a->status set, or a transport error with *sent telling whether the request may have reached
 * the server. */
static int perform_once(ns_kube_client *c, const ns_kube_req *req, const ns_kube_creds *creds, attempt *a,
                        long *status, bool *sent)
{
    kube_shared *s = c->shared;
    char errbuf[CURL_ERROR_SIZE] = "";
    int rc = 0;
    size_t url_len = strlen(s->base_url) + strlen(req->path) + 1;
    char *url = malloc(url_len);
    struct curl_slist *headers = build_headers(req, creds);
    struct curl_slist *connect_to = NULL;
    CURL *curl = curl_easy_init();
    *sent = false;
    if (!url || !headers || !curl || (s->connect_to && !(connect_to = curl_slist_append(NULL, s->connect_to)))) {
        rc = NS_FAIL(NS_ERR_INTERNAL, "%s %s: out of memory", req->method, req->path);
        goto done;
    }
    snprintf(url, url_len, "%s%s", s->base_url, req->path);
    a->curl = curl;
    curl_easy_setopt(curl, CURLOPT_SHARE, s->share);
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, req->method);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_USERAGENT, ns_kube_user_agent());
    curl_easy_setopt(curl, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, (long)(req->timeout_ms > 0 ? req->timeout_ms : NS_KUBE_TIMEOUT_MS));
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
    curl_easy_setopt(curl, CURLOPT_TCP_KEEPALIVE, 1L);
    /* The shared connection cache keeps at most this many connections, busy ones included, and closes the oldest
     * idle one past it: at libcurl's default of 5, the informers' long watches alone filled it, so the connection
     * a request had just used was closed at once and every request paid a new TLS handshake (two thirds of the
     * controller's CPU in its benchmark). */
    curl_easy_setopt(curl, CURLOPT_MAXCONNECTS, (long)MAX_CONNECTIONS);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, a);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, a);
    if (connect_to)
        curl_easy_setopt(curl, CURLOPT_CONNECT_TO, connect_to);
    if (req->cancel) {
        curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
        curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
        curl_easy_setopt(curl, CURLOPT_XFERINFODATA, a);
    }
    set_tls(curl, s, creds);
    if (req->body) {
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, req->body);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
    }
    s->requests++;
    CURLcode cc = curl_easy_perform(curl);
    long connects = 0, version = 0;
    curl_easy_getinfo(curl, CURLINFO_NUM_CONNECTS, &connects);
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, status);
    curl_easy_getinfo(curl, CURLINFO_HTTP_VERSION, &version);
    s->connections += (unsigned long)connects;
    a->http2 = version == CURL_HTTP_VERSION_2_0;
    if (cc == CURLE_OK || a->stopped)
        goto done;
    *sent = cc != CURLE_COULDNT_CONNECT && cc != CURLE_COULDNT_RESOLVE_HOST && cc != CURLE_SSL_CONNECT_ERROR;
    if (a->too_large)
        rc = NS_FAIL(NS_ERR_INTERNAL, "%s %s: the answer is larger than %u MiB", req->method, req->path,
                     MAX_BODY_BYTES >> 20);
    else if (cc == CURLE_PEER_FAILED_VERIFICATION || cc == CURLE_SSL_CACERT_BADFILE)
        rc = NS_FAIL(NS_ERR_UNAUTHORIZED, "%s %s%s: the API server's certificate is not trusted: %s", req->method,
                     s->cfg->server, req->path, errbuf[0] ? errbuf : curl_easy_strerror(cc));
    else
        rc = NS_FAIL(NS_ERR_THROTTLED, "%s %s%s failed: %s", req->method, s->cfg->server, req->path,
                     errbuf[0] ? errbuf : curl_easy_strerror(cc));
done:
    curl_easy_cleanup(curl);
    a->curl = NULL;
    curl_slist_free_all(headers);
    curl_slist_free_all(connect_to);
    free(url);
    return rc;
}

static bool status_retryable(long status)
{
    return status == 429 || status == 500 || status == 502 || status == 503 || status == 504;
}

int ns_kube_do(ns_kube_client *c, const ns_kube_req *req, ns_kube_resp *resp)
{
    kube_shared *s = c->shared;
    bool reauthed = false;
    memset(resp, 0, sizeof(*resp));
    for (int tries = 0;; tries++) {
        ns_kube_creds creds = {0};
        attempt a = {.req = req};
        long status = 0;
        bool sent = false;
        s->wait_ms += (unsigned long)ns_kube_limiter_wait(c->limiter);
        if (tries > 0)
            s->retries++;
        int rc = ns_kube_auth_get(s->auth, &creds);
        if (rc == 0)
            rc = perform_once(c, req, &creds, &a, &status, &sent);
        ns_kube_creds_clear(&creds);
        if (rc == 0 && status == 401 && !reauthed && !a.streamed) {
            /* A rotated token file or an expired exec credential: read them again, once. */
            reauthed = true;
            ns_kube_auth_invalidate(s->auth);
            free(a.body);
            tries--;
            continue;
        }
        bool idempotent = strcmp(req->method, "GET") == 0;
        bool retry = tries < c->max_retries && !a.streamed && !a.stopped &&
                     ((rc == NS_ERR_THROTTLED && (idempotent || !sent)) ||
                      (rc == 0 && !req->no_status_retry && status_retryable(status)));
        if (!retry) {
            if (rc < 0) {
                free(a.body);
                return rc;
            }
            resp->status = status;
            resp->body = a.body ? a.body : strdup("");
            resp->body_len = a.len;
            resp->http2 = a.http2;
            if (!resp->body)
                return NS_FAIL(NS_ERR_INTERNAL, "out of memory");
            return 0;
        }
        free(a.body);
        int64_t wait = ns_http_backoff_ms(tries + 1);
        if (a.retry_after_ms > wait)
            wait = a.retry_after_ms;
        if (req->cancel && atomic_load(req->cancel))
            return NS_FAIL(NS_ERR_THROTTLED, "%s %s: cancelled", req->method, req->path);
        ns_clock_sleep_ms(wait);
        ns_error_clear();
    }
}

void ns_kube_status_reason(const ns_kube_resp *resp, char *reason, size_t reason_len, char *message,
                           size_t message_len)
{
    if (reason_len)
        reason[0] = '\0';
    if (message_len)
        message[0] = '\0';
    cJSON *root = resp->body ? cJSON_ParseWithLength(resp->body, resp->body_len) : NULL;
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(root, "reason");
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(root, "message");
    if (cJSON_IsString(r) && reason_len)
        snprintf(reason, reason_len, "%s", r->valuestring);
    if (cJSON_IsString(m) && message_len)
        snprintf(message, message_len, "%s", m->valuestring);
    cJSON_Delete(root);
}

int ns_kube_fail(const ns_kube_resp *resp, const char *what)
{
    char reason[64], message[512];
    ns_kube_status_reason(resp, reason, sizeof(reason), message, sizeof(message));
    int code = NS_ERR_INTERNAL;
    switch (resp->status) {
    case 404:
    case 410:
        code = NS_ERR_NOT_FOUND;
        break;
    case 401:
    case 403:
        code = NS_ERR_UNAUTHORIZED;
        break;
    case 400:
    case 409:
    case 422:
        code = NS_ERR_INVALID_ARGUMENT;
        break;
    default:
        if (status_retryable(resp->status))
            code = NS_ERR_THROTTLED;
        break;
    }
    return NS_FAIL(code, "%s: HTTP %ld %s%s%s", what, resp->status, reason[0] ? reason : "",
                   message[0] ? ": " : "", message);
}

int ns_kube_json(ns_kube_client *c, const char *method, const char *path, const char *content_type, const cJSON *body,
                 const char *what, long *status, cJSON **out)
{
    char *text = body ? cJSON_PrintUnformatted(body) : NULL;
    ns_kube_resp resp;
    int rc;
    if (out)
        *out = NULL;
    if (status)
        *status = 0;
    if (body && !text)
        return NS_FAIL(NS_ERR_INTERNAL, "%s: out of memory encoding the request", what);
    ns_kube_req req = {.method = method, .path = path, .content_type = content_type, .body = text,
                       .body_len = text ? strlen(text) : 0};
    if ((rc = ns_kube_do(c, &req, &resp)) < 0) {
        free(text);
        return ns_error_prefix("%s: ", what);
    }
    free(text);
    if (status)
        *status = resp.status;
    if (resp.status < 200 || resp.status >= 300) {
        rc = ns_kube_fail(&resp, what);
    } else if (out && !(*out = cJSON_ParseWithLength(resp.body, resp.body_len))) {
        rc = NS_FAIL(NS_ERR_INTERNAL, "%s: the API server's answer is not JSON", what);
    }
    ns_kube_resp_clear(&resp);
    return rc;
}
