/*
 * Log lines with typed fields for the providers (compiled into each provider .so, providers/common): counts as JSON
 * numbers and flags as JSON booleans, as Karpenter's zap lines have them. Through ABI 7's host->log_typed when the
 * host has it (NS_HAS_FIELD), otherwise through ABI 1's log with each value printed as a string, so a provider runs
 * on an older core with the same calls.
 */
#ifndef NS_PROV_LOG_H
#define NS_PROV_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nodesmith/provider.h>

/* The most fields one line carries; more are left out of the older core's line (log_typed takes them all). */
#define PROV_LOG_MAX_FIELDS 16

void prov_log(const ns_host *host, ns_host_ctx *ctx, ns_log_level level, const char *message,
              const ns_log_field *fields, size_t n_fields);

static inline ns_log_field prov_log_str(const char *key, const char *value)
{
    return (ns_log_field){.key = key, .type = NS_LOG_FIELD_STRING, .value.string = value};
}

static inline ns_log_field prov_log_int(const char *key, int64_t value)
{
    return (ns_log_field){.key = key, .type = NS_LOG_FIELD_INT, .value.integer = value};
}

static inline ns_log_field prov_log_bool(const char *key, bool value)
{
    return (ns_log_field){.key = key, .type = NS_LOG_FIELD_BOOL, .value.boolean = value};
}

#endif
