/* One decoder per timeline action (docs/timeline.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simulation/timeline_decode.h"
#include "errors/ns_error.h"
#include "manifest/decoders.h"
#include "manifest/loader.h"
#include "manifest/yaml_json.h"
#include "model/cluster.h"
#include "model/checked.h"
#include "model/duration.h"
#include "model/model_util.h"
#include "model/nodeclass_kinds.h"
#include "simulation/timeline_object_patch.h"

#define MAX_REPLICAS 100000

static const char *const workload_kinds[] = {"Deployment", "ReplicaSet", "StatefulSet", "Job", NULL};
static const char *const deletable_kinds[] = {"Pod",       "Deployment",       "ReplicaSet",     "StatefulSet",
                                              "Job",       "NodePool",         "NodeClaim",      "Node",
                                              "VolumeAttachment", "CapacityBuffer", "PodTemplate", NULL};
static const char *const namespaced_kinds[] = {"Pod",         "Deployment", "ReplicaSet",          "StatefulSet",
                                               "Job",         "DaemonSet",  "PodDisruptionBudget", "CapacityBuffer",
                                               "PodTemplate", NULL};
/* Patchable kinds; Node, NodeClaim and Pod go to tl_decode_object_patch before decode_ref sees them. */
static const char *const patch_kinds[] = {"NodePool", "Provisioner", "Node",        "NodeClaim",
                                          "Pod",      "CapacityBuffer", "PodTemplate", NULL};

static bool in_list(const char *const *list, const char *s)
{
    for (; *list; list++)
        if (strcmp(*list, s) == 0)
            return true;
    return false;
}

static void join(const char *const *list, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; list[i] && off < len; i++) {
        int w = snprintf(buf + off, len - off, "%s%s", i ? ", " : "", list[i]);
        off += w > 0 ? (size_t)w : 0;
    }
}

/* kind (checked against `kinds`, defaulting to default_kind when not NULL), namespace and, when name_required,
 * name. Cluster-scoped kinds refuse a namespace. */
static int decode_ref(tl_ctx *c, const ns_ynode *v, const char *path, const char *const *kinds,
                      const char *default_kind, bool name_required, ns_tl_ref *out)
{
    int rc;
    if ((rc = ns_dec_string(&c->dec, v, path, "kind", &out->kind)) < 0 ||
        (rc = ns_dec_string(&c->dec, v, path, "namespace", &out->namespace_)) < 0 ||
        (rc = ns_dec_string(&c->dec, v, path, "name", &out->name)) < 0)
        return rc;
    char p[NS_PATH_MAX], list[256];
    if (!out->kind && default_kind && !(out->kind = ns_strdup(default_kind)))
        return NS_ERR_INTERNAL;
    if (!out->kind) {
        ns_path_key(p, sizeof(p), path, "kind");
        return ns_dec_fail(&c->dec, v, NULL, "missing required field \"%s\"", p);
    }
    /* Patches reach node classes too: the kinds the loaded providers declare. */
    bool nodeclass = kinds == patch_kinds && ns_nodeclass_kinds_knows(c->kinds, out->kind);
    if (!in_list(kinds, out->kind) && !nodeclass) {
        char known[1024];
        ns_path_key(p, sizeof(p), path, "kind");
        join(kinds, list, sizeof(list));
        return ns_dec_fail(&c->dec, ns_ymap_get(v, "kind"), p, "\"%s\" is not one of %s%s%s", out->kind, list,
                           kinds == patch_kinds ? " or a node-class kind of the loaded providers: " : "",
                           kinds == patch_kinds ? ns_nodeclass_kinds_describe(c->kinds, known, sizeof(known)) : "");
    }
    bool scoped = !in_list(namespaced_kinds, out->kind);
    if (scoped && out->namespace_) {
        ns_path_key(p, sizeof(p), path, "namespace");
        return ns_dec_fail(&c->dec, ns_ymap_get(v, "namespace"), p, "%s is cluster-scoped and has no namespace",
                           out->kind);
    }
    if (!scoped && !out->namespace_ && !(out->namespace_ = ns_strdup("default")))
        return NS_ERR_INTERNAL;
    if (name_required && (!out->name || !*out->name)) {
        ns_path_key(p, sizeof(p), path, "name");
        return ns_dec_fail(&c->dec, v, NULL, "missing required field \"%s\"", p);
    }
    return 0;
}

static const char *const scale_fields[] = {"kind", "namespace", "name", "replicas", NULL};

int tl_decode_scale(tl_ctx *c, const ns_ynode *v, const char *path, ns_tl_step *s)
{
    int rc;
    bool has = false;
    if ((rc = ns_dec_fields(&c->dec, v, path, scale_fields)) < 0 ||
        (rc = decode_ref(c, v, path, workload_kinds, "Deployment", true, &s->target)) < 0 ||
        (rc = ns_dec_int32(&c->dec, v, path, "replicas", 0, MAX_REPLICAS, &s->replicas, &has)) < 0)
        return rc;
    if (!has) {
        char p[NS_PATH_MAX];
        ns_path_key(p, sizeof(p), path, "replicas");
        return ns_dec_fail(&c->dec, v, NULL, "missing required field \"%s\"", p);
    }
    return 0;
}

/* Byte offset of (line, column) in the source, or len when outside it. */
static size_t offset_of(const tl_ctx *c, int line, int column)
{
    size_t off = 0;
    for (int l = 1; l < line && off < c->len; off++)
        if (c->text[off] == '\n')
            l++;
    return off + (size_t)(column > 0 ? column - 1 : 0);
}

/* The inline text, preceded by as many newlines as put its first line where it is in the timeline, so the manifest
 * loader's FILE:LINE messages point into the timeline. A block scalar (| or >) starts on the line after its
 * indicator; any other scalar on its own line. */
static int inline_manifest(tl_ctx *c, const ns_ynode *m, ns_tl_step *s)
{
    size_t at = offset_of(c, m->line, m->column);
    bool block = at < c->len && (c->text[at] == '|' || c->text[at] == '>');
    size_t pad = (size_t)(m->line > 0 ? m->line - 1 : 0) + (block ? 1 : 0);
    size_t n = strlen(m->str);
    if (!(s->manifest_text = malloc(pad + n + 1)) || !(s->manifest_source = ns_strdup(c->dec.file)))
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory copying an inline manifest");
    memset(s->manifest_text, '\n', pad);
    memcpy(s->manifest_text + pad, m->str, n + 1);
    s->manifest_len = pad + n;
    return 0;
}

static const char *const add_fields[] = {"manifest", "file", NULL};

int tl_decode_add(tl_ctx *c, const ns_ynode *v, const char *path, ns_tl_step *s)
{
    int rc;
    if ((rc = ns_dec_fields(&c->dec, v, path, add_fields)) < 0)
        return rc;
    const ns_ynode *m = ns_ymap_get(v, "manifest"), *f = ns_ymap_get(v, "file");
    char p[NS_PATH_MAX];
    if ((m != NULL) == (f != NULL))
        return ns_dec_fail(&c->dec, v, path, "give exactly one of \"manifest\" (inline YAML) or \"file\"");
    if (m) {
        ns_path_key(p, sizeof(p), path, "manifest");
        if (m->kind != NS_Y_SCALAR || m->type != NS_YS_STRING)
            return ns_dec_fail(&c->dec, m, p,
                               "expected the manifest as a string (a block scalar: \"manifest: |\"), got %s",
                               ns_ynode_type_name(m));
        rc = inline_manifest(c, m, s);
    } else {
        ns_path_key(p, sizeof(p), path, "file");
        const char *name = NULL;
        if ((rc = ns_dec_scalar_string(&c->dec, f, p, &name)) < 0)
            return rc;
        char full[4096];
        if (snprintf(full, sizeof(full), "%s%s", name[0] == '/' ? "" : c->dir, name) >= (int)sizeof(full))
            return ns_dec_fail(&c->dec, f, p, "the path is too long");
        if (!(s->manifest_source = ns_strdup(full)))
            return NS_ERR_INTERNAL;
        if ((rc = ns_read_file(full, "manifest", &s->manifest_text, &s->manifest_len)) < 0)
            return ns_dec_wrap(&c->dec, f);
    }
    if (rc < 0)
        return rc;
    /* Decode now, into a cluster of its own, so a bad manifest fails before the simulation runs. */
    ns_cluster *scratch = ns_cluster_new();
    if (!scratch)
        return NS_ERR_INTERNAL;
    ns_cluster_set_kinds(scratch, c->kinds);
    rc = ns_manifest_load_string(scratch, s->manifest_source, s->manifest_text, s->manifest_len);
    if (rc < 0)
        ns_error_prefix("%s:%d: %s: %s: ", c->dec.file, (m ? m : f)->line, c->dec.object, m ? "manifest" : "file");
    else if (scratch->n_daemonsets || scratch->n_nodes || scratch->n_nodeclaims)
        rc = ns_dec_fail(&c->dec, m ? m : f, p,
                         "adds a %s; a timeline can add Pods, workloads, PodDisruptionBudgets, VolumeAttachments, "
                         "NodePools, node classes, CapacityBuffers and PodTemplates (put DaemonSets, Nodes and "
                         "NodeClaims in the manifests)",
                         scratch->n_daemonsets ? "DaemonSet" : scratch->n_nodes ? "Node" : "NodeClaim");
    ns_cluster_free(scratch);
    return rc;
}

static const char *const delete_fields[] = {"kind", "namespace", "name", "selector", "gracePeriod", NULL};

int tl_decode_delete(tl_ctx *c, const ns_ynode *v, const char *path, ns_tl_step *s)
{
    int rc;
    bool has_grace = false;
    if ((rc = ns_dec_fields(&c->dec, v, path, delete_fields)) < 0 ||
        (rc = decode_ref(c, v, path, deletable_kinds, NULL, false, &s->target)) < 0 ||
        (rc = ns_decode_label_selector(&c->dec, v, path, "selector", &s->selector)) < 0 ||
        (rc = ns_dec_duration(&c->dec, v, path, "gracePeriod", false, &s->grace_ms, &has_grace)) < 0)
        return rc;
    if ((s->target.name != NULL) == s->selector.present)
        return ns_dec_fail(&c->dec, v, path, "give exactly one of \"name\" or \"selector\"");
    if (has_grace && strcmp(s->target.kind, "Pod") != 0) {
        char p[NS_PATH_MAX];
        ns_path_key(p, sizeof(p), path, "gracePeriod");
        return ns_dec_fail(&c->dec, ns_ymap_get(v, "gracePeriod"), p, "applies to Pods only (a %s's deletion "
                           "follows its own controller)", s->target.kind);
    }
    return 0;
}

static const char *const patch_fields[] = {"kind", "namespace", "name", "metadata", "spec", "template", NULL};
static const char *const patch_meta_fields[] = {"labels", "annotations", NULL};

int tl_decode_patch(tl_ctx *c, const ns_ynode *v, const char *path, ns_tl_step *s)
{
    const ns_ynode *kind = v->kind == NS_Y_MAP ? ns_ymap_get(v, "kind") : NULL;
    if (kind && kind->kind == NS_Y_SCALAR && tl_object_patch_kind(kind->str))
        return tl_decode_object_patch(c, v, path, s);
    int rc;
    if ((rc = ns_dec_fields(&c->dec, v, path, patch_fields)) < 0 ||
        (rc = decode_ref(c, v, path, patch_kinds, NULL, true, &s->target)) < 0)
        return rc;
    const ns_ynode *meta = ns_dec_child(&c->dec, v, path, "metadata", NS_Y_MAP, &rc);
    if (rc < 0)
        return rc;
    /* A PodTemplate's body is its `template` (it has no spec); every other kind patched here has a spec. */
    bool pod_template = strcmp(s->target.kind, "PodTemplate") == 0;
    const char *body = pod_template ? "template" : "spec", *other = pod_template ? "spec" : "template";
    const ns_ynode *spec = ns_dec_child(&c->dec, v, path, body, NS_Y_MAP, &rc);
    if (rc < 0)
        return rc;
    char p[NS_PATH_MAX];
    if (ns_ymap_get(v, other)) {
        ns_path_key(p, sizeof(p), path, other);
        return ns_dec_fail(&c->dec, ns_ymap_get(v, other), p, "a %s has no %s; patch its %s", s->target.kind, other,
                           body);
    }
    if (meta) {
        ns_path_key(p, sizeof(p), path, "metadata");
        if ((rc = ns_dec_fields(&c->dec, meta, p, patch_meta_fields)) < 0)
            return rc;
    }
    if (!meta && !spec)
        return ns_dec_fail(&c->dec, v, path, "has nothing to change (give %s and/or metadata)", body);
    if (!(s->patch = cJSON_CreateObject()))
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory for a patch");
    const ns_ynode *parts[2] = {meta, spec};
    const char *keys[2] = {"metadata", body};
    for (int i = 0; i < 2; i++) {
        if (!parts[i])
            continue;
        cJSON *j = NULL;
        ns_path_key(p, sizeof(p), path, keys[i]);
        if ((rc = ns_yaml_to_json(&c->dec, parts[i], p, &j)) < 0)
            return rc;
        if (!cJSON_AddItemToObject(s->patch, keys[i], j)) {
            cJSON_Delete(j);
            return NS_FAIL(NS_ERR_INTERNAL, "out of memory for a patch");
        }
    }
    return 0;
}

/* The interrupt action's event names (docs/timeline.md), both ways: decoded here, written by ns_tl_event_name. */
static const struct {
    const char *name;
    ns_event_kind kind;
} events[] = {
    {"SpotInterruption", NS_EVENT_SPOT_INTERRUPTION},
    {"RebalanceRecommendation", NS_EVENT_REBALANCE_RECOMMENDATION},
    {"ScheduledMaintenance", NS_EVENT_SCHEDULED_MAINTENANCE},
    {"InstanceStopping", NS_EVENT_INSTANCE_STOPPING},
    {"InstanceTerminated", NS_EVENT_INSTANCE_TERMINATED},
    {"InstanceUnhealthy", NS_EVENT_INSTANCE_UNHEALTHY},
    {"CapacityReservationInterruption", NS_EVENT_CAPACITY_RESERVATION_INTERRUPTION},
};

const char *ns_tl_event_name(ns_event_kind e)
{
    for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++)
        if (events[i].kind == e)
            return events[i].name;
    return "unknown";
}

static const char *const interrupt_fields[] = {"event", "node", "nodepool", "count", "deadline", NULL};

int tl_decode_interrupt(tl_ctx *c, const ns_ynode *v, const char *path, ns_tl_step *s)
{
    int rc;
    char *event = NULL, p[NS_PATH_MAX];
    bool has_count = false;
    if ((rc = ns_dec_fields(&c->dec, v, path, interrupt_fields)) < 0 ||
        (rc = ns_dec_string_required(&c->dec, v, path, "event", &event)) < 0 ||
        (rc = ns_dec_string(&c->dec, v, path, "node", &s->node)) < 0 ||
        (rc = ns_dec_string(&c->dec, v, path, "nodepool", &s->nodepool)) < 0 ||
        (rc = ns_dec_int32(&c->dec, v, path, "count", 1, MAX_REPLICAS, &s->count, &has_count)) < 0 ||
        (rc = ns_dec_duration(&c->dec, v, path, "deadline", false, &s->deadline_ms, NULL)) < 0)
        goto done;
    size_t i = 0;
    while (i < sizeof(events) / sizeof(events[0]) && strcmp(events[i].name, event) != 0)
        i++;
    if (i == sizeof(events) / sizeof(events[0])) {
        ns_path_key(p, sizeof(p), path, "event");
        rc = ns_dec_fail(&c->dec, ns_ymap_get(v, "event"), p,
                         "\"%s\" is not one of SpotInterruption, RebalanceRecommendation, ScheduledMaintenance, "
                         "InstanceStopping, InstanceTerminated, InstanceUnhealthy, CapacityReservationInterruption",
                         event);
        goto done;
    }
    s->event = events[i].kind;
    if ((s->node != NULL) == (s->nodepool != NULL))
        rc = ns_dec_fail(&c->dec, v, path, "give exactly one of \"node\" or \"nodepool\"");
    else if (has_count && s->node)
        rc = ns_dec_fail(&c->dec, ns_ymap_get(v, "count"), path, "count applies to a nodepool, not to one node");
    else if (s->event == NS_EVENT_INSTANCE_UNHEALTHY && ns_ymap_get(v, "deadline")) {
        /* provider.h: an impaired instance is terminated at once, so its event carries no deadline. */
        ns_path_key(p, sizeof(p), path, "deadline");
        rc = ns_dec_fail(&c->dec, ns_ymap_get(v, "deadline"), p,
                         "an InstanceUnhealthy event has no deadline (the claim is terminated at once)");
    }
done:
    free(event);
    return rc;
}

static const char *const node_condition_fields[] = {"node", "nodepool", "count", "type", "status", "reason",
                                                    "message", NULL};
static const char *const condition_statuses[] = {"True", "False", "Unknown", NULL};

int tl_decode_node_condition(tl_ctx *c, const ns_ynode *v, const char *path, ns_tl_step *s)
{
    int rc;
    bool has_count = false;
    char p[NS_PATH_MAX];
    if ((rc = ns_dec_fields(&c->dec, v, path, node_condition_fields)) < 0 ||
        (rc = ns_dec_string(&c->dec, v, path, "node", &s->node)) < 0 ||
        (rc = ns_dec_string(&c->dec, v, path, "nodepool", &s->nodepool)) < 0 ||
        (rc = ns_dec_int32(&c->dec, v, path, "count", 1, MAX_REPLICAS, &s->count, &has_count)) < 0 ||
        (rc = ns_dec_string_required(&c->dec, v, path, "type", &s->cond_type)) < 0 ||
        (rc = ns_dec_string_required(&c->dec, v, path, "status", &s->cond_status)) < 0 ||
        (rc = ns_dec_string(&c->dec, v, path, "reason", &s->cond_reason)) < 0 ||
        (rc = ns_dec_string(&c->dec, v, path, "message", &s->cond_message)) < 0)
        return rc;
    if (!in_list(condition_statuses, s->cond_status)) {
        ns_path_key(p, sizeof(p), path, "status");
        return ns_dec_fail(&c->dec, ns_ymap_get(v, "status"), p, "\"%s\" is not True, False or Unknown (quote it: "
                           "YAML reads a bare True or False as a boolean)", s->cond_status);
    }
    if (!s->cond_type[0]) {
        ns_path_key(p, sizeof(p), path, "type");
        return ns_dec_fail(&c->dec, ns_ymap_get(v, "type"), p, "is empty");
    }
    if ((s->node != NULL) == (s->nodepool != NULL))
        return ns_dec_fail(&c->dec, v, path, "give exactly one of \"node\" or \"nodepool\"");
    if (has_count && s->node)
        return ns_dec_fail(&c->dec, ns_ymap_get(v, "count"), path, "count applies to a nodepool, not to one node");
    return 0;
}

static const char *const launch_failure_fields[] = {"instanceType", "zone", "capacityType", "clear", NULL};
static const char *const capacity_types[] = {"spot", "on-demand", "reserved", NULL};

int tl_decode_launch_failure(tl_ctx *c, const ns_ynode *v, const char *path, ns_tl_step *s)
{
    int rc;
    bool has_clear = false;
    if ((rc = ns_dec_fields(&c->dec, v, path, launch_failure_fields)) < 0 ||
        (rc = ns_dec_bool(&c->dec, v, path, "clear", &s->clear, &has_clear)) < 0 ||
        (rc = ns_dec_string(&c->dec, v, path, "instanceType", &s->instance_type)) < 0 ||
        (rc = ns_dec_string(&c->dec, v, path, "zone", &s->zone)) < 0 ||
        (rc = ns_dec_string(&c->dec, v, path, "capacityType", &s->capacity_type)) < 0)
        return rc;
    if (has_clear && !s->clear)
        return ns_dec_fail(&c->dec, ns_ymap_get(v, "clear"), path,
                           "clear: false does nothing; leave it out to inject a failure");
    if (s->clear && (s->instance_type || s->zone || s->capacity_type))
        return ns_dec_fail(&c->dec, ns_ymap_get(v, "clear"), path,
                           "clear removes every injected failure and takes no offering fields");
    if (s->capacity_type && !in_list(capacity_types, s->capacity_type)) {
        char p[NS_PATH_MAX];
        ns_path_key(p, sizeof(p), path, "capacityType");
        return ns_dec_fail(&c->dec, ns_ymap_get(v, "capacityType"), p, "\"%s\" is not spot, on-demand or reserved",
                           s->capacity_type);
    }
    return 0;
}

static const char *const advance_fields[] = {"for", "until", NULL};

/* The advance's end, at most Go's largest duration from the start, so start + end cannot wrap. */
static int advance_end(tl_ctx *c, const ns_ynode *v, const char *path, ns_tl_step *s, int64_t ms)
{
    if (!ns_checked_add(s->at_ms, ms, &s->end_ms) || s->end_ms > NS_DURATION_MAX_MS)
        return ns_dec_fail(&c->dec, v, path,
                           "ends later than Go's largest duration (2562047h47m16.854775807s) from the start");
    return 0;
}

int tl_decode_advance(tl_ctx *c, const ns_ynode *v, const char *path, ns_tl_step *s)
{
    int rc;
    int64_t ms = 0;
    if (v->kind == NS_Y_SCALAR) {
        const char *text = NULL;
        if ((rc = ns_dec_scalar_string(&c->dec, v, path, &text)) < 0)
            return rc;
        if (ns_duration_parse(text, false, path, &ms) < 0)
            return ns_dec_wrap(&c->dec, v);
        return advance_end(c, v, path, s, ms);
    }
    bool has_for = false, has_until = false;
    if ((rc = ns_dec_fields(&c->dec, v, path, advance_fields)) < 0 ||
        (rc = ns_dec_duration(&c->dec, v, path, "for", false, &ms, &has_for)) < 0)
        return rc;
    int64_t until = 0;
    if ((rc = ns_dec_duration(&c->dec, v, path, "until", false, &until, &has_until)) < 0)
        return rc;
    if (has_for == has_until)
        return ns_dec_fail(&c->dec, v, path, "give exactly one of \"for\" (a duration) or \"until\" (a time)");
    if (has_until && until < s->at_ms) {
        char a[32], u[32], p[NS_PATH_MAX];
        ns_path_key(p, sizeof(p), path, "until");
        return ns_dec_fail(&c->dec, ns_ymap_get(v, "until"), p, "%s is before the step's time %s",
                           ns_duration_format(until, u, sizeof(u)), ns_duration_format(s->at_ms, a, sizeof(a)));
    }
    if (has_until) {
        s->end_ms = until;
        return 0;
    }
    return advance_end(c, v, path, s, ms);
}
