/* test_inject_fault: faults are injected where a real cloud would produce them, in the AWS endpoint itself, through
 * the control endpoint of the AWS emulator (test/emulators/aws) named by the test_control_url option; the mechanism is
 * providers/common/emulator_hooks.c, what is AWS's is here. Refused unless the test_hooks option is true.
 *
 * A method's faults apply to the AWS actions that method calls (each method's first call fails, so its result is the
 * fault's). */
#include <stdio.h>

#include "aws_provider.h"
#include "emulator_hooks.h"

#define NODECLASS_ACTIONS "\"DescribeSubnets\",\"DescribeSecurityGroups\",\"DescribeImages\",\"GetParameter\""
#define CATALOG_ACTIONS                                                                                                \
    "\"DescribeAvailabilityZones\",\"DescribeInstanceTypes\",\"DescribeInstanceTypeOfferings\","                      \
    "\"DescribeSpotPriceHistory\",\"GetProducts\""

static const emulator_method METHODS[] = {
    {"list_instance_types", "[\"DescribeSubnets\"," CATALOG_ACTIONS "]"},
    {"launch", "[" NODECLASS_ACTIONS "," CATALOG_ACTIONS ",\"DescribeCluster\",\"DescribeLaunchTemplates\","
               "\"CreateLaunchTemplate\",\"CreateFleet\"]"},
    {"terminate", "[\"TerminateInstances\"]"},
    {"list_instances", "[\"DescribeInstances\"]"},
    {"get_instance", "[\"DescribeInstances\"]"},
    {"poll_events", "[\"GetQueueUrl\",\"ReceiveMessage\",\"DeleteMessage\",\"ChangeMessageVisibility\"]"},
    {"check_drift", "[" NODECLASS_ACTIONS ",\"DescribeInstances\"]"},
};

/* NOT_FOUND avoids InvalidInstanceID.NotFound, which terminate rightly takes as "already gone". */
static const emulator_error ERRORS[] = {
    {NS_ERR_NOT_FOUND, "InvalidAMIID.NotFound", 400},
    {NS_ERR_INSUFFICIENT_CAPACITY, "InsufficientInstanceCapacity", 400},
    {NS_ERR_UNAUTHORIZED, "UnauthorizedOperation", 403},
    {NS_ERR_INVALID_CONFIG, "InvalidParameterValue", 400},
    {NS_ERR_UNSUPPORTED, "UnsupportedOperation", 400},
    {NS_ERR_INTERNAL, "InvalidAction", 400},
    {NS_ERR_INVALID_ARGUMENT, "IdempotentParameterMismatch", 400},
};

static int capacity(void *state, const ns_fault *f, char *body, size_t len)
{
    (void)state;
    snprintf(body, len, "{\"kind\":\"ice\",\"instance_type\":\"%s\",\"zone\":\"%s\",\"capacity_type\":\"%s\"}",
             f->instance_type, f->zone, f->capacity_type);
    return NS_OK;
}

/* The instance ID of an interruption's provider ID, or NULL (reported). */
static const char *instance_id(aws_state *s, const ns_fault *f)
{
    const char *id = aws_instance_id_of(f->provider_id);
    if (!id)
        NS_ERROR(s->host, s->ctx, NS_ERR_INVALID_ARGUMENT, "test hook: interrupt needs an aws:///zone/i-... "
                 "provider ID (got %s)", f->provider_id ? f->provider_id : "none");
    return id;
}

static int interrupt(void *state, const ns_fault *f, char *body, size_t len)
{
    aws_state *s = state;
    static const char *const KINDS[] = {
        [NS_EVENT_SPOT_INTERRUPTION] = "spot-interruption",
        [NS_EVENT_REBALANCE_RECOMMENDATION] = "rebalance",
        [NS_EVENT_SCHEDULED_MAINTENANCE] = "scheduled-change",
        [NS_EVENT_INSTANCE_STOPPING] = "state-change",
        [NS_EVENT_INSTANCE_TERMINATED] = "state-change",
        [NS_EVENT_CAPACITY_RESERVATION_INTERRUPTION] = "capacity-reservation-interruption",
    };
    /* NS_EVENT_INSTANCE_UNHEALTHY goes through impair below; the emulator_hooks.c call checked the kind's range. */
    if (!KINDS[f->event])
        return NS_ERROR(s->host, s->ctx, NS_ERR_UNSUPPORTED, "test hook: the AWS interruption queue has no message "
                        "of event kind %d", (int)f->event);
    const char *id = instance_id(s, f);
    if (!id)
        return NS_ERR_INVALID_ARGUMENT;
    snprintf(body, len, "{\"kind\":\"%s\",\"instance_id\":\"%s\",\"state\":\"%s\"}", KINDS[f->event], id,
             f->event == NS_EVENT_INSTANCE_STOPPING ? "stopping" : "shutting-down");
    return NS_OK;
}

/* EC2 reports an impaired instance through DescribeInstanceStatus, not the interruption queue: the emulator fails the
 * instance's status check, impaired since the threshold ago by the provider's clock (the host's, which may be a
 * simulated one the emulator does not share), so the next poll, asked at once, finds it counting, as it would find
 * an instance impaired for two minutes. */
static int impair(void *state, const ns_fault *f, char *body, size_t len)
{
    aws_state *s = state;
    const char *id = instance_id(s, f);
    if (!id)
        return NS_ERR_INVALID_ARGUMENT;
    int64_t since_ms = s->host->now_ms(s->ctx) - AWS_UNHEALTHY_THRESHOLD_MS;
    snprintf(body, len, "{\"instance_id\":\"%s\",\"instanceStatus\":\"impaired\",\"impaired_since\":%lld}", id,
             (long long)(since_ms / 1000));
    aws_instance_status_ask_next_poll(s);
    return NS_OK;
}

static const emulator_dialect AWS = {
    .provider = "aws", .cloud = "AWS", .calls_key = "actions", .throttle_extra = "",
    .methods = METHODS, .n_methods = sizeof(METHODS) / sizeof(METHODS[0]),
    .errors = ERRORS, .n_errors = sizeof(ERRORS) / sizeof(ERRORS[0]),
    .capacity = capacity, .interrupt = interrupt, .impair = impair,
};

int aws_test_inject_fault(void *state, const ns_fault *f)
{
    aws_state *s = state;
    emulator_hooks e = {.host = s->host, .ctx = s->ctx, .state = s, .enabled = s->test_hooks,
                        .control_url = s->control_url, .max_attempts = (unsigned)s->max_attempts, .dialect = &AWS};
    return emulator_inject_fault(&e, f);
}
