/*
 * The controller's Prometheus metrics under Karpenter's names and labels (research §1.5), so existing dashboards
 * work: a registry of counters and gauges, rendered in the text exposition format (version 0.0.4) with # HELP and
 * # TYPE lines. Only the families below exist; each sample is one label set, written already sorted as
 * `key="value",...` by ns_metrics_labels.
 *
 * Threading: one writer (the controller's thread); ns_metrics_render copies under the registry's lock, so the HTTP
 * server's threads may render at any time.
 */
#ifndef NS_METRICS_H
#define NS_METRICS_H

#include <stddef.h>

typedef struct ns_metrics ns_metrics;

ns_metrics *ns_metrics_new(void);        /* NULL with NS_ERR_INTERNAL recorded */
void ns_metrics_free(ns_metrics *m);     /* accepts NULL */

/* Counter: adds delta to the sample (created at 0). Gauge: sets it. NS_ERR_INVALID_ARGUMENT for a name that is not a
 * known family of that type, NS_ERR_INTERNAL on allocation failure. */
int ns_metrics_add(ns_metrics *m, const char *name, const char *labels, double delta);
int ns_metrics_set(ns_metrics *m, const char *name, const char *labels, double value);
/* Drops every sample of a gauge family (before setting this tick's values: label sets that went away disappear). */
void ns_metrics_reset(ns_metrics *m, const char *name);

/* `k1="v1",k2="v2"` from n key/value pairs (keys given in sorted order), values escaped as the format requires
 * (\\, \", \n). buf is always NUL-terminated; returns buf. */
char *ns_metrics_labels(char *buf, size_t len, size_t n, const char *const *kv);

/* The whole exposition text (the caller's, free()), or NULL on allocation failure. */
char *ns_metrics_render(ns_metrics *m);

#endif
