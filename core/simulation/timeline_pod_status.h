/*
 * Internal to timelines: the `podStatus` action (a pod's phase and start time, as its kubelet reports them). Decoding
 * errors are NS_ERR_INVALID_CONFIG with "FILE:LINE: timeline step N: PATH: ..."; applying names the pod and the
 * field (the runner prefixes the step).
 */
#ifndef NS_TIMELINE_POD_STATUS_H
#define NS_TIMELINE_POD_STATUS_H

#include "engine/engine.h"
#include "model/cluster.h"
#include "simulation/timeline_decode.h"

int tl_decode_pod_status(tl_ctx *c, const ns_ynode *v, const char *path, ns_tl_step *s);
int tl_apply_pod_status(ns_engine *e, const ns_tl_step *s);
/* The names of the pods of namespace ns the selector picks, in the cluster's order (*out: the caller's, free with
 * ns_strv_free); NS_ERR_NOT_FOUND when it picks none. Collected first, as changing a pod may move it in the list. */
int tl_pod_names(const ns_cluster *c, const char *ns, const ns_label_selector *selector, char ***out, size_t *n);

#endif
