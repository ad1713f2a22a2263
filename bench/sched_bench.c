/*
 * Scheduling benchmark. Part one reproduces Karpenter's own benchmark (pkg/controllers/provisioning/scheduling
 * scheduling_benchmark_test.go): 400 instance types where type i has i vCPU, 2i GiB and 10i pods, each offered as
 * spot in two zones and on-demand in three; pods in equal fifths generic / zonal topology spread / hostname topology
 * spread / zonal self-affinity / hostname anti-affinity, cpu from {100, 250, 500, 1000, 1500}m and memory from
 * {100, 256, 512, 1024, 2048, 4096}Mi, drawn with a fixed seed. Part two runs a mixed workload on the real AWS
 * catalog through the sim provider and compares its cost with a lower bound.
 *
 * Usage: sched_bench PLUGINS_DIR DATA_DIR [SIZES...]. One JSON object per line on stdout.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "cloud/instance_types.h"
#include "errors/ns_error.h"
#include "log/ns_log.h"
#include "model/labels.h"
#include "plugin/plugin_loader.h"
#include "sched/sched.h"
#include "sched_fixture.h"

static uint64_t rng_state = 42;

static uint32_t rnd(uint32_t n)
{
    rng_state = rng_state * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
    return (uint32_t)((rng_state >> 33) % n);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double peak_rss_mib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;
}

static void synthetic_types(ns_itype_set *set)
{
    for (int i = 1; i <= 400; i++) {
        char name[32], offers[512];
        double od = 0.04 * i + 0.01;
        snprintf(name, sizeof(name), "fake-it-%d", i);
        snprintf(offers, sizeof(offers),
                 "test-zone-1:spot:%.5f,test-zone-2:spot:%.5f,test-zone-1:on-demand:%.5f,"
                 "test-zone-2:on-demand:%.5f,test-zone-3:on-demand:%.5f",
                 od * 0.4, od * 0.41, od, od, od);
        fx_type(set, name, 1000LL * i, 2LL * i * FX_GI, 10LL * i, "kubernetes.io/arch=amd64,kubernetes.io/os=linux",
                offers);
    }
}

static const char *const label_values[] = {"a", "b", "c", "d", "e", "f", "g"};

static void random_pod(ns_cluster *c, size_t i, int kind)
{
    static const int64_t cpu[] = {100, 250, 500, 1000, 1500};
    static const int64_t mem[] = {100, 256, 512, 1024, 2048, 4096};
    char name[32], labels[64], sel[64];
    snprintf(name, sizeof(name), "pod-%zu", i);
    int64_t m = mem[rnd(6)] * FX_MI, cp = cpu[rnd(5)];
    if (kind == 3)
        snprintf(labels, sizeof(labels), "my-affinity=%s", label_values[rnd(7)]);
    else if (kind == 4)
        snprintf(labels, sizeof(labels), "app=nginx");
    else
        snprintf(labels, sizeof(labels), "my-label=%s", label_values[rnd(7)]);
    ns_pod *p = fx_pod(c, name, cp, m, labels);
    switch (kind) {
    case 1:
    case 2:
        snprintf(sel, sizeof(sel), "my-label=%s", label_values[rnd(7)]);
        fx_pod_spread(p, kind == 1 ? NS_LABEL_ZONE : NS_LABEL_HOSTNAME, 1, false, sel);
        break;
    case 3:
        fx_pod_affinity(p, NS_LABEL_ZONE, labels, false, 0);
        break;
    case 4:
        fx_pod_affinity(p, NS_LABEL_HOSTNAME, "app=nginx", true, 0);
        break;
    default:
        break;
    }
}

static void synthetic(size_t n_pods, const ns_itype_set *set)
{
    ns_cluster *c = ns_cluster_new();
    if (!c)
        abort();
    fx_pool(c, "default", 0, "");
    for (size_t i = 0; i < n_pods; i++)
        random_pod(c, i, (int)(i * 5 / n_pods));
    ns_sched_result r;
    double t0 = now_s();
    fx_run(c, set, NULL, &r);
    double secs = now_s() - t0;
    size_t on_claims = r.n_pending - r.n_unschedulable - r.n_on_existing;
    printf("{\"bench\":\"karpenter-diverse\",\"instance_types\":%zu,\"pods\":%zu,\"pods_scheduled\":%zu,"
           "\"pods_unschedulable\":%zu,\"nodeclaims\":%zu,\"seconds\":%.6f,\"pods_per_sec\":%.0f,"
           "\"peak_rss_mib\":%.1f}\n",
           set->n, n_pods, on_claims, r.n_unschedulable, r.n_claims, secs, (double)n_pods / secs, peak_rss_mib());
    fflush(stdout);
    ns_sched_result_free(&r);
    ns_cluster_free(c);
}

/* A mixed workload: web, API, cache (memory-heavy), batch (cpu-heavy) and a few large analytics pods. */
static void mixed_workload(ns_cluster *c)
{
    static const struct {
        const char *app;
        size_t replicas;
        int64_t cpu, mem;
    } w[] = {{"web", 800, 250, 512 * FX_MI},       {"api", 400, 1000, 2 * FX_GI},
             {"cache", 120, 500, 12 * FX_GI},     {"batch", 300, 3000, 4 * FX_GI},
             {"analytics", 20, 14000, 100 * FX_GI}};
    size_t k = 0;
    for (size_t d = 0; d < sizeof(w) / sizeof(w[0]); d++)
        for (size_t i = 0; i < w[d].replicas; i++) {
            char name[48], labels[48];
            snprintf(name, sizeof(name), "%s-%zu", w[d].app, k++);
            snprintf(labels, sizeof(labels), "app=%s", w[d].app);
            fx_pod(c, name, w[d].cpu, w[d].mem, labels);
        }
}

/* The pool below allows categories c, m, r of generation 5 and later. */
static bool pool_allows(const ns_itype *t)
{
    const char *cat = ns_itype_label(t, "karpenter.k8s.aws/instance-category");
    const char *gen = ns_itype_label(t, "karpenter.k8s.aws/instance-generation");
    return cat && gen && strchr("cmr", cat[0]) && cat[1] == '\0' && atoi(gen) > 4;
}

/* The cost no packing can beat: each resource bought at the cheapest per-unit price any offering the pool allows
 * has, and the larger of the two totals (cpu and memory must both be bought). */
static double lower_bound(const ns_itype_set *set, int64_t cpu_milli, int64_t mem_bytes)
{
    double per_cpu = INFINITY, per_gib = INFINITY;
    for (size_t i = 0; i < set->n; i++) {
        const ns_itype *t = &set->items[i];
        double p = ns_itype_min_price(t);
        if (!pool_allows(t) || p <= 0 || t->allocatable.cpu_milli <= 0 || t->allocatable.memory_bytes <= 0)
            continue;
        per_cpu = fmin(per_cpu, p / ((double)t->allocatable.cpu_milli / 1000.0));
        per_gib = fmin(per_gib, p / ((double)t->allocatable.memory_bytes / (double)FX_GI));
    }
    return fmax(per_cpu * (double)cpu_milli / 1000.0, per_gib * (double)mem_bytes / (double)FX_GI);
}

static int real_catalog(const char *plugins_dir, const char *data_dir)
{
    char catalog[1024], prices[1024];
    snprintf(catalog, sizeof(catalog), "%s/aws-instance-types.json", data_dir);
    snprintf(prices, sizeof(prices), "%s/aws-prices-us-east-1.json", data_dir);
    ns_plugin_setting settings[] = {{"catalog", catalog}, {"prices", prices}};
    ns_plugin_load_params params = {.settings = settings, .n_settings = 2};
    ns_plugin *plugin = NULL;
    ns_itype_set set = {0};
    cJSON *spec = cJSON_CreateObject();
    ns_nodeclass nc = {.struct_size = sizeof(nc), .api_version = "nodesmith.io/v1", .kind = "SimNodeClass",
                       .name = "default", .spec = (ns_json *)spec};
    int rc = spec ? ns_plugin_load(plugins_dir, "sim", &params, &plugin) : NS_ERR_INTERNAL;
    if (rc == NS_OK)
        rc = ns_itype_set_load(plugin, &nc, &set);
    cJSON_Delete(spec);
    if (rc != NS_OK) {
        fprintf(stderr, "sched_bench: real catalog: %s\n", ns_error_message());
        ns_plugin_unload(plugin);
        return 1;
    }
    ns_cluster *c = ns_cluster_new();
    if (!c)
        abort();
    fx_pool(c, "default", 0, "karpenter.k8s.aws/instance-category In c|m|r;karpenter.k8s.aws/instance-generation Gt 4");
    mixed_workload(c);
    ns_sched_result r;
    double t0 = now_s();
    fx_run(c, &set, NULL, &r);
    double secs = now_s() - t0, cost = 0;
    int64_t cpu = 0, mem = 0, cpu_alloc = 0, mem_alloc = 0;
    for (size_t i = 0; i < r.n_claims; i++) {
        const ns_sched_claim *cl = &r.claims[i];
        cost += cl->options[0].price_per_hour;
        cpu += cl->pod_requests.cpu_milli;
        mem += cl->pod_requests.memory_bytes;
        cpu_alloc += cl->options[0].type->allocatable.cpu_milli;
        mem_alloc += cl->options[0].type->allocatable.memory_bytes;
    }
    double bound = lower_bound(&set, cpu, mem);
    printf("{\"bench\":\"aws-catalog-mixed\",\"instance_types\":%zu,\"pods\":%zu,\"pods_unschedulable\":%zu,"
           "\"nodeclaims\":%zu,\"seconds\":%.6f,\"pods_per_sec\":%.0f,\"cost_per_hour\":%.4f,"
           "\"lower_bound_per_hour\":%.4f,\"cost_over_bound\":%.3f,\"cpu_utilization\":%.3f,"
           "\"memory_utilization\":%.3f,\"peak_rss_mib\":%.1f}\n",
           set.n, r.n_pending, r.n_unschedulable, r.n_claims, secs, (double)r.n_pending / secs, cost, bound,
           bound > 0 ? cost / bound : 0, cpu_alloc ? (double)cpu / (double)cpu_alloc : 0,
           mem_alloc ? (double)mem / (double)mem_alloc : 0, peak_rss_mib());
    ns_sched_result_free(&r);
    ns_cluster_free(c);
    ns_itype_set_free(&set);
    ns_plugin_unload(plugin);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: sched_bench PLUGINS_DIR DATA_DIR [SIZES...]\n");
        return 2;
    }
    ns_log_set_level(NS_LOG_WARN);
    ns_itype_set set = {0};
    synthetic_types(&set);
    static const size_t sizes[] = {1000, 5000, 10000, 20000, 40000};
    if (argc > 3)
        for (int i = 3; i < argc; i++)
            synthetic(strtoul(argv[i], NULL, 10), &set);
    else
        for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
            synthetic(sizes[i], &set);
    ns_itype_set_free(&set);
    return real_catalog(argv[1], argv[2]);
}
