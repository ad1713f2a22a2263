/* Timeline files: the document, its steps and their times. The actions are decoded in timeline_actions.c. */
#include "simulation/timeline.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock/ns_clock.h"
#include "simulation/timeline_decode.h"
#include "sched/sched.h"
#include "simulation/timeline_object_patch.h"
#include "simulation/timeline_launch_error.h"
#include "simulation/timeline_pod_status.h"
#include "errors/ns_error.h"
#include "model/checked.h"
#include "model/duration.h"
#include "model/model_util.h"

/* Manifests and timelines are small; a bigger file is almost certainly the wrong file. */

static const struct {
    const char *key;
    ns_tl_action action;
    int (*decode)(tl_ctx *, const ns_ynode *, const char *, ns_tl_step *);
} actions[] = {
    {"scale", NS_TL_SCALE, tl_decode_scale},
    {"add", NS_TL_ADD, tl_decode_add},
    {"delete", NS_TL_DELETE, tl_decode_delete},
    {"patch", NS_TL_PATCH, tl_decode_patch},
    {"interrupt", NS_TL_INTERRUPT, tl_decode_interrupt},
    {"launchFailure", NS_TL_LAUNCH_FAILURE, tl_decode_launch_failure},
    {"advance", NS_TL_ADVANCE, tl_decode_advance},
    {"nodeCondition", NS_TL_NODE_CONDITION, tl_decode_node_condition},
    {"podStatus", NS_TL_POD_STATUS, tl_decode_pod_status},
    {"launchError", NS_TL_LAUNCH_ERROR, tl_decode_launch_error},
    {"launchTimeout", NS_TL_LAUNCH_TIMEOUT, tl_decode_launch_timeout},
};
#define N_ACTIONS (sizeof(actions) / sizeof(actions[0]))

static const char *const top_fields[] = {"description", "start", "engine", "featureGates", "steps", NULL};

const char *ns_tl_action_name(ns_tl_action a)
{
    for (size_t i = 0; i < N_ACTIONS; i++)
        if (actions[i].action == a)
            return actions[i].key;
    return "unknown";
}

static void step_free(ns_tl_step *s)
{
    free(s->name);
    free(s->target.kind);
    free(s->target.namespace_);
    free(s->target.name);
    ns_label_selector_free(&s->selector);
    free(s->manifest_source);
    free(s->manifest_text);
    cJSON_Delete(s->patch);
    tl_kvs_free(s->labels, s->n_labels);
    tl_kvs_free(s->annotations, s->n_annotations);
    ns_taints_free(s->taints, s->n_taints);
    free(s->node);
    free(s->nodepool);
    free(s->instance_type);
    free(s->zone);
    free(s->capacity_type);
    free(s->cond_type);
    free(s->cond_status);
    free(s->cond_reason);
    free(s->cond_message);
    free(s->phase);
}

void ns_timeline_free(ns_timeline *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n_steps; i++)
        step_free(&t->steps[i]);
    free(t->steps);
    free(t->path);
    free(t->description);
    free(t);
}

/* The step's time: `at` from the start, `after` from the previous step's end (default after: 0s); never before the
 * previous step's end, so the clock only moves forward. */
static int decode_time(tl_ctx *c, const ns_ynode *step, const char *path, int64_t prev_end, ns_tl_step *s)
{
    int64_t at = 0, after = 0;
    bool has_at = false, has_after = false;
    int rc;
    if ((rc = ns_dec_duration(&c->dec, step, path, "at", false, &at, &has_at)) < 0 ||
        (rc = ns_dec_duration(&c->dec, step, path, "after", false, &after, &has_after)) < 0)
        return rc;
    if (has_at && has_after)
        return ns_dec_fail(&c->dec, ns_ymap_get(step, "after"), path, "has both \"at\" and \"after\"; give one");
    if (has_at && at < prev_end) {
        char a[32], p[32];
        return ns_dec_fail(&c->dec, ns_ymap_get(step, "at"), path,
                           "at %s is before the end of the previous step (%s); steps run in order",
                           ns_duration_format(at, a, sizeof(a)), ns_duration_format(prev_end, p, sizeof(p)));
    }
    s->at_ms = at;
    if (!has_at && (!ns_checked_add(prev_end, after, &s->at_ms) || s->at_ms > NS_DURATION_MAX_MS))
        return ns_dec_fail(&c->dec, ns_ymap_get(step, "after"), path,
                           "the step's time is later than Go's largest duration (2562047h47m16.854775807s) "
                           "from the start");
    s->end_ms = s->at_ms;
    return 0;
}

static int decode_step(tl_ctx *c, const ns_ynode *step, size_t index, int64_t prev_end, ns_tl_step *s)
{
    char path[NS_PATH_MAX];
    ns_path_index(path, sizeof(path), "steps", index);
    snprintf(c->dec.object, sizeof(c->dec.object), "timeline step %zu", index + 1);
    s->index = index;
    s->line = step->line;
    if (step->kind != NS_Y_MAP)
        return ns_dec_fail(&c->dec, step, path, "expected a mapping with one action, got %s",
                           ns_ynode_type_name(step));
    const ns_ynode *action_key = NULL;
    size_t which = N_ACTIONS;
    int rc;
    if ((rc = ns_dec_fields(&c->dec, step, path, NULL)) < 0)
        return rc;
    for (size_t i = 0; i < step->n; i++) {
        const ns_ynode *k = ns_ymap_key(step, i);
        if (strcmp(k->str, "at") == 0 || strcmp(k->str, "after") == 0 || strcmp(k->str, "name") == 0)
            continue;
        size_t a = 0;
        while (a < N_ACTIONS && strcmp(actions[a].key, k->str) != 0)
            a++;
        char p[NS_PATH_MAX];
        ns_path_key(p, sizeof(p), path, k->str);
        if (a == N_ACTIONS)
            return ns_dec_fail(&c->dec, k, NULL,
                               "unknown field \"%s\" (a step has at or after, name, and one action: scale, add, "
                               "delete, patch, interrupt, launchFailure, launchError, launchTimeout, advance, nodeCondition or "
                               "podStatus)",
                               p);
        if (action_key)
            return ns_dec_fail(&c->dec, k, p, "a step has one action, and this one already has \"%s\" (line %d)",
                               action_key->str, action_key->line);
        action_key = k;
        which = a;
    }
    if (!action_key)
        return ns_dec_fail(&c->dec, step, path,
                           "has no action (one of scale, add, delete, patch, interrupt, launchFailure, launchError, "
                           "launchTimeout, advance, nodeCondition, podStatus)");
    if ((rc = ns_dec_string(&c->dec, step, path, "name", &s->name)) < 0 ||
        (rc = decode_time(c, step, path, prev_end, s)) < 0)
        return rc;
    s->action = actions[which].action;
    s->action_line = action_key->line;
    const ns_ynode *value = ns_ymap_get(step, action_key->str);
    char p[NS_PATH_MAX];
    ns_path_key(p, sizeof(p), path, action_key->str);
    if (!value)
        return ns_dec_fail(&c->dec, action_key, p, "is empty");
    return actions[which].decode(c, value, p, s);
}

static const char *const engine_fields[] = {
    "tick", "registrationDelay", "initializationDelay", "registrationTTL", "batchIdleDuration", "batchMaxDuration",
    "stabilizationWindow", "orphanGCGrace", "unavailableOfferingTTL", "actOnRebalance", "spotToSpotConsolidation",
    "minValuesPolicy", "volumeDetachDelay", NULL};

static int decode_engine(tl_ctx *c, const ns_ynode *root, ns_tl_engine_settings *e)
{
    int rc;
    const ns_ynode *m = ns_dec_child(&c->dec, root, "", "engine", NS_Y_MAP, &rc);
    if (!m)
        return rc;
    struct {
        const char *key;
        int64_t *out;
    } durations[] = {
        {"tick", &e->tick_ms},
        {"registrationDelay", &e->registration_delay_ms},
        {"initializationDelay", &e->initialization_delay_ms},
        {"registrationTTL", &e->registration_ttl_ms},
        {"batchIdleDuration", &e->batch_idle_ms},
        {"batchMaxDuration", &e->batch_max_ms},
        {"stabilizationWindow", &e->stabilization_ms},
        {"orphanGCGrace", &e->orphan_gc_grace_ms},
        {"unavailableOfferingTTL", &e->unavailable_offering_ttl_ms},
        {"volumeDetachDelay", &e->volume_detach_delay_ms},
    };
    if ((rc = ns_dec_fields(&c->dec, m, "engine", engine_fields)) < 0)
        return rc;
    for (size_t i = 0; i < sizeof(durations) / sizeof(durations[0]); i++)
        if ((rc = ns_dec_duration(&c->dec, m, "engine", durations[i].key, false, durations[i].out, NULL)) < 0)
            return rc;
    if (e->tick_ms == 0)
        return ns_dec_fail(&c->dec, ns_ymap_get(m, "tick"), "engine.tick", "must be longer than 0s");
    bool act = false, has_act = false, s2s = false, has_s2s = false;
    if ((rc = ns_dec_bool(&c->dec, m, "engine", "actOnRebalance", &act, &has_act)) < 0 ||
        (rc = ns_dec_bool(&c->dec, m, "engine", "spotToSpotConsolidation", &s2s, &has_s2s)) < 0)
        return rc;
    e->act_on_rebalance = has_act ? (act ? 1 : -1) : 0;
    e->spot_to_spot = has_s2s ? (s2s ? 1 : -1) : 0;
    char *policy = NULL;
    ns_sched_min_values_policy p = NS_SCHED_MIN_VALUES_STRICT;
    if ((rc = ns_dec_string(&c->dec, m, "engine", "minValuesPolicy", &policy)) < 0 || !policy)
        return rc;
    if (ns_sched_min_values_policy_parse(policy, &p) < 0) {
        ns_error_clear();
        rc = ns_dec_fail(&c->dec, ns_ymap_get(m, "minValuesPolicy"), "engine.minValuesPolicy",
                         "\"%s\" is not Strict or BestEffort", policy);
    }
    e->min_values_policy = (int)p;
    free(policy);
    return rc;
}

/* Karpenter's feature gates a simulation honours, by Karpenter's names. */
static int decode_gates(tl_ctx *c, const ns_ynode *root, ns_tl_engine_settings *e)
{
    int rc;
    const ns_ynode *m = ns_dec_child(&c->dec, root, "", "featureGates", NS_Y_MAP, &rc);
    if (!m)
        return rc;
    static const char *const gates[] = {"NodeRepair", "SpotToSpotConsolidation", "StaticCapacity", "CapacityBuffer",
                                        NULL};
    if ((rc = ns_dec_fields(&c->dec, m, "featureGates", gates)) < 0)
        return rc;
    bool repair = false, has_repair = false, s2s = false, has_s2s = false, fixed = false, has_fixed = false;
    bool buffer = false, has_buffer = false;
    if ((rc = ns_dec_bool(&c->dec, m, "featureGates", "NodeRepair", &repair, &has_repair)) < 0 ||
        (rc = ns_dec_bool(&c->dec, m, "featureGates", "SpotToSpotConsolidation", &s2s, &has_s2s)) < 0 ||
        (rc = ns_dec_bool(&c->dec, m, "featureGates", "StaticCapacity", &fixed, &has_fixed)) < 0 ||
        (rc = ns_dec_bool(&c->dec, m, "featureGates", "CapacityBuffer", &buffer, &has_buffer)) < 0)
        return rc;
    if (has_s2s && e->spot_to_spot)
        return ns_dec_fail(&c->dec, ns_ymap_get(m, "SpotToSpotConsolidation"), "featureGates.SpotToSpotConsolidation",
                           "is also set as engine.spotToSpotConsolidation; give it once");
    if (has_s2s)
        e->spot_to_spot = s2s ? 1 : -1;
    e->node_repair = has_repair ? (repair ? 1 : -1) : 0;
    e->static_capacity = has_fixed ? (fixed ? 1 : -1) : 0;
    e->capacity_buffer = has_buffer ? (buffer ? 1 : -1) : 0;
    return 0;
}

static int decode_timeline(tl_ctx *c, const ns_ynode *root, ns_timeline *t)
{
    snprintf(c->dec.object, sizeof(c->dec.object), "timeline");
    int rc;
    if (ns_ynode_is_null(root))
        return ns_dec_fail(&c->dec, root, NULL, "the timeline is empty (it needs a list of steps)");
    char *start = NULL;
    if ((rc = ns_dec_fields(&c->dec, root, "", top_fields)) < 0 ||
        (rc = ns_dec_string(&c->dec, root, "", "description", &t->description)) < 0 ||
        (rc = ns_dec_string(&c->dec, root, "", "start", &start)) < 0 || (rc = decode_engine(c, root, &t->engine)) < 0 ||
        (rc = decode_gates(c, root, &t->engine)) < 0) {
        free(start);
        return rc;
    }
    t->start_ms = NS_TIMELINE_DEFAULT_START_MS;
    if (start && ns_clock_parse_rfc3339(start, &t->start_ms) < 0)
        rc = ns_dec_fail(&c->dec, ns_ymap_get(root, "start"), "start",
                         "\"%s\" is not an RFC 3339 time such as 2026-01-05T09:00:00Z", start);
    free(start);
    if (rc < 0)
        return rc;
    const ns_ynode *steps = ns_dec_child(&c->dec, root, "", "steps", NS_Y_SEQ, &rc);
    if (rc < 0)
        return rc;
    if (!steps || steps->n == 0)
        return ns_dec_fail(&c->dec, root, NULL, "missing required field \"steps\" (a non-empty list)");
    if (!(t->steps = calloc(steps->n, sizeof(*t->steps))))
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory for %zu timeline steps", steps->n);
    int64_t prev_end = 0;
    for (size_t i = 0; i < steps->n; i++) {
        t->n_steps = i + 1;
        if ((rc = decode_step(c, steps->items[i], i, prev_end, &t->steps[i])) < 0)
            return rc;
        prev_end = t->steps[i].end_ms;
    }
    t->end_ms = prev_end;
    return 0;
}

static int load_text(const char *name, const char *text, size_t len, const char *dir,
                     const struct ns_nodeclass_kinds *kinds, ns_timeline **out)
{
    *out = NULL;
    ns_timeline *t = calloc(1, sizeof(*t));
    ns_yreader *r = NULL;
    ns_ydoc *doc = NULL, *extra = NULL;
    if (!t || !(t->path = ns_strdup(name))) {
        ns_timeline_free(t);
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory loading timeline %s", name);
    }
    t->engine = (ns_tl_engine_settings){-1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, -1, 0, -1, 0};
    tl_ctx c = {.dec = {.file = t->path}, .text = text, .len = len, .dir = dir, .kinds = kinds};
    int rc = ns_yreader_open_string(name, text, len, &r);
    if (rc == 0 && (rc = ns_yreader_next(r, &doc)) == 0 && !doc)
        rc = NS_FAIL(NS_ERR_INVALID_CONFIG, "%s:1: timeline: the file is empty (it needs a list of steps)", name);
    if (rc == 0 && (rc = ns_yreader_next(r, &extra)) == 0 && extra)
        rc = NS_FAIL(NS_ERR_INVALID_CONFIG, "%s:%d: timeline: a timeline is one YAML document; this is a second one",
                     name, ns_ydoc_root(extra)->line);
    if (rc == 0)
        rc = decode_timeline(&c, ns_ydoc_root(doc), t);
    ns_ydoc_free(extra);
    ns_ydoc_free(doc);
    ns_yreader_close(r);
    if (rc < 0) {
        ns_timeline_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

int ns_timeline_load_string(const char *name, const char *text, size_t len, const struct ns_nodeclass_kinds *kinds,
                            ns_timeline **out)
{
    return load_text(name, text, len, "", kinds, out);
}

int ns_timeline_load_file(const char *path, const struct ns_nodeclass_kinds *kinds, ns_timeline **out)
{
    *out = NULL;
    char *text = NULL, *dir = NULL;
    size_t len = 0;
    int rc = ns_read_file(path, "timeline", &text, &len);
    if (rc < 0)
        return rc;
    const char *slash = strrchr(path, '/');
    if (!(dir = ns_strdup(path)))
        rc = NS_ERR_INTERNAL;
    else
        dir[slash ? (size_t)(slash - path) + 1 : 0] = '\0';
    if (rc == 0)
        rc = load_text(path, text, len, dir, kinds, out);
    free(dir);
    free(text);
    return rc;
}

static void ref_text(const ns_tl_ref *r, char *buf, size_t len)
{
    if (r->namespace_)
        snprintf(buf, len, "%s %s/%s", r->kind, r->namespace_, r->name ? r->name : "*");
    else
        snprintf(buf, len, "%s %s", r->kind, r->name ? r->name : "*");
}

void ns_tl_step_describe(const ns_tl_step *s, char *buf, size_t len)
{
    char ref[600], d[32];
    ref_text(&s->target, ref, sizeof(ref));
    switch (s->action) {
    case NS_TL_SCALE:
        snprintf(buf, len, "scale %s to %" PRId32 " replicas", ref, s->replicas);
        return;
    case NS_TL_ADD:
        snprintf(buf, len, "add the objects of %s", s->manifest_source);
        return;
    case NS_TL_DELETE:
        if (s->target.name)
            snprintf(buf, len, "delete %s%s%s", ref, s->grace_ms ? " with a grace period of " : "",
                     s->grace_ms ? ns_duration_format(s->grace_ms, d, sizeof(d)) : "");
        else
            snprintf(buf, len, "delete every %s%s%s matching a selector%s%s", s->target.kind,
                     s->target.namespace_ ? " in namespace " : "", s->target.namespace_ ? s->target.namespace_ : "",
                     s->grace_ms ? " with a grace period of " : "",
                     s->grace_ms ? ns_duration_format(s->grace_ms, d, sizeof(d)) : "");
        return;
    case NS_TL_PATCH:
        if (s->target.name)
            snprintf(buf, len, "patch %s", ref);
        else if (s->nodepool)
            snprintf(buf, len, "patch %s %s(s) of NodePool %s", s->count > 0 ? "the first" : "every", s->target.kind,
                     s->nodepool);
        else
            snprintf(buf, len, "patch every Pod in namespace %s matching a selector", s->target.namespace_);
        return;
    case NS_TL_INTERRUPT:
        if (s->node)
            snprintf(buf, len, "%s for node %s", ns_tl_event_name(s->event), s->node);
        else if (s->count > 0)
            snprintf(buf, len, "%s for %" PRId32 " node(s) of NodePool %s", ns_tl_event_name(s->event), s->count,
                     s->nodepool);
        else
            snprintf(buf, len, "%s for every node of NodePool %s", ns_tl_event_name(s->event), s->nodepool);
        return;
    case NS_TL_LAUNCH_FAILURE:
        if (s->clear)
            snprintf(buf, len, "clear injected launch failures");
        else
            snprintf(buf, len, "insufficient capacity for %s in %s, %s", s->instance_type ? s->instance_type : "any type",
                     s->zone ? s->zone : "any zone", s->capacity_type ? s->capacity_type : "any capacity type");
        return;
    case NS_TL_LAUNCH_ERROR:
        snprintf(buf, len, "the next %" PRId32 " launch(es) fail: %s", s->count, tl_launch_error_name(s->launch_error));
        return;
    case NS_TL_LAUNCH_TIMEOUT:
        snprintf(buf, len, "the next %" PRId32 " launch(es) hang until the provider call's deadline", s->count);
        return;
    case NS_TL_ADVANCE:
        snprintf(buf, len, "advance the clock to %s", ns_duration_format(s->end_ms, d, sizeof(d)));
        return;
    case NS_TL_POD_STATUS: {
        char at[32] = "";
        if (s->start_time_ms)
            ns_clock_format_rfc3339(s->start_time_ms, at, sizeof(at));
        if (s->target.name)
            snprintf(buf, len, "set the status of %s:%s%s%s%s", ref, s->phase ? " phase " : "",
                     s->phase ? s->phase : "", at[0] ? " started at " : "", at);
        else
            snprintf(buf, len, "set the status of every Pod in namespace %s matching a selector:%s%s%s%s",
                     s->target.namespace_, s->phase ? " phase " : "", s->phase ? s->phase : "",
                     at[0] ? " started at " : "", at);
        return;
    }
    case NS_TL_NODE_CONDITION:
        if (s->node)
            snprintf(buf, len, "set condition %s=%s on node %s", s->cond_type, s->cond_status, s->node);
        else if (s->count > 0)
            snprintf(buf, len, "set condition %s=%s on %" PRId32 " node(s) of NodePool %s", s->cond_type,
                     s->cond_status, s->count, s->nodepool);
        else
            snprintf(buf, len, "set condition %s=%s on every node of NodePool %s", s->cond_type, s->cond_status,
                     s->nodepool);
        return;
    }
    snprintf(buf, len, "unknown action");
}
