/* The simulated kubelet's pods: Running once bound to a simulated Node, gone once deleted. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "controller/sim_kubelet_pods.h"
#include "engine/engine.h"
#include "engine/write_jobs.h"
#include "errors/ns_error.h"
#include "kube/kube_writes.h"
#include "model/model_util.h"

/* A Node of a NodeClaim (the simulated kubelet registered it), Ready. */
static bool simulated_node(const ns_cluster *c, const char *name)
{
    const ns_node *n = ns_cluster_find_node(c, name);
    if (!n || !n->ready)
        return false;
    for (size_t i = 0; i < c->n_nodeclaims; i++)
        if (c->nodeclaims[i]->node_name && strcmp(c->nodeclaims[i]->node_name, name) == 0)
            return true;
    return ns_labels_get(&n->meta.labels, NS_LABEL_NODEPOOL) != NULL;
}

static cJSON *running_status(int64_t now_ms)
{
    static const char *const types[] = {"PodReadyToStartContainers", "Initialized", "ContainersReady", "Ready",
                                        "PodScheduled"};
    char now[64];
    ns_clock_format_rfc3339(now_ms, now, sizeof(now));
    cJSON *p = cJSON_CreateObject(), *st = cJSON_AddObjectToObject(p, "status");
    cJSON *conds = st ? cJSON_AddArrayToObject(st, "conditions") : NULL;
    bool ok = conds && cJSON_AddStringToObject(st, "phase", "Running") && cJSON_AddStringToObject(st, "startTime", now);
    for (size_t i = 0; ok && i < sizeof(types) / sizeof(types[0]); i++) {
        cJSON *k = cJSON_CreateObject();
        ok = k && cJSON_AddItemToArray(conds, k) && cJSON_AddStringToObject(k, "type", types[i]) &&
             cJSON_AddStringToObject(k, "status", "True") && cJSON_AddStringToObject(k, "lastTransitionTime", now);
    }
    if (!ok) {
        cJSON_Delete(p);
        NS_FAIL(NS_ERR_INTERNAL, "out of memory building a pod status");
        return NULL;
    }
    return p;
}

static int confirm_deleted(ns_kube_client *client, ns_mirror *mirror, ns_cluster *c, ns_pod *pod, const char *ns)
{
    char uid[128];
    ns_kube_delete_opts o = {.grace_period_s = 0};
    if (ns_mirror_uid(mirror, NS_MIRROR_POD, ns, pod->meta.name, uid, sizeof(uid)) == 0)
        o.uid = uid;
    ns_error_clear();
    long status = 0;
    int rc = ns_kube_delete(client, &NS_KUBE_PODS, ns, pod->meta.name, &o, &status);
    if (rc < 0 && status != 404 && status != 409)
        return rc;
    ns_error_clear();
    ns_mirror_gone(mirror, NS_MIRROR_POD, ns, pod->meta.name);
    return ns_cluster_remove_pod(c, pod);
}

/* The Running writes of one pass, made by a few threads at once (engine/write_jobs.h): each write waits a round trip
 * to the API server, so one at a time 20,000 pods took minutes where a kubelet per node would write in parallel. */
typedef struct running_write {
    ns_pod *pod;
    const char *ns;
    bool tried; /* false: the pass ran out of time before it */
    int rc;
    char *rv; /* the resourceVersion the server answered */
} running_write;

typedef struct running_batch {
    ns_kube_client *client;
    const cJSON *status;
    running_write *w;
    size_t n;
} running_batch;

static int write_running(void *arg, size_t i)
{
    running_batch *b = arg;
    running_write *w = &b->w[i];
    cJSON *out = NULL;
    w->tried = true;
    w->rc = ns_kube_patch(b->client, &NS_KUBE_PODS, w->ns, w->pod->meta.name, "status", NS_KUBE_STRATEGIC_PATCH,
                          b->status, NULL, NULL, &out);
    if (w->rc == 0) {
        const cJSON *rv = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(out, "metadata"),
                                                           "resourceVersion");
        w->rv = cJSON_IsString(rv) ? ns_strdup(rv->valuestring) : NULL;
    }
    cJSON_Delete(out);
    return w->rc;
}

/* Writes the batch's pods Running, starting none after the pass's time, then records what the server answered in the
 * mirror and the cluster (from this thread only). 0, or the first failed write's error. */
static int write_all_running(ns_mirror *mirror, running_batch *b, size_t *written)
{
    int rc = ns_write_jobs_run(b->n, NS_SIM_KUBELET_WRITERS, ns_clock_now_ms() + NS_SIM_KUBELET_PASS_MS,
                               write_running, b);
    for (size_t i = 0; i < b->n; i++) {
        running_write *w = &b->w[i];
        if (w->tried && w->rc == 0) {
            ns_mirror_floor(mirror, NS_MIRROR_POD, w->ns, w->pod->meta.name, w->rv);
            char *phase = ns_strdup("Running");
            if (phase) {
                free(w->pod->phase);
                w->pod->phase = phase;
            }
            (*written)++;
        }
        free(w->rv);
    }
    return rc;
}

int ns_sim_kubelet_pods(ns_kube_client *client, ns_mirror *mirror, ns_cluster *c, size_t *written)
{
    int first = 0;
    size_t n = 0;
    running_batch b = {.client = client};
    if (c->n_pods && !(b.w = calloc(c->n_pods, sizeof(*b.w))))
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory listing the pods to report Running");
    for (size_t i = c->n_pods; i-- > 0;) {
        ns_pod *pod = c->pods[i];
        if (!pod->node_name || !simulated_node(c, pod->node_name))
            continue;
        const char *ns = pod->meta.namespace_ ? pod->meta.namespace_ : "default";
        if (pod->meta.deletion_ms) {
            int rc = confirm_deleted(client, mirror, c, pod, ns);
            n += rc == 0;
            if (rc < 0 && first == 0)
                first = rc;
        } else if (!pod->phase || strcmp(pod->phase, "Pending") == 0) {
            b.w[b.n++] = (running_write){.pod = pod, .ns = ns};
        }
    }
    cJSON *status = NULL;
    if (b.n && !(status = running_status(ns_clock_now_ms()))) {
        free(b.w);
        return NS_ERR_INTERNAL;
    }
    if (b.n) {
        b.status = status;
        int rc = write_all_running(mirror, &b, &n);
        if (rc < 0 && first == 0)
            first = rc;
    }
    cJSON_Delete(status);
    free(b.w);
    if (written)
        *written = n;
    return first;
}
