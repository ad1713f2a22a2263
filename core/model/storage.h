/*
 * Storage objects as Karpenter reads them for volume topology (pkg/scheduling/volumeusage.go, volumetopology.go):
 * StorageClasses (provisioner, binding mode, allowed topologies), PersistentVolumes (capacity, class, node affinity,
 * the claim bound to them) and PersistentVolumeClaims (class, the volume bound, the storage requested); and
 * VolumeAttachments as Karpenter's node termination reads them (pkg/controllers/node/termination: a node is not
 * terminated while an attachment of its drained pods' volumes remains).
 *
 * Memory: each object owns everything it points to; the free functions free the object too and accept NULL.
 */
#ifndef NS_STORAGE_H
#define NS_STORAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/meta.h"
#include "model/pod.h"

typedef struct ns_storage_class {
    ns_meta meta;
    char *provisioner;
    bool wait_for_first_consumer; /* volumeBindingMode WaitForFirstConsumer (else Immediate) */
    bool is_default;              /* annotation storageclass.kubernetes.io/is-default-class: "true" */
    ns_node_selector_term *allowed_topologies; /* allowedTopologies (ORed); matchLabelExpressions as exprs */
    size_t n_allowed_topologies;
} ns_storage_class;

typedef struct ns_pv {
    ns_meta meta;
    int64_t capacity_bytes;      /* spec.capacity.storage */
    char *storage_class;         /* spec.storageClassName; NULL = none */
    char *csi_driver;            /* spec.csi.driver; NULL for other volume sources */
    bool local;                  /* a local or hostPath volume: its hostname term does not bind a new node */
    ns_node_selector_term *node_affinity; /* spec.nodeAffinity.required.nodeSelectorTerms (ORed) */
    size_t n_node_affinity;
    char *claim_namespace;       /* spec.claimRef: the claim bound to it, NULL when none */
    char *claim_name;
    char *phase;                 /* status.phase */
} ns_pv;

typedef struct ns_pvc {
    ns_meta meta;
    char *storage_class;   /* spec.storageClassName; NULL = the default class */
    char *volume_name;     /* spec.volumeName: the PV bound, NULL while unbound */
    int64_t request_bytes; /* spec.resources.requests.storage */
    char *phase;           /* status.phase */
} ns_pvc;

/* storage.k8s.io/v1 VolumeAttachment: a volume attached to a node, created and deleted by the attach-detach
 * controller. */
typedef struct ns_volume_attachment {
    ns_meta meta;
    char *attacher;  /* spec.attacher: the CSI driver */
    char *node_name; /* spec.nodeName */
    char *pv_name;   /* spec.source.persistentVolumeName; NULL for an inline volume (spec.source.inlineVolumeSpec) */
    bool attached;   /* status.attached */
    /* The simulated attach-detach controller's memory (engine/ctl_attach_detach.c): since when no pod on the node
     * uses the volume (unix ms), 0 while one does. Not part of the object. */
    int64_t unused_since_ms;
} ns_volume_attachment;

void ns_storage_class_free(ns_storage_class *sc);
void ns_volume_attachment_free(ns_volume_attachment *va);
void ns_pv_free(ns_pv *pv);
void ns_pvc_free(ns_pvc *pvc);

#endif
