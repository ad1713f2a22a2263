/*
 * The NodeClaim lifecycle controller (Karpenter's nodeclaim/lifecycle): launch (cheapest option first, without
 * offerings known to lack capacity, falling back on insufficient capacity, backing off when throttled), then
 * Registered when the Node appears, Initialized when it is ready with its startup taints gone and its requested
 * extended resources present; a claim not registered within the registration TTL is deleted.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "engine/engine_internal.h"
#include "engine/launch_request.h"
#include "errors/ns_error.h"
#include "log/ns_log.h"
#include "model/model_util.h"
#include "model/resources.h"
#include "plugin/plugin_resources.h"

static const ns_nodeclass_def *claim_class(const ns_engine *e, const ns_nodeclaim *claim, const ns_itype_set **set)
{
    *set = NULL;
    for (size_t s = 0; s < e->types.n; s++) {
        const ns_nodeclass_def *def = e->types.owner[s];
        if (claim->nodeclass_ref.kind && strcmp(def->kind, claim->nodeclass_ref.kind) == 0 &&
            claim->nodeclass_ref.name && strcmp(def->meta.name, claim->nodeclass_ref.name) == 0) {
            *set = e->types.errors[s] ? NULL : &e->types.sets[s];
            return def;
        }
    }
    return ns_cluster_nodeclass_for(e->cluster, &claim->nodeclass_ref);
}

static int launched(ns_engine *e, ns_nodeclaim *claim, const ns_launch_result *res, const ns_launch_choice *choices,
                    size_t n)
{
    double price = -1;
    const ns_itype *type = NULL;
    for (size_t i = 0; i < n; i++)
        if (strcmp(choices[i].opt.instance_type, res->instance_type) == 0 &&
            strcmp(choices[i].opt.zone, res->zone) == 0 &&
            strcmp(choices[i].opt.capacity_type, res->capacity_type) == 0) {
            price = choices[i].opt.price_per_hour;
            type = choices[i].type;
        }
    char num[32], alloc[256], detail[512];
    snprintf(num, sizeof(num), "%.6f", price < 0 ? 0.0 : price);
    free(claim->provider_id);
    free(claim->image_id);
    claim->provider_id = ns_strdup(res->provider_id);
    claim->image_id = ns_strdup(res->image_id);
    int rc = ns_res_from_abi(&res->allocatable, &claim->allocatable, "allocatable");
    if (rc < 0)
        return ns_error_prefix("launch of nodeclaim %s: ", claim->meta.name);
    if ((rc = ns_res_copy(&claim->capacity, type ? &type->capacity : &claim->allocatable)) < 0)
        return rc;
    ns_labels *l = &claim->meta.labels;
    if (!claim->provider_id || !claim->image_id || ns_labels_set(l, NS_LABEL_INSTANCE_TYPE, res->instance_type) < 0 ||
        ns_labels_set(l, NS_LABEL_ZONE, res->zone) < 0 || ns_labels_set(l, NS_LABEL_CAPACITY_TYPE, res->capacity_type) < 0 ||
        ns_labels_set(&claim->meta.annotations, NS_ANNOTATION_PRICE, num) < 0 ||
        ns_conditions_set(&claim->conditions, NS_COND_LAUNCHED, "True", "Launched", NULL, ns_clock_now_ms()) < 0)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory recording the launch of nodeclaim %s", claim->meta.name);
    /* Karpenter writes the chosen instance type's labels (arch, os, instance family, ...) onto the claim at launch:
     * they are single-valued once the type is known, and drift detection compares the NodePool's requirements with
     * them. Labels the claim already carries (from the pool template) win. */
    for (size_t i = 0; type && i < type->n_labels; i++)
        if (!ns_labels_get(l, type->labels[i].key) && ns_labels_set(l, type->labels[i].key, type->labels[i].value) < 0)
            return NS_FAIL(NS_ERR_INTERNAL, "out of memory labelling nodeclaim %s", claim->meta.name);
    /* and the launched offering's zone labels (topology.k8s.aws/zone-id, ...), like topology.kubernetes.io/zone */
    size_t n_zone_labels;
    const ns_label *zone_labels = ns_itype_zone_labels(type, res->zone, &n_zone_labels);
    for (size_t i = 0; i < n_zone_labels; i++)
        if (ns_labels_set(l, zone_labels[i].key, zone_labels[i].value) < 0)
            return NS_FAIL(NS_ERR_INTERNAL, "out of memory labelling nodeclaim %s", claim->meta.name);
    rc = e->writes.ops->update_nodeclaim(e->writes.ctx, claim);
    if (rc < 0)
        return rc;
    snprintf(detail, sizeof(detail), "%s/%s/%s $%.4f/h provider-id %s allocatable %s", res->instance_type, res->zone,
             res->capacity_type, price < 0 ? 0.0 : price, res->provider_id,
             ns_res_format(&claim->allocatable, alloc, sizeof(alloc)));
    return ns_engine_record(e, NS_DECISION_LAUNCHED_NODECLAIM, NULL, NULL, NULL, claim->meta.name, NULL, detail);
}

/* Records a launch failure on the claim (Launched=False) and in the log, once per distinct message. */
static int launch_failed(ns_engine *e, ns_nodeclaim *claim, const char *reason, const char *message)
{
    const ns_condition *cur = ns_conditions_get(&claim->conditions, NS_COND_LAUNCHED);
    if (cur && strcmp(cur->status, "False") == 0 && cur->message && strcmp(cur->message, message) == 0)
        return NS_OK;
    if (ns_conditions_set(&claim->conditions, NS_COND_LAUNCHED, "False", reason, message, ns_clock_now_ms()) < 0)
        return NS_ERR_INTERNAL;
    int rc = e->writes.ops->update_nodeclaim(e->writes.ctx, claim);
    return rc < 0 ? rc
                  : ns_engine_record(e, NS_DECISION_LAUNCH_FAILED, NULL, message, NULL, claim->meta.name, NULL,
                                     reason);
}

static int no_options_left(ns_engine *e, ns_nodeclaim *claim, const char *why)
{
    char msg[1200];
    snprintf(msg, sizeof(msg), "no launch option left: %s", why);
    int rc = ns_engine_record(e, NS_DECISION_LAUNCH_FAILED, NULL, msg, NULL, claim->meta.name, NULL,
                              "InsufficientCapacity");
    /* Karpenter deletes the claim; its pods are re-planned next round without the unavailable offerings. */
    return rc < 0 ? rc : ns_engine_delete_claim(e, claim, "launch", "InsufficientCapacity");
}

static int launch_attempt(ns_engine *e, ns_nodeclaim *claim, const ns_nodeclass_def *def,
                          const ns_launch_choice *choices, size_t n, bool *retry)
{
    *retry = false;
    ns_launch_option *opts = calloc(n, sizeof(*opts));
    if (!opts)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory launching nodeclaim %s", claim->meta.name);
    for (size_t i = 0; i < n; i++)
        opts[i] = choices[i].opt;
    ns_launch_request req;
    ns_launch_request_for(claim, e->cluster_name, &def->abi, opts, n, &req);
    ns_launch_result res;
    memset(&res, 0, sizeof(res));
    res.struct_size = sizeof(res);
    int code = ns_plugin_launch(e->plugin, &req, &res);
    ns_engine_busy(e); /* a launch changes the provider whatever it answered, and a failed one is retried */
    free(opts);
    ns_error_record err = *ns_error_last();
    if (code == NS_OK) {
        /* Offerings the provider found without capacity on its way to the one it launched. */
        int rc = NS_OK;
        for (size_t i = 0; rc == NS_OK && i < err.n_unavailable; i++)
            rc = ns_engine_mark_unavailable(e, err.unavailable[i].instance_type, err.unavailable[i].zone,
                                            err.unavailable[i].capacity_type, "no capacity at launch");
        return rc == NS_OK ? launched(e, claim, &res, choices, n) : rc;
    }
    if (code == NS_ERR_THROTTLED) {
        int64_t wait = err.retry_after_ms > 0 ? err.retry_after_ms : 1000;
        e->launch_backoff_until_ms = ns_clock_now_ms() + wait;
        return launch_failed(e, claim, "Throttled", err.message);
    }
    if (code != NS_ERR_INSUFFICIENT_CAPACITY)
        return launch_failed(e, claim, ns_err_name(code), err.message);
    int rc = NS_OK;
    /* No offering named: the provider says none of the options had capacity. */
    if (err.n_unavailable == 0)
        for (size_t i = 0; rc == NS_OK && i < n; i++)
            rc = ns_engine_mark_unavailable(e, choices[i].opt.instance_type, choices[i].opt.zone,
                                            choices[i].opt.capacity_type, err.message);
    for (size_t i = 0; rc == NS_OK && i < err.n_unavailable; i++)
        rc = ns_engine_mark_unavailable(e, err.unavailable[i].instance_type, err.unavailable[i].zone,
                                        err.unavailable[i].capacity_type, err.message);
    if (rc == NS_OK)
        rc = ns_engine_record(e, NS_DECISION_LAUNCH_FAILED, NULL, err.message, NULL, claim->meta.name, NULL,
                              "InsufficientCapacity");
    *retry = rc == NS_OK;
    return rc;
}

int ns_engine_launch_claim(ns_engine *e, ns_nodeclaim *claim)
{
    if (ns_claim_launched(claim) || ns_claim_deleting(claim) || ns_clock_now_ms() < e->launch_backoff_until_ms)
        return NS_OK;
    int rc = ns_engine_refresh_types(e);
    if (rc < 0)
        return rc;
    const ns_itype_set *set;
    const ns_nodeclass_def *def = claim_class(e, claim, &set);
    if (!def || !set) {
        char msg[512];
        snprintf(msg, sizeof(msg), "node class %s %s has no instance types to launch", claim->nodeclass_ref.kind,
                 claim->nodeclass_ref.name);
        return launch_failed(e, claim, "NodeClassNotReady", msg);
    }
    /* With commitments, the options are priced with what the running nodes leave of them, so a covered offering
     * comes first while its commitment has room. */
    ns_itype_set priced = {0};
    if (ns_engine_has_commitments(e) && (rc = ns_engine_commit_launch_set(e, set, &priced)) < 0)
        return rc;
    if (priced.items)
        set = &priced;
    /* Each insufficient-capacity answer removes at least one option, so this ends. */
    for (bool retry = true; retry && rc == NS_OK;) {
        ns_launch_choice *choices = NULL;
        size_t n = 0;
        if ((rc = ns_launch_options(set, claim, &e->unavailable, ns_clock_now_ms(), &choices, &n)) < 0)
            break;
        if (n == 0)
            rc = no_options_left(e, claim, "every offering it allows is unavailable");
        else
            rc = launch_attempt(e, claim, def, choices, n, &retry);
        free(choices);
        if (n == 0)
            break;
    }
    ns_commit_priced_set_free(&priced);
    return rc;
}

/* ---- Registration and initialization */

/* The writes of a claim's registration (through w, from any thread: they touch the claim and its Node only). */
static int register_claim(const ns_cluster_writes *w, ns_nodeclaim *claim, ns_node *node)
{
    int rc = w->ops->remove_node_taint(w->ctx, node, NS_TAINT_UNREGISTERED_KEY, NS_EFFECT_NO_EXECUTE);
    /* Karpenter syncs the claim's labels and annotations (the NodePool template's among them, so a template's
     * karpenter.sh/do-not-disrupt reaches the Node) onto the Node at registration. */
    for (size_t i = 0; rc == 0 && i < claim->meta.labels.n; i++)
        if (!ns_labels_get(&node->meta.labels, claim->meta.labels.items[i].key))
            rc = w->ops->set_node_label(w->ctx, node, claim->meta.labels.items[i].key,
                                        claim->meta.labels.items[i].value);
    for (size_t i = 0; rc == 0 && i < claim->meta.annotations.n; i++) {
        const ns_label *a = &claim->meta.annotations.items[i];
        const char *have = ns_labels_get(&node->meta.annotations, a->key);
        if (!have || strcmp(have, a->value) != 0)
            rc = w->ops->set_node_annotation(w->ctx, node, a->key, a->value);
    }
    if (rc == 0)
        rc = w->ops->set_node_label(w->ctx, node, NS_LABEL_REGISTERED, "true");
    if (rc < 0)
        return rc;
    free(claim->node_name);
    if (!(claim->node_name = ns_strdup(node->meta.name)) ||
        ns_conditions_set(&claim->conditions, NS_COND_REGISTERED, "True", "Registered", NULL, ns_clock_now_ms()) < 0)
        return NS_ERR_INTERNAL;
    return w->ops->update_nodeclaim(w->ctx, claim);
}

/* Karpenter's initialization check: Ready, no ephemeral or startup taint left, requested extended resources present. */
static bool node_initialized(const ns_nodeclaim *claim, const ns_node *node, char *why, size_t len)
{
    if (!node->ready) {
        snprintf(why, len, "node is not ready");
        return false;
    }
    for (size_t i = 0; i < node->n_taints; i++) {
        const ns_taint *t = &node->taints[i];
        bool startup = false;
        for (size_t s = 0; s < claim->n_startup_taints && !startup; s++)
            startup = ns_taint_matches(&claim->startup_taints[s], t);
        if (startup || ns_taint_is_known_ephemeral(t)) {
            snprintf(why, len, "taint %s is still on the node", t->key);
            return false;
        }
    }
    for (uint32_t i = 0; i < claim->requests.n_ext; i++) {
        const ns_res_ext *x = &claim->requests.ext[i];
        if (x->value > 0 && ns_res_get(&node->allocatable, x->name) <= 0) {
            snprintf(why, len, "extended resource %s is not registered", x->name);
            return false;
        }
    }
    return true;
}

/* The writes of a claim's initialization (as register_claim). */
static int initialize_claim(const ns_cluster_writes *w, ns_nodeclaim *claim, ns_node *node)
{
    int rc = w->ops->set_node_label(w->ctx, node, NS_LABEL_INITIALIZED, "true");
    if (rc < 0)
        return rc;
    if (ns_conditions_set(&claim->conditions, NS_COND_INITIALIZED, "True", "Initialized", NULL, ns_clock_now_ms()) <
        0)
        return NS_ERR_INTERNAL;
    return w->ops->update_nodeclaim(w->ctx, claim);
}

/* Registration and initialization of the step's claims whose Node is there: each a few round trips to the API server
 * in the controller, so they go out at once through the store's concurrently op (one job per claim and its Node),
 * and the decisions are recorded afterwards, in claim order, from this thread. */
typedef struct claim_job {
    char *name;                 /* the claim's: the loop before may delete other claims, so it is looked up again */
    ns_nodeclaim *claim;
    ns_node *node;
    bool registered, initialized; /* what the job did */
    char why[256];                /* why not initialized yet */
} claim_job;

typedef struct claim_jobs {
    const ns_cluster_writes *w;
    claim_job *items;
    size_t n, cap;
    int64_t now;
} claim_jobs;

static int claim_job_run(void *arg, size_t i)
{
    claim_jobs *k = arg;
    claim_job *j = &k->items[i];
    int rc = NS_OK;
    if (!ns_claim_registered(j->claim)) {
        if ((rc = register_claim(k->w, j->claim, j->node)) < 0)
            return rc;
        j->registered = true;
    }
    if (ns_claim_initialized(j->claim) || !node_initialized(j->claim, j->node, j->why, sizeof(j->why)))
        return NS_OK;
    if ((rc = initialize_claim(k->w, j->claim, j->node)) == NS_OK)
        j->initialized = true;
    return rc;
}

static int record_claim_job(ns_engine *e, const claim_job *j)
{
    int rc = NS_OK;
    if (j->registered)
        rc = ns_engine_record(e, NS_DECISION_REGISTERED_NODECLAIM, NULL, NULL, j->node->meta.name,
                              j->claim->meta.name, NULL, j->claim->provider_id);
    if (rc == NS_OK && j->initialized) {
        char alloc[256];
        rc = ns_engine_record(e, NS_DECISION_INITIALIZED_NODECLAIM, NULL, NULL, j->node->meta.name,
                              j->claim->meta.name, NULL, ns_res_format(&j->node->allocatable, alloc, sizeof(alloc)));
    } else if (rc == NS_OK && j->why[0])
        ns_log(NS_LOG_DEBUG, "nodeclaim.lifecycle", "waiting on node initialization", "NodeClaim", j->claim->meta.name,
               "reason", j->why, NULL);
    return rc;
}

static int registration_timeout(ns_engine *e, ns_nodeclaim *claim)
{
    char why[128];
    snprintf(why, sizeof(why), "no node registered within %" PRId64 "s", e->cfg.registration_ttl_ms / 1000);
    int rc = ns_engine_record(e, NS_DECISION_REGISTRATION_TIMEOUT, "liveness", why, NULL, claim->meta.name, NULL,
                              claim->provider_id);
    return rc < 0 ? rc : ns_engine_delete_claim(e, claim, "liveness", "RegistrationTimeout");
}

static int one_claim(ns_engine *e, ns_nodeclaim *claim, claim_jobs *jobs)
{
    int64_t now = jobs->now;
    if (ns_claim_deleting(claim))
        return NS_OK;
    /* A claim loaded from a manifest has no creation time: the registration TTL counts from when it is first seen.
     * Nor, unless its author wrote one, the termination finalizer: Karpenter adds it to every claim it manages before
     * launching, so that deleting the claim drains and removes its Node and terminates its instance instead of
     * leaving both behind. */
    if (!claim->meta.creation_ms || !ns_meta_has_finalizer(&claim->meta, NS_FINALIZER_TERMINATION)) {
        if (!claim->meta.creation_ms)
            claim->meta.creation_ms = now;
        if (ns_meta_add_finalizer(&claim->meta, NS_FINALIZER_TERMINATION) < 0)
            return ns_error_prefix("nodeclaim %s: ", claim->meta.name);
        int rc = e->writes.ops->update_nodeclaim(e->writes.ctx, claim);
        if (rc < 0)
            return rc;
    }
    if (!ns_claim_registered(claim) && now - claim->meta.creation_ms >= e->cfg.registration_ttl_ms)
        return registration_timeout(e, claim);
    if (!ns_claim_launched(claim))
        return ns_engine_launch_claim(e, claim);
    if (!ns_engine_node_of_claim(e, claim) || (ns_claim_registered(claim) && ns_claim_initialized(claim)))
        return NS_OK;
    if (ns_grow((void **)&jobs->items, &jobs->cap, jobs->n + 1, sizeof(*jobs->items)) < 0)
        return NS_ERR_INTERNAL;
    claim_job *j = &jobs->items[jobs->n];
    memset(j, 0, sizeof(*j));
    if (!(j->name = ns_strdup(claim->meta.name)))
        return NS_ERR_INTERNAL;
    jobs->n++;
    return NS_OK;
}

static int lifecycle_claim(ns_engine *e, ns_nodeclaim *claim, void *jobs)
{
    return one_claim(e, claim, jobs);
}

int ns_ctl_lifecycle(ns_engine *e)
{
    claim_jobs k = {.w = &e->writes, .now = ns_clock_now_ms()};
    int rc = ns_engine_each_claim(e, lifecycle_claim, &k);
    /* drop the claims the loop deleted since; the others' claim and Node stay put while the jobs run */
    size_t n = 0;
    for (size_t i = 0; i < k.n; i++) {
        claim_job *j = &k.items[i];
        j->claim = ns_cluster_find_nodeclaim(e->cluster, j->name);
        j->node = j->claim ? ns_engine_node_of_claim(e, j->claim) : NULL;
        if (j->node && !ns_claim_deleting(j->claim))
            k.items[n++] = *j;
        else
            free(j->name);
    }
    k.n = n;
    if (rc == NS_OK && n)
        rc = ns_cluster_writes_each(k.w, n, claim_job_run, &k);
    for (size_t i = 0; i < n; i++) {
        int r = record_claim_job(e, &k.items[i]);
        if (rc == NS_OK)
            rc = r;
    }
    for (size_t i = 0; i < n; i++)
        free(k.items[i].name);
    free(k.items);
    return rc;
}
