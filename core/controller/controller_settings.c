/* The controller's settings: one table of Karpenter's variables and flags, one parser per type. */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config/scalar_parse.h"
#include "controller/controller_settings.h"
#include "errors/ns_error.h"
#include "log/ns_log.h"
#include "manifest/scheduler_config.h"

typedef enum setting_type {
    T_DURATION,
    T_LOG_LEVEL,
    T_QPS,
    T_BURST,
    T_PORT,
    T_DISABLE, /* DISABLE_LEADER_ELECTION: true turns the bool at offset off */
    T_STRING,
    T_GATES,
    T_PACKING,
    T_MIN_VALUES_POLICY,
    T_PREFERENCE_POLICY,
    T_SCHEDULER_CONFIG,
    T_COMMITMENTS,
} setting_type;

typedef struct setting {
    const char *env;
    const char *flag;
    setting_type type;
    size_t offset;
    const char *help;
} setting;

#define OFF(field) offsetof(ns_controller_settings, field)

static const setting settings[] = {
    {"BATCH_MAX_DURATION", "batch-max-duration", T_DURATION, OFF(batch_max_ms),
     "longest a provisioning batch waits after its first pending pod (default 10s)"},
    {"BATCH_IDLE_DURATION", "batch-idle-duration", T_DURATION, OFF(batch_idle_ms),
     "a batch closes after this long without a new pending pod (default 1s)"},
    {"FEATURE_GATES", "feature-gates", T_GATES, OFF(gates),
     "Name=true|false,... of NodeRepair, ReservedCapacity, SpotToSpotConsolidation, NodeOverlay, StaticCapacity, "
     "CapacityBuffer"},
    {"LOG_LEVEL", "log-level", T_LOG_LEVEL, OFF(log_level), "debug, info, warn or error (default info)"},
    {"KUBE_CLIENT_QPS", "kube-client-qps", T_QPS, OFF(kube_qps), "API requests per second (default 200)"},
    {"KUBE_CLIENT_BURST", "kube-client-burst", T_BURST, OFF(kube_burst), "API request burst (default 300)"},
    {"METRICS_PORT", "metrics-port", T_PORT, OFF(metrics_port), "port of /metrics (default 8080)"},
    {"HEALTH_PROBE_PORT", "health-probe-port", T_PORT, OFF(health_port), "port of /healthz and /readyz (default 8081)"},
    {"DISABLE_LEADER_ELECTION", "disable-leader-election", T_DISABLE, OFF(leader_election),
     "run without a leader-election Lease (default false)"},
    {"LEADER_ELECTION_NAME", "leader-election-name", T_STRING, OFF(leader_election_name),
     "the Lease's name (default karpenter-leader-election)"},
    {"LEADER_ELECTION_NAMESPACE", "leader-election-namespace", T_STRING, OFF(leader_election_namespace),
     "the Lease's namespace (default: the kubeconfig context's or the pod's)"},
    {"CLUSTER_NAME", "cluster-name", T_STRING, OFF(cluster_name), "cluster name tagged on instances (default nodesmith)"},
    {"PACKING", "packing", T_PACKING, OFF(packing),
     "karpenter (Karpenter's greedy packing) or cost (the cheapest new nodes per hour; docs/cost.md); default karpenter"},
    {"MIN_VALUES_POLICY", "min-values-policy", T_MIN_VALUES_POLICY, OFF(min_values_policy),
     "Strict (a new node keeps each minValues) or BestEffort (lowered to what is left, annotated); default Strict"},
    {"PREFERENCE_POLICY", "preference-policy", T_PREFERENCE_POLICY, OFF(preference_policy),
     "Respect (preferences bind until relaxed) or Ignore (preferred affinity and ScheduleAnyway spreads are not "
     "read); default Respect"},
    {"COMMITMENTS_FILE", "commitments-file", T_COMMITMENTS, OFF(commitments),
     "a YAML file of savings plans and reserved capacity, priced at their effective cost while they have room "
     "(docs/cost.md); default none"},
    {"SCHEDULER_CONFIG", "scheduler-config", T_SCHEDULER_CONFIG, OFF(sched_config),
     "a YAML or JSON document: podTopologySpread.defaultConstraints spread each pending pod without "
     "topologySpreadConstraints, selected as kube-scheduler selects it; default none"},
    {NULL, "bind-address", T_STRING, OFF(bind_address),
     "IPv4 address /metrics, /healthz and /readyz listen on (default 0.0.0.0, every interface)"},
    {NULL, "kubeconfig", T_STRING, OFF(kubeconfig), "kubeconfig file (default $KUBECONFIG, in-cluster, ~/.kube/config)"},
    {NULL, "context", T_STRING, OFF(context), "kubeconfig context (default the current one)"},
};
#define N_SETTINGS (sizeof(settings) / sizeof(settings[0]))

typedef struct gate {
    const char *name;
    size_t offset;
} gate;

static const gate gates[] = {
    {"NodeRepair", offsetof(ns_feature_gates, node_repair)},
    {"ReservedCapacity", offsetof(ns_feature_gates, reserved_capacity)},
    {"SpotToSpotConsolidation", offsetof(ns_feature_gates, spot_to_spot)},
    {"NodeOverlay", offsetof(ns_feature_gates, node_overlay)},
    {"StaticCapacity", offsetof(ns_feature_gates, static_capacity)},
    {"CapacityBuffer", offsetof(ns_feature_gates, capacity_buffer)},
};

int ns_controller_settings_default(ns_controller_settings *s)
{
    memset(s, 0, sizeof(*s));
    s->batch_max_ms = 10000;
    s->batch_idle_ms = 1000;
    s->gates.reserved_capacity = true;
    s->log_level = NS_LOG_INFO;
    s->kube_qps = 200;
    s->kube_burst = 300;
    s->metrics_port = 8080;
    s->health_port = 8081;
    s->leader_election = true;
    if (!(s->leader_election_name = strdup("karpenter-leader-election")) || !(s->cluster_name = strdup("nodesmith")) ||
        !(s->bind_address = strdup("0.0.0.0"))) {
        ns_controller_settings_free(s);
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory reading the controller's settings");
    }
    return NS_OK;
}

void ns_controller_settings_free(ns_controller_settings *s)
{
    if (!s)
        return;
    free(s->leader_election_name);
    free(s->leader_election_namespace);
    free(s->cluster_name);
    free(s->bind_address);
    ns_scheduler_config_free(&s->sched_config);
    ns_commitments_free(&s->commitments);
    free(s->kubeconfig);
    free(s->context);
    memset(s, 0, sizeof(*s));
}

/* "setting BATCH_MAX_DURATION (--batch-max-duration)" */
static void setting_name(const setting *st, char *buf, size_t len)
{
    if (st->env)
        snprintf(buf, len, "setting %s (--%s)", st->env, st->flag);
    else
        snprintf(buf, len, "setting --%s", st->flag);
}

static int parse_gates(ns_feature_gates *g, const char *value, const char *name)
{
    ns_feature_gates out = *g;
    const char *p = value;
    while (*p) {
        size_t len = strcspn(p, ",");
        char item[128];
        if (len >= sizeof(item))
            return NS_FAIL(NS_ERR_INVALID_CONFIG, "%s: \"%.*s\" is too long for a feature gate", name, (int)len, p);
        memcpy(item, p, len);
        item[len] = '\0';
        p += len + (p[len] == ',');
        char *eq = strchr(item, '=');
        if (len == 0)
            continue;
        if (!eq)
            return NS_FAIL(NS_ERR_INVALID_CONFIG, "%s: \"%s\" in \"%s\" is not Name=true or Name=false", name, item,
                           value);
        *eq = '\0';
        const gate *found = NULL;
        for (size_t i = 0; i < sizeof(gates) / sizeof(gates[0]) && !found; i++)
            if (strcmp(gates[i].name, item) == 0)
                found = &gates[i];
        if (!found)
            return NS_FAIL(NS_ERR_INVALID_CONFIG, "%s: unknown feature gate \"%s\" in \"%s\" (known: NodeRepair, "
                           "ReservedCapacity, SpotToSpotConsolidation, NodeOverlay, StaticCapacity, CapacityBuffer)",
                           name, item, value);
        bool on;
        if (strcasecmp(eq + 1, "true") == 0)
            on = true;
        else if (strcasecmp(eq + 1, "false") == 0)
            on = false;
        else
            return NS_FAIL(NS_ERR_INVALID_CONFIG, "%s: feature gate %s in \"%s\": \"%s\" is not true or false", name,
                           item, value, eq + 1);
        *(bool *)((char *)&out + found->offset) = on;
    }
    *g = out;
    return NS_OK;
}

static int parse_int(const char *value, int64_t min, int64_t max, const char *name, const char *what, int64_t *out)
{
    if (ns_parse_int64(value, out) < 0 || *out < min || *out > max)
        return NS_FAIL(NS_ERR_INVALID_CONFIG, "%s: \"%s\" is not %s", name, value, what);
    return NS_OK;
}

/* from_flag: the value came from the flag, not the variable (a scheduler config's messages name which). */
static int apply(ns_controller_settings *s, const setting *st, const char *value, bool from_flag)
{
    char name[96];
    setting_name(st, name, sizeof(name));
    void *field = (char *)s + st->offset;
    int64_t v;
    if (!value && st->type != T_DISABLE)
        return NS_FAIL(NS_ERR_INVALID_CONFIG, "%s: needs a value", name);
    switch (st->type) {
    case T_DURATION:
        if (ns_parse_duration_ms(value, &v) < 0 || v <= 0)
            return NS_FAIL(NS_ERR_INVALID_CONFIG, "%s: \"%s\" is not a positive duration (like 1s, 500ms, 1m)",
                           name, value);
        *(int64_t *)field = v;
        return NS_OK;
    case T_LOG_LEVEL: {
        ns_log_level level;
        if (ns_log_parse_level(value, &level) < 0)
            return NS_FAIL(NS_ERR_INVALID_CONFIG, "%s: \"%s\" is not debug, info, warn or error", name, value);
        *(ns_log_level *)field = level;
        return NS_OK;
    }
    case T_QPS: {
        char *end = NULL;
        errno = 0;
        double q = strtod(value, &end);
        if (!*value || *end || errno || !isfinite(q) || q <= 0)
            return NS_FAIL(NS_ERR_INVALID_CONFIG, "%s: \"%s\" is not a positive number of requests per second",
                           name, value);
        *(double *)field = q;
        return NS_OK;
    }
    case T_BURST:
        if (parse_int(value, 1, 1000000, name, "a whole number of requests from 1 to 1000000", &v) < 0)
            return NS_ERR_INVALID_CONFIG;
        *(int *)field = (int)v;
        return NS_OK;
    case T_PORT:
        if (parse_int(value, 1, 65535, name, "a port number from 1 to 65535", &v) < 0)
            return NS_ERR_INVALID_CONFIG;
        *(int *)field = (int)v;
        return NS_OK;
    case T_DISABLE: {
        bool b = true;
        if (value && ns_parse_bool(value, &b) < 0)
            return NS_FAIL(NS_ERR_INVALID_CONFIG, "%s: \"%s\" is not true or false", name, value);
        *(bool *)field = !b;
        return NS_OK;
    }
    case T_STRING: {
        if (!*value)
            return NS_FAIL(NS_ERR_INVALID_CONFIG, "%s: must not be empty", name);
        char *copy = strdup(value);
        if (!copy)
            return NS_FAIL(NS_ERR_INTERNAL, "%s: out of memory", name);
        free(*(char **)field);
        *(char **)field = copy;
        return NS_OK;
    }
    case T_GATES: return parse_gates(field, value, name);
    case T_PACKING:
        if (ns_sched_packing_parse(value, (ns_sched_packing *)field) < 0)
            return ns_error_prefix("%s: ", name);
        return NS_OK;
    case T_MIN_VALUES_POLICY:
        if (ns_sched_min_values_policy_parse(value, (ns_sched_min_values_policy *)field) < 0)
            return ns_error_prefix("%s: ", name);
        return NS_OK;
    case T_PREFERENCE_POLICY:
        if (ns_sched_preference_policy_parse(value, (ns_sched_preference_policy *)field) < 0)
            return ns_error_prefix("%s: ", name);
        return NS_OK;
    case T_SCHEDULER_CONFIG: {
        /* The document is the value itself, as Karpenter takes it; messages name its source, line and field. */
        ns_scheduler_config cfg = {0};
        char source[64];
        snprintf(source, sizeof(source), from_flag ? "--%s" : "%s", from_flag ? st->flag : st->env);
        if (ns_scheduler_config_parse(source, value, &cfg) < 0)
            return ns_error_prefix("%s: ", name);
        ns_scheduler_config_free((ns_scheduler_config *)field);
        *(ns_scheduler_config *)field = cfg;
        return NS_OK;
    }
    case T_COMMITMENTS: {
        /* Read at once, so a bad file stops start-up with the commitment, field and why. */
        ns_commitments c;
        if (ns_commitments_read(value, &c) < 0)
            return ns_error_prefix("%s: ", name);
        ns_commitments_free((ns_commitments *)field);
        *(ns_commitments *)field = c;
        return NS_OK;
    }
    }
    return NS_FAIL(NS_ERR_INTERNAL, "%s: unknown setting type", name);
}

static const char *plain_getenv(const char *name)
{
    return getenv(name);
}

int ns_controller_settings_from_env(ns_controller_settings *s, const char *(*getenv_fn)(const char *name))
{
    if (!getenv_fn)
        getenv_fn = plain_getenv;
    for (size_t i = 0; i < N_SETTINGS; i++) {
        const char *v = settings[i].env ? getenv_fn(settings[i].env) : NULL;
        if (!v || (!*v && (settings[i].type == T_STRING || settings[i].type == T_COMMITMENTS)))
            continue;
        int rc = apply(s, &settings[i], v, false);
        if (rc < 0)
            return rc;
    }
    return NS_OK;
}

int ns_controller_settings_flag(ns_controller_settings *s, const char *flag, const char *value)
{
    for (size_t i = 0; i < N_SETTINGS; i++)
        if (strcmp(settings[i].flag, flag) == 0)
            return apply(s, &settings[i], value, true);
    return 1;
}

int ns_controller_settings_check(const ns_controller_settings *s)
{
    if (s->metrics_port == s->health_port)
        return NS_FAIL(NS_ERR_INVALID_CONFIG, "settings METRICS_PORT (--metrics-port) and HEALTH_PROBE_PORT "
                       "(--health-probe-port): both are %d; they must differ", s->metrics_port);
    return NS_OK;
}

const char *ns_controller_settings_help(void)
{
    static char text[8192];
    if (text[0])
        return text;
    size_t off = 0;
    for (size_t i = 0; i < N_SETTINGS && off < sizeof(text); i++) {
        char flag[64];
        snprintf(flag, sizeof(flag), "--%s%s", settings[i].flag, settings[i].type == T_DISABLE ? "" : " VALUE");
        int n = snprintf(text + off, sizeof(text) - off, "  %-34s %s\n", flag, settings[i].env ? settings[i].env : "");
        off += n > 0 ? (size_t)n : 0;
        if (off < sizeof(text)) {
            n = snprintf(text + off, sizeof(text) - off, "      %s\n", settings[i].help);
            off += n > 0 ? (size_t)n : 0;
        }
    }
    return text;
}
