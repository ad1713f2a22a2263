/* Karpenter's events onto the API server (controller_events.h). */
#include "controller/controller_events.h"

#include <stdlib.h>

#include "clock/ns_clock.h"
#include "controller/karpenter_events.h"
#include "controller/karpenter_recorder.h"
#include "errors/ns_error.h"
#include "kube/kube_events.h"
#include "log/ns_log.h"

struct ns_controller_events {
    ns_mirror *mirror;
    ns_kube_recorder *recorder;
    ns_kev_filter *filter;
    size_t decisions_seen;
};

int ns_controller_events_new(ns_kube_client *c, ns_mirror *m, ns_controller_events **out)
{
    ns_controller_events *ce = calloc(1, sizeof(*ce));
    if (!ce)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory creating the event publisher");
    ce->mirror = m;
    int rc = ns_kube_recorder_new(c, "karpenter", &ce->recorder);
    if (rc == 0 && !(ce->filter = ns_kev_filter_new()))
        rc = NS_ERR_INTERNAL;
    if (rc < 0) {
        ns_controller_events_free(ce);
        return rc;
    }
    *out = ce;
    return 0;
}

void ns_controller_events_free(ns_controller_events *ce)
{
    if (!ce)
        return;
    ns_kube_recorder_free(ce->recorder);
    ns_kev_filter_free(ce->filter);
    free(ce);
}

static const ns_mirror_kind MIRROR_KIND[] = {
    [NS_KEV_POD] = NS_MIRROR_POD,
    [NS_KEV_NODE] = NS_MIRROR_NODE,
    [NS_KEV_NODECLAIM] = NS_MIRROR_NODECLAIM,
    [NS_KEV_NODEPOOL] = NS_MIRROR_NODEPOOL,
};

static int publish(void *ud, const ns_kev *ev)
{
    ns_controller_events *ce = ud;
    const char *ns = ev->namespace_[0] ? ev->namespace_ : NULL;
    char uid[128];
    /* an object already gone (a deleted Node) is still named; kubectl describe matches by uid only when there is one */
    bool has_uid = ns_mirror_uid(ce->mirror, MIRROR_KIND[ev->object], ns, ev->name, uid, sizeof(uid)) == 0;
    ns_error_clear();
    int rc = ns_kev_filter_admit(ce->filter, ev, has_uid ? uid : NULL, ns_clock_now_ms());
    if (rc <= 0)
        return rc;
    ns_kube_event_ref ref = {.api_version = ns_kev_api_version(ev->object), .kind = ns_kev_kind(ev->object),
                             .namespace_ = ns, .name = ev->name, .uid = has_uid ? uid : NULL};
    if (ns_kube_record(ce->recorder, &ref, ev->type, ev->reason, ev->message, NULL) < 0) {
        ns_log(NS_LOG_WARN, "events", "failed publishing event", "reason", ev->reason, ns_kev_kind(ev->object),
               ev->name, "error", ns_error_message(), NULL);
        ns_error_clear();
    }
    return 0;
}

int ns_controller_events_publish(ns_controller_events *ce, ns_engine *e, const ns_cluster *c)
{
    size_t n = 0;
    const ns_decision *d = ns_engine_decisions(e, &n);
    int rc = 0;
    for (size_t i = ce->decisions_seen; rc == 0 && i < n; i++)
        rc = ns_kev_from_decision(&d[i], c, publish, ce);
    ce->decisions_seen = n;
    return rc < 0 ? rc : ns_kev_from_cluster(c, ns_clock_now_ms(), publish, ce);
}
