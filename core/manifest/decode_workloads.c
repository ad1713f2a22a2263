/*
 * Workloads expanded into the pods their controllers would create, with deterministic Kubernetes-style names:
 *   Deployment  <deploy>-<pod-template-hash>-<5 chars>   owner ReplicaSet <deploy>-<pod-template-hash>
 *   ReplicaSet  <rs>-<5 chars>                           owner ReplicaSet
 *   StatefulSet <sts>-<ordinal>                          owner StatefulSet
 *   Job         <job>-<5 chars> (Indexed: <job>-<index>-<5 chars>), as many as run at once  owner Job
 * DaemonSets are kept as one template pod (ns_daemonset). A workload whose own objects are loaded too (a dump of a
 * live cluster) is not expanded: it counts through them (manifest/workload_owners.h). A Deployment, ReplicaSet or
 * StatefulSet is also recorded as itself, with its replicas and its template, for a CapacityBuffer's scalableRef.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "manifest/decoders.h"
#include "manifest/workload_owners.h"
#include "model/hash.h"
#include "model/model_util.h"

#define MAX_REPLICAS 100000

/* Kubernetes' rand.SafeEncodeString alphabet (no vowels, no confusable characters). */
static const char alphanums[] = "bcdfghjklmnpqrstvwxz2456789";

/* The pod-template-hash label: Kubernetes encodes the decimal form of a 32-bit hash of the template. */
static void template_hash(const ns_ynode *tmpl, char *buf, size_t len)
{
    uint64_t h = ns_ynode_hash(tmpl, 0);
    char dec[16];
    snprintf(dec, sizeof(dec), "%" PRIu32, (uint32_t)(h ^ (h >> 32)));
    size_t i = 0;
    for (; dec[i] && i + 1 < len; i++)
        buf[i] = alphanums[(unsigned char)dec[i] % (sizeof(alphanums) - 1)];
    buf[i] = '\0';
}

/* Five characters standing in for Kubernetes' random suffix: derived from the owner name, the index and a salt that
 * is bumped until the name is unused. */
static void suffix5(const char *owner, size_t index, unsigned salt, char out[6])
{
    uint64_t h = ns_hash_step(ns_hash_step(ns_hash_str(NS_HASH_SEED, owner), index), salt);
    for (int i = 0; i < 5; i++) {
        out[i] = alphanums[h % (sizeof(alphanums) - 1)];
        h /= sizeof(alphanums) - 1;
    }
    out[5] = '\0';
}

typedef struct expansion {
    const char *kind;       /* the workload's kind */
    const ns_meta *meta;    /* the workload's metadata */
    const ns_ynode *tmpl;   /* spec.template */
    const char *owner_kind; /* owner of the pods */
    char owner_name[300];
    char prefix[300]; /* pod names start with prefix + "-" */
} expansion;

static int set_label(ns_pod *pod, const char *key, const char *value)
{
    return ns_labels_set(&pod->meta.labels, key, value) < 0 ? NS_ERR_INTERNAL : 0;
}

/* Decodes one pod of the expansion and names it `name`. */
static int make_pod(const ns_dec *d, const expansion *x, const char *name, ns_pod **out)
{
    ns_pod *pod;
    int rc = ns_decode_pod_template(d, x->tmpl, "spec.template", x->meta->namespace_, &pod);
    if (rc < 0)
        return rc;
    if (!(pod->meta.name = ns_strdup(name)) || !(pod->meta.owner_kind = ns_strdup(x->owner_kind)) ||
        !(pod->meta.owner_name = ns_strdup(x->owner_name))) {
        ns_pod_free(pod);
        return NS_ERR_INTERNAL;
    }
    *out = pod;
    return 0;
}

/* A name <prefix>-<5 chars> not yet used in the namespace. */
static void random_style_name(const ns_cluster *c, const expansion *x, size_t index, char *buf, size_t len)
{
    char sfx[6];
    for (unsigned salt = 0;; salt++) {
        suffix5(x->prefix, index, salt, sfx);
        snprintf(buf, len, "%s-%s", x->prefix, sfx);
        if (!ns_cluster_find_pod(c, x->meta->namespace_, buf))
            return;
    }
}

static int check_selector(const ns_dec *d, const ns_ynode *spec, const ns_pod *sample, bool required)
{
    ns_label_selector sel = {0};
    int rc = ns_decode_label_selector(d, spec, "spec", "selector", &sel);
    if (rc == 0 && !sel.present && required)
        rc = ns_dec_fail(d, spec, NULL, "missing required field \"spec.selector\"");
    else if (rc == 0 && sel.present && !ns_label_selector_matches(&sel, &sample->meta.labels))
        rc = ns_dec_fail(d, ns_ymap_get(spec, "selector"), "spec.selector",
                         "does not match the labels of spec.template.metadata.labels");
    ns_label_selector_free(&sel);
    return rc;
}

/* The controller that owns the workload's pods (a Deployment's ReplicaSet, a ReplicaSet, a StatefulSet) with its
 * selector, for the selector of a default topology spread (sched_default_spread.c). A Deployment's ReplicaSet selects
 * the pod-template-hash too, as the Deployment controller writes it. The same controller from a dump's ReplicaSet and
 * from its Deployment is recorded once. */
static int record_controller(const ns_dec *d, const ns_ynode *spec, const char *kind, const char *name,
                             const ns_meta *from, const char *hash, ns_cluster *c)
{
    if (ns_cluster_find_pod_controller(c, kind, from->namespace_, name))
        return 0;
    ns_workload *w = calloc(1, sizeof(*w));
    if (!w || !(w->meta.name = ns_strdup(name)) ||
        (from->namespace_ && !(w->meta.namespace_ = ns_strdup(from->namespace_)))) {
        ns_workload_free(w);
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory recording %s %s", kind, name);
    }
    w->kind = strcmp(kind, "StatefulSet") == 0 ? "StatefulSet" : "ReplicaSet"; /* static, as the model wants */
    w->meta.source_file = from->source_file;
    w->meta.source_line = from->source_line;
    int rc = ns_decode_label_selector(d, spec, "spec", "selector", &w->selector);
    if (rc == 0 && *hash && ns_labels_set(&w->selector.match_labels, "pod-template-hash", hash) < 0)
        rc = NS_FAIL(NS_ERR_INTERNAL, "out of memory recording %s %s", kind, name);
    if (rc < 0) {
        ns_workload_free(w);
        return rc;
    }
    return ns_cluster_add_pod_controller(c, w);
}

int ns_decode_workload_template(const ns_dec *d, const ns_ynode *spec, const char *ns, ns_pod **out)
{
    int rc = 0;
    const ns_ynode *tmpl = ns_dec_child(d, spec, "spec", "template", NS_Y_MAP, &rc);
    *out = NULL;
    if (rc == 0 && !tmpl)
        rc = ns_dec_fail(d, spec, NULL, "missing required field \"spec.template\"");
    return rc < 0 ? rc : ns_decode_pod_template(d, tmpl, "spec.template", ns, out);
}

/* The workload itself (model/workload.h), as a scalableRef finds it: its spec.replicas and its pod template decoded
 * as the controller's informers decode it (ns_decode_workload_template). A StatefulSet's or a ReplicaSet's record is
 * the one record_controller made. */
static int record_workload(const ns_dec *d, const ns_ynode *spec, const char *kind, const ns_meta *from,
                           int32_t replicas, ns_cluster *c)
{
    const char *k = strcmp(kind, "Deployment") == 0    ? "Deployment"
                    : strcmp(kind, "StatefulSet") == 0 ? "StatefulSet"
                                                       : "ReplicaSet"; /* static, as the model wants */
    ns_workload *w = ns_cluster_find_pod_controller(c, k, from->namespace_, from->name);
    if (w && w->template_pod)
        return 0;
    bool added = !w;
    if (added && (!(w = calloc(1, sizeof(*w))) || !(w->meta.name = ns_strdup(from->name)) ||
                  (from->namespace_ && !(w->meta.namespace_ = ns_strdup(from->namespace_))))) {
        ns_workload_free(w);
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory recording %s %s", kind, from->name);
    }
    if (added) {
        w->kind = k;
        w->meta.source_file = from->source_file;
        w->meta.source_line = from->source_line;
    }
    w->replicas = replicas;
    int rc = ns_decode_workload_template(d, spec, from->namespace_, &w->template_pod);
    if (!added)
        return rc;
    if (rc < 0) {
        ns_workload_free(w);
        return rc;
    }
    return ns_cluster_add_pod_controller(c, w);
}

static const char *const deployment_fields[] = {"replicas", "selector", "template", "strategy", "minReadySeconds",
                                                "revisionHistoryLimit", "paused", "progressDeadlineSeconds", NULL};
static const char *const replicaset_fields[] = {"replicas", "selector", "template", "minReadySeconds", NULL};
static const char *const statefulset_fields[] = {
    "replicas", "selector", "template", "serviceName", "volumeClaimTemplates", "podManagementPolicy",
    "updateStrategy", "revisionHistoryLimit", "minReadySeconds", "persistentVolumeClaimRetentionPolicy", "ordinals",
    NULL};
static const char *const job_fields[] = {
    "parallelism", "completions", "activeDeadlineSeconds", "backoffLimit", "backoffLimitPerIndex",
    "maxFailedIndexes", "completionMode", "manualSelector", "podFailurePolicy", "podReplacementPolicy", "selector",
    "suspend", "template", "ttlSecondsAfterFinished", "successPolicy", "managedBy", NULL};
static const char *const ordinals_fields[] = {"start", NULL};

/* How many pods the workload runs, from its spec. */
static int pod_count(const ns_dec *d, const ns_ynode *spec, const char *kind, int32_t *count, bool *indexed,
                     int32_t *first)
{
    int rc;
    *indexed = false;
    *first = 0;
    if (strcmp(kind, "Job") != 0) {
        *count = 1;
        if ((rc = ns_dec_int32(d, spec, "spec", "replicas", 0, MAX_REPLICAS, count, NULL)) < 0)
            return rc;
        const ns_ynode *ord = strcmp(kind, "StatefulSet") == 0
                                  ? ns_dec_child(d, spec, "spec", "ordinals", NS_Y_MAP, &rc)
                                  : NULL;
        if (ord && (rc = ns_dec_fields(d, ord, "spec.ordinals", ordinals_fields)) == 0)
            rc = ns_dec_int32(d, ord, "spec.ordinals", "start", 0, INT32_MAX - MAX_REPLICAS, first, NULL);
        return rc;
    }
    int32_t parallelism = 1, completions = 0;
    bool has_completions = false, suspend = false;
    char *mode = NULL;
    if ((rc = ns_dec_int32(d, spec, "spec", "parallelism", 0, MAX_REPLICAS, &parallelism, NULL)) < 0 ||
        (rc = ns_dec_int32(d, spec, "spec", "completions", 0, INT32_MAX, &completions, &has_completions)) < 0 ||
        (rc = ns_dec_bool(d, spec, "spec", "suspend", &suspend, NULL)) < 0 ||
        (rc = ns_dec_string(d, spec, "spec", "completionMode", &mode)) < 0)
        goto done;
    if (mode && strcmp(mode, "Indexed") && strcmp(mode, "NonIndexed")) {
        rc = ns_dec_fail(d, ns_ymap_get(spec, "completionMode"), "spec.completionMode",
                         "\"%s\" is not NonIndexed or Indexed", mode);
        goto done;
    }
    *indexed = mode && strcmp(mode, "Indexed") == 0;
    if (*indexed && !has_completions) {
        rc = ns_dec_fail(d, spec, "spec.completions", "is required with completionMode Indexed");
        goto done;
    }
    /* Pods running at once: parallelism, capped by the completions still to do; none while suspended. */
    *count = suspend ? 0 : (has_completions && completions < parallelism ? completions : parallelism);
done:
    free(mode);
    return rc;
}

int ns_load_workload(ns_dec *d, const ns_ynode *root, const char *kind, ns_cluster *c)
{
    ns_meta meta = {0};
    int rc;
    if ((rc = ns_decode_top_fields(d, root, NULL)) < 0 || (rc = ns_decode_meta(d, root, kind, true, &meta)) < 0) {
        ns_meta_free(&meta);
        return rc;
    }
    const ns_ynode *spec = ns_dec_child(d, root, "", "spec", NS_Y_MAP, &rc), *tmpl = NULL;
    const char *const *fields = strcmp(kind, "Deployment") == 0    ? deployment_fields
                                : strcmp(kind, "ReplicaSet") == 0  ? replicaset_fields
                                : strcmp(kind, "StatefulSet") == 0 ? statefulset_fields
                                                                   : job_fields;
    if (rc == 0 && !spec)
        rc = ns_dec_fail(d, root, NULL, "missing required field \"spec\"");
    if (rc == 0)
        rc = ns_dec_fields(d, spec, "spec", fields);
    if (rc == 0 && !(tmpl = ns_dec_child(d, spec, "spec", "template", NS_Y_MAP, &rc)) && rc == 0)
        rc = ns_dec_fail(d, spec, NULL, "missing required field \"spec.template\"");
    int32_t count = 0, first = 0;
    bool indexed = false;
    if (rc == 0)
        rc = pod_count(d, spec, kind, &count, &indexed, &first);
    int32_t replicas = count; /* spec.replicas, though the pods may come from elsewhere */
    /* A ReplicaSet of a Deployment stands for it; a workload whose pods (or ReplicaSets) came first makes none. */
    if (rc == 0 && strcmp(kind, "ReplicaSet") == 0)
        rc = ns_owners_claim(c, kind, &meta);
    if (rc == 0 && ns_owners_stand_for(c, kind, &meta))
        count = 0;

    expansion x = {.kind = kind, .meta = &meta, .tmpl = tmpl, .owner_kind = kind};
    char hash[16] = "";
    if (rc == 0) {
        snprintf(x.owner_name, sizeof(x.owner_name), "%s", meta.name);
        snprintf(x.prefix, sizeof(x.prefix), "%s", meta.name);
        if (strcmp(kind, "Deployment") == 0) {
            template_hash(tmpl, hash, sizeof(hash));
            x.owner_kind = "ReplicaSet";
            snprintf(x.owner_name, sizeof(x.owner_name), "%s-%s", meta.name, hash);
            snprintf(x.prefix, sizeof(x.prefix), "%s", x.owner_name);
        }
    }
    /* Validate the template (and the selector against it) even when no pod runs. */
    ns_pod *sample = NULL;
    if (rc == 0 && (rc = make_pod(d, &x, meta.name, &sample)) == 0)
        rc = check_selector(d, spec, sample, strcmp(kind, "Job") != 0);
    ns_pod_free(sample);
    if (rc == 0 && strcmp(kind, "Job") != 0)
        rc = record_controller(d, spec, x.owner_kind, x.owner_name, &meta, hash, c);
    if (rc == 0 && strcmp(kind, "Job") != 0)
        rc = record_workload(d, spec, kind, &meta, replicas, c);

    for (int32_t i = 0; rc == 0 && i < count; i++) {
        char name[400], index[16];
        snprintf(index, sizeof(index), "%" PRId32, first + i);
        if (strcmp(kind, "StatefulSet") == 0) {
            snprintf(name, sizeof(name), "%s-%s", meta.name, index);
        } else if (indexed) {
            expansion xi = x;
            snprintf(xi.prefix, sizeof(xi.prefix), "%s-%s", meta.name, index);
            random_style_name(c, &xi, (size_t)i, name, sizeof(name));
        } else {
            random_style_name(c, &x, (size_t)i, name, sizeof(name));
        }
        ns_pod *pod;
        if ((rc = make_pod(d, &x, name, &pod)) < 0)
            break;
        pod->meta.source_line = root->line;
        if (strcmp(kind, "Deployment") == 0)
            rc = set_label(pod, "pod-template-hash", hash);
        else if (strcmp(kind, "StatefulSet") == 0) {
            rc = set_label(pod, "statefulset.kubernetes.io/pod-name", name);
            rc = rc ? rc : set_label(pod, "apps.kubernetes.io/pod-index", index);
        } else if (strcmp(kind, "Job") == 0) {
            rc = set_label(pod, "batch.kubernetes.io/job-name", meta.name);
            rc = rc ? rc : set_label(pod, "job-name", meta.name);
            if (indexed && rc == 0)
                rc = set_label(pod, "batch.kubernetes.io/job-completion-index", index);
        }
        if (rc < 0)
            ns_pod_free(pod);
        else if (c->packed_pods && !(pod = ns_pod_pack(pod))) /* as the Pods of manifests are (ns_load_pod) */
            rc = NS_ERR_INTERNAL;
        else if ((rc = ns_cluster_add_pod(c, pod)) == 0)
            rc = ns_owners_record_expanded(c, kind, &meta, name);
    }
    ns_meta_free(&meta);
    return rc;
}

static const char *const daemonset_fields[] = {"selector", "template", "updateStrategy", "minReadySeconds",
                                               "revisionHistoryLimit", NULL};

int ns_load_daemonset(ns_dec *d, const ns_ynode *root, ns_cluster *c)
{
    ns_daemonset *ds = ns_daemonset_new();
    if (!ds)
        return NS_ERR_INTERNAL;
    int rc;
    const ns_ynode *spec = NULL, *tmpl = NULL;
    if ((rc = ns_decode_top_fields(d, root, NULL)) == 0 &&
        (rc = ns_decode_meta(d, root, "DaemonSet", true, &ds->meta)) == 0 &&
        !(spec = ns_dec_child(d, root, "", "spec", NS_Y_MAP, &rc)) && rc == 0)
        rc = ns_dec_fail(d, root, NULL, "missing required field \"spec\"");
    if (rc == 0)
        rc = ns_dec_fields(d, spec, "spec", daemonset_fields);
    if (rc == 0 && !(tmpl = ns_dec_child(d, spec, "spec", "template", NS_Y_MAP, &rc)) && rc == 0)
        rc = ns_dec_fail(d, spec, NULL, "missing required field \"spec.template\"");
    if (rc == 0) {
        expansion x = {.kind = "DaemonSet", .meta = &ds->meta, .tmpl = tmpl, .owner_kind = "DaemonSet"};
        snprintf(x.owner_name, sizeof(x.owner_name), "%s", ds->meta.name);
        rc = make_pod(d, &x, ds->meta.name, &ds->template_pod);
    }
    if (rc == 0)
        rc = check_selector(d, spec, ds->template_pod, true);
    if (rc < 0) {
        ns_daemonset_free(ds);
        return rc;
    }
    return ns_cluster_add_daemonset(c, ds);
}
