#include "model/names.h"

#include <stdio.h>
#include <string.h>

#include "errors/ns_error.h"

static bool lower_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool alnum(char c)
{
    return lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

bool ns_name_is_dns_subdomain(const char *s, const char **why)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0)
        return *why = "must not be empty", false;
    if (n > NS_K8S_NAME_MAX)
        return *why = "must be no more than 253 characters", false;
    /* Each dot-separated label is a DNS-1123 label: alphanumerics and '-', alphanumeric at both ends. */
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool edge = i == 0 || i == n - 1 || s[i - 1] == '.' || s[i + 1] == '.';
        if (c == '.' ? edge : !(lower_alnum(c) || (c == '-' && !edge)))
            return *why = "must consist of lower case alphanumeric characters, '-' or '.', and must start and end "
                          "with an alphanumeric character", false;
    }
    return true;
}

/* A label value, or the name part of a qualified name (non-empty there). */
static bool label_name_ok(const char *s, size_t n, const char **why)
{
    if (n > NS_K8S_LABEL_VALUE_MAX)
        return *why = "must be no more than 63 characters", false;
    for (size_t i = 0; i < n; i++) {
        bool edge = i == 0 || i == n - 1;
        if (!(alnum(s[i]) || (!edge && (s[i] == '-' || s[i] == '_' || s[i] == '.'))))
            return *why = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                          "alphanumeric character", false;
    }
    return true;
}

bool ns_label_value_is_valid(const char *s, const char **why)
{
    return label_name_ok(s ? s : "", s ? strlen(s) : 0, why);
}

bool ns_label_key_is_valid(const char *s, const char **why)
{
    const char *slash = s ? strchr(s, '/') : NULL;
    const char *name = slash ? slash + 1 : s;
    if (!s || !*name)
        return *why = "must have a name part", false;
    if (slash) {
        char prefix[NS_K8S_NAME_MAX + 2];
        size_t plen = (size_t)(slash - s);
        if (plen == 0 || plen > NS_K8S_NAME_MAX)
            return *why = "prefix must be a DNS subdomain of 1 to 253 characters", false;
        memcpy(prefix, s, plen);
        prefix[plen] = '\0';
        const char *pwhy;
        if (!ns_name_is_dns_subdomain(prefix, &pwhy))
            return *why = "prefix must be a DNS subdomain (lower case alphanumerics, '-' and '.')", false;
    }
    return label_name_ok(name, strlen(name), why);
}

void ns_name_rng_seed(ns_name_rng *r, uint64_t seed)
{
    r->state = seed;
}

static uint64_t next(ns_name_rng *r)
{
    uint64_t z = (r->state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

int ns_name_generate(ns_name_rng *r, const char *prefix, ns_name_taken_fn taken, void *ctx, char *buf, size_t len)
{
    static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    if (!r || !prefix || !buf || len <= NS_GENERATED_NAME_MAX)
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "generating a name: invalid arguments");
    int plen = (int)strnlen(prefix, NS_GENERATED_PREFIX_MAX);
    for (int attempt = 0; attempt < 64; attempt++) {
        uint64_t h = next(r);
        char sfx[NS_GENERATED_SUFFIX_LEN + 1];
        for (int i = 0; i < NS_GENERATED_SUFFIX_LEN; i++) {
            sfx[i] = alphabet[h % (sizeof(alphabet) - 1)];
            h /= sizeof(alphabet) - 1;
        }
        sfx[NS_GENERATED_SUFFIX_LEN] = '\0';
        snprintf(buf, len, "%.*s%s", plen, prefix, sfx);
        if (!taken || !taken(buf, ctx))
            return NS_OK;
    }
    return NS_FAIL(NS_ERR_INTERNAL, "generating a name for %.*s: 64 candidates were all taken", plen, prefix);
}
