#include "aws_parse_util.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nodesmith/provider.h>

int aws_parse_open(const char *xml, size_t len, const char *root_name, aws_xml_node **doc, char *err, size_t errlen)
{
    int rc = aws_xml_parse(xml, len, doc, err, errlen);
    if (rc != NS_OK)
        return rc;
    if (strcmp((*doc)->name, root_name) != 0) {
        snprintf(err, errlen, "expected a %s document, got <%s>", root_name, (*doc)->name);
        aws_xml_free(*doc);
        *doc = NULL;
        return NS_ERR_INVALID_ARGUMENT;
    }
    return NS_OK;
}

int64_t aws_parse_i64(const char *text, int64_t fallback)
{
    if (!text || !*text)
        return fallback;
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    return errno || *end ? fallback : (int64_t)v;
}

double aws_parse_double(const char *text, double fallback)
{
    if (!text || !*text)
        return fallback;
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    return errno || *end ? fallback : v;
}

bool aws_parse_bool(const char *text, bool fallback)
{
    if (text && strcmp(text, "true") == 0)
        return true;
    if (text && strcmp(text, "false") == 0)
        return false;
    return fallback;
}

bool aws_parse_iso8601_ms(const char *text, int64_t *ms)
{
    if (!text)
        return false;
    struct tm tm = {0};
    int consumed = 0;
    if (sscanf(text, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
               &tm.tm_sec, &consumed) != 6 || consumed != 19)
        return false;
    const char *p = text + consumed;
    int64_t frac_ms = 0;
    if (*p == '.') {
        int digits = 0;
        for (p++; isdigit((unsigned char)*p); p++, digits++)
            if (digits < 3)
                frac_ms = frac_ms * 10 + (*p - '0');
        if (digits == 0)
            return false;
        for (; digits < 3; digits++)
            frac_ms *= 10;
    }
    if (!(strcmp(p, "Z") == 0 || strcmp(p, "+00:00") == 0 || strcmp(p, "+0000") == 0))
        return false;
    if (tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 ||
        tm.tm_sec > 60)
        return false;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    time_t t = timegm(&tm);
    if (t == (time_t)-1)
        return false;
    *ms = (int64_t)t * 1000 + frac_ms;
    return true;
}

const aws_xml_node *aws_xml_nth(const aws_xml_node *node, const char *name, size_t i)
{
    const aws_xml_node *c = aws_xml_child(node, name);
    while (c && i--)
        c = aws_xml_next_same(c);
    return c;
}

bool aws_parse_rfc1123_ms(const char *text, int64_t *ms)
{
    static const char *const MONTHS[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                         "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    if (!text)
        return false;
    const char *comma = strchr(text, ',');
    const char *p = comma ? comma + 1 : text;
    struct tm tm = {0};
    char month[4] = "";
    int consumed = 0;
    if (sscanf(p, " %2d %3s %4d %2d:%2d:%2d GMT%n", &tm.tm_mday, month, &tm.tm_year, &tm.tm_hour, &tm.tm_min,
               &tm.tm_sec, &consumed) != 6 || p[consumed] != '\0')
        return false;
    tm.tm_mon = -1;
    for (int i = 0; i < 12; i++)
        if (strcmp(month, MONTHS[i]) == 0)
            tm.tm_mon = i;
    if (tm.tm_mon < 0 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60 ||
        tm.tm_year < 1970)
        return false;
    tm.tm_year -= 1900;
    time_t t = timegm(&tm);
    if (t == (time_t)-1)
        return false;
    *ms = (int64_t)t * 1000;
    return true;
}
