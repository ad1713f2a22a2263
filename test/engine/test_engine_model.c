/* The model extensions the engine needs: removal from ns_cluster (the pod index stays right), conditions,
 * finalizers, deep pod copies, the in-memory workload controllers and the Eviction API's budget check. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "engine/cluster_writes.h"
#include "engine/engine_internal.h"
#include "errors/ns_error.h"
#include "manifest/loader.h"
#include "model/cluster.h"
#include "model/conditions.h"
#include "model/hash.h"
#include "model/model_util.h"
#include "simulation/cluster_writes_mem.h"
#include "test_kinds.h"

static ns_cluster *load(const char *yaml)
{
    ns_cluster *c = test_cluster_new();
    ck_assert_ptr_nonnull(c);
    ck_assert_msg(ns_manifest_load_string(c, "t.yaml", yaml, strlen(yaml)) == NS_OK, "%s", ns_error_message());
    return c;
}

/* A cluster as simulate loads it: pods packed. */
static ns_cluster *load_packed(const char *yaml)
{
    ns_cluster *c = test_cluster_new();
    ns_cluster_set_packed_pods(c, true);
    ck_assert_msg(ns_manifest_load_string(c, "t.yaml", yaml, strlen(yaml)) == NS_OK, "%s", ns_error_message());
    return c;
}

START_TEST(test_remove_pods_keeps_index)
{
    ns_cluster *c = test_cluster_new();
    char name[32];
    for (int i = 0; i < 300; i++) {
        ns_pod *p = ns_pod_new();
        snprintf(name, sizeof(name), "p%d", i);
        p->meta.name = strdup(name);
        ck_assert_int_eq(ns_cluster_add_pod(c, p), NS_OK);
    }
    for (int i = 0; i < 300; i += 2) {
        snprintf(name, sizeof(name), "p%d", i);
        ck_assert_int_eq(ns_cluster_remove_pod(c, ns_cluster_find_pod(c, NULL, name)), NS_OK);
    }
    ck_assert_uint_eq(c->n_pods, 150);
    for (int i = 0; i < 300; i++) {
        snprintf(name, sizeof(name), "p%d", i);
        ns_pod *p = ns_cluster_find_pod(c, "default", name);
        if (i % 2)
            ck_assert_msg(p && strcmp(p->meta.name, name) == 0, "%s lost from the index", name);
        else
            ck_assert_ptr_null(p);
    }
    /* Order is kept and removed names can come back. */
    ck_assert_str_eq(c->pods[0]->meta.name, "p1");
    ck_assert_str_eq(c->pods[149]->meta.name, "p299");
    ns_pod *again = ns_pod_new();
    again->meta.name = strdup("p0");
    ck_assert_int_eq(ns_cluster_add_pod(c, again), NS_OK);
    ck_assert_ptr_eq(ns_cluster_find_pod(c, NULL, "p0"), again);
    ns_pod stranger = {0};
    stranger.meta.name = "p0";
    ck_assert_int_eq(ns_cluster_remove_pod(c, &stranger), NS_ERR_NOT_FOUND);
    ns_cluster_free(c);
}
END_TEST

START_TEST(test_conditions_and_finalizers)
{
    ns_conditions cs = {0};
    ck_assert_int_eq(ns_conditions_set(&cs, "Launched", "False", "Throttled", "slow down", 100), 0);
    ck_assert_int_eq(ns_conditions_set(&cs, "Launched", "False", "Throttled", "again", 200), 0);
    ck_assert_int_eq(ns_conditions_get(&cs, "Launched")->last_transition_ms, 100);
    ck_assert_str_eq(ns_conditions_get(&cs, "Launched")->message, "again");
    ck_assert_int_eq(ns_conditions_set(&cs, "Launched", "True", NULL, NULL, 300), 0);
    ck_assert_int_eq(ns_conditions_get(&cs, "Launched")->last_transition_ms, 300);
    ck_assert(ns_conditions_true(&cs, "Launched"));
    ck_assert(!ns_conditions_true(&cs, "Registered"));
    ck_assert_int_eq(ns_conditions_set(&cs, "Registered", "True", NULL, NULL, 400), 0);
    ns_conditions copy = {0};
    ck_assert_int_eq(ns_conditions_copy(&cs, &copy), 0);
    ns_conditions_remove(&cs, "Launched");
    ck_assert_uint_eq(cs.n, 1);
    ck_assert(ns_conditions_true(&copy, "Launched"));
    ck_assert_int_eq(ns_conditions_get(&copy, "Registered")->last_transition_ms, 400);
    ns_conditions_free(&cs);
    ns_conditions_free(&copy);

    ns_meta m = {0};
    ck_assert_int_eq(ns_meta_add_finalizer(&m, "karpenter.sh/termination"), 0);
    ck_assert_int_eq(ns_meta_add_finalizer(&m, "karpenter.sh/termination"), 0);
    ck_assert_int_eq(ns_meta_add_finalizer(&m, "other"), 0);
    ck_assert_uint_eq(m.n_finalizers, 2);
    m.deletion_ms = 5;
    ns_meta mc;
    ck_assert_int_eq(ns_meta_copy(&m, &mc), 0);
    ns_meta_remove_finalizer(&m, "karpenter.sh/termination");
    ck_assert(!ns_meta_has_finalizer(&m, "karpenter.sh/termination"));
    ck_assert(ns_meta_has_finalizer(&mc, "karpenter.sh/termination"));
    ck_assert_int_eq(mc.deletion_ms, 5);
    ns_meta_free(&m);
    ns_meta_free(&mc);
}
END_TEST

static const char RICH_POD[] =
    "apiVersion: v1\nkind: Pod\nmetadata: {name: rich, labels: {app: r}, annotations: {a: b}}\nspec:\n"
    "  nodeSelector: {disk: ssd}\n"
    "  priorityClassName: system-cluster-critical\n"
    "  tolerations: [{key: k, operator: Exists}]\n"
    "  affinity:\n"
    "    nodeAffinity:\n"
    "      requiredDuringSchedulingIgnoredDuringExecution:\n"
    "        nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, values: [a, b]}]}]\n"
    "      preferredDuringSchedulingIgnoredDuringExecution:\n"
    "        - {weight: 10, preference: {matchExpressions: [{key: arch, operator: In, values: [arm64]}]}}\n"
    "    podAntiAffinity:\n"
    "      requiredDuringSchedulingIgnoredDuringExecution:\n"
    "        - {labelSelector: {matchLabels: {app: r}}, topologyKey: kubernetes.io/hostname}\n"
    "  topologySpreadConstraints:\n"
    "    - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule,\n"
    "       labelSelector: {matchLabels: {app: r}}}\n"
    "  initContainers: [{name: init, resources: {requests: {cpu: '2'}}}]\n"
    "  containers: [{name: c, ports: [{containerPort: 80, hostPort: 8080}],\n"
    "                resources: {requests: {cpu: 500m, memory: 1Gi}}}]\n";

START_TEST(test_pod_copy_is_deep)
{
    ns_cluster *c = load(RICH_POD);
    ns_pod *copy = ns_pod_copy(c->pods[0]);
    ns_cluster_free(c); /* the copy must not share anything with the freed original */
    ck_assert_ptr_nonnull(copy);
    ck_assert_str_eq(copy->meta.name, "rich");
    ck_assert_str_eq(ns_labels_get(&copy->meta.annotations, "a"), "b");
    ck_assert_str_eq(ns_labels_get(&copy->node_selector, "disk"), "ssd");
    ck_assert_str_eq(copy->priority_class_name, "system-cluster-critical");
    ck_assert_uint_eq(copy->n_tolerations, 1);
    ck_assert_str_eq(copy->tolerations[0].key, "k");
    ck_assert_uint_eq(copy->affinity.n_node_required, 1);
    ck_assert_str_eq(copy->affinity.node_required[0].exprs[0].values[1], "b");
    ck_assert_int_eq(copy->affinity.node_preferred[0].weight, 10);
    ck_assert_str_eq(copy->affinity.anti_required[0].topology_key, "kubernetes.io/hostname");
    ck_assert_str_eq(ns_labels_get(&copy->affinity.anti_required[0].selector.match_labels, "app"), "r");
    ck_assert_uint_eq(copy->n_spread, 1);
    ck_assert_str_eq(copy->spread[0].topology_key, "topology.kubernetes.io/zone");
    ck_assert_uint_eq(copy->n_host_ports, 1);
    ck_assert_int_eq(copy->host_ports[0].port, 8080);
    ck_assert_str_eq(copy->init_containers[0].name, "init");
    ck_assert_int_eq(copy->requests.cpu_milli, 2000);
    ns_pod_free(copy);
}
END_TEST

static const char DEPLOY[] = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 3\n"
                             "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n"
                             "    spec:\n      containers: [{name: c, resources: {requests: {cpu: 100m}}}]\n"
                             "---\napiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\nspec:\n"
                             "  replicas: 2\n  serviceName: db\n  selector: {matchLabels: {app: db}}\n"
                             "  template:\n    metadata: {labels: {app: db}}\n"
                             "    spec:\n      containers: [{name: c, resources: {requests: {cpu: 100m}}}]\n";

static size_t count_owned(const ns_cluster *c, const char *kind)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n_pods; i++)
        n += ns_pod_owned_by(c->pods[i], kind);
    return n;
}

START_TEST(test_scale_workloads)
{
    ns_clock_use_simulated(1000);
    ns_cluster *c = load(DEPLOY);
    ns_cluster_writes w = {0};
    ck_assert_int_eq(ns_cluster_writes_mem_new(c, true, &w), NS_OK);
    ck_assert_int_eq(ns_cluster_writes_mem_scale(&w, NULL, "Deployment", "web", 5), NS_OK);
    ck_assert_uint_eq(count_owned(c, "ReplicaSet"), 5);
    ck_assert_int_eq(ns_cluster_writes_mem_scale(&w, NULL, "Deployment", "web", 0), NS_OK);
    ck_assert_uint_eq(count_owned(c, "ReplicaSet"), 0);
    /* The template outlives the last pod. */
    ck_assert_int_eq(ns_cluster_writes_mem_scale(&w, "default", "Deployment", "web", 2), NS_OK);
    ck_assert_uint_eq(count_owned(c, "ReplicaSet"), 2);
    ck_assert_int_eq(c->pods[c->n_pods - 1]->pending_since_ms, 1000);
    ck_assert_int_eq(ns_cluster_writes_mem_scale(&w, NULL, "StatefulSet", "db", 4), NS_OK);
    ck_assert_ptr_nonnull(ns_cluster_find_pod(c, NULL, "db-3"));
    ck_assert_int_eq(ns_cluster_writes_mem_scale(&w, NULL, "StatefulSet", "db", 1), NS_OK);
    ck_assert_ptr_nonnull(ns_cluster_find_pod(c, NULL, "db-0"));
    ck_assert_ptr_null(ns_cluster_find_pod(c, NULL, "db-1"));
    ck_assert_int_eq(ns_cluster_writes_mem_scale(&w, NULL, "Deployment", "nope", 1), NS_ERR_NOT_FOUND);
    ns_cluster_writes_mem_free(&w);
    ns_cluster_free(c);
}
END_TEST

START_TEST(test_eviction_budget_rules)
{
    static const char yaml[] =
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {capacity: {cpu: '8', pods: '100'}}\n"
        "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: pct}\nspec:\n"
        "  maxUnavailable: 30%\n  selector: {matchLabels: {app: a}}\n";
    ns_cluster *c = load(yaml);
    char name[16];
    for (int i = 0; i < 4; i++) {
        ns_pod *p = ns_pod_new();
        snprintf(name, sizeof(name), "a%d", i);
        p->meta.name = strdup(name);
        p->meta.namespace_ = strdup("default");
        ns_labels_set(&p->meta.labels, "app", "a");
        if (i < 3) {
            p->node_name = strdup("n1");
            p->phase = strdup("Running");
        }
        ck_assert_int_eq(ns_cluster_add_pod(c, p), NS_OK);
    }
    /* 4 expected, maxUnavailable 30% rounds up to 2: 2 must be healthy; 3 are, so one may go. */
    ck_assert_int_eq(ns_pdb_check_eviction(c, ns_cluster_find_pod(c, NULL, "a0")), NS_OK);
    free(ns_cluster_find_pod(c, NULL, "a1")->node_name);
    ns_cluster_find_pod(c, NULL, "a1")->node_name = NULL;
    ck_assert_int_eq(ns_pdb_check_eviction(c, ns_cluster_find_pod(c, NULL, "a0")), NS_ERR_THROTTLED);
    ck_assert(strstr(ns_error_message(), "disruption budget default/pct: 2 healthy, 2 needed") != NULL);
    /* An unhealthy pod may go while the budget holds (IfHealthyBudget). */
    ck_assert_int_eq(ns_pdb_check_eviction(c, ns_cluster_find_pod(c, NULL, "a3")), NS_OK);
    ns_cluster_free(c);
}
END_TEST

/* Three replicas as a Deployment writes them: two with equal affinity and spread, one whose spread differs. */
static const char SHARING_PODS[] =
    "apiVersion: v1\nkind: Pod\nmetadata: {name: w0, labels: {app: w}}\nspec:\n"
    "  affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution:\n"
    "    [{labelSelector: {matchLabels: {app: w}}, topologyKey: kubernetes.io/hostname}]}}\n"
    "  topologySpreadConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone,\n"
    "    whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: w}}}]\n"
    "  containers: [{name: c, resources: {requests: {cpu: 100m}}}]\n"
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: w1, labels: {app: w}}\nspec:\n"
    "  affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution:\n"
    "    [{labelSelector: {matchLabels: {app: w}}, topologyKey: kubernetes.io/hostname}]}}\n"
    "  topologySpreadConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone,\n"
    "    whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: w}}}]\n"
    "  containers: [{name: c, resources: {requests: {cpu: 100m}}}]\n"
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: w2, labels: {app: w}}\nspec:\n"
    "  affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution:\n"
    "    [{labelSelector: {matchLabels: {app: w}}, topologyKey: kubernetes.io/hostname}]}}\n"
    "  topologySpreadConstraints: [{maxSkew: 2, topologyKey: topology.kubernetes.io/zone,\n"
    "    whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: w}}}]\n"
    "  containers: [{name: c, resources: {requests: {cpu: 100m}}}]\n"
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: plain}\nspec:\n"
    "  containers: [{name: c, resources: {requests: {cpu: 100m}}}]\n";

/* A cluster that did not ask keeps ordinary pods (the controller's mirror changes them in place). */
static bool load_plain_is_packed(void)
{
    ns_cluster *c = load(SHARING_PODS);
    bool packed = c->pods[0]->packed;
    ns_cluster_free(c);
    return packed;
}

START_TEST(test_packed_pods_share_constraints)
{
    ns_cluster *c = load_packed(SHARING_PODS);
    ck_assert(!load_plain_is_packed());
    ns_pod *w0 = ns_cluster_find_pod(c, NULL, "w0"), *w1 = ns_cluster_find_pod(c, NULL, "w1"),
           *w2 = ns_cluster_find_pod(c, NULL, "w2"), *plain = ns_cluster_find_pod(c, NULL, "plain");
    ck_assert(w0->packed && w1->packed && w2->packed && plain->packed);
    /* Equal constraints are held once; different ones, and none, are not shared. */
    ck_assert_ptr_nonnull(w0->share);
    ck_assert_ptr_eq(w0->share, w1->share);
    ck_assert_ptr_eq(w0->spread, w1->spread);
    ck_assert_ptr_eq(w0->affinity.anti_required, w1->affinity.anti_required);
    ck_assert_ptr_ne(w2->share, w0->share);
    ck_assert_int_eq(w2->spread[0].max_skew, 2);
    ck_assert_ptr_null(plain->share);
    /* The share outlives the first pod that leaves; a copy owns its own constraints. */
    ck_assert_int_eq(ns_cluster_remove_pod(c, w0), NS_OK);
    ck_assert_str_eq(w1->affinity.anti_required[0].topology_key, "kubernetes.io/hostname");
    ck_assert_str_eq(ns_labels_get(&w1->spread[0].selector.match_labels, "app"), "w");
    ns_pod *copy = ns_pod_copy(w1);
    ck_assert_ptr_nonnull(copy);
    ck_assert(!copy->packed && !copy->share);
    ck_assert_ptr_ne(copy->spread, w1->spread);
    ck_assert_int_eq(ns_cluster_remove_pod(c, w1), NS_OK);
    ck_assert_str_eq(copy->spread[0].topology_key, "topology.kubernetes.io/zone");
    ns_pod_free(copy);
    ns_cluster_free(c);
}
END_TEST

/* A packed pod is bound, rebound and returned to pending as the in-memory writes do it. */
START_TEST(test_packed_pod_binding)
{
    ns_cluster *c = load_packed("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  nodeName: n0\n"
                         "  containers: [{name: c}]\nstatus: {phase: Running}\n");
    ns_pod *p = c->pods[0];
    ck_assert(p->packed);
    ck_assert_str_eq(p->node_name, "n0");
    ck_assert_int_eq(ns_pod_set_binding(p, "n1", "Running"), NS_OK);
    ck_assert_str_eq(p->node_name, "n1");
    ck_assert_int_eq(ns_pod_set_binding(p, "n2", "Running"), NS_OK);
    ck_assert_str_eq(p->node_name, "n2");
    ck_assert_str_eq(p->phase, "Running");
    ck_assert_int_eq(ns_pod_set_binding(p, NULL, "Pending"), NS_OK);
    ck_assert_ptr_null(p->node_name);
    ck_assert_str_eq(p->phase, "Pending");
    ck_assert_int_eq(ns_pod_set_binding(p, "n3", NULL), NS_OK);
    ck_assert_ptr_null(p->phase);
    ns_cluster_free(c); /* the sanitizer build checks what was freed */
}
END_TEST

/* The NodePool hash is what the karpenter.sh/nodepool-hash annotation of every NodeClaim holds: a change of its value
 * drifts every node. Pinned to the value a straight Python transcription of the algorithm gives (FNV-1a from
 * NS_HASH_SEED, each string ended by 0xff, labels and taints summed per element, numbers in decimal), which is also
 * what the core computed before its hash copies became model/hash.h. FNV-1a itself against its published vectors. */
START_TEST(test_hashes_are_stable)
{
    ck_assert_uint_eq(ns_hash_str(NS_HASH_FNV_BASIS, ""), UINT64_C(0xcbf29ce484222325));
    ck_assert_uint_eq(ns_hash_str(NS_HASH_FNV_BASIS, "a"), UINT64_C(0xaf63dc4c8601ec8c));
    ck_assert_uint_eq(ns_hash_str(NS_HASH_FNV_BASIS, "foobar"), UINT64_C(0x85944171f73967e8));
    ck_assert_uint_eq(ns_hash_str(NS_HASH_SEED, NULL), NS_HASH_SEED);
    ck_assert_uint_ne(ns_hash_field(ns_hash_field(NS_HASH_SEED, "ab"), "c"),
                      ns_hash_field(ns_hash_field(NS_HASH_SEED, "a"), "bc"));
    ns_nodepool *np = ns_nodepool_new();
    ck_assert_int_eq(ns_labels_set(&np->labels, "team", "web"), 0);
    ns_taint gpu = {"dedicated", "gpu", "NoSchedule"}, startup = {"example.com/startup", NULL, "NoExecute"};
    ck_assert_int_eq(ns_taints_copy(&gpu, 1, &np->taints), 0);
    np->n_taints = 1;
    ck_assert_int_eq(ns_taints_copy(&startup, 1, &np->startup_taints), 0);
    np->n_startup_taints = 1;
    np->nodeclass_ref.group = ns_strdup("karpenter.k8s.aws");
    np->nodeclass_ref.kind = ns_strdup("EC2NodeClass");
    np->nodeclass_ref.name = ns_strdup("default");
    char hash[32];
    ns_nodepool_hash(np, hash, sizeof(hash));
    ck_assert_str_eq(hash, "e4bc5c3dc2fad26b");
    ns_nodepool_free(np);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("engine-model");
    TCase *tc = tcase_create("model");
    tcase_add_test(tc, test_remove_pods_keeps_index);
    tcase_add_test(tc, test_conditions_and_finalizers);
    tcase_add_test(tc, test_pod_copy_is_deep);
    tcase_add_test(tc, test_scale_workloads);
    tcase_add_test(tc, test_eviction_budget_rules);
    tcase_add_test(tc, test_packed_pods_share_constraints);
    tcase_add_test(tc, test_packed_pod_binding);
    tcase_add_test(tc, test_hashes_are_stable);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
