/*
 * Karpenter's Kubernetes Events for what the engine decided: the events Karpenter's controllers publish (reason,
 * type, message, the object they are about, how they are de-duplicated), derived from the engine's decisions and from
 * the cluster the engine sees. Pure: nothing is written here (controller_events.c publishes them).
 *
 *   decision                      events (object)
 *   created nodeclaim             Nominated (each pod it was created for; rate-limited)
 *   could not schedule pod        FailedScheduling (pod)
 *   failed launching, no capacity InsufficientCapacityError (nodeclaim)
 *   disrupting node(s)            DisruptionTerminating (node, nodeclaim of each candidate);
 *                                 DisruptionLaunching, DisruptionWaitingReadiness (each replacement nodeclaim)
 *   evicted pod                   Evicted (eviction) or Disrupted (deletion once terminationGracePeriod ran out) (pod)
 *   eviction blocked              FailedDraining (node)
 *   received interruption event   SpotInterrupted / InstanceUnhealthy / InstanceStopping / InstanceTerminating, then
 *                                 TerminatingOnInterruption (nodeclaim, node)
 *   rebalance recommendation      SpotRebalanceRecommendation (nodeclaim, node)
 *   disruption blocked            DisruptionBlocked (node, nodeclaim)
 *   unconsolidatable              Unconsolidatable (node, nodeclaim; 15 min dedupe)
 *   node repair blocked           NodeRepairBlocked (node: one per node, nodeclaim and nodepool; 15 min dedupe)
 * and from the cluster: TerminationGracePeriodExpiring (node and nodeclaim being deleted with a grace period),
 * InvalidDoNotDisruptAnnotation, DoNotDisruptUntil and DoNotDisruptGracePeriodElapsed (pods on NodeClaims' nodes).
 */
#ifndef NS_KARPENTER_EVENTS_H
#define NS_KARPENTER_EVENTS_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/engine.h"
#include "model/cluster.h"

typedef enum ns_kev_object { NS_KEV_POD, NS_KEV_NODE, NS_KEV_NODECLAIM, NS_KEV_NODEPOOL } ns_kev_object;

#define NS_KEV_DEDUPE_DEFAULT_MS (2 * 60 * 1000) /* Karpenter's recorder's default dedupe timeout */
#define NS_KEV_DEDUPE_UNCONSOLIDATABLE_MS (15 * 60 * 1000) /* its Unconsolidatable events' DedupeTimeout */
#define NS_KEV_DEDUPE_REPAIR_BLOCKED_MS (15 * 60 * 1000)   /* its NodeRepairBlocked events' DedupeTimeout */

typedef struct ns_kev {
    ns_kev_object object;
    char namespace_[256]; /* pods; "" for cluster-scoped objects */
    char name[256];
    const char *type;   /* "Normal" or "Warning" */
    const char *reason; /* Karpenter's reason */
    char message[1024];
    /* Karpenter's DedupeValues beyond the object itself ("" when only the object): the same reason about the same
     * object with the same values is published once per dedupe_ms. */
    char dedupe[256];
    int64_t dedupe_ms;
    bool rate_limited; /* Nominated: one token bucket for all of them (5 per second, burst 10) */
} ns_kev;

/* Called for each event; a negative return stops and is returned. */
typedef int (*ns_kev_fn)(void *ud, const ns_kev *ev);

/* The events of one decision, made over cluster c (the cluster after the step that decided it). */
int ns_kev_from_decision(const ns_decision *d, const ns_cluster *c, ns_kev_fn fn, void *ud);

/* The events the cluster's state calls for at now_ms (Karpenter publishes them each time it looks at the object;
 * the recorder's de-duplication spaces them out). */
int ns_kev_from_cluster(const ns_cluster *c, int64_t now_ms, ns_kev_fn fn, void *ud);

/* "Pod", "Node", "NodeClaim", "NodePool" and their apiVersion. */
const char *ns_kev_kind(ns_kev_object o);
const char *ns_kev_api_version(ns_kev_object o);

#endif
