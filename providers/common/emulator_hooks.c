/* test_inject_fault through a cloud emulator's control endpoint; see emulator_hooks.h. */
#include "emulator_hooks.h"

#include <stdio.h>
#include <string.h>

static int post(const emulator_hooks *e, const char *path, const char *body)
{
    char url[320];
    snprintf(url, sizeof(url), "%s%s", e->control_url, path);
    ns_http_header headers[] = {{"Content-Type", "application/json"}};
    ns_http_request req = {.struct_size = sizeof(req), .method = "POST", .url = url, .headers = headers,
                           .n_headers = 1, .body = body, .body_len = strlen(body), .timeout_ms = 5000,
                           .max_retries = 0};
    ns_http_response *resp = NULL;
    if (e->host->http_request(e->ctx, &req, &resp) != NS_OK)
        return NS_ERROR(e->host, e->ctx, NS_ERR_INTERNAL, "test hook: the %s emulator's control endpoint %s did not "
                        "answer", e->dialect->cloud, url);
    long status = resp->status;
    e->host->http_response_free(resp);
    return status == 200 ? NS_OK
                         : NS_ERROR(e->host, e->ctx, NS_ERR_INTERNAL, "test hook: %s answered HTTP %ld to %s", url,
                                    status, body);
}

static const char *calls_of(const emulator_dialect *d, const char *method)
{
    for (size_t i = 0; i < d->n_methods; i++)
        if (strcmp(d->methods[i].method, method) == 0)
            return d->methods[i].calls;
    return NULL;
}

/* A throttle, a failure or a delay of a method's calls (of every call when the fault names no method). */
static int call_fault(const emulator_hooks *e, const ns_fault *f)
{
    const emulator_dialect *d = e->dialect;
    const char *calls = "null";
    if (f->method && !(calls = calls_of(d, f->method)))
        return NS_ERROR(e->host, e->ctx, NS_ERR_INVALID_ARGUMENT, "test hook: unknown method %s", f->method);
    if (d->before_call_fault)
        d->before_call_fault(e->state);
    char body[1024];
    unsigned count = f->count ? f->count : 1;
    if (f->kind == NS_FAULT_DELAY) {
        snprintf(body, sizeof(body), "{\"kind\":\"slow\",\"count\":%u,\"delay_ms\":%lld,\"%s\":%s}", count,
                 (long long)f->delay_ms, d->calls_key, calls);
        return post(e, "/faults", body);
    }
    if (f->kind == NS_FAULT_THROTTLE || f->error == NS_ERR_THROTTLED) {
        snprintf(body, sizeof(body), "{\"kind\":\"throttle\",\"count\":%u,%s%s\"%s\":%s}", count * e->max_attempts,
                 d->throttle_extra, d->throttle_extra[0] ? "," : "", d->calls_key, calls);
        return post(e, "/faults", body);
    }
    for (size_t i = 0; i < d->n_errors; i++)
        if (d->errors[i].category == f->error) {
            snprintf(body, sizeof(body), "{\"kind\":\"error\",\"count\":%u,\"code\":\"%s\",\"status\":%d,\"%s\":%s}",
                     count, d->errors[i].code, d->errors[i].status, d->calls_key, calls);
            return post(e, "/faults", body);
        }
    return NS_ERROR(e->host, e->ctx, NS_ERR_INVALID_ARGUMENT, "test hook: no %s error stands for category %d",
                    d->cloud, (int)f->error);
}

int emulator_inject_fault(const emulator_hooks *e, const ns_fault *f)
{
    const emulator_dialect *d = e->dialect;
    if (!e->enabled)
        return NS_ERROR(e->host, e->ctx, NS_ERR_UNSUPPORTED, "%s test hooks are off (set the option test_hooks)",
                        d->provider);
    if (!e->control_url[0])
        return NS_ERROR(e->host, e->ctx, NS_ERR_INVALID_CONFIG,
                        "%s test hooks need test_control_url, the %s emulator's control endpoint", d->provider,
                        d->cloud);
    char body[400];
    int rc;
    switch (f->kind) {
    case NS_FAULT_INSUFFICIENT_CAPACITY:
        if (!f->instance_type || !f->zone || !f->capacity_type)
            return NS_ERROR(e->host, e->ctx, NS_ERR_INVALID_ARGUMENT, "test hook: insufficient capacity needs an "
                            "instance type, zone and capacity type");
        rc = d->capacity(e->state, f, body, sizeof(body));
        return rc == NS_OK ? post(e, "/faults", body) : rc;
    case NS_FAULT_THROTTLE:
    case NS_FAULT_FAIL:
    case NS_FAULT_DELAY:
        return call_fault(e, f);
    case NS_FAULT_INTERRUPT:
        if (f->event < NS_EVENT_SPOT_INTERRUPTION || f->event > NS_EVENT_CAPACITY_RESERVATION_INTERRUPTION)
            return NS_ERROR(e->host, e->ctx, NS_ERR_INVALID_ARGUMENT, "test hook: interrupt needs an event kind "
                            "(got %d)", (int)f->event);
        if (f->event == NS_EVENT_INSTANCE_UNHEALTHY && d->impair) {
            rc = d->impair(e->state, f, body, sizeof(body));
            return rc == NS_OK ? post(e, "/instance_status", body) : rc;
        }
        rc = d->interrupt(e->state, f, body, sizeof(body));
        return rc == NS_OK ? post(e, "/events", body) : rc;
    case NS_FAULT_CLEAR:
        return post(e, "/clear", "{}");
    }
    return NS_ERROR(e->host, e->ctx, NS_ERR_INVALID_ARGUMENT, "test hook: unknown fault kind %d", (int)f->kind);
}
