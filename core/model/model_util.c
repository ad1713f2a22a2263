#include "model/model_util.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "errors/ns_error.h"

int ns_grow(void **items, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 4;
    while (n < need)
        n *= 2;
    if (n > SIZE_MAX / elem)
        return NS_FAIL(NS_ERR_INTERNAL, "array of %zu elements is too large", need);
    void *p = realloc(*items, n * elem);
    if (!p)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory growing an array to %zu elements", n);
    *items = p;
    *cap = n;
    return 0;
}

char *ns_strdup(const char *s)
{
    if (!s)
        return NULL;
    char *d = strdup(s);
    if (!d)
        NS_FAIL(NS_ERR_INTERNAL, "out of memory copying a string of %zu bytes", strlen(s));
    return d;
}

void ns_strv_free(char **v, size_t n)
{
    if (!v)
        return;
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

int ns_strv_copy(char *const *v, size_t n, char ***out)
{
    *out = NULL;
    if (n == 0)
        return 0;
    char **c = calloc(n, sizeof(*c));
    if (!c)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory copying %zu strings", n);
    for (size_t i = 0; i < n; i++) {
        c[i] = ns_strdup(v[i]);
        if (!c[i]) {
            ns_strv_free(c, i);
            return NS_ERR_INTERNAL;
        }
    }
    *out = c;
    return 0;
}

size_t ns_sorted_find(const void *items, size_t n, size_t stride, size_t key_offset, const char *key, bool *found)
{
    size_t lo = 0, hi = n;
    *found = false;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const char *k;
        memcpy(&k, (const char *)items + mid * stride + key_offset, sizeof(k));
        int c = strcmp(k, key);
        if (c == 0) {
            *found = true;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int ns_read_file(const char *path, const char *what, char **text, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    struct stat st;
    int rc = 0;
    *text = NULL;
    *len = 0;
    if (!fp)
        return NS_FAIL(errno == ENOENT ? NS_ERR_NOT_FOUND : NS_ERR_INVALID_CONFIG, "cannot open %s %s: %s", what, path,
                       strerror(errno));
    if (fstat(fileno(fp), &st) < 0)
        rc = NS_FAIL(NS_ERR_INVALID_CONFIG, "cannot read %s %s: %s", what, path, strerror(errno));
    else if (S_ISDIR(st.st_mode))
        rc = NS_FAIL(NS_ERR_INVALID_CONFIG, "%s is a directory, not a %s file", path, what);
    else if (st.st_size > NS_INPUT_FILE_MAX)
        rc = NS_FAIL(NS_ERR_INVALID_CONFIG, "%s %s is %lld bytes, more than the %d allowed", what, path,
                     (long long)st.st_size, NS_INPUT_FILE_MAX);
    char *buf = NULL;
    size_t n = 0, cap = 0;
    /* Read to the end rather than trusting st_size: pipes and /proc files report 0. */
    while (rc == 0) {
        if (n + 4096 + 1 > cap && ns_grow((void **)&buf, &cap, n + (n > 4096 ? n : 4096) + 1, 1) < 0) {
            rc = NS_ERR_INTERNAL;
            break;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, fp);
        n += got;
        if (n > NS_INPUT_FILE_MAX)
            rc = NS_FAIL(NS_ERR_INVALID_CONFIG, "%s %s is larger than %d bytes", what, path, NS_INPUT_FILE_MAX);
        else if (got == 0 && ferror(fp))
            rc = NS_FAIL(NS_ERR_INVALID_CONFIG, "cannot read %s %s: %s", what, path, strerror(errno));
        else if (got == 0)
            break;
    }
    fclose(fp);
    if (rc < 0) {
        free(buf);
        return rc;
    }
    if (!buf && ns_grow((void **)&buf, &cap, 1, 1) < 0)
        return NS_ERR_INTERNAL;
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return 0;
}

void ns_text_position(const char *text, size_t len, size_t offset, size_t *line, size_t *column)
{
    *line = 1;
    *column = 1;
    for (size_t i = 0; i < offset && i < len; i++) {
        (*column)++;
        if (text[i] == '\n') {
            (*line)++;
            *column = 1;
        }
    }
}
