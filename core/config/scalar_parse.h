/*
 * Parsing of the scalar option types shared by provider options and the core's own flags.
 */
#ifndef NS_SCALAR_PARSE_H
#define NS_SCALAR_PARSE_H

#include <stdbool.h>
#include <stdint.h>

/* Go-style durations as Karpenter writes them: "300ms", "30s", "5m", "1h30m", "720h" (model/duration.h's parser);
 * a bare integer is seconds. At most Go's largest duration. Returns 0 or NS_ERR_INVALID_ARGUMENT with the reason
 * recorded ("invalid duration ...: why"), which the caller wraps with the option's name. */
int ns_parse_duration_ms(const char *text, int64_t *out);
/* "true"/"false" (also YAML's yes/no/on/off, any case). */
int ns_parse_bool(const char *text, bool *out);
/* A whole decimal integer, optionally signed, that fits int64_t. */
int ns_parse_int64(const char *text, int64_t *out);

#endif
