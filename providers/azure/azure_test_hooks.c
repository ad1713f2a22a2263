/* test_inject_fault: faults are injected where Azure would produce them, in the ARM emulator (test/emulators/azure)
 * through its control endpoint (option test_control_url); the mechanism is providers/common/emulator_hooks.c, what is
 * Azure's is here. Refused unless the option test_hooks is true. A method's faults apply to the ARM operations that
 * method makes. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "azure_provider.h"
#include "emulator_hooks.h"

static const emulator_method METHODS[] = {
    {"list_instance_types", "[\"skus\"]"},
    {"launch", "[\"skus\",\"vm.get\",\"nic.put\",\"vm.put\",\"operation\"]"},
    {"terminate", "[\"vm.delete\",\"nic.delete\",\"operation\",\"operation_result\"]"},
    {"list_instances", "[\"vm.list\",\"nic.list\"]"},
    {"get_instance", "[\"vm.get\"]"},
    {"poll_events", "[\"vm.list\",\"health.list\"]"},
    {"check_drift", "[\"skus\",\"vm.get\",\"nic.get\"]"},
};

static const emulator_error ERRORS[] = {
    {NS_ERR_NOT_FOUND, "ResourceGroupNotFound", 404},
    {NS_ERR_INSUFFICIENT_CAPACITY, "ZonalAllocationFailed", 409},
    {NS_ERR_UNAUTHORIZED, "AuthorizationFailed", 403},
    {NS_ERR_INVALID_CONFIG, "InvalidParameter", 400},
    {NS_ERR_UNSUPPORTED, "OperationNotSupported", 400},
    {NS_ERR_INTERNAL, "InvalidRequestContent", 400},
    {NS_ERR_INVALID_ARGUMENT, "PropertyChangeNotAllowed", 409},
};

/* A method reading the cached catalog must make its call to meet the fault. */
static void drop_catalog(void *state)
{
    az_state *s = state;
    prov_snapshot_expire(&s->catalogs);
}

static int capacity(void *state, const ns_fault *f, char *body, size_t len)
{
    (void)state;
    const char *dash = strrchr(f->zone, '-');
    snprintf(body, len, "{\"kind\":\"capacity\",\"sku\":\"%s\",\"zone\":\"%s\",\"capacity_type\":\"%s\"}",
             f->instance_type, dash ? dash + 1 : "", f->capacity_type);
    return NS_OK;
}

static int interrupt(void *state, const ns_fault *f, char *body, size_t len)
{
    az_state *s = state;
    static const char *const KINDS[] = {NULL, "preempt", "degraded", "maintenance", "stopping", "deleting"};
    /* Azure has no notice of an impaired VM or of a reclaimed reservation that this provider reads. */
    if ((size_t)f->event >= sizeof(KINDS) / sizeof(KINDS[0]))
        return NS_ERROR(s->host, s->ctx, NS_ERR_UNSUPPORTED, "test hook: the Azure emulator has no event of kind %d",
                        (int)f->event);
    char name[128];
    if (!az_vm_name_of(s, f->provider_id, name, sizeof(name)))
        return NS_ERROR(s->host, s->ctx, NS_ERR_INVALID_ARGUMENT, "test hook: interrupt needs a provider ID of this "
                        "provider (got %s)", f->provider_id ? f->provider_id : "none");
    snprintf(body, len, "{\"kind\":\"%s\",\"vm\":\"%s\",\"deadline_ms\":%lld}", KINDS[f->event], name,
             (long long)f->deadline_ms);
    return NS_OK;
}

static const emulator_dialect AZURE = {
    .provider = "azure", .cloud = "Azure", .calls_key = "ops", .throttle_extra = "\"retry_after\":0",
    .methods = METHODS, .n_methods = sizeof(METHODS) / sizeof(METHODS[0]),
    .errors = ERRORS, .n_errors = sizeof(ERRORS) / sizeof(ERRORS[0]),
    .capacity = capacity, .interrupt = interrupt, .before_call_fault = drop_catalog,
};

int az_test_inject_fault(void *state, const ns_fault *f)
{
    az_state *s = state;
    emulator_hooks e = {.host = s->host, .ctx = s->ctx, .state = s, .enabled = s->test_hooks,
                        .control_url = s->control_url, .max_attempts = (unsigned)s->max_attempts,
                        .dialect = &AZURE};
    return emulator_inject_fault(&e, f);
}
