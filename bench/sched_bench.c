/*
 * Scheduling benchmark. Part one reproduces Karpenter's own benchmark (sched_workload.h: 400 synthetic types, pods
 * in equal fifths of generic, zonal spread, hostname spread, zonal self-affinity and hostname anti-affinity), each
 * size drawn with seed 42. Part two runs a mixed workload on the real AWS catalog through the sim provider and
 * compares its cost with a lower bound.
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
#include "sched_workload.h"

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

/* Karpenter's BenchmarkScheduling solves the same pods b.N times (testing.B grows b.N until the loop takes about a
 * second) and reports the mean pods/s; the same here, so the two figures compare. The first, cold solve (page faults
 * of a fresh heap) is printed beside it, and the placement checked is the first one. */
static void synthetic(size_t n_pods, const ns_itype_set *set)
{
    ns_cluster *c = wl_cluster(n_pods, 42);
    ns_sched_result r;
    double t0 = now_s();
    fx_run(c, set, NULL, &r);
    double cold = now_s() - t0, total = cold;
    size_t rounds = 1;
    for (; total < 1.0; rounds++) {
        ns_sched_result again;
        double t = now_s();
        fx_run(c, set, NULL, &again);
        total += now_s() - t;
        ns_sched_result_free(&again);
    }
    double secs = total / (double)rounds;
    size_t on_claims = r.n_pending - r.n_unschedulable - r.n_on_existing;
    double cost = 0;
    for (size_t i = 0; i < r.n_claims; i++)
        cost += r.claims[i].options[0].price_per_hour;
    printf("{\"bench\":\"karpenter-diverse\",\"instance_types\":%zu,\"pods\":%zu,\"pods_scheduled\":%zu,"
           "\"pods_unschedulable\":%zu,\"nodeclaims\":%zu,\"cost_per_hour\":%.4f,\"rounds\":%zu,\"seconds\":%.6f,"
           "\"pods_per_sec\":%.0f,\"cold_seconds\":%.6f,\"cold_pods_per_sec\":%.0f,\"peak_rss_mib\":%.1f}\n",
           set->n, n_pods, on_claims, r.n_unschedulable, r.n_claims, cost, rounds, secs, (double)n_pods / secs, cold,
           (double)n_pods / cold, peak_rss_mib());
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
    wl_types(&set);
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
