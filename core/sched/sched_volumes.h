/*
 * Volume topology (sched_volumes.c): where a pod's PersistentVolumeClaims let its node be.
 */
#ifndef NS_SCHED_VOLUMES_H
#define NS_SCHED_VOLUMES_H

#include <stddef.h>

#include "model/cluster.h"
#include "model/requirements.h"

/* Adds to *out the requirements the pod's claims put on its node (nothing when it has none). When a claim cannot be
 * used, why (len > 0) says which and why, and the pod is not provisionable. 0, or NS_ERR_INTERNAL naming the pod. */
int sched_volume_requirements(const ns_cluster *cl, const ns_pod *pod, ns_requirements *out, char *why, size_t len);

#endif
