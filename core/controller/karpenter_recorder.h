/*
 * Karpenter's event recorder in front of client-go's (kube/kube_events.h): an event is published only when the same
 * reason about the same object with the same de-duplication values was not published within its dedupe timeout
 * (Karpenter's go-cache keyed by reason and DedupeValues), and rate-limited events (Nominated) only when the shared
 * token bucket (5 per second, burst 10, as Karpenter's PodNominationRateLimiter) has a token. What passes goes to
 * client-go's recorder, which creates the Event or bumps its count. Single-threaded (the controller's loop).
 */
#ifndef NS_KARPENTER_RECORDER_H
#define NS_KARPENTER_RECORDER_H

#include <stdbool.h>
#include <stdint.h>

#include "controller/karpenter_events.h"

typedef struct ns_kev_filter ns_kev_filter;

/* NULL with NS_ERR_INTERNAL recorded. */
ns_kev_filter *ns_kev_filter_new(void);
void ns_kev_filter_free(ns_kev_filter *f); /* accepts NULL */

/* 1 when ev should be published at now_ms (and remembers it), 0 when not, NS_ERR_INTERNAL without memory. uid (may
 * be NULL) is the object's, as Karpenter's DedupeValues name the object by uid: a new object of the same name is
 * another object. */
int ns_kev_filter_admit(ns_kev_filter *f, const ns_kev *ev, const char *uid, int64_t now_ms);

#endif
