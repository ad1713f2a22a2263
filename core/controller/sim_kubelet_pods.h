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
#include "engine/write_jobs.h"
#include "kube/kube_client.h"
#include "model/cluster.h"

/* The Running writes of one pass go out over this many connections at once (a kubelet per node writes in parallel). */
#define NS_SIM_KUBELET_WRITERS NS_WRITE_JOBS_THREADS
/* The simulated kubelet's own client rate limit: it plays the kubelet of every Node of the simulated provider, and each
 * real kubelet has a client of its own (50 requests/s, burst 100); the controller's KUBE_CLIENT_QPS is not for them. */
#define NS_SIM_KUBELET_QPS 1000.0
#define NS_SIM_KUBELET_BURST 2000

/* The Running writes of one pass start within this time; the pods left wait for the next pass. The pass runs between
 * two engine steps: 20,000 pods bound to the first Ready Nodes held the step that makes the other Nodes Ready. */
#define NS_SIM_KUBELET_PASS_MS 1000

/* One pass over c (the controller's cluster, changed in place for the pods it wrote). *written (may be NULL) counts
 * the writes. 0, or the first failed write's error after trying every pod there was time for. */
int ns_sim_kubelet_pods(ns_kube_client *client, ns_mirror *mirror, ns_cluster *c, size_t *written);

#endif
