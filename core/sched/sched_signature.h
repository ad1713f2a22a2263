/*
 * Pod scheduling signatures, for grouping pods that are interchangeable to the scheduler.
 */
#ifndef NS_SCHED_SIGNATURE_H
#define NS_SCHED_SIGNATURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/pod.h"
#include "model/pod_key.h"

/* Overwrites b with the pod's signature. with_owner: a default topology spread applies, whose selector also depends
 * on the pod's controlling owner, so the owner's kind and name are part of it. 0 or NS_ERR_INTERNAL. */
int sched_signature(const ns_pod *pod, bool with_owner, ns_key *b);

#endif
