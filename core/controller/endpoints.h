/*
 * The controller's HTTP endpoints, served with libmicrohttpd (a Debian library: keep-alive, partial reads and limits
 * are its job): /metrics on the metrics port (Karpenter's 8080), /healthz and /readyz on the health-probe port (8081).
 * /healthz answers 200 while the process serves; /readyz answers 200 once the controller says it is ready (caches
 * synced, which needs the NodePool and NodeClaim CRDs to be served), else 503 with the reason. Anything else is 404.
 *
 * Threading: the servers answer on their own threads; the setters may be called from any thread.
 */
#ifndef NS_ENDPOINTS_H
#define NS_ENDPOINTS_H

#include <stdbool.h>

#include "controller/metrics.h"

typedef struct ns_endpoints ns_endpoints;

/* Listens on bind_address (an IPv4 address: "0.0.0.0" for every interface, "127.0.0.1" for loopback) at both ports.
 * metrics is borrowed and must outlive the endpoints. NS_ERR_INVALID_CONFIG naming the address or port that could
 * not be bound. */
int ns_endpoints_start(const char *bind_address, int metrics_port, int health_port, ns_metrics *metrics,
                       ns_endpoints **out);
void ns_endpoints_stop(ns_endpoints *ep); /* accepts NULL */

/* Readiness; reason (copied) says why not, for /readyz's body. */
void ns_endpoints_set_ready(ns_endpoints *ep, bool ready, const char *reason);

#endif
