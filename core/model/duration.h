/*
 * Go-style durations as Kubernetes and Karpenter write them ("30s", "1h30m", "720h", "Never").
 */
#ifndef NS_DURATION_H
#define NS_DURATION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The value of a duration written "Never" (Karpenter's NillableDuration). */
#define NS_DURATION_NEVER INT64_C(-1)

/* Parses time.ParseDuration syntax (units ns us ms s m h, fractions allowed, "0" alone allowed) into milliseconds,
 * truncating below a millisecond. "Never" is accepted only when allow_never, giving NS_DURATION_NEVER. Negative
 * durations are rejected. Returns 0 or NS_ERR_INVALID_CONFIG with a message starting with `field` (when not NULL). */
int ns_duration_parse(const char *text, bool allow_never, const char *field, int64_t *out_ms);

/* "1h30m", "45s", "250ms", "0s" or "Never". Always NUL-terminates; returns buf. */
char *ns_duration_format(int64_t ms, char *buf, size_t len);

#endif
