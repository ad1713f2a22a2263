/*
 * The provider table, its options, and the state's life cycle. This is the file a vendor reads first: it is the
 * whole contract with the core in one place.
 */
#include <stdlib.h>
#include <string.h>

#include "skeleton.h"

/* The core validates the operator's YAML against this table (unknown keys and wrong types are refused) and applies
 * the defaults before init, so init reads plain values. */
static const ns_option sk_options[] = {
    {"region", NS_OPT_STRING, "skeleton-1", "Region to launch in; zones are <region>a, <region>b and <region>c"},
    {"max_instances", NS_OPT_INT, "1000", "Instances the account may run at once; beyond it launches fail with "
                                          "insufficient capacity"},
    {"test_hooks", NS_OPT_BOOL, "false", "Accept test_inject_fault calls (conformance runs only; never in production)"},
    {NULL, 0, NULL, NULL},
};

static void sk_destroy(void *state)
{
    sk_state *st = state;

    if (!st)
        return;
    sk_events_free(st);
    sk_instances_free(st);
    sk_catalog_free(st);
    pthread_mutex_destroy(&st->lock);
    free(st);
}

static int sk_read_options(sk_state *st)
{
    const ns_host *host = st->host;
    const char *region = host->option_string(st->ctx, "region");

    if (!region || !region[0])
        return NS_ERROR(host, st->ctx, NS_ERR_INVALID_CONFIG, "option region: must name a region, got an empty value");
    if (!sk_copy(st->region, sizeof(st->region), region))
        return NS_ERROR(host, st->ctx, NS_ERR_INVALID_CONFIG, "option region: \"%s\" is longer than %zu characters",
                        region, sizeof(st->region) - 1);
    st->max_instances = host->option_int(st->ctx, "max_instances");
    if (st->max_instances <= 0)
        return NS_ERROR(host, st->ctx, NS_ERR_INVALID_CONFIG, "option max_instances: must be positive, got %lld",
                        (long long)st->max_instances);
    st->test_hooks = host->option_bool(st->ctx, "test_hooks");
    return NS_OK;
}

static int sk_init(const ns_host *host, ns_host_ctx *ctx, void **state)
{
    sk_state *st;
    int rc;

    /* A core older than the header this file was built with hands over a shorter host table; refuse cleanly rather
     * than call an upcall past its end. host->error is in every version. */
    if (!NS_HAS_FIELD(host, ns_host, option_bool))
        return NS_ERROR(host, ctx, NS_ERR_UNSUPPORTED, "host ABI %u lacks the option upcalls this provider needs",
                        host->abi_version);
    st = calloc(1, sizeof(*st));
    if (!st)
        return NS_ERROR(host, ctx, NS_ERR_INTERNAL, "allocating the skeleton provider's state: out of memory");
    st->host = host;
    st->ctx = ctx;
    /* Provider IDs stay unique across restarts of the provider, as a cloud's are. */
    st->next_serial = (uint64_t)host->now_ms(ctx) << 12;
    if (pthread_mutex_init(&st->lock, NULL) != 0) {
        free(st);
        return NS_ERROR(host, ctx, NS_ERR_INTERNAL, "initialising the skeleton provider's lock failed");
    }
    rc = sk_read_options(st);
    if (rc == NS_OK)
        rc = sk_catalog_build(st);
    if (rc != NS_OK) {
        sk_destroy(st);
        return rc;
    }
    host->log(ctx, NS_LOG_INFO, "skeleton provider ready",
              (const ns_label[]){{"region", st->region}, {"test-hooks", st->test_hooks ? "true" : "false"}}, 2);
    *state = st;
    return NS_OK;
}

/* ABI 3: the node-class kinds this provider accepts. The core names no cloud's kind: a manifest's node class loads
 * because a loaded provider declares its group, version and kind here. Add a flag such as NS_NODECLASS_KUBELET when
 * spec.kubelet holds Karpenter's kubelet settings. */
static const ns_nodeclass_kind sk_kinds[] = {
    {sizeof(ns_nodeclass_kind), "skeleton.nodesmith.example", "v1alpha1", "SkeletonNodeClass", 0},
};

static const ns_provider sk_provider = {
    .abi_version = NS_PROVIDER_ABI_VERSION,
    .struct_size = sizeof(ns_provider),
    .name = "skeleton",
    .version = "0.1.0",
    .options = sk_options,
    /* ABI 1 */
    .init = sk_init,
    .destroy = sk_destroy,
    .list_instance_types = sk_list_instance_types,
    .launch = sk_launch,
    .terminate = sk_terminate,
    .list_instances = sk_list_instances,
    .poll_events = sk_poll_events,
    /* ABI 2. check_drift and list_repair_policies are optional and left NULL: the core reports them as
     * unsupported. */
    .get_instance = sk_get_instance,
    .validate_nodeclass = sk_validate_nodeclass,
    .test_inject_fault = sk_test_inject_fault,
    /* ABI 3 */
    .nodeclass_kinds = sk_kinds,
    .n_nodeclass_kinds = sizeof(sk_kinds) / sizeof(sk_kinds[0]),
};

NS_EXPORT const ns_provider *nodesmith_provider_entry(void);

NS_EXPORT const ns_provider *nodesmith_provider_entry(void)
{
    return &sk_provider;
}

bool sk_copy(char *dst, size_t dst_size, const char *src)
{
    size_t len = src ? strlen(src) : 0;

    if (len >= dst_size)
        return false;
    memcpy(dst, src ? src : "", len + 1);
    return true;
}
