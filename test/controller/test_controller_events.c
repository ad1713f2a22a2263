/* Karpenter's events for the engine's decisions (karpenter_events.h), checked against the events Karpenter's
 * controllers publish (events.go of pkg/controllers/..., the AWS provider's interruption events, pkg/utils/pod/events.go:
 * involved object, type, reason, message text), and Karpenter's recorder in front of client-go's (de-duplication by
 * reason, object and values within the timeout; the nomination token bucket). What client-go's recorder then does
 * (one Event, count bumped) is test/kube/client's events_are_deduplicated against the API server. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "controller/karpenter_events.h"
#include "controller/karpenter_recorder.h"
#include "errors/ns_error.h"
#include "manifest/loader.h"

#define T0 1794997600000LL /* 2026-11-18T10:26:40Z */

static const char CLUSTER[] =
    "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  labels: {karpenter.sh/nodepool: default}\n---\n"
    "apiVersion: v1\nkind: Node\nmetadata:\n  name: static-1\n---\n"
    "apiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata:\n  name: default-abcde\n"
    "  deletionTimestamp: \"2026-11-18T10:00:00Z\"\n"
    "  annotations: {nodesmith.io/disruption-replacements: \"default-r1,default-r2\"}\n"
    "spec:\n  terminationGracePeriod: 1h\n  nodeClassRef: {group: nodesmith.io, kind: SimNodeClass, name: default}\n"
    "  requirements: []\n"
    "status:\n  nodeName: n1\n  conditions:\n"
    "  - {type: DisruptionReason, status: \"True\", reason: Underutilized, lastTransitionTime: \"2026-11-18T10:00:00Z\"}\n"
    "---\n"
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web-1\n  namespace: shop\n"
    "spec:\n  nodeName: n1\n  terminationGracePeriodSeconds: 45\n  containers: [{name: c, image: i}]\n---\n"
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: bad\n  namespace: shop\n"
    "  annotations: {karpenter.sh/do-not-disrupt: ten}\n"
    "spec:\n  nodeName: n1\n  containers: [{name: c, image: i}]\n---\n"
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: zero\n  namespace: shop\n"
    "  annotations: {karpenter.sh/do-not-disrupt: 0s}\n"
    "spec:\n  nodeName: n1\n  containers: [{name: c, image: i}]\n---\n"
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: young\n  namespace: shop\n"
    "  annotations: {karpenter.sh/do-not-disrupt: 10m}\n"
    "spec:\n  nodeName: n1\n  containers: [{name: c, image: i}]\nstatus:\n  startTime: \"2026-11-18T10:20:00Z\"\n---\n"
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: old\n  namespace: shop\n"
    "  annotations: {karpenter.sh/do-not-disrupt: 1m}\n"
    "spec:\n  nodeName: n1\n  containers: [{name: c, image: i}]\nstatus:\n  startTime: \"2026-11-18T10:00:00Z\"\n---\n"
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: elsewhere\n  namespace: shop\n"
    "  annotations: {karpenter.sh/do-not-disrupt: ten}\n"
    "spec:\n  nodeName: static-1\n  containers: [{name: c, image: i}]\n";

typedef struct got {
    ns_kev items[32];
    size_t n;
} got;

static int collect(void *ud, const ns_kev *ev)
{
    got *g = ud;
    ck_assert_uint_lt(g->n, 32);
    g->items[g->n++] = *ev;
    return 0;
}

static ns_cluster *cluster(void)
{
    ns_cluster *c = ns_cluster_new();
    ck_assert_ptr_nonnull(c);
    ck_assert_msg(ns_manifest_load_string(c, "events.yaml", CLUSTER, strlen(CLUSTER)) == 0, "%s", ns_error_message());
    return c;
}

static ns_decision decision(ns_decision_kind kind, const char *method, const char *reason, const char *nodes,
                            const char *claims, const char *pods, const char *detail)
{
    ns_decision d = {.time_ms = T0, .kind = kind, .message = ns_decision_kind_message(kind)};
    d.method = (char *)method;
    d.reason = (char *)reason;
    d.nodes = (char *)nodes;
    d.nodeclaims = (char *)claims;
    d.pods = (char *)pods;
    d.detail = (char *)detail;
    return d;
}

static got events_of(const ns_cluster *c, ns_decision d)
{
    got g = {.n = 0};
    ck_assert_int_eq(ns_kev_from_decision(&d, c, collect, &g), 0);
    return g;
}

static void check(const ns_kev *ev, ns_kev_object o, const char *ns, const char *name, const char *type,
                  const char *reason, const char *message)
{
    ck_assert_str_eq(ns_kev_kind(ev->object), ns_kev_kind(o));
    ck_assert_str_eq(ev->namespace_, ns);
    ck_assert_str_eq(ev->name, name);
    ck_assert_str_eq(ev->type, type);
    ck_assert_str_eq(ev->reason, reason);
    ck_assert_str_eq(ev->message, message);
}

START_TEST(provisioning_events)
{
    ns_cluster *c = cluster();
    got g = events_of(c, decision(NS_DECISION_CREATED_NODECLAIM, "", "", "", "default-x1y2z", "shop/web-1,shop/web-2",
                                  "nodepool default"));
    ck_assert_uint_eq(g.n, 2);
    check(&g.items[0], NS_KEV_POD, "shop", "web-1", "Normal", "Nominated", "Pod should schedule on: nodeclaim/default-x1y2z");
    check(&g.items[1], NS_KEV_POD, "shop", "web-2", "Normal", "Nominated", "Pod should schedule on: nodeclaim/default-x1y2z");
    ck_assert(g.items[0].rate_limited);
    ck_assert_str_eq(ns_kev_api_version(g.items[0].object), "v1");

    g = events_of(c, decision(NS_DECISION_UNSCHEDULABLE_POD, "", "incompatible with nodepool \"default\"", "", "",
                              "shop/web-3", ""));
    ck_assert_uint_eq(g.n, 1);
    check(&g.items[0], NS_KEV_POD, "shop", "web-3", "Warning", "FailedScheduling",
          "Failed to schedule pod, incompatible with nodepool \"default\"");
    ck_assert_int_eq(g.items[0].dedupe_ms, 5 * 60 * 1000);
    ck_assert(!g.items[0].rate_limited);

    g = events_of(c, decision(NS_DECISION_LAUNCH_FAILED, "", "no capacity for m5.large", "", "default-x1y2z", "",
                              "InsufficientCapacity"));
    ck_assert_uint_eq(g.n, 1);
    check(&g.items[0], NS_KEV_NODECLAIM, "", "default-x1y2z", "Warning", "InsufficientCapacityError",
          "NodeClaim default-x1y2z event: no capacity for m5.large");
    ck_assert_str_eq(ns_kev_api_version(g.items[0].object), "karpenter.sh/v1");
    /* other launch failures publish nothing (Karpenter logs them) */
    g = events_of(c, decision(NS_DECISION_LAUNCH_FAILED, "", "denied", "", "default-x1y2z", "", "NS_ERR_AUTH"));
    ck_assert_uint_eq(g.n, 0);
    ns_cluster_free(c);
}
END_TEST

START_TEST(disruption_events)
{
    ns_cluster *c = cluster();
    got g = events_of(c, decision(NS_DECISION_DISRUPTING, "consolidation", "Underutilized", "n1", "default-abcde", "",
                                  "1 candidate(s)"));
    ck_assert_uint_eq(g.n, 6);
    check(&g.items[0], NS_KEV_NODE, "", "n1", "Normal", "DisruptionTerminating", "Disrupting Node: Underutilized");
    check(&g.items[1], NS_KEV_NODECLAIM, "", "default-abcde", "Normal", "DisruptionTerminating",
          "Disrupting NodeClaim: Underutilized");
    check(&g.items[2], NS_KEV_NODECLAIM, "", "default-r1", "Normal", "DisruptionLaunching",
          "Launching NodeClaim: Underutilized");
    check(&g.items[3], NS_KEV_NODECLAIM, "", "default-r1", "Normal", "DisruptionWaitingReadiness",
          "Waiting on readiness to continue disruption");
    check(&g.items[4], NS_KEV_NODECLAIM, "", "default-r2", "Normal", "DisruptionLaunching",
          "Launching NodeClaim: Underutilized");
    /* expiration and interruption are no disruption commands */
    ck_assert_uint_eq(events_of(c, decision(NS_DECISION_DISRUPTING, "expired", "Expired", "n1", "default-abcde", "",
                                            "")).n, 0);

    g = events_of(c, decision(NS_DECISION_EVICTED_POD, "eviction", "consolidation", "n1", "default-abcde", "shop/web-1",
                              ""));
    ck_assert_uint_eq(g.n, 1);
    check(&g.items[0], NS_KEV_POD, "shop", "web-1", "Normal", "Evicted", "Evicted pod: Underutilized");
    /* without a DisruptionReason the eviction is a forceful termination */
    g = events_of(c, decision(NS_DECISION_EVICTED_POD, "eviction", "deletion", "n9", "default-other", "shop/web-1", ""));
    check(&g.items[0], NS_KEV_POD, "shop", "web-1", "Normal", "Evicted", "Evicted pod: Forceful Termination");

    g = events_of(c, decision(NS_DECISION_EVICTED_POD, "forced deletion", "terminationGracePeriod expired", "n1",
                              "default-abcde", "shop/web-1", ""));
    ck_assert_uint_eq(g.n, 1);
    check(&g.items[0], NS_KEV_POD, "shop", "web-1", "Normal", "Disrupted",
          "Deleting the pod to accommodate the terminationTime 2026-11-18 11:00:00 +0000 UTC of the node. The pod was "
          "granted 0 seconds of grace-period of its 45 terminationGracePeriodSeconds. This bypasses the PDB of the "
          "pod and the do-not-disrupt annotation.");

    g = events_of(c, decision(NS_DECISION_EVICTION_BLOCKED, "consolidation", "Cannot evict pod as it would violate the "
                              "pod's disruption budget.", "n1", "default-abcde", "shop/web-1", ""));
    ck_assert_uint_eq(g.n, 1);
    check(&g.items[0], NS_KEV_NODE, "", "n1", "Warning", "FailedDraining",
          "Failed to drain node, evicting pod violates a PDB");
    g = events_of(c, decision(NS_DECISION_EVICTION_BLOCKED, "deletion", "pod is annotated karpenter.sh/do-not-disrupt",
                              "n1", "default-abcde", "shop/young", ""));
    check(&g.items[0], NS_KEV_NODE, "", "n1", "Warning", "FailedDraining",
          "Failed to drain node, 5 pods are waiting to be evicted");

    g = events_of(c, decision(NS_DECISION_DISRUPTION_BLOCKED, "", "Pod has \"karpenter.sh/do-not-disrupt\" annotation",
                              "n1", "default-abcde", "shop/young", ""));
    ck_assert_uint_eq(g.n, 2);
    check(&g.items[0], NS_KEV_NODE, "", "n1", "Normal", "DisruptionBlocked",
          "Pod has \"karpenter.sh/do-not-disrupt\" annotation");
    check(&g.items[1], NS_KEV_NODECLAIM, "", "default-abcde", "Normal", "DisruptionBlocked",
          "Pod has \"karpenter.sh/do-not-disrupt\" annotation");

    /* Unconsolidatable: node then nodeclaim, de-duplicated by the object alone for 15 minutes */
    g = events_of(c, decision(NS_DECISION_UNCONSOLIDATABLE, "", "Can't replace with a cheaper node", "n1",
                              "default-abcde", "", ""));
    ck_assert_uint_eq(g.n, 2);
    check(&g.items[0], NS_KEV_NODE, "", "n1", "Normal", "Unconsolidatable", "Can't replace with a cheaper node");
    check(&g.items[1], NS_KEV_NODECLAIM, "", "default-abcde", "Normal", "Unconsolidatable",
          "Can't replace with a cheaper node");
    for (size_t i = 0; i < 2; i++) {
        ck_assert_int_eq(g.items[i].dedupe_ms, 15 * 60 * 1000);
        ck_assert_str_eq(g.items[i].dedupe, "");
    }
    ns_cluster_free(c);
}
END_TEST

/* Karpenter's node/health events.go: three events on the node, one per DedupeValue (node, nodeclaim, nodepool; no
 * pool for a claim of none), 15 minutes each, with the health controller's sentence. */
START_TEST(repair_blocked_events)
{
    ns_cluster *c = cluster();
    got g = events_of(c, decision(NS_DECISION_REPAIR_BLOCKED, "repair", "more than 20% nodes are unhealthy in the "
                                  "nodepool", "n1", "default-abcde", "", "default"));
    ck_assert_uint_eq(g.n, 3);
    const char *dedupe[] = {"", "NodeClaim/default-abcde", "NodePool/default"};
    ns_kev_filter *f = ns_kev_filter_new();
    for (size_t i = 0; i < 3; i++) {
        check(&g.items[i], NS_KEV_NODE, "", "n1", "Warning", "NodeRepairBlocked",
              "more than 20% nodes are unhealthy in the nodepool");
        ck_assert_str_eq(g.items[i].dedupe, dedupe[i]);
        ck_assert_int_eq(g.items[i].dedupe_ms, 15 * 60 * 1000);
        /* three keys: each published once within the 15 minutes, again after them */
        ck_assert_int_eq(ns_kev_filter_admit(f, &g.items[i], "uid-n1", T0), 1);
    }
    for (size_t i = 0; i < 3; i++)
        ck_assert_int_eq(ns_kev_filter_admit(f, &g.items[i], "uid-n1", T0 + 15 * 60 * 1000 - 1), 0);
    for (size_t i = 0; i < 3; i++)
        ck_assert_int_eq(ns_kev_filter_admit(f, &g.items[i], "uid-n1", T0 + 15 * 60 * 1000), 1);
    ns_kev_filter_free(f);
    g = events_of(c, decision(NS_DECISION_REPAIR_BLOCKED, "repair", "more then 20% nodes are unhealthy in the cluster",
                              "static-1", "standalone", "", ""));
    ck_assert_uint_eq(g.n, 2);
    check(&g.items[0], NS_KEV_NODE, "", "static-1", "Warning", "NodeRepairBlocked",
          "more then 20% nodes are unhealthy in the cluster");
    check(&g.items[1], NS_KEV_NODE, "", "static-1", "Warning", "NodeRepairBlocked",
          "more then 20% nodes are unhealthy in the cluster");
    ck_assert_str_eq(g.items[0].dedupe, "");
    ck_assert_str_eq(g.items[1].dedupe, "NodeClaim/standalone");
    ns_cluster_free(c);
}
END_TEST

START_TEST(interruption_events)
{
    ns_cluster *c = cluster();
    got g = events_of(c, decision(NS_DECISION_INTERRUPTION, "SpotInterruption", "", "n1", "default-abcde", "",
                                  "deadline 2026-11-18T10:28:40.000Z"));
    ck_assert_uint_eq(g.n, 4);
    check(&g.items[0], NS_KEV_NODECLAIM, "", "default-abcde", "Warning", "SpotInterrupted",
          "Spot interruption warning was triggered");
    check(&g.items[1], NS_KEV_NODE, "", "n1", "Warning", "SpotInterrupted", "Spot interruption warning was triggered");
    check(&g.items[2], NS_KEV_NODECLAIM, "", "default-abcde", "Warning", "TerminatingOnInterruption",
          "Interruption triggered termination for the NodeClaim");
    check(&g.items[3], NS_KEV_NODE, "", "n1", "Warning", "TerminatingOnInterruption",
          "Interruption triggered termination for the Node");
    g = events_of(c, decision(NS_DECISION_INTERRUPTION, "InstanceStopping", "", "", "default-abcde", "", ""));
    ck_assert_uint_eq(g.n, 2); /* no node: the claim's events only */
    check(&g.items[0], NS_KEV_NODECLAIM, "", "default-abcde", "Warning", "InstanceStopping", "Instance is stopping");
    g = events_of(c, decision(NS_DECISION_INTERRUPTION, "InstanceTerminated", "", "n1", "default-abcde", "", ""));
    check(&g.items[0], NS_KEV_NODECLAIM, "", "default-abcde", "Warning", "InstanceTerminating",
          "Instance is terminating");
    g = events_of(c, decision(NS_DECISION_INTERRUPTION, "ScheduledChange", "", "n1", "default-abcde", "", ""));
    check(&g.items[1], NS_KEV_NODE, "", "n1", "Warning", "InstanceUnhealthy",
          "An unhealthy warning was triggered for the instance");
    g = events_of(c, decision(NS_DECISION_REBALANCE_RECORDED, "RebalanceRecommendation", "", "n1", "default-abcde", "",
                              ""));
    ck_assert_uint_eq(g.n, 2);
    check(&g.items[0], NS_KEV_NODECLAIM, "", "default-abcde", "Normal", "SpotRebalanceRecommendation",
          "Spot rebalance recommendation was triggered");
    ns_cluster_free(c);
}
END_TEST

START_TEST(cluster_state_events)
{
    ns_cluster *c = cluster();
    got g = {.n = 0};
    ck_assert_int_eq(ns_kev_from_cluster(c, T0, collect, &g), 0);
    ck_assert_uint_eq(g.n, 6);
    check(&g.items[0], NS_KEV_NODE, "", "n1", "Warning", "TerminationGracePeriodExpiring",
          "All pods will be deleted by 2026-11-18T11:00:00Z");
    check(&g.items[1], NS_KEV_NODECLAIM, "", "default-abcde", "Warning", "TerminationGracePeriodExpiring",
          "All pods will be deleted by 2026-11-18T11:00:00Z");
    check(&g.items[2], NS_KEV_POD, "shop", "bad", "Warning", "InvalidDoNotDisruptAnnotation",
          "Invalid karpenter.sh/do-not-disrupt annotation: failed to parse \"ten\" as a duration: time: invalid "
          "duration \"ten\", ignoring annotation");
    check(&g.items[3], NS_KEV_POD, "shop", "zero", "Warning", "InvalidDoNotDisruptAnnotation",
          "Invalid karpenter.sh/do-not-disrupt annotation: duration \"0s\" must be positive, ignoring annotation");
    check(&g.items[4], NS_KEV_POD, "shop", "young", "Normal", "DoNotDisruptUntil",
          "The karpenter.sh/do-not-disrupt grace period will elapse at 2026-11-18T10:30:00Z");
    ck_assert_str_eq(g.items[4].dedupe, "2026-11-18T10:30:00Z");
    check(&g.items[5], NS_KEV_POD, "shop", "old", "Normal", "DoNotDisruptGracePeriodElapsed",
          "The karpenter.sh/do-not-disrupt grace period has elapsed, pod is now disruptable");
    /* the pod on a node no NodeClaim owns is not Karpenter's to judge */
    for (size_t i = 0; i < g.n; i++)
        ck_assert_str_ne(g.items[i].name, "elsewhere");
    ns_cluster_free(c);
}
END_TEST

static ns_kev event(const char *reason, const char *name, int64_t dedupe_ms, bool limited)
{
    ns_kev ev;
    memset(&ev, 0, sizeof(ev));
    ev.object = NS_KEV_POD;
    strcpy(ev.namespace_, "shop");
    strcpy(ev.name, name);
    ev.type = "Normal";
    ev.reason = reason;
    strcpy(ev.message, "m");
    ev.dedupe_ms = dedupe_ms;
    ev.rate_limited = limited;
    return ev;
}

START_TEST(recorder_deduplicates_within_the_timeout)
{
    ns_kev_filter *f = ns_kev_filter_new();
    ns_kev ev = event("FailedScheduling", "web-1", 5 * 60 * 1000, false);
    ck_assert_int_eq(ns_kev_filter_admit(f, &ev, "uid-1", T0), 1);
    ck_assert_int_eq(ns_kev_filter_admit(f, &ev, "uid-1", T0 + 60000), 0);
    /* the message is not part of the key: Karpenter keys by reason and DedupeValues */
    strcpy(ev.message, "another message");
    ck_assert_int_eq(ns_kev_filter_admit(f, &ev, "uid-1", T0 + 299999), 0);
    ck_assert_int_eq(ns_kev_filter_admit(f, &ev, "uid-1", T0 + 300000), 1);
    /* another object of the same name (a new uid), another reason, other values: each its own */
    ck_assert_int_eq(ns_kev_filter_admit(f, &ev, "uid-2", T0 + 300000), 1);
    ns_kev other = event("Nominated", "web-1", NS_KEV_DEDUPE_DEFAULT_MS, false);
    ck_assert_int_eq(ns_kev_filter_admit(f, &other, "uid-1", T0 + 300000), 1);
    ns_kev until = event("DoNotDisruptUntil", "web-1", NS_KEV_DEDUPE_DEFAULT_MS, false);
    strcpy(until.dedupe, "2026-11-18T10:30:00Z");
    ck_assert_int_eq(ns_kev_filter_admit(f, &until, "uid-1", T0), 1);
    strcpy(until.dedupe, "2026-11-18T10:40:00Z");
    ck_assert_int_eq(ns_kev_filter_admit(f, &until, "uid-1", T0), 1);
    ck_assert_int_eq(ns_kev_filter_admit(f, &until, "uid-1", T0 + 1000), 0);
    ns_kev_filter_free(f);
}
END_TEST

START_TEST(nominations_share_a_token_bucket)
{
    ns_kev_filter *f = ns_kev_filter_new();
    int admitted = 0;
    char name[32];
    for (int i = 0; i < 30; i++) {
        snprintf(name, sizeof(name), "web-%d", i);
        ns_kev ev = event("Nominated", name, NS_KEV_DEDUPE_DEFAULT_MS, true);
        admitted += ns_kev_filter_admit(f, &ev, NULL, T0);
    }
    ck_assert_int_eq(admitted, 10); /* the burst */
    /* 5 per second after that */
    admitted = 0;
    for (int i = 30; i < 60; i++) {
        snprintf(name, sizeof(name), "web-%d", i);
        ns_kev ev = event("Nominated", name, NS_KEV_DEDUPE_DEFAULT_MS, true);
        admitted += ns_kev_filter_admit(f, &ev, NULL, T0 + 1000);
    }
    ck_assert_int_eq(admitted, 5);
    /* a dropped nomination stays remembered, as in Karpenter (the cache is checked first) */
    ns_kev again = event("Nominated", "web-0", NS_KEV_DEDUPE_DEFAULT_MS, true);
    ns_kev dropped = event("Nominated", "web-59", NS_KEV_DEDUPE_DEFAULT_MS, true);
    ck_assert_int_eq(ns_kev_filter_admit(f, &again, NULL, T0 + 10000), 0);
    ck_assert_int_eq(ns_kev_filter_admit(f, &dropped, NULL, T0 + 10000), 0);
    ns_kev_filter_free(f);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("controller-events");
    TCase *tc = tcase_create("events");
    tcase_add_test(tc, provisioning_events);
    tcase_add_test(tc, disruption_events);
    tcase_add_test(tc, repair_blocked_events);
    tcase_add_test(tc, interruption_events);
    tcase_add_test(tc, cluster_state_events);
    tcase_add_test(tc, recorder_deduplicates_within_the_timeout);
    tcase_add_test(tc, nominations_share_a_token_bucket);
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
