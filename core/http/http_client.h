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

/* Performs req. On NS_OK *resp is the caller's (free with ns_http_response_free) and may carry any status; after
 * the retries are spent a retryable status is still returned as a response. Transport failures return
 * NS_ERR_THROTTLED (timeouts, refused connections: worth retrying later) or NS_ERR_INVALID_ARGUMENT (a malformed
 * request), with the error recorded. Thread-safe. */
int ns_http_perform(const ns_http_request *req, ns_http_response **resp);
void ns_http_response_free(ns_http_response *resp);

/* The delay before retry `attempt` (1-based): a uniformly random value in [0, min(cap, base * 2^attempt)]. */
int64_t ns_http_backoff_ms(int attempt);
/* A header's value (name compared case-insensitively), or NULL. */
const char *ns_http_response_header(const ns_http_response *resp, const char *name);

#endif
