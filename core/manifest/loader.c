#include "manifest/loader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "log/ns_log.h"
#include "manifest/decoders.h"
#include "manifest/manifest_files.h"
#include "manifest/yaml_doc.h"
#include "model/model_util.h"
#include "model/nodeclass_kinds.h"

typedef enum handler {
    H_POD,
    H_WORKLOAD,
    H_DAEMONSET,
    H_PDB,
    H_NODE,
    H_NODEPOOL,
    H_NODECLAIM,
    H_PROVISIONER,
    H_STORAGECLASS,
    H_PV,
    H_PVC,
    H_SERVICE,
    H_VOLUMEATTACHMENT,
    H_BUFFER,
    H_POD_TEMPLATE,
    H_LIST,
} handler;

static const struct {
    const char *kind;
    const char *api_versions[3];
    handler h;
} kinds[] = {
    {"Pod", {"v1"}, H_POD},
    {"Deployment", {"apps/v1"}, H_WORKLOAD},
    {"ReplicaSet", {"apps/v1"}, H_WORKLOAD},
    {"StatefulSet", {"apps/v1"}, H_WORKLOAD},
    {"Job", {"batch/v1"}, H_WORKLOAD},
    {"DaemonSet", {"apps/v1"}, H_DAEMONSET},
    {"PodDisruptionBudget", {"policy/v1", "policy/v1beta1"}, H_PDB},
    {"Node", {"v1"}, H_NODE},
    {"NodePool", {"karpenter.sh/v1", "karpenter.sh/v1beta1"}, H_NODEPOOL},
    {"NodeClaim", {"karpenter.sh/v1"}, H_NODECLAIM},
    {"Provisioner", {"karpenter.sh/v1alpha5"}, H_PROVISIONER},
    {"StorageClass", {"storage.k8s.io/v1"}, H_STORAGECLASS},
    {"PersistentVolume", {"v1"}, H_PV},
    {"PersistentVolumeClaim", {"v1"}, H_PVC},
    {"Service", {"v1"}, H_SERVICE},
    {"VolumeAttachment", {"storage.k8s.io/v1"}, H_VOLUMEATTACHMENT},
    {"CapacityBuffer", {"autoscaling.x-k8s.io/v1beta1", "autoscaling.x-k8s.io/v1alpha1"}, H_BUFFER},
    {"PodTemplate", {"v1"}, H_POD_TEMPLATE},
    {"List", {"v1"}, H_LIST},
};

bool ns_manifest_core_kind(const char *kind)
{
    for (size_t i = 0; kind && i < sizeof(kinds) / sizeof(kinds[0]); i++)
        if (strcmp(kinds[i].kind, kind) == 0)
            return true;
    return false;
}

static int load_object(ns_dec *d, const ns_ynode *root, ns_cluster *c, int depth);

static const char *const list_fields[] = {"apiVersion", "kind", "metadata", "items", NULL};

static int load_list(ns_dec *d, const ns_ynode *root, ns_cluster *c, int depth)
{
    int rc;
    if ((rc = ns_dec_fields(d, root, "", list_fields)) < 0)
        return rc;
    const ns_ynode *items = ns_dec_child(d, root, "", "items", NS_Y_SEQ, &rc);
    for (size_t i = 0; items && rc == 0 && i < items->n; i++)
        rc = load_object(d, items->items[i], c, depth + 1);
    return rc;
}

static int dispatch(ns_dec *d, const ns_ynode *root, handler h, const char *api_version, const char *kind,
                    ns_cluster *c, int depth)
{
    switch (h) {
    case H_POD:
        return ns_load_pod(d, root, c);
    case H_WORKLOAD:
        return ns_load_workload(d, root, kind, c);
    case H_DAEMONSET:
        return ns_load_daemonset(d, root, c);
    case H_PDB:
        return ns_load_pdb(d, root, api_version, c);
    case H_NODE:
        return ns_load_node(d, root, c);
    case H_NODEPOOL:
        return ns_load_nodepool(d, root, api_version, c);
    case H_NODECLAIM:
        return ns_load_nodeclaim(d, root, c);
    case H_PROVISIONER:
        return ns_load_provisioner(d, root, c);
    case H_STORAGECLASS:
        return ns_load_storage_class(d, root, c);
    case H_PV:
        return ns_load_pv(d, root, c);
    case H_PVC:
        return ns_load_pvc(d, root, c);
    case H_SERVICE:
        return ns_load_service(d, root, c);
    case H_VOLUMEATTACHMENT:
        return ns_load_volume_attachment(d, root, c);
    case H_BUFFER:
        return ns_load_capacity_buffer(d, root, c);
    case H_POD_TEMPLATE:
        return ns_load_pod_template(d, root, c);
    case H_LIST:
        return load_list(d, root, c, depth);
    }
    return NS_FAIL(NS_ERR_INTERNAL, "unhandled manifest kind %s", kind);
}

/* A kind the core does not know is a node class when a loaded provider declares it; else it is skipped. */
static int load_nodeclass_kind(ns_dec *d, const ns_ynode *root, const char *api_version, const char *kind,
                               ns_cluster *c)
{
    const ns_nodeclass_kind_info *info = ns_nodeclass_kinds_find(c->kinds, api_version, kind);
    if (info)
        return ns_load_nodeclass(d, root, api_version, kind, info, c);
    if (ns_nodeclass_kinds_knows(c->kinds, kind)) {
        char versions[512];
        return ns_dec_fail(d, ns_ymap_get(root, "apiVersion"), "apiVersion",
                           "\"%s\" is not supported for kind %s (the loaded providers take %s)", api_version, kind,
                           ns_nodeclass_kinds_versions(c->kinds, kind, versions, sizeof(versions)));
    }
    char line[16], known[1024];
    snprintf(line, sizeof(line), "%d", root->line);
    ns_log(NS_LOG_WARN, "manifest", "skipping a manifest of an unknown kind", "file", d->file, "line", line,
           "apiVersion", api_version, "kind", kind, "node-class-kinds",
           ns_nodeclass_kinds_describe(c->kinds, known, sizeof(known)), NULL);
    return 0;
}

static int load_object(ns_dec *d, const ns_ynode *root, ns_cluster *c, int depth)
{
    snprintf(d->object, sizeof(d->object), "object");
    if (ns_ynode_is_null(root))
        return 0;
    if (root->kind != NS_Y_MAP)
        return ns_dec_fail(d, root, NULL, "expected a Kubernetes object (a mapping), got %s",
                           ns_ynode_type_name(root));
    if (depth > 4)
        return ns_dec_fail(d, root, NULL, "Lists nested more than 4 deep");
    char *api_version = NULL, *kind = NULL;
    int rc;
    if ((rc = ns_dec_string_required(d, root, "", "apiVersion", &api_version)) < 0 ||
        (rc = ns_dec_string_required(d, root, "", "kind", &kind)) < 0)
        goto done;
    snprintf(d->object, sizeof(d->object), "%s", kind);
    size_t i = 0;
    while (i < sizeof(kinds) / sizeof(kinds[0]) && strcmp(kinds[i].kind, kind) != 0)
        i++;
    if (i == sizeof(kinds) / sizeof(kinds[0])) {
        rc = load_nodeclass_kind(d, root, api_version, kind, c);
        goto done;
    }
    bool supported = false;
    for (size_t v = 0; v < 3 && kinds[i].api_versions[v] && !supported; v++)
        supported = strcmp(kinds[i].api_versions[v], api_version) == 0;
    if (!supported) {
        rc = ns_dec_fail(d, ns_ymap_get(root, "apiVersion"), "apiVersion",
                         "\"%s\" is not supported for kind %s (supported: %s%s%s)", api_version, kind,
                         kinds[i].api_versions[0], kinds[i].api_versions[1] ? ", " : "",
                         kinds[i].api_versions[1] ? kinds[i].api_versions[1] : "");
        goto done;
    }
    rc = dispatch(d, root, kinds[i].h, api_version, kind, c, depth);
done:
    free(api_version);
    free(kind);
    return rc;
}

static int load_reader(ns_cluster *c, ns_yreader *r)
{
    ns_dec d = {.file = ns_yreader_name(r)};
    int rc = 0;
    size_t objects = 0;
    for (;;) {
        ns_ydoc *doc = NULL;
        if ((rc = ns_yreader_next(r, &doc)) < 0 || !doc)
            break;
        objects += !ns_ynode_is_null(ns_ydoc_root(doc));
        rc = load_object(&d, ns_ydoc_root(doc), c, 0);
        ns_ydoc_free(doc);
        if (rc < 0)
            break;
    }
    if (rc == 0 && objects == 0) /* an empty file or only comments: likely not what the user meant to load */
        ns_log(NS_LOG_WARN, "manifest", "the manifest file holds no objects", "file", d.file, NULL);
    return rc;
}

int ns_manifest_load_file(ns_cluster *c, const char *path)
{
    ns_yreader *r;
    int rc = ns_yreader_open_file(path, &r);
    if (rc < 0)
        return rc;
    rc = load_reader(c, r);
    ns_yreader_close(r);
    return rc;
}

int ns_manifest_load_string(ns_cluster *c, const char *name, const char *text, size_t len)
{
    ns_yreader *r;
    int rc = ns_yreader_open_string(name, text, len, &r);
    if (rc < 0)
        return rc;
    rc = load_reader(c, r);
    ns_yreader_close(r);
    return rc;
}

int ns_manifest_load_tree(ns_cluster *c, const char *source, const ns_ynode *root)
{
    ns_dec d = {.file = source, .from_api_server = true};
    return load_object(&d, root, c, 0);
}

static int load_one(void *ctx, const char *file)
{
    return ns_manifest_load_file(ctx, file);
}

int ns_manifest_load_path(ns_cluster *c, const char *path)
{
    return ns_manifest_each_file(path, load_one, c);
}
