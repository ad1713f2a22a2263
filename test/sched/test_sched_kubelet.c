/*
 * Kubelet settings and what fits on a node: pool-level settings applied by the core (v1alpha5/v1beta1 pools), and a
 * node class's spec.kubelet honoured by the sim provider (SimNodeClass, EC2NodeClass v1). Each case has a naive
 * answer that is wrong: keeping the ENI-based kube-reserved memory after maxPods lowers the pod count, ignoring
 * podsPerCore, replacing all of kube-reserved when one resource is named, reading 100% as the whole capacity.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "errors/ns_error.h"
#include "log/ns_log.h"
#include "model/labels.h"
#include "plugin/plugin_loader.h"
#include "sched_fixture.h"

#define MI FX_MI

/* An AWS-style type: kube-reserved 11Mi per pod + 255Mi and 70m cpu, eviction 100Mi, as the sim reports them. */
static ns_itype *aws_type(ns_itype_set *set, const char *name, int64_t vcpu, int64_t mem_mib, int64_t pods,
                          double price)
{
    char offers[128];
    snprintf(offers, sizeof(offers), "z-a:on-demand:%.4f", price);
    ns_itype *t = fx_type(set, name, vcpu * 1000, mem_mib * MI, pods, "kubernetes.io/arch=amd64", offers);
    t->kube_reserved.cpu_milli = 70;
    t->kube_reserved.memory_bytes = (11 * pods + 255) * MI;
    t->eviction_threshold.memory_bytes = 100 * MI;
    t->allocatable.cpu_milli = t->capacity.cpu_milli - 70;
    t->allocatable.memory_bytes = t->capacity.memory_bytes - t->kube_reserved.memory_bytes - 100 * MI;
    return t;
}

typedef struct env {
    ns_cluster *c;
    ns_itype_set set;
    ns_sched_result r;
    ns_nodepool *np;
} env;

/* small: 2 vCPU, 4096Mi, 58 ENI pods (893Mi kube-reserved, 3103Mi allocatable); medium: twice that, dearer. */
static void env_init(env *e)
{
    memset(e, 0, sizeof(*e));
    e->c = ns_cluster_new();
    ck_assert_ptr_nonnull(e->c);
    aws_type(&e->set, "small", 2, 4096, 58, 0.1);
    aws_type(&e->set, "medium", 4, 8192, 58, 0.2);
    e->np = fx_pool(e->c, "default", 0, "");
    e->np->kubelet.present = true;
}

static void env_free(env *e)
{
    ns_sched_result_free(&e->r);
    ns_itype_set_free(&e->set);
    ns_cluster_free(e->c);
}

static const char *type_of(env *e, const char *pod)
{
    fx_run(e->c, &e->set, NULL, &e->r);
    const ns_sched_claim *cl = fx_claim_of(e->c, &e->r, pod);
    ck_assert_msg(cl != NULL, "pod %s was not placed: %s", pod, fx_reason(e->c, &e->r, pod));
    return cl->options[0].type->name;
}

/* Adds an unlabelled pending pod and asserts the round launches it on `type`. */
static void expect_type(env *e, const char *pod, int64_t cpu, int64_t mem, const char *type)
{
    fx_pod(e->c, pod, cpu, mem, "");
    ck_assert_str_eq(type_of(e, pod), type);
}

static void pods(ns_cluster *c, int n, int64_t cpu, int64_t mem)
{
    for (int i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof(name), "p%d", i);
        fx_pod(c, name, cpu, mem, "app=p");
    }
}

START_TEST(max_pods_lowers_kube_reserved_memory)
{
    env e;
    env_init(&e);
    e.np->kubelet.has_max_pods = true;
    e.np->kubelet.max_pods = 20;
    /* 3400Mi: more than small's 3103Mi with 58 pods reserved, less than its 3521Mi once 20 pods reserve 475Mi. */
    expect_type(&e, "big", 500, 3400 * MI, "small");
    env_free(&e);
}
END_TEST

START_TEST(without_max_pods_the_eni_reservation_stays)
{
    env e;
    env_init(&e);
    expect_type(&e, "big", 500, 3400 * MI, "medium");
    env_free(&e);
}
END_TEST

START_TEST(max_pods_counts_daemonset_pods)
{
    env e;
    env_init(&e);
    e.np->kubelet.has_max_pods = true;
    e.np->kubelet.max_pods = 3;
    fx_daemonset(e.c, "agent", 10, 10 * MI);
    pods(e.c, 6, 10, 10 * MI);
    fx_run(e.c, &e.set, NULL, &e.r);
    /* Three pod slots, one taken by the DaemonSet pod: two app pods per node. */
    ck_assert_uint_eq(e.r.n_claims, 3);
    for (size_t i = 0; i < e.r.n_claims; i++)
        ck_assert_uint_eq(e.r.claims[i].n_pods, 2);
    env_free(&e);
}
END_TEST

START_TEST(pods_per_core_on_two_vcpus_gives_four_pods)
{
    env e;
    memset(&e, 0, sizeof(e));
    e.c = ns_cluster_new();
    aws_type(&e.set, "small", 2, 4096, 58, 0.1);
    e.np = fx_pool(e.c, "default", 0, "");
    e.np->kubelet.present = true;
    e.np->kubelet.has_pods_per_core = true;
    e.np->kubelet.pods_per_core = 2;
    pods(e.c, 9, 10, 10 * MI);
    fx_run(e.c, &e.set, NULL, &e.r);
    ck_assert_uint_eq(e.r.n_claims, 3);
    ck_assert_uint_eq(e.r.claims[0].n_pods, 4);
    ck_assert_uint_eq(e.r.claims[1].n_pods, 4);
    ck_assert_uint_eq(e.r.claims[2].n_pods, 1);
    env_free(&e);
}
END_TEST

START_TEST(pods_per_core_frees_kube_reserved_memory)
{
    env e;
    env_init(&e);
    e.np->kubelet.has_pods_per_core = true;
    e.np->kubelet.pods_per_core = 2;
    /* 4 pods on small reserve 299Mi: 4096 - 299 - 100 = 3697Mi allocatable. */
    expect_type(&e, "big", 500, 3690 * MI, "small");
    env_free(&e);
}
END_TEST

START_TEST(kube_reserved_override_changes_which_type_fits)
{
    env e;
    env_init(&e);
    e.np->kubelet.has_kube_reserved = true;
    e.np->kubelet.kube_reserved.memory_bytes = 1024 * MI;
    /* Fits small's 3103Mi by default, not its 2972Mi under 1Gi of kube-reserved memory. */
    expect_type(&e, "p", 500, 3050 * MI, "medium");
    env_free(&e);
}
END_TEST

START_TEST(kube_reserved_cpu_keeps_the_memory_reservation)
{
    env e;
    env_init(&e);
    e.np->kubelet.has_kube_reserved = true;
    e.np->kubelet.kube_reserved.cpu_milli = 100;
    /* Naming cpu only must not drop the 893Mi memory reservation (3103Mi allocatable on small). */
    expect_type(&e, "p", 500, 3500 * MI, "medium");
    env_free(&e);
}
END_TEST

START_TEST(system_reserved_cpu_changes_which_type_fits)
{
    env e;
    env_init(&e);
    e.np->kubelet.has_system_reserved = true;
    e.np->kubelet.system_reserved.cpu_milli = 500;
    /* 1900m fits small's 1930m, not 1430m once the system reserves half a core. */
    expect_type(&e, "p", 1900, 100 * MI, "medium");
    env_free(&e);
}
END_TEST

START_TEST(eviction_percentage_is_of_memory_capacity)
{
    env e;
    env_init(&e);
    ck_assert_int_eq(ns_labels_set(&e.np->kubelet.eviction_hard, "memory.available", "20%"), 0);
    /* 20% of 4096Mi is 820Mi: small keeps 2384Mi, so a 2500Mi pod needs medium. */
    expect_type(&e, "p", 500, 2500 * MI, "medium");
    env_free(&e);
}
END_TEST

START_TEST(eviction_of_one_hundred_percent_disables_the_threshold)
{
    env e;
    env_init(&e);
    ck_assert_int_eq(ns_labels_set(&e.np->kubelet.eviction_hard, "memory.available", "100%"), 0);
    /* No threshold: 4096 - 893 = 3203Mi on small. */
    expect_type(&e, "p", 500, 3200 * MI, "small");
    env_free(&e);
}
END_TEST

START_TEST(eviction_soft_and_hard_take_the_larger)
{
    env e;
    env_init(&e);
    ck_assert_int_eq(ns_labels_set(&e.np->kubelet.eviction_hard, "memory.available", "200Mi"), 0);
    ck_assert_int_eq(ns_labels_set(&e.np->kubelet.eviction_soft, "memory.available", "600Mi"), 0);
    /* 4096 - 893 - 600 = 2603Mi on small. */
    expect_type(&e, "p", 500, 2700 * MI, "medium");
    env_free(&e);
}
END_TEST

/* ---- the sim provider and node classes ---- */

static ns_plugin *load_sim(void)
{
    ns_plugin *p = NULL;
    ns_plugin_load_params params = {0};
    ck_assert_msg(ns_plugin_load(PLUGINS_DIR, "sim", &params, &p) == NS_OK, "%s", ns_error_message());
    return p;
}

/* Lists the sim's types for a node class of kind/apiVersion with `spec` JSON; returns the list_instance_types code. */
static int sim_types(ns_plugin *p, const char *api_version, const char *kind, const char *spec, ns_itype_set *out)
{
    cJSON *json = cJSON_Parse(spec);
    ck_assert_ptr_nonnull(json);
    ns_nodeclass nc = {.struct_size = sizeof(nc), .api_version = api_version, .kind = kind, .name = "default",
                       .spec = (const ns_json *)json};
    int rc = ns_itype_set_load(p, &nc, out);
    cJSON_Delete(json);
    return rc;
}

static const ns_itype *m5_large(const ns_itype_set *set)
{
    const ns_itype *t = ns_itype_set_find(set, "m5.large");
    ck_assert_ptr_nonnull(t);
    return t;
}

START_TEST(sim_honours_max_pods_of_the_node_class)
{
    ns_plugin *p = load_sim();
    ns_itype_set plain = {0}, set = {0};
    ck_assert_int_eq(sim_types(p, "nodesmith.io/v1", "SimNodeClass", "{}", &plain), NS_OK);
    ck_assert_int_eq(sim_types(p, "nodesmith.io/v1", "SimNodeClass", "{\"kubelet\":{\"maxPods\":20}}", &set),
                     NS_OK);
    /* m5.large: 3 ENIs of 10 addresses give 29 pods and 574Mi; maxPods 20 reserves 11 * 20 + 255 = 475Mi. */
    ck_assert_int_eq(m5_large(&plain)->capacity.pods, 29);
    ck_assert_int_eq(m5_large(&plain)->kube_reserved.memory_bytes, 574 * MI);
    ck_assert_int_eq(m5_large(&set)->capacity.pods, 20);
    ck_assert_int_eq(m5_large(&set)->kube_reserved.memory_bytes, 475 * MI);
    ck_assert_int_eq(m5_large(&set)->allocatable.memory_bytes, m5_large(&plain)->allocatable.memory_bytes + 99 * MI);
    ns_itype_set_free(&plain);
    ns_itype_set_free(&set);
    ns_plugin_unload(p);
}
END_TEST

START_TEST(sim_pods_per_core_and_reserved_overrides)
{
    ns_plugin *p = load_sim();
    ns_itype_set set = {0};
    ck_assert_int_eq(sim_types(p, "karpenter.k8s.aws/v1", "EC2NodeClass",
                               "{\"amiFamily\":\"AL2023\",\"kubelet\":{\"podsPerCore\":2,"
                               "\"kubeReserved\":{\"cpu\":\"200m\"},\"systemReserved\":{\"memory\":\"0.5Gi\"},"
                               "\"evictionHard\":{\"memory.available\":\"10%\"}}}",
                               &set),
                     NS_OK);
    const ns_itype *t = m5_large(&set);
    ck_assert_int_eq(t->capacity.pods, 4);
    ck_assert_int_eq(t->kube_reserved.memory_bytes, (11 * 4 + 255) * MI);
    ck_assert_int_eq(t->kube_reserved.cpu_milli, 200);
    ck_assert_int_eq(t->system_reserved.memory_bytes, 512 * MI);
    /* 10% of the capacity after the VM overhead (7577Mi), rounded up to a byte. */
    ck_assert_int_eq(t->eviction_threshold.memory_bytes, (7577 * MI + 9) / 10);
    ns_itype_set_free(&set);
    ns_plugin_unload(p);
}
END_TEST

START_TEST(sim_bottlerocket_ignores_pods_per_core_and_soft_eviction)
{
    ns_plugin *p = load_sim();
    ns_itype_set set = {0};
    ck_assert_int_eq(sim_types(p, "karpenter.k8s.aws/v1", "EC2NodeClass",
                               "{\"amiFamily\":\"Bottlerocket\",\"kubelet\":{\"podsPerCore\":2,"
                               "\"evictionSoft\":{\"memory.available\":\"1Gi\"},"
                               "\"evictionSoftGracePeriod\":{\"memory.available\":\"1m\"}}}",
                               &set),
                     NS_OK);
    ck_assert_int_eq(m5_large(&set)->capacity.pods, 29);
    ck_assert_int_eq(m5_large(&set)->eviction_threshold.memory_bytes, 100 * MI);
    ns_itype_set_free(&set);
    ns_plugin_unload(p);
}
END_TEST

START_TEST(sim_ignores_kubelet_of_v1beta1_node_classes)
{
    ns_plugin *p = load_sim();
    ns_itype_set set = {0};
    /* v1beta1 pools carry kubelet settings themselves; the core applies them (cases above). */
    ck_assert_int_eq(sim_types(p, "karpenter.k8s.aws/v1beta1", "EC2NodeClass", "{\"kubelet\":{\"maxPods\":5}}",
                               &set),
                     NS_OK);
    ck_assert_int_eq(m5_large(&set)->capacity.pods, 29);
    ns_itype_set_free(&set);
    ns_plugin_unload(p);
}
END_TEST

START_TEST(sim_rejects_malformed_kubelet_settings)
{
    ns_plugin *p = load_sim();
    ns_itype_set set = {0};
    ck_assert_int_eq(sim_types(p, "nodesmith.io/v1", "SimNodeClass", "{\"kubelet\":{\"maxPods\":\"twenty\"}}", &set),
                     NS_ERR_INVALID_CONFIG);
    ck_assert_msg(strstr(ns_error_message(), "spec.kubelet.maxPods") != NULL, "%s", ns_error_message());
    ck_assert_int_eq(sim_types(p, "nodesmith.io/v1", "SimNodeClass",
                               "{\"kubelet\":{\"kubeReserved\":{\"memory\":\"lots\"}}}", &set),
                     NS_ERR_INVALID_CONFIG);
    ck_assert_msg(strstr(ns_error_message(), "spec.kubelet.kubeReserved.memory") != NULL, "%s", ns_error_message());
    ck_assert_int_eq(sim_types(p, "nodesmith.io/v1", "SimNodeClass",
                               "{\"kubelet\":{\"evictionHard\":{\"memory.available\":\"120%\"}}}", &set),
                     NS_ERR_INVALID_CONFIG);
    ck_assert_int_eq(sim_types(p, "nodesmith.io/v1", "SimNodeClass", "{\"kubelet\":{\"maxPod\":3}}", &set),
                     NS_ERR_INVALID_CONFIG);
    ck_assert_msg(strstr(ns_error_message(), "unknown field spec.kubelet.maxPod") != NULL, "%s", ns_error_message());
    ns_plugin_unload(p);
}
END_TEST

/* A v1 pool takes its node class's kubelet (ns_cluster_resolve); the sim already sized the types with it, and the
 * core must not apply it a second time on top. */
START_TEST(v1_pool_uses_the_node_class_kubelet_once)
{
    ns_plugin *p = load_sim();
    ns_itype_set set = {0};
    const char *spec = "{\"kubelet\":{\"podsPerCore\":2,\"evictionSoft\":{\"memory.available\":\"2Gi\"},"
                       "\"evictionSoftGracePeriod\":{\"memory.available\":\"1m\"}}}";
    ck_assert_int_eq(sim_types(p, "karpenter.k8s.aws/v1", "EC2NodeClass",
                               "{\"amiFamily\":\"Bottlerocket\",\"kubelet\":{\"podsPerCore\":2,"
                               "\"evictionSoft\":{\"memory.available\":\"2Gi\"},"
                               "\"evictionSoftGracePeriod\":{\"memory.available\":\"1m\"}}}",
                               &set),
                     NS_OK);
    ns_cluster *c = ns_cluster_new();
    ns_nodeclass_def *def = ns_nodeclass_def_new("karpenter.k8s.aws/v1", "EC2NodeClass", "default", cJSON_Parse(spec));
    ck_assert_ptr_nonnull(def);
    def->kubelet.present = true;
    def->kubelet.has_pods_per_core = true;
    def->kubelet.pods_per_core = 2;
    ck_assert_int_eq(ns_labels_set(&def->kubelet.eviction_soft, "memory.available", "2Gi"), 0);
    ck_assert_int_eq(ns_labels_set(&def->kubelet.eviction_soft_grace_period, "memory.available", "1m"), 0);
    ck_assert_int_eq(ns_cluster_add_nodeclass(c, def), 0);
    ns_nodepool *np = fx_pool(c, "default", 0, "node.kubernetes.io/instance-type In m5.large");
    np->nodeclass_ref.group = strdup("karpenter.k8s.aws");
    np->nodeclass_ref.kind = strdup("EC2NodeClass");
    np->nodeclass_ref.name = strdup("default");
    ck_assert_int_eq(ns_cluster_resolve(c), 0);
    ck_assert(np->kubelet.present);
    /* Bottlerocket ignores podsPerCore and evictionSoft: 29 pods and a 100Mi threshold. Applied again by the core,
     * 5 pods per node and 2Gi of threshold would split these six pods and refuse the big one. */
    pods(c, 6, 10, 10 * MI);
    fx_pod(c, "big", 100, 6000 * MI, "");
    ns_sched_result r;
    fx_run(c, &set, NULL, &r);
    ck_assert_uint_eq(r.n_unschedulable, 0);
    ck_assert_uint_eq(r.n_claims, 1);
    ns_sched_result_free(&r);
    ns_cluster_free(c);
    ns_itype_set_free(&set);
    ns_plugin_unload(p);
}
END_TEST

int main(void)
{
    ns_log_set_level(NS_LOG_WARN);
    Suite *s = suite_create("sched-kubelet");
    TCase *pool = tcase_create("pool");
    tcase_add_test(pool, max_pods_lowers_kube_reserved_memory);
    tcase_add_test(pool, without_max_pods_the_eni_reservation_stays);
    tcase_add_test(pool, max_pods_counts_daemonset_pods);
    tcase_add_test(pool, pods_per_core_on_two_vcpus_gives_four_pods);
    tcase_add_test(pool, pods_per_core_frees_kube_reserved_memory);
    tcase_add_test(pool, kube_reserved_override_changes_which_type_fits);
    tcase_add_test(pool, kube_reserved_cpu_keeps_the_memory_reservation);
    tcase_add_test(pool, system_reserved_cpu_changes_which_type_fits);
    tcase_add_test(pool, eviction_percentage_is_of_memory_capacity);
    tcase_add_test(pool, eviction_of_one_hundred_percent_disables_the_threshold);
    tcase_add_test(pool, eviction_soft_and_hard_take_the_larger);
    suite_add_tcase(s, pool);
    TCase *sim = tcase_create("sim");
    tcase_add_test(sim, sim_honours_max_pods_of_the_node_class);
    tcase_add_test(sim, sim_pods_per_core_and_reserved_overrides);
    tcase_add_test(sim, sim_bottlerocket_ignores_pods_per_core_and_soft_eviction);
    tcase_add_test(sim, sim_ignores_kubelet_of_v1beta1_node_classes);
    tcase_add_test(sim, sim_rejects_malformed_kubelet_settings);
    tcase_add_test(sim, v1_pool_uses_the_node_class_kubelet_once);
    suite_add_tcase(s, sim);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
