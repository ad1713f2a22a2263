/* Karpenter's events for the engine's decisions and the cluster's state (karpenter_events.h). */
#include "controller/karpenter_events.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "errors/ns_error.h"
#include "model/duration.h"
#include "model/labels.h"

const char *ns_kev_kind(ns_kev_object o)
{
    static const char *const kinds[] = {"Pod", "Node", "NodeClaim", "NodePool"};
    return kinds[o];
}

const char *ns_kev_api_version(ns_kev_object o)
{
    return o == NS_KEV_POD || o == NS_KEV_NODE ? "v1" : "karpenter.sh/v1";
}

static void init(ns_kev *ev, ns_kev_object o, const char *name, const char *type, const char *reason)
{
    memset(ev, 0, sizeof(*ev));
    ev->object = o;
    snprintf(ev->name, sizeof(ev->name), "%.255s", name);
    ev->type = type;
    ev->reason = reason;
    ev->dedupe_ms = NS_KEV_DEDUPE_DEFAULT_MS;
}

/* A pod event from a decision's "namespace/name". */
static void init_pod(ns_kev *ev, const char *ref, const char *type, const char *reason)
{
    const char *slash = strchr(ref, '/');
    init(ev, NS_KEV_POD, slash ? slash + 1 : ref, type, reason);
    size_t len = slash ? (size_t)(slash - ref) : 7;
    snprintf(ev->namespace_, sizeof(ev->namespace_), "%.*s", (int)(len < 255 ? len : 255), slash ? ref : "default");
}

/* The next item of a comma-separated list at *p into buf (at most 255 bytes); false at the end. */
static bool next_item(const char **p, char *buf)
{
    if (!**p)
        return false;
    size_t n = strcspn(*p, ",");
    snprintf(buf, 256, "%.*s", (int)(n < 255 ? n : 255), *p);
    *p += n + ((*p)[n] == ',');
    return true;
}

/* Go's time.Time %v, as Karpenter's messages print it: "2026-11-28 02:10:00 +0000 UTC". */
static void go_time(int64_t ms, char *buf, size_t len)
{
    time_t s = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&s, &tm);
    strftime(buf, len, "%Y-%m-%d %H:%M:%S +0000 UTC", &tm);
}

/* RFC 3339 at seconds precision, as time.RFC3339 formats a UTC time. */
static void rfc3339_s(int64_t ms, char *buf, size_t len)
{
    time_t s = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&s, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int nominated(const ns_decision *d, ns_kev_fn fn, void *ud)
{
    int rc = 0;
    char pod[256];
    for (const char *p = d->pods; rc == 0 && next_item(&p, pod);) {
        ns_kev ev;
        init_pod(&ev, pod, "Normal", "Nominated");
        snprintf(ev.message, sizeof(ev.message), "Pod should schedule on: nodeclaim/%s", d->nodeclaims);
        ev.rate_limited = true;
        rc = fn(ud, &ev);
    }
    return rc;
}

static int failed_scheduling(const ns_decision *d, ns_kev_fn fn, void *ud)
{
    ns_kev ev;
    init_pod(&ev, d->pods, "Warning", "FailedScheduling");
    snprintf(ev.message, sizeof(ev.message), "Failed to schedule pod, %s", d->reason);
    ev.dedupe_ms = 5 * 60 * 1000;
    return fn(ud, &ev);
}

static int insufficient_capacity(const ns_decision *d, ns_kev_fn fn, void *ud)
{
    if (strcmp(d->detail, "InsufficientCapacity") != 0)
        return 0;
    ns_kev ev;
    init(&ev, NS_KEV_NODECLAIM, d->nodeclaims, "Warning", "InsufficientCapacityError");
    snprintf(ev.message, sizeof(ev.message), "NodeClaim %s event: %s", d->nodeclaims, d->reason);
    return fn(ud, &ev);
}

/* The replacements a candidate waits for: each launches, and readiness is waited on. */
static int replacements(const ns_decision *d, const ns_nodeclaim *claim, ns_kev_fn fn, void *ud)
{
    const char *list = claim ? ns_labels_get(&claim->meta.annotations, NS_ANNOTATION_DISRUPTION_REPLACEMENTS) : NULL;
    char r[256];
    int rc = 0;
    for (const char *p = list ? list : ""; rc == 0 && next_item(&p, r);) {
        ns_kev ev;
        init(&ev, NS_KEV_NODECLAIM, r, "Normal", "DisruptionLaunching");
        snprintf(ev.message, sizeof(ev.message), "Launching NodeClaim: %s", d->reason);
        snprintf(ev.dedupe, sizeof(ev.dedupe), "%.255s", d->reason);
        if ((rc = fn(ud, &ev)) < 0)
            break;
        init(&ev, NS_KEV_NODECLAIM, r, "Normal", "DisruptionWaitingReadiness");
        snprintf(ev.message, sizeof(ev.message), "Waiting on readiness to continue disruption");
        rc = fn(ud, &ev);
    }
    return rc;
}

/* The candidates go (node and nodeclaim), after their replacements. */
static int disrupting(const ns_decision *d, const ns_cluster *c, ns_kev_fn fn, void *ud)
{
    int rc = 0;
    char claim_name[256];
    for (const char *p = d->nodeclaims; rc == 0 && next_item(&p, claim_name);) {
        const ns_nodeclaim *claim = ns_cluster_find_nodeclaim(c, claim_name);
        ns_kev ev;
        if (claim && claim->node_name) {
            init(&ev, NS_KEV_NODE, claim->node_name, "Normal", "DisruptionTerminating");
            snprintf(ev.message, sizeof(ev.message), "Disrupting Node: %s", d->reason);
            snprintf(ev.dedupe, sizeof(ev.dedupe), "%.255s", d->reason);
            if ((rc = fn(ud, &ev)) < 0)
                break;
        }
        init(&ev, NS_KEV_NODECLAIM, claim_name, "Normal", "DisruptionTerminating");
        snprintf(ev.message, sizeof(ev.message), "Disrupting NodeClaim: %s", d->reason);
        snprintf(ev.dedupe, sizeof(ev.dedupe), "%.255s", d->reason);
        if ((rc = fn(ud, &ev)) == 0)
            rc = replacements(d, claim, fn, ud);
    }
    return rc;
}

static int evicted(const ns_decision *d, const ns_cluster *c, ns_kev_fn fn, void *ud)
{
    ns_kev ev;
    char pod_ns[256], *slash;
    snprintf(pod_ns, sizeof(pod_ns), "%s", d->pods);
    if ((slash = strchr(pod_ns, '/')))
        *slash = 0;
    const ns_pod *pod = slash ? ns_cluster_find_pod(c, pod_ns, slash + 1) : NULL;
    const ns_nodeclaim *claim = ns_cluster_find_nodeclaim(c, d->nodeclaims);
    if (strcmp(d->method, "eviction") == 0) {
        /* Karpenter's eviction reason: the claim's DisruptionReason, else a forceful termination. */
        const ns_condition *why = claim ? ns_conditions_get(&claim->conditions, NS_COND_DISRUPTION_REASON) : NULL;
        init_pod(&ev, d->pods, "Normal", "Evicted");
        snprintf(ev.message, sizeof(ev.message), "Evicted pod: %s",
                 why && strcmp(why->status, "True") == 0 && why->reason ? why->reason : "Forceful Termination");
        return fn(ud, &ev);
    }
    char when[64] = "<nil>";
    if (claim && claim->meta.deletion_ms && claim->termination_grace_period_ms >= 0)
        go_time(claim->meta.deletion_ms + claim->termination_grace_period_ms, when, sizeof(when));
    init_pod(&ev, d->pods, "Normal", "Disrupted");
    long long tgps = pod && pod->termination_grace_period_s >= 0 ? (long long)pod->termination_grace_period_s : 30;
    snprintf(ev.message, sizeof(ev.message),
             "Deleting the pod to accommodate the terminationTime %s of the node. The pod was granted 0 seconds of "
             "grace-period of its %lld terminationGracePeriodSeconds. This bypasses the PDB of the pod and the "
             "do-not-disrupt annotation.",
             when, tgps);
    return fn(ud, &ev);
}

static size_t pods_left(const ns_cluster *c, const char *node)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n_pods; i++) {
        const ns_pod *p = c->pods[i];
        bool done = p->phase && (strcmp(p->phase, "Succeeded") == 0 || strcmp(p->phase, "Failed") == 0);
        n += p->node_name && strcmp(p->node_name, node) == 0 && !done;
    }
    return n;
}

static int failed_draining(const ns_decision *d, const ns_cluster *c, ns_kev_fn fn, void *ud)
{
    if (!d->nodes[0])
        return 0;
    ns_kev ev;
    init(&ev, NS_KEV_NODE, d->nodes, "Warning", "FailedDraining");
    /* A budget refuses the eviction (429); a do-not-disrupt pod is not evicted, so the drain waits on it. */
    if (strstr(d->reason, "do-not-disrupt"))
        snprintf(ev.message, sizeof(ev.message), "Failed to drain node, %zu pods are waiting to be evicted",
                 pods_left(c, d->nodes));
    else
        snprintf(ev.message, sizeof(ev.message), "Failed to drain node, evicting pod violates a PDB");
    return fn(ud, &ev);
}

/* The same event on the nodeclaim and, when it has one, its node (the AWS provider's interruption events). */
static int claim_and_node(const ns_decision *d, const char *type, const char *reason, const char *claim_msg,
                          const char *node_msg, ns_kev_fn fn, void *ud)
{
    ns_kev ev;
    char node[256];
    const char *nodes = d->nodes;
    init(&ev, NS_KEV_NODECLAIM, d->nodeclaims, type, reason);
    snprintf(ev.message, sizeof(ev.message), "%s", claim_msg);
    int rc = fn(ud, &ev);
    if (rc == 0 && next_item(&nodes, node)) {
        init(&ev, NS_KEV_NODE, node, type, reason);
        snprintf(ev.message, sizeof(ev.message), "%s", node_msg);
        rc = fn(ud, &ev);
    }
    return rc;
}

static int interruption(const ns_decision *d, ns_kev_fn fn, void *ud)
{
    static const struct {
        const char *kind, *reason, *message;
    } kinds[] = {
        {"SpotInterruption", "SpotInterrupted", "Spot interruption warning was triggered"},
        {"ScheduledChange", "InstanceUnhealthy", "An unhealthy warning was triggered for the instance"},
        {"InstanceStopping", "InstanceStopping", "Instance is stopping"},
        {"InstanceTerminated", "InstanceTerminating", "Instance is terminating"},
    };
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        if (strcmp(d->method, kinds[i].kind) != 0)
            continue;
        int rc = claim_and_node(d, "Warning", kinds[i].reason, kinds[i].message, kinds[i].message, fn, ud);
        /* every one of these kinds cordons and drains the node (Karpenter's CordonAndDrain action) */
        return rc < 0 ? rc
                      : claim_and_node(d, "Warning", "TerminatingOnInterruption",
                                       "Interruption triggered termination for the NodeClaim",
                                       "Interruption triggered termination for the Node", fn, ud);
    }
    return 0;
}

/* Karpenter's Blocked: the node first, then the nodeclaim, with the reason's sentence. */
static int disruption_blocked(const ns_decision *d, ns_kev_fn fn, void *ud)
{
    ns_kev ev;
    int rc = 0;
    if (d->nodes[0]) {
        init(&ev, NS_KEV_NODE, d->nodes, "Normal", "DisruptionBlocked");
        snprintf(ev.message, sizeof(ev.message), "%s", d->reason);
        rc = fn(ud, &ev);
    }
    init(&ev, NS_KEV_NODECLAIM, d->nodeclaims, "Normal", "DisruptionBlocked");
    snprintf(ev.message, sizeof(ev.message), "%s", d->reason);
    return rc < 0 ? rc : fn(ud, &ev);
}

/* Karpenter's Unconsolidatable: the node, then the nodeclaim, each de-duplicated by its uid alone for 15 minutes
 * (the message is no part of the key: a new reason within the window is not published). */
static int unconsolidatable(const ns_decision *d, ns_kev_fn fn, void *ud)
{
    ns_kev ev;
    init(&ev, NS_KEV_NODE, d->nodes, "Normal", "Unconsolidatable");
    snprintf(ev.message, sizeof(ev.message), "%s", d->reason);
    ev.dedupe_ms = NS_KEV_DEDUPE_UNCONSOLIDATABLE_MS;
    int rc = fn(ud, &ev);
    if (rc < 0)
        return rc;
    init(&ev, NS_KEV_NODECLAIM, d->nodeclaims, "Normal", "Unconsolidatable");
    snprintf(ev.message, sizeof(ev.message), "%s", d->reason);
    ev.dedupe_ms = NS_KEV_DEDUPE_UNCONSOLIDATABLE_MS;
    return fn(ud, &ev);
}

/* Karpenter's NodeRepairBlocked (node/health/events.go): every event is about the node, one per DedupeValue (the
 * node's uid, the nodeclaim's and, for a claim of a NodePool, the pool's), each kept 15 minutes; client-go's recorder
 * then folds the identical ones into one Event whose count says how many. The decision's detail is the pool ("" for
 * a claim of no pool) and its reason Karpenter's sentence. */
static int repair_blocked(const ns_decision *d, ns_kev_fn fn, void *ud)
{
    const char *values[] = {"", d->nodeclaims, d->detail};
    const char *kinds[] = {"", "NodeClaim", "NodePool"};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < 3; i++) {
        if (i > 0 && !values[i][0])
            continue;
        ns_kev ev;
        init(&ev, NS_KEV_NODE, d->nodes, "Warning", "NodeRepairBlocked");
        snprintf(ev.message, sizeof(ev.message), "%s", d->reason);
        /* names stand for the uids (this layer has none): a NodePool re-created under its name within the window
         * stays de-duplicated */
        if (i > 0)
            snprintf(ev.dedupe, sizeof(ev.dedupe), "%s/%.240s", kinds[i], values[i]);
        ev.dedupe_ms = NS_KEV_DEDUPE_REPAIR_BLOCKED_MS;
        rc = fn(ud, &ev);
    }
    return rc;
}

int ns_kev_from_decision(const ns_decision *d, const ns_cluster *c, ns_kev_fn fn, void *ud)
{
    switch (d->kind) {
    case NS_DECISION_CREATED_NODECLAIM:
        return nominated(d, fn, ud);
    case NS_DECISION_UNSCHEDULABLE_POD:
        return failed_scheduling(d, fn, ud);
    case NS_DECISION_LAUNCH_FAILED:
        return insufficient_capacity(d, fn, ud);
    case NS_DECISION_DISRUPTING:
        /* interruption and expiration are not disruption commands in Karpenter: they publish their own events */
        return strcmp(d->method, "interruption") == 0 || strcmp(d->method, "expired") == 0 ? 0
                                                                                            : disrupting(d, c, fn, ud);
    case NS_DECISION_EVICTED_POD:
        return evicted(d, c, fn, ud);
    case NS_DECISION_EVICTION_BLOCKED:
        return failed_draining(d, c, fn, ud);
    case NS_DECISION_INTERRUPTION:
        return interruption(d, fn, ud);
    case NS_DECISION_REBALANCE_RECORDED:
        return claim_and_node(d, "Normal", "SpotRebalanceRecommendation", "Spot rebalance recommendation was triggered",
                              "Spot rebalance recommendation was triggered", fn, ud);
    case NS_DECISION_DISRUPTION_BLOCKED:
        return disruption_blocked(d, fn, ud);
    case NS_DECISION_UNCONSOLIDATABLE:
        return unconsolidatable(d, fn, ud);
    case NS_DECISION_REPAIR_BLOCKED:
        return repair_blocked(d, fn, ud);
    default:
        return 0;
    }
}

/* A deleting claim with a grace period: every pod goes by its end. */
static int grace_period_expiring(const ns_nodeclaim *claim, ns_kev_fn fn, void *ud)
{
    if (!claim->meta.deletion_ms || claim->termination_grace_period_ms < 0)
        return 0;
    char when[40];
    rfc3339_s(claim->meta.deletion_ms + claim->termination_grace_period_ms, when, sizeof(when));
    ns_kev ev;
    int rc = 0;
    if (claim->node_name) {
        init(&ev, NS_KEV_NODE, claim->node_name, "Warning", "TerminationGracePeriodExpiring");
        snprintf(ev.message, sizeof(ev.message), "All pods will be deleted by %s", when);
        rc = fn(ud, &ev);
    }
    init(&ev, NS_KEV_NODECLAIM, claim->meta.name, "Warning", "TerminationGracePeriodExpiring");
    snprintf(ev.message, sizeof(ev.message), "All pods will be deleted by %s", when);
    return rc < 0 ? rc : fn(ud, &ev);
}

/* Karpenter reads a pod's karpenter.sh/do-not-disrupt each time it considers the pod's node. */
static int do_not_disrupt(const ns_pod *p, int64_t now, ns_kev_fn fn, void *ud)
{
    const char *v = ns_labels_get(&p->meta.annotations, NS_ANNOTATION_DO_NOT_DISRUPT);
    if (!v || strcmp(v, "true") == 0)
        return 0;
    ns_kev ev;
    char ref[600];
    snprintf(ref, sizeof(ref), "%s/%s", p->meta.namespace_ ? p->meta.namespace_ : "default", p->meta.name);
    if (p->do_not_disrupt_ms <= 0) {
        /* the decoder left it at 0: not a duration, or not a positive one (Karpenter's two messages) */
        char why[400];
        int64_t ms = 0;
        if (ns_duration_parse(v, false, NS_ANNOTATION_DO_NOT_DISRUPT, &ms) < 0)
            snprintf(why, sizeof(why), "failed to parse \"%.100s\" as a duration: time: invalid duration \"%.100s\"",
                     v, v);
        else
            snprintf(why, sizeof(why), "duration \"%.100s\" must be positive", v);
        ns_error_clear();
        init_pod(&ev, ref, "Warning", "InvalidDoNotDisruptAnnotation");
        snprintf(ev.message, sizeof(ev.message), "Invalid karpenter.sh/do-not-disrupt annotation: %s, ignoring annotation",
                 why);
        snprintf(ev.dedupe, sizeof(ev.dedupe), "%.255s", why);
        return fn(ud, &ev);
    }
    if (p->start_ms <= 0)
        return 0; /* protected, with no time to announce */
    int64_t until = p->start_ms + p->do_not_disrupt_ms;
    if (now < until) {
        char when[40];
        rfc3339_s(until, when, sizeof(when));
        init_pod(&ev, ref, "Normal", "DoNotDisruptUntil");
        snprintf(ev.message, sizeof(ev.message), "The karpenter.sh/do-not-disrupt grace period will elapse at %s",
                 when);
        snprintf(ev.dedupe, sizeof(ev.dedupe), "%s", when);
    } else {
        init_pod(&ev, ref, "Normal", "DoNotDisruptGracePeriodElapsed");
        snprintf(ev.message, sizeof(ev.message),
                 "The karpenter.sh/do-not-disrupt grace period has elapsed, pod is now disruptable");
    }
    return fn(ud, &ev);
}

int ns_kev_from_cluster(const ns_cluster *c, int64_t now_ms, ns_kev_fn fn, void *ud)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < c->n_nodeclaims; i++)
        rc = grace_period_expiring(c->nodeclaims[i], fn, ud);
    for (size_t i = 0; rc == 0 && i < c->n_pods; i++) {
        const ns_pod *p = c->pods[i];
        if (!p->node_name || !ns_labels_get(&p->meta.annotations, NS_ANNOTATION_DO_NOT_DISRUPT))
            continue;
        const ns_node *n = ns_cluster_find_node(c, p->node_name);
        /* only pods on nodes a NodeClaim owns: Karpenter considers no other node */
        if (n && ns_labels_get(&n->meta.labels, NS_LABEL_NODEPOOL))
            rc = do_not_disrupt(p, now_ms, fn, ud);
    }
    return rc;
}
