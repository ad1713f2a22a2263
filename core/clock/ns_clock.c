#include "clock/ns_clock.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static atomic_bool simulated;
static atomic_int_fast64_t simulated_now_ms;

int64_t ns_clock_now_ms(void)
{
    if (atomic_load(&simulated))
        return atomic_load(&simulated_now_ms);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void ns_clock_sleep_ms(int64_t ms)
{
    if (ms <= 0)
        return;
    if (atomic_load(&simulated)) {
        atomic_fetch_add(&simulated_now_ms, ms);
        return;
    }
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

void ns_clock_use_simulated(int64_t start_ms)
{
    atomic_store(&simulated_now_ms, start_ms);
    atomic_store(&simulated, true);
}

void ns_clock_use_real(void)
{
    atomic_store(&simulated, false);
}

bool ns_clock_is_simulated(void)
{
    return atomic_load(&simulated);
}

void ns_clock_advance(int64_t ms)
{
    if (atomic_load(&simulated) && ms > 0)
        atomic_fetch_add(&simulated_now_ms, ms);
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
