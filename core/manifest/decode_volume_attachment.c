/* storage.k8s.io/v1 VolumeAttachments (model/storage.h), which Karpenter's node termination waits for: the fields it
 * reads (the node, the persistent volume) and the API server's own rules for them (an attacher and a node are
 * required; the source names exactly one of a persistent volume or an inline volume spec). Strict for manifests. */
#include <stdlib.h>

#include "errors/ns_error.h"
#include "manifest/decoders.h"

static const char *const spec_fields[] = {"attacher", "source", "nodeName", NULL};
static const char *const source_fields[] = {"persistentVolumeName", "inlineVolumeSpec", NULL};
static const char *const status_fields[] = {"attached", "attachmentMetadata", "attachError", "detachError", NULL};

static int decode_source(const ns_dec *d, const ns_ynode *spec, bool strict, ns_volume_attachment *va)
{
    int rc = 0;
    const ns_ynode *src = ns_dec_child(d, spec, "spec", "source", NS_Y_MAP, &rc);
    if (rc < 0)
        return rc;
    if (!src)
        return ns_dec_fail(d, spec, "spec.source", "is required (persistentVolumeName or inlineVolumeSpec)");
    if (strict && (rc = ns_dec_fields(d, src, "spec.source", source_fields)) < 0)
        return rc;
    if ((rc = ns_dec_string(d, src, "spec.source", "persistentVolumeName", &va->pv_name)) < 0)
        return rc;
    if ((va->pv_name != NULL) == (ns_ymap_get(src, "inlineVolumeSpec") != NULL))
        return ns_dec_fail(d, src, "spec.source", "must specify exactly one of inlineVolumeSpec and "
                           "persistentVolumeName");
    return 0;
}

int ns_decode_volume_attachment(ns_dec *d, const ns_ynode *root, bool strict, ns_volume_attachment *va)
{
    const ns_ynode *spec = NULL, *status = NULL;
    int rc;
    if ((rc = ns_decode_top_fields(d, root, NULL)) < 0 ||
        (rc = ns_decode_meta(d, root, "VolumeAttachment", false, &va->meta)) < 0)
        return rc;
    spec = ns_dec_child(d, root, "", "spec", NS_Y_MAP, &rc);
    if (rc == 0)
        status = ns_dec_child(d, root, "", "status", NS_Y_MAP, &rc);
    if (rc < 0)
        return rc;
    if (!spec)
        return ns_dec_fail(d, root, "spec", "is required (attacher, source, nodeName)");
    if ((strict && (rc = ns_dec_fields(d, spec, "spec", spec_fields)) < 0) ||
        (strict && status && (rc = ns_dec_fields(d, status, "status", status_fields)) < 0) ||
        (rc = ns_dec_string_required(d, spec, "spec", "attacher", &va->attacher)) < 0 ||
        (rc = ns_dec_string_required(d, spec, "spec", "nodeName", &va->node_name)) < 0 ||
        (rc = decode_source(d, spec, strict, va)) < 0)
        return rc;
    return status ? ns_dec_bool(d, status, "status", "attached", &va->attached, NULL) : 0;
}

int ns_load_volume_attachment(ns_dec *d, const ns_ynode *root, ns_cluster *c)
{
    ns_volume_attachment *va = calloc(1, sizeof(*va));
    if (!va)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory decoding a VolumeAttachment");
    int rc = ns_decode_volume_attachment(d, root, true, va);
    if (rc < 0) {
        ns_volume_attachment_free(va);
        return rc;
    }
    return ns_cluster_add_volume_attachment(c, va);
}
