#include "kube/kube_resource.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "errors/ns_error.h"

const ns_kube_resource NS_KUBE_PODS = {"", "v1", "pods", "Pod", true};
const ns_kube_resource NS_KUBE_NODES = {"", "v1", "nodes", "Node", false};
const ns_kube_resource NS_KUBE_NAMESPACES = {"", "v1", "namespaces", "Namespace", false};
const ns_kube_resource NS_KUBE_PVS = {"", "v1", "persistentvolumes", "PersistentVolume", false};
const ns_kube_resource NS_KUBE_PVCS = {"", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", true};
const ns_kube_resource NS_KUBE_EVENTS = {"", "v1", "events", "Event", true};
const ns_kube_resource NS_KUBE_SERVICES = {"", "v1", "services", "Service", true};
const ns_kube_resource NS_KUBE_REPLICATIONCONTROLLERS = {"", "v1", "replicationcontrollers", "ReplicationController",
                                                         true};
const ns_kube_resource NS_KUBE_NODEPOOLS = {"karpenter.sh", "v1", "nodepools", "NodePool", false};
const ns_kube_resource NS_KUBE_NODECLAIMS = {"karpenter.sh", "v1", "nodeclaims", "NodeClaim", false};
const ns_kube_resource NS_KUBE_PROVISIONERS = {"karpenter.sh", "v1alpha5", "provisioners", "Provisioner", false};
const ns_kube_resource NS_KUBE_DAEMONSETS = {"apps", "v1", "daemonsets", "DaemonSet", true};
const ns_kube_resource NS_KUBE_DEPLOYMENTS = {"apps", "v1", "deployments", "Deployment", true};
const ns_kube_resource NS_KUBE_REPLICASETS = {"apps", "v1", "replicasets", "ReplicaSet", true};
const ns_kube_resource NS_KUBE_STATEFULSETS = {"apps", "v1", "statefulsets", "StatefulSet", true};
const ns_kube_resource NS_KUBE_PDBS = {"policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", true};
const ns_kube_resource NS_KUBE_STORAGECLASSES = {"storage.k8s.io", "v1", "storageclasses", "StorageClass", false};
const ns_kube_resource NS_KUBE_VOLUMEATTACHMENTS = {"storage.k8s.io", "v1", "volumeattachments", "VolumeAttachment",
                                                   false};
/* Warm headroom (model/buffer.h): the CapacityBuffer version Karpenter 1.14's CRD serves, and the templates they name. */
const ns_kube_resource NS_KUBE_CAPACITYBUFFERS = {"autoscaling.x-k8s.io", "v1beta1", "capacitybuffers",
                                                 "CapacityBuffer", true};
const ns_kube_resource NS_KUBE_PODTEMPLATES = {"", "v1", "podtemplates", "PodTemplate", true};
const ns_kube_resource NS_KUBE_LEASES = {"coordination.k8s.io", "v1", "leases", "Lease", true};

const ns_kube_resource *const ns_kube_builtin_resources[] = {
    &NS_KUBE_PODS,        &NS_KUBE_NODES,       &NS_KUBE_NODEPOOLS,   &NS_KUBE_NODECLAIMS,    &NS_KUBE_DAEMONSETS,
    &NS_KUBE_PDBS,        &NS_KUBE_STORAGECLASSES, &NS_KUBE_PVS,       &NS_KUBE_PVCS,          &NS_KUBE_VOLUMEATTACHMENTS, &NS_KUBE_LEASES,
    &NS_KUBE_DEPLOYMENTS, &NS_KUBE_REPLICASETS, &NS_KUBE_STATEFULSETS, &NS_KUBE_EVENTS,       &NS_KUBE_NAMESPACES,
    &NS_KUBE_SERVICES,    &NS_KUBE_REPLICATIONCONTROLLERS, &NS_KUBE_PODTEMPLATES,
    NULL,
};

void ns_kube_api_version(const ns_kube_resource *r, char *buf, size_t len)
{
    if (r->group[0])
        snprintf(buf, len, "%s/%s", r->group, r->version);
    else
        snprintf(buf, len, "%s", r->version);
}

const ns_kube_resource *ns_kube_resource_by_kind(const char *api_version, const char *kind)
{
    for (size_t i = 0; ns_kube_builtin_resources[i]; i++) {
        const ns_kube_resource *r = ns_kube_builtin_resources[i];
        char av[128];
        ns_kube_api_version(r, av, sizeof(av));
        if (strcmp(r->kind, kind) == 0 && (!api_version || strcmp(av, api_version) == 0))
            return r;
    }
    return NULL;
}

int ns_kube_resource_nodeclass(const char *group, const char *version, const char *kind, char *buf, size_t len,
                               ns_kube_resource *out)
{
    size_t k = strlen(kind);
    if (k == 0 || strlen(group) + strlen(version) + 3 * k + 8 > len)
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "node class kind %s/%s %s: names too long", group, version, kind);
    char *p = buf;
    out->group = strcpy(p, group);
    p += strlen(group) + 1;
    out->version = strcpy(p, version);
    p += strlen(version) + 1;
    out->kind = strcpy(p, kind);
    char *plural = p + k + 1;
    for (size_t i = 0; i < k; i++)
        plural[i] = (char)tolower((unsigned char)kind[i]);
    plural[k] = '\0';
    char last = plural[k - 1], before = k > 1 ? plural[k - 2] : '\0';
    if (last == 's' || last == 'x' || (last == 'h' && (before == 'c' || before == 's')))
        strcat(plural, "es");
    else if (last == 'y' && !strchr("aeiou", before))
        strcpy(plural + k - 1, "ies");
    else
        strcat(plural, "s");
    out->resource = plural;
    out->namespaced = false;
    return 0;
}

/* Appends s percent-encoded (path segment rules: unreserved characters kept). */
static size_t put_segment(char *buf, size_t len, size_t at, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (isalnum(ch) || ch == '-' || ch == '.' || ch == '_' || ch == '~' || ch == ':') {
            if (at + 1 < len)
                buf[at] = (char)ch;
            at++;
        } else {
            if (at + 3 < len) {
                buf[at] = '%';
                buf[at + 1] = hex[ch >> 4];
                buf[at + 2] = hex[ch & 15];
            }
            at += 3;
        }
    }
    return at;
}

static size_t put(char *buf, size_t len, size_t at, const char *s)
{
    size_t n = strlen(s);
    if (at + n < len)
        memcpy(buf + at, s, n);
    return at + n;
}

int ns_kube_path(char *buf, size_t len, const ns_kube_resource *r, const char *namespace_, const char *name,
                 const char *sub, const char *query)
{
    size_t at = 0;
    if (r->group[0]) {
        at = put(buf, len, at, "/apis/");
        at = put(buf, len, at, r->group);
        at = put(buf, len, at, "/");
    } else {
        at = put(buf, len, at, "/api/");
    }
    at = put(buf, len, at, r->version);
    if (r->namespaced && namespace_) {
        at = put(buf, len, at, "/namespaces/");
        at = put_segment(buf, len, at, namespace_);
    }
    at = put(buf, len, at, "/");
    at = put(buf, len, at, r->resource);
    if (name) {
        at = put(buf, len, at, "/");
        at = put_segment(buf, len, at, name);
    }
    if (sub) {
        at = put(buf, len, at, "/");
        at = put(buf, len, at, sub);
    }
    if (query && *query) {
        at = put(buf, len, at, "?");
        at = put(buf, len, at, query);
    }
    if (at >= len)
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "%s %s: the request path is longer than %zu bytes", r->kind,
                       name ? name : "", len);
    buf[at] = '\0';
    return 0;
}
