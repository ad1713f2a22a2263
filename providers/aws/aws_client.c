#include "aws_client.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "aws_errors.h"
#include "aws_retry.h"
#include "aws_sigv4.h"
#include "prov_log.h"

static const char *const SERVICES[] = {"ec2", "sts", "ssm", "sqs", "pricing", "eks"};
#define N_SERVICES (sizeof(SERVICES) / sizeof(SERVICES[0]))

struct aws_client {
    const ns_host *host;
    ns_host_ctx *ctx;
    aws_credentials_provider *credentials;
    char *region;
    int64_t timeout_ms;
    aws_retry_quota quota;
    aws_retry_policy policy;
    char urls[N_SERVICES][512];
    aws_url parsed[N_SERVICES];
};

static int service_index(const char *service)
{
    for (size_t i = 0; i < N_SERVICES; i++)
        if (strcmp(SERVICES[i], service) == 0)
            return (int)i;
    return -1;
}

int aws_client_new(const aws_client_config *config, aws_client **out)
{
    *out = NULL;
    aws_client *c = calloc(1, sizeof(*c));
    if (!c || !(c->region = strdup(config->region ? config->region : "us-east-1"))) {
        free(c);
        return NS_ERROR(config->host, config->ctx, NS_ERR_INTERNAL, "out of memory creating the AWS client");
    }
    c->host = config->host;
    c->ctx = config->ctx;
    c->credentials = config->credentials;
    c->timeout_ms = config->timeout_ms > 0 ? config->timeout_ms : 30000;
    aws_retry_quota_init(&c->quota, AWS_RETRY_QUOTA_CAPACITY);
    c->policy = (aws_retry_policy){config->max_attempts > 0 ? config->max_attempts : AWS_RETRY_DEFAULT_MAX_ATTEMPTS,
                                   AWS_RETRY_MAX_BACKOFF_MS, &c->quota, NULL, NULL};
    for (size_t i = 0; i < N_SERVICES; i++) {
        if (aws_endpoint_resolve(config->env, SERVICES[i], c->region, c->urls[i], sizeof(c->urls[i])) != NS_OK ||
            aws_url_parse(c->urls[i], &c->parsed[i]) != NS_OK) {
            int rc = NS_ERROR(c->host, c->ctx, NS_ERR_INVALID_CONFIG,
                              "AWS %s endpoint: the configured URL (AWS_ENDPOINT_URL_%s or AWS_ENDPOINT_URL) is not "
                              "an http(s) URL",
                              SERVICES[i], SERVICES[i]);
            aws_client_free(c);
            return rc;
        }
    }
    *out = c;
    return NS_OK;
}

void aws_client_free(aws_client *c)
{
    if (!c)
        return;
    aws_retry_quota_destroy(&c->quota);
    free(c->region);
    free(c);
}

const char *aws_client_endpoint(aws_client *c, const char *service)
{
    int i = service_index(service);
    return i < 0 ? NULL : c->urls[i];
}

static const char *response_header(const ns_http_response *resp, const char *name)
{
    for (size_t i = 0; i < resp->n_headers; i++)
        if (strcasecmp(resp->headers[i].name, name) == 0)
            return resp->headers[i].value;
    return NULL;
}

/* Reads the error of a non-2xx answer, in the protocol's format. */
static void read_error(aws_client *c, bool json, const ns_http_response *resp, aws_api_error *e)
{
    memset(e, 0, sizeof(*e));
    if (!json) {
        aws_api_error_parse_xml(resp->body, resp->body_len, e);
        return;
    }
    ns_json *doc = c->host->json_parse(resp->body, resp->body_len);
    const char *type = c->host->json_string(c->host->json_get(doc, "__type"));
    /* REST-JSON services (EKS) name the error in a header: "ResourceNotFoundException:http://..." */
    const char *error_type = response_header(resp, "x-amzn-errortype");
    char rest_type[128] = "";
    if (!type && error_type) {
        snprintf(rest_type, sizeof(rest_type), "%.*s", (int)strcspn(error_type, ":"), error_type);
        type = rest_type;
    }
    const char *message = c->host->json_string(c->host->json_get(doc, "message"));
    if (!message)
        message = c->host->json_string(c->host->json_get(doc, "Message"));
    /* SQS names its historical Query-protocol code in a header; the SDKs prefer it to __type. */
    const char *query_error = response_header(resp, "x-amzn-query-error");
    char legacy[128] = "";
    if (query_error)
        snprintf(legacy, sizeof(legacy), "%.*s", (int)strcspn(query_error, ";"), query_error);
    aws_api_error_from_json(e, legacy[0] ? legacy : type, message, response_header(resp, "x-amzn-requestid"));
    c->host->json_free(doc);
}

typedef struct call_spec {
    const char *service;
    const char *op;
    const char *method;
    const char *path; /* below the endpoint's base path; "/" for the Query and JSON protocols */
    bool json;
    const aws_sigv4_header *headers;
    size_t n_headers;
    const char *body;
    size_t body_len;
} call_spec;

/* Signs and sends one attempt. NS_OK with *resp (any status), or an error: *sent tells a transport failure (true)
 * from a failure to get credentials or to sign (false). */
static int attempt(aws_client *c, const call_spec *s, int idx, ns_http_response **resp, bool *sent)
{
    *sent = false;
    aws_creds creds = {0};
    int rc = aws_credentials_get(c->credentials, &creds);
    if (rc != NS_OK)
        return rc;
    const aws_url *u = &c->parsed[idx];
    char path[600];
    snprintf(path, sizeof(path), "%s%s", u->path, s->path);
    const char *signing_region = strcmp(s->service, "pricing") == 0 ? aws_pricing_region(c->region) : c->region;
    aws_sigv4_request sreq = {s->method, u->host, path, NULL, s->headers, s->n_headers, s->body, s->body_len};
    aws_sigv4_credentials sc = {creds.access_key_id, creds.secret_access_key, creds.session_token};
    aws_sigv4_signature sig = {0};
    rc = aws_sigv4_sign(&sreq, &sc, signing_region, s->service, c->host->now_ms(c->ctx) / 1000, &sig);
    if (rc != NS_OK) {
        rc = NS_ERROR(c->host, c->ctx, NS_ERR_INTERNAL, "%s %s: signing the request failed", s->service, s->op);
    } else {
        ns_http_header headers[8];
        size_t n = 0;
        for (size_t i = 0; i < s->n_headers && n < 5; i++)
            headers[n++] = (ns_http_header){s->headers[i].name, s->headers[i].value};
        headers[n++] = (ns_http_header){"X-Amz-Date", sig.amz_date};
        headers[n++] = (ns_http_header){"Authorization", sig.authorization};
        if (creds.session_token)
            headers[n++] = (ns_http_header){"X-Amz-Security-Token", creds.session_token};
        char url[1200];
        snprintf(url, sizeof(url), "%s://%s%s", u->scheme, u->host, path);
        ns_http_request req = {.struct_size = sizeof(req), .method = s->method, .url = url, .headers = headers,
                               .n_headers = n, .body = s->body, .body_len = s->body_len, .timeout_ms = c->timeout_ms,
                               .max_retries = 0, .ca_bundle = aws_credentials_ca_bundle(c->credentials)};
        *sent = true;
        rc = c->host->http_request(c->ctx, &req, resp);
    }
    aws_sigv4_signature_clear(&sig);
    aws_creds_clear(&creds);
    return rc;
}

static void log_retry(aws_client *c, const call_spec *s, const char *code, int attempts, int64_t delay_ms)
{
    ns_log_field fields[] = {prov_log_str("service", s->service), prov_log_str("operation", s->op),
                             prov_log_str("code", code), prov_log_int("attempt", attempts),
                             prov_log_int("delay_ms", delay_ms)};
    prov_log(c->host, c->ctx, NS_LOG_WARN, "aws request failed; retrying", fields, 5);
}

static int call(aws_client *c, const call_spec *s, ns_http_response **out, aws_api_error *api_error)
{
    *out = NULL;
    aws_api_error scratch;
    aws_api_error *e = api_error ? api_error : &scratch;
    memset(e, 0, sizeof(*e));
    int idx = service_index(s->service);
    if (idx < 0)
        return NS_ERROR(c->host, c->ctx, NS_ERR_INVALID_ARGUMENT, "unknown AWS service %s", s->service);
    aws_retry_call progress = AWS_RETRY_CALL_INIT;
    bool refreshed_credentials = false;
    for (;;) {
        ns_http_response *resp = NULL;
        bool sent = false;
        int rc = attempt(c, s, idx, &resp, &sent);
        aws_error_class cls;
        long status = 0;
        if (rc != NS_OK && sent && rc != NS_ERR_THROTTLED) {
            return rc; /* a rejected certificate, an oversized answer: described by the host, retrying cannot help */
        } else if (rc != NS_OK && sent) {
            cls = (aws_error_class){NS_ERR_THROTTLED, AWS_RETRY_TIMEOUT, false};
            snprintf(e->code, sizeof(e->code), "%s", "");
            snprintf(e->message, sizeof(e->message), "%s unreachable or timed out", c->urls[idx]);
        } else if (rc != NS_OK) {
            return rc; /* credentials or signing: already reported */
        } else if (resp->status >= 200 && resp->status < 300) {
            aws_retry_after_success(&c->policy, &progress);
            *out = resp;
            return NS_OK;
        } else {
            status = resp->status;
            read_error(c, s->json, resp, e);
            cls = aws_classify_error(e->code, status);
            c->host->http_response_free(resp);
        }
        if (cls.bad_credentials && !refreshed_credentials) {
            refreshed_credentials = true;
            aws_credentials_invalidate(c->credentials);
            log_retry(c, s, e->code, progress.attempts, 0);
            continue;
        }
        int64_t delay = 0;
        aws_retry_decision d = aws_retry_after_failure(&c->policy, &progress, cls.retry, &delay);
        if (d == AWS_RETRY_GO) {
            log_retry(c, s, e->code[0] ? e->code : aws_retry_kind_name(cls.retry), progress.attempts - 1, delay);
            c->host->sleep_ms(c->ctx, delay);
            continue;
        }
        char status_s[24] = "no answer";
        if (status)
            snprintf(status_s, sizeof(status_s), "HTTP %ld", status);
        int category = NS_ERROR(c->host, c->ctx, cls.category, "%s %s failed: %s%s%s (%s, request %s, %d attempt%s%s%s)",
                                s->service, s->op, e->code[0] ? e->code : "", e->code[0] ? ": " : "",
                                e->message[0] ? e->message : "no message", status_s,
                                e->request_id[0] ? e->request_id : "unknown", progress.attempts,
                                progress.attempts == 1 ? "" : "s", d == AWS_RETRY_NOT_RETRYABLE ? "" : ", ",
                                d == AWS_RETRY_NOT_RETRYABLE ? "" : aws_retry_decision_name(d));
        if (category == NS_ERR_THROTTLED)
            c->host->error_retry_after(c->ctx, 1000LL << (progress.attempts < 5 ? progress.attempts : 5));
        return category;
    }
}

int aws_client_query(aws_client *c, const char *service, const char *op, const char *body, size_t body_len,
                     ns_http_response **resp, aws_api_error *api_error)
{
    aws_sigv4_header headers[] = {{"Content-Type", "application/x-www-form-urlencoded; charset=utf-8"}};
    call_spec s = {service, op, "POST", "/", false, headers, 1, body, body_len};
    return call(c, &s, resp, api_error);
}

int aws_client_json(aws_client *c, const char *service, const char *target, const char *json_version,
                    const char *body, ns_http_response **resp, aws_api_error *api_error)
{
    char content_type[40];
    snprintf(content_type, sizeof(content_type), "application/x-amz-json-%s", json_version);
    aws_sigv4_header headers[] = {{"Content-Type", content_type}, {"X-Amz-Target", target}};
    const char *op = strchr(target, '.') ? strchr(target, '.') + 1 : target;
    call_spec s = {service, op, "POST", "/", true, headers, 2, body, strlen(body)};
    return call(c, &s, resp, api_error);
}

int aws_client_rest_get(aws_client *c, const char *service, const char *op, const char *path,
                        ns_http_response **resp, aws_api_error *api_error)
{
    call_spec s = {service, op, "GET", path, true, NULL, 0, NULL, 0};
    return call(c, &s, resp, api_error);
}
