#include "model/model_util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
