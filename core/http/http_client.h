/*
 * The HTTP client behind host->http_request: libcurl with TLS verification on, per-request timeouts, and retries
 * with exponential backoff and full jitter for connection failures, 429 and 5xx answers (honouring Retry-After).
 */
#ifndef NS_HTTP_CLIENT_H
#define NS_HTTP_CLIENT_H

#include "nodesmith/provider.h"

#define NS_HTTP_DEFAULT_TIMEOUT_MS 30000
#define NS_HTTP_DEFAULT_RETRIES 3
#define NS_HTTP_BACKOFF_BASE_MS 100
#define NS_HTTP_BACKOFF_CAP_MS 20000
#define NS_HTTP_DEFAULT_MAX_RESPONSE_BYTES ((size_t)64 << 20)
#define NS_HTTP_MAX_HEADERS 512
#define NS_HTTP_USER_AGENT "nodesmith/" NS_VERSION
/* The environment variable naming a PEM CA bundle that replaces the system's trust store for every HTTPS request
 * (providers' clouds and the API server alike). Unset or empty = the system's store. A request's own ca_bundle
 * (a provider setting such as AWS_CA_BUNDLE) comes first. */
#define NS_HTTP_CA_BUNDLE_ENV "NODESMITH_CA_BUNDLE"

/* Performs req. On NS_OK *resp is the caller's (free with ns_http_response_free) and may carry any status; after
 * the retries are spent a retryable status is still returned as a response. Transport failures return, with the error
 * recorded: NS_ERR_THROTTLED (timeouts, refused connections, TLS handshake failures: worth retrying later; the
 * only category retried here); NS_ERR_INVALID_CONFIG (a TLS certificate the trust store rejects, an unreadable CA
 * bundle: "TLS certificate error" in the message); NS_ERR_INTERNAL (an answer over req->max_response_bytes);
 * NS_ERR_INVALID_ARGUMENT (a malformed request). Idle connections are kept and reused by later requests.
 * Thread-safe. */
int ns_http_perform(const ns_http_request *req, ns_http_response **resp);
/* The same, sending `user_agent` (NULL = NS_HTTP_USER_AGENT) unless req has a User-Agent header of its own. */
int ns_http_perform_as(const ns_http_request *req, const char *user_agent, ns_http_response **resp);
void ns_http_response_free(ns_http_response *resp);

/* The delay before retry `attempt` (1-based): a uniformly random value in [0, min(cap, base * 2^attempt)]. */
int64_t ns_http_backoff_ms(int attempt);
/* A header's value (name compared case-insensitively), or NULL. */
const char *ns_http_response_header(const ns_http_response *resp, const char *name);

#endif
