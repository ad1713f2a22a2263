/*
 * Which pods provisioning considers, read from manifests, as Karpenter 1.14's IsProvisionable (pkg/utils/pod/
 * scheduling.go) decides: FailedToSchedule (a PodScheduled condition whose reason is Unschedulable; its status is not
 * read), no spec.nodeName, not IsPreempting (no status.nominatedNodeName), not owned by a DaemonSet or a Node. It does
 * not read deletionTimestamp, so a terminating pod that failed to schedule is provisionable. A manifest whose status
 * has neither conditions nor a nominatedNodeName keeps nodesmith's rule: an unbound pod is pending.
 */
#include <check.h>
#include <string.h>

#include "errors/ns_error.h"
#include "manifest/loader.h"
#include "sched/sched.h"
#include "test_kinds.h"

#define POD(name, extra_meta, status)                                                                                \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name ", namespace: default" extra_meta "}\n"               \
    "spec: {containers: [{name: c}]}\n" status

#define UNSCHEDULABLE "{type: PodScheduled, status: 'False', reason: Unschedulable}"

static const char PODS[] =
    POD("no-status", "", "")
    POD("phase-only", "", "status: {phase: Pending}\n")
    POD("unschedulable", "", "status: {phase: Pending, conditions: [" UNSCHEDULABLE "]}\n")
    POD("nominated", "", "status: {phase: Pending, nominatedNodeName: node-1, conditions: [" UNSCHEDULABLE "]}\n")
    POD("nominated-only", "", "status: {nominatedNodeName: node-1}\n")
    POD("gated", "", "status: {conditions: [{type: PodScheduled, status: 'False', reason: SchedulingGated}]}\n")
    POD("binding", "", "status: {conditions: [{type: PodScheduled, status: 'True'}]}\n")
    POD("other-condition", "", "status: {conditions: [{type: Ready, status: 'False'}]}\n")
    POD("terminating", ", deletionTimestamp: '2026-01-01T00:00:00Z'",
        "status: {conditions: [" UNSCHEDULABLE "]}\n");

static const struct {
    const char *pod;
    bool pending;
} WANT[] = {
    {"no-status", true}, {"phase-only", true}, {"unschedulable", true}, {"nominated", false},
    {"nominated-only", false}, {"gated", false}, {"binding", false}, {"other-condition", false},
    {"terminating", true},
};

static ns_cluster *load(bool packed)
{
    ns_cluster *c = test_cluster_new();
    ns_cluster_set_packed_pods(c, packed);
    int rc = ns_manifest_load_string(c, "pods.yaml", PODS, strlen(PODS));
    ck_assert_msg(rc == 0, "%s", ns_error_message());
    return c;
}

START_TEST(provisionable_as_karpenter)
{
    ns_cluster *c = load(_i == 1);
    for (size_t i = 0; i < sizeof(WANT) / sizeof(WANT[0]); i++) {
        ns_pod *p = ns_cluster_find_pod(c, "default", WANT[i].pod);
        ck_assert_ptr_nonnull(p);
        ck_assert_msg(ns_sched_pod_is_pending(p) == WANT[i].pending, "pod %s: pending %d, want %d", WANT[i].pod,
                      ns_sched_pod_is_pending(p), WANT[i].pending);
    }
    ns_cluster_free(c);
}
END_TEST

/* A pod the simulation binds and returns to pending (a workload controller's replacement) was never seen by a
 * kube-scheduler since: its loaded status no longer holds it back. */
START_TEST(returned_to_pending_forgets_its_status)
{
    ns_cluster *c = load(_i == 1);
    ns_pod *p = ns_cluster_find_pod(c, "default", "binding");
    ck_assert_int_eq(ns_pod_set_binding(p, "node-1", "Running"), 0);
    ck_assert(!ns_sched_pod_is_pending(p));
    ck_assert_int_eq(ns_pod_set_binding(p, NULL, "Pending"), 0);
    ck_assert(ns_sched_pod_is_pending(p));
    ns_cluster_free(c);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sched-provisionable");
    TCase *tc = tcase_create("provisionable");
    tcase_add_loop_test(tc, provisionable_as_karpenter, 0, 2);
    tcase_add_loop_test(tc, returned_to_pending_forgets_its_status, 0, 2);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
