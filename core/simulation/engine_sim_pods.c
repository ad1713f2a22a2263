/* A simulated pod's lifecycle as its kubelet reports it (simulation/engine_sim.h): its phase, its start time, and a
 * Terminating window between a graceful delete and the pod's end, which a registered controller closes. */
#include <stdlib.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "context/ns_ctx.h"
#include "engine/engine_internal.h"
#include "errors/ns_error.h"
#include "model/model_util.h"
#include "simulation/engine_sim.h"

#define TERMINATOR "pod-termination"

/* Pods deleted with a grace period, by namespace and name: the kubelet ends each at its deletionTimestamp. */
typedef struct pod_ref {
    char *ns, *name;
} pod_ref;

typedef struct terminating {
    pod_ref *v;
    size_t n, cap;
} terminating;

static void terminating_free(void *ctx)
{
    terminating *t = ctx;
    for (size_t i = 0; t && i < t->n; i++) {
        free(t->v[i].ns);
        free(t->v[i].name);
    }
    if (t)
        free(t->v);
    free(t);
}

static void terminating_drop(terminating *t, size_t i)
{
    free(t->v[i].ns);
    free(t->v[i].name);
    t->v[i] = t->v[--t->n];
}

/* The controller: a terminating pod whose deletionTimestamp has come is gone (its workload's controller brings it
 * back pending, as deleting it at once would). A pod gone before (evicted, its node deleted) or recreated meanwhile
 * is forgotten. */
static int terminate_due(ns_engine *e, void *ctx)
{
    terminating *t = ctx;
    int64_t now = ns_clock_now_ms();
    int rc = 0;
    for (size_t i = t->n; rc == 0 && i-- > 0;) {
        ns_pod *p = ns_cluster_find_pod(e->cluster, t->v[i].ns, t->v[i].name);
        if (p && p->meta.deletion_ms > now) {
            ns_engine_due(e, p->meta.deletion_ms);
            continue;
        }
        if (p && p->meta.deletion_ms)
            rc = e->writes.ops->delete_pod(e->writes.ctx, p, false);
        terminating_drop(t, i);
    }
    return rc;
}

/* The terminator's list, registering it on first use. */
static int terminator(ns_engine *e, terminating **out)
{
    for (size_t i = 0; i < e->n_controllers; i++)
        if (strcmp(e->controllers[i].name, TERMINATOR) == 0) {
            *out = e->controllers[i].ctx;
            return 0;
        }
    terminating *t = calloc(1, sizeof(*t));
    if (!t)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory for terminating pods");
    int rc = ns_engine_register_controller(e, TERMINATOR, terminate_due, t, terminating_free);
    if (rc < 0)
        terminating_free(t);
    *out = rc < 0 ? NULL : t;
    return rc;
}

static int delete_pod_after(ns_engine *e, const char *ns, const char *name, int64_t grace_ms)
{
    ns_pod *p = ns_cluster_find_pod(e->cluster, ns, name);
    if (!p)
        return NS_FAIL(NS_ERR_NOT_FOUND, "no Pod %s/%s", ns, name);
    /* A pod no kubelet runs has nothing to stop; a pod already terminating keeps its deadline. */
    if (grace_ms == 0 || !p->node_name)
        return e->writes.ops->delete_pod(e->writes.ctx, p, false);
    if (p->meta.deletion_ms)
        return 0;
    terminating *t = NULL;
    int rc = terminator(e, &t);
    if (rc < 0)
        return rc;
    pod_ref r = {ns_strdup(ns), ns_strdup(name)};
    if (!r.ns || !r.name || ns_grow((void **)&t->v, &t->cap, t->n + 1, sizeof(*t->v)) < 0) {
        free(r.ns);
        free(r.name);
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory deleting Pod %s/%s", ns, name);
    }
    t->v[t->n++] = r;
    /* As the API server sets it: the time by which the pod must be gone. */
    p->meta.deletion_ms = ns_clock_now_ms() + grace_ms;
    ns_engine_due(e, p->meta.deletion_ms);
    return 0;
}

static int bound_pod(ns_engine *e, const char *ns, const char *name, ns_pod **out)
{
    ns_pod *p = *out = ns_cluster_find_pod(e->cluster, ns, name);
    if (!p)
        return NS_FAIL(NS_ERR_NOT_FOUND, "no Pod %s/%s", ns, name);
    if (!p->node_name)
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "Pod %s/%s is pending: no kubelet runs it", ns, name);
    return 0;
}

static bool terminal(const ns_pod *p)
{
    return p->phase && (strcmp(p->phase, "Succeeded") == 0 || strcmp(p->phase, "Failed") == 0);
}

static int set_pod_phase(ns_engine *e, const char *ns, const char *name, const char *phase)
{
    ns_pod *p = NULL;
    int rc = bound_pod(e, ns, name, &p);
    if (rc < 0)
        return rc;
    if (terminal(p))
        return strcmp(p->phase, phase) == 0 ? 0 : NS_FAIL(NS_ERR_INVALID_ARGUMENT, "Pod %s/%s is %s already; a "
                                                          "terminal phase does not change", ns, name, p->phase);
    char *node = ns_strdup(p->node_name);
    rc = node ? ns_pod_set_binding(p, node, phase) : NS_ERR_INTERNAL;
    free(node);
    return rc < 0 ? NS_FAIL(NS_ERR_INTERNAL, "out of memory setting the phase of Pod %s/%s", ns, name) : 0;
}

static int set_pod_start(ns_engine *e, const char *ns, const char *name, int64_t start_ms)
{
    ns_pod *p = NULL;
    int rc = bound_pod(e, ns, name, &p);
    if (rc < 0)
        return rc;
    if (start_ms > ns_clock_now_ms()) {
        char at[32];
        ns_clock_format_rfc3339(start_ms, at, sizeof(at));
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "%s is after the step's time", at);
    }
    p->start_ms = start_ms;
    return 0;
}

/* Each runs in the engine's context, as every entry point of engine.h, and names the pod's field on failure. */

int ns_engine_delete_pod_after(ns_engine *e, const char *ns, const char *name, int64_t grace_ms)
{
    ns_ctx *previous = ns_ctx_enter(ns_plugin_ctx(ns_engine_plugin(e)));
    int rc = delete_pod_after(e, ns, name, grace_ms);
    ns_ctx_leave(previous);
    return rc;
}

int ns_engine_set_pod_phase(ns_engine *e, const char *ns, const char *name, const char *phase)
{
    ns_ctx *previous = ns_ctx_enter(ns_plugin_ctx(ns_engine_plugin(e)));
    int rc = set_pod_phase(e, ns, name, phase);
    if (rc < 0)
        ns_error_prefix("Pod %s/%s: status.phase: ", ns, name);
    ns_ctx_leave(previous);
    return rc;
}

int ns_engine_set_pod_start(ns_engine *e, const char *ns, const char *name, int64_t start_ms)
{
    ns_ctx *previous = ns_ctx_enter(ns_plugin_ctx(ns_engine_plugin(e)));
    int rc = set_pod_start(e, ns, name, start_ms);
    if (rc < 0)
        ns_error_prefix("Pod %s/%s: status.startTime: ", ns, name);
    ns_ctx_leave(previous);
    return rc;
}
