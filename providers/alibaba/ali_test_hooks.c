/* test_inject_fault: faults are injected where the cloud would produce them, in the emulator (test/emulators/alibaba)
 * named by test_control_url; the mechanism is providers/common/emulator_hooks.c, what is Alibaba Cloud's is here.
 * Refused unless the test_hooks option is true. A method's faults apply to the API actions that method calls. */
#include <stdio.h>

#include "ali_provider.h"
#include "emulator_hooks.h"

#define NODECLASS "\"DescribeVSwitches\",\"DescribeSecurityGroups\",\"DescribeImages\",\"DescribeKubernetesVersionMetadata\""
#define CATALOG "\"DescribeInstanceTypes\",\"DescribeAvailableResource\",\"DescribePrice\",\"DescribeSpotPriceHistory\"," \
                "\"DescribeClusterDetail\""

static const emulator_method METHODS[] = {
    {"list_instance_types", "[" NODECLASS "," CATALOG "]"},
    {"launch", "[" NODECLASS "," CATALOG ",\"DescribeClusterAttachScripts\",\"CreateAutoProvisioningGroup\"]"},
    {"terminate", "[\"DeleteInstance\"]"},
    {"list_instances", "[\"DescribeInstances\"]"},
    {"get_instance", "[\"DescribeInstances\"]"},
    {"poll_events", "[\"ReceiveMessage\",\"DeleteMessage\",\"DescribeInstances\"]"},
    {"check_drift", "[" NODECLASS ",\"DescribeInstances\"]"},
};

/* NOT_FOUND avoids InvalidInstanceId.NotFound, which terminate rightly takes as "already gone". */
static const emulator_error ERRORS[] = {
    {NS_ERR_NOT_FOUND, "InvalidImageId.NotFound", 404},
    {NS_ERR_INSUFFICIENT_CAPACITY, "OperationDenied.NoStock", 403},
    {NS_ERR_UNAUTHORIZED, "Forbidden.RAM", 403},
    {NS_ERR_INVALID_CONFIG, "InvalidParameter", 400},
    {NS_ERR_UNSUPPORTED, "UnsupportedOperation", 400},
    {NS_ERR_INTERNAL, "UnknownError", 400},
    {NS_ERR_INVALID_ARGUMENT, "IdempotentParameterMismatch", 400},
};

static int capacity(void *state, const ns_fault *f, char *body, size_t len)
{
    (void)state;
    snprintf(body, len, "{\"kind\":\"nostock\",\"instance_type\":\"%s\",\"zone\":\"%s\",\"capacity_type\":\"%s\"}",
             f->instance_type, f->zone, f->capacity_type);
    return NS_OK;
}

static int interrupt(void *state, const ns_fault *f, char *body, size_t len)
{
    ali_state *s = state;
    static const char *const KINDS[] = {NULL, "preemptible-interruption", "maintenance-inquiring",
                                        "maintenance-scheduled", "stopping", "deleted"};
    /* Alibaba Cloud has no notice of an impaired instance or of a reclaimed reservation that this provider reads. */
    if ((size_t)f->event >= sizeof(KINDS) / sizeof(KINDS[0]))
        return NS_ERROR(s->host, s->ctx, NS_ERR_UNSUPPORTED, "test hook: the Alibaba Cloud emulator has no event "
                        "of kind %d", (int)f->event);
    const char *id = ali_instance_id_of(s, f->provider_id);
    if (!id)
        return NS_ERROR(s->host, s->ctx, NS_ERR_INVALID_ARGUMENT, "test hook: interrupt needs a %s.i-... provider ID "
                        "(got %s)", s->region, f->provider_id ? f->provider_id : "none");
    snprintf(body, len, "{\"kind\":\"%s\",\"instance_id\":\"%s\",\"deadline_ms\":%lld}", KINDS[f->event], id,
             (long long)f->deadline_ms);
    return NS_OK;
}

static const emulator_dialect ALIBABA = {
    .provider = "alibaba", .cloud = "Alibaba Cloud", .calls_key = "actions", .throttle_extra = "",
    .methods = METHODS, .n_methods = sizeof(METHODS) / sizeof(METHODS[0]),
    .errors = ERRORS, .n_errors = sizeof(ERRORS) / sizeof(ERRORS[0]),
    .capacity = capacity, .interrupt = interrupt,
};

int ali_test_inject_fault(void *state, const ns_fault *f)
{
    ali_state *s = state;
    emulator_hooks e = {.host = s->host, .ctx = s->ctx, .state = s, .enabled = s->test_hooks,
                        .control_url = s->control_url, .max_attempts = (unsigned)s->max_attempts,
                        .dialect = &ALIBABA};
    return emulator_inject_fault(&e, f);
}
