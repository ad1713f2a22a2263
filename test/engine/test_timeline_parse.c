/* The timeline parser: every action and its fields, step times, and errors that name file and line. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "simulation/timeline.h"
#include "errors/ns_error.h"
#include "log/ns_log.h"
#include "model/labels.h"
#include "sched/sched.h"
#include "test_kinds.h"

static ns_timeline *load_ok(const char *text)
{
    ns_timeline *t = NULL;
    int rc = ns_timeline_load_string("t.yaml", text, strlen(text), test_sim_kinds(), &t);
    ck_assert_msg(rc == 0, "load failed: %s", ns_error_message());
    ck_assert_ptr_nonnull(t);
    return t;
}

/* The load must fail with NS_ERR_INVALID_CONFIG and exactly this message. */
static void load_fails(const char *text, const char *message)
{
    ns_timeline *t = NULL;
    int rc = ns_timeline_load_string("t.yaml", text, strlen(text), test_sim_kinds(), &t);
    ck_assert_int_eq(rc, NS_ERR_INVALID_CONFIG);
    ck_assert_ptr_null(t);
    ck_assert_str_eq(ns_error_message(), message);
}

START_TEST(every_action)
{
    ns_timeline *t = load_ok("description: all of it\n"
                             "steps:\n"
                             "  - name: up\n"
                             "    scale: {kind: StatefulSet, name: db, namespace: data, replicas: 3}\n"
                             "  - at: 30s\n"
                             "    scale: {name: web, replicas: 0}\n"
                             "  - after: 1m\n"
                             "    delete: {kind: Pod, selector: {matchLabels: {app: batch}}}\n"
                             "  - delete: {kind: NodePool, name: spot}\n"
                             "  - patch:\n"
                             "      kind: NodePool\n"
                             "      name: default\n"
                             "      metadata: {labels: {team: a}}\n"
                             "      spec:\n"
                             "        template: {spec: {expireAfter: 1h}}\n"
                             "        limits: null\n"
                             "  - interrupt: {event: SpotInterruption, nodepool: default, count: 2, deadline: 2m}\n"
                             "  - interrupt: {event: ScheduledMaintenance, node: ip-10-0-0-1}\n"
                             "  - launchFailure: {instanceType: m5.large, capacityType: spot}\n"
                             "  - launchFailure: {clear: true}\n"
                             "  - advance: 5m\n"
                             "  - after: 10s\n"
                             "    advance: {until: 20m}\n");
    ck_assert_str_eq(t->description, "all of it");
    ck_assert_uint_eq(t->n_steps, 11);
    const ns_tl_step *s = t->steps;
    ck_assert_int_eq(s[0].action, NS_TL_SCALE);
    ck_assert_str_eq(s[0].name, "up");
    ck_assert_str_eq(s[0].target.kind, "StatefulSet");
    ck_assert_str_eq(s[0].target.namespace_, "data");
    ck_assert_int_eq(s[0].replicas, 3);
    ck_assert_int_eq(s[0].line, 3);
    ck_assert_int_eq(s[0].action_line, 4);
    ck_assert_str_eq(s[1].target.kind, "Deployment");
    ck_assert_str_eq(s[1].target.namespace_, "default");
    ck_assert_int_eq(s[1].replicas, 0);
    ck_assert_int_eq(s[1].at_ms, 30000);
    ck_assert_int_eq(s[2].action, NS_TL_DELETE);
    ck_assert_int_eq(s[2].at_ms, 90000);
    ck_assert(s[2].selector.present);
    ck_assert_ptr_null(s[2].target.name);
    ck_assert_str_eq(ns_labels_get(&s[2].selector.match_labels, "app"), "batch");
    ck_assert_ptr_null(s[3].target.namespace_);
    ck_assert_int_eq(s[3].at_ms, 90000);
    ck_assert_int_eq(s[4].action, NS_TL_PATCH);
    char *patch = cJSON_PrintUnformatted(s[4].patch);
    ck_assert_str_eq(patch, "{\"metadata\":{\"labels\":{\"team\":\"a\"}},\"spec\":{\"template\":{\"spec\":{\"expireAfter\":"
                            "\"1h\"}},\"limits\":null}}");
    cJSON_free(patch);
    ck_assert_int_eq(s[5].event, NS_EVENT_SPOT_INTERRUPTION);
    ck_assert_str_eq(s[5].nodepool, "default");
    ck_assert_int_eq(s[5].count, 2);
    ck_assert_int_eq(s[5].deadline_ms, 120000);
    ck_assert_int_eq(s[6].event, NS_EVENT_SCHEDULED_MAINTENANCE);
    ck_assert_str_eq(s[6].node, "ip-10-0-0-1");
    ck_assert_int_eq(s[6].count, 0);
    ck_assert_str_eq(s[7].instance_type, "m5.large");
    ck_assert_ptr_null(s[7].zone);
    ck_assert_str_eq(s[7].capacity_type, "spot");
    ck_assert(!s[7].clear);
    ck_assert(s[8].clear);
    ck_assert_int_eq(s[9].action, NS_TL_ADVANCE);
    ck_assert_int_eq(s[9].at_ms, 90000);
    ck_assert_int_eq(s[9].end_ms, 390000);
    ck_assert_int_eq(s[10].at_ms, 400000);
    ck_assert_int_eq(s[10].end_ms, 1200000);
    ck_assert_int_eq(t->end_ms, 1200000);
    ns_timeline_free(t);
}
END_TEST

START_TEST(descriptions)
{
    ns_timeline *t = load_ok("steps:\n"
                             "  - scale: {name: inflate, replicas: 10}\n"
                             "  - delete: {kind: Pod, namespace: jobs, selector: {}}\n"
                             "  - interrupt: {event: RebalanceRecommendation, nodepool: spot}\n"
                             "  - launchFailure: {zone: us-west-2a}\n"
                             "  - advance: {for: 90s}\n");
    char buf[256];
    ns_tl_step_describe(&t->steps[0], buf, sizeof(buf));
    ck_assert_str_eq(buf, "scale Deployment default/inflate to 10 replicas");
    ns_tl_step_describe(&t->steps[1], buf, sizeof(buf));
    ck_assert_str_eq(buf, "delete every Pod in namespace jobs matching a selector");
    ns_tl_step_describe(&t->steps[2], buf, sizeof(buf));
    ck_assert_str_eq(buf, "RebalanceRecommendation for every node of NodePool spot");
    ns_tl_step_describe(&t->steps[3], buf, sizeof(buf));
    ck_assert_str_eq(buf, "insufficient capacity for any type in us-west-2a, any capacity type");
    ns_tl_step_describe(&t->steps[4], buf, sizeof(buf));
    ck_assert_str_eq(buf, "advance the clock to 1m30s");
    ck_assert_str_eq(ns_tl_action_name(NS_TL_LAUNCH_FAILURE), "launchFailure");
    ck_assert_str_eq(ns_tl_event_name(NS_EVENT_INSTANCE_STOPPING), "InstanceStopping");
    ns_timeline_free(t);
}
END_TEST

/* An inline manifest's errors carry the timeline's name and the line inside the timeline, for block scalars and
 * for a manifest written on the key's own line. */
START_TEST(start_and_engine)
{
    ns_timeline *t = load_ok("steps:\n  - advance: 1s\n");
    ck_assert_int_eq(t->start_ms, NS_TIMELINE_DEFAULT_START_MS);
    ck_assert_int_eq(t->engine.tick_ms, -1);
    ck_assert_int_eq(t->engine.act_on_rebalance, 0);
    ns_timeline_free(t);
    t = load_ok("start: 2026-03-02T09:30:00.250+01:00\n"
                "engine: {tick: 5s, registrationDelay: 45s, batchIdleDuration: 2s, actOnRebalance: false}\n"
                "steps:\n  - advance: 1s\n");
    ck_assert_int_eq(t->start_ms, INT64_C(1772440200250));
    ck_assert_int_eq(t->engine.tick_ms, 5000);
    ck_assert_int_eq(t->engine.registration_delay_ms, 45000);
    ck_assert_int_eq(t->engine.batch_idle_ms, 2000);
    ck_assert_int_eq(t->engine.batch_max_ms, -1);
    ck_assert_int_eq(t->engine.act_on_rebalance, -1);
    ns_timeline_free(t);
    load_fails("start: tomorrow\nsteps:\n  - advance: 1s\n",
               "t.yaml:1: timeline: start: \"tomorrow\" is not an RFC 3339 time such as 2026-01-05T09:00:00Z");
    load_fails("start: 2026-13-01T00:00:00Z\nsteps:\n  - advance: 1s\n",
               "t.yaml:1: timeline: start: \"2026-13-01T00:00:00Z\" is not an RFC 3339 time such as "
               "2026-01-05T09:00:00Z");
    load_fails("engine: {tick: 0s}\nsteps:\n  - advance: 1s\n",
               "t.yaml:1: timeline: engine.tick: must be longer than 0s");
    load_fails("engine: {speed: 2}\nsteps:\n  - advance: 1s\n", "t.yaml:1: timeline: unknown field \"engine.speed\"");
}
END_TEST

/* Node conditions (a kubelet stops) and Karpenter's feature gates by their names. */
START_TEST(node_conditions_and_gates)
{
    ns_timeline *t = load_ok("featureGates: {NodeRepair: true, SpotToSpotConsolidation: false}\n"
                             "steps:\n"
                             "  - nodeCondition: {node: n1, type: Ready, status: Unknown, reason: NodeStatusUnknown}\n"
                             "  - nodeCondition: {nodepool: spot, count: 2, type: KernelReady, status: 'False',\n"
                             "                    message: kernel deadlock}\n"
                             "  - nodeCondition: {nodepool: spot, type: Ready, status: 'True'}\n");
    ck_assert_int_eq(t->engine.node_repair, 1);
    ck_assert_int_eq(t->engine.spot_to_spot, -1);
    ck_assert_int_eq(t->steps[0].action, NS_TL_NODE_CONDITION);
    ck_assert_str_eq(t->steps[0].node, "n1");
    ck_assert_str_eq(t->steps[0].cond_reason, "NodeStatusUnknown");
    ck_assert_ptr_null(t->steps[0].cond_message);
    ck_assert_str_eq(t->steps[1].cond_message, "kernel deadlock");
    char buf[256];
    ns_tl_step_describe(&t->steps[0], buf, sizeof(buf));
    ck_assert_str_eq(buf, "set condition Ready=Unknown on node n1");
    ns_tl_step_describe(&t->steps[1], buf, sizeof(buf));
    ck_assert_str_eq(buf, "set condition KernelReady=False on 2 node(s) of NodePool spot");
    ns_tl_step_describe(&t->steps[2], buf, sizeof(buf));
    ck_assert_str_eq(buf, "set condition Ready=True on every node of NodePool spot");
    ck_assert_str_eq(ns_tl_action_name(NS_TL_NODE_CONDITION), "nodeCondition");
    ns_timeline_free(t);
    t = load_ok("steps:\n  - advance: 1s\n");
    ck_assert_int_eq(t->engine.node_repair, 0);
    ck_assert_int_eq(t->engine.min_values_policy, -1);
    ns_timeline_free(t);
    t = load_ok("engine: {minValuesPolicy: BestEffort}\nsteps:\n  - advance: 1s\n");
    ck_assert_int_eq(t->engine.min_values_policy, NS_SCHED_MIN_VALUES_BEST_EFFORT);
    ns_timeline_free(t);
    load_fails("engine: {minValuesPolicy: Loose}\nsteps:\n  - advance: 1s\n",
               "t.yaml:1: timeline: engine.minValuesPolicy: \"Loose\" is not Strict or BestEffort");
    load_fails("featureGates: {Drift: true}\nsteps:\n  - advance: 1s\n",
               "t.yaml:1: timeline: unknown field \"featureGates.Drift\"");
    load_fails("engine: {spotToSpotConsolidation: true}\nfeatureGates: {SpotToSpotConsolidation: true}\n"
               "steps:\n  - advance: 1s\n",
               "t.yaml:2: timeline: featureGates.SpotToSpotConsolidation: is also set as "
               "engine.spotToSpotConsolidation; give it once");
    load_fails("steps:\n  - nodeCondition: {node: a, type: Ready, status: Maybe}\n",
               "t.yaml:2: timeline step 1: steps[0].nodeCondition.status: \"Maybe\" is not True, False or Unknown "
               "(quote it: YAML reads a bare True or False as a boolean)");
    load_fails("steps:\n  - nodeCondition: {type: Ready, status: Unknown}\n",
               "t.yaml:2: timeline step 1: steps[0].nodeCondition: give exactly one of \"node\" or \"nodepool\"");
    load_fails("steps:\n  - nodeCondition: {node: a, count: 1, type: Ready, status: Unknown}\n",
               "t.yaml:2: timeline step 1: steps[0].nodeCondition: count applies to a nodepool, not to one node");
    load_fails("steps:\n  - nodeCondition: {node: a, status: Unknown}\n",
               "t.yaml:2: timeline step 1: missing required field \"steps[0].nodeCondition.type\"");
}
END_TEST

/* patch on Nodes, NodeClaims and Pods: labels and annotations (null removes), a Node's taints and cordon; the
 * objects by name, a NodePool's nodes or claims, or a pod selector. */
START_TEST(object_patches)
{
    ns_timeline *t = load_ok("steps:\n"
                             "  - patch:\n"
                             "      kind: Node\n"
                             "      name: n1\n"
                             "      metadata: {labels: {team: blue, old: null}, annotations: {note: \"x y\"}}\n"
                             "      spec: {taints: [{key: dedicated, value: gpu, effect: NoSchedule}], "
                             "unschedulable: true}\n"
                             "  - patch: {kind: NodeClaim, nodepool: spot, count: 2, metadata: {annotations: "
                             "{karpenter.sh/do-not-disrupt: 'true'}}}\n"
                             "  - patch: {kind: Pod, selector: {matchLabels: {app: web}},\n"
                             "           metadata: {labels: {v: '2'}}}\n"
                             "  - patch: {kind: Pod, namespace: batch, name: p0, metadata: {annotations: "
                             "{karpenter.sh/do-not-disrupt: 10m}}}\n"
                             "  - patch: {kind: Node, nodepool: spot, spec: {taints: []}}\n");
    const ns_tl_step *s = t->steps;
    ck_assert_int_eq(s[0].action, NS_TL_PATCH);
    ck_assert_str_eq(s[0].target.name, "n1");
    ck_assert_ptr_null(s[0].target.namespace_);
    ck_assert_uint_eq(s[0].n_labels, 2);
    ck_assert_str_eq(s[0].labels[0].key, "team");
    ck_assert_str_eq(s[0].labels[0].value, "blue");
    ck_assert_str_eq(s[0].labels[1].key, "old");
    ck_assert_ptr_null(s[0].labels[1].value);
    ck_assert_str_eq(s[0].annotations[0].value, "x y");
    ck_assert(s[0].set_taints);
    ck_assert_uint_eq(s[0].n_taints, 1);
    ck_assert_str_eq(s[0].taints[0].effect, "NoSchedule");
    ck_assert_int_eq(s[0].unschedulable, 1);
    ck_assert_ptr_null(s[0].patch);
    ck_assert_str_eq(s[1].nodepool, "spot");
    ck_assert_int_eq(s[1].count, 2);
    ck_assert(!s[1].set_taints);
    ck_assert_str_eq(s[2].target.namespace_, "default");
    ck_assert(s[2].selector.present);
    ck_assert_str_eq(s[3].target.namespace_, "batch");
    ck_assert(s[4].set_taints);
    ck_assert_uint_eq(s[4].n_taints, 0);
    char buf[256];
    ns_tl_step_describe(&s[0], buf, sizeof(buf));
    ck_assert_str_eq(buf, "patch Node n1");
    ns_tl_step_describe(&s[1], buf, sizeof(buf));
    ck_assert_str_eq(buf, "patch the first NodeClaim(s) of NodePool spot");
    ns_tl_step_describe(&s[2], buf, sizeof(buf));
    ck_assert_str_eq(buf, "patch every Pod in namespace default matching a selector");
    ns_tl_step_describe(&s[3], buf, sizeof(buf));
    ck_assert_str_eq(buf, "patch Pod batch/p0");
    ns_timeline_free(t);

    load_fails("steps:\n  - patch: {kind: Node, name: n1, metadata: {labels: {karpenter.sh/nodepool: b}}}\n",
               "t.yaml:2: timeline step 1: steps[0].patch.metadata.labels.karpenter.sh/nodepool: is set by the engine "
               "from the instance and its NodePool; a Node's karpenter.sh/nodepool cannot be changed");
    load_fails("steps:\n  - patch: {kind: NodeClaim, name: c, spec: {taints: []}}\n",
               "t.yaml:2: timeline step 1: steps[0].patch.spec: a NodeClaim's spec is immutable (Karpenter's CRD "
               "refuses a change); patch its metadata, or the Node's spec");
    load_fails("steps:\n  - patch: {kind: Pod, name: p, spec: {nodeName: x}}\n",
               "t.yaml:2: timeline step 1: steps[0].patch.spec: a Pod's spec is not patched by a timeline; patch its "
               "metadata, or delete it and add a new one");
    load_fails("steps:\n  - patch: {kind: Pod, nodepool: x, metadata: {labels: {a: b}}}\n",
               "t.yaml:2: timeline step 1: steps[0].patch.nodepool: does not apply to a Pod (pods are picked by name "
               "or selector)");
    load_fails("steps:\n  - patch: {kind: Node, namespace: x, name: a, metadata: {labels: {a: b}}}\n",
               "t.yaml:2: timeline step 1: steps[0].patch.namespace: does not apply to a Node (it is cluster-scoped; "
               "pick by name or nodepool)");
    load_fails("steps:\n  - patch: {kind: Node, name: a, nodepool: p, metadata: {labels: {a: b}}}\n",
               "t.yaml:2: timeline step 1: steps[0].patch: give exactly one of \"name\" or \"nodepool\"");
    load_fails("steps:\n  - patch: {kind: Pod, metadata: {labels: {a: b}}}\n",
               "t.yaml:2: timeline step 1: steps[0].patch: give exactly one of \"name\" or \"selector\"");
    load_fails("steps:\n  - patch: {kind: Node, name: a, count: 1, metadata: {labels: {a: b}}}\n",
               "t.yaml:2: timeline step 1: steps[0].patch: count applies to a nodepool, not to one node");
    load_fails("steps:\n  - patch: {kind: Pod, name: a, metadata: {labels: {a: 'b c'}}}\n",
               "t.yaml:2: timeline step 1: steps[0].patch.metadata.labels.a: label value \"b c\" is invalid: "
               "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
               "character");
    load_fails("steps:\n  - patch: {kind: Pod, name: a, metadata: {annotations: {'a b': x}}}\n",
               "t.yaml:2: timeline step 1: steps[0].patch.metadata.annotations: key \"a b\" is invalid: "
               "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
               "character");
    load_fails("steps:\n  - patch: {kind: Node, name: a, spec: {taints: [{key: k, effect: Sometimes}]}}\n",
               "t.yaml:2: timeline step 1: steps[0].patch.spec.taints[0]: effect \"Sometimes\" is not one of "
               "NoSchedule, PreferNoSchedule, NoExecute");
    load_fails("steps:\n  - patch: {kind: Node, name: a, metadata: {labels: {}}}\n",
               "t.yaml:2: timeline step 1: steps[0].patch.metadata.labels: is empty (name the keys to set, or to "
               "remove with null)");
    load_fails("steps:\n  - patch: {kind: Node, name: a}\n",
               "t.yaml:2: timeline step 1: steps[0].patch: has nothing to change (give metadata and/or spec)");
    load_fails("steps:\n  - patch: {kind: Node, name: a, spec: {}}\n",
               "t.yaml:2: timeline step 1: steps[0].patch.spec: has nothing to change (give taints and/or "
               "unschedulable)");
    load_fails("steps:\n  - patch: {kind: Pod, name: a, metadata: {finalizers: [x]}}\n",
               "t.yaml:2: timeline step 1: unknown field \"steps[0].patch.metadata.finalizers\"");
    load_fails("steps:\n  - patch: {kind: Node, name: a, spec: {podCIDR: x}}\n",
               "t.yaml:2: timeline step 1: unknown field \"steps[0].patch.spec.podCIDR\"");
}
END_TEST

/* podStatus: a pod's phase and start time by name or selector; delete's gracePeriod for Pods. */
START_TEST(pod_lifecycle)
{
    ns_timeline *t = load_ok("steps:\n"
                             "  - podStatus: {name: job-0, phase: Succeeded}\n"
                             "  - podStatus: {namespace: batch, selector: {matchLabels: {app: a}}, phase: Failed,\n"
                             "                startTime: 2025-12-31T23:00:00Z}\n"
                             "  - podStatus: {name: web-0, startTime: '2026-01-01T00:00:30+00:00'}\n"
                             "  - delete: {kind: Pod, name: web-1, gracePeriod: 2m}\n"
                             "  - delete: {kind: Pod, selector: {matchLabels: {app: a}}, gracePeriod: 30s}\n");
    const ns_tl_step *s = t->steps;
    ck_assert_int_eq(s[0].action, NS_TL_POD_STATUS);
    ck_assert_str_eq(s[0].target.namespace_, "default");
    ck_assert_str_eq(s[0].phase, "Succeeded");
    ck_assert_int_eq(s[0].start_time_ms, 0);
    ck_assert_str_eq(s[1].target.namespace_, "batch");
    ck_assert(s[1].selector.present);
    ck_assert_int_eq(s[1].start_time_ms, NS_TIMELINE_DEFAULT_START_MS - 3600000);
    ck_assert_ptr_null(s[2].phase);
    ck_assert_int_eq(s[2].start_time_ms, NS_TIMELINE_DEFAULT_START_MS + 30000);
    ck_assert_int_eq(s[3].grace_ms, 120000);
    ck_assert_int_eq(s[4].grace_ms, 30000);
    char buf[256];
    ns_tl_step_describe(&s[0], buf, sizeof(buf));
    ck_assert_str_eq(buf, "set the status of Pod default/job-0: phase Succeeded");
    ns_tl_step_describe(&s[1], buf, sizeof(buf));
    ck_assert_str_eq(buf, "set the status of every Pod in namespace batch matching a selector: phase Failed started at "
                          "2025-12-31T23:00:00.000Z");
    ns_tl_step_describe(&s[3], buf, sizeof(buf));
    ck_assert_str_eq(buf, "delete Pod default/web-1 with a grace period of 2m");
    ck_assert_str_eq(ns_tl_action_name(NS_TL_POD_STATUS), "podStatus");
    ns_timeline_free(t);

    load_fails("steps:\n  - podStatus: {name: a, phase: Running}\n",
               "t.yaml:2: timeline step 1: steps[0].podStatus.phase: \"Running\" is not Succeeded or Failed (the "
               "engine sets Pending and Running itself)");
    load_fails("steps:\n  - podStatus: {name: a, startTime: yesterday}\n",
               "t.yaml:2: timeline step 1: steps[0].podStatus.startTime: \"yesterday\" is not an RFC 3339 time such "
               "as 2026-01-05T09:00:00Z");
    load_fails("steps:\n  - podStatus: {name: a}\n",
               "t.yaml:2: timeline step 1: steps[0].podStatus: has nothing to change (give phase and/or startTime)");
    load_fails("steps:\n  - podStatus: {phase: Failed}\n",
               "t.yaml:2: timeline step 1: steps[0].podStatus: give exactly one of \"name\" or \"selector\"");
    load_fails("steps:\n  - podStatus: {name: a, phase: Failed, reason: OOMKilled}\n",
               "t.yaml:2: timeline step 1: unknown field \"steps[0].podStatus.reason\"");
    load_fails("steps:\n  - delete: {kind: Node, name: a, gracePeriod: 1m}\n",
               "t.yaml:2: timeline step 1: steps[0].delete.gracePeriod: applies to Pods only (a Node's deletion "
               "follows its own controller)");
    load_fails("steps:\n  - delete: {kind: Pod, name: a, gracePeriod: soon}\n",
               "t.yaml:2: timeline step 1: steps[0].delete.gracePeriod: invalid duration \"soon\": expected a number "
               "before each unit");
}
END_TEST

/* launchError: an error category and how many launches fail (default 1). */
START_TEST(launch_errors)
{
    ns_timeline *t = load_ok("steps:\n  - launchError: {error: Internal, count: 3}\n"
                             "  - launchError: {error: Throttled}\n");
    ck_assert_int_eq(t->steps[0].action, NS_TL_LAUNCH_ERROR);
    ck_assert_int_eq(t->steps[0].launch_error, NS_ERR_INTERNAL);
    ck_assert_int_eq(t->steps[0].count, 3);
    ck_assert_int_eq(t->steps[1].launch_error, NS_ERR_THROTTLED);
    ck_assert_int_eq(t->steps[1].count, 1);
    char buf[256];
    ns_tl_step_describe(&t->steps[0], buf, sizeof(buf));
    ck_assert_str_eq(buf, "the next 3 launch(es) fail: Internal");
    ck_assert_str_eq(ns_tl_action_name(NS_TL_LAUNCH_ERROR), "launchError");
    ns_timeline_free(t);
    load_fails("steps:\n  - launchError: {error: InsufficientCapacity}\n",
               "t.yaml:2: timeline step 1: steps[0].launchError.error: \"InsufficientCapacity\" is not one of "
               "Internal, Unauthorized, InvalidConfig, Throttled, Unsupported (for no capacity, use launchFailure)");
    load_fails("steps:\n  - launchError: {count: 2}\n",
               "t.yaml:2: timeline step 1: missing required field \"steps[0].launchError.error\"");
    load_fails("steps:\n  - launchError: {error: Internal, count: 0}\n",
               "t.yaml:2: timeline step 1: steps[0].launchError.count: 0 is out of range 1..100000");
    load_fails("steps:\n  - launchError: {error: Internal, method: list}\n",
               "t.yaml:2: timeline step 1: unknown field \"steps[0].launchError.method\"");
}
END_TEST

/* VolumeAttachments: engine.volumeDetachDelay, added (checked as manifests are) and deleted by name or selector. */
START_TEST(volume_attachments)
{
    ns_timeline *t = load_ok("engine: {volumeDetachDelay: 1m30s}\nsteps:\n"
                             "  - add:\n      manifest: |\n"
                             "        {apiVersion: storage.k8s.io/v1, kind: VolumeAttachment, metadata: {name: va},\n"
                             "         spec: {attacher: d, nodeName: n, source: {persistentVolumeName: pv}}}\n"
                             "  - delete: {kind: VolumeAttachment, name: va}\n"
                             "  - delete: {kind: VolumeAttachment, selector: {matchLabels: {app: db}}}\n");
    ck_assert_int_eq(t->engine.volume_detach_delay_ms, 90000);
    ck_assert_int_eq(t->steps[1].action, NS_TL_DELETE);
    ck_assert_str_eq(t->steps[1].target.kind, "VolumeAttachment");
    ck_assert_str_eq(t->steps[1].target.name, "va");
    ck_assert(t->steps[2].selector.present);
    ns_timeline_free(t);
    t = load_ok("steps:\n  - advance: 1s\n");
    ck_assert_int_eq(t->engine.volume_detach_delay_ms, -1);
    ns_timeline_free(t);
    load_fails("steps:\n  - add:\n      manifest: |\n"
               "        {apiVersion: storage.k8s.io/v1, kind: VolumeAttachment, metadata: {name: va},\n"
               "         spec: {attacher: d, source: {persistentVolumeName: pv}}}\n",
               "t.yaml:3: timeline step 1: manifest: t.yaml:5: VolumeAttachment va: missing required field "
               "\"spec.nodeName\"");
    load_fails("steps:\n  - delete: {kind: VolumeAttachment, name: va, gracePeriod: 1m}\n",
               "t.yaml:2: timeline step 1: steps[0].delete.gracePeriod: applies to Pods only (a VolumeAttachment's "
               "deletion follows its own controller)");
}
END_TEST

/* launchTimeout: how many launches hang (default 1). */
START_TEST(launch_timeouts)
{
    ns_timeline *t = load_ok("steps:\n  - launchTimeout: {count: 2}\n  - launchTimeout: {}\n");
    ck_assert_int_eq(t->steps[0].action, NS_TL_LAUNCH_TIMEOUT);
    ck_assert_int_eq(t->steps[0].count, 2);
    ck_assert_int_eq(t->steps[1].count, 1);
    char buf[256];
    ns_tl_step_describe(&t->steps[0], buf, sizeof(buf));
    ck_assert_str_eq(buf, "the next 2 launch(es) hang until the provider call's deadline");
    ck_assert_str_eq(ns_tl_action_name(NS_TL_LAUNCH_TIMEOUT), "launchTimeout");
    ns_timeline_free(t);
    load_fails("steps:\n  - launchTimeout: {count: 0}\n",
               "t.yaml:2: timeline step 1: steps[0].launchTimeout.count: 0 is out of range 1..100000");
    load_fails("steps:\n  - launchTimeout: {count: 1, after: 5m}\n",
               "t.yaml:2: timeline step 1: unknown field \"steps[0].launchTimeout.after\"");
}
END_TEST

START_TEST(inline_manifest_lines)
{
    ns_timeline *t = load_ok("steps:\n"
                             "  - add:\n"
                             "      manifest: |\n"
                             "        apiVersion: v1\n"
                             "        kind: Pod\n"
                             "        metadata: {name: a}\n"
                             "        spec: {containers: [{name: c, image: x}]}\n");
    ck_assert_str_eq(t->steps[0].manifest_source, "t.yaml");
    ck_assert_uint_eq(t->steps[0].manifest_len, strlen(t->steps[0].manifest_text));
    ck_assert_mem_eq(t->steps[0].manifest_text, "\n\n\napiVersion: v1\n", 18);
    ns_timeline_free(t);
    load_fails("steps:\n"
               "  - add:\n"
               "      manifest: |\n"
               "        apiVersion: v1\n"
               "        kind: Pod\n"
               "        metadata: {name: a}\n"
               "        spec: {containers: [{name: c, image: x}], colour: red}\n",
               "t.yaml:3: timeline step 1: manifest: t.yaml:7: Pod default/a: unknown field \"spec.colour\"");
    load_fails("steps:\n"
               "  - after: 1s\n"
               "    add: {manifest: \"{apiVersion: v1, kind: Pod, metadata: {name: a}, spec: {nodeName: 3, x: 1}}\"}\n",
               "t.yaml:3: timeline step 1: manifest: t.yaml:3: Pod default/a: unknown field \"spec.x\"");
}
END_TEST

START_TEST(file_manifests)
{
    ns_timeline *t = NULL;
    int rc = ns_timeline_load_file(FIXTURE_DIR "/with-file.yaml", test_sim_kinds(), &t);
    ck_assert_int_eq(rc, NS_ERR_INVALID_CONFIG);
    ck_assert_str_eq(ns_error_message(),
                     FIXTURE_DIR "/with-file.yaml:7: timeline step 2: file: " FIXTURE_DIR
                                 "/bad-pod.yaml:11: Pod default/broken: spec.containers[0].resources.requests.cpu: "
                                 "invalid quantity \"lots\": no digits");
    const char *ok = "steps:\n  - add: {file: " FIXTURE_DIR "/extra-pods.yaml}\n";
    t = load_ok(ok);
    ck_assert_str_eq(t->steps[0].manifest_source, FIXTURE_DIR "/extra-pods.yaml");
    ck_assert_ptr_nonnull(strstr(t->steps[0].manifest_text, "name: extra"));
    ns_timeline_free(t);
    const char *missing = "steps:\n  - add: {file: no-such-file.yaml}\n";
    ck_assert_int_eq(ns_timeline_load_string("t.yaml", missing, strlen(missing), test_sim_kinds(), &t), NS_ERR_NOT_FOUND);
    ck_assert_ptr_null(t);
    ck_assert_str_eq(ns_error_message(),
                     "t.yaml:2: timeline step 1: cannot open manifest no-such-file.yaml: No such file or directory");
}
END_TEST

START_TEST(step_errors)
{
    load_fails("steps:\n  - scale: {name: a, replicas: 1}\n    explode: {}\n",
               "t.yaml:3: timeline step 1: unknown field \"steps[0].explode\" (a step has at or after, name, and one "
               "action: scale, add, delete, patch, interrupt, launchFailure, launchError, launchTimeout, advance, "
               "nodeCondition or podStatus)");
    load_fails("steps:\n  - at: 1m\n    advance: 1m\n    scale: {name: a, replicas: 1}\n",
               "t.yaml:4: timeline step 1: steps[0].scale: a step has one action, and this one already has "
               "\"advance\" (line 3)");
    load_fails("steps:\n  - at: 1m\n", "t.yaml:2: timeline step 1: steps[0]: has no action (one of scale, add, "
                                        "delete, patch, interrupt, launchFailure, launchError, launchTimeout, "
                                        "advance, nodeCondition, podStatus)");
    load_fails("steps:\n  - advance: 2m\n  - at: 1m\n    advance: 1s\n",
               "t.yaml:3: timeline step 2: steps[1]: at 1m is before the end of the previous step (2m); steps run "
               "in order");
    load_fails("steps:\n  - at: 1m\n    after: 1m\n    advance: 1s\n",
               "t.yaml:3: timeline step 1: steps[0]: has both \"at\" and \"after\"; give one");
    load_fails("steps:\n  - at: soon\n    advance: 1s\n",
               "t.yaml:2: timeline step 1: steps[0].at: invalid duration \"soon\": expected a number "
               "before each unit");
    load_fails("steps:\n  - just a string\n",
               "t.yaml:2: timeline step 1: steps[0]: expected a mapping with one action, got a string");
    load_fails("steps: []\n", "t.yaml:1: timeline: missing required field \"steps\" (a non-empty list)");
    load_fails("steps:\n  - advance: 1s\nrepeat: true\n", "t.yaml:3: timeline: unknown field \"repeat\"");
    load_fails("", "t.yaml:1: timeline: the file is empty (it needs a list of steps)");
    load_fails("steps:\n  - advance: 1s\n---\nsteps: []\n",
               "t.yaml:4: timeline: a timeline is one YAML document; this is a second one");
    load_fails("steps:\n  - advance: [1s\n", "t.yaml:3: YAML syntax error: did not find expected ',' or ']' (while parsing a flow "
               "sequence, line 2)");
}
END_TEST

START_TEST(action_errors)
{
    load_fails("steps:\n  - scale: {name: a}\n",
               "t.yaml:2: timeline step 1: missing required field \"steps[0].scale.replicas\"");
    load_fails("steps:\n  - scale: {kind: DaemonSet, name: a, replicas: 1}\n",
               "t.yaml:2: timeline step 1: steps[0].scale.kind: \"DaemonSet\" is not one of Deployment, ReplicaSet, "
               "StatefulSet, Job");
    load_fails("steps:\n  - scale: {name: a, replicas: -1}\n",
               "t.yaml:2: timeline step 1: steps[0].scale.replicas: -1 is out of range 0..100000");
    load_fails("steps:\n  - scale: {name: a, replicas: 1, paused: true}\n",
               "t.yaml:2: timeline step 1: unknown field \"steps[0].scale.paused\"");
    load_fails("steps:\n  - add: {}\n",
               "t.yaml:2: timeline step 1: steps[0].add: give exactly one of \"manifest\" (inline YAML) or \"file\"");
    load_fails("steps:\n  - add: {manifest: {kind: Pod}}\n",
               "t.yaml:2: timeline step 1: steps[0].add.manifest: expected the manifest as a string (a block scalar: "
               "\"manifest: |\"), got a mapping");
    load_fails("steps:\n  - add:\n      manifest: |\n        {apiVersion: v1, kind: Node, metadata: {name: n}}\n",
               "t.yaml:3: timeline step 1: steps[0].add.manifest: adds a Node; a timeline can add Pods, workloads, "
               "PodDisruptionBudgets, VolumeAttachments, NodePools, node classes, CapacityBuffers and PodTemplates "
               "(put DaemonSets, Nodes and NodeClaims in the manifests)");
    load_fails("steps:\n  - delete: {kind: DaemonSet, name: a}\n",
               "t.yaml:2: timeline step 1: steps[0].delete.kind: \"DaemonSet\" is not one of Pod, Deployment, "
               "ReplicaSet, StatefulSet, Job, NodePool, NodeClaim, Node, VolumeAttachment, CapacityBuffer, "
               "PodTemplate");
    load_fails("steps:\n  - delete: {kind: Pod, name: a, selector: {}}\n",
               "t.yaml:2: timeline step 1: steps[0].delete: give exactly one of \"name\" or \"selector\"");
    load_fails("steps:\n  - delete: {kind: NodePool, namespace: x, name: a}\n",
               "t.yaml:2: timeline step 1: steps[0].delete.namespace: NodePool is cluster-scoped and has no "
               "namespace");
    load_fails("steps:\n  - delete: {name: a}\n",
               "t.yaml:2: timeline step 1: missing required field \"steps[0].delete.kind\"");
    load_fails("steps:\n  - delete: {kind: Pod, selector: {matchLabels: {a: b}, matchFields: {}}}\n",
               "t.yaml:2: timeline step 1: unknown field \"steps[0].delete.selector.matchFields\"");
    load_fails("steps:\n  - patch: {kind: Deployment, name: a, spec: {}}\n",
               "t.yaml:2: timeline step 1: steps[0].patch.kind: \"Deployment\" is not one of NodePool, Provisioner, "
               "Node, NodeClaim, Pod, CapacityBuffer, PodTemplate or a "
               "node-class kind of the loaded providers: SimNodeClass (nodesmith.io/v1), EC2NodeClass "
               "(karpenter.k8s.aws/v1), EC2NodeClass (karpenter.k8s.aws/v1beta1), AWSNodeTemplate "
               "(karpenter.k8s.aws/v1alpha1)");
    load_fails("steps:\n  - patch: {kind: NodePool, name: a}\n",
               "t.yaml:2: timeline step 1: steps[0].patch: has nothing to change (give spec and/or metadata)");
    load_fails("steps:\n  - patch: {kind: NodePool, name: a, metadata: {name: b}}\n",
               "t.yaml:2: timeline step 1: unknown field \"steps[0].patch.metadata.name\"");
    /* a PodTemplate's body is its template, every other patched kind's its spec */
    load_fails("steps:\n  - patch: {kind: PodTemplate, name: a, spec: {replicas: 2}}\n",
               "t.yaml:2: timeline step 1: steps[0].patch.spec: a PodTemplate has no spec; patch its template");
    load_fails("steps:\n  - patch: {kind: CapacityBuffer, name: a, template: {spec: {}}}\n",
               "t.yaml:2: timeline step 1: steps[0].patch.template: a CapacityBuffer has no template; patch its spec");
    load_fails("steps:\n  - patch: {kind: PodTemplate, name: a}\n",
               "t.yaml:2: timeline step 1: steps[0].patch: has nothing to change (give template and/or metadata)");
    load_fails("steps:\n  - interrupt: {event: Meteor, node: a}\n",
               "t.yaml:2: timeline step 1: steps[0].interrupt.event: \"Meteor\" is not one of SpotInterruption, "
               "RebalanceRecommendation, ScheduledMaintenance, InstanceStopping, InstanceTerminated, InstanceUnhealthy, "
               "CapacityReservationInterruption");
    load_fails("steps:\n  - interrupt: {event: InstanceUnhealthy, node: a, deadline: 2m}\n",
               "t.yaml:2: timeline step 1: steps[0].interrupt.deadline: an InstanceUnhealthy event has no deadline (the "
               "claim is terminated at once)");
    load_fails("steps:\n  - interrupt: {event: SpotInterruption}\n",
               "t.yaml:2: timeline step 1: steps[0].interrupt: give exactly one of \"node\" or \"nodepool\"");
    load_fails("steps:\n  - interrupt: {event: SpotInterruption, node: a, count: 1}\n",
               "t.yaml:2: timeline step 1: steps[0].interrupt: count applies to a nodepool, not to one node");
    load_fails("steps:\n  - launchFailure: {clear: true, zone: a}\n",
               "t.yaml:2: timeline step 1: steps[0].launchFailure: clear removes every injected failure and takes "
               "no offering fields");
    load_fails("steps:\n  - launchFailure: {capacityType: preemptible}\n",
               "t.yaml:2: timeline step 1: steps[0].launchFailure.capacityType: \"preemptible\" is not spot, "
               "on-demand or reserved");
    load_fails("steps:\n  - at: 5m\n    advance: {until: 1m}\n",
               "t.yaml:3: timeline step 1: steps[0].advance.until: 1m is before the step's time 5m");
    load_fails("steps:\n  - advance: {for: 1m, until: 2m}\n",
               "t.yaml:2: timeline step 1: steps[0].advance: give exactly one of \"for\" (a duration) or \"until\" "
               "(a time)");
    load_fails("steps:\n  - advance:\n", "t.yaml:2: timeline step 1: steps[0].advance: is empty");
}
END_TEST

/* The StaticCapacity gate (static NodePools kept at spec.replicas), by Karpenter's name; unset leaves the default. */
START_TEST(static_capacity_gate)
{
    ns_timeline *t = load_ok("featureGates: {StaticCapacity: true}\nsteps:\n  - advance: 1s\n");
    ck_assert_int_eq(t->engine.static_capacity, 1);
    ns_timeline_free(t);
    t = load_ok("featureGates: {StaticCapacity: false}\nsteps:\n  - advance: 1s\n");
    ck_assert_int_eq(t->engine.static_capacity, -1);
    ns_timeline_free(t);
    t = load_ok("steps:\n  - advance: 1s\n");
    ck_assert_int_eq(t->engine.static_capacity, 0);
    ns_timeline_free(t);
    load_fails("featureGates: {StaticCapacity: yes please}\nsteps:\n  - advance: 1s\n",
               "t.yaml:1: timeline: featureGates.StaticCapacity: expected a boolean, got the string \"yes please\"");
}
END_TEST

int main(void)
{
    ns_log_set_level(NS_LOG_ERROR);
    Suite *s = suite_create("timeline-parse");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, every_action);
    tcase_add_test(tc, descriptions);
    tcase_add_test(tc, start_and_engine);
    tcase_add_test(tc, node_conditions_and_gates);
    tcase_add_test(tc, object_patches);
    tcase_add_test(tc, pod_lifecycle);
    tcase_add_test(tc, launch_errors);
    tcase_add_test(tc, volume_attachments);
    tcase_add_test(tc, launch_timeouts);
    tcase_add_test(tc, inline_manifest_lines);
    tcase_add_test(tc, file_manifests);
    tcase_add_test(tc, step_errors);
    tcase_add_test(tc, action_errors);
    tcase_add_test(tc, static_capacity_gate);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
