/*
 * Shared by the disruption integration tests (test_disruption_*.c): engine_fixture's engine over sim.so with the
 * disruption controller registered, manifests written from parts (a SimNodeClass and one NodePool), and the changes a
 * timeline makes (NodePool and node class replaced, workloads scaled). Every stepping helper is engine_fixture's, so
 * the invariant checker runs after every step. Every helper asserts with Check.
 */
#ifndef DISRUPTION_FIXTURE_H
#define DISRUPTION_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>

#include "disruption/disruption.h"
#include "engine_fixture.h"

/* A SimNodeClass "default" (with `spec` as its spec) followed by a document separator. */
#define DFX_CLASS(spec) "apiVersion: nodesmith.io/v1\nkind: SimNodeClass\nmetadata: {name: default}\nspec: " spec "\n---\n"

/* Requirement lines for DFX_POOL. */
#define DFX_CAPACITY(types) "        - {key: karpenter.sh/capacity-type, operator: In, values: [" types "]}\n"
#define DFX_TYPES(types) "        - {key: node.kubernetes.io/instance-type, operator: In, values: [" types "]}\n"
#define DFX_AMD64 "        - {key: kubernetes.io/arch, operator: In, values: [amd64]}\n"

/* A karpenter.sh/v1 NodePool "default" over the SimNodeClass. template_spec: extra lines under spec.template.spec
 * (six spaces of indent), reqs: requirement lines, disruption: lines under spec.disruption (four spaces). */
#define DFX_POOL(template_spec, reqs, disruption)                                                                       \
    "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\nspec:\n  template:\n"                     \
    "    metadata: {labels: {team: blue}}\n    spec:\n"                                                               \
    "      nodeClassRef: {group: nodesmith.io, kind: SimNodeClass, name: default}\n" template_spec                    \
    "      requirements:\n" reqs "  disruption:\n" disruption

/* A Deployment of `replicas` pods requesting cpu and memory, labelled app=<name>; extra: lines under the pod template
 * spec (six spaces), e.g. DFX_SPREAD(name). Ends with a document separator. */
#define DFX_DEPLOY(name, replicas, cpu, memory, extra)                                                                  \
    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: " name "}\nspec:\n  replicas: " #replicas "\n"            \
    "  selector: {matchLabels: {app: " name "}}\n  template:\n    metadata: {labels: {app: " name "}}\n    spec:\n"  \
    extra "      containers: [{name: c, resources: {requests: {cpu: '" cpu "', memory: " memory "}}}]\n---\n"
/* One pod of the app per node (required hostname anti-affinity). */
#define DFX_SPREAD(name)                                                                                                \
    "      affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "                               \
    "[{topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: " name "}}}]}}\n"
/* A PodDisruptionBudget over app=<name>: field is minAvailable or maxUnavailable. */
#define DFX_PDB(name, field, value)                                                                                     \
    "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: " name "}\nspec:\n  " field ": " #value "\n" \
    "  selector: {matchLabels: {app: " name "}}\n---\n"

/* The engine over `yaml` (no base documents) with the disruption controller registered. cfg NULL: defaults. */
efx *dfx_new(const char *yaml, const ns_engine_config *cfg, bool spot_to_spot);
/* Replaces (or adds) the NodePools and node classes of `yaml` in the running engine, as a timeline patch does. */
void dfx_put(efx *x, const char *yaml);
/* Scales Deployment `name` in the default namespace. */
void dfx_scale(efx *x, const char *name, size_t replicas);

/* No pod pending, at least one claim, every claim initialized, none deleting or being disrupted. */
bool dfx_settled(efx *x);
/* Runs until dfx_settled (asserting it happens within max_ms). */
void dfx_settle(efx *x, int64_t max_ms);

/* Decisions of a kind whose method is exactly `method`. */
size_t dfx_count_method(efx *x, ns_decision_kind kind, const char *method);
/* The n-th (0-based) such decision; asserts it exists. */
const ns_decision *dfx_nth_method(efx *x, ns_decision_kind kind, const char *method, size_t n);
/* The names of the current NodeClaims, sorted and comma-separated, into buf. */
void dfx_claim_names(efx *x, char *buf, size_t len);
/* True when the comma-separated list holds exactly the names of `set` (also comma-separated), in any order. */
bool dfx_same_names(const char *list, const char *set);
/* A claim's label value (asserts it is there). */
const char *dfx_label(const ns_nodeclaim *c, const char *key);
/* True when the Node carries karpenter.sh/disrupted:NoSchedule. */
bool dfx_tainted(const ns_node *n);

#endif
