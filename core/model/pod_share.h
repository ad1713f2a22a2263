/*
 * Affinity and topology spread constraints shared by packed pods: the replicas of one workload carry equal ones, so
 * each distinct set is held once, counted by the pods that point to it (a cluster of tens of thousands of pods holds
 * a few dozen).
 *
 * Memory: a share lives while a pod points to it; ns_pod_free releases the pod's. Thread-safe.
 */
#ifndef NS_POD_SHARE_H
#define NS_POD_SHARE_H

#include "model/pod.h"

typedef struct ns_pod_share ns_pod_share;

/* Moves the pod's affinity and spread constraints into the share holding equal ones (freeing the pod's when one
 * exists), and points the pod's fields and pod->share at the share's. A pod with neither keeps share NULL. 0, or
 * NS_ERR_INTERNAL when out of memory (the pod is unchanged then). For packed pods only: the fields are read-only. */
int ns_pod_share_take(ns_pod *pod);
void ns_pod_share_release(ns_pod_share *share); /* one pod's reference; accepts NULL */

#endif
