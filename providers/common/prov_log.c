#include "prov_log.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

/* An older core's line: each value as the text log_typed would write for it (a JSON value printed compact). */
static void log_as_strings(const ns_host *host, ns_host_ctx *ctx, ns_log_level level, const char *message,
                           const ns_log_field *fields, size_t n_fields)
{
    ns_label labels[PROV_LOG_MAX_FIELDS] = {{0}};
    char text[PROV_LOG_MAX_FIELDS][32];
    char *printed[PROV_LOG_MAX_FIELDS] = {0};
    size_t n = n_fields < PROV_LOG_MAX_FIELDS ? n_fields : PROV_LOG_MAX_FIELDS;
    for (size_t i = 0; i < n; i++) {
        const ns_log_field *f = &fields[i];
        const char *value = text[i];
        switch (f->type) {
        case NS_LOG_FIELD_STRING:
            value = f->value.string ? f->value.string : "";
            break;
        case NS_LOG_FIELD_INT:
            snprintf(text[i], sizeof(text[i]), "%" PRId64, f->value.integer);
            break;
        case NS_LOG_FIELD_NUMBER:
            /* The shortest of 15 or 17 digits that reads back as the value, as the host's JSON writer prints it. */
            snprintf(text[i], sizeof(text[i]), "%.15g", f->value.number);
            if (strtod(text[i], NULL) != f->value.number)
                snprintf(text[i], sizeof(text[i]), "%.17g", f->value.number);
            break;
        case NS_LOG_FIELD_BOOL:
            value = f->value.boolean ? "true" : "false";
            break;
        case NS_LOG_FIELD_JSON:
            printed[i] = f->value.json ? host->json_print(f->value.json) : NULL;
            value = printed[i] ? printed[i] : "null";
            break;
        default:
            value = "null";
            break;
        }
        labels[i] = (ns_label){f->key, value};
    }
    host->log(ctx, level, message, labels, n);
    for (size_t i = 0; i < n; i++)
        host->free(printed[i]);
}

void prov_log(const ns_host *host, ns_host_ctx *ctx, ns_log_level level, const char *message,
              const ns_log_field *fields, size_t n_fields)
{
    if (NS_HAS_FIELD(host, ns_host, log_typed) && host->log_typed)
        host->log_typed(ctx, level, message, fields, n_fields);
    else
        log_as_strings(host, ctx, level, message, fields, n_fields);
}
