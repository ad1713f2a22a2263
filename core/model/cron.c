/* Parsing and evaluating budget cron schedules (see cron.h for the semantics). */
#include "model/cron.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "errors/ns_error.h"

#define MS_PER_MINUTE INT64_C(60000)
#define MINUTES_PER_DAY 1440

typedef struct cron_field {
    const char *name;
    unsigned min, max;
    const char *const *names; /* three-letter names for min, min+1, ...; NULL when the field has none */
} cron_field;

static const char *const month_names[] = {"jan", "feb", "mar", "apr", "may", "jun",
                                          "jul", "aug", "sep", "oct", "nov", "dec", NULL};
static const char *const weekday_names[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat", NULL};

enum { F_MINUTE, F_HOUR, F_DAY, F_MONTH, F_WEEKDAY, N_FIELDS };

static const cron_field fields[N_FIELDS] = {
    {"minute", 0, 59, NULL},
    {"hour", 0, 23, NULL},
    {"day-of-month", 1, 31, NULL},
    {"month", 1, 12, month_names},
    {"day-of-week", 0, 6, weekday_names},
};

static const struct {
    const char *name;
    const char *expansion;
} macros[] = {
    {"@yearly", "0 0 1 1 *"},  {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"}, {"@weekly", "0 0 * * 0"},
    {"@daily", "0 0 * * *"},   {"@midnight", "0 0 * * *"}, {"@hourly", "0 * * * *"},
};

/* ---- calendar (proleptic Gregorian, UTC) ---- */

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* Days since 1970-01-01 of a civil date, by counting 400-year eras from 0000-03-01 (so February ends each year). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = floor_div(y, 400);
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
    z += 719468;
    int64_t era = floor_div(z, 146097);
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

int64_t ns_cron_utc_ms(int year, int month, int day, int hour, int minute)
{
    return (days_from_civil(year, month, day) * MINUTES_PER_DAY + hour * 60 + minute) * MS_PER_MINUTE;
}

static bool day_matches(const ns_cron *c, int64_t day)
{
    int64_t y;
    int m, d;
    civil_from_days(day, &y, &m, &d);
    if (!(c->months & (1u << m)))
        return false;
    int weekday = (int)((day % 7 + 7 + 4) % 7); /* 1970-01-01 was a Thursday */
    bool dom = c->days & (1u << d), dow = c->weekdays & (1u << weekday);
    return (c->days_star || c->weekdays_star) ? dom && dow : dom || dow;
}

bool ns_cron_matches(const ns_cron *c, int64_t t_ms)
{
    int64_t minute = floor_div(t_ms, MS_PER_MINUTE);
    int64_t day = floor_div(minute, MINUTES_PER_DAY);
    int of_day = (int)(minute - day * MINUTES_PER_DAY);
    return day_matches(c, day) && (c->hours & (1u << (of_day / 60))) && (c->minutes & (UINT64_C(1) << (of_day % 60)));
}

/* The latest minute of the day at or before `from` (minute of the day) that fires, or -1. */
static int last_minute_of_day(const ns_cron *c, int from)
{
    for (int m = from; m >= 0; m--)
        if ((c->hours & (1u << (m / 60))) && (c->minutes & (UINT64_C(1) << (m % 60))))
            return m;
    return -1;
}

static int first_minute_of_day(const ns_cron *c, int from)
{
    for (int m = from; m < MINUTES_PER_DAY; m++)
        if ((c->hours & (1u << (m / 60))) && (c->minutes & (UINT64_C(1) << (m % 60))))
            return m;
    return -1;
}

bool ns_cron_prev(const ns_cron *c, int64_t t_ms, int64_t not_before_ms, int64_t *hit_ms)
{
    if (t_ms < not_before_ms)
        return false;
    int64_t minute = floor_div(t_ms, MS_PER_MINUTE);
    int64_t day = floor_div(minute, MINUTES_PER_DAY);
    int64_t first_day = floor_div(floor_div(not_before_ms, MS_PER_MINUTE), MINUTES_PER_DAY);
    int from = (int)(minute - day * MINUTES_PER_DAY);
    for (; day >= first_day; day--, from = MINUTES_PER_DAY - 1) {
        int m = day_matches(c, day) ? last_minute_of_day(c, from) : -1;
        if (m < 0)
            continue;
        int64_t hit = (day * MINUTES_PER_DAY + m) * MS_PER_MINUTE;
        if (hit < not_before_ms)
            return false;
        *hit_ms = hit;
        return true;
    }
    return false;
}

bool ns_cron_next(const ns_cron *c, int64_t after_ms, int64_t not_after_ms, int64_t *hit_ms)
{
    int64_t minute = floor_div(after_ms, MS_PER_MINUTE) + 1;
    int64_t day = floor_div(minute, MINUTES_PER_DAY);
    int64_t last_day = floor_div(floor_div(not_after_ms, MS_PER_MINUTE), MINUTES_PER_DAY);
    int from = (int)(minute - day * MINUTES_PER_DAY);
    for (; day <= last_day; day++, from = 0) {
        int m = day_matches(c, day) ? first_minute_of_day(c, from) : -1;
        if (m < 0)
            continue;
        int64_t hit = (day * MINUTES_PER_DAY + m) * MS_PER_MINUTE;
        if (hit > not_after_ms)
            return false;
        *hit_ms = hit;
        return true;
    }
    return false;
}

/* ---- parsing ---- */

typedef struct parse_ctx {
    const char *schedule;
    const cron_field *field;
    const char *text; /* the whole field as written */
} parse_ctx;

#define PARSE_FAIL(pc, ...) parse_fail((pc), __FILE__, __LINE__, __VA_ARGS__)

static int parse_fail(const parse_ctx *pc, const char *file, int line, const char *fmt, ...) NS_PRINTF(4, 5);
static int parse_fail(const parse_ctx *pc, const char *file, int line, const char *fmt, ...)
{
    char why[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    return ns_error_set(NS_ERR_INVALID_CONFIG, file, line, "schedule \"%s\": %s field \"%s\": %s", pc->schedule,
                        pc->field->name, pc->text, why);
}

/* A number or (in fields that have them) a three-letter name, spanning [s, end). */
static int parse_value(const parse_ctx *pc, const char *s, const char *end, unsigned *out)
{
    size_t len = (size_t)(end - s);
    if (len == 0)
        return PARSE_FAIL(pc, "a value is missing");
    if (pc->field->names && len == 3 && isalpha((unsigned char)s[0])) {
        for (unsigned i = 0; pc->field->names[i]; i++) {
            const char *n = pc->field->names[i];
            if (tolower((unsigned char)s[0]) == n[0] && tolower((unsigned char)s[1]) == n[1] &&
                tolower((unsigned char)s[2]) == n[2]) {
                *out = pc->field->min + i;
                return 0;
            }
        }
    }
    unsigned v = 0;
    for (const char *p = s; p < end; p++) {
        if (!isdigit((unsigned char)*p))
            return PARSE_FAIL(pc, "\"%.*s\" is not a number%s", (int)len, s,
                              pc->field->names ? " or a three-letter name" : "");
        if (v > 100000)
            return PARSE_FAIL(pc, "\"%.*s\" is too large", (int)len, s);
        v = v * 10 + (unsigned)(*p - '0');
    }
    *out = v;
    return 0;
}

/* One comma-separated item: OR its values into *bits; *star is set for "*" or "?" without a step above 1. */
static int parse_item(const parse_ctx *pc, const char *s, const char *end, uint64_t *bits, bool *star)
{
    const cron_field *f = pc->field;
    const char *slash = memchr(s, '/', (size_t)(end - s));
    const char *range_end = slash ? slash : end;
    unsigned start, stop, step = 1;
    bool is_star = range_end - s == 1 && (*s == '*' || *s == '?');
    int rc;
    if (slash && memchr(slash + 1, '/', (size_t)(end - slash - 1)))
        return PARSE_FAIL(pc, "too many slashes");
    if (is_star) {
        start = f->min;
        stop = f->max;
    } else {
        const char *dash = memchr(s, '-', (size_t)(range_end - s));
        if (dash && memchr(dash + 1, '-', (size_t)(range_end - dash - 1)))
            return PARSE_FAIL(pc, "too many hyphens");
        if ((rc = parse_value(pc, s, dash ? dash : range_end, &start)) < 0)
            return rc;
        stop = start;
        if (dash && (rc = parse_value(pc, dash + 1, range_end, &stop)) < 0)
            return rc;
        if (slash && !dash)
            stop = f->max; /* "N/STEP" runs from N to the maximum */
    }
    if (slash) {
        if ((rc = parse_value(pc, slash + 1, end, &step)) < 0)
            return rc;
        if (step == 0)
            return PARSE_FAIL(pc, "the step must be a positive number");
    }
    if (start < f->min)
        return PARSE_FAIL(pc, "%u is below the minimum %u", start, f->min);
    if (stop > f->max)
        return PARSE_FAIL(pc, "%u is above the maximum %u", stop, f->max);
    if (start > stop)
        return PARSE_FAIL(pc, "the range starts at %u, after its end %u", start, stop);
    for (unsigned v = start; v <= stop; v += step)
        *bits |= UINT64_C(1) << v;
    if (is_star && step == 1)
        *star = true;
    return 0;
}

static int parse_field(const parse_ctx *pc, uint64_t *bits, bool *star)
{
    *bits = 0;
    *star = false;
    const char *s = pc->text;
    for (;;) {
        const char *comma = strchr(s, ',');
        const char *end = comma ? comma : s + strlen(s);
        int rc = parse_item(pc, s, end, bits, star);
        if (rc < 0)
            return rc;
        if (!comma)
            return 0;
        s = comma + 1;
    }
}

static int days_in_month(int m)
{
    static const int days[] = {0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}; /* February in a leap year */
    return days[m];
}

/* Rejects day-of-month and month combinations that never occur when the day-of-week field cannot help. */
static int check_fires(const char *schedule, const char *day_text, const ns_cron *c)
{
    if (!c->weekdays_star || c->days_star)
        return 0; /* the day-of-week field can fire on its own, or every day is allowed */
    for (int m = 1; m <= 12; m++) {
        if (!(c->months & (1u << m)))
            continue;
        for (int d = 1; d <= days_in_month(m); d++)
            if (c->days & (1u << d))
                return 0;
    }
    return NS_FAIL(NS_ERR_INVALID_CONFIG,
                   "schedule \"%s\": day-of-month field \"%s\": no month the schedule allows has such a day, so it "
                   "never fires",
                   schedule, day_text);
}

int ns_cron_parse(const char *schedule, ns_cron *out)
{
    memset(out, 0, sizeof(*out));
    if (!schedule)
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "no cron schedule given");
    const char *expr = schedule;
    while (isspace((unsigned char)*expr))
        expr++;
    if (*expr == '\0')
        return NS_FAIL(NS_ERR_INVALID_CONFIG, "schedule \"%s\" is empty", schedule);
    if (*expr == '@') {
        size_t len = strlen(expr);
        while (len && isspace((unsigned char)expr[len - 1]))
            len--;
        const char *expansion = NULL;
        for (size_t i = 0; i < sizeof(macros) / sizeof(macros[0]) && !expansion; i++)
            if (strlen(macros[i].name) == len && strncmp(expr, macros[i].name, len) == 0)
                expansion = macros[i].expansion;
        if (!expansion)
            return NS_FAIL(NS_ERR_INVALID_CONFIG,
                           "schedule \"%s\": unknown macro (expected @yearly, @annually, @monthly, @weekly, @daily, "
                           "@midnight or @hourly)",
                           schedule);
        expr = expansion;
    }

    char buf[N_FIELDS][128];
    int n = 0;
    for (const char *p = expr; *p;) {
        while (isspace((unsigned char)*p))
            p++;
        if (!*p)
            break;
        const char *start = p;
        while (*p && !isspace((unsigned char)*p))
            p++;
        if (n < N_FIELDS) {
            size_t len = (size_t)(p - start);
            if (len >= sizeof(buf[n]))
                return NS_FAIL(NS_ERR_INVALID_CONFIG, "schedule \"%s\": %s field is too long", schedule,
                               fields[n].name);
            memcpy(buf[n], start, len);
            buf[n][len] = '\0';
        }
        n++;
    }
    if (n != N_FIELDS)
        return NS_FAIL(NS_ERR_INVALID_CONFIG,
                       "schedule \"%s\": expected exactly 5 fields (minute hour day-of-month month day-of-week), "
                       "found %d",
                       schedule, n);

    uint64_t bits[N_FIELDS];
    bool star[N_FIELDS];
    for (int i = 0; i < N_FIELDS; i++) {
        parse_ctx pc = {schedule, &fields[i], buf[i]};
        int rc = parse_field(&pc, &bits[i], &star[i]);
        if (rc < 0)
            return rc;
    }
    out->minutes = bits[F_MINUTE];
    out->hours = (uint32_t)bits[F_HOUR];
    out->days = (uint32_t)bits[F_DAY];
    out->months = (uint16_t)bits[F_MONTH];
    out->weekdays = (uint8_t)bits[F_WEEKDAY];
    out->days_star = star[F_DAY];
    out->weekdays_star = star[F_WEEKDAY];
    int rc = check_fires(schedule, buf[F_DAY], out);
    if (rc < 0)
        memset(out, 0, sizeof(*out));
    return rc;
}

int ns_cron_active(const char *schedule, int64_t duration_ms, int64_t now_ms, bool *active)
{
    *active = true;
    if (!schedule)
        return 0;
    ns_cron c;
    int rc = ns_cron_parse(schedule, &c);
    if (rc < 0)
        return rc;
    int64_t hit;
    *active = duration_ms > 0 && ns_cron_prev(&c, now_ms, now_ms - duration_ms + 1, &hit);
    return 0;
}
