/*
 * Event-driven time benchmark: a 30-day timeline over 100 nodes, run through the real binary (`nodesmith simulate
 * --timeline`) on the sim provider at the default 1 s tick. 100 replicas with hostname anti-affinity need a node each;
 * the pool expires nodes after 7 days, so every node is replaced four times, and the workload shrinks and grows back
 * once (consolidation). Between those bursts nothing is due, and the engine jumps instead of stepping each of the
 * 2,592,000 ticks.
 *
 * Prints one JSON object: the child's wall and CPU time (wait4), the simulated time and the engine steps the report
 * counts. Fails when the run fails (an invariant violated included) or its CPU time exceeds the 10 s budget; CPU time
 * is judged rather than wall time, which other processes on a shared machine stretch.
 *
 * Usage: timeline_bench NODESMITH PLUGINS_DIR
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#define BUDGET_S 10.0
#define NODES 100

static const char manifests[] =
    "apiVersion: karpenter.sh/v1\n"
    "kind: NodePool\n"
    "metadata: {name: default}\n"
    "spec:\n"
    "  template:\n"
    "    spec:\n"
    "      expireAfter: 168h\n"
    "      requirements:\n"
    "      - {key: kubernetes.io/os, operator: In, values: [linux]}\n"
    "      nodeClassRef: {group: nodesmith.io, kind: SimNodeClass, name: default}\n"
    "  disruption:\n"
    "    consolidationPolicy: WhenEmpty\n"
    "    consolidateAfter: 5m\n"
    "---\n"
    "apiVersion: nodesmith.io/v1\n"
    "kind: SimNodeClass\n"
    "metadata: {name: default}\n"
    "spec: {}\n"
    "---\n"
    "apiVersion: apps/v1\n"
    "kind: Deployment\n"
    "metadata: {name: web}\n"
    "spec:\n"
    "  replicas: 0\n"
    "  selector: {matchLabels: {app: web}}\n"
    "  template:\n"
    "    metadata: {labels: {app: web}}\n"
    "    spec:\n"
    "      affinity:\n"
    "        podAntiAffinity:\n"
    "          requiredDuringSchedulingIgnoredDuringExecution:\n"
    "          - {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: web}}}\n"
    "      containers:\n"
    "      - {name: web, image: web, resources: {requests: {cpu: 500m, memory: 512Mi}}}\n";

static const char timeline[] = "description: 30 days of 100 nodes, expired weekly, shrunk and grown back once\n"
                               "steps:\n"
                               "  - name: scale up\n"
                               "    scale: {name: web, replicas: 100}\n"
                               "  - advance: 240h\n"
                               "  - scale: {name: web, replicas: 80}\n"
                               "  - advance: 24h\n"
                               "  - scale: {name: web, replicas: 100}\n"
                               "  - name: thirty days\n"
                               "    advance: {until: 720h}\n";

static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) == EOF) {
        fprintf(stderr, "timeline_bench: writing %s: %s\n", path, strerror(errno));
        if (f)
            fclose(f);
        return -1;
    }
    return fclose(f);
}

static double seconds_of(struct timeval tv)
{
    return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    size_t cap = 1 << 20, n = 0;
    char *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0;) {
        n += got;
        char *grown = n + 1 == cap ? realloc(buf, cap *= 2) : buf;
        if (!grown)
            free(buf);
        buf = grown;
    }
    fclose(f);
    if (buf)
        buf[n] = '\0';
    return buf;
}

/* Runs nodesmith with stdout into out_path and stderr into err_path; its exit status, wall and CPU time. */
static int run(char *const argv[], const char *out_path, const char *err_path, double *wall, double *cpu)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600), err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (out < 0 || err < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
            _exit(127);
        execv(argv[0], argv);
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0)
        return -1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    *wall = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    *cpu = seconds_of(ru.ru_utime) + seconds_of(ru.ru_stime);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: timeline_bench NODESMITH PLUGINS_DIR\n");
        return 2;
    }
    char dir[] = "/tmp/timeline_bench.XXXXXX";
    if (!mkdtemp(dir)) {
        fprintf(stderr, "timeline_bench: mkdtemp: %s\n", strerror(errno));
        return 1;
    }
    char mf[64], tl[64], out[64], err[64];
    snprintf(mf, sizeof(mf), "%s/manifests.yaml", dir);
    snprintf(tl, sizeof(tl), "%s/timeline.yaml", dir);
    snprintf(out, sizeof(out), "%s/out.json", dir);
    snprintf(err, sizeof(err), "%s/err.log", dir);
    if (write_file(mf, manifests) < 0 || write_file(tl, timeline) < 0)
        return 1;
    char *args[] = {argv[1], "simulate", "-f", mf, "--timeline", tl, "--output", "json", "--provider", "sim", "--plugins-dir", argv[2], NULL};
    double wall = 0, cpu = 0;
    int rc = run(args, out, err, &wall, &cpu);
    char *text = read_all(out);
    cJSON *doc = text ? cJSON_Parse(text) : NULL;
    free(text);
    /* The report's end, its engine steps, and the nodes of its last state. */
    const cJSON *steps_arr = cJSON_GetObjectItemCaseSensitive(doc, "steps");
    const cJSON *last = cJSON_GetArrayItem(steps_arr, cJSON_GetArraySize(steps_arr) - 1);
    const cJSON *state = cJSON_GetObjectItemCaseSensitive(last, "state");
    double simulated = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(doc, "end_s"));
    double steps = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(doc, "engine_steps"));
    int nodes = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(state, "nodes"));
    cJSON_Delete(doc);
    printf("{\"bench\": \"timeline-30d\", \"nodes\": %d, \"simulated_s\": %.0f, \"engine_steps\": %.0f, "
           "\"wall_s\": %.2f, \"cpu_s\": %.2f, \"budget_s\": %.0f}\n",
           nodes, simulated, steps, wall, cpu, BUDGET_S);
    if (rc != 0) {
        char *log = read_all(err);
        size_t len = log ? strlen(log) : 0;
        fprintf(stderr, "timeline_bench: nodesmith simulate exited %d:\n%s\n", rc, log ? log + (len > 4000 ? len - 4000 : 0) : "");
        free(log);
        return 1;
    }
    if (nodes != NODES || simulated != 30 * 24 * 3600) {
        fprintf(stderr, "timeline_bench: expected %d nodes over 30 days, the run ended with %d nodes at %.0f s\n",
                NODES, nodes, simulated);
        return 1;
    }
    unlink(mf);
    unlink(tl);
    unlink(out);
    unlink(err);
    rmdir(dir);
    if (cpu > BUDGET_S) {
        fprintf(stderr, "timeline_bench: %.2f s of CPU for 30 simulated days, over the %.0f s budget\n", cpu, BUDGET_S);
        return 1;
    }
    return 0;
}
