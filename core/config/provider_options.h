/*
 * A provider's configured options: its declared table (ns_option) checked, then filled from its YAML config file
 * and from explicit settings, each value checked against its declared type (Fluent Bit's config maps). Unknown keys
 * and values of the wrong type are errors naming the file, the line and the key.
 */
#ifndef NS_PROVIDER_OPTIONS_H
#define NS_PROVIDER_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nodesmith/provider.h"

/* One option value given on the command line or by a test, applied over the config file. */
typedef struct ns_plugin_setting {
    const char *key;
    const char *value;
} ns_plugin_setting;

typedef struct ns_option_values ns_option_values;

/* Checks the table itself: keys present and unique, types known, defaults valid for their type. */
int ns_option_table_check(const char *provider, const ns_option *table);

/* Builds the values. config_path may be NULL (defaults and settings only). *out is the caller's; free with
 * ns_option_values_free. */
int ns_option_values_build(const char *provider, const ns_option *table, const char *config_path,
                           const ns_plugin_setting *settings, size_t n_settings, ns_option_values **out);
void ns_option_values_free(ns_option_values *values);

/* Look-ups for the host upcalls. An undeclared key yields NULL/0/false: a provider asking for an option it never
 * declared is a provider bug, and the host logs it. */
const char *ns_option_values_string(const ns_option_values *values, const char *key);
int64_t ns_option_values_int(const ns_option_values *values, const char *key);
bool ns_option_values_bool(const ns_option_values *values, const char *key);
int64_t ns_option_values_duration_ms(const ns_option_values *values, const char *key);
bool ns_option_values_declared(const ns_option_values *values, const char *key);

const char *ns_option_type_name(ns_option_type type);

#endif
