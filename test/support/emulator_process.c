#include "emulator_process.h"

#include "curl_body.h"

#include <curl/curl.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int emulator_spawn(emulator *e, const char *what, const char *const argv[], const char *const env[], bool tls,
                   const char *ca_file, const char *hint)
{
    memset(e, 0, sizeof(*e));
    int fds[2];
    if (pipe(fds) != 0) {
        fprintf(stderr, "cannot start the %s: pipe: %s\n", what, strerror(errno));
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        close(fds[0]);
        close(fds[1]);
        for (size_t i = 0; env && env[i]; i += 2)
            setenv(env[i], env[i + 1], 1);
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(fds[1]);
    if (pid < 0) {
        fprintf(stderr, "cannot start the %s: fork: %s\n", what, strerror(errno));
        close(fds[0]);
        return -1;
    }
    FILE *out = fdopen(fds[0], "r");
    char line[128] = "";
    if (!out || !fgets(line, sizeof(line), out) || sscanf(line, "PORT %d", &e->port) != 1) {
        fprintf(stderr, "the %s (%s) did not announce its port (got \"%s\")%s%s\n", what, argv[0], line,
                hint ? "; " : "", hint ? hint : "");
        if (out)
            fclose(out);
        else
            close(fds[0]);
        kill(pid, SIGTERM);
        waitpid(pid, NULL, 0);
        return -1;
    }
    fclose(out);
    e->pid = pid;
    snprintf(e->url, sizeof(e->url), "%s://127.0.0.1:%d", tls ? "https" : "http", e->port);
    snprintf(e->ca_file, sizeof(e->ca_file), "%s", ca_file ? ca_file : "");
    return 0;
}

void emulator_stop(emulator *e)
{
    if (e->pid <= 0)
        return;
    kill(e->pid, SIGTERM);
    waitpid(e->pid, NULL, 0);
    e->pid = 0;
}

long emulator_control(const emulator *e, const char *path, const char *json, char **answer)
{
    char url[256];
    snprintf(url, sizeof(url), "%s%s", e->url, path);
    CURL *c = curl_easy_init();
    curl_body b = {0};
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    if (json)
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, json);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, curl_body_collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    if (e->ca_file[0])
        curl_easy_setopt(c, CURLOPT_CAINFO, e->ca_file);
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
