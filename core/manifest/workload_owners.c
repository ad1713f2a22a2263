#include "manifest/workload_owners.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "log/ns_log.h"
#include "model/expansions.h"
#include "model/labels.h"
#include "model/model_util.h"

bool ns_owners_stand_for(const ns_cluster *c, const char *kind, const ns_meta *w)
{
    return ns_expansions_owned(c->expansions, kind, w->namespace_, w->name);
}

int ns_owners_record_expanded(ns_cluster *c, const char *kind, const ns_meta *w, const char *pod)
{
    return ns_expansions_add_pod(&c->expansions, kind, w->namespace_, w->name, pod);
}

/* Workload KIND ns/name stands through `by` (KIND2 name2): recorded, and the pods expanded from it removed. */
static int stands_through(ns_cluster *c, const char *kind, const char *ns, const char *name, const char *by_kind,
                          const char *by_name)
{
    bool first = !ns_expansions_owned(c->expansions, kind, ns, name);
    int rc = ns_expansions_mark_owned(&c->expansions, kind, ns, name);
    char **pods;
    size_t n;
    ns_expansions_take_pods(c->expansions, kind, ns, name, &pods, &n);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        ns_pod *pod = ns_cluster_find_pod(c, ns, pods[i]);
        if (pod)
            rc = ns_cluster_remove_pod(c, pod);
    }
    if (rc == 0 && first) {
        char count[24];
        snprintf(count, sizeof(count), "%zu", n);
        ns_log(NS_LOG_INFO, "manifest", "a workload counts through its own objects in the manifests, not expanded",
               "kind", kind, "namespace", ns ? ns : "", "name", name, "through", by_kind, "object", by_name,
               "expanded-pods-removed", count, NULL);
    }
    ns_strv_free(pods, n);
    return rc;
}

/* The Deployment whose ReplicaSet `rs` is, when the pod's pod-template-hash says so (the ReplicaSet is named
 * <deployment>-<hash>), into buf; NULL otherwise (a ReplicaSet of its own). */
static const char *deployment_of(const ns_meta *pod, const char *rs, char *buf, size_t len)
{
    const char *hash = ns_labels_get(&pod->labels, "pod-template-hash");
    size_t n = strlen(rs), h = hash ? strlen(hash) : 0;
    if (!h || n <= h + 1 || rs[n - h - 1] != '-' || strcmp(rs + n - h, hash) != 0 || n - h - 1 >= len)
        return NULL;
    memcpy(buf, rs, n - h - 1);
    buf[n - h - 1] = '\0';
    return buf;
}

int ns_owners_claim(ns_cluster *c, const char *kind, const ns_meta *obj)
{
    if (!obj->owner_kind || !obj->owner_name)
        return 0;
    int rc = stands_through(c, obj->owner_kind, obj->namespace_, obj->owner_name, kind, obj->name);
    char deployment[256];
    if (rc == 0 && strcmp(kind, "Pod") == 0 && strcmp(obj->owner_kind, "ReplicaSet") == 0 &&
        deployment_of(obj, obj->owner_name, deployment, sizeof(deployment)))
        rc = stands_through(c, "Deployment", obj->namespace_, deployment, kind, obj->name);
    return rc;
}
