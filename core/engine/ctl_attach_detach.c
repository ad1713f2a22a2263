/*
 * The simulated attach-detach controller (in-memory cluster only, cfg.simulate_controllers): kube-controller-manager's
 * part that creates a VolumeAttachment when a pod using a CSI persistent volume runs on a node, and deletes it once no
 * pod on that node uses the volume any more. Karpenter's node termination waits for those deletions
 * (ctl_termination.c), so without the stand-in a drained node whose pods had volumes would never terminate.
 *
 * The detach comes cfg.volume_detach_delay_ms after the last pod using the volume left the node (the time a CSI driver
 * takes to detach a disk); the attach comes at once. A pod uses a volume from binding until it is gone or has
 * Succeeded or Failed (the controller's desired state drops terminated pods); a terminating pod still uses it. Names
 * are "csi-" and a hash of the volume, the attacher and the node, as Kubernetes derives them (its hash is a SHA-256;
 * this one a 64-bit FNV-1a, which only the name shows).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "engine/engine_internal.h"
#include "errors/ns_error.h"
#include "log/ns_log.h"
#include "model/hash.h"
#include "model/model_util.h"

bool ns_engine_pod_uses_pv(const ns_engine *e, const ns_pod *pod, const char *pv_name)
{
    for (size_t i = 0; i < pod->n_volumes; i++) {
        char claim[NS_NAME_MAX];
        const ns_pvc *pvc = ns_cluster_find_pvc(e->cluster, pod->meta.namespace_,
                                                ns_pod_volume_claim(pod, &pod->volumes[i], claim, sizeof(claim)));
        if (pvc && pvc->volume_name && strcmp(pvc->volume_name, pv_name) == 0)
            return true;
    }
    return false;
}

static bool pod_terminated(const ns_pod *p)
{
    return p->phase && (strcmp(p->phase, "Succeeded") == 0 || strcmp(p->phase, "Failed") == 0);
}

static bool volume_in_use(const ns_engine *e, const char *node, const char *pv_name)
{
    for (size_t i = 0; i < e->cluster->n_pods; i++) {
        const ns_pod *p = e->cluster->pods[i];
        if (p->node_name && strcmp(p->node_name, node) == 0 && !pod_terminated(p) && ns_engine_pod_uses_pv(e, p, pv_name))
            return true;
    }
    return false;
}

static bool attached(const ns_engine *e, const char *pv_name, const char *node)
{
    for (size_t i = 0; i < e->cluster->n_volume_attachments; i++) {
        const ns_volume_attachment *va = e->cluster->volume_attachments[i];
        if (va->pv_name && strcmp(va->pv_name, pv_name) == 0 && strcmp(va->node_name, node) == 0)
            return true;
    }
    return false;
}

static int attach(ns_engine *e, const ns_pv *pv, const char *node)
{
    uint64_t h = ns_hash_str(ns_hash_str(ns_hash_str(NS_HASH_FNV_BASIS, pv->meta.name), pv->csi_driver), node);
    char name[32];
    snprintf(name, sizeof(name), "csi-%016" PRIx64, h);
    ns_volume_attachment *va = calloc(1, sizeof(*va));
    if (!va || !(va->meta.name = ns_strdup(name)) || !(va->attacher = ns_strdup(pv->csi_driver)) ||
        !(va->node_name = ns_strdup(node)) || !(va->pv_name = ns_strdup(pv->meta.name))) {
        ns_volume_attachment_free(va);
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory attaching volume %s to node %s", pv->meta.name, node);
    }
    va->meta.creation_ms = ns_clock_now_ms();
    va->attached = true;
    int rc = ns_cluster_add_volume_attachment(e->cluster, va);
    if (rc < 0)
        return rc;
    ns_engine_busy(e);
    ns_log(NS_LOG_INFO, "attach-detach", "attached volume", "VolumeAttachment", name, "PersistentVolume",
           pv->meta.name, "Node", node, NULL);
    return NS_OK;
}

/* Attaches the CSI volumes of the pods bound to nodes that have none yet. */
static int attach_pods_volumes(ns_engine *e)
{
    int rc = NS_OK;
    for (size_t i = 0; rc == NS_OK && i < e->cluster->n_pods; i++) {
        const ns_pod *p = e->cluster->pods[i];
        if (!p->node_name || pod_terminated(p) || !ns_cluster_find_node(e->cluster, p->node_name))
            continue;
        for (size_t v = 0; rc == NS_OK && v < p->n_volumes; v++) {
            char claim[NS_NAME_MAX];
            const ns_pvc *pvc = ns_cluster_find_pvc(e->cluster, p->meta.namespace_,
                                                    ns_pod_volume_claim(p, &p->volumes[v], claim, sizeof(claim)));
            const ns_pv *pv = pvc && pvc->volume_name ? ns_cluster_find_pv(e->cluster, pvc->volume_name) : NULL;
            if (pv && pv->csi_driver && !attached(e, pv->meta.name, p->node_name))
                rc = attach(e, pv, p->node_name);
        }
    }
    return rc;
}

/* Detaches (deletes) the attachments no pod on their node has used for the detach delay. */
static int detach_unused(ns_engine *e, int64_t now)
{
    for (size_t i = 0; i < e->cluster->n_volume_attachments;) {
        ns_volume_attachment *va = e->cluster->volume_attachments[i];
        /* an inline volume has no persistent volume to follow: its attachment stays, as nothing here detaches it */
        if (!va->pv_name || volume_in_use(e, va->node_name, va->pv_name)) {
            va->unused_since_ms = 0;
            i++;
            continue;
        }
        if (!va->unused_since_ms)
            va->unused_since_ms = now;
        if (now - va->unused_since_ms < e->cfg.volume_detach_delay_ms) {
            i++;
            continue;
        }
        ns_log(NS_LOG_INFO, "attach-detach", "detached volume", "VolumeAttachment", va->meta.name,
               "PersistentVolume", va->pv_name, "Node", va->node_name, NULL);
        int rc = ns_cluster_remove_volume_attachment(e->cluster, va); /* the list moves down: i stays */
        if (rc < 0)
            return rc;
        ns_engine_busy(e);
    }
    return NS_OK;
}

int ns_ctl_attach_detach(ns_engine *e)
{
    if (!e->cfg.simulate_controllers)
        return NS_OK;
    int rc = attach_pods_volumes(e);
    return rc < 0 ? rc : detach_unused(e, ns_clock_now_ms());
}
