#include "config/provider_options.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/scalar_parse.h"
#include "config/yaml_flat_map.h"
#include "errors/ns_error.h"

typedef struct option_value {
    const ns_option *decl;
    char *text; /* NULL: unset with no default */
    int64_t number; /* INT and DURATION (ms) */
    bool flag;
} option_value;

struct ns_option_values {
    option_value *items;
    size_t n;
};

const char *ns_option_type_name(ns_option_type type)
{
    switch (type) {
    case NS_OPT_STRING: return "string";
    case NS_OPT_INT: return "integer";
    case NS_OPT_BOOL: return "boolean";
    case NS_OPT_DURATION: return "duration";
    default: return "unknown";
    }
}

/* Checks text against the option's type and stores the parsed form. Records no error: callers say where. */
static int parse_value(option_value *v, const char *text)
{
    int64_t number = 0;
    bool flag = false;
    switch (v->decl->type) {
    case NS_OPT_STRING: break;
    case NS_OPT_INT:
        if (ns_parse_int64(text, &number) != NS_OK)
            return NS_ERR_INVALID_CONFIG;
        break;
    case NS_OPT_BOOL:
        if (ns_parse_bool(text, &flag) != NS_OK)
            return NS_ERR_INVALID_CONFIG;
        break;
    case NS_OPT_DURATION:
        if (ns_parse_duration_ms(text, &number) != NS_OK)
            return NS_ERR_INVALID_CONFIG;
        break;
    default: return NS_ERR_INVALID_CONFIG;
    }
    char *copy = strdup(text);
    if (!copy)
        return NS_ERR_INTERNAL;
    free(v->text);
    v->text = copy;
    v->number = number;
    v->flag = flag;
    return NS_OK;
}

static const char *type_hint(ns_option_type type)
{
    switch (type) {
    case NS_OPT_INT: return "a whole number";
    case NS_OPT_BOOL: return "true or false";
    case NS_OPT_DURATION: return "a duration such as 30s, 5m or 1h30m";
    default: return "a string";
    }
}

int ns_option_table_check(const char *provider, const ns_option *table)
{
    for (size_t i = 0; table && table[i].key; i++) {
        const ns_option *o = &table[i];
        if (!*o->key)
            return NS_FAIL(NS_ERR_INVALID_CONFIG, "provider %s: option table entry %zu has an empty key", provider, i);
        if (o->type < NS_OPT_STRING || o->type > NS_OPT_DURATION)
            return NS_FAIL(NS_ERR_INVALID_CONFIG, "provider %s: option '%s' has unknown type %d", provider, o->key,
                           (int)o->type);
        for (size_t j = 0; j < i; j++) {
            if (strcmp(table[j].key, o->key) == 0)
                return NS_FAIL(NS_ERR_INVALID_CONFIG, "provider %s: option '%s' is declared twice", provider, o->key);
        }
        if (o->default_value) {
            option_value probe = {.decl = o};
            int rc = parse_value(&probe, o->default_value);
            free(probe.text);
            if (rc != NS_OK)
                return NS_FAIL(NS_ERR_INVALID_CONFIG, "provider %s: option '%s' has default '%s', which is not %s",
                               provider, o->key, o->default_value, type_hint(o->type));
        }
    }
    return NS_OK;
}

static option_value *find(const ns_option_values *values, const char *key)
{
    for (size_t i = 0; values && key && i < values->n; i++) {
        if (strcmp(values->items[i].decl->key, key) == 0)
            return &values->items[i];
    }
    return NULL;
}

static void known_keys(const ns_option *table, char *buf, size_t len)
{
    size_t used = 0;
    snprintf(buf, len, "none");
    for (size_t i = 0; table && table[i].key && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", table[i].key);
}

static int apply(ns_option_values *values, const char *provider, const ns_option *table, const char *where,
                 const char *key, const char *text)
{
    option_value *v = find(values, key);
    if (!v) {
        char known[1024];
        known_keys(table, known, sizeof(known));
        char quoted[NS_EXCERPT_BUF];
        return NS_FAIL(NS_ERR_INVALID_CONFIG, "%s: unknown option '%s' for provider %s (known options: %s)", where,
                       ns_error_excerpt(key, quoted, sizeof(quoted)), provider, known);
    }
    int rc = parse_value(v, text);
    if (rc == NS_ERR_INTERNAL)
        return NS_FAIL(rc, "%s: out of memory", where);
    if (rc == NS_OK)
        return NS_OK;
    char quoted[NS_EXCERPT_BUF];
    ns_error_excerpt(text, quoted, sizeof(quoted));
    if (v->decl->type == NS_OPT_DURATION) { /* the duration parser recorded why */
        ns_error_prefix("%s: option '%s' of provider %s: ", where, key, provider);
        return NS_ERR_INVALID_CONFIG;
    }
    return NS_FAIL(rc, "%s: option '%s' of provider %s is '%s', which is not %s", where, key, provider, quoted,
                   type_hint(v->decl->type));
}

int ns_option_values_build(const char *provider, const ns_option *table, const char *config_path,
                           const ns_plugin_setting *settings, size_t n_settings, ns_option_values **out)
{
    int rc = NS_OK;
    ns_flat_map file = {0};
    ns_option_values *values = calloc(1, sizeof(*values));
    *out = NULL;
    if (!values)
        return NS_FAIL(NS_ERR_INTERNAL, "provider %s: out of memory", provider);
    size_t n = 0;
    while (table && table[n].key)
        n++;
    values->items = calloc(n ? n : 1, sizeof(option_value));
    if (!values->items) {
        rc = NS_FAIL(NS_ERR_INTERNAL, "provider %s: out of memory", provider);
        goto cleanup;
    }
    values->n = n;
    for (size_t i = 0; i < n; i++) {
        values->items[i].decl = &table[i];
        if (table[i].default_value && parse_value(&values->items[i], table[i].default_value) != NS_OK) {
            rc = NS_FAIL(NS_ERR_INVALID_CONFIG, "provider %s: bad default for option '%s'", provider, table[i].key);
            goto cleanup;
        }
    }
    if (config_path) {
        rc = ns_flat_map_read(config_path, &file);
        if (rc != NS_OK)
            goto cleanup;
        for (size_t i = 0; i < file.n; i++) {
            char where[1100];
            snprintf(where, sizeof(where), "%s:%d", config_path, file.entries[i].line);
            rc = apply(values, provider, table, where, file.entries[i].key, file.entries[i].value);
            if (rc != NS_OK)
                goto cleanup;
        }
    }
    for (size_t i = 0; i < n_settings; i++) {
        if (!settings[i].key || !settings[i].value) {
            rc = NS_FAIL(NS_ERR_INVALID_ARGUMENT, "provider %s: setting %zu has no key or no value", provider, i);
            goto cleanup;
        }
        rc = apply(values, provider, table, "setting", settings[i].key, settings[i].value);
        if (rc != NS_OK)
            goto cleanup;
    }
    *out = values;
    values = NULL;
cleanup:
    ns_flat_map_free(&file);
    ns_option_values_free(values);
    return rc;
}

void ns_option_values_free(ns_option_values *values)
{
    if (!values)
        return;
    for (size_t i = 0; i < values->n; i++)
        free(values->items[i].text);
    free(values->items);
    free(values);
}

bool ns_option_values_declared(const ns_option_values *values, const char *key)
{
    return find(values, key) != NULL;
}

const char *ns_option_values_string(const ns_option_values *values, const char *key)
{
    option_value *v = find(values, key);
    return v ? v->text : NULL;
}

int64_t ns_option_values_int(const ns_option_values *values, const char *key)
{
    option_value *v = find(values, key);
    return v && v->decl->type == NS_OPT_INT ? v->number : 0;
}

bool ns_option_values_bool(const ns_option_values *values, const char *key)
{
    option_value *v = find(values, key);
    return v && v->decl->type == NS_OPT_BOOL && v->flag;
}

int64_t ns_option_values_duration_ms(const ns_option_values *values, const char *key)
{
    option_value *v = find(values, key);
    return v && v->decl->type == NS_OPT_DURATION ? v->number : 0;
}
