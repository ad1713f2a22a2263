/*
 * NodePools (karpenter.sh/v1; v1beta1 NodePools and v1alpha5 Provisioners are converted into this on load) and the
 * node-class reference they share with NodeClaims.
 *
 * Memory: ns_nodepool_free frees the pool and everything it owns (accepts NULL).
 */
#ifndef NS_NODEPOOL_H
#define NS_NODEPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/kubelet.h"
#include "model/meta.h"
#include "model/pod.h"
#include "model/requirements.h"
#include "nodesmith/provider.h"

typedef struct ns_nodeclass_ref {
    char *group; /* "karpenter.k8s.aws", "nodesmith.io"; for v1beta1/v1alpha5 the group of the apiVersion */
    char *kind;  /* one of the kinds the loaded providers declare */
    char *name;
} ns_nodeclass_ref;

void ns_nodeclass_ref_free(ns_nodeclass_ref *r); /* members; accepts NULL */

typedef enum ns_consolidation_policy {
    NS_CONSOLIDATE_WHEN_EMPTY_OR_UNDERUTILIZED = 0, /* the v1 default */
    NS_CONSOLIDATE_WHEN_EMPTY = 1,
} ns_consolidation_policy;

/* Disruption reasons a budget applies to (bit mask; 0 = all). */
#define NS_REASON_UNDERUTILIZED 0x1u
#define NS_REASON_EMPTY 0x2u
#define NS_REASON_DRIFTED 0x4u

typedef struct ns_budget {
    bool nodes_percent; /* true: nodes is a percentage of the pool's nodes (rounded up by Karpenter) */
    int64_t nodes;
    char *schedule;      /* cron expression or @daily-style macro; NULL = always active */
    int64_t duration_ms; /* how long the budget is active after each schedule hit; 0 when no schedule */
    unsigned reasons;    /* NS_REASON_* mask; 0 = every reason */
} ns_budget;

/* Resource limits: a resource is limited only when its flag (or, for extended resources, its entry) is set. */
typedef struct ns_resource_limits {
    ns_res max;
    bool cpu, memory, pods, ephemeral_storage;
} ns_resource_limits;

typedef struct ns_nodepool {
    ns_meta meta;
    char *api_version;                 /* as loaded: karpenter.sh/v1, karpenter.sh/v1beta1 or karpenter.sh/v1alpha5 */
    bool converted_from_provisioner;   /* loaded from a v1alpha5 Provisioner */
    ns_labels labels;                  /* spec.template.metadata.labels */
    ns_labels annotations;             /* spec.template.metadata.annotations */
    ns_taint *taints;                  /* owned */
    size_t n_taints;
    ns_taint *startup_taints; /* applied at launch, removed later; never block scheduling */
    size_t n_startup_taints;
    ns_selector_req *requirements;
    size_t n_requirements;
    ns_nodeclass_ref nodeclass_ref;
    int64_t expire_after_ms;             /* NS_DURATION_NEVER (-1) = never; v1 default 720h */
    int64_t termination_grace_period_ms; /* -1 = not set */
    ns_consolidation_policy consolidation_policy;
    int64_t consolidate_after_ms; /* NS_DURATION_NEVER = never consolidate */
    ns_budget *budgets;           /* default: one budget of 10% */
    size_t n_budgets;
    ns_resource_limits limits;
    int32_t weight; /* 0 when unset; 1..100 otherwise */
    /* spec.replicas (Karpenter's static capacity, alpha): when has_replicas, the pool keeps exactly `replicas` nodes
     * instead of scaling with pending pods. */
    bool has_replicas;
    int64_t replicas;
    /* From v1beta1 template.spec.kubelet or a Provisioner's kubeletConfiguration; for v1 pools, filled from the
     * node class's spec.kubelet by ns_cluster_resolve. */
    ns_kubelet_config kubelet;
} ns_nodepool;

/* A zeroed pool with Karpenter v1 defaults (expireAfter 720h, no termination grace period, consolidateAfter 0s,
 * WhenEmptyOrUnderutilized, no budgets yet: the loader adds the default 10% budget when none is given). */
ns_nodepool *ns_nodepool_new(void);
void ns_nodepool_free(ns_nodepool *np);
/* True for a static pool (spec.replicas set): never provisioned for pods nor consolidated (Karpenter's IsStatic). */
bool ns_nodepool_is_static(const ns_nodepool *np);

/* The requirements every node of the pool satisfies: spec requirements, template labels as In, and
 * karpenter.sh/nodepool In [name]. *out is overwritten; free with ns_requirements_free. */
int ns_nodepool_requirements(const ns_nodepool *np, ns_requirements *out);
/* True when the pod tolerates the pool's taints; startup taints are ignored (see taints.h for flags). */
bool ns_nodepool_tolerates(const ns_nodepool *np, const ns_pod *pod, unsigned flags, char *reason,
                           size_t reason_len);
/* True when usage exceeds a limit; reason (may be NULL) names it: "cpu resource usage of 12 exceeds limit of 10". */
bool ns_resource_limits_exceeded(const ns_resource_limits *l, const ns_res *usage, char *reason,
                                 size_t reason_len);
/* qsort comparator for an array of ns_nodepool *: Karpenter's order (higher weight first, then name descending). */
int ns_nodepool_cmp_priority(const void *a, const void *b);

#endif
