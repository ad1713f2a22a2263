#include "ali_emulator.h"

#include <curl/curl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

const char *ali_node_modules(void)
{
    static char path[1024];
    const char *cache = getenv("NODESMITH_CACHE");
    if (cache && *cache)
        snprintf(path, sizeof(path), "%s/npm-alibaba/node_modules", cache);
    else
        snprintf(path, sizeof(path), "%s/.cache/nodesmith/npm-alibaba/node_modules", getenv("HOME") ? getenv("HOME") : "");
    return path;
}

int ali_emulator_start(ali_emulator *e)
{
    memset(e, 0, sizeof(*e));
    const char *dir = getenv("ALIBABA_TEST_DIR"), *data = getenv("ALIBABA_SHARED_DATA");
    if (!dir || !data) {
        fprintf(stderr, "ALIBABA_TEST_DIR and ALIBABA_SHARED_DATA are not set; run the tests through meson test\n");
        return -1;
    }
    char script[1024];
    snprintf(script, sizeof(script), "%s/../emulators/alibaba/alibaba_emulator.js", dir);
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        close(fds[0]);
        close(fds[1]);
        setenv("NODE_PATH", ali_node_modules(), 1);
        execlp("node", "node", script, "--data-dir", data, "--access-key", ALI_TEST_ACCESS_KEY, "--secret-key",
               ALI_TEST_SECRET, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        return -1;
    }
    FILE *out = fdopen(fds[0], "r");
    char line[128] = "";
    int port = 0;
    if (!out || !fgets(line, sizeof(line), out) || sscanf(line, "PORT %d", &port) != 1) {
        fprintf(stderr, "the Alibaba Cloud emulator did not announce its port (got \"%s\"); are the npm packages in "
                "%s (scripts/install-deps.sh)?\n", line, ali_node_modules());
        if (out)
            fclose(out);
        kill(pid, SIGTERM);
        waitpid(pid, NULL, 0);
        return -1;
    }
    fclose(out);
    e->pid = pid;
    snprintf(e->url, sizeof(e->url), "http://127.0.0.1:%d", port);
    return 0;
}

void ali_emulator_stop(ali_emulator *e)
{
    if (e->pid <= 0)
        return;
    kill(e->pid, SIGTERM);
    waitpid(e->pid, NULL, 0);
    e->pid = 0;
}

typedef struct answer_buf {
    char *data;
    size_t len;
} answer_buf;

static size_t collect(char *ptr, size_t size, size_t n, void *ud)
{
    answer_buf *b = ud;
    char *p = realloc(b->data, b->len + size * n + 1);
    if (!p)
        return 0;
    b->data = p;
    memcpy(b->data + b->len, ptr, size * n);
    b->len += size * n;
    b->data[b->len] = '\0';
    return size * n;
}

long ali_emulator_control(const ali_emulator *e, const char *path, const char *json, char **answer)
{
    char url[256];
    snprintf(url, sizeof(url), "%s%s", e->url, path);
    CURL *c = curl_easy_init();
    answer_buf b = {0};
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    if (json)
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, json);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    long status = 0;
    if (curl_easy_perform(c) == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    if (answer)
        *answer = b.data;
    else
        free(b.data);
    return status;
}
