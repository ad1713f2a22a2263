/* Every supported kind loaded from the fixture directory, and what the loader made of it. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "log/ns_log.h"
#include "manifest/loader.h"
#include "model/duration.h"
#include "model/resources.h"
#include "test_kinds.h"

static ns_cluster *cluster;
static char *log_text;

/* Loads fixtures/cluster once per test with the log captured. */
static void setup(void)
{
    FILE *log = tmpfile();
    ck_assert_ptr_nonnull(log);
    ns_log_set_output(log);
    cluster = test_cluster_new();
    int rc = ns_manifest_load_path(cluster, FIXTURE_DIR "/cluster");
    ck_assert_msg(rc == 0, "%s", ns_error_message());
    ck_assert_msg(ns_cluster_resolve(cluster) == 0, "%s", ns_error_message());
    fflush(log);
    long n = ftell(log);
    rewind(log);
    log_text = calloc(1, (size_t)n + 1);
    ck_assert_uint_eq(fread(log_text, 1, (size_t)n, log), (size_t)n);
    fclose(log);
    ns_log_set_output(stderr);
}

static void teardown(void)
{
    ns_cluster_free(cluster);
    free(log_text);
}

/* The whole log line containing needle, or NULL; static buffer. */
static const char *log_line(const char *needle)
{
    static char line[2048];
    const char *hit = strstr(log_text, needle);
    if (!hit)
        return NULL;
    const char *start = hit;
    while (start > log_text && start[-1] != '\n')
        start--;
    const char *end = strchr(hit, '\n');
    size_t len = end ? (size_t)(end - start) : strlen(start);
    snprintf(line, sizeof(line), "%.*s", (int)len, start);
    return line;
}

static const ns_pod *pod(const char *ns, const char *name)
{
    const ns_pod *p = ns_cluster_find_pod(cluster, ns, name);
    ck_assert_msg(p != NULL, "pod %s/%s not loaded", ns ? ns : "default", name);
    return p;
}

START_TEST(test_counts_and_order)
{
    /* solo + 3 web + 2 cache + 2 db + 3 report + listed */
    ck_assert_uint_eq(cluster->n_pods, 12);
    ck_assert_str_eq(cluster->pods[0]->meta.name, "solo");
    ck_assert_str_eq(cluster->pods[11]->meta.name, "listed");
    ck_assert_uint_eq(cluster->n_nodepools, 3);
    ck_assert_str_eq(cluster->nodepools[0]->meta.name, "general");
    ck_assert_str_eq(cluster->nodepools[1]->meta.name, "beta");
    ck_assert_str_eq(cluster->nodepools[2]->meta.name, "old");
    ck_assert_uint_eq(cluster->n_nodeclasses, 3);
    ck_assert_uint_eq(cluster->n_daemonsets, 1);
    ck_assert_uint_eq(cluster->n_pdbs, 1);
    ck_assert_uint_eq(cluster->n_nodes, 1);
    ck_assert_uint_eq(cluster->n_nodeclaims, 1);
}
END_TEST

START_TEST(test_pod)
{
    const ns_pod *p = pod(NULL, "solo");
    ck_assert_str_eq(p->meta.namespace_, "default");
    ck_assert_int_eq(p->meta.source_line, 1);
    ck_assert_ptr_nonnull(strstr(p->meta.source_file, "30-workloads.yaml"));
    ck_assert_int_eq(p->do_not_disrupt_ms, NS_DO_NOT_DISRUPT_ALWAYS);
    ck_assert_str_eq(p->priority_class_name, "high");
    /* limits default the requests; init container cpu (2) beats the app (500m) */
    ck_assert_int_eq(p->requests.cpu_milli, 2000);
    ck_assert_int_eq(p->requests.memory_bytes, INT64_C(1073741824));
    ck_assert_int_eq(ns_res_get(&p->requests, "nvidia.com/gpu"), 1);
    ck_assert_int_eq(p->requests.pods, 1);
    ck_assert_uint_eq(p->n_host_ports, 1);
    ck_assert_int_eq(p->host_ports[0].port, 80);
    ck_assert_str_eq(p->host_ports[0].protocol, "TCP");
    ck_assert_str_eq(p->host_ports[0].ip, "0.0.0.0");
    ck_assert_uint_eq(p->n_tolerations, 2);
    ck_assert(p->tolerations[1].exists && p->tolerations[1].has_toleration_seconds);
    ck_assert_int_eq(p->tolerations[1].toleration_seconds, 300);
    ck_assert(p->affinity.has_node_required);
    ck_assert_uint_eq(p->affinity.n_node_required, 2);
    ck_assert_int_eq(p->affinity.node_required[1].exprs[0].op, NS_OP_GT);
    ck_assert_uint_eq(p->affinity.n_node_preferred, 2);
    ck_assert_uint_eq(p->affinity.n_anti_required, 1);
    ck_assert_str_eq(p->affinity.anti_required[0].topology_key, "kubernetes.io/hostname");
    ck_assert_uint_eq(p->n_spread, 1);
    ck_assert_int_eq(p->spread[0].min_domains, 3);
    ck_assert_int_eq(p->spread[0].node_taints_policy, NS_POLICY_IGNORE);

    /* Karpenter's pod requirements: nodeSelector + first required term + heaviest preference (on-demand, 90). */
    ns_requirements r;
    char buf[512];
    ck_assert_int_eq(ns_pod_node_requirements(p, 0, 0, &r), 0);
    ck_assert_str_eq(ns_requirements_format(&r, buf, sizeof(buf)),
                     "karpenter.sh/capacity-type In [on-demand], kubernetes.io/arch In [amd64], "
                     "topology.kubernetes.io/zone In [us-east-1a]");
    ns_requirements_free(&r);

    const ns_pod *listed = pod(NULL, "listed");
    ck_assert_int_eq(listed->requests.cpu_milli, 1);    /* 0.1m rounds up */
    ck_assert_int_eq(listed->requests.memory_bytes, 1); /* 100m bytes rounds up */
}
END_TEST

START_TEST(test_workload_expansion)
{
    size_t web = 0;
    const ns_pod *first = NULL;
    for (size_t i = 0; i < cluster->n_pods; i++) {
        const ns_pod *p = cluster->pods[i];
        if (p->meta.owner_kind && strcmp(p->meta.owner_kind, "ReplicaSet") == 0 &&
            strncmp(p->meta.owner_name, "web-", 4) == 0) {
            web++;
            first = first ? first : p;
            ck_assert_str_eq(p->meta.namespace_, "shop");
            ck_assert_int_eq(p->requests.cpu_milli, 250);
        }
    }
    ck_assert_uint_eq(web, 3);
    /* <deploy>-<hash>-<5 chars>, the hash also in the pod-template-hash label */
    const char *hash = ns_labels_get(&first->meta.labels, "pod-template-hash");
    ck_assert_ptr_nonnull(hash);
    char prefix[64];
    snprintf(prefix, sizeof(prefix), "web-%s-", hash);
    ck_assert_msg(strncmp(first->meta.name, prefix, strlen(prefix)) == 0, "%s", first->meta.name);
    ck_assert_uint_eq(strlen(first->meta.name), strlen(prefix) + 5);
    ck_assert_str_eq(ns_labels_get(&first->meta.labels, "app"), "web");

    const ns_pod *db1 = pod(NULL, "db-1");
    ck_assert_str_eq(db1->meta.owner_kind, "StatefulSet");
    ck_assert_str_eq(ns_labels_get(&db1->meta.labels, "statefulset.kubernetes.io/pod-name"), "db-1");
    ck_assert_int_eq(db1->requests.memory_bytes, INT64_C(4) << 30);

    size_t report = 0, cache = 0;
    for (size_t i = 0; i < cluster->n_pods; i++) {
        const ns_pod *p = cluster->pods[i];
        if (ns_pod_owned_by(p, "Job")) {
            report++;
            ck_assert_str_eq(ns_labels_get(&p->meta.labels, "job-name"), "report");
            ck_assert_int_eq(p->requests.cpu_milli, 1500);
            ck_assert_int_eq(p->requests.memory_bytes, 1000000000);
        }
        if (p->meta.owner_name && strcmp(p->meta.owner_name, "cache") == 0)
            cache++;
    }
    ck_assert_uint_eq(report, 3); /* min(parallelism 4, completions 3) */
    ck_assert_uint_eq(cache, 2);

    const ns_daemonset *ds = ns_cluster_find_daemonset(cluster, "kube-system", "agent");
    ck_assert_ptr_nonnull(ds);
    ck_assert_str_eq(ds->template_pod->meta.owner_kind, "DaemonSet");
    ck_assert_int_eq(ds->template_pod->requests.cpu_milli, 100);
    ck_assert(ds->template_pod->tolerations[0].exists);
}
END_TEST

START_TEST(test_deterministic_names)
{
    ns_cluster *again = test_cluster_new();
    ck_assert_int_eq(ns_manifest_load_path(again, FIXTURE_DIR "/cluster"), 0);
    ck_assert_uint_eq(again->n_pods, cluster->n_pods);
    for (size_t i = 0; i < again->n_pods; i++)
        ck_assert_str_eq(again->pods[i]->meta.name, cluster->pods[i]->meta.name);
    ns_cluster_free(again);
}
END_TEST

START_TEST(test_nodepool_v1)
{
    const ns_nodepool *np = ns_cluster_find_nodepool(cluster, "general");
    ck_assert_str_eq(np->api_version, "karpenter.sh/v1");
    ck_assert_str_eq(ns_labels_get(&np->labels, "team"), "web");
    ck_assert_str_eq(ns_labels_get(&np->annotations, "example.com/owner"), "platform");
    ck_assert_uint_eq(np->n_taints, 1);
    ck_assert_uint_eq(np->n_startup_taints, 1);
    ck_assert_uint_eq(np->n_requirements, 3);
    ck_assert_int_eq(np->requirements[1].min_values, 2);
    ck_assert_int_eq(np->requirements[2].op, NS_OP_GTE);
    ck_assert_str_eq(np->nodeclass_ref.group, "karpenter.k8s.aws");
    ck_assert_str_eq(np->nodeclass_ref.kind, "EC2NodeClass");
    ck_assert_int_eq(np->expire_after_ms, INT64_C(168) * 3600000);
    ck_assert_int_eq(np->termination_grace_period_ms, 3600000);
    ck_assert_int_eq(np->consolidation_policy, NS_CONSOLIDATE_WHEN_EMPTY);
    ck_assert_int_eq(np->consolidate_after_ms, 300000);
    ck_assert_uint_eq(np->n_budgets, 2);
    ck_assert(np->budgets[0].nodes_percent);
    ck_assert_int_eq(np->budgets[0].nodes, 20);
    ck_assert_uint_eq(np->budgets[0].reasons, NS_REASON_EMPTY | NS_REASON_DRIFTED);
    ck_assert(!np->budgets[1].nodes_percent);
    ck_assert_int_eq(np->budgets[1].nodes, 0);
    ck_assert_str_eq(np->budgets[1].schedule, "0 9 * * mon-fri");
    ck_assert_int_eq(np->budgets[1].duration_ms, 8 * 3600000);
    ck_assert(np->limits.cpu && np->limits.memory && !np->limits.pods);
    ck_assert_int_eq(np->limits.max.cpu_milli, 1000000);
    ck_assert_int_eq(np->weight, 10);
    /* kubelet settings come from the EC2NodeClass, filled in by ns_cluster_resolve */
    ck_assert(np->kubelet.present && np->kubelet.has_max_pods);
    ck_assert_int_eq(np->kubelet.max_pods, 110);
    ck_assert_int_eq(np->kubelet.kube_reserved.memory_bytes, 512 << 20);
    ck_assert_str_eq(ns_labels_get(&np->kubelet.eviction_hard, "memory.available"), "5%");
    ck_assert_ptr_eq(ns_cluster_nodeclass_for(cluster, &np->nodeclass_ref),
                     ns_cluster_find_nodeclass(cluster, "EC2NodeClass", "default"));
}
END_TEST

START_TEST(test_nodepool_v1beta1_converted)
{
    const ns_nodepool *np = ns_cluster_find_nodepool(cluster, "beta");
    ck_assert_str_eq(np->api_version, "karpenter.sh/v1beta1");
    ck_assert_int_eq(np->consolidation_policy, NS_CONSOLIDATE_WHEN_EMPTY_OR_UNDERUTILIZED);
    ck_assert_int_eq(np->consolidate_after_ms, 0);
    ck_assert_int_eq(np->expire_after_ms, NS_DURATION_NEVER);
    ck_assert_int_eq(np->kubelet.max_pods, 58); /* its own kubelet wins over the class's */
    ck_assert_int_eq(np->kubelet.pods_per_core, 4);
    ck_assert_uint_eq(np->n_budgets, 1); /* default 10% */
    ck_assert(np->budgets[0].nodes_percent);
    ck_assert_int_eq(np->budgets[0].nodes, 10);
    ck_assert_ptr_nonnull(strstr(log_text, "converted a karpenter.sh/v1beta1 NodePool to karpenter.sh/v1"));
}
END_TEST

START_TEST(test_provisioner_converted)
{
    const ns_nodepool *np = ns_cluster_find_nodepool(cluster, "old");
    ck_assert(np->converted_from_provisioner);
    ck_assert_str_eq(np->api_version, "karpenter.sh/v1alpha5");
    ck_assert_int_eq(np->consolidation_policy, NS_CONSOLIDATE_WHEN_EMPTY);
    ck_assert_int_eq(np->consolidate_after_ms, 30000);
    ck_assert_int_eq(np->expire_after_ms, INT64_C(2592000000));
    ck_assert_str_eq(ns_labels_get(&np->labels, "tier"), "batch");
    ck_assert_str_eq(np->taints[0].key, "batch");
    ck_assert_str_eq(np->nodeclass_ref.kind, "AWSNodeTemplate");
    ck_assert_str_eq(np->nodeclass_ref.group, "karpenter.k8s.aws");
    ck_assert_str_eq(np->nodeclass_ref.name, "legacy");
    ck_assert(np->limits.cpu);
    ck_assert_int_eq(np->limits.max.cpu_milli, 64000);
    ck_assert_int_eq(np->weight, 5);
    ck_assert_int_eq(np->kubelet.max_pods, 30);
    ck_assert_int_eq(np->kubelet.system_reserved.cpu_milli, 200);
    const char *line = log_line("converted a karpenter.sh/v1alpha5 Provisioner to a karpenter.sh/v1 NodePool");
    ck_assert_msg(line != NULL, "%s", log_text);
    ck_assert_ptr_nonnull(strstr(line, "\"provisioner\":\"old\""));
    ck_assert_ptr_nonnull(strstr(line, "\"consolidateAfter\":\"30s\""));
    ck_assert_ptr_nonnull(strstr(line, "\"level\":\"INFO\""));
}
END_TEST

START_TEST(test_nodeclasses_json)
{
    const ns_nodeclass_def *sim = ns_cluster_find_nodeclass(cluster, "SimNodeClass", "sim");
    ck_assert_ptr_nonnull(sim);
    ck_assert_str_eq(sim->abi.kind, "SimNodeClass");
    ck_assert_str_eq(sim->abi.api_version, "nodesmith.io/v1");
    ck_assert_str_eq(sim->abi.name, "sim");
    ck_assert_ptr_eq((const void *)sim->abi.spec, sim->spec);
    char *json = cJSON_PrintUnformatted(sim->spec);
    ck_assert_str_eq(json, "{\"imageFamily\":\"AL2023\",\"zones\":[\"us-west-2a\",\"us-west-2b\"],"
                           "\"kubelet\":{\"maxPods\":58}}");
    free(json);
    const ns_nodeclass_def *ec2 = ns_cluster_find_nodeclass(cluster, "EC2NodeClass", "default");
    ck_assert_str_eq(cJSON_GetObjectItem(ec2->spec, "role")->valuestring, "KarpenterNodeRole-demo");
    ck_assert(ec2->kubelet.present);
    const ns_nodeclass_def *legacy = ns_cluster_find_nodeclass(cluster, "AWSNodeTemplate", "legacy");
    ck_assert(!legacy->kubelet.present);
}
END_TEST

START_TEST(test_nodes_claims_pdbs)
{
    const ns_node *n = ns_cluster_find_node(cluster, "ip-10-0-0-1");
    ck_assert_str_eq(n->provider_id, "aws:///us-east-1a/i-0123456789abcdef0");
    ck_assert(n->ready);
    ck_assert_int_eq(n->capacity.cpu_milli, 2000);
    ck_assert_int_eq(n->allocatable.cpu_milli, 1930);
    ck_assert_int_eq(n->allocatable.pods, 29);
    ck_assert_str_eq(ns_labels_get(&n->meta.labels, "karpenter.sh/nodepool"), "general");
    ck_assert_str_eq(n->taints[0].value, "web");
    ck_assert_ptr_null(n->meta.namespace_);

    const ns_nodeclaim *claim = ns_cluster_find_nodeclaim(cluster, "general-abcde");
    ck_assert_str_eq(claim->node_name, "ip-10-0-0-1");
    ck_assert_int_eq(claim->requests.cpu_milli, 1500);
    ck_assert_int_eq(claim->requests.pods, 3);
    ck_assert_int_eq(claim->capacity.cpu_milli, 2000);
    ck_assert_uint_eq(claim->n_requirements, 1);

    const ns_pdb *pdb = ns_cluster_find_pdb(cluster, "shop", "web");
    ck_assert(pdb->max_unavailable.set && pdb->max_unavailable.percent);
    ck_assert_int_eq(pdb->max_unavailable.value, 25);
    ck_assert_int_eq(ns_int_or_percent_scaled(&pdb->max_unavailable, 3), 1);
    size_t covered = 0;
    for (size_t i = 0; i < cluster->n_pods; i++)
        covered += ns_pdb_selects(pdb, cluster->pods[i]);
    ck_assert_uint_eq(covered, 3);
}
END_TEST

START_TEST(test_unknown_kind_warning)
{
    const char *line = log_line("skipping a manifest of an unknown kind");
    ck_assert_msg(line != NULL, "%s", log_text);
    ck_assert_ptr_nonnull(strstr(line, "\"level\":\"WARN\""));
    ck_assert_ptr_nonnull(strstr(line, "\"kind\":\"ConfigMap\""));
    ck_assert_ptr_nonnull(strstr(line, "50-other.yaml"));
    ck_assert_ptr_nonnull(strstr(line, "\"line\":\"1\""));
}
END_TEST

/* A fresh cluster of FIXTURE_DIR/dump/FILE, its pods packed or not (simulate packs them). */
static ns_cluster *load_dump(const char *file, bool packed)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/dump/%s", FIXTURE_DIR, file);
    ns_cluster *c = test_cluster_new();
    ns_cluster_set_packed_pods(c, packed);
    int rc = ns_manifest_load_path(c, path);
    ck_assert_msg(rc == 0, "%s: %s", file, ns_error_message());
    ck_assert_msg(ns_cluster_resolve(c) == 0, "%s", ns_error_message());
    return c;
}

/* The cluster's pod names, sorted, ","-joined into buf. */
static const char *pod_names(const ns_cluster *c, char *buf, size_t len)
{
    const char *names[64];
    size_t n = c->n_pods < 64 ? c->n_pods : 64;
    for (size_t i = 0; i < n; i++)
        names[i] = c->pods[i]->meta.name;
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            const char *t = names[j];
            names[j] = names[j - 1];
            names[j - 1] = t;
        }
    buf[0] = '\0';
    for (size_t i = 0; i < n; i++)
        snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", i ? "," : "", names[i]);
    return buf;
}

static size_t owned_by(const ns_cluster *c, const char *kind, const char *name)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n_pods; i++)
        n += c->pods[i]->meta.owner_kind && strcmp(c->pods[i]->meta.owner_kind, kind) == 0 &&
             strcmp(c->pods[i]->meta.owner_name, name) == 0;
    return n;
}

/* `kubectl get -o yaml` of a real control plane: a Deployment, its ReplicaSet, a StatefulSet and a Job, each before its
 * pods. The pods are the dump's 7, none expanded from their workloads as well. */
START_TEST(test_live_dump_counts_each_workload_once)
{
    ns_cluster *c = load_dump("live-dump.yaml", _i == 1);
    char buf[1024];
    ck_assert_str_eq(pod_names(c, buf, sizeof(buf)), "batch-kcjvt,batch-nvh6j,db-0,db-1,web-6c4948cfb6-6f6rr,"
                                                     "web-6c4948cfb6-gq82v,web-6c4948cfb6-ngs52");
    ck_assert_uint_eq(owned_by(c, "ReplicaSet", "web-6c4948cfb6"), 3);
    ck_assert_uint_eq(owned_by(c, "StatefulSet", "db"), 2);
    ck_assert_uint_eq(owned_by(c, "Job", "batch"), 2);
    /* the real pods keep what the scheduler decided */
    ck_assert_str_eq(ns_cluster_find_pod(c, "shop", "web-6c4948cfb6-gq82v")->node_name, "static-1");
    ns_cluster_free(c);
}
END_TEST

/* What a default topology spread's selector is deduced from: Services (a selector, none, an empty one) and the
 * controllers of the workloads' pods with their selectors (a Deployment's ReplicaSet also selects its
 * pod-template-hash, as the Deployment controller writes it). */
START_TEST(test_services_and_pod_controllers)
{
    static const char text[] =
        "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\n"
        "spec: {type: ClusterIP, selector: {app: web}, ports: [{port: 80}]}\n---\n"
        "apiVersion: v1\nkind: Service\nmetadata: {name: external}\nspec: {type: ExternalName, externalName: x.example}\n"
        "---\napiVersion: v1\nkind: Service\nmetadata: {name: all}\nspec: {selector: {}}\n---\n"
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\n"
        "spec: {replicas: 1, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, "
        "spec: {containers: [{name: c, image: nginx}]}}}\n---\n"
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\n"
        "spec: {replicas: 1, selector: {matchExpressions: [{key: app, operator: In, values: [db]}]}, "
        "template: {metadata: {labels: {app: db}}, spec: {containers: [{name: c, image: postgres}]}}}\n";
    ns_cluster *c = test_cluster_new();
    ck_assert_msg(ns_manifest_load_string(c, "inline.yaml", text, strlen(text)) == NS_OK, "%s", ns_error_message());
    ck_assert_uint_eq(c->n_services, 3);
    const ns_service *web = ns_cluster_find_service(c, "shop", "web");
    ck_assert(web && web->has_selector);
    ck_assert_str_eq(ns_labels_get(&web->selector, "app"), "web");
    ck_assert(!ns_cluster_find_service(c, "default", "external")->has_selector);
    const ns_service *all = ns_cluster_find_service(c, "default", "all");
    ck_assert(all->has_selector && all->selector.n == 0);
    /* the ReplicaSet owning web's pods, the StatefulSet, and the Deployment itself (a buffer's scalableRef) */
    ck_assert_uint_eq(c->n_pod_controllers, 3);
    const ns_workload *deploy = ns_cluster_find_pod_controller(c, "Deployment", "shop", "web");
    ck_assert(deploy && deploy->replicas == 1 && deploy->template_pod && !deploy->template_pod->meta.owner_kind);
    ck_assert_str_eq(ns_labels_get(&deploy->template_pod->meta.labels, "app"), "web");
    const ns_pod *pod = NULL;
    for (size_t i = 0; i < c->n_pods; i++)
        if (strcmp(c->pods[i]->meta.namespace_, "shop") == 0)
            pod = c->pods[i];
    ck_assert_ptr_nonnull(pod);
    const ns_workload *rs = ns_cluster_find_pod_controller(c, "ReplicaSet", "shop", pod->meta.owner_name);
    ck_assert_ptr_nonnull(rs);
    ck_assert_str_eq(ns_labels_get(&rs->selector.match_labels, "app"), "web");
    ck_assert_str_eq(ns_labels_get(&rs->selector.match_labels, "pod-template-hash"),
                     ns_labels_get(&pod->meta.labels, "pod-template-hash"));
    const ns_workload *db = ns_cluster_find_pod_controller(c, "StatefulSet", "default", "db");
    ck_assert(db && db->selector.n_exprs == 1 && db->replicas == 1 && db->template_pod);
    ns_cluster_free(c);
}
END_TEST

/* A dump's ReplicaSet and StatefulSet are recorded once, whichever of them and their Deployment comes first. */
START_TEST(test_live_dump_records_controllers_once)
{
    ns_cluster *c = load_dump("live-dump.yaml", _i == 1);
    const ns_workload *rs = ns_cluster_find_pod_controller(c, "ReplicaSet", "shop", "web-6c4948cfb6");
    ck_assert_ptr_nonnull(rs);
    ck_assert(rs->selector.present);
    ck_assert_ptr_nonnull(ns_cluster_find_pod_controller(c, "StatefulSet", "shop", "db"));
    size_t n_rs = 0;
    for (size_t i = 0; i < c->n_pod_controllers; i++)
        n_rs += strcmp(c->pod_controllers[i]->meta.name, "web-6c4948cfb6") == 0;
    ck_assert_uint_eq(n_rs, 1);
    ns_cluster_free(c);
}
END_TEST

/* Objects before their workloads, and parts of a dump: a ReplicaSet without its pods stands for its Deployment, a pod
 * for its Deployment through its ReplicaSet's name, a StatefulSet's pod for the StatefulSet; a workload with nothing
 * of its own is expanded. */
START_TEST(test_partial_dump_counts_each_workload_once)
{
    ns_cluster *c = load_dump("partial.yaml", _i == 1);
    ck_assert_uint_eq(owned_by(c, "ReplicaSet", "api-5d8f7c9b4"), 2);
    ck_assert_uint_eq(owned_by(c, "ReplicaSet", "front-7f9c6d8b5"), 1);
    ck_assert_uint_eq(owned_by(c, "StatefulSet", "cache"), 1);
    size_t worker = 0;
    for (size_t i = 0; i < c->n_pods; i++)
        worker += strncmp(c->pods[i]->meta.name, "worker-", 7) == 0;
    ck_assert_uint_eq(worker, 2);
    ck_assert_uint_eq(c->n_pods, 6);
    ns_cluster_free(c);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("manifest-load");
    TCase *tc = tcase_create("load");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_counts_and_order);
    tcase_add_test(tc, test_pod);
    tcase_add_test(tc, test_workload_expansion);
    tcase_add_test(tc, test_deterministic_names);
    tcase_add_test(tc, test_nodepool_v1);
    tcase_add_test(tc, test_nodepool_v1beta1_converted);
    tcase_add_test(tc, test_provisioner_converted);
    tcase_add_test(tc, test_nodeclasses_json);
    tcase_add_test(tc, test_nodes_claims_pdbs);
    tcase_add_test(tc, test_unknown_kind_warning);
    tcase_add_test(tc, test_services_and_pod_controllers);
    suite_add_tcase(s, tc);
    TCase *dumps = tcase_create("dumps"); /* each test twice: ordinary pods (_i 0), then packed (_i 1) */
    tcase_add_loop_test(dumps, test_live_dump_counts_each_workload_once, 0, 2);
    tcase_add_loop_test(dumps, test_partial_dump_counts_each_workload_once, 0, 2);
    tcase_add_loop_test(dumps, test_live_dump_records_controllers_once, 0, 2);
    suite_add_tcase(s, dumps);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
