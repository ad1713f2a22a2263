#include "model/quantity.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "errors/ns_error.h"

typedef unsigned __int128 u128;

#define MAX_SIGNIFICANT_DIGITS 36

static int bad(const char *field, const char *text, const char *why)
{
    char quoted[NS_EXCERPT_BUF];
    return NS_FAIL(NS_ERR_INVALID_CONFIG, "%s%sinvalid quantity \"%s\": %s", field ? field : "", field ? ": " : "",
                   ns_error_excerpt(text, quoted, sizeof(quoted)), why);
}

/* Suffix -> power of ten and power of two. Returns false for an unknown suffix. */
static bool parse_suffix(const char *s, int *e10, int *e2, const char **why)
{
    static const struct {
        const char *suffix;
        int e10, e2;
    } table[] = {
        {"", 0, 0},    {"n", -9, 0},  {"u", -6, 0},  {"m", -3, 0},  {"k", 3, 0},   {"M", 6, 0},
        {"G", 9, 0},   {"T", 12, 0},  {"P", 15, 0},  {"E", 18, 0},  {"Ki", 0, 10}, {"Mi", 0, 20},
        {"Gi", 0, 30}, {"Ti", 0, 40}, {"Pi", 0, 50}, {"Ei", 0, 60},
    };
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        if (strcmp(s, table[i].suffix) == 0) {
            *e10 = table[i].e10;
            *e2 = table[i].e2;
            return true;
        }
    }
    if (s[0] == 'e' || s[0] == 'E') {
        const char *p = s + 1;
        bool neg = false;
        if (*p == '+' || *p == '-')
            neg = *p++ == '-';
        if (!*p) {
            *why = "exponent has no digits";
            return false;
        }
        int v = 0;
        for (; *p; p++) {
            if (*p < '0' || *p > '9') {
                *why = "exponent is not an integer";
                return false;
            }
            if (v < 100000)
                v = v * 10 + (*p - '0');
        }
        *e10 = neg ? -v : v;
        *e2 = 0;
        return true;
    }
    *why = "unknown suffix (expected one of n u m k M G T P E Ki Mi Gi Ti Pi Ei or an exponent like e3)";
    return false;
}

int ns_quantity_parse(const char *text, int scale, const char *field, int64_t *out, bool *exact)
{
    if (!text || !*text)
        return bad(field, text ? text : "", "empty");
    const char *p = text;
    bool negative = false;
    if (*p == '+' || *p == '-')
        negative = *p++ == '-';

    u128 mantissa = 0;
    int digits = 0, significant = 0, frac_digits = 0;
    bool seen_dot = false;
    for (;; p++) {
        if (*p == '.' && !seen_dot) {
            seen_dot = true;
            continue;
        }
        if (*p < '0' || *p > '9')
            break;
        digits++;
        if (seen_dot)
            frac_digits++;
        if (mantissa == 0 && *p == '0')
            continue;
        if (++significant > MAX_SIGNIFICANT_DIGITS)
            return bad(field, text, "more than 36 significant digits");
        mantissa = mantissa * 10 + (u128)(*p - '0');
    }
    if (digits == 0)
        return bad(field, text, "no digits");

    int e10 = 0, e2 = 0;
    const char *why = NULL;
    if (!parse_suffix(p, &e10, &e2, &why))
        return bad(field, text, why);
    e10 += scale - frac_digits;

    u128 v = mantissa;
    if (e2 > 0) {
        if (v > ((~(u128)0) >> e2))
            return bad(field, text, "value is too large");
        v <<= e2;
    }
    bool rounded = false;
    const u128 limit = (u128)INT64_MAX;
    if (e10 >= 0) {
        for (int i = 0; i < e10 && v != 0; i++) {
            if (v > limit)
                break;
            v *= 10;
        }
    } else if (v != 0) {
        int k = -e10;
        if (k > 38) {
            v = negative ? 0 : 1;
            rounded = true;
        } else {
            u128 d = 1;
            for (int i = 0; i < k; i++)
                d *= 10;
            u128 q = v / d, r = v % d;
            rounded = r != 0;
            /* Rounding is towards +infinity: up in magnitude for positives, down for negatives. */
            v = q + ((rounded && !negative) ? 1 : 0);
        }
    }
    if (v > limit)
        return bad(field, text, "value does not fit in 64 bits at this unit");
    *out = negative ? -(int64_t)v : (int64_t)v;
    if (exact)
        *exact = !rounded;
    return 0;
}

char *ns_quantity_format(int64_t value, int scale, bool binary, char *buf, size_t len)
{
    if (len == 0)
        return buf;
    if (scale == NS_QTY_MILLI) {
        if (value % 1000 == 0)
            snprintf(buf, len, "%" PRId64, value / 1000);
        else
            snprintf(buf, len, "%" PRId64 "m", value);
        return buf;
    }
    if (binary && value != 0) {
        static const char *const suffixes[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
        int i = 0;
        int64_t v = value;
        while (i < 6 && v % 1024 == 0) {
            v /= 1024;
            i++;
        }
        snprintf(buf, len, "%" PRId64 "%s", v, suffixes[i]);
        return buf;
    }
    snprintf(buf, len, "%" PRId64, value);
    return buf;
}
