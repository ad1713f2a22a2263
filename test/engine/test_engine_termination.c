/* Termination: finalizer, disrupted taint, replacement capacity before the drain, Karpenter's drain order,
 * PodDisruptionBudgets, do-not-disrupt, terminationGracePeriod, and carrying out disruption requests. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "engine_fixture.h"
#include "errors/ns_error.h"
#include "model/labels.h"

#define WEB_DEPLOYMENT(replicas)                                                                                       \
    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: " #replicas "\n"                \
    "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n" EFX_TOLERATE \
    "      containers: [{name: c, resources: {requests: {cpu: '1', memory: 1Gi}}}]\n"

#define PDB(min)                                                                                                       \
    "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web}\nspec:\n  minAvailable: " #min      \
    "\n  selector: {matchLabels: {app: web}}\n"

/* A DaemonSet's tolerations of the base pool's taints, not of karpenter.sh/disrupted (a DaemonSet tolerating every
 * taint stays on a node being terminated, which Karpenter's drain neither evicts nor waits for). */
#define DS_TOLERATE                                                                                                    \
    "      tolerations: [{key: dedicated, operator: Exists}, {key: example.com/agent-not-ready, operator: Exists}]\n"

/* The base pool with a terminationGracePeriod. */
static char *base_with_tgp(const char *tgp)
{
    const char *anchor = "      nodeClassRef:";
    const char *at = strstr(EFX_BASE, anchor);
    size_t len = strlen(EFX_BASE) + 128;
    char *s = malloc(len);
    snprintf(s, len, "%.*s      terminationGracePeriod: %s\n%s", (int)(at - EFX_BASE), EFX_BASE, tgp, at);
    return s;
}

static bool all_bound(efx *x)
{
    return efx_pending(x) == 0 && efx_bound(x) > 0 && efx_initialized(x) == x->cluster->n_nodeclaims;
}

static bool node_tainted(const ns_node *n)
{
    for (size_t i = 0; i < n->n_taints; i++)
        if (strcmp(n->taints[i].key, NS_TAINT_DISRUPTED_KEY) == 0 && strcmp(n->taints[i].effect, "NoSchedule") == 0)
            return true;
    return false;
}

/* The node being terminated is gone and its pods run on the one node left. */
static bool claim_gone(efx *x)
{
    return x->cluster->n_nodeclaims == 1 && !ns_claim_deleting(x->cluster->nodeclaims[0]) &&
           !ns_labels_get(&x->cluster->nodeclaims[0]->meta.annotations, NS_ANNOTATION_DISRUPTION_METHOD) &&
           efx_pending(x) == 0 && efx_initialized(x) == 1;
}

/* Starts with one initialized node running the workload; returns its claim's name in buf. */
static efx *running(const char *base, const char *extra, char *claim, size_t len)
{
    efx *x = efx_new(base, extra, NULL);
    ck_assert(efx_run_until(x, all_bound, EFX_S(120)));
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 1);
    snprintf(claim, len, "%s", efx_claim(x, 0)->meta.name);
    return x;
}

START_TEST(test_forceful_drain_at_once_and_pdb)
{
    char a[128];
    efx *x = running(EFX_BASE, WEB_DEPLOYMENT(3) PDB(2), a, sizeof(a));
    ns_nodeclaim *ca = ns_cluster_find_nodeclaim(x->cluster, a);
    ck_assert_int_eq(ns_engine_delete_claim(x->engine, ca, "test", "Manual"), NS_OK);
    /* The finalizer holds the claim while it terminates. */
    ck_assert_ptr_nonnull(ns_cluster_find_nodeclaim(x->cluster, a));
    ck_assert(ns_claim_deleting(ca));
    efx_step(x);
    ck_assert(node_tainted(ns_cluster_find_node(x->cluster, a)));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_TAINTED_NODE, a), 1);
    /* A deletion by hand is forceful: the drain starts at once, as far as the PDB allows (one of three), while a
     * replacement is launched for the leaving pods in the same step. */
    ck_assert_uint_eq(efx_count(x, NS_DECISION_CREATED_NODECLAIM, NULL), 2);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_EVICTED_POD, a), 1);
    int64_t first_evict = efx_first(x, NS_DECISION_EVICTED_POD, a)->time_ms;
    ck_assert_int_eq(first_evict, efx_first(x, NS_DECISION_TAINTED_NODE, a)->time_ms);
    ck_assert(efx_run_until(x, claim_gone, EFX_S(180)));
    const ns_decision *init = efx_last(x, NS_DECISION_INITIALIZED_NODECLAIM, NULL);
    ck_assert_int_lt(first_evict, init->time_ms);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_EVICTED_POD, a), 3);
    /* minAvailable 2 of 3: one eviction at a time, each waiting for the last to run again. */
    ck_assert_uint_ge(efx_count(x, NS_DECISION_EVICTION_BLOCKED, "disruption budget"), 1);
    const ns_decision *second = NULL;
    size_t n;
    const ns_decision *d = ns_engine_decisions(x->engine, &n);
    for (size_t i = 0, seen = 0; i < n && !second; i++)
        if (d[i].kind == NS_DECISION_EVICTED_POD && ++seen == 2)
            second = &d[i];
    ck_assert_int_gt(second->time_ms, first_evict);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_TERMINATED_INSTANCE, a), 1);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DELETED_NODE, a), 1);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DELETED_NODECLAIM, a), 1);
    ck_assert_ptr_null(ns_cluster_find_nodeclaim(x->cluster, a));
    ck_assert_ptr_null(ns_cluster_find_node(x->cluster, a));
    ck_assert_uint_eq(efx_instances(x), 1);
    ck_assert_uint_eq(efx_bound(x), 3);
    efx_free(x);
}
END_TEST

START_TEST(test_drain_order)
{
    static const char extra[] =
        WEB_DEPLOYMENT(1) "---\napiVersion: v1\nkind: Pod\nmetadata: {name: crit}\nspec:\n"
                          "  priorityClassName: system-cluster-critical\n" EFX_POD_TOLERATE
                          "  containers: [{name: c, resources: {requests: {cpu: 100m}}}]\n"
                          "---\napiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent}\nspec:\n"
                          "  selector: {matchLabels: {app: agent}}\n  template:\n    metadata: {labels: {app: agent}}\n"
                          "    spec:\n" DS_TOLERATE
                          "      containers: [{name: c, resources: {requests: {cpu: 50m}}}]\n"
                          "---\napiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: critical-agent}\nspec:\n"
                          "  selector: {matchLabels: {app: ca}}\n  template:\n    metadata: {labels: {app: ca}}\n"
                          "    spec:\n      priorityClassName: system-node-critical\n"
                          DS_TOLERATE
                          "      containers: [{name: c, resources: {requests: {cpu: 50m}}}]\n";
    char a[128];
    efx *x = running(EFX_BASE, extra, a, sizeof(a));
    ck_assert_int_eq(ns_engine_delete_claim(x->engine, ns_cluster_find_nodeclaim(x->cluster, a), "test", "Manual"),
                     NS_OK);
    ck_assert(efx_run_until(x, claim_gone, EFX_S(180)));
    char ds1[200], ds2[200];
    snprintf(ds1, sizeof(ds1), "default/agent-%s", a);
    snprintf(ds2, sizeof(ds2), "default/critical-agent-%s", a);
    const ns_decision *web = efx_first(x, NS_DECISION_EVICTED_POD, "default/web-");
    const ns_decision *agent = efx_first(x, NS_DECISION_EVICTED_POD, ds1);
    const ns_decision *crit = efx_first(x, NS_DECISION_EVICTED_POD, "default/crit");
    const ns_decision *cagent = efx_first(x, NS_DECISION_EVICTED_POD, ds2);
    ck_assert_ptr_nonnull(web);
    ck_assert_ptr_nonnull(agent);
    ck_assert_ptr_nonnull(crit);
    ck_assert_ptr_nonnull(cagent);
    ck_assert_int_lt(web->time_ms, agent->time_ms);
    ck_assert_int_lt(agent->time_ms, crit->time_ms);
    ck_assert_int_lt(crit->time_ms, cagent->time_ms);
    /* A bare pod is gone for good; the Deployment's pod runs on the replacement. */
    ck_assert_ptr_null(ns_cluster_find_pod(x->cluster, "default", "crit"));
    ck_assert_uint_eq(efx_bound(x), 1);
    efx_free(x);
}
END_TEST

START_TEST(test_do_not_disrupt_waits_for_grace_period)
{
    static const char extra[] = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: batch\n  ownerReferences: "
                                "[{apiVersion: batch/v1, kind: Job, name: batch, uid: u, controller: true}]\n"
                                "  annotations: {karpenter.sh/do-not-disrupt: 'true'}\nspec:\n" EFX_POD_TOLERATE
                                "  containers: [{name: c, resources: {requests: {cpu: '1'}}}]\n";
    char *base = base_with_tgp("90s");
    char a[128];
    efx *x = running(base, extra, a, sizeof(a));
    free(base);
    ns_nodeclaim *ca = ns_cluster_find_nodeclaim(x->cluster, a);
    ck_assert_int_eq(ca->termination_grace_period_ms, 90000);
    /* Voluntary disruption refuses the node outright and changes nothing. */
    const char *cands[] = {a};
    ns_disruption_request req = {.method = "consolidation", .reason = "Underutilized", .nodeclaims = cands,
                                 .n_nodeclaims = 1};
    ck_assert_int_eq(ns_engine_disrupt(x->engine, &req, NULL), NS_ERR_INVALID_ARGUMENT);
    ck_assert(strstr(ns_error_message(), "do-not-disrupt") != NULL);
    ck_assert(!node_tainted(ns_cluster_find_node(x->cluster, a)));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTING, NULL), 0);

    /* Deleted anyway: the pod is never evicted, only deleted once the node's termination time (90 s) minus the pod's
     * own grace period (30 s, the default) has passed. */
    int64_t deleted_at = efx_now();
    ck_assert_int_eq(ns_engine_delete_claim(x->engine, ca, "expiration", "Expired"), NS_OK);
    efx_run_for(x, EFX_S(60));
    ck_assert_ptr_nonnull(ns_cluster_find_node(x->cluster, a));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_EVICTION_BLOCKED, "do-not-disrupt"), 1);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_EVICTED_POD, "default/batch"), 0);
    ck_assert(efx_run_until(x, claim_gone, EFX_S(60)));
    const ns_decision *forced = efx_first(x, NS_DECISION_EVICTED_POD, "default/batch");
    ck_assert_str_eq(forced->method, "forced deletion");
    ck_assert_int_eq(forced->time_ms - deleted_at, EFX_S(61));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DELETED_NODECLAIM, a), 1);
    efx_free(x);
}
END_TEST

START_TEST(test_pdb_blocks_until_grace_period)
{
    char a[128];
    efx *x = running(EFX_BASE, WEB_DEPLOYMENT(2) PDB(2), a, sizeof(a));
    ck_assert_int_eq(ns_engine_delete_claim(x->engine, ns_cluster_find_nodeclaim(x->cluster, a), "test", "Manual"),
                     NS_OK);
    /* No grace period: blocked for good, retried every step, never forced. */
    efx_run_for(x, EFX_S(600));
    ck_assert_ptr_nonnull(ns_cluster_find_node(x->cluster, a));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_EVICTED_POD, NULL), 0);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_EVICTION_BLOCKED, NULL), 2);
    ck_assert_uint_eq(efx_pods_on(x, a), 2);
    efx_free(x);

    char *base = base_with_tgp("2m");
    x = running(base, WEB_DEPLOYMENT(2) PDB(2), a, sizeof(a));
    free(base);
    ck_assert_int_eq(ns_engine_delete_claim(x->engine, ns_cluster_find_nodeclaim(x->cluster, a), "test", "Manual"),
                     NS_OK);
    efx_run_for(x, EFX_S(90));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_EVICTED_POD, NULL), 0);
    ck_assert(efx_run_until(x, claim_gone, EFX_S(60)));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_EVICTED_POD, "forced deletion"), 2);
    efx_free(x);
}
END_TEST

/* A disruption decision with a replacement, as the disruption controller makes one. */
static int disrupt_with_replacement(efx *x, const char *a, char **repl)
{
    const char *removed[] = {a};
    ns_engine_plan_opts opts = {.removed_nodes = removed, .n_removed = 1, .only_removed_pods = true};
    ns_engine_plan plan;
    ck_assert_int_eq(ns_engine_plan_run(x->engine, &opts, &plan), NS_OK);
    ck_assert_uint_eq(plan.result.n_claims, 1);
    const char *cands[] = {a};
    ns_disruption_request req = {.method = "drift", .reason = "Drifted", .nodeclaims = cands, .n_nodeclaims = 1,
                                 .replacements = plan.result.claims, .n_replacements = plan.result.n_claims};
    int rc = ns_engine_disrupt(x->engine, &req, repl);
    ns_engine_plan_free(&plan);
    return rc;
}

START_TEST(test_disrupt_launches_replacement_first)
{
    char a[128];
    efx *x = running(EFX_BASE, WEB_DEPLOYMENT(2), a, sizeof(a));
    char *repl = NULL;
    ck_assert_int_eq(disrupt_with_replacement(x, a, &repl), NS_OK);
    ck_assert_ptr_nonnull(repl);
    ns_nodeclaim *ca = ns_cluster_find_nodeclaim(x->cluster, a);
    ck_assert_str_eq(ns_labels_get(&ca->meta.annotations, NS_ANNOTATION_DISRUPTION_REPLACEMENTS), repl);
    ck_assert(node_tainted(ns_cluster_find_node(x->cluster, a)));
    ck_assert(ns_claim_launched(ns_cluster_find_nodeclaim(x->cluster, repl)));
    const ns_decision *d = efx_first(x, NS_DECISION_DISRUPTING, a);
    ck_assert_ptr_nonnull(d);
    ck_assert_str_eq(d->method, "drift");
    ck_assert_str_eq(d->reason, "Drifted");
    /* A second request for the same node is refused. */
    ns_disruption_request again = {.method = "emptiness", .reason = "Empty", .nodeclaims = (const char *[]){a},
                                   .n_nodeclaims = 1};
    ck_assert_int_eq(ns_engine_disrupt(x->engine, &again, NULL), NS_ERR_INVALID_ARGUMENT);
    efx_run_for(x, EFX_S(44));
    ck_assert(!ns_claim_deleting(ns_cluster_find_nodeclaim(x->cluster, a)));
    ck_assert(efx_run_until(x, claim_gone, EFX_S(120)));
    ck_assert_str_eq(efx_claim(x, 0)->meta.name, repl);
    ck_assert_uint_eq(efx_pods_on(x, repl), 2);
    const ns_decision *del = efx_first(x, NS_DECISION_DELETED_NODE, a);
    ck_assert_str_eq(del->method, "drift");
    free(repl);
    efx_free(x);
}
END_TEST

/* Karpenter's termination details: a pod tolerating karpenter.sh/disrupted:NoSchedule is neither evicted nor waited
 * for; the Eviction API refuses a pod two budgets select (even budgets that allow it), so it stays until deleted; with
 * a terminationGracePeriod each pod still there is deleted strictly after the node's termination time minus the pod's
 * own terminationGracePeriodSeconds (30 by default); the node is drained no sooner than 5 s after its drain began. */
START_TEST(test_termination_details)
{
    static const char extra[] =
        "apiVersion: v1\nkind: Pod\nmetadata: {name: stay}\nspec:\n"
        "  tolerations: [{key: dedicated, operator: Exists}, {key: karpenter.sh/disrupted, operator: Exists}]\n"
        "  containers: [{name: c, resources: {requests: {cpu: 100m}}}]\n"
        "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: twice\n  labels: {app: twice}\nspec:\n" EFX_POD_TOLERATE
        "  containers: [{name: c, resources: {requests: {cpu: 100m}}}]\n"
        "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: quick\n"
        "  annotations: {karpenter.sh/do-not-disrupt: 'true'}\nspec:\n  terminationGracePeriodSeconds: 10\n"
        EFX_POD_TOLERATE "  containers: [{name: c, resources: {requests: {cpu: 100m}}}]\n"
        "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: one}\nspec:\n"
        "  maxUnavailable: 1\n  selector: {matchLabels: {app: twice}}\n"
        "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: two}\nspec:\n"
        "  maxUnavailable: 1\n  selector: {matchLabels: {app: twice}}\n";
    char *base = base_with_tgp("2m");
    char a[128];
    efx *x = running(base, extra, a, sizeof(a));
    free(base);
    ck_assert_uint_eq(efx_pods_on(x, a), 3);
    int64_t deleted_at = efx_now();
    ck_assert_int_eq(ns_engine_delete_claim(x->engine, ns_cluster_find_nodeclaim(x->cluster, a), "test", "Manual"),
                     NS_OK);
    efx_run_for(x, EFX_S(90));
    const ns_decision *multi = efx_first(x, NS_DECISION_EVICTION_BLOCKED, "default/twice");
    ck_assert_ptr_nonnull(multi);
    ck_assert_msg(strstr(multi->reason, "more than one PodDisruptionBudget") != NULL, "%s", multi->reason);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_EVICTED_POD, NULL), 0);
    efx_run_for(x, EFX_S(1));
    const ns_decision *d = efx_first(x, NS_DECISION_EVICTED_POD, "default/twice");
    ck_assert_ptr_nonnull(d);
    ck_assert_str_eq(d->method, "forced deletion");
    ck_assert_int_eq(d->time_ms - deleted_at, EFX_S(91));
    efx_run_for(x, EFX_S(19));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_EVICTED_POD, "default/quick"), 0);
    efx_run_for(x, EFX_S(1));
    d = efx_first(x, NS_DECISION_EVICTED_POD, "default/quick");
    ck_assert_ptr_nonnull(d);
    ck_assert_int_eq(d->time_ms - deleted_at, EFX_S(111));
    /* Only the tolerating pod is left, and the node does not wait for it: terminated in the same step. */
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DELETED_NODE, a), 1);
    ck_assert_int_eq(efx_first(x, NS_DECISION_DELETED_NODE, a)->time_ms - deleted_at, EFX_S(111));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_EVICTED_POD, "default/stay"), 0);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_EVICTION_BLOCKED, "default/stay"), 0);
    efx_free(x);
}
END_TEST

static bool abandoned(efx *x)
{
    return efx_count(x, NS_DECISION_DISRUPTION_ABORTED, NULL) > 0;
}

START_TEST(test_disrupt_abandoned_when_replacement_fails)
{
    char a[128];
    efx *x = running(EFX_BASE, WEB_DEPLOYMENT(2), a, sizeof(a));
    char *repl = NULL;
    ck_assert_int_eq(disrupt_with_replacement(x, a, &repl), NS_OK);
    /* The replacement's instance disappears before it registers: its claim is not garbage collected (it never
     * registered), the registration TTL ends it, and the disruption is abandoned then. */
    bool gone;
    ns_nodeclaim *cr = ns_cluster_find_nodeclaim(x->cluster, repl);
    int64_t created = cr->meta.creation_ms;
    ck_assert_int_eq(ns_plugin_terminate(x->plugin, cr->provider_id, &gone), NS_OK);
    ck_assert(efx_run_until(x, abandoned, EFX_S(16 * 60)));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_GC_NODECLAIM, repl), 0);
    ck_assert_int_eq(efx_first(x, NS_DECISION_REGISTRATION_TIMEOUT, repl)->time_ms - created, EFX_S(15 * 60));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTION_ABORTED, a), 1);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_UNTAINTED_NODE, a), 1);
    ns_nodeclaim *ca = ns_cluster_find_nodeclaim(x->cluster, a);
    ck_assert(!ns_claim_deleting(ca));
    ck_assert_ptr_null(ns_labels_get(&ca->meta.annotations, NS_ANNOTATION_DISRUPTION_METHOD));
    ck_assert(!node_tainted(ns_cluster_find_node(x->cluster, a)));
    efx_run_for(x, EFX_S(60));
    ck_assert_uint_eq(efx_pods_on(x, a), 2);
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 1);
    free(repl);
    efx_free(x);
}
END_TEST

/* A NodeClaim written as a manifest (kubectl apply), not created by provisioning. */
#define MANIFEST_CLAIM                                                                                                 \
    "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata:\n  name: by-hand\n"                               \
    "  labels: {karpenter.sh/nodepool: default}\nspec:\n"                                                              \
    "  nodeClassRef: {group: nodesmith.io, kind: SimNodeClass, name: default}\n"                                       \
    "  requirements:\n    - {key: node.kubernetes.io/instance-type, operator: In, values: [m5.large]}\n"               \
    "    - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}\n"                                      \
    "  resources: {requests: {cpu: 500m}}\n"

static bool by_hand_initialized(efx *x)
{
    ns_nodeclaim *c = ns_cluster_find_nodeclaim(x->cluster, "by-hand");
    return c && ns_claim_initialized(c);
}

/* Karpenter's lifecycle controller puts the termination finalizer on every NodeClaim it manages before launching it,
 * wherever the claim came from; its deletion then goes through the same finalizer: Node deleted, instance
 * terminated, finalizer removed. Without the finalizer the claim would vanish at once, its Node left behind and its
 * instance left to the garbage collector. */
START_TEST(test_manifest_claim_finalizer_and_clean_deletion)
{
    efx *x = efx_new(EFX_BASE, MANIFEST_CLAIM, NULL);
    ns_nodeclaim *c = ns_cluster_find_nodeclaim(x->cluster, "by-hand");
    ck_assert(!ns_meta_has_finalizer(&c->meta, NS_FINALIZER_TERMINATION));
    efx_step(x);
    c = ns_cluster_find_nodeclaim(x->cluster, "by-hand");
    ck_assert(ns_meta_has_finalizer(&c->meta, NS_FINALIZER_TERMINATION));
    ck_assert(ns_claim_launched(c));
    ck_assert(efx_run_until(x, by_hand_initialized, EFX_S(120)));
    ck_assert_ptr_nonnull(ns_cluster_find_node(x->cluster, "by-hand"));
    ck_assert_uint_eq(efx_instances(x), 1);

    c = ns_cluster_find_nodeclaim(x->cluster, "by-hand");
    ck_assert_int_eq(ns_engine_delete_claim(x->engine, c, NULL, NULL), NS_OK);
    ck_assert_ptr_nonnull(ns_cluster_find_nodeclaim(x->cluster, "by-hand"));
    /* Empty, it still counts as drained only five seconds after its drain started (the taint's step). */
    efx_step(x);
    int64_t drain_start = efx_first(x, NS_DECISION_TAINTED_NODE, "by-hand")->time_ms;
    efx_run_for(x, drain_start + EFX_S(4) - efx_now());
    ck_assert_ptr_nonnull(ns_cluster_find_node(x->cluster, "by-hand"));
    efx_run_for(x, EFX_S(1));
    ck_assert_ptr_null(ns_cluster_find_nodeclaim(x->cluster, "by-hand"));
    ck_assert_ptr_null(ns_cluster_find_node(x->cluster, "by-hand"));
    ck_assert_uint_eq(efx_instances(x), 0);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_TERMINATED_INSTANCE, "by-hand"), 1);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DELETED_NODE, "by-hand"), 1);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DELETED_NODECLAIM, "by-hand"), 1);
    efx_run_for(x, EFX_S(120));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_GC_INSTANCE, NULL), 0);
    ck_assert_uint_eq(x->cluster->n_nodes, 0);
    efx_free(x);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("engine-termination");
    TCase *tc = tcase_create("termination");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_forceful_drain_at_once_and_pdb);
    tcase_add_test(tc, test_drain_order);
    tcase_add_test(tc, test_do_not_disrupt_waits_for_grace_period);
    tcase_add_test(tc, test_pdb_blocks_until_grace_period);
    tcase_add_test(tc, test_disrupt_launches_replacement_first);
    tcase_add_test(tc, test_disrupt_abandoned_when_replacement_fails);
    tcase_add_test(tc, test_manifest_claim_finalizer_and_clean_deletion);
    tcase_add_test(tc, test_termination_details);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
