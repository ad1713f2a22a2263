#include "kube/kube_exec.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <openssl/evp.h>

#include "clock/ns_clock.h"
#include "errors/ns_error.h"
#include "model/model_util.h"

extern char **environ;

#define EXEC_TIMEOUT_MS 60000
#define EXEC_MAX_OUTPUT (1u << 20)

typedef struct pipe_buf {
    char *data;
    size_t len;
} pipe_buf;

/* KUBERNETES_EXEC_INFO: the ExecCredential the plugin is told about (spec.interactive false, and the cluster when
 * provideClusterInfo is set). */
static char *exec_info(const ns_kube_config *cfg)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *spec = cJSON_AddObjectToObject(root, "spec");
    char *text = NULL;
    cJSON_AddStringToObject(root, "apiVersion", cfg->exec->api_version);
    cJSON_AddStringToObject(root, "kind", "ExecCredential");
    cJSON_AddBoolToObject(spec, "interactive", 0);
    if (cfg->exec->provide_cluster_info) {
        cJSON *cluster = cJSON_AddObjectToObject(spec, "cluster");
        cJSON_AddStringToObject(cluster, "server", cfg->server);
        if (cfg->tls_server_name)
            cJSON_AddStringToObject(cluster, "tls-server-name", cfg->tls_server_name);
        if (cfg->ca_pem) {
            char *b64 = malloc(4 * ((cfg->ca_len + 2) / 3) + 1);
            if (b64) {
                EVP_EncodeBlock((unsigned char *)b64, (const unsigned char *)cfg->ca_pem, (int)cfg->ca_len);
                cJSON_AddStringToObject(cluster, "certificate-authority-data", b64);
                free(b64);
            }
        }
    }
    text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return text;
}

static char **build_env(const ns_kube_config *cfg, char *info)
{
    size_t n_base = 0, n_extra = 0;
    while (environ[n_base])
        n_base++;
    while (cfg->exec->env && cfg->exec->env[n_extra])
        n_extra++;
    char **env = calloc(n_base + n_extra + 2, sizeof(char *));
    if (!env)
        return NULL;
    size_t n = 0;
    for (size_t i = 0; i < n_base; i++) {
        if (strncmp(environ[i], "KUBERNETES_EXEC_INFO=", 21) != 0)
            env[n++] = environ[i];
    }
    for (size_t i = 0; i < n_extra; i++)
        env[n++] = cfg->exec->env[i];
    env[n++] = info;
    return env;
}

/* Reads the child's stdout and stderr until both close or the deadline passes. */
static int drain(int out_fd, int err_fd, pipe_buf *out, pipe_buf *err, const char *cmd)
{
    struct pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
    pipe_buf *bufs[2] = {out, err};
    int64_t deadline = ns_clock_now_ms() + EXEC_TIMEOUT_MS;
    int open_fds = 2;
    while (open_fds > 0) {
        int64_t left = deadline - ns_clock_now_ms();
        if (left <= 0)
            return NS_FAIL(NS_ERR_UNAUTHORIZED, "exec credential plugin %s: no answer within %d s", cmd,
                           EXEC_TIMEOUT_MS / 1000);
        if (poll(fds, 2, (int)left) < 0 && errno != EINTR)
            return NS_FAIL(NS_ERR_INTERNAL, "exec credential plugin %s: poll: %s", cmd, strerror(errno));
        for (int i = 0; i < 2; i++) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            char chunk[4096];
            ssize_t got = read(fds[i].fd, chunk, sizeof(chunk));
            if (got <= 0) {
                fds[i].fd = -1;
                open_fds--;
                continue;
            }
            if (bufs[i]->len + (size_t)got > EXEC_MAX_OUTPUT)
                return NS_FAIL(NS_ERR_UNAUTHORIZED, "exec credential plugin %s: more than 1 MiB of output", cmd);
            char *grown = realloc(bufs[i]->data, bufs[i]->len + (size_t)got + 1);
            if (!grown)
                return NS_FAIL(NS_ERR_INTERNAL, "out of memory reading exec credential plugin %s", cmd);
            memcpy(grown + bufs[i]->len, chunk, (size_t)got);
            bufs[i]->data = grown;
            bufs[i]->len += (size_t)got;
            grown[bufs[i]->len] = '\0';
        }
    }
    return 0;
}

/* The last non-empty line of the plugin's stderr, for the error message. */
static const char *last_line(pipe_buf *err)
{
    if (!err->data)
        return "";
    char *end = err->data + err->len;
    while (end > err->data && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' '))
        *--end = '\0';
    char *nl = strrchr(err->data, '\n');
    return nl ? nl + 1 : err->data;
}

static int run_plugin(const ns_kube_config *cfg, pipe_buf *out, int *status)
{
    const ns_kube_exec *x = cfg->exec;
    int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
    char *info_json = exec_info(cfg), *info = NULL;
    char **env = NULL, **argv = NULL;
    pipe_buf err = {0};
    pid_t pid = -1;
    int rc = 0;
    size_t n_args = 0;
    while (x->args && x->args[n_args])
        n_args++;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (!info_json || !(info = malloc(strlen(info_json) + 32)) || !(argv = calloc(n_args + 2, sizeof(char *)))) {
        rc = NS_FAIL(NS_ERR_INTERNAL, "out of memory running exec credential plugin %s", x->command);
        goto done;
    }
    sprintf(info, "KUBERNETES_EXEC_INFO=%s", info_json);
    if (!(env = build_env(cfg, info))) {
        rc = NS_FAIL(NS_ERR_INTERNAL, "out of memory running exec credential plugin %s", x->command);
        goto done;
    }
    argv[0] = x->command;
    for (size_t i = 0; i < n_args; i++)
        argv[i + 1] = x->args[i];
    if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
        rc = NS_FAIL(NS_ERR_INTERNAL, "exec credential plugin %s: pipe: %s", x->command, strerror(errno));
        goto done;
    }
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1);
    posix_spawn_file_actions_adddup2(&fa, err_pipe[1], 2);
    int err_no = posix_spawnp(&pid, x->command, &fa, NULL, argv, env);
    close(out_pipe[1]);
    close(err_pipe[1]);
    out_pipe[1] = err_pipe[1] = -1;
    if (err_no != 0) {
        pid = -1;
        rc = NS_FAIL(NS_ERR_UNAUTHORIZED, "exec credential plugin %s cannot be started: %s%s%s", x->command,
                     strerror(err_no), x->install_hint ? "; " : "", x->install_hint ? x->install_hint : "");
        goto done;
    }
    rc = drain(out_pipe[0], err_pipe[0], out, &err, x->command);
    if (rc < 0)
        kill(pid, SIGKILL);
    while (waitpid(pid, status, 0) < 0 && errno == EINTR)
        ;
    if (rc == 0 && !(WIFEXITED(*status) && WEXITSTATUS(*status) == 0)) {
        int code = WIFEXITED(*status) ? WEXITSTATUS(*status) : 128 + WTERMSIG(*status);
        rc = NS_FAIL(NS_ERR_UNAUTHORIZED, "exec credential plugin %s failed with exit status %d: %s%s%s", x->command,
                     code, last_line(&err), code == 127 && x->install_hint ? "; " : "",
                     code == 127 && x->install_hint ? x->install_hint : "");
    }
done:
    posix_spawn_file_actions_destroy(&fa);
    for (int i = 0; i < 2; i++) {
        if (out_pipe[i] >= 0)
            close(out_pipe[i]);
        if (err_pipe[i] >= 0)
            close(err_pipe[i]);
    }
    free(err.data);
    free(argv);
    free(env);
    free(info);
    free(info_json);
    return rc;
}

static int copy_field(const cJSON *status, const char *key, const char *cmd, char **out, size_t *len)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(status, key);
    if (!v || cJSON_IsNull(v))
        return 0;
    if (!cJSON_IsString(v))
        return NS_FAIL(NS_ERR_UNAUTHORIZED, "exec credential plugin %s: status.%s is not a string", cmd, key);
    if (!(*out = ns_strdup(v->valuestring)))
        return NS_ERR_INTERNAL;
    if (len)
        *len = strlen(*out);
    return 0;
}

static int parse_credential(const ns_kube_config *cfg, const char *text, ns_kube_creds *creds, int64_t *expiry_ms)
{
    const char *cmd = cfg->exec->command;
    cJSON *root = cJSON_Parse(text);
    int rc = 0;
    *expiry_ms = 0;
    if (!root || !cJSON_IsObject(root)) {
        rc = NS_FAIL(NS_ERR_UNAUTHORIZED, "exec credential plugin %s: its output is not a JSON object", cmd);
        goto done;
    }
    const cJSON *api = cJSON_GetObjectItemCaseSensitive(root, "apiVersion");
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(root, "kind");
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(root, "status");
    if (!cJSON_IsString(api) || strcmp(api->valuestring, cfg->exec->api_version) != 0) {
        rc = NS_FAIL(NS_ERR_UNAUTHORIZED, "exec credential plugin %s: apiVersion %s, expected %s", cmd,
                     cJSON_IsString(api) ? api->valuestring : "(missing)", cfg->exec->api_version);
        goto done;
    }
    if (!cJSON_IsString(kind) || strcmp(kind->valuestring, "ExecCredential") != 0) {
        rc = NS_FAIL(NS_ERR_UNAUTHORIZED, "exec credential plugin %s: kind is not ExecCredential", cmd);
        goto done;
    }
    if (!cJSON_IsObject(status)) {
        rc = NS_FAIL(NS_ERR_UNAUTHORIZED, "exec credential plugin %s: no status in its answer", cmd);
        goto done;
    }
    if ((rc = copy_field(status, "token", cmd, &creds->token, NULL)) < 0 ||
        (rc = copy_field(status, "clientCertificateData", cmd, &creds->cert_pem, &creds->cert_len)) < 0 ||
        (rc = copy_field(status, "clientKeyData", cmd, &creds->key_pem, &creds->key_len)) < 0)
        goto done;
    if (!creds->token && !creds->cert_pem) {
        rc = NS_FAIL(NS_ERR_UNAUTHORIZED, "exec credential plugin %s: status has neither token nor "
                                          "clientCertificateData", cmd);
        goto done;
    }
    if (!creds->cert_pem != !creds->key_pem) {
        rc = NS_FAIL(NS_ERR_UNAUTHORIZED, "exec credential plugin %s: clientCertificateData and clientKeyData "
                                          "must come together", cmd);
        goto done;
    }
    const cJSON *exp = cJSON_GetObjectItemCaseSensitive(status, "expirationTimestamp");
    if (exp && !cJSON_IsNull(exp) &&
        (!cJSON_IsString(exp) || ns_clock_parse_rfc3339(exp->valuestring, expiry_ms) < 0)) {
        rc = NS_FAIL(NS_ERR_UNAUTHORIZED, "exec credential plugin %s: status.expirationTimestamp is not an RFC 3339 "
                                          "time", cmd);
        goto done;
    }
done:
    if (rc < 0)
        ns_kube_creds_clear(creds);
    cJSON_Delete(root);
    return rc;
}

int ns_kube_exec_run(const ns_kube_config *cfg, ns_kube_creds *creds, int64_t *expiry_ms)
{
    pipe_buf out = {0};
    int status = 0;
    int rc = run_plugin(cfg, &out, &status);
    if (rc == 0)
        rc = parse_credential(cfg, out.data ? out.data : "", creds, expiry_ms);
    free(out.data);
    return rc;
}
