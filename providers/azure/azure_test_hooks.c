/* test_inject_fault: faults are injected where Azure would produce them, in the ARM emulator (test/emulators/azure)
 * through its control endpoint (option test_control_url). Refused unless the option test_hooks is true.
 *
 * A method's faults apply to the ARM operations that method makes; the cached catalog is dropped so that a method
 * reading it makes its call. Throttles are injected once per attempt, so they outlast the client's retries. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "azure_provider.h"

static const struct {
    const char *method;
    const char *ops; /* JSON array of the emulator's operation names */
} METHODS[] = {
    {"list_instance_types", "[\"skus\"]"},
    {"launch", "[\"skus\",\"vm.get\",\"nic.put\",\"vm.put\",\"operation\"]"},
    {"terminate", "[\"vm.delete\",\"nic.delete\",\"operation\",\"operation_result\"]"},
    {"list_instances", "[\"vm.list\",\"nic.list\"]"},
    {"get_instance", "[\"vm.get\"]"},
    {"poll_events", "[\"vm.list\",\"health.list\"]"},
    {"check_drift", "[\"skus\",\"vm.get\",\"nic.get\"]"},
};

static const struct {
    ns_err category;
    const char *code;
    int status;
} CODES[] = {
    {NS_ERR_NOT_FOUND, "ResourceGroupNotFound", 404},
    {NS_ERR_INSUFFICIENT_CAPACITY, "ZonalAllocationFailed", 409},
    {NS_ERR_UNAUTHORIZED, "AuthorizationFailed", 403},
    {NS_ERR_INVALID_CONFIG, "InvalidParameter", 400},
    {NS_ERR_UNSUPPORTED, "OperationNotSupported", 400},
    {NS_ERR_INTERNAL, "InvalidRequestContent", 400},
    {NS_ERR_INVALID_ARGUMENT, "PropertyChangeNotAllowed", 409},
};

static int post(az_state *s, const char *path, const char *body)
{
    char url[320];
    snprintf(url, sizeof(url), "%s%s", s->control_url, path);
    ns_http_header headers[] = {{"Content-Type", "application/json"}};
    ns_http_request req = {.struct_size = sizeof(req), .method = "POST", .url = url, .headers = headers,
                           .n_headers = 1, .body = body, .body_len = strlen(body), .timeout_ms = 5000,
                           .max_retries = 0};
    ns_http_response *resp = NULL;
    if (s->host->http_request(s->ctx, &req, &resp) < 0)
        return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "test hook: the emulator's control endpoint %s did not "
                        "answer", url);
    long status = resp->status;
    s->host->http_response_free(resp);
    return status == 200 ? NS_OK
                         : NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "test hook: %s answered HTTP %ld to %s", url,
                                    status, body);
}

static void drop_catalog(az_state *s)
{
    pthread_mutex_lock(&s->lock);
    if (s->catalog)
        s->catalog->fetched_ms = INT64_MIN / 2;
    pthread_mutex_unlock(&s->lock);
}

static int call_fault(az_state *s, const ns_fault *f)
{
    const char *ops = "null";
    for (size_t i = 0; f->method && i < sizeof(METHODS) / sizeof(METHODS[0]); i++)
        if (strcmp(METHODS[i].method, f->method) == 0)
            ops = METHODS[i].ops;
    if (f->method && strcmp(ops, "null") == 0)
        return NS_ERROR(s->host, s->ctx, NS_ERR_INVALID_ARGUMENT, "test hook: unknown method %s", f->method);
    drop_catalog(s);
    char body[600];
    unsigned count = f->count ? f->count : 1;
    if (f->kind == NS_FAULT_DELAY) {
        snprintf(body, sizeof(body), "{\"kind\":\"slow\",\"count\":%u,\"delay_ms\":%lld,\"ops\":%s}", count,
                 (long long)f->delay_ms, ops);
        return post(s, "/faults", body);
    }
    if (f->kind == NS_FAULT_THROTTLE || f->error == NS_ERR_THROTTLED) {
        snprintf(body, sizeof(body), "{\"kind\":\"throttle\",\"count\":%u,\"retry_after\":0,\"ops\":%s}",
                 count * (unsigned)s->max_attempts, ops);
        return post(s, "/faults", body);
    }
    for (size_t i = 0; i < sizeof(CODES) / sizeof(CODES[0]); i++)
        if (CODES[i].category == f->error) {
            snprintf(body, sizeof(body), "{\"kind\":\"error\",\"count\":%u,\"code\":\"%s\",\"status\":%d,"
                     "\"ops\":%s}", count, CODES[i].code, CODES[i].status, ops);
            return post(s, "/faults", body);
        }
    return NS_ERROR(s->host, s->ctx, NS_ERR_INVALID_ARGUMENT, "test hook: no ARM error stands for category %d",
                    (int)f->error);
}

static int interrupt(az_state *s, const ns_fault *f)
{
    static const char *const KINDS[] = {NULL, "preempt", "degraded", "maintenance", "stopping", "deleting"};
    char name[128];
    if (!az_vm_name_of(s, f->provider_id, name, sizeof(name)) || f->event < NS_EVENT_SPOT_INTERRUPTION ||
        f->event > NS_EVENT_INSTANCE_TERMINATED)
        return NS_ERROR(s->host, s->ctx, NS_ERR_INVALID_ARGUMENT, "test hook: interrupt needs an event kind and a "
                        "provider ID of this provider (got %s)", f->provider_id ? f->provider_id : "none");
    char body[300];
    snprintf(body, sizeof(body), "{\"kind\":\"%s\",\"vm\":\"%s\",\"deadline_ms\":%lld}", KINDS[f->event], name,
             (long long)f->deadline_ms);
    return post(s, "/events", body);
}

int az_test_inject_fault(void *state, const ns_fault *f)
{
    az_state *s = state;
    if (!s->test_hooks)
        return NS_ERROR(s->host, s->ctx, NS_ERR_UNSUPPORTED, "azure test hooks are off (set the option test_hooks)");
    if (!s->control_url[0])
        return NS_ERROR(s->host, s->ctx, NS_ERR_INVALID_CONFIG,
                        "azure test hooks need test_control_url, the Azure emulator's control endpoint");
    switch (f->kind) {
    case NS_FAULT_INSUFFICIENT_CAPACITY: {
        if (!f->instance_type || !f->zone || !f->capacity_type)
            return NS_ERROR(s->host, s->ctx, NS_ERR_INVALID_ARGUMENT, "test hook: insufficient capacity needs an "
                            "instance type, zone and capacity type");
        const char *dash = strrchr(f->zone, '-');
        char body[400];
        snprintf(body, sizeof(body), "{\"kind\":\"capacity\",\"sku\":\"%s\",\"zone\":\"%s\",\"capacity_type\":"
                 "\"%s\"}", f->instance_type, dash ? dash + 1 : "", f->capacity_type);
        return post(s, "/faults", body);
    }
    case NS_FAULT_THROTTLE:
    case NS_FAULT_FAIL:
    case NS_FAULT_DELAY:
        return call_fault(s, f);
    case NS_FAULT_INTERRUPT:
        return interrupt(s, f);
    case NS_FAULT_CLEAR:
        return post(s, "/clear", "{}");
    }
    return NS_ERROR(s->host, s->ctx, NS_ERR_INVALID_ARGUMENT, "test hook: unknown fault kind %d", (int)f->kind);
}
