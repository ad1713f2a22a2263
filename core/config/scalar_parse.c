#include "config/scalar_parse.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "errors/ns_error.h"
#include "model/checked.h"
#include "model/duration.h"
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
    int64_t seconds, ms;
    if (ns_parse_int64(text, &seconds) == NS_OK) {
        if (seconds < 0) {
            NS_FAIL(NS_ERR_INVALID_CONFIG, "invalid duration \"%s\": negative durations are not allowed", text);
            return NS_ERR_INVALID_ARGUMENT;
        }
        if (!ns_checked_mul(seconds, 1000, &ms) || ms > NS_DURATION_MAX_MS) {
            NS_FAIL(NS_ERR_INVALID_CONFIG,
                    "invalid duration \"%s\": %s seconds is longer than Go's largest duration, "
                    "2562047h47m16.854775807s",
                    text, text);
            return NS_ERR_INVALID_ARGUMENT;
        }
        *out = ms;
        return NS_OK;
    }
    if (ns_duration_parse(text, false, NULL, &ms) < 0)
        return NS_ERR_INVALID_ARGUMENT;
    *out = ms;
    return NS_OK;
}
