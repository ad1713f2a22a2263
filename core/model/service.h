/*
 * Services (v1), as far as the scheduler reads them: the pod selector, from which kube-scheduler deduces the label
 * selector of its default topology spread constraints (sched/sched_default_spread.c).
 *
 * Memory: a service owns everything it points to; ns_service_free frees it too and accepts NULL.
 */
#ifndef NS_SERVICE_H
#define NS_SERVICE_H

#include <stdbool.h>

#include "model/labels.h"
#include "model/meta.h"

typedef struct ns_service {
    ns_meta meta;
    /* spec.selector. Absent (or null) selects no pod (an ExternalName or hand-managed Service); present and empty
     * selects every pod of the namespace but contributes no label. */
    bool has_selector;
    ns_labels selector;
} ns_service;

/* A zeroed service; NULL with NS_ERR_INTERNAL recorded on allocation failure. */
ns_service *ns_service_new(void);
void ns_service_free(ns_service *svc);
/* True when the service selects the pod's labels (same namespace is the caller's check). */
bool ns_service_selects(const ns_service *svc, const ns_labels *pod_labels);

#endif
