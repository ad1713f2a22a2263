#include "kube_bed.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define PYTHON "/usr/bin/python3"

/* What kubebed.py serve announces; a stopped private plane takes them out of the environment again. */
static const char *const bed_env[] = { "NS_TEST_KUBECONFIG", "NS_TEST_KUBE_URL", "NS_TEST_KUBE_CA",
    "NS_TEST_KUBE_CLIENT_CERT", "NS_TEST_KUBE_CLIENT_KEY", "NS_TEST_KUBE_TOKEN", "NS_TEST_KUBE_NOBODY_TOKEN",
    "NS_TEST_KUBE_ETCD_URL", "NS_TEST_KUBE_DIR" };

/* NS_KUBEBED as the harness and meson set it, else the source tree's copy this was built from. */
static const char *kubebed_script(void)
{
    const char *script = getenv("NS_KUBEBED");
    return script && *script ? script : NS_KUBEBED_SCRIPT;
}

/* Reads the harness's NAME=VALUE lines into the environment until READY. */
static int read_announcement(FILE *in)
{
    char line[4096];
    while (fgets(line, sizeof(line), in)) {
        line[strcspn(line, "\n")] = '\0';
        if (strcmp(line, "READY") == 0)
            return 0;
        char *eq = strchr(line, '=');
        if (!eq || strncmp(line, "NS_", 3) != 0) {
            fprintf(stderr, "kube_bed: unexpected line from kubebed.py serve: \"%s\"\n", line);
            return -1;
        }
        *eq = '\0';
        if (setenv(line, eq + 1, 1) != 0)
            return -1;
    }
    fprintf(stderr, "kube_bed: kubebed.py serve ended before the control plane was ready (see above)\n");
    return -1;
}

/* Starts `kubebed.py SUBCOMMAND` with its stdin and stdout on pipes; the harness gets SIGTERM if this process dies,
 * even by SIGKILL, and stops what it runs. Returns 0, or -1 after printing why. */
static int spawn_harness(const char *subcommand, pid_t *pid, int *to, FILE **from)
{
    int in[2] = { -1, -1 }, out[2] = { -1, -1 };
    const char *script = kubebed_script();
    *pid = 0;
    *to = -1;
    *from = NULL;
    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0)
        goto fail;
    pid_t parent = getpid();
    *pid = fork();
    if (*pid < 0)
        goto fail;
    if (*pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent)
            _exit(1);
        dup2(in[0], STDIN_FILENO);
        dup2(out[1], STDOUT_FILENO);
        execl(PYTHON, "python3", script, subcommand, (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    *to = in[1];
    *from = fdopen(out[0], "r");
    if (!*from) {
        fprintf(stderr, "kube_bed: reading kubebed.py %s: %s\n", subcommand, strerror(errno));
        close(out[0]);
        return -1;
    }
    return 0;
fail:
    fprintf(stderr, "kube_bed: starting kubebed.py %s: %s\n", subcommand, strerror(errno));
    *pid = 0;
    for (int i = 0; i < 2; i++) {
        if (in[i] >= 0)
            close(in[i]);
        if (out[i] >= 0)
            close(out[i]);
    }
    return -1;
}

/* Closes the harness's stdin (it stops what it runs) and waits for it. */
static void stop_harness(pid_t *pid, int *to)
{
    if (*to >= 0)
        close(*to);
    *to = -1;
    if (*pid > 0)
        waitpid(*pid, NULL, 0);
    *pid = 0;
}

int kube_bed_start(kube_bed *bed)
{
    bed->harness = 0;
    bed->to_harness = -1;
    if (getenv("NS_TEST_KUBECONFIG"))
        return 0;
    FILE *from = NULL;
    if (spawn_harness("serve", &bed->harness, &bed->to_harness, &from) < 0)
        goto fail;
    if (read_announcement(from) < 0)
        goto fail;
    fclose(from);
    return 0;
fail:
    if (from)
        fclose(from);
    kube_bed_stop(bed);
    return -1;
}

void kube_bed_stop(kube_bed *bed)
{
    if (bed->harness > 0) {
        for (size_t i = 0; i < sizeof(bed_env) / sizeof(bed_env[0]); i++)
            unsetenv(bed_env[i]);
    }
    stop_harness(&bed->harness, &bed->to_harness);
}

int kube_bed_proxy_start(kube_bed_proxy *proxy)
{
    FILE *from = NULL;
    char line[64] = "";
    int port = 0;
    proxy->url[0] = '\0';
    if (spawn_harness("proxy", &proxy->harness, &proxy->to_harness, &from) < 0)
        goto fail;
    if (!fgets(line, sizeof(line), from) || sscanf(line, "PORT %d", &port) != 1) {
        fprintf(stderr, "kube_bed: kubebed.py proxy did not announce its port (got \"%s\")\n", line);
        goto fail;
    }
    fclose(from);
    snprintf(proxy->url, sizeof(proxy->url), "https://127.0.0.1:%d", port);
    return 0;
fail:
    if (from)
        fclose(from);
    kube_bed_proxy_stop(proxy);
    return -1;
}

int kube_bed_proxy_cut(const kube_bed_proxy *proxy)
{
    return proxy->harness > 0 ? kill(proxy->harness, SIGUSR1) : -1;
}

int kube_bed_proxy_hold(const kube_bed_proxy *proxy)
{
    return proxy->harness > 0 ? kill(proxy->harness, SIGUSR2) : -1;
}

int kube_bed_proxy_release(const kube_bed_proxy *proxy)
{
    return proxy->harness > 0 ? kill(proxy->harness, SIGHUP) : -1;
}

void kube_bed_proxy_stop(kube_bed_proxy *proxy)
{
    stop_harness(&proxy->harness, &proxy->to_harness);
}

/* Runs ARGV with STDIN_TEXT on its stdin, collecting its stdout into *out. */
static int run_captured(char **out, const char *stdin_text, char *const argv[])
{
    int in[2] = { -1, -1 }, res[2] = { -1, -1 };
    char *buf = NULL;
    size_t len = 0;
    int status = -1;
    if (out)
        *out = NULL;
    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(res, O_CLOEXEC) != 0)
        goto done;
    pid_t pid = fork();
    if (pid < 0)
        goto done;
    if (pid == 0) {
        dup2(in[0], STDIN_FILENO);
        dup2(res[1], STDOUT_FILENO);
        execv(argv[0], argv);
        fprintf(stderr, "kube_bed: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(in[0]);
    close(res[1]);
    in[0] = res[1] = -1;
    /* Small inputs (manifests) fit the pipe buffer; larger ones are written while the child reads. */
    if (stdin_text) {
        size_t left = strlen(stdin_text);
        signal(SIGPIPE, SIG_IGN);
        while (left > 0) {
            ssize_t n = write(in[1], stdin_text, left);
            if (n <= 0)
                break;
            stdin_text += n;
            left -= (size_t)n;
        }
    }
    close(in[1]);
    in[1] = -1;
    for (;;) {
        char chunk[4096];
        ssize_t n = read(res[0], chunk, sizeof(chunk));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        char *grown = realloc(buf, len + (size_t)n + 1);
        if (!grown)
            break;
        buf = grown;
        memcpy(buf + len, chunk, (size_t)n);
        len += (size_t)n;
    }
    int wstatus;
    if (waitpid(pid, &wstatus, 0) == pid)
        status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
done:
    for (int i = 0; i < 2; i++) {
        if (in[i] >= 0)
            close(in[i]);
        if (res[i] >= 0)
            close(res[i]);
    }
    while (buf && len > 0 && buf[len - 1] == '\n')
        len--;
    if (buf)
        buf[len] = '\0';
    if (out)
        *out = buf ? buf : strdup("");
    else
        free(buf);
    return status;
}

static int run_prefixed(char **out, const char *stdin_text, const char *const prefix[], size_t nprefix,
                        const char *const argv[])
{
    size_t n = 0;
    while (argv[n])
        n++;
    const char **full = calloc(nprefix + n + 1, sizeof(*full));
    if (!full)
        return -1;
    memcpy(full, prefix, nprefix * sizeof(*full));
    memcpy(full + nprefix, argv, n * sizeof(*full));
    int rc = run_captured(out, stdin_text, (char *const *)full);
    free(full);
    return rc;
}

int kube_bed_cmd(char **out, const char *const argv[])
{
    const char *const prefix[] = { PYTHON, kubebed_script() };
    return run_prefixed(out, NULL, prefix, 2, argv);
}

int kube_bed_kubectl(char **out, const char *stdin_text, const char *const argv[])
{
    const char *kubectl = getenv("NS_TEST_KUBECTL");
    const char *kubeconfig = getenv("NS_TEST_KUBECONFIG");
    if (!kubeconfig) {
        fprintf(stderr, "kube_bed: NS_TEST_KUBECONFIG is not set; call kube_bed_start first\n");
        return -1;
    }
    const char *dir = getenv("NS_TEST_KUBE_DIR");
    char flag[4200], cache[4200];
    snprintf(flag, sizeof(flag), "--kubeconfig=%s", kubeconfig);
    /* Discovery is cached per host:port; the plane's directory keeps ~/.kube/cache free of random ports. */
    snprintf(cache, sizeof(cache), "--cache-dir=%s/kubectl-cache", dir ? dir : "/tmp");
    const char *const prefix[] = { kubectl && *kubectl ? kubectl : "/usr/bin/kubectl", flag, cache };
    return run_prefixed(out, stdin_text, prefix, 3, argv);
}

int kube_bed_namespace(const char *prefix, char *name, size_t size)
{
    char *out = NULL;
    const char *const argv[] = { "namespace", prefix, NULL };
    int rc = kube_bed_cmd(&out, argv);
    if (rc == 0 && out && strlen(out) < size && *out)
        snprintf(name, size, "%s", out);
    else
        rc = -1;
    free(out);
    return rc == 0 ? 0 : -1;
}

int kube_bed_ready_node(const char *name, const char *label, const char *taint)
{
    const char *argv[8] = { "node", name };
    size_t n = 2;
    if (label) {
        argv[n++] = "--label";
        argv[n++] = label;
    }
    if (taint) {
        argv[n++] = "--taint";
        argv[n++] = taint;
    }
    argv[n] = NULL;
    return kube_bed_cmd(NULL, argv) == 0 ? 0 : -1;
}
