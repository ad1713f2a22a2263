/* A node class and the status its provider resolves for it (provider ABI 4), as `offerings` and `simulate` show it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli/cli.h"
#include "errors/ns_error.h"
#include "plugin/plugin_status.h"

int cli_nodeclass_json(ns_plugin *plugin, const ns_nodeclass *nc, cJSON **out)
{
    cJSON *status = NULL;
    *out = NULL;
    int rc = ns_plugin_nodeclass_status(plugin, nc, &status);
    if (rc != NS_OK && rc != NS_ERR_UNSUPPORTED)
        return rc;
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddStringToObject(o, "apiVersion", nc->api_version) ||
        !cJSON_AddStringToObject(o, "kind", nc->kind) || !cJSON_AddStringToObject(o, "name", nc->name) ||
        (status && !cJSON_AddItemToObject(o, "status", status))) {
        cJSON_Delete(o);
        cJSON_Delete(status);
        return NS_FAIL(NS_ERR_INTERNAL, "node class %s: out of memory describing its status", nc->name);
    }
    if (!status) /* the provider reports none: say so rather than show an empty status */
        cJSON_AddStringToObject(o, "statusUnsupported", ns_error_message());
    *out = o;
    return NS_OK;
}

void cli_nodeclass_text(FILE *f, const cJSON *nc)
{
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(nc, "status");
    const char *kind = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(nc, "kind"));
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(nc, "name"));
    if (!status) {
        fprintf(f, "node class %s %s: no status (%s)\n", kind, name,
                cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(nc, "statusUnsupported")));
        return;
    }
    const char *reason = NULL;
    const char *ready = ns_nodeclass_status_condition(status, "Ready", &reason, NULL);
    fprintf(f, "node class %s %s: Ready=%s (%s)\n", kind, name, ready, reason);
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(status, "conditions"))
    {
        const char *message = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "message"));
        fprintf(f, "  %-24s %-8s %-24s %s\n", cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "type")),
                cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "status")),
                cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "reason")), message ? message : "");
    }
    for (const cJSON *m = status->child; m; m = m->next) {
        if (strcmp(m->string, "conditions") == 0)
            continue;
        char *text = cJSON_PrintUnformatted(m);
        fprintf(f, "  %s: %s\n", m->string, text ? text : "(out of memory)");
        cJSON_free(text);
    }
}
