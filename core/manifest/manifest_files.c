#include "manifest/manifest_files.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "errors/ns_error.h"
#include "log/ns_log.h"
#include "model/model_util.h"

static bool manifest_name(const char *name)
{
    size_t n = strlen(name);
    if (name[0] == '.')
        return false;
    return (n > 5 && strcmp(name + n - 5, ".yaml") == 0) || (n > 4 && strcmp(name + n - 4, ".yml") == 0) ||
           (n > 5 && strcmp(name + n - 5, ".json") == 0);
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int ns_manifest_each_file(const char *path, int (*fn)(void *ctx, const char *file), void *ctx)
{
    struct stat st;
    if (stat(path, &st) < 0)
        return NS_FAIL(errno == ENOENT ? NS_ERR_NOT_FOUND : NS_ERR_INVALID_CONFIG, "cannot read manifests at %s: %s",
                       path, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return fn(ctx, path);
    DIR *dir = opendir(path);
    if (!dir)
        return NS_FAIL(NS_ERR_INVALID_CONFIG, "cannot open manifest directory %s: %s", path, strerror(errno));
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(dir)) != NULL) {
        if (!manifest_name(e->d_name))
            continue;
        char *copy = ns_strdup(e->d_name);
        if (!copy || ns_grow((void **)&names, &cap, n + 1, sizeof(char *)) < 0) {
            free(copy);
            rc = NS_FAIL(NS_ERR_INTERNAL, "out of memory listing manifest directory %s", path);
            break;
        }
        names[n++] = copy;
    }
    closedir(dir);
    if (rc == 0 && n)
        qsort(names, n, sizeof(char *), cmp_names);
    if (rc == 0 && n == 0) /* likely a wrong path: say so, though an empty directory is not an error */
        ns_log(NS_LOG_WARN, "manifest", "no manifest files (*.yaml, *.yml, *.json) in the directory", "directory",
               path, NULL);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        char full[4096];
        if (snprintf(full, sizeof(full), "%s/%s", path, names[i]) >= (int)sizeof(full))
            rc = NS_FAIL(NS_ERR_INVALID_CONFIG, "manifest path %s/%s is too long", path, names[i]);
        else
            rc = fn(ctx, full);
    }
    ns_strv_free(names, n);
    return rc;
}
