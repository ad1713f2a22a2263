/* Where plugins are found, and checking a whole directory of them (`nodesmith plugins`). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errors/ns_error.h"
#include "plugin/plugin_internal.h"

#ifndef NS_PLUGINS_INSTALL_DIR
#error "NS_PLUGINS_INSTALL_DIR must be defined by the build"
#endif

const char *ns_plugin_default_dir(const char *flag_value)
{
    static char beside_binary[PATH_MAX + 16];
    if (flag_value && *flag_value)
        return flag_value;
    const char *env = getenv("NODESMITH_PLUGINS_DIR");
    if (env && *env)
        return env;
    /* A build tree keeps plugins.d next to the binary; an install keeps it under lib/. */
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            struct stat st;
            snprintf(beside_binary, sizeof(beside_binary), "%s/plugins.d", exe);
            if (stat(beside_binary, &st) == 0 && S_ISDIR(st.st_mode))
                return beside_binary;
        }
    }
    return NS_PLUGINS_INSTALL_DIR;
}

static int by_file(const void *a, const void *b)
{
    return strcmp(((const ns_plugin_scan_entry *)a)->file, ((const ns_plugin_scan_entry *)b)->file);
}

void ns_plugin_scan_free(ns_plugin_scan_entry *entries, size_t n_entries)
{
    for (size_t i = 0; entries && i < n_entries; i++) {
        free(entries[i].file);
        free(entries[i].name);
        free(entries[i].error);
        free(entries[i].version);
    }
    free(entries);
}

static int scan_one(const char *dir, const char *file_name, const ns_plugin_load_params *params,
                    ns_plugin_scan_entry *e)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s", dir, file_name);
    e->file = strdup(path);
    e->name = strndup(file_name, strlen(file_name) - 3);
    if (!e->file || !e->name)
        return NS_FAIL(NS_ERR_INTERNAL, "scanning %s: out of memory", dir);
    return ns_plugin_probe(dir, e->name, params, e);
}

int ns_plugin_scan_dir(const char *dir, int64_t call_timeout_ms, ns_plugin_scan_entry **entries, size_t *n_entries)
{
    const ns_plugin_load_params params = {.call_timeout_ms = call_timeout_ms};
    int rc = NS_OK;
    ns_plugin_scan_entry *list = NULL;
    size_t n = 0;
    *entries = NULL;
    *n_entries = 0;
    DIR *d = opendir(dir);
    if (!d)
        return NS_FAIL(errno == ENOENT ? NS_ERR_NOT_FOUND : NS_ERR_INVALID_CONFIG, "plugins directory %s: %s", dir,
                       strerror(errno));
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (len <= 3 || strcmp(de->d_name + len - 3, ".so") != 0)
            continue;
        ns_plugin_scan_entry *grown = realloc(list, (n + 1) * sizeof(*grown));
        if (!grown) {
            rc = NS_FAIL(NS_ERR_INTERNAL, "scanning %s: out of memory", dir);
            goto cleanup;
        }
        list = grown;
        memset(&list[n], 0, sizeof(list[n]));
        n++;
        rc = scan_one(dir, de->d_name, &params, &list[n - 1]);
        if (rc != NS_OK)
            goto cleanup;
    }
    qsort(list, n, sizeof(*list), by_file);
    *entries = list;
    *n_entries = n;
    list = NULL;
    n = 0;
cleanup:
    closedir(d);
    ns_plugin_scan_free(list, n);
    return rc;
}
