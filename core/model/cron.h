/*
 * Cron schedules of disruption budgets, read the way Karpenter reads them: robfig/cron's standard parser with the
 * schedule in UTC ("TZ=UTC " is prepended by Karpenter, so a schedule of its own "TZ=" is an error).
 *
 * Syntax: five fields separated by blanks, minute (0-59) hour (0-23) day-of-month (1-31) month (1-12 or JAN-DEC)
 * day-of-week (0-6 or SUN-SAT, Sunday = 0; 7 is out of range as in robfig/cron), each a comma list of "*", "?", "N",
 * "A-B", any of those with "/STEP", or "N/STEP" (meaning N-max/STEP). Names are three letters, case-insensitive. Or
 * one of the macros @yearly @annually (0 0 1 1 *), @monthly (0 0 1 * *), @weekly (0 0 * * 0), @daily @midnight
 * (0 0 * * *), @hourly (0 * * * *); @every is not accepted (Karpenter's validation rejects it).
 *
 * Day matching follows robfig/cron: when the day-of-month or the day-of-week field is "*" or "?" (possibly with
 * "/1"), a day must match both fields; otherwise it matches when either field does ("0 0 1 * MON" fires on the 1st
 * and on every Monday). "*" followed by a step greater than 1 is not a star for this rule.
 *
 * Where nodesmith differs on purpose: a schedule that can never fire ("0 0 30 2 *") is rejected at parse time.
 * robfig/cron returns the zero time for it and Karpenter then treats the budget as always active.
 *
 * Times are Unix epoch milliseconds, UTC. Hits fall on whole minutes.
 */
#ifndef NS_CRON_H
#define NS_CRON_H

#include <stdbool.h>
#include <stdint.h>

typedef struct ns_cron {
    uint64_t minutes; /* bit m: minute m */
    uint32_t hours;   /* bit h: hour h */
    uint32_t days;    /* bit d: day of month d (1..31) */
    uint16_t months;  /* bit m: month m (1..12) */
    uint8_t weekdays; /* bit w: weekday w (0 = Sunday) */
    bool days_star;     /* the day-of-month field was "*" or "?" */
    bool weekdays_star; /* the day-of-week field was "*" or "?" */
} ns_cron;

/* Parses a schedule into *out (overwritten). 0, or NS_ERR_INVALID_CONFIG with a message naming the schedule, the
 * field and the reason: `schedule "0 25 * * *": hour field "25": 25 is above the maximum 23`. */
int ns_cron_parse(const char *schedule, ns_cron *out);

/* True when the schedule fires at the start of the minute holding t_ms. */
bool ns_cron_matches(const ns_cron *c, int64_t t_ms);

/* The latest hit at or before t_ms and not before not_before_ms: true with *hit_ms set, or false when there is none
 * in that interval. The search is linear in the number of days between the two times. */
bool ns_cron_prev(const ns_cron *c, int64_t t_ms, int64_t not_before_ms, int64_t *hit_ms);
/* The earliest hit strictly after after_ms and not after not_after_ms (robfig/cron's Next): true with *hit_ms set, or
 * false when there is none in that interval. */
bool ns_cron_next(const ns_cron *c, int64_t after_ms, int64_t not_after_ms, int64_t *hit_ms);

/* Karpenter's Budget.IsActive: with a schedule, active when a hit lies in (now - duration, now], that is when the most
 * recent hit at or before now is less than `duration_ms` ago; a hit exactly `duration_ms` ago no longer counts (the
 * window is closed at its end, as robfig's Next returns hits strictly after its argument). A NULL schedule is always
 * active. 0 or the parse error. */
int ns_cron_active(const char *schedule, int64_t duration_ms, int64_t now_ms, bool *active);

/* Calendar helpers on UTC epoch milliseconds (used by the budget tests and timeline steps). */
int64_t ns_cron_utc_ms(int year, int month, int day, int hour, int minute); /* month 1..12, day 1..31 */

#endif
