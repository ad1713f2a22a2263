/*
 * The Kubernetes API transport: libcurl with TLS always verified (the config's CA, or the system's), client
 * certificates, bearer tokens kept fresh (kube_auth.h), connections and TLS sessions reused across requests and
 * threads (a curl share), HTTP/2 when the server offers it, user agent nodesmith/<version>, a client-side token
 * bucket, and retries with exponential backoff and full jitter for transport failures, 429 and 5xx answers
 * (Retry-After honoured as a floor). A 401 re-reads the credentials once.
 *
 * The backoff is core/http's (ns_http_backoff_ms): one retry policy for every HTTP client of the core. The request
 * path is separate from core/http's ns_http_perform because the API server needs what a provider's HTTP upcall does
 * not: client certificates, a pinned CA bundle, streaming bodies for watches, cancellation, and connection reuse.
 *
 * Thread-safe: one client serves every thread; each request uses its own curl handle over the shared connections.
 */
#ifndef NS_KUBE_CLIENT_H
#define NS_KUBE_CLIENT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "kube/kube_config.h"

#define NS_KUBE_MAX_RETRIES 10
#define NS_KUBE_TIMEOUT_MS 60000

typedef struct ns_kube_client ns_kube_client;

typedef struct ns_kube_client_options {
    double qps;      /* <= 0: KUBE_CLIENT_QPS or 200 */
    int burst;       /* <= 0: KUBE_CLIENT_BURST or 300 */
    int max_retries; /* < 0: NS_KUBE_MAX_RETRIES; 0 = none */
} ns_kube_client_options;

/* Takes ownership of cfg (freed with the client, also on failure). opts may be NULL. NS_ERR_INVALID_CONFIG for a bad
 * KUBE_CLIENT_QPS/BURST, NS_ERR_INTERNAL otherwise. */
int ns_kube_client_new(ns_kube_config *cfg, const ns_kube_client_options *opts, ns_kube_client **out);
/* A client sharing `parent`'s configuration, credentials and connections but with its own token bucket (leader
 * election). The parent must outlive it. */
int ns_kube_client_new_sibling(ns_kube_client *parent, double qps, int burst, ns_kube_client **out);
void ns_kube_client_free(ns_kube_client *c); /* accepts NULL */

const ns_kube_config *ns_kube_client_config(const ns_kube_client *c);
/* "nodesmith/<version>" */
const char *ns_kube_user_agent(void);

/* Called with each piece of a streamed body as it arrives; return false to stop the transfer. */
typedef bool (*ns_kube_data_fn)(void *ud, const char *data, size_t len);

typedef struct ns_kube_req {
    const char *method;
    const char *path;         /* from the server root, with its query: "/api/v1/pods?limit=500" */
    const char *content_type; /* of body; NULL = application/json */
    const char *body;         /* NULL for none */
    size_t body_len;
    bool no_status_retry;     /* hand 429/5xx answers back at once (eviction: 429 means a PDB blocks) */
    int64_t timeout_ms;       /* 0 = NS_KUBE_TIMEOUT_MS; streams: the whole stream's limit */
    ns_kube_data_fn on_data;  /* streaming: the body goes here instead of into the response (2xx only) */
    void *ud;
    atomic_bool *cancel;      /* when set to true the transfer stops within about a second */
} ns_kube_req;

typedef struct ns_kube_resp {
    long status;
    char *body; /* NUL-terminated; streamed 2xx bodies are not kept */
    size_t body_len;
    bool http2;
} ns_kube_resp;

/* Performs req. On 0, *resp holds the final answer (any status; the caller's, ns_kube_resp_clear). Negative on
 * transport failure after the retries (NS_ERR_THROTTLED), a cancelled or callback-stopped stream (NS_ERR_UNSUPPORTED
 * is never used: a stop is 0 with status 200), or credentials that cannot be obtained (NS_ERR_UNAUTHORIZED). */
int ns_kube_do(ns_kube_client *c, const ns_kube_req *req, ns_kube_resp *resp);
void ns_kube_resp_clear(ns_kube_resp *resp);

/* From an answer's Status object: reason ("Conflict", "NotFound", ...) and message; empty strings when absent. */
void ns_kube_status_reason(const ns_kube_resp *resp, char *reason, size_t reason_len, char *message,
                           size_t message_len);
/* Records the failure of a non-2xx answer as "WHAT: HTTP STATUS REASON: MESSAGE" with the category the status maps
 * to (404 not found, 401/403 unauthorized, 429/5xx throttled, 400/409/422 invalid argument) and returns it. */
int ns_kube_fail(const ns_kube_resp *resp, const char *what);

/* Requests with a JSON answer: GET/DELETE/POST/PATCH `path` with body (may be NULL); on 2xx *out (may be NULL) gets
 * the parsed answer (the caller's, cJSON_Delete). *status (may be NULL) gets the HTTP status. A non-2xx answer is
 * returned as ns_kube_fail(what). */
int ns_kube_json(ns_kube_client *c, const char *method, const char *path, const char *content_type, const cJSON *body,
                 const char *what, long *status, cJSON **out);

/* Counters for tests and benchmarks. */
typedef struct ns_kube_stats {
    uint64_t requests;     /* attempts sent */
    uint64_t retries;      /* attempts that were retries */
    uint64_t connections;  /* new connections opened */
    uint64_t limiter_wait_ms;
} ns_kube_stats;
void ns_kube_client_stats(const ns_kube_client *c, ns_kube_stats *out);

#endif
