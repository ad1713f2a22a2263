/* test_inject_fault: faults are injected where the cloud would produce them, in the emulator (test/emulators/alibaba)
 * named by test_control_url. Refused unless the test_hooks option is true. A method's faults apply to the API actions
 * that method calls; throttles are injected once per attempt, so they outlast the client's retries. */
#include <stdio.h>
#include <string.h>

#include "ali_provider.h"

#define NODECLASS "\"DescribeVSwitches\",\"DescribeSecurityGroups\",\"DescribeImages\",\"DescribeKubernetesVersionMetadata\""
#define CATALOG "\"DescribeInstanceTypes\",\"DescribeAvailableResource\",\"DescribePrice\",\"DescribeSpotPriceHistory\"," \
                "\"DescribeClusterDetail\""

static const struct {
    const char *method;
    const char *actions;
} METHODS[] = {
    {"list_instance_types", "[" NODECLASS "," CATALOG "]"},
    {"launch", "[" NODECLASS "," CATALOG ",\"DescribeClusterAttachScripts\",\"CreateAutoProvisioningGroup\"]"},
    {"terminate", "[\"DeleteInstance\"]"},
    {"list_instances", "[\"DescribeInstances\"]"},
    {"get_instance", "[\"DescribeInstances\"]"},
    {"poll_events", "[\"ReceiveMessage\",\"DeleteMessage\",\"DescribeInstances\"]"},
    {"check_drift", "[" NODECLASS ",\"DescribeInstances\"]"},
};

/* An API error code for each category and its HTTP status; NOT_FOUND avoids InvalidInstanceId.NotFound, which
 * terminate rightly takes as "already gone". */
static const struct {
    ns_err category;
    const char *code;
    int status;
} CODES[] = {
    {NS_ERR_NOT_FOUND, "InvalidImageId.NotFound", 404},
    {NS_ERR_INSUFFICIENT_CAPACITY, "OperationDenied.NoStock", 403},
    {NS_ERR_UNAUTHORIZED, "Forbidden.RAM", 403},
    {NS_ERR_INVALID_CONFIG, "InvalidParameter", 400},
    {NS_ERR_UNSUPPORTED, "UnsupportedOperation", 400},
    {NS_ERR_INTERNAL, "UnknownError", 400},
    {NS_ERR_INVALID_ARGUMENT, "IdempotentParameterMismatch", 400},
};

static int post(ali_state *s, const char *path, const char *body)
{
    char url[320];
    snprintf(url, sizeof(url), "%s%s", s->control_url, path);
    ns_http_header headers[] = {{"Content-Type", "application/json"}};
    ns_http_request req = {.struct_size = sizeof(req),
                           .method = "POST",
                           .url = url,
                           .headers = headers,
                           .n_headers = 1,
                           .body = body,
                           .body_len = strlen(body),
                           .timeout_ms = 5000};
    ns_http_response *resp = NULL;
    int rc = s->host->http_request(s->ctx, &req, &resp);
    if (rc < 0)
        return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "test hook: the emulator's control endpoint %s did not "
                        "answer", url);
    long status = resp->status;
    s->host->http_response_free(resp);
    return status == 200 ? NS_OK
                         : NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "test hook: %s answered HTTP %ld to %s", url,
                                    status, body);
}

static const char *actions_of(const char *method)
{
    for (size_t i = 0; i < sizeof(METHODS) / sizeof(METHODS[0]); i++)
        if (strcmp(METHODS[i].method, method) == 0)
            return METHODS[i].actions;
    return NULL;
}

static int call_fault(ali_state *s, const ns_fault *f)
{
    const char *actions = "null";
    if (f->method && !(actions = actions_of(f->method)))
        return NS_ERROR(s->host, s->ctx, NS_ERR_INVALID_ARGUMENT, "test hook: unknown method %s", f->method);
    char body[1024];
    unsigned count = f->count ? f->count : 1;
    if (f->kind == NS_FAULT_DELAY) {
        snprintf(body, sizeof(body), "{\"kind\":\"slow\",\"count\":%u,\"delay_ms\":%lld,\"actions\":%s}", count,
                 (long long)f->delay_ms, actions);
        return post(s, "/faults", body);
    }
    if (f->kind == NS_FAULT_THROTTLE || (f->kind == NS_FAULT_FAIL && f->error == NS_ERR_THROTTLED)) {
        snprintf(body, sizeof(body), "{\"kind\":\"throttle\",\"count\":%u,\"actions\":%s}",
                 count * (unsigned)s->max_attempts, actions);
        return post(s, "/faults", body);
    }
    for (size_t i = 0; i < sizeof(CODES) / sizeof(CODES[0]); i++)
        if (CODES[i].category == f->error) {
            snprintf(body, sizeof(body), "{\"kind\":\"error\",\"count\":%u,\"code\":\"%s\",\"status\":%d,"
                     "\"actions\":%s}", count, CODES[i].code, CODES[i].status, actions);
            return post(s, "/faults", body);
        }
    return NS_ERROR(s->host, s->ctx, NS_ERR_INVALID_ARGUMENT, "test hook: no Alibaba Cloud error stands for category %d",
                    (int)f->error);
}

static int interrupt(ali_state *s, const ns_fault *f)
{
    static const char *const KINDS[] = {NULL, "preemptible-interruption", "maintenance-inquiring",
                                        "maintenance-scheduled", "stopping", "deleted"};
    const char *id = ali_instance_id_of(s, f->provider_id);
    if (!id || f->event < NS_EVENT_SPOT_INTERRUPTION || f->event > NS_EVENT_INSTANCE_TERMINATED)
        return NS_ERROR(s->host, s->ctx, NS_ERR_INVALID_ARGUMENT, "test hook: interrupt needs an event kind and a "
                        "%s.i-... provider ID (got %s)", s->region, f->provider_id ? f->provider_id : "none");
    char body[300];
    snprintf(body, sizeof(body), "{\"kind\":\"%s\",\"instance_id\":\"%s\",\"deadline_ms\":%lld}", KINDS[f->event], id,
             (long long)f->deadline_ms);
    return post(s, "/events", body);
}

int ali_test_inject_fault(void *state, const ns_fault *f)
{
    ali_state *s = state;
    if (!s->test_hooks)
        return NS_ERROR(s->host, s->ctx, NS_ERR_UNSUPPORTED, "alibaba test hooks are off (set the option test_hooks)");
    if (!s->control_url[0])
        return NS_ERROR(s->host, s->ctx, NS_ERR_INVALID_CONFIG,
                        "alibaba test hooks need test_control_url, the emulator's control endpoint");
    switch (f->kind) {
    case NS_FAULT_INSUFFICIENT_CAPACITY: {
        if (!f->instance_type || !f->zone || !f->capacity_type)
            return NS_ERROR(s->host, s->ctx, NS_ERR_INVALID_ARGUMENT, "test hook: insufficient capacity needs an "
                            "instance type, zone and capacity type");
        char body[400];
        snprintf(body, sizeof(body), "{\"kind\":\"nostock\",\"instance_type\":\"%s\",\"zone\":\"%s\","
                 "\"capacity_type\":\"%s\"}", f->instance_type, f->zone, f->capacity_type);
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
