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
#include "plugin/plugin_loader.h"

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

static int scan_one(const char *dir, const char *file_name, ns_plugin_scan_entry *e)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s", dir, file_name);
    e->file = strdup(path);
    e->name = strndup(file_name, strlen(file_name) - 3);
    if (!e->file || !e->name)
        return NS_FAIL(NS_ERR_INTERNAL, "scanning %s: out of memory", dir);
    ns_plugin *p = NULL;
    e->code = ns_plugin_load(dir, e->name, NULL, &p);
    if (e->code != NS_OK) {
        e->error = strdup(ns_error_message());
        return e->error ? NS_OK : NS_FAIL(NS_ERR_INTERNAL, "scanning %s: out of memory", dir);
    }
    e->abi_version = ns_plugin_abi_version(p);
    e->version = strdup(ns_plugin_version(p));
    ns_plugin_unload(p);
    return e->version ? NS_OK : NS_FAIL(NS_ERR_INTERNAL, "scanning %s: out of memory", dir);
}

int ns_plugin_scan_dir(const char *dir, ns_plugin_scan_entry **entries, size_t *n_entries)
{
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
        rc = scan_one(dir, de->d_name, &list[n - 1]);
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
