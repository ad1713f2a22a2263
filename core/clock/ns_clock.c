/* The clock of the calling thread's current context (context/ns_ctx.h). */
#include "clock/ns_clock.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "context/ns_ctx.h"

int64_t ns_clock_now_ms(void)
{
    return ns_ctx_now_ms(ns_ctx_current());
}

void ns_clock_sleep_ms(int64_t ms)
{
    ns_ctx_sleep_ms(ns_ctx_current(), ms);
}

void ns_clock_use_simulated(int64_t start_ms)
{
    ns_ctx_use_simulated_clock(ns_ctx_current(), start_ms);
}

void ns_clock_use_real(void)
{
    ns_ctx_use_real_clock(ns_ctx_current());
}

bool ns_clock_is_simulated(void)
{
    return ns_ctx_clock_is_simulated(ns_ctx_current());
}

void ns_clock_advance(int64_t ms)
{
    ns_ctx_advance(ns_ctx_current(), ms);
}

void ns_clock_format_rfc3339(int64_t ms, char *buf, size_t len)
{
    time_t secs = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
             tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ms % 1000));
}

int ns_clock_parse_rfc3339(const char *s, int64_t *out_ms)
{
    struct tm tm = {0};
    int consumed = 0;
    if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
               &tm.tm_sec, &consumed) != 6 || consumed != 19)
        return -1;
    if (tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 ||
        tm.tm_sec > 60 || tm.tm_year < 1970)
        return -1;
    const char *p = s + consumed;
    int64_t ms = 0;
    if (*p == '.') {
        int64_t scale = 100;
        for (p++; *p >= '0' && *p <= '9'; p++, scale /= 10)
            ms += (*p - '0') * scale;
        if (p[-1] == '.')
            return -1;
    }
    int64_t offset_s = 0;
    if ((*p == '+' || *p == '-') && strlen(p) == 6 && p[3] == ':') {
        int h = 0, m = 0, n = 0;
        if (sscanf(p + 1, "%2d:%2d%n", &h, &m, &n) != 2 || n != 5 || h > 23 || m > 59)
            return -1;
        offset_s = (*p == '-' ? -1 : 1) * (h * 3600 + m * 60);
    } else if (strcmp(p, "Z") != 0 && strcmp(p, "z") != 0) {
        return -1;
    }
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    *out_ms = ((int64_t)timegm(&tm) - offset_s) * 1000 + ms;
    return 0;
}
