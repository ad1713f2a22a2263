/*
 * The controller's settings, read as Karpenter reads its own (core:pkg/operator/options/options.go): each from an
 * environment variable, and overridden by the flag of the same name. A bad value stops start-up with an error naming
 * the setting, its variable or flag, the value and why.
 *
 * Memory: the strings are owned by the settings; ns_controller_settings_free releases them (accepts NULL).
 */
#ifndef NS_CONTROLLER_SETTINGS_H
#define NS_CONTROLLER_SETTINGS_H

#include <stdbool.h>
#include <stdint.h>

#include "nodesmith/provider.h"
#include "cost/commitments.h"
#include "manifest/scheduler_config.h"
#include "sched/sched.h"

/* Karpenter's feature gates (FEATURE_GATES "Name=true,Other=false"); unknown names are refused. */
typedef struct ns_feature_gates {
    bool node_repair;        /* NodeRepair, default false */
    bool reserved_capacity;  /* ReservedCapacity, default true */
    bool spot_to_spot;       /* SpotToSpotConsolidation, default false */
    bool node_overlay;       /* NodeOverlay, default false */
    bool static_capacity;    /* StaticCapacity, default false */
    bool capacity_buffer;    /* CapacityBuffer, default false */
} ns_feature_gates;

typedef struct ns_controller_settings {
    int64_t batch_max_ms;         /* BATCH_MAX_DURATION, default 10s */
    int64_t batch_idle_ms;        /* BATCH_IDLE_DURATION, default 1s */
    ns_feature_gates gates;       /* FEATURE_GATES */
    ns_log_level log_level;       /* LOG_LEVEL debug|info|warn|error, default info */
    double kube_qps;              /* KUBE_CLIENT_QPS, default 200 */
    int kube_burst;               /* KUBE_CLIENT_BURST, default 300 */
    int metrics_port;             /* METRICS_PORT, default 8080 */
    int health_port;              /* HEALTH_PROBE_PORT, default 8081 */
    bool leader_election;         /* false with DISABLE_LEADER_ELECTION=true */
    char *leader_election_name;   /* LEADER_ELECTION_NAME, default karpenter-leader-election */
    char *leader_election_namespace; /* LEADER_ELECTION_NAMESPACE, default: the kubeconfig's (pod's) namespace */
    char *cluster_name;           /* CLUSTER_NAME: launch requests and cloud tags, default "nodesmith" */
    char *bind_address;           /* --bind-address: where /metrics and the probes listen, default 0.0.0.0 */
    char *kubeconfig;             /* KUBECONFIG handled by the client; --kubeconfig here */
    char *context;                /* --context */
    ns_sched_packing packing;     /* PACKING karpenter|cost, default karpenter (docs/cost.md) */
    ns_sched_min_values_policy min_values_policy; /* MIN_VALUES_POLICY Strict|BestEffort, default Strict */
    ns_sched_preference_policy preference_policy; /* PREFERENCE_POLICY Respect|Ignore, default Respect */
    ns_scheduler_config sched_config; /* SCHEDULER_CONFIG: a document, default none (manifest/scheduler_config.h) */
    ns_commitments commitments;   /* COMMITMENTS_FILE: read when set, default none (docs/cost.md) */
} ns_controller_settings;

/* Fills *s with Karpenter's defaults. 0 or NS_ERR_INTERNAL. */
int ns_controller_settings_default(ns_controller_settings *s);
void ns_controller_settings_free(ns_controller_settings *s);

/* Reads every setting's environment variable through getenv_fn (NULL = getenv). 0 or NS_ERR_INVALID_CONFIG naming the
 * first bad one. */
int ns_controller_settings_from_env(ns_controller_settings *s, const char *(*getenv_fn)(const char *name));

/* Applies flag `flag` (its long name without dashes: "batch-max-duration") with `value` (NULL for a flag that takes
 * none, as --disable-leader-election). 0; 1 when `flag` is not a setting; NS_ERR_INVALID_CONFIG for a bad value. */
int ns_controller_settings_flag(ns_controller_settings *s, const char *flag, const char *value);

/* Checks the settings together (ports distinct, ...). 0 or NS_ERR_INVALID_CONFIG. */
int ns_controller_settings_check(const ns_controller_settings *s);

/* The help text of every setting: "  --flag VALUE  ENV  description (default ...)" lines. */
const char *ns_controller_settings_help(void);

#endif
