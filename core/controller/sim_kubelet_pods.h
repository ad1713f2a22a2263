/*
 * The pod half of the simulated kubelet (`nodesmith controller --simulate-kubelet`, for the simulated provider): on
 * the Nodes the engine's simulated kubelet registered (every Node of a NodeClaim), pods kube-scheduler bound are
 * reported Running and Ready through the pods' status subresource, and pods being deleted are confirmed gone (a
 * delete with a zero grace period and the pod's uid), as a kubelet does once the containers stopped.
 */
#ifndef NS_SIM_KUBELET_PODS_H
#define NS_SIM_KUBELET_PODS_H

#include <stddef.h>

#include "controller/controller_mirror.h"
#include "kube/kube_client.h"
#include "model/cluster.h"

/* One pass over c (the controller's cluster, changed in place for the pods it wrote). *written (may be NULL) counts
 * the writes. 0, or the first failed write's error after trying every pod. */
int ns_sim_kubelet_pods(ns_kube_client *client, ns_mirror *mirror, ns_cluster *c, size_t *written);

#endif
