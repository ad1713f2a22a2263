/*
 * Memory benchmark of `nodesmith simulate`: Karpenter's scheduling-benchmark mix of pods (equal fifths generic, zonal
 * spread, hostname spread, zonal self-affinity, hostname anti-affinity; cpu from {100, 250, 500, 1000, 1500}m,
 * memory from {100, 256, 512, 1024, 2048, 4096}Mi; test/sched/sched_workload.h describes the same mix) written as
 * Pod manifests, run through the real binary on the sim provider. The child's peak RSS comes from wait4(), so it is
 * the whole command: loading, scheduling, launching and the report.
 *
 * Bytes per pending pod is the growth of peak RSS over the same run with no pods, divided by the pods.
 *
 * Usage: simulate_mem_bench NODESMITH PLUGINS_DIR [PODS...] (default 50000). One JSON object per line on stdout.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MEM_BUDGET_MIB 128.0
#define POD_BUDGET_BYTES 2048.0

static uint32_t rnd(uint64_t *state, uint32_t n)
{
    *state = *state * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
    return (uint32_t)((*state >> 33) % n);
}

static const char *const label_values[] = {"a", "b", "c", "d", "e", "f", "g"};

static const char pool_yaml[] = "apiVersion: karpenter.sh/v1\n"
                                "kind: NodePool\n"
                                "metadata: {name: default}\n"
                                "spec:\n"
                                "  template:\n"
                                "    spec:\n"
                                "      requirements:\n"
                                "      - {key: kubernetes.io/os, operator: In, values: [linux]}\n"
                                "      nodeClassRef: {group: nodesmith.io, kind: SimNodeClass, name: default}\n"
                                "---\n"
                                "apiVersion: nodesmith.io/v1\n"
                                "kind: SimNodeClass\n"
                                "metadata: {name: default}\n"
                                "spec: {}\n";

/* One pod of fifth `kind` (0 generic ... 4 hostname anti-affinity), drawn as sched_workload.c draws them. */
static void write_pod(FILE *f, uint64_t *rng, size_t i, int kind)
{
    static const int cpu[] = {100, 250, 500, 1000, 1500};
    static const int mem[] = {100, 256, 512, 1024, 2048, 4096};
    int m = mem[rnd(rng, 6)], c = cpu[rnd(rng, 5)];
    char labels[64];
    if (kind == 3)
        snprintf(labels, sizeof(labels), "my-affinity: %s", label_values[rnd(rng, 7)]);
    else if (kind == 4)
        snprintf(labels, sizeof(labels), "app: nginx");
    else
        snprintf(labels, sizeof(labels), "my-label: %s", label_values[rnd(rng, 7)]);
    fprintf(f,
            "---\napiVersion: v1\nkind: Pod\nmetadata: {name: pod-%zu, labels: {%s}}\nspec:\n"
            "  containers:\n  - {name: app, image: app, resources: {requests: {cpu: %dm, memory: %dMi}}}\n",
            i, labels, c, m);
    switch (kind) {
    case 1:
    case 2:
        fprintf(f,
                "  topologySpreadConstraints:\n  - {maxSkew: 1, topologyKey: %s, whenUnsatisfiable: DoNotSchedule,"
                " labelSelector: {matchLabels: {my-label: %s}}}\n",
                kind == 1 ? "topology.kubernetes.io/zone" : "kubernetes.io/hostname", label_values[rnd(rng, 7)]);
        break;
    case 3:
        fprintf(f,
                "  affinity:\n    podAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
                "      - {topologyKey: topology.kubernetes.io/zone, labelSelector: {matchLabels: {%s}}}\n",
                labels);
        break;
    case 4:
        fprintf(f, "  affinity:\n    podAntiAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
                   "      - {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: nginx}}}\n");
        break;
    default:
        break;
    }
}

static int write_manifests(const char *path, size_t n_pods)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "simulate_mem_bench: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    fputs(pool_yaml, f);
    uint64_t rng = 42;
    for (size_t i = 0; i < n_pods; i++)
        write_pod(f, &rng, i, (int)(i * 5 / n_pods));
    if (fclose(f) != 0) {
        fprintf(stderr, "simulate_mem_bench: writing %s failed: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

typedef struct run_result {
    double seconds;
    long peak_rss_kib;
} run_result;

/* Runs `nodesmith simulate` on the manifests, the summary discarded and the log lines into `log`; fails unless it
 * exits 0. */
static int run_simulate(const char *nodesmith, const char *plugins_dir, const char *manifests, const char *log,
                        run_result *out)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "simulate_mem_bench: fork: %s\n", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY), logfd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (null < 0 || logfd < 0 || dup2(null, STDOUT_FILENO) < 0 || dup2(logfd, STDERR_FILENO) < 0)
            _exit(126);
        execl(nodesmith, nodesmith, "simulate", "-f", manifests, "--provider", "sim", "--plugins-dir", plugins_dir,
              (char *)NULL);
        fprintf(stderr, "simulate_mem_bench: exec %s: %s\n", nodesmith, strerror(errno));
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0) {
        fprintf(stderr, "simulate_mem_bench: wait: %s\n", strerror(errno));
        return -1;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "simulate_mem_bench: nodesmith simulate on %s failed (status %d); its log: %s\n", manifests,
                status, log);
        return -1;
    }
    out->seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    out->peak_rss_kib = ru.ru_maxrss;
    return 0;
}

static int measure(const char *nodesmith, const char *plugins_dir, const char *dir, size_t n_pods, run_result *out)
{
    char path[4096], log[4096];
    snprintf(path, sizeof(path), "%s/pods-%zu.yaml", dir, n_pods);
    snprintf(log, sizeof(log), "%s/pods-%zu.log", dir, n_pods);
    int rc = write_manifests(path, n_pods);
    if (rc == 0)
        rc = run_simulate(nodesmith, plugins_dir, path, log, out);
    unlink(path);
    if (rc == 0)
        unlink(log);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: simulate_mem_bench NODESMITH PLUGINS_DIR [PODS...]\n");
        return 2;
    }
    char dir[] = "/tmp/nodesmith-membench-XXXXXX";
    if (!mkdtemp(dir)) {
        fprintf(stderr, "simulate_mem_bench: mkdtemp: %s\n", strerror(errno));
        return 1;
    }
    int rc = 0;
    run_result empty;
    if (measure(argv[1], argv[2], dir, 0, &empty) < 0)
        rc = 1;
    for (int i = 3; rc == 0 && i <= (argc > 3 ? argc - 1 : 3); i++) {
        size_t n = argc > 3 ? strtoul(argv[i], NULL, 10) : 50000;
        run_result r;
        if (n == 0 || measure(argv[1], argv[2], dir, n, &r) < 0) {
            rc = 1;
            break;
        }
        double peak_mib = (double)r.peak_rss_kib / 1024.0;
        double per_pod = (double)(r.peak_rss_kib - empty.peak_rss_kib) * 1024.0 / (double)n;
        bool within = peak_mib <= MEM_BUDGET_MIB && per_pod <= POD_BUDGET_BYTES;
        printf("{\"bench\":\"simulate-memory\",\"pods\":%zu,\"seconds\":%.3f,\"peak_rss_mib\":%.1f,"
               "\"empty_run_peak_rss_mib\":%.1f,\"bytes_per_pending_pod\":%.0f,\"budget_peak_rss_mib\":%.0f,"
               "\"budget_bytes_per_pending_pod\":%.0f,\"within_budget\":%s}\n",
               n, r.seconds, peak_mib, (double)empty.peak_rss_kib / 1024.0, per_pod, MEM_BUDGET_MIB,
               POD_BUDGET_BYTES, within ? "true" : "false");
        fflush(stdout);
    }
    if (rc == 0)
        rmdir(dir);
    return rc;
}
