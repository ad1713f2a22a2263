#include "model/duration.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "errors/ns_error.h"

static int bad(const char *field, const char *text, const char *why)
{
    char quoted[NS_EXCERPT_BUF];
    return NS_FAIL(NS_ERR_INVALID_CONFIG, "%s%sinvalid duration \"%s\": %s", field ? field : "", field ? ": " : "",
                   ns_error_excerpt(text, quoted, sizeof(quoted)), why);
}

/* Unit -> nanoseconds; 0 when unknown. `len` receives the unit's length. */
static int64_t unit_ns(const char *p, size_t *len)
{
    static const struct {
        const char *name;
        int64_t ns;
    } units[] = {
        {"ns", 1}, {"us", 1000}, {"\xc2\xb5s", 1000}, {"\xce\xbcs", 1000}, {"ms", 1000000},
        {"s", INT64_C(1000000000)}, {"m", INT64_C(60000000000)}, {"h", INT64_C(3600000000000)},
    };
    size_t n = 0;
    while (p[n] && !(p[n] >= '0' && p[n] <= '9') && p[n] != '.')
        n++;
    *len = n;
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (strlen(units[i].name) == n && strncmp(p, units[i].name, n) == 0)
            return units[i].ns;
    return 0;
}

int ns_duration_parse(const char *text, bool allow_never, const char *field, int64_t *out_ms)
{
    if (!text || !*text)
        return bad(field, text ? text : "", "empty");
    if (strcmp(text, "Never") == 0) {
        if (!allow_never)
            return bad(field, text, "\"Never\" is not allowed here");
        *out_ms = NS_DURATION_NEVER;
        return 0;
    }
    const char *p = text;
    if (*p == '+')
        p++;
    else if (*p == '-')
        return bad(field, text, "negative durations are not allowed");
    if (strcmp(p, "0") == 0) {
        *out_ms = 0;
        return 0;
    }
    /* 128-bit nanoseconds so a sum of large terms cannot wrap before the range check against Go's maximum. */
    unsigned __int128 total_ns = 0;
    const unsigned __int128 max_ns = (unsigned __int128)INT64_MAX;
    while (*p) {
        uint64_t whole = 0, frac = 0, frac_scale = 1;
        int nd = 0;
        for (; *p >= '0' && *p <= '9'; p++, nd++) {
            if (whole > (UINT64_MAX - 9) / 10)
                return bad(field, text, "longer than Go's largest duration, 2562047h47m16.854775807s");
            whole = whole * 10 + (uint64_t)(*p - '0');
        }
        if (*p == '.') {
            p++;
            for (; *p >= '0' && *p <= '9'; p++, nd++) {
                if (frac_scale < UINT64_C(1000000000000000000)) {
                    frac = frac * 10 + (uint64_t)(*p - '0');
                    frac_scale *= 10;
                }
            }
        }
        if (nd == 0)
            return bad(field, text, "expected a number before each unit");
        size_t ulen = 0;
        int64_t ns = unit_ns(p, &ulen);
        if (ulen == 0)
            return bad(field, text, "missing unit (one of ns us ms s m h)");
        if (ns == 0)
            return bad(field, text, "unknown unit (expected one of ns us ms s m h)");
        p += ulen;
        total_ns += (unsigned __int128)whole * (uint64_t)ns + (unsigned __int128)frac * (uint64_t)ns / frac_scale;
        if (total_ns > max_ns)
            return bad(field, text, "longer than Go's largest duration, 2562047h47m16.854775807s");
    }
    *out_ms = (int64_t)(total_ns / 1000000);
    return 0;
}

char *ns_duration_format(int64_t ms, char *buf, size_t len)
{
    if (len == 0)
        return buf;
    if (ms == NS_DURATION_NEVER) {
        snprintf(buf, len, "Never");
        return buf;
    }
    if (ms == 0) {
        snprintf(buf, len, "0s");
        return buf;
    }
    if (ms % 1000 != 0 && ms < 1000) {
        snprintf(buf, len, "%" PRId64 "ms", ms);
        return buf;
    }
    int64_t h = ms / 3600000, m = (ms / 60000) % 60, s = (ms / 1000) % 60, rest = ms % 1000;
    size_t off = 0;
    buf[0] = '\0';
    if (h)
        off += (size_t)snprintf(buf + off, len - off, "%" PRId64 "h", h);
    if (m && off < len)
        off += (size_t)snprintf(buf + off, len - off, "%" PRId64 "m", m);
    if ((s || rest) && off < len) {
        if (rest)
            snprintf(buf + off, len - off, "%" PRId64 ".%03" PRId64 "s", s, rest);
        else
            snprintf(buf + off, len - off, "%" PRId64 "s", s);
    }
    return buf;
}
