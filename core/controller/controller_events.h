/*
 * Publishes Karpenter's Kubernetes Events (karpenter_events.h) after each engine step: those of the decisions made
 * since the last call and those the cluster's state calls for, through Karpenter's de-duplication and rate limit
 * (karpenter_recorder.h) and client-go's recorder (kube/kube_events.h), with the involved object's uid from the
 * informers' cache. A failed write is logged (warn) and the others go on: an Event is never worth stopping for.
 */
#ifndef NS_CONTROLLER_EVENTS_H
#define NS_CONTROLLER_EVENTS_H

#include "controller/controller_mirror.h"
#include "engine/engine.h"
#include "kube/kube_client.h"

typedef struct ns_controller_events ns_controller_events;

/* The client and the mirror are borrowed and must outlive it. 0 or NS_ERR_INTERNAL. */
int ns_controller_events_new(ns_kube_client *c, ns_mirror *m, ns_controller_events **out);
void ns_controller_events_free(ns_controller_events *ce); /* accepts NULL */

/* The events of e's new decisions and of c's state. 0, or NS_ERR_INTERNAL when out of memory. */
int ns_controller_events_publish(ns_controller_events *ce, ns_engine *e, const ns_cluster *c);

#endif
