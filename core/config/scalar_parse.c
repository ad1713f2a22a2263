#include "config/scalar_parse.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nodesmith/provider.h"

int ns_parse_int64(const char *text, int64_t *out)
{
    if (!text || !*text || isspace((unsigned char)*text))
        return NS_ERR_INVALID_ARGUMENT;
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno != 0 || *end != '\0')
        return NS_ERR_INVALID_ARGUMENT;
    *out = (int64_t)v;
    return NS_OK;
}

int ns_parse_bool(const char *text, bool *out)
{
    static const char *const yes[] = {"true", "yes", "on"};
    static const char *const no[] = {"false", "no", "off"};
    for (size_t i = 0; text && i < 3; i++) {
        if (strcasecmp(text, yes[i]) == 0) {
            *out = true;
            return NS_OK;
        }
        if (strcasecmp(text, no[i]) == 0) {
            *out = false;
            return NS_OK;
        }
    }
    return NS_ERR_INVALID_ARGUMENT;
}

int ns_parse_duration_ms(const char *text, int64_t *out)
{
    static const struct {
        const char *unit;
        double ms;
    } units[] = {{"ms", 1}, {"us", 0.001}, {"µs", 0.001}, {"ns", 0.000001}, {"s", 1000}, {"m", 60000}, {"h", 3600000}};
    if (!text || !*text)
        return NS_ERR_INVALID_ARGUMENT;
    int64_t whole;
    if (ns_parse_int64(text, &whole) == NS_OK) {
        if (whole < 0)
            return NS_ERR_INVALID_ARGUMENT;
        *out = whole * 1000;
        return NS_OK;
    }
    const char *p = text;
    double total = 0;
    if (strcmp(p, "0") == 0) {
        *out = 0;
        return NS_OK;
    }
    while (*p) {
        if (!isdigit((unsigned char)*p) && *p != '.')
            return NS_ERR_INVALID_ARGUMENT;
        char *end = NULL;
        double v = strtod(p, &end);
        if (end == p)
            return NS_ERR_INVALID_ARGUMENT;
        p = end;
        size_t matched = 0;
        double scale = 0;
        for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
            size_t len = strlen(units[i].unit);
            if (len > matched && strncmp(p, units[i].unit, len) == 0) {
                matched = len;
                scale = units[i].ms;
            }
        }
        if (!matched)
            return NS_ERR_INVALID_ARGUMENT;
        total += v * scale;
        p += matched;
    }
    if (total > 9.2e18)
        return NS_ERR_INVALID_ARGUMENT;
    *out = (int64_t)(total + 0.5);
    return NS_OK;
}
