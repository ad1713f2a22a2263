/*
 * CapacityBuffer status, as Karpenter's capacitybuffer controller and provisioner write it (sigs.k8s.io/karpenter
 * pkg/controllers/capacitybuffer and provisioning/buffers.go): status.provisioningStrategy; for a buffer whose
 * PodTemplate (scalableRef's workload) resolves, status.replicas (the chunks it asks for, ns_buffer_chunks),
 * status.podTemplateRef and status.podTemplateGeneration (the PodTemplate's metadata.generation) for a podTemplateRef
 * (both removed for a scalableRef, as Karpenter clears them) and ReadyForProvisioning True (Resolved), otherwise
 * ReadyForProvisioning False (PodTemplateNotFound, ScalableRefNotFound, with the API server's NotFound text;
 * ResolutionFailed, with Karpenter's resolver's error, for a scalableRef to a kind or group it does not read); and the
 * Provisioning condition from the last provisioning round's placement of its chunks: True FitsExistingCapacity when
 * every chunk is on an existing or in-flight node, False RequiresNewCapacity when some needed a new NodeClaim or fit
 * nowhere, False BufferEmpty for zero replicas, False NotReadyForProvisioning; left as it was when no round placed
 * the buffer. A merge patch of /status is sent only when what would be written changed; a condition's
 * lastTransitionTime is when its status last changed in this controller.
 */
#ifndef NS_BUFFER_STATUS_H
#define NS_BUFFER_STATUS_H

#include "controller/controller_mirror.h"
#include "engine/engine.h"
#include "kube/kube_client.h"
#include "model/cluster.h"

typedef struct ns_buffer_status ns_buffer_status;

ns_buffer_status *ns_buffer_status_new(void); /* NULL with NS_ERR_INTERNAL recorded */
void ns_buffer_status_free(ns_buffer_status *s); /* accepts NULL */

/* Whether the controller logs now what buffer b's spec warns about (a scalableRef that does not resolve,
 * b->resolution_failed; a percentage beside a podTemplateRef, which is ignored): once per generation of the buffer.
 * *warned and *generation say whether and for which generation it warned last; updated when it returns true.
 * Karpenter's reconciler returns the resolver's error to controller-runtime, which logs it ("Reconciler error") on each
 * retry of its backoff (operatorpkg's reasonable.RateLimiter: 100 ms doubling to 1 minute) while the condition is
 * written once; the outcome can change only with the spec, that is with a new generation, and nodesmith decodes the
 * buffer again on each of its watch events (its own status writes among them), so it warns once per generation
 * instead. */
bool ns_buffer_warn_due(bool *warned, int64_t *generation, const ns_buffer *b);

/* One pass over the buffers in c (resolved) and those the mirror holds aside (no template). 0, or the first failed
 * write's error after trying every buffer. */
int ns_buffer_status_sync(ns_buffer_status *s, ns_kube_client *client, ns_mirror *mirror, const ns_engine *e,
                          const ns_cluster *c);

#endif
