#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "errors/ns_error.h"
#include "manifest/decoders.h"
#include "model/intern.h"
#include "model/model_util.h"
#include "model/names.h"
#include "model/quantity.h"
#include "model/resources.h"

static const char *const meta_fields[] = {
    "name",        "generateName",  "namespace", "labels",           "annotations",
    "uid",         "resourceVersion", "generation", "creationTimestamp", "deletionTimestamp",
    "deletionGracePeriodSeconds", "ownerReferences", "finalizers", "managedFields", "selfLink",
    NULL,
};

static const char *const owner_fields[] = {"apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion",
                                           NULL};

static int decode_owner(const ns_dec *d, const ns_ynode *meta, ns_meta *out)
{
    int rc;
    const ns_ynode *refs = ns_dec_child(d, meta, "metadata", "ownerReferences", NS_Y_SEQ, &rc);
    for (size_t i = 0; refs && rc == 0 && i < refs->n; i++) {
        char p[NS_PATH_MAX];
        ns_path_index(p, sizeof(p), "metadata.ownerReferences", i);
        const ns_ynode *ref = refs->items[i];
        char *kind = NULL, *name = NULL;
        bool controller = false;
        if ((rc = ns_dec_fields(d, ref, p, owner_fields)) == 0 && (rc = ns_dec_string_required(d, ref, p, "kind", &kind)) == 0 &&
            (rc = ns_dec_string_required(d, ref, p, "name", &name)) == 0)
            rc = ns_dec_bool(d, ref, p, "controller", &controller, NULL);
        if (rc == 0 && (controller || !out->owner_kind)) {
            free(out->owner_kind);
            free(out->owner_name);
            out->owner_kind = kind;
            out->owner_name = name;
            kind = name = NULL;
        }
        free(kind);
        free(name);
    }
    return rc;
}

int ns_decode_top_fields(const ns_dec *d, const ns_ynode *obj, const char *const *extra)
{
    const char *fields[16];
    size_t n = 0;
    static const char *const base[] = {"apiVersion", "kind", "metadata", "spec", "status"};
    for (size_t i = 0; i < sizeof(base) / sizeof(base[0]); i++)
        fields[n++] = base[i];
    for (; extra && *extra && n + 1 < sizeof(fields) / sizeof(fields[0]); extra++)
        fields[n++] = *extra;
    fields[n] = NULL;
    return ns_dec_fields(d, obj, "", fields);
}

/* An RFC 3339 time at map.key (absent: *out unchanged). */
int ns_decode_time(const ns_dec *d, const ns_ynode *map, const char *path, const char *key, int64_t *out)
{
    char *text = NULL;
    int rc = ns_dec_string(d, map, path, key, &text);
    if (rc == 0 && text && ns_clock_parse_rfc3339(text, out) < 0) {
        char p[NS_PATH_MAX];
        ns_path_key(p, sizeof(p), path, key);
        rc = ns_dec_fail(d, ns_ymap_get(map, key), p, "\"%s\" is not an RFC 3339 time", text);
    }
    free(text);
    return rc;
}

/* Finalizers, the generation and the creation and deletion times, as an object read back from the API server carries
 * them. */
static int decode_time(const ns_dec *d, const ns_ynode *meta, const char *key, int64_t *out)
{
    return ns_decode_time(d, meta, "metadata", key, out);
}

int ns_decode_conditions(const ns_dec *d, const ns_ynode *map, const char *path, const char *key, ns_conditions *out)
{
    int rc = 0;
    char p[NS_PATH_MAX], base[NS_PATH_MAX];
    ns_path_key(base, sizeof(base), path, key);
    const ns_ynode *seq = ns_dec_child(d, map, path, key, NS_Y_SEQ, &rc);
    for (size_t i = 0; seq && rc == 0 && i < seq->n; i++) {
        ns_path_index(p, sizeof(p), base, i);
        const ns_ynode *item = seq->items[i];
        char *type = NULL, *status = NULL, *reason = NULL, *message = NULL;
        int64_t when = 0;
        if (item->kind != NS_Y_MAP)
            rc = ns_dec_fail(d, item, p, "expected a condition object");
        if (rc == 0 && (rc = ns_dec_string(d, item, p, "type", &type)) == 0 &&
            (rc = ns_dec_string(d, item, p, "status", &status)) == 0 &&
            (rc = ns_dec_string(d, item, p, "reason", &reason)) == 0 &&
            (rc = ns_dec_string(d, item, p, "message", &message)) == 0 &&
            (rc = ns_decode_time(d, item, p, "lastTransitionTime", &when)) == 0) {
            if (!type || !status)
                rc = ns_dec_fail(d, item, p, "a condition needs a type and a status");
            else
                rc = ns_conditions_set(out, type, status, reason, message, when);
        }
        free(type);
        free(status);
        free(reason);
        free(message);
    }
    return rc;
}

static int decode_lifecycle(const ns_dec *d, const ns_ynode *meta, ns_meta *out)
{
    int rc;
    if ((rc = ns_dec_strings(d, meta, "metadata", "finalizers", &out->finalizers, &out->n_finalizers)) < 0 ||
        (rc = ns_dec_int(d, meta, "metadata", "generation", 0, INT64_MAX, &out->generation, NULL)) < 0 ||
        (rc = decode_time(d, meta, "creationTimestamp", &out->creation_ms)) < 0)
        return rc;
    return decode_time(d, meta, "deletionTimestamp", &out->deletion_ms);
}

int ns_decode_meta(ns_dec *d, const ns_ynode *obj, const char *kind, bool namespaced, ns_meta *out)
{
    memset(out, 0, sizeof(*out));
    snprintf(d->object, sizeof(d->object), "%s", kind);
    out->source_line = obj->line;
    if (!(out->source_file = ns_intern(d->file)))
        return NS_ERR_INTERNAL;
    int rc;
    const ns_ynode *meta = ns_dec_child(d, obj, "", "metadata", NS_Y_MAP, &rc);
    if (!meta)
        return rc < 0 ? rc : ns_dec_fail(d, obj, NULL, "missing required field \"metadata.name\"");
    if ((rc = ns_dec_fields(d, meta, "metadata", meta_fields)) < 0 ||
        (rc = ns_dec_string(d, meta, "metadata", "name", &out->name)) < 0 ||
        (rc = ns_dec_string(d, meta, "metadata", "namespace", &out->namespace_)) < 0 ||
        (rc = ns_dec_label_map(d, meta, "metadata", "labels", &out->labels)) < 0 ||
        (rc = ns_dec_labels(d, meta, "metadata", "annotations", &out->annotations)) < 0 ||
        (rc = decode_owner(d, meta, out)) < 0 || (rc = decode_lifecycle(d, meta, out)) < 0)
        return rc;
    if (!out->name || !*out->name) {
        char *generate = NULL;
        if ((rc = ns_dec_string(d, meta, "metadata", "generateName", &generate)) < 0)
            return rc;
        if (!generate)
            return ns_dec_fail(d, meta, NULL, "missing required field \"metadata.name\"");
        /* Kubernetes appends 5 random characters; a hash of the document keeps names reproducible. */
        char name[512];
        snprintf(name, sizeof(name), "%s%05llx", generate,
                 (unsigned long long)(ns_ynode_hash(obj, (uint64_t)obj->line) & 0xfffff));
        free(generate);
        free(out->name);
        if (!(out->name = ns_strdup(name)))
            return NS_ERR_INTERNAL;
    }
    const char *why;
    char quoted[NS_EXCERPT_BUF];
    if (!ns_name_is_dns_subdomain(out->name, &why))
        return ns_dec_fail(d, ns_ymap_get(meta, "name") ? ns_ymap_get(meta, "name") : meta, "metadata.name",
                           "name \"%s\" is invalid: %s", ns_error_excerpt(out->name, quoted, sizeof(quoted)), why);
    /* A namespace is a DNS-1123 label: a subdomain without dots, of at most 63 characters. */
    if (namespaced && out->namespace_ && *out->namespace_ &&
        (!ns_name_is_dns_subdomain(out->namespace_, &why) || strchr(out->namespace_, '.') ||
         strlen(out->namespace_) > NS_K8S_LABEL_VALUE_MAX))
        return ns_dec_fail(d, ns_ymap_get(meta, "namespace"), "metadata.namespace",
                           "namespace \"%s\" is invalid: must be at most 63 lower case alphanumeric characters or "
                           "'-', starting and ending with an alphanumeric character",
                           ns_error_excerpt(out->namespace_, quoted, sizeof(quoted)));
    if (!namespaced && out->namespace_) {
        free(out->namespace_);
        out->namespace_ = NULL;
    } else if (namespaced && (!out->namespace_ || !*out->namespace_)) {
        free(out->namespace_);
        if (!(out->namespace_ = ns_strdup("default")))
            return NS_ERR_INTERNAL;
    }
    if (namespaced)
        snprintf(d->object, sizeof(d->object), "%s %s/%s", kind, out->namespace_, out->name);
    else
        snprintf(d->object, sizeof(d->object), "%s %s", kind, out->name);
    return 0;
}

int ns_decode_name_max(const ns_dec *d, const ns_ynode *obj, const char *name, size_t max, const char *why)
{
    size_t n = strlen(name);
    if (n <= max)
        return 0;
    const ns_ynode *meta = ns_ymap_get(obj, "metadata");
    const ns_ynode *at = meta ? ns_ymap_get(meta, "name") : NULL;
    return ns_dec_fail(d, at ? at : obj, "metadata.name", "name is %zu characters, more than %zu: %s", n, max, why);
}

/* ---- taints and tolerations ---- */

static int effect_invalid(const ns_dec *d, const ns_ynode *t, const char *p, const char *effect)
{
    return ns_dec_fail(d, ns_ymap_get(t, "effect"), p,
                       "effect \"%s\" is not one of NoSchedule, PreferNoSchedule, NoExecute", effect);
}

static const char *const taint_fields[] = {"key", "value", "effect", "timeAdded", NULL};

static int decode_taint(const ns_dec *d, const ns_ynode *t, const char *p, const void *arg, void *out)
{
    (void)arg;
    char *k = NULL, *val = NULL, *eff = NULL;
    int rc;
    if ((rc = ns_dec_fields(d, t, p, taint_fields)) == 0 && (rc = ns_dec_string_required(d, t, p, "key", &k)) == 0 &&
        (rc = ns_dec_string(d, t, p, "value", &val)) == 0 &&
        (rc = ns_dec_string_required(d, t, p, "effect", &eff)) == 0 && !ns_taint_effect_valid(eff))
        rc = effect_invalid(d, t, p, eff);
    *(ns_taint *)out = (ns_taint){k, val, eff};
    return rc;
}

static void free_taints(void *v, size_t n)
{
    ns_taints_free(v, n);
}

int ns_decode_taints(const ns_dec *d, const ns_ynode *map, const char *path, const char *key, ns_taint **out,
                     size_t *n)
{
    return ns_dec_seq(d, map, path, key, sizeof(**out), decode_taint, NULL, free_taints, (void **)out, n);
}

static const char *const toleration_fields[] = {"key", "operator", "value", "effect", "tolerationSeconds", NULL};

static int decode_toleration(const ns_dec *d, const ns_ynode *t, const char *p, const void *arg, void *item)
{
    (void)arg;
    ns_toleration *out = item;
    char *op = NULL;
    int rc;
    if ((rc = ns_dec_fields(d, t, p, toleration_fields)) < 0 || (rc = ns_dec_string(d, t, p, "key", &out->key)) < 0 ||
        (rc = ns_dec_string(d, t, p, "operator", &op)) < 0 || (rc = ns_dec_string(d, t, p, "value", &out->value)) < 0 ||
        (rc = ns_dec_string(d, t, p, "effect", &out->effect)) < 0 ||
        (rc = ns_dec_int(d, t, p, "tolerationSeconds", INT64_MIN, INT64_MAX, &out->toleration_seconds,
                         &out->has_toleration_seconds)) < 0)
        goto done;
    if (op && strcmp(op, "Exists") == 0)
        out->exists = true;
    else if (op && *op && strcmp(op, "Equal") != 0) {
        rc = ns_dec_fail(d, ns_ymap_get(t, "operator"), p, "operator \"%s\" is not Equal or Exists", op);
        goto done;
    }
    if (out->exists && out->value && *out->value)
        rc = ns_dec_fail(d, t, p, "value must be empty when operator is Exists");
    else if (!out->exists && (!out->key || !*out->key))
        rc = ns_dec_fail(d, t, p, "operator must be Exists when key is empty");
    else if (out->effect && *out->effect && !ns_taint_effect_valid(out->effect))
        rc = effect_invalid(d, t, p, out->effect);
    else if (out->has_toleration_seconds && (!out->effect || strcmp(out->effect, "NoExecute") != 0))
        rc = ns_dec_fail(d, t, p, "tolerationSeconds is only allowed with effect NoExecute");
done:
    free(op);
    return rc;
}

static void free_tolerations(void *v, size_t n)
{
    ns_tolerations_free(v, n);
}

int ns_decode_tolerations(const ns_dec *d, const ns_ynode *map, const char *path, const char *key,
                          ns_toleration **out, size_t *n)
{
    return ns_dec_seq(d, map, path, key, sizeof(**out), decode_toleration, NULL, free_tolerations, (void **)out, n);
}

/* ---- requirements and selectors ---- */

static const char *const req_fields[] = {"key", "operator", "values", NULL};
static const char *const req_fields_min[] = {"key", "operator", "values", "minValues", NULL};

static int decode_req(const ns_dec *d, const ns_ynode *r, const char *p, const void *arg, void *item)
{
    ns_ops_allowed ops = *(const ns_ops_allowed *)arg;
    ns_selector_req *out = item;
    char *op = NULL;
    int rc;
    if ((rc = ns_dec_fields(d, r, p, ops == NS_OPS_KARPENTER ? req_fields_min : req_fields)) < 0 ||
        (rc = ns_dec_string_required(d, r, p, "key", &out->key)) < 0 ||
        (rc = ns_dec_string_required(d, r, p, "operator", &op)) < 0 ||
        (rc = ns_dec_strings(d, r, p, "values", &out->values, &out->n_values)) < 0 ||
        (rc = ns_dec_int32(d, r, p, "minValues", INT32_MIN, INT32_MAX, &out->min_values, NULL)) < 0)
        goto done;
    bool known = ns_req_op_parse(op, &out->op);
    int max_op = ops == NS_OPS_LABEL_SELECTOR ? NS_OP_DOES_NOT_EXIST : ops == NS_OPS_NODE_AFFINITY ? NS_OP_LT : NS_OP_LTE;
    if (!known || (int)out->op > max_op) {
        const char *allowed = ops == NS_OPS_LABEL_SELECTOR ? "In, NotIn, Exists, DoesNotExist"
                              : ops == NS_OPS_NODE_AFFINITY ? "In, NotIn, Exists, DoesNotExist, Gt, Lt"
                                                            : "In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte, Lte";
        rc = ns_dec_fail(d, ns_ymap_get(r, "operator"), p, "operator \"%s\" is not one of %s", op, allowed);
        goto done;
    }
    if (ns_selector_req_validate(out, p) < 0)
        rc = ns_dec_wrap(d, r);
done:
    free(op);
    return rc;
}

static void free_reqs(void *v, size_t n)
{
    ns_selector_reqs_free(v, n);
}

int ns_decode_selector_reqs(const ns_dec *d, const ns_ynode *map, const char *path, const char *key,
                            ns_ops_allowed ops, ns_selector_req **out, size_t *n)
{
    return ns_dec_seq(d, map, path, key, sizeof(**out), decode_req, &ops, free_reqs, (void **)out, n);
}

static const char *const label_selector_fields[] = {"matchLabels", "matchExpressions", NULL};

int ns_decode_label_selector(const ns_dec *d, const ns_ynode *map, const char *path, const char *key,
                             ns_label_selector *out)
{
    ns_dec_field sel;
    int rc = ns_dec_object(d, map, path, key, label_selector_fields, &sel);
    if (rc <= 0)
        return rc;
    out->present = true;
    if ((rc = ns_dec_label_map(d, sel.node, sel.path, "matchLabels", &out->match_labels)) < 0)
        return rc;
    return ns_decode_selector_reqs(d, sel.node, sel.path, "matchExpressions", NS_OPS_LABEL_SELECTOR, &out->exprs,
                                   &out->n_exprs);
}

/* ---- kubelet ---- */

static const char *const kubelet_fields[] = {
    "clusterDNS",   "maxPods",      "podsPerCore",         "systemReserved", "kubeReserved",
    "evictionHard", "evictionSoft", "evictionSoftGracePeriod", "evictionMaxPodGracePeriod",
    "imageGCHighThresholdPercent", "imageGCLowThresholdPercent", "cpuCFSQuota", NULL,
};
static const char *const kubelet_fields_provisioner[] = {
    "clusterDNS",   "maxPods",      "podsPerCore",         "systemReserved", "kubeReserved",
    "evictionHard", "evictionSoft", "evictionSoftGracePeriod", "evictionMaxPodGracePeriod",
    "imageGCHighThresholdPercent", "imageGCLowThresholdPercent", "cpuCFSQuota", "containerRuntime", NULL,
};

static bool eviction_signal_supported(const char *s)
{
    static const char *const signals[] = {"memory.available",  "nodefs.available",   "nodefs.inodesFree",
                                          "imagefs.available", "imagefs.inodesFree", "pid.available"};
    for (size_t i = 0; i < sizeof(signals) / sizeof(signals[0]); i++)
        if (strcmp(s, signals[i]) == 0)
            return true;
    return false;
}

static int check_reserved(const ns_dec *d, const ns_ynode *kubelet, const char *path, const char *key)
{
    const ns_ynode *m = ns_ymap_get(kubelet, key);
    for (size_t i = 0; m && m->kind == NS_Y_MAP && i < m->n; i++) {
        const char *name = ns_ymap_key(m, i)->str;
        if (strcmp(name, "cpu") && strcmp(name, "memory") && strcmp(name, "ephemeral-storage") && strcmp(name, "pid")) {
            char p[NS_PATH_MAX];
            ns_path_key(p, sizeof(p), path, key);
            return ns_dec_fail(d, ns_ymap_key(m, i), p,
                               "\"%s\" is not a supported reserved resource (cpu, memory, ephemeral-storage, pid)",
                               name);
        }
    }
    return 0;
}

static int check_evictions(const ns_dec *d, const ns_ynode *kubelet, const char *path, const char *key,
                           const ns_labels *values, bool durations)
{
    char p[NS_PATH_MAX];
    ns_path_key(p, sizeof(p), path, key);
    for (size_t i = 0; i < values->n; i++) {
        const char *sig = values->items[i].key, *v = values->items[i].value;
        const ns_ynode *at = ns_ymap_get(kubelet, key);
        if (!eviction_signal_supported(sig))
            return ns_dec_fail(d, at, p, "\"%s\" is not a supported eviction signal", sig);
        if (durations)
            continue;
        size_t len = strlen(v);
        if (len > 0 && v[len - 1] == '%') {
            char *end;
            double pct = strtod(v, &end);
            if (end != v + len - 1 || pct < 0 || pct > 100)
                return ns_dec_fail(d, at, p, "%s: \"%s\" is not a percentage between 0%% and 100%%", sig, v);
        } else {
            int64_t q;
            char fp[NS_PATH_MAX];
            ns_path_key(fp, sizeof(fp), p, sig);
            if (ns_quantity_parse(v, NS_QTY_UNITS, fp, &q, NULL) < 0)
                return ns_dec_wrap(d, at);
        }
    }
    return 0;
}

int ns_decode_kubelet(const ns_dec *d, const ns_ynode *map, const char *path, const char *key, bool provisioner,
                      ns_kubelet_config *out)
{
    ns_dec_field f;
    int rc = ns_dec_object(d, map, path, key, provisioner ? kubelet_fields_provisioner : kubelet_fields, &f);
    if (rc <= 0)
        return rc;
    const ns_ynode *k = f.node;
    const char *p = f.path;
    out->present = true;
    if ((rc = ns_dec_strings(d, k, p, "clusterDNS", &out->cluster_dns, &out->n_cluster_dns)) < 0 ||
        (rc = ns_dec_int32(d, k, p, "maxPods", 0, INT32_MAX, &out->max_pods, &out->has_max_pods)) < 0 ||
        (rc = ns_dec_int32(d, k, p, "podsPerCore", 0, INT32_MAX, &out->pods_per_core, &out->has_pods_per_core)) < 0 ||
        (rc = check_reserved(d, k, p, "systemReserved")) < 0 || (rc = check_reserved(d, k, p, "kubeReserved")) < 0 ||
        (rc = ns_dec_resources(d, k, p, "systemReserved", &out->system_reserved, &out->has_system_reserved)) < 0 ||
        (rc = ns_dec_resources(d, k, p, "kubeReserved", &out->kube_reserved, &out->has_kube_reserved)) < 0 ||
        (rc = ns_dec_labels(d, k, p, "evictionHard", &out->eviction_hard)) < 0 ||
        (rc = ns_dec_labels(d, k, p, "evictionSoft", &out->eviction_soft)) < 0 ||
        (rc = ns_dec_labels(d, k, p, "evictionSoftGracePeriod", &out->eviction_soft_grace_period)) < 0 ||
        (rc = ns_dec_int32(d, k, p, "evictionMaxPodGracePeriod", INT32_MIN, INT32_MAX,
                           &out->eviction_max_pod_grace_period, &out->has_eviction_max_pod_grace_period)) < 0 ||
        (rc = ns_dec_int32(d, k, p, "imageGCHighThresholdPercent", 0, 100, &out->image_gc_high_threshold_percent,
                           &out->has_image_gc_high)) < 0 ||
        (rc = ns_dec_int32(d, k, p, "imageGCLowThresholdPercent", 0, 100, &out->image_gc_low_threshold_percent,
                           &out->has_image_gc_low)) < 0 ||
        (rc = ns_dec_bool(d, k, p, "cpuCFSQuota", &out->cpu_cfs_quota, &out->has_cpu_cfs_quota)) < 0 ||
        (rc = check_evictions(d, k, p, "evictionHard", &out->eviction_hard, false)) < 0 ||
        (rc = check_evictions(d, k, p, "evictionSoft", &out->eviction_soft, false)) < 0 ||
        (rc = check_evictions(d, k, p, "evictionSoftGracePeriod", &out->eviction_soft_grace_period, true)) < 0)
        return rc;
    for (size_t i = 0; i < out->eviction_soft.n; i++)
        if (!ns_labels_get(&out->eviction_soft_grace_period, out->eviction_soft.items[i].key))
            return ns_dec_fail(d, k, p, "evictionSoft.%s needs a matching evictionSoftGracePeriod.%s",
                               out->eviction_soft.items[i].key, out->eviction_soft.items[i].key);
    for (size_t i = 0; i < out->eviction_soft_grace_period.n; i++)
        if (!ns_labels_get(&out->eviction_soft, out->eviction_soft_grace_period.items[i].key))
            return ns_dec_fail(d, k, p, "evictionSoftGracePeriod.%s needs a matching evictionSoft.%s",
                               out->eviction_soft_grace_period.items[i].key,
                               out->eviction_soft_grace_period.items[i].key);
    if (out->has_image_gc_high && out->has_image_gc_low &&
        out->image_gc_high_threshold_percent <= out->image_gc_low_threshold_percent)
        return ns_dec_fail(d, k, p, "imageGCHighThresholdPercent must be greater than imageGCLowThresholdPercent");
    return 0;
}
