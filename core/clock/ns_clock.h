/*
 * The clock every component reads: the clock of the calling thread's current context (context/ns_ctx.h), so each
 * engine reads its own. Real time by default; simulations and tests switch it to a simulated clock that only moves
 * when told to (ns_clock_advance) or when someone sleeps on it.
 */
#ifndef NS_CLOCK_H
#define NS_CLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

int64_t ns_clock_now_ms(void);             /* unix epoch milliseconds */
void ns_clock_sleep_ms(int64_t ms);        /* real sleep, or advance the simulated clock */
void ns_clock_use_simulated(int64_t start_ms);
void ns_clock_use_real(void);
bool ns_clock_is_simulated(void);
void ns_clock_advance(int64_t ms);         /* simulated clock only; ignored on the real one */
/* RFC 3339 with milliseconds, UTC: "2026-11-21T10:00:00.000Z". buf needs 32 bytes. */
void ns_clock_format_rfc3339(int64_t ms, char *buf, size_t len);
/* RFC 3339 in UTC or with an offset, seconds precision or finer ("2026-01-05T09:00:00Z", "...T10:00:00.5+01:00")
 * into unix ms: 0, or -1 when malformed (the caller names the field). */
int ns_clock_parse_rfc3339(const char *s, int64_t *out_ms);

#endif
