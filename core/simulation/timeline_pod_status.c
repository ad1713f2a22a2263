/* The `podStatus` action and `delete`'s gracePeriod for Pods (docs/timeline.md): a pod's lifecycle as its kubelet
 * reports it. Decoded from the timeline here and applied through the engine's simulation hooks. */
#include <stdlib.h>
#include <string.h>

#include "simulation/timeline_pod_status.h"
#include "clock/ns_clock.h"
#include "errors/ns_error.h"
#include "manifest/decoders.h"
#include "model/cluster.h"
#include "model/duration.h"
#include "model/model_util.h"
#include "simulation/engine_sim.h"

static const char *const pod_status_fields[] = {"namespace", "name", "selector", "phase", "startTime", NULL};

int tl_decode_pod_status(tl_ctx *c, const ns_ynode *v, const char *path, ns_tl_step *s)
{
    int rc;
    char *start = NULL, p[NS_PATH_MAX];
    if ((rc = ns_dec_fields(&c->dec, v, path, pod_status_fields)) < 0 ||
        (rc = ns_dec_string(&c->dec, v, path, "namespace", &s->target.namespace_)) < 0 ||
        (rc = ns_dec_string(&c->dec, v, path, "name", &s->target.name)) < 0 ||
        (rc = ns_decode_label_selector(&c->dec, v, path, "selector", &s->selector)) < 0 ||
        (rc = ns_dec_string(&c->dec, v, path, "phase", &s->phase)) < 0 ||
        (rc = ns_dec_string(&c->dec, v, path, "startTime", &start)) < 0)
        goto done;
    if (!(s->target.kind = ns_strdup("Pod")) ||
        (!s->target.namespace_ && !(s->target.namespace_ = ns_strdup("default")))) {
        rc = NS_ERR_INTERNAL;
        goto done;
    }
    if ((s->target.name != NULL) == s->selector.present) {
        rc = ns_dec_fail(&c->dec, v, path, "give exactly one of \"name\" or \"selector\"");
        goto done;
    }
    /* Running and Pending are what the simulated kubelet and scheduler set; a timeline ends a pod's run. */
    if (s->phase && strcmp(s->phase, "Succeeded") != 0 && strcmp(s->phase, "Failed") != 0) {
        ns_path_key(p, sizeof(p), path, "phase");
        rc = ns_dec_fail(&c->dec, ns_ymap_get(v, "phase"), p, "\"%s\" is not Succeeded or Failed (the engine sets "
                         "Pending and Running itself)", s->phase);
        goto done;
    }
    if (start && ns_clock_parse_rfc3339(start, &s->start_time_ms) < 0) {
        ns_error_clear();
        ns_path_key(p, sizeof(p), path, "startTime");
        rc = ns_dec_fail(&c->dec, ns_ymap_get(v, "startTime"), p, "\"%s\" is not an RFC 3339 time such as "
                         "2026-01-05T09:00:00Z", start);
        goto done;
    }
    if (!s->phase && !start)
        rc = ns_dec_fail(&c->dec, v, path, "has nothing to change (give phase and/or startTime)");
done:
    free(start);
    return rc;
}

static int pod_status_one(ns_engine *e, const ns_tl_step *s, const char *name)
{
    int rc = 0;
    if (s->start_time_ms)
        rc = ns_engine_set_pod_start(e, s->target.namespace_, name, s->start_time_ms);
    if (rc == 0 && s->phase)
        rc = ns_engine_set_pod_phase(e, s->target.namespace_, name, s->phase);
    return rc;
}

int tl_pod_names(const ns_cluster *c, const char *ns, const ns_label_selector *selector, char ***out, size_t *n)
{
    size_t cap = 0;
    *out = NULL;
    *n = 0;
    for (size_t i = 0; i < c->n_pods; i++) {
        const ns_pod *p = c->pods[i];
        if (strcmp(p->meta.namespace_ ? p->meta.namespace_ : "default", ns) != 0 ||
            !ns_label_selector_matches(selector, &p->meta.labels))
            continue;
        char *copy = ns_strdup(p->meta.name);
        if (!copy || ns_grow((void **)out, &cap, *n + 1, sizeof(char *)) < 0) {
            free(copy);
            ns_strv_free(*out, *n);
            *out = NULL;
            *n = 0;
            return NS_FAIL(NS_ERR_INTERNAL, "out of memory listing the pods of namespace %s", ns);
        }
        (*out)[(*n)++] = copy;
    }
    if (*n == 0)
        return NS_FAIL(NS_ERR_NOT_FOUND, "no Pod in namespace %s matches the selector", ns);
    return 0;
}

int tl_apply_pod_status(ns_engine *e, const ns_tl_step *s)
{
    if (s->target.name)
        return pod_status_one(e, s, s->target.name);
    char **names = NULL;
    size_t n = 0;
    int rc = tl_pod_names(ns_engine_cluster(e), s->target.namespace_, &s->selector, &names, &n);
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = pod_status_one(e, s, names[i]);
    ns_strv_free(names, n);
    return rc;
}
