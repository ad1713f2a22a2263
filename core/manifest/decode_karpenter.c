/*
 * Karpenter objects: karpenter.sh/v1 NodePool and NodeClaim, karpenter.sh/v1beta1 NodePool (converted to v1 the
 * way Karpenter's conversion webhook does) and karpenter.sh/v1alpha5 Provisioner (converted to a NodePool, with a
 * log line saying so).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "log/ns_log.h"
#include "manifest/decoders.h"
#include "model/cron.h"
#include "model/duration.h"
#include "model/labels.h"
#include "model/model_util.h"
#include "model/names.h"
#include "model/nodeclass_kinds.h"
#include "model/req_defaults.h"
#include "model/resources.h"

typedef enum np_version { NP_V1, NP_V1BETA1 } np_version;

static int missing(const ns_dec *d, const ns_ynode *at, const char *path)
{
    return ns_dec_fail(d, at, NULL, "missing required field \"%s\"", path);
}

/* Karpenter refuses restricted labels in template labels and requirements, and karpenter.sh/nodepool anywhere. */
static int check_key(const ns_dec *d, const ns_ynode *at, const char *path, const char *key)
{
    const char *why = NULL;
    if (strcmp(key, NS_LABEL_NODEPOOL) == 0)
        return ns_dec_fail(d, at, path, "label \"%s\" is restricted (Karpenter sets it on every node)", key);
    if (ns_label_is_restricted(key, &why))
        return ns_dec_fail(d, at, path, "label \"%s\": %s", key, why);
    return 0;
}

static int check_labels(const ns_dec *d, const ns_ynode *at, const char *path, const ns_labels *labels)
{
    for (size_t i = 0; i < labels->n; i++) {
        char p[NS_PATH_MAX];
        ns_path_key(p, sizeof(p), path, labels->items[i].key);
        int rc = check_key(d, at, p, labels->items[i].key);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int check_requirements(const ns_dec *d, const ns_ynode *at, const char *path, const ns_selector_req *reqs,
                              size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char p[NS_PATH_MAX];
        ns_path_index(p, sizeof(p), path, i);
        int rc = check_key(d, at, p, reqs[i].key);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* Karpenter's validateTaints: a key/effect pair may appear once across taints and startupTaints. */
static int check_taint_pairs(const ns_dec *d, const ns_ynode *at, const char *path, const ns_taint *a, size_t na,
                             const ns_taint *b, size_t nb)
{
    for (size_t i = 0; i < na + nb; i++) {
        const ns_taint *t = i < na ? &a[i] : &b[i - na];
        for (size_t j = 0; j < i; j++) {
            const ns_taint *u = j < na ? &a[j] : &b[j - na];
            if (ns_taint_matches(t, u))
                return ns_dec_fail(d, at, path, "duplicate taint key/effect pair %s:%s", t->key, t->effect);
        }
    }
    return 0;
}

static int decode_limits(const ns_dec *d, const ns_ynode *map, const char *path, const char *key,
                         ns_resource_limits *out)
{
    bool present = false;
    int rc = ns_dec_resources_signed(d, map, path, key, &out->max, &present);
    const ns_ynode *m = ns_ymap_get(map, key);
    if (rc < 0 || !present)
        return rc;
    out->cpu = ns_ymap_get(m, NS_RES_CPU) != NULL;
    out->memory = ns_ymap_get(m, NS_RES_MEMORY) != NULL;
    out->pods = ns_ymap_get(m, NS_RES_PODS) != NULL;
    out->ephemeral_storage = ns_ymap_get(m, NS_RES_EPHEMERAL_STORAGE) != NULL;
    return 0;
}

static const char *const ref_fields_v1[] = {"group", "kind", "name", NULL};
static const char *const ref_fields_legacy[] = {"apiVersion", "kind", "name", NULL};

static int decode_ref_v1(const ns_dec *d, const ns_ynode *map, const char *path, ns_nodeclass_ref *out)
{
    char p[NS_PATH_MAX];
    ns_path_key(p, sizeof(p), path, "nodeClassRef");
    int rc;
    const ns_ynode *ref = ns_dec_child(d, map, path, "nodeClassRef", NS_Y_MAP, &rc);
    if (!ref)
        return rc < 0 ? rc : missing(d, map, p);
    if ((rc = ns_dec_fields(d, ref, p, ref_fields_v1)) < 0 ||
        (rc = ns_dec_string_required(d, ref, p, "group", &out->group)) < 0 ||
        (rc = ns_dec_string_required(d, ref, p, "kind", &out->kind)) < 0)
        return rc;
    return ns_dec_string_required(d, ref, p, "name", &out->name);
}

/* v1beta1 nodeClassRef and v1alpha5 providerRef: apiVersion and kind are optional. */
/* A v1beta1 nodeClassRef or a v1alpha5 providerRef: kind and apiVersion are optional there, and mean the kind a loaded
 * provider declares as the default for that reference (flag), as Karpenter's cloud providers default them. */
static int decode_ref_legacy(const ns_dec *d, const ns_ynode *map, const char *path, const char *key,
                             const ns_nodeclass_kinds *kinds, uint32_t flag, ns_nodeclass_ref *out)
{
    char p[NS_PATH_MAX], group[128], known[1024];
    ns_path_key(p, sizeof(p), path, key);
    int rc;
    char *api_version = NULL;
    const ns_nodeclass_kind_info *def = ns_nodeclass_kinds_default(kinds, flag);
    const ns_ynode *ref = ns_dec_child(d, map, path, key, NS_Y_MAP, &rc);
    if (!ref)
        return rc < 0 ? rc : missing(d, map, p);
    if ((rc = ns_dec_fields(d, ref, p, ref_fields_legacy)) == 0 &&
        (rc = ns_dec_string(d, ref, p, "apiVersion", &api_version)) == 0 &&
        (rc = ns_dec_string(d, ref, p, "kind", &out->kind)) == 0 &&
        (rc = ns_dec_string_required(d, ref, p, "name", &out->name)) == 0) {
        if (!out->kind && !def)
            rc = ns_dec_fail(d, ref, p, "names no kind, and no loaded provider declares the kind such a reference "
                             "means (loaded node-class kinds: %s)",
                             ns_nodeclass_kinds_describe(kinds, known, sizeof(known)));
        else if (!out->kind && !(out->kind = ns_strdup(def->kind)))
            rc = NS_ERR_INTERNAL;
        const char *group_of = api_version ? ns_api_group(api_version, group, sizeof(group))
                               : def && strcmp(def->kind, out->kind ? out->kind : "") == 0 ? def->group
                                                                                           : NULL;
        if (rc == 0 && group_of && !(out->group = ns_strdup(group_of)))
            rc = NS_ERR_INTERNAL;
    }
    free(api_version);
    return rc;
}

/* ---- budgets ---- */

static const char *const budget_fields_v1[] = {"nodes", "schedule", "duration", "reasons", NULL};
static const char *const budget_fields_v1beta1[] = {"nodes", "schedule", "duration", NULL};

static int parse_budget_nodes(const char *s, ns_budget *b)
{
    size_t len = strlen(s), digits = 0;
    while (digits < len && s[digits] >= '0' && s[digits] <= '9')
        digits++;
    b->nodes_percent = digits == len - 1 && len > 1 && s[len - 1] == '%';
    if (digits == 0 || (digits != len && !b->nodes_percent) || digits > 9)
        return -1;
    b->nodes = strtoll(s, NULL, 10);
    return b->nodes_percent && b->nodes > 100 ? -1 : 0;
}

static int decode_budget(const ns_dec *d, const ns_ynode *item, const char *p, np_version v, ns_budget *b)
{
    char *nodes = NULL;
    char **reasons = NULL;
    size_t n_reasons = 0;
    bool has_duration = false;
    int rc;
    if ((rc = ns_dec_fields(d, item, p, v == NP_V1 ? budget_fields_v1 : budget_fields_v1beta1)) < 0 ||
        (rc = ns_dec_string(d, item, p, "nodes", &nodes)) < 0 || (rc = ns_dec_string(d, item, p, "schedule", &b->schedule)) < 0 ||
        (rc = ns_dec_duration(d, item, p, "duration", false, &b->duration_ms, &has_duration)) < 0 ||
        (rc = ns_dec_strings(d, item, p, "reasons", &reasons, &n_reasons)) < 0)
        goto done;
    if (parse_budget_nodes(nodes ? nodes : "10%", b) < 0) {
        rc = ns_dec_fail(d, ns_ymap_get(item, "nodes"), p,
                         "nodes \"%s\" must be a count (\"5\") or a percentage up to 100%% (\"10%%\")", nodes);
    } else if ((b->schedule != NULL) != has_duration) {
        rc = ns_dec_fail(d, item, p, "'schedule' must be set with 'duration'");
    } else if (b->schedule && ns_cron_parse(b->schedule, &(ns_cron){0}) < 0) {
        rc = ns_dec_wrap(d, ns_ymap_get(item, "schedule"));
    } else if (has_duration && b->duration_ms % 60000 != 0) {
        rc = ns_dec_fail(d, ns_ymap_get(item, "duration"), p, "duration must be whole minutes or hours");
    }
    for (size_t i = 0; rc == 0 && i < n_reasons; i++) {
        if (strcmp(reasons[i], "Underutilized") == 0)
            b->reasons |= NS_REASON_UNDERUTILIZED;
        else if (strcmp(reasons[i], "Empty") == 0)
            b->reasons |= NS_REASON_EMPTY;
        else if (strcmp(reasons[i], "Drifted") == 0)
            b->reasons |= NS_REASON_DRIFTED;
        else
            rc = ns_dec_fail(d, ns_ymap_get(item, "reasons"), p,
                             "reason \"%s\" is not one of Underutilized, Empty, Drifted", reasons[i]);
    }
done:
    free(nodes);
    ns_strv_free(reasons, n_reasons);
    return rc;
}

static int default_budget(ns_nodepool *np)
{
    if (np->n_budgets)
        return 0;
    if (!(np->budgets = calloc(1, sizeof(*np->budgets))))
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory adding the default budget");
    np->n_budgets = 1;
    np->budgets[0].nodes_percent = true;
    np->budgets[0].nodes = 10;
    return 0;
}

static int decode_budgets(const ns_dec *d, const ns_ynode *disruption, const char *path, np_version v,
                          ns_nodepool *np)
{
    int rc;
    char p[NS_PATH_MAX];
    ns_path_key(p, sizeof(p), path, "budgets");
    const ns_ynode *seq = ns_dec_child(d, disruption, path, "budgets", NS_Y_SEQ, &rc);
    if (!seq || seq->n == 0)
        return rc;
    if (seq->n > 50)
        return ns_dec_fail(d, seq, p, "at most 50 budgets are allowed, got %zu", seq->n);
    if (!(np->budgets = calloc(seq->n, sizeof(*np->budgets))))
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory reading %s", p);
    np->n_budgets = seq->n;
    for (size_t i = 0; i < seq->n && rc == 0; i++) {
        char ip[NS_PATH_MAX];
        ns_path_index(ip, sizeof(ip), p, i);
        rc = decode_budget(d, seq->items[i], ip, v, &np->budgets[i]);
    }
    return rc;
}

/* ---- NodePool ---- */

static const char *const np_spec_fields_v1[] = {"template", "disruption", "limits", "weight", "replicas", NULL};
static const char *const np_spec_fields_v1beta1[] = {"template", "disruption", "limits", "weight", NULL};
static const char *const np_template_fields[] = {"metadata", "spec", NULL};
static const char *const np_template_meta_fields[] = {"labels", "annotations", NULL};
static const char *const np_tspec_fields_v1[] = {"taints",       "startupTaints", "requirements",
                                                 "nodeClassRef", "expireAfter",   "terminationGracePeriod", NULL};
static const char *const np_tspec_fields_v1beta1[] = {"taints", "startupTaints", "requirements", "kubelet",
                                                      "nodeClassRef", "resources", NULL};
static const char *const np_disruption_fields_v1[] = {"consolidationPolicy", "consolidateAfter", "budgets", NULL};
static const char *const np_disruption_fields_v1beta1[] = {"consolidationPolicy", "consolidateAfter", "expireAfter",
                                                           "budgets", NULL};
static const char *const claim_resources_fields[] = {"requests", NULL};

static int decode_template(const ns_dec *d, const ns_ynode *spec, np_version v, const ns_nodeclass_kinds *kinds,
                           ns_nodepool *np)
{
    int rc;
    const ns_ynode *tmpl = ns_dec_child(d, spec, "spec", "template", NS_Y_MAP, &rc), *meta, *tspec;
    if (!tmpl)
        return rc < 0 ? rc : missing(d, spec, "spec.template");
    if ((rc = ns_dec_fields(d, tmpl, "spec.template", np_template_fields)) < 0)
        return rc;
    if ((meta = ns_dec_child(d, tmpl, "spec.template", "metadata", NS_Y_MAP, &rc)) != NULL &&
        ((rc = ns_dec_fields(d, meta, "spec.template.metadata", np_template_meta_fields)) < 0 ||
         (rc = ns_dec_label_map(d, meta, "spec.template.metadata", "labels", &np->labels)) < 0 ||
         (rc = ns_dec_labels(d, meta, "spec.template.metadata", "annotations", &np->annotations)) < 0 ||
         (rc = check_labels(d, meta, "spec.template.metadata.labels", &np->labels)) < 0))
        return rc;
    if (rc < 0)
        return rc;
    if (!(tspec = ns_dec_child(d, tmpl, "spec.template", "spec", NS_Y_MAP, &rc)))
        return rc < 0 ? rc : missing(d, tmpl, "spec.template.spec");
    const char *p = "spec.template.spec";
    if ((rc = ns_dec_fields(d, tspec, p, v == NP_V1 ? np_tspec_fields_v1 : np_tspec_fields_v1beta1)) < 0 ||
        (rc = ns_decode_taints(d, tspec, p, "taints", &np->taints, &np->n_taints)) < 0 ||
        (rc = ns_decode_taints(d, tspec, p, "startupTaints", &np->startup_taints, &np->n_startup_taints)) < 0 ||
        (rc = check_taint_pairs(d, tspec, p, np->taints, np->n_taints, np->startup_taints, np->n_startup_taints)) < 0 ||
        (rc = ns_decode_selector_reqs(d, tspec, p, "requirements", NS_OPS_KARPENTER, &np->requirements,
                                      &np->n_requirements)) < 0 ||
        (rc = check_requirements(d, tspec, "spec.template.spec.requirements", np->requirements,
                                 np->n_requirements)) < 0)
        return rc;
    if (v == NP_V1 && !ns_ymap_get(tspec, "requirements"))
        return missing(d, tspec, "spec.template.spec.requirements");
    if (v == NP_V1) {
        if ((rc = decode_ref_v1(d, tspec, p, &np->nodeclass_ref)) < 0 ||
            (rc = ns_dec_duration(d, tspec, p, "expireAfter", true, &np->expire_after_ms, NULL)) < 0)
            return rc;
        return ns_dec_duration(d, tspec, p, "terminationGracePeriod", false, &np->termination_grace_period_ms, NULL);
    }
    const ns_ynode *res = ns_dec_child(d, tspec, p, "resources", NS_Y_MAP, &rc);
    if (rc < 0 || (res && (rc = ns_dec_fields(d, res, "spec.template.spec.resources", claim_resources_fields)) < 0))
        return rc;
    if ((rc = ns_decode_kubelet(d, tspec, p, "kubelet", false, &np->kubelet)) < 0)
        return rc;
    return decode_ref_legacy(d, tspec, p, "nodeClassRef", kinds, NS_NODECLASS_DEFAULT_V1BETA1_REF,
                             &np->nodeclass_ref);
}

static int decode_disruption(const ns_dec *d, const ns_ynode *spec, np_version v, ns_nodepool *np)
{
    int rc;
    const char *p = "spec.disruption";
    const ns_ynode *dis = ns_dec_child(d, spec, "spec", "disruption", NS_Y_MAP, &rc);
    if (!dis)
        return rc < 0 ? rc : default_budget(np);
    char *policy = NULL;
    bool has_after = false;
    if ((rc = ns_dec_fields(d, dis, p, v == NP_V1 ? np_disruption_fields_v1 : np_disruption_fields_v1beta1)) < 0 ||
        (rc = ns_dec_string(d, dis, p, "consolidationPolicy", &policy)) < 0 ||
        (rc = ns_dec_duration(d, dis, p, "consolidateAfter", true, &np->consolidate_after_ms, &has_after)) < 0 ||
        (v == NP_V1BETA1 && (rc = ns_dec_duration(d, dis, p, "expireAfter", true, &np->expire_after_ms, NULL)) < 0) ||
        (rc = decode_budgets(d, dis, p, v, np)) < 0 || (rc = default_budget(np)) < 0)
        goto done;
    const ns_ynode *at = ns_ymap_get(dis, "consolidationPolicy");
    if (v == NP_V1) {
        if (!has_after)
            rc = missing(d, dis, "spec.disruption.consolidateAfter");
        else if (policy && strcmp(policy, "WhenEmpty") == 0)
            np->consolidation_policy = NS_CONSOLIDATE_WHEN_EMPTY;
        else if (policy && strcmp(policy, "WhenEmptyOrUnderutilized") != 0)
            rc = ns_dec_fail(d, at, p, "consolidationPolicy \"%s\" is not WhenEmpty or WhenEmptyOrUnderutilized",
                             policy);
        goto done;
    }
    /* v1beta1: WhenUnderutilized (the default) cannot take consolidateAfter; WhenEmpty needs it. Converted to v1 as
     * WhenEmptyOrUnderutilized with consolidateAfter 0s. */
    if (!policy || strcmp(policy, "WhenUnderutilized") == 0) {
        if (has_after)
            rc = ns_dec_fail(d, ns_ymap_get(dis, "consolidateAfter"), p,
                             "consolidateAfter cannot be combined with consolidationPolicy=WhenUnderutilized");
        np->consolidate_after_ms = 0;
    } else if (strcmp(policy, "WhenEmpty") == 0) {
        np->consolidation_policy = NS_CONSOLIDATE_WHEN_EMPTY;
        if (!has_after)
            rc = ns_dec_fail(d, dis, p, "consolidateAfter must be specified with consolidationPolicy=WhenEmpty");
    } else {
        rc = ns_dec_fail(d, at, p, "consolidationPolicy \"%s\" is not WhenEmpty or WhenUnderutilized", policy);
    }
done:
    free(policy);
    return rc;
}

/* A static pool (spec.replicas, Karpenter's StaticCapacity): the NodePool CRD's rules, with its messages. Karpenter
 * ignores consolidationPolicy and consolidateAfter there; they are accepted and unused. */
static int decode_replicas(const ns_dec *d, const ns_ynode *spec, ns_nodepool *np)
{
    int rc = ns_dec_int(d, spec, "spec", "replicas", 0, INT64_MAX, &np->replicas, &np->has_replicas);
    if (rc < 0 || !np->has_replicas)
        return rc;
    const ns_ynode *limits = ns_ymap_get(spec, "limits");
    for (size_t i = 0; limits && limits->kind == NS_Y_MAP && i < limits->n; i++)
        if (strcmp(limits->items[2 * i]->str ? limits->items[2 * i]->str : "", "nodes") != 0)
            return ns_dec_fail(d, limits->items[2 * i], "spec.limits",
                               "only 'limits.nodes' is supported on static NodePools (spec.replicas is set; found "
                               "limits.%s)", limits->items[2 * i]->str ? limits->items[2 * i]->str : "");
    if (ns_ymap_get(spec, "weight"))
        return ns_dec_fail(d, ns_ymap_get(spec, "weight"), "spec.weight",
                           "'weight' is not supported on static NodePools (spec.replicas is set)");
    return 0;
}

/* Karpenter labels every NodeClaim and Node of a pool with its name (karpenter.sh/nodepool, v1alpha5
 * karpenter.sh/provisioner-name), and the API server refuses a label value over 63 characters: Kubernetes accepts a
 * longer pool, but it can never provision. Refused here, where the user sees why. */
#define POOL_NAME_WHY(label)                                                                                           \
    "the name is the " label " label value of every NodeClaim and Node the pool creates, and a label value is at "   \
    "most 63 characters (Karpenter's NodeClaims for this pool would be refused by the API server)"

/* NodeClaim names travel to providers, which tag instances with them in buffers of the provider ABI. */
#define CLAIM_NAME_WHY                                                                                                 \
    "nodesmith's provider ABI carries node claim names of at most 127 bytes (Karpenter's own are at most 63: "       \
    "generateName cuts \"<nodepool>-\" to 58 characters and appends 5)"

static int finish_pool(const char *api_version, ns_nodepool *np, ns_cluster *c)
{
    if (!(np->api_version = ns_strdup(api_version))) {
        ns_nodepool_free(np);
        return NS_ERR_INTERNAL;
    }
    return ns_cluster_add_nodepool(c, np);
}

int ns_load_nodepool(ns_dec *d, const ns_ynode *root, const char *api_version, ns_cluster *c)
{
    np_version v = strcmp(api_version, "karpenter.sh/v1beta1") == 0 ? NP_V1BETA1 : NP_V1;
    ns_nodepool *np = ns_nodepool_new();
    if (!np)
        return NS_ERR_INTERNAL;
    int rc;
    const ns_ynode *spec = NULL;
    if ((rc = ns_decode_top_fields(d, root, NULL)) == 0 && (rc = ns_decode_meta(d, root, "NodePool", false, &np->meta)) == 0 &&
        (rc = ns_decode_name_max(d, root, np->meta.name, NS_K8S_LABEL_VALUE_MAX,
                                 POOL_NAME_WHY("karpenter.sh/nodepool"))) == 0 &&
        !(spec = ns_dec_child(d, root, "", "spec", NS_Y_MAP, &rc)) && rc == 0)
        rc = missing(d, root, "spec");
    const char *const *spec_fields = v == NP_V1 ? np_spec_fields_v1 : np_spec_fields_v1beta1;
    if (rc == 0 && (rc = ns_dec_fields(d, spec, "spec", spec_fields)) == 0 &&
        (rc = decode_template(d, spec, v, c->kinds, np)) == 0 && (rc = decode_disruption(d, spec, v, np)) == 0 &&
        (rc = decode_limits(d, spec, "spec", "limits", &np->limits)) == 0 &&
        (rc = ns_dec_int32(d, spec, "spec", "weight", 1, 100, &np->weight, NULL)) == 0)
        rc = decode_replicas(d, spec, np);
    if (rc < 0) {
        ns_nodepool_free(np);
        return rc;
    }
    if (v == NP_V1BETA1) {
        char line[16];
        snprintf(line, sizeof(line), "%d", root->line);
        ns_log(NS_LOG_INFO, "manifest", "converted a karpenter.sh/v1beta1 NodePool to karpenter.sh/v1", "nodepool",
               np->meta.name, "file", d->file, "line", line, NULL);
    }
    return finish_pool(api_version, np, c);
}

/* ---- Provisioner ---- */

static const char *const prov_spec_fields[] = {
    "annotations",          "labels",         "taints",  "startupTaints", "requirements", "kubeletConfiguration",
    "provider",             "providerRef",    "ttlSecondsAfterEmpty", "ttlSecondsUntilExpired", "limits",
    "weight",               "consolidation",  NULL,
};
static const char *const prov_limits_fields[] = {"resources", NULL};
static const char *const prov_consolidation_fields[] = {"enabled", NULL};

/* The requirements the cloud's Karpenter webhook added to a Provisioner lacking them, which v1beta1 stopped adding:
 * those the provider of the providerRef's kind declares (provider ABI 6), appended as the webhook appended them.
 * `applied` names each one added ("" when none). */
static int apply_v1alpha5_defaults(const ns_nodeclass_kinds *kinds, ns_nodepool *np, char *applied, size_t len)
{
    const ns_req_defaults *defaults =
        ns_nodeclass_kinds_v1alpha5_defaults(kinds, np->nodeclass_ref.group, np->nodeclass_ref.kind);
    return ns_req_defaults_apply(defaults, &np->requirements, &np->n_requirements, applied, len);
}

static int decode_provisioner(ns_dec *d, const ns_ynode *root, const ns_nodeclass_kinds *kinds, ns_nodepool *np,
                              char *applied, size_t applied_len)
{
    int rc;
    const ns_ynode *spec = NULL, *limits, *cons;
    const char *p = "spec";
    int64_t ttl_empty = 0, ttl_expired = 0;
    bool has_empty = false, has_expired = false, enabled = false;
    if ((rc = ns_decode_top_fields(d, root, NULL)) < 0 ||
        (rc = ns_decode_meta(d, root, "Provisioner", false, &np->meta)) < 0 ||
        (rc = ns_decode_name_max(d, root, np->meta.name, NS_K8S_LABEL_VALUE_MAX,
                                 POOL_NAME_WHY("karpenter.sh/provisioner-name"))) < 0)
        return rc;
    if (!(spec = ns_dec_child(d, root, "", "spec", NS_Y_MAP, &rc)))
        return rc < 0 ? rc : missing(d, root, "spec");
    if ((rc = ns_dec_fields(d, spec, p, prov_spec_fields)) < 0 ||
        (rc = ns_dec_label_map(d, spec, p, "labels", &np->labels)) < 0 ||
        (rc = ns_dec_labels(d, spec, p, "annotations", &np->annotations)) < 0 ||
        (rc = check_labels(d, spec, "spec.labels", &np->labels)) < 0 ||
        (rc = ns_decode_taints(d, spec, p, "taints", &np->taints, &np->n_taints)) < 0 ||
        (rc = ns_decode_taints(d, spec, p, "startupTaints", &np->startup_taints, &np->n_startup_taints)) < 0 ||
        (rc = check_taint_pairs(d, spec, p, np->taints, np->n_taints, np->startup_taints, np->n_startup_taints)) < 0 ||
        (rc = ns_decode_selector_reqs(d, spec, p, "requirements", NS_OPS_NODE_AFFINITY, &np->requirements,
                                      &np->n_requirements)) < 0 ||
        (rc = check_requirements(d, spec, "spec.requirements", np->requirements, np->n_requirements)) < 0 ||
        (rc = ns_decode_kubelet(d, spec, p, "kubeletConfiguration", true, &np->kubelet)) < 0 ||
        (rc = ns_dec_int(d, spec, p, "ttlSecondsAfterEmpty", 0, INT64_MAX / 1000, &ttl_empty, &has_empty)) < 0 ||
        (rc = ns_dec_int(d, spec, p, "ttlSecondsUntilExpired", 0, INT64_MAX / 1000, &ttl_expired, &has_expired)) < 0 ||
        (rc = ns_dec_int32(d, spec, p, "weight", 1, 100, &np->weight, NULL)) < 0)
        return rc;
    if (ns_ymap_get(spec, "provider"))
        return ns_dec_fail(d, ns_ymap_get(spec, "provider"), "spec.provider",
                           "inline provider configuration is not supported; move it to a node class and reference "
                           "it with spec.providerRef");
    if ((limits = ns_dec_child(d, spec, p, "limits", NS_Y_MAP, &rc)) &&
        ((rc = ns_dec_fields(d, limits, "spec.limits", prov_limits_fields)) < 0 ||
         (rc = decode_limits(d, limits, "spec.limits", "resources", &np->limits)) < 0))
        return rc;
    if (rc < 0)
        return rc;
    if ((cons = ns_dec_child(d, spec, p, "consolidation", NS_Y_MAP, &rc)) &&
        ((rc = ns_dec_fields(d, cons, "spec.consolidation", prov_consolidation_fields)) < 0 ||
         (rc = ns_dec_bool(d, cons, "spec.consolidation", "enabled", &enabled, NULL)) < 0))
        return rc;
    if (rc < 0)
        return rc;
    if (enabled && has_empty)
        return ns_dec_fail(d, ns_ymap_get(spec, "ttlSecondsAfterEmpty"), "spec",
                           "ttlSecondsAfterEmpty and consolidation.enabled are mutually exclusive (Karpenter rejects "
                           "a Provisioner that sets both)");
    if ((rc = decode_ref_legacy(d, spec, p, "providerRef", kinds, NS_NODECLASS_DEFAULT_V1ALPHA5_REF,
                                &np->nodeclass_ref)) < 0 ||
        (rc = apply_v1alpha5_defaults(kinds, np, applied, applied_len)) < 0)
        return rc;
    /* v1alpha5 semantics carried over: no TTL means never expire; no consolidation and no empty TTL means never
     * consolidate. */
    np->expire_after_ms = has_expired ? ttl_expired * 1000 : NS_DURATION_NEVER;
    if (enabled) {
        np->consolidation_policy = NS_CONSOLIDATE_WHEN_EMPTY_OR_UNDERUTILIZED;
        np->consolidate_after_ms = 0;
    } else {
        np->consolidation_policy = NS_CONSOLIDATE_WHEN_EMPTY;
        np->consolidate_after_ms = has_empty ? ttl_empty * 1000 : NS_DURATION_NEVER;
    }
    np->converted_from_provisioner = true;
    return default_budget(np);
}

int ns_load_provisioner(ns_dec *d, const ns_ynode *root, ns_cluster *c)
{
    ns_nodepool *np = ns_nodepool_new();
    if (!np)
        return NS_ERR_INTERNAL;
    char line[16], expire[32], after[32], defaults[1024];
    int rc = decode_provisioner(d, root, c->kinds, np, defaults, sizeof(defaults));
    if (rc < 0) {
        ns_nodepool_free(np);
        return rc;
    }
    snprintf(line, sizeof(line), "%d", root->line);
    ns_log(NS_LOG_INFO, "manifest", "converted a karpenter.sh/v1alpha5 Provisioner to a karpenter.sh/v1 NodePool",
           "provisioner", np->meta.name, "file", d->file, "line", line, "consolidationPolicy",
           np->consolidation_policy == NS_CONSOLIDATE_WHEN_EMPTY ? "WhenEmpty" : "WhenEmptyOrUnderutilized",
           "consolidateAfter", ns_duration_format(np->consolidate_after_ms, after, sizeof(after)), "expireAfter",
           ns_duration_format(np->expire_after_ms, expire, sizeof(expire)), "defaultedRequirements",
           defaults[0] ? defaults : "none", NULL);
    return finish_pool("karpenter.sh/v1alpha5", np, c);
}

/* ---- NodeClaim ---- */

static const char *const claim_spec_fields[] = {"taints",       "startupTaints", "requirements",          "resources",
                                                "nodeClassRef", "expireAfter",   "terminationGracePeriod", NULL};

int ns_load_nodeclaim(ns_dec *d, const ns_ynode *root, ns_cluster *c)
{
    ns_nodeclaim *claim = ns_nodeclaim_new();
    if (!claim)
        return NS_ERR_INTERNAL;
    int rc;
    const char *p = "spec";
    const ns_ynode *spec = NULL, *res, *status;
    if ((rc = ns_decode_top_fields(d, root, NULL)) < 0 ||
        (rc = ns_decode_meta(d, root, "NodeClaim", false, &claim->meta)) < 0 ||
        (rc = ns_decode_name_max(d, root, claim->meta.name, NS_NAME_MAX - 1, CLAIM_NAME_WHY)) < 0)
        goto done;
    if (!(spec = ns_dec_child(d, root, "", "spec", NS_Y_MAP, &rc))) {
        rc = rc < 0 ? rc : missing(d, root, "spec");
        goto done;
    }
    if ((rc = ns_dec_fields(d, spec, p, claim_spec_fields)) < 0 ||
        (rc = ns_decode_taints(d, spec, p, "taints", &claim->taints, &claim->n_taints)) < 0 ||
        (rc = ns_decode_taints(d, spec, p, "startupTaints", &claim->startup_taints, &claim->n_startup_taints)) < 0 ||
        (rc = ns_decode_selector_reqs(d, spec, p, "requirements", NS_OPS_KARPENTER, &claim->requirements,
                                      &claim->n_requirements)) < 0 ||
        (rc = decode_ref_v1(d, spec, p, &claim->nodeclass_ref)) < 0 ||
        (rc = ns_dec_duration(d, spec, p, "expireAfter", true, &claim->expire_after_ms, NULL)) < 0 ||
        (rc = ns_dec_duration(d, spec, p, "terminationGracePeriod", false, &claim->termination_grace_period_ms,
                              NULL)) < 0)
        goto done;
    if (!ns_ymap_get(spec, "requirements")) {
        rc = missing(d, spec, "spec.requirements");
        goto done;
    }
    if ((res = ns_dec_child(d, spec, p, "resources", NS_Y_MAP, &rc)) &&
        ((rc = ns_dec_fields(d, res, "spec.resources", claim_resources_fields)) < 0 ||
         (rc = ns_dec_resources(d, res, "spec.resources", "requests", &claim->requests, NULL)) < 0))
        goto done;
    if (rc == 0 && (status = ns_dec_child(d, root, "", "status", NS_Y_MAP, &rc))) {
        if ((rc = ns_dec_string(d, status, "status", "providerID", &claim->provider_id)) == 0 &&
            (rc = ns_dec_string(d, status, "status", "nodeName", &claim->node_name)) == 0 &&
            (rc = ns_dec_string(d, status, "status", "imageID", &claim->image_id)) == 0 &&
            (rc = ns_dec_resources(d, status, "status", "capacity", &claim->capacity, NULL)) == 0 &&
            (rc = ns_dec_resources(d, status, "status", "allocatable", &claim->allocatable, NULL)) == 0)
            rc = ns_decode_conditions(d, status, "status", "conditions", &claim->conditions);
    }
done:
    if (rc < 0) {
        ns_nodeclaim_free(claim);
        return rc;
    }
    return ns_cluster_add_nodeclaim(c, claim);
}
