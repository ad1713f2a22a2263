/*
 * The simulated cloud provider: nodesmith's reference backend and embedded default (libvirt's test driver). This
 * file holds the provider table, the option table, init and destroy; each method lives in the file named for it.
 *
 * Built with -DSIM_CLAIM_ABI_VERSION=1 the same sources pretend to be an ABI 1 provider (a table that ends before
 * get_instance), so tests exercise the core's fallbacks for old plugins.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ec2_v1alpha5_defaults.h"
#include "sim_catalog.h"
#include "sim_events.h"
#include "sim_faults.h"
#include "sim_instances.h"
#include "sim_shared.h"
#include "sim_nodeclass.h"
#include "sim_state.h"
#include "prov_log.h"

#ifndef SIM_CLAIM_ABI_VERSION
#define SIM_CLAIM_ABI_VERSION NS_PROVIDER_ABI_VERSION
#endif

#define SIM_MAX_LOG_FIELDS 8

static const struct {
    const char *name;
    sim_violation violation;
} sim_violations[] = {
    {"none", SIM_VIOLATION_NONE},
    {"double-launch", SIM_VIOLATION_DOUBLE_LAUNCH},
    {"missing-label", SIM_VIOLATION_MISSING_LABEL},
    {"negative-price", SIM_VIOLATION_NEGATIVE_PRICE},
    {"ignore-zone", SIM_VIOLATION_IGNORE_ZONE},
    {"terminate-not-idempotent", SIM_VIOLATION_TERMINATE_NOT_IDEMPOTENT},
    {"list-terminated", SIM_VIOLATION_LIST_TERMINATED},
    {"repeat-events", SIM_VIOLATION_REPEAT_EVENTS},
    {"ice-without-offerings", SIM_VIOLATION_ICE_WITHOUT_OFFERINGS},
    {"wrong-capacity-type", SIM_VIOLATION_WRONG_CAPACITY_TYPE},
    {"status-ready", SIM_VIOLATION_STATUS_READY},
    {"silent-errors", SIM_VIOLATION_SILENT_ERRORS},
    {"crash-in-launch", SIM_VIOLATION_CRASH_IN_LAUNCH},
    {"hang-in-get-instance", SIM_VIOLATION_HANG_IN_GET_INSTANCE},
    {"unhealthy-deadline", SIM_VIOLATION_UNHEALTHY_DEADLINE},
};

static const ns_option sim_options[] = {
    {"region", NS_OPT_STRING, "us-west-2", "Region the simulated cloud reports (label topology.kubernetes.io/region)"},
    {"zones", NS_OPT_STRING, "us-west-2a,us-west-2b,us-west-2c",
     "Comma-separated zones; every instance type is offered in each, as spot and on-demand"},
    {"catalog", NS_OPT_STRING, NULL,
     "Instance-type catalog file in the format of aws-instance-types.json; unset: the built-in catalog"},
    {"prices", NS_OPT_STRING, NULL,
     "On-demand price file {\"instance-type\": price per hour}; overrides the built-in prices"},
    {"test_hooks", NS_OPT_BOOL, "false", "Allow test_inject_fault (faults and events injected by tests)"},
    {"violation", NS_OPT_STRING, "none",
     "Break one contract rule on purpose to show the conformance suite catches it: none, double-launch, "
     "missing-label, negative-price, ignore-zone, terminate-not-idempotent, list-terminated, repeat-events, "
     "ice-without-offerings, wrong-capacity-type, status-ready, silent-errors, crash-in-launch, "
     "hang-in-get-instance, unhealthy-deadline"},
    {"launch_latency", NS_OPT_DURATION, "0s", "How long each launch takes, on the host clock"},
    {"state_file", NS_OPT_STRING, NULL,
     "A file holding the instances, shared by every process whose sim names it (controller replicas, restarts); "
     "unset: this process's memory only"},
    {NULL, 0, NULL, NULL},
};

int sim_zone_index(const sim_state *s, const char *zone)
{
    for (size_t z = 0; zone && z < s->n_zones; z++)
        if (strcmp(s->zones[z], zone) == 0)
            return (int)z;
    return -1;
}

bool sim_copy_str(char *dst, size_t dst_len, const char *src)
{
    size_t len = strlen(src);
    if (len >= dst_len)
        return false;
    memcpy(dst, src, len + 1);
    return true;
}

static _Thread_local char sim_last_message[NS_DETAIL_MAX];

int sim_fail(const sim_state *s, int code, const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sim_last_message, sizeof(sim_last_message), fmt, ap);
    va_end(ap);
    return s->host->error(s->ctx, code, file, line, "%s", sim_last_message);
}

const char *sim_last_error(void)
{
    return sim_last_message;
}

void sim_log(const sim_state *s, ns_log_level level, const char *message, ...)
{
    ns_label fields[SIM_MAX_LOG_FIELDS];
    size_t n = 0;
    va_list ap;
    va_start(ap, message);
    for (const char *key = va_arg(ap, const char *); key && n < SIM_MAX_LOG_FIELDS; key = va_arg(ap, const char *))
        fields[n++] = (ns_label){key, va_arg(ap, const char *)};
    va_end(ap);
    s->host->log(s->ctx, level, message, fields, n);
}

static int sim_read_zones(sim_state *s, const char *list)
{
    const char *p = list ? list : "";
    while (*p) {
        p += strspn(p, " ,");
        size_t len = strcspn(p, ",");
        while (len > 0 && isspace((unsigned char)p[len - 1]))
            len--;
        if (len == 0)
            break;
        if (s->n_zones == SIM_MAX_ZONES)
            return SIM_FAIL(s, NS_ERR_INVALID_CONFIG, "option zones: more than %d zones", SIM_MAX_ZONES);
        if (len >= NS_ZONE_MAX)
            return SIM_FAIL(s, NS_ERR_INVALID_CONFIG, "option zones: zone \"%.*s\" is longer than %d characters",
                            (int)len, p, NS_ZONE_MAX - 1);
        char *zone = s->zones[s->n_zones];
        memcpy(zone, p, len);
        zone[len] = '\0';
        if (sim_zone_index(s, zone) >= 0)
            return SIM_FAIL(s, NS_ERR_INVALID_CONFIG, "option zones: zone %s is listed twice", zone);
        s->n_zones++;
        p += len;
        p += strcspn(p, ",");
    }
    if (s->n_zones == 0)
        return SIM_FAIL(s, NS_ERR_INVALID_CONFIG, "option zones: \"%s\" names no zone", list ? list : "");
    return NS_OK;
}

static int sim_read_options(sim_state *s)
{
    const ns_host *h = s->host;
    const char *region = h->option_string(s->ctx, "region");
    if (!region || !region[0] || !sim_copy_str(s->region, sizeof(s->region), region))
        return SIM_FAIL(s, NS_ERR_INVALID_CONFIG, "option region: \"%s\" must be 1 to %d characters",
                        region ? region : "", NS_ZONE_MAX - 1);
    int rc = sim_read_zones(s, h->option_string(s->ctx, "zones"));
    if (rc != NS_OK)
        return rc;

    s->test_hooks = h->option_bool(s->ctx, "test_hooks");
    s->launch_latency_ms = h->option_duration_ms(s->ctx, "launch_latency");
    if (s->launch_latency_ms < 0)
        return SIM_FAIL(s, NS_ERR_INVALID_CONFIG, "option launch_latency: must not be negative");

    const char *violation = h->option_string(s->ctx, "violation");
    size_t n_violations = sizeof(sim_violations) / sizeof(sim_violations[0]);
    size_t v = 0;
    while (v < n_violations && strcmp(sim_violations[v].name, violation ? violation : "none") != 0)
        v++;
    if (v == n_violations)
        return SIM_FAIL(s, NS_ERR_INVALID_CONFIG, "option violation: unknown mode \"%s\" (see docs/providers/sim.md)",
                        violation);
    s->violation = sim_violations[v].violation;
    return NS_OK;
}

static int sim_load_catalog(sim_state *s)
{
    const char *catalog = s->host->option_string(s->ctx, "catalog");
    const char *prices = s->host->option_string(s->ctx, "prices");
    bool from_file = catalog && catalog[0];
    int rc = from_file ? sim_catalog_load_file(s, catalog, &s->catalog) : sim_catalog_load_builtin(s, &s->catalog);
    if (rc == NS_OK && prices && prices[0])
        rc = sim_catalog_apply_prices(s, prices, &s->catalog);
    if (rc == NS_OK && from_file)
        rc = sim_catalog_fill_missing_prices(s, &s->catalog, catalog);
    return rc;
}

static void sim_destroy(void *state)
{
    sim_state *s = state;
    if (!s)
        return;
    sim_shared_close(s);
    sim_instances_free(&s->instances);
    sim_faults_free(&s->faults);
    sim_events_free(&s->events);
    sim_catalog_free(&s->catalog);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

static int sim_init(const ns_host *host, ns_host_ctx *ctx, void **state)
{
    if (!host || !NS_HAS_FIELD(host, ns_host, json_add))
        return NS_ERR_UNSUPPORTED;
    sim_state *s = calloc(1, sizeof(*s));
    if (!s)
        return NS_ERROR(host, ctx, NS_ERR_INTERNAL, "provider sim: out of memory for its state");
    s->host = host;
    s->ctx = ctx;
    s->shared_fd = -1;
    pthread_mutex_init(&s->lock, NULL);

    int rc = sim_read_options(s);
    const char *state_file = rc == NS_OK ? host->option_string(ctx, "state_file") : NULL;
    if (state_file && state_file[0])
        rc = sim_shared_open(s, state_file);
    if (rc == NS_OK)
        rc = sim_load_catalog(s);
    if (rc != NS_OK) {
        sim_destroy(s);
        return rc;
    }
    ns_log_field fields[] = {prov_log_str("region", s->region),
                             prov_log_str("zones", host->option_string(ctx, "zones")),
                             prov_log_int("instance-types", (int64_t)s->catalog.n),
                             prov_log_str("violation", sim_violations[s->violation].name)};
    prov_log(host, ctx, NS_LOG_INFO, "simulated cloud ready", fields, sizeof(fields) / sizeof(fields[0]));
    *state = s;
    return NS_OK;
}

#if SIM_CLAIM_ABI_VERSION >= 2
/* What sim_check_drift compares with each instance (ImageDrift/AMIDrift, ZoneDrift): the core leaves these out of
 * its node class hash so a change is reported by the check, with its reason. */
static const char *const sim_drift_fields[] = {
    "SimNodeClass.imageFamily", "SimNodeClass.imageVersion", "SimNodeClass.zones", "EC2NodeClass.amiSelectorTerms",
    NULL,
};
#endif

#if SIM_CLAIM_ABI_VERSION >= 3
/* Its own kind, and AWS's so that Karpenter's AWS manifests run unchanged against the simulated cloud; a legacy
 * reference without a kind means what it means on AWS. */
static const ns_nodeclass_kind sim_kinds[] = {
    {sizeof(ns_nodeclass_kind), "nodesmith.io", "v1", "SimNodeClass", NS_NODECLASS_KUBELET},
    {sizeof(ns_nodeclass_kind), "karpenter.k8s.aws", "v1", "EC2NodeClass", NS_NODECLASS_KUBELET},
    {sizeof(ns_nodeclass_kind), "karpenter.k8s.aws", "v1beta1", "EC2NodeClass", NS_NODECLASS_DEFAULT_V1BETA1_REF},
    {sizeof(ns_nodeclass_kind), "karpenter.k8s.aws", "v1alpha1", "AWSNodeTemplate", NS_NODECLASS_DEFAULT_V1ALPHA5_REF},
};
#endif

static const ns_provider sim_provider = {
    .abi_version = SIM_CLAIM_ABI_VERSION,
#if SIM_CLAIM_ABI_VERSION >= 6
    .struct_size = sizeof(ns_provider),
#elif SIM_CLAIM_ABI_VERSION == 5
    .struct_size = offsetof(ns_provider, v1alpha5_defaults),
#elif SIM_CLAIM_ABI_VERSION == 4
    .struct_size = offsetof(ns_provider, event_from_node_condition),
#elif SIM_CLAIM_ABI_VERSION == 3
    .struct_size = offsetof(ns_provider, nodeclass_status),
#elif SIM_CLAIM_ABI_VERSION == 2
    .struct_size = offsetof(ns_provider, drift_fields),
#else
    .struct_size = offsetof(ns_provider, get_instance),
#endif
    .name = SIM_PROVIDER_NAME,
    .version = SIM_PROVIDER_VERSION,
    .options = sim_options,
    /* ABI 1 */
    .init = sim_init,
    .destroy = sim_destroy,
    .list_instance_types = sim_list_instance_types,
    .launch = sim_launch,
    .terminate = sim_terminate,
    .list_instances = sim_list_instances,
    .poll_events = sim_poll_events,
#if SIM_CLAIM_ABI_VERSION >= 2
    /* ABI 2 */
    .get_instance = sim_get_instance,
    .check_drift = sim_check_drift,
    .validate_nodeclass = sim_validate_nodeclass,
    .list_repair_policies = sim_list_repair_policies,
    .test_inject_fault = sim_test_inject_fault,
#endif
#if SIM_CLAIM_ABI_VERSION >= 3
    .drift_fields = sim_drift_fields,
    /* ABI 3 */
    .nodeclass_kinds = sim_kinds,
    .n_nodeclass_kinds = sizeof(sim_kinds) / sizeof(sim_kinds[0]),
#endif
#if SIM_CLAIM_ABI_VERSION >= 4
    /* ABI 4 */
    .nodeclass_status = sim_nodeclass_status,
#endif
#if SIM_CLAIM_ABI_VERSION >= 5
    /* ABI 5 */
    .event_from_node_condition = sim_event_from_node_condition,
#endif
#if SIM_CLAIM_ABI_VERSION >= 6
    /* ABI 6: it reads Karpenter's AWS Provisioners as AWS's webhook defaulted them */
    .v1alpha5_defaults = ec2_v1alpha5_defaults,
#endif
};

NS_EXPORT const ns_provider *nodesmith_provider_entry(void);

NS_EXPORT const ns_provider *nodesmith_provider_entry(void)
{
    return &sim_provider;
}
