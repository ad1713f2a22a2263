#include "clock/ns_clock.h"

#include <stdatomic.h>
#include <stdio.h>
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
