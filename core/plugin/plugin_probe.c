/*
 * Loading a plugin in a child process (`nodesmith plugins`): a plugin that crashes while loading takes only the
 * child down, and the listing goes on with the crash as that plugin's refusal, in the watchdog's words (the line
 * its crash handler wrote on the child's stderr).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "errors/ns_error.h"
#include "plugin/plugin_internal.h"

/* What the child reports on its result pipe: code, ABI version, the lengths of the version and the error, then
 * those bytes. */
typedef struct probe_header {
    int code;
    uint32_t abi_version;
    uint32_t version_len;
    uint32_t error_len;
} probe_header;

static void write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n <= 0 && errno != EINTR)
            return;
        if (n > 0) {
            p += n;
            len -= (size_t)n;
        }
    }
}

static _Noreturn void child(const char *dir, const char *name, const ns_plugin_load_params *params, int result_fd)
{
    ns_plugin *p = NULL;
    probe_header h = {.code = ns_plugin_load(dir, name, params, &p)};
    const char *version = p ? ns_plugin_version(p) : "";
    const char *error = h.code == NS_OK ? "" : ns_error_message();
    h.abi_version = p ? ns_plugin_abi_version(p) : 0;
    h.version_len = (uint32_t)strlen(version);
    h.error_len = (uint32_t)strlen(error);
    write_all(result_fd, &h, sizeof(h));
    write_all(result_fd, version, h.version_len);
    write_all(result_fd, error, h.error_len);
    ns_plugin_unload(p);
    /* No exit handlers: a call the watchdog abandoned may still be running in this process. */
    _exit(0);
}

/* Reads both pipes to their ends (the child's stderr may be long: its log lines). */
static void drain(int result_fd, int err_fd, char **result, size_t *result_len, char **err, size_t *err_len)
{
    struct pollfd fds[2] = {{.fd = result_fd, .events = POLLIN}, {.fd = err_fd, .events = POLLIN}};
    char **bufs[2] = {result, err};
    size_t *lens[2] = {result_len, err_len};
    size_t caps[2] = {0, 0};
    int open_fds = 2;
    while (open_fds > 0) {
        if (poll(fds, 2, -1) < 0 && errno != EINTR)
            return;
        for (int i = 0; i < 2; i++) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            if (*lens[i] + 4096 + 1 > caps[i]) {
                size_t cap = caps[i] ? 2 * caps[i] : 8192;
                char *grown = realloc(*bufs[i], cap);
                if (!grown)
                    return;
                *bufs[i] = grown;
                caps[i] = cap;
            }
            ssize_t n = read(fds[i].fd, *bufs[i] + *lens[i], 4096);
            if (n > 0) {
                *lens[i] += (size_t)n;
                (*bufs[i])[*lens[i]] = '\0';
            } else if (n == 0 || errno != EINTR) {
                fds[i].fd = -1;
                open_fds--;
            }
        }
    }
}

/* The watchdog's line from the child's stderr ("nodesmith: provider X crashed in M: ..."), else a plain account. */
static char *crash_message(const char *err, int status, const char *path)
{
    const char *line = err ? strstr(err, "nodesmith: provider ") : NULL;
    char *out = NULL;
    if (line) {
        size_t len = strcspn(line, "\n");
        out = strndup(line + strlen("nodesmith: "), len - strlen("nodesmith: "));
    } else if (WIFSIGNALED(status)) {
        if (asprintf(&out, "plugin %s: loading it killed the process with signal %d (%s)", path, WTERMSIG(status),
                     strsignal(WTERMSIG(status))) < 0)
            out = NULL;
    } else if (asprintf(&out, "plugin %s: loading it ended the process with status %d", path,
                        WEXITSTATUS(status)) < 0) {
        out = NULL;
    }
    return out;
}

int ns_plugin_probe(const char *dir, const char *name, const ns_plugin_load_params *params, ns_plugin_scan_entry *e)
{
    int result_pipe[2], err_pipe[2];
    if (pipe(result_pipe) != 0)
        return NS_FAIL(NS_ERR_INTERNAL, "checking plugin %s: pipe: %s", e->file, strerror(errno));
    if (pipe(err_pipe) != 0) {
        close(result_pipe[0]);
        close(result_pipe[1]);
        return NS_FAIL(NS_ERR_INTERNAL, "checking plugin %s: pipe: %s", e->file, strerror(errno));
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(result_pipe[0]);
        close(err_pipe[0]);
        dup2(err_pipe[1], STDERR_FILENO);
        child(dir, name, params, result_pipe[1]);
    }
    close(result_pipe[1]);
    close(err_pipe[1]);
    char *result = NULL, *err = NULL;
    size_t result_len = 0, err_len = 0;
    int rc = NS_OK, status = 0;
    if (pid < 0) {
        rc = NS_FAIL(NS_ERR_INTERNAL, "checking plugin %s: fork: %s", e->file, strerror(errno));
    } else {
        drain(result_pipe[0], err_pipe[0], &result, &result_len, &err, &err_len);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
    }
    close(result_pipe[0]);
    close(err_pipe[0]);
    probe_header h;
    if (rc == NS_OK && result_len >= sizeof(h)) {
        memcpy(&h, result, sizeof(h));
        if (result_len >= sizeof(h) + h.version_len + h.error_len) {
            e->code = h.code;
            e->abi_version = h.abi_version;
            if (h.code == NS_OK)
                e->version = strndup(result + sizeof(h), h.version_len);
            else
                e->error = strndup(result + sizeof(h) + h.version_len, h.error_len);
        }
    }
    if (rc == NS_OK && !e->version && !e->error) { /* the child died before it could answer */
        e->code = NS_ERR_INTERNAL;
        e->error = crash_message(err, status, e->file);
    }
    if (rc == NS_OK && !e->version && !e->error)
        rc = NS_FAIL(NS_ERR_INTERNAL, "checking plugin %s: out of memory", e->file);
    /* The child's log lines (its "loaded provider") are this process's too. */
    if (err && (e->code == NS_OK || result_len > 0))
        fputs(err, stderr);
    free(result);
    free(err);
    return rc;
}
