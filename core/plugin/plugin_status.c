/*
 * A node class's status as a provider reports it (ABI 4, nodeclass_status): checked against provider.h's rules, then
 * completed with the root "Ready" condition, which the core derives from the provider's dependent conditions as
 * Karpenter's operatorpkg condition sets do.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "errors/ns_error.h"
#include "plugin/plugin_status.h"

#define REASON_MAX 1024
#define MESSAGE_MAX 32768

/* Kubernetes' condition reason: ^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$, at most 1024 characters. */
static bool valid_reason(const char *r)
{
    size_t n = strlen(r);
    if (n == 0 || n > REASON_MAX || !((r[0] >= 'A' && r[0] <= 'Z') || (r[0] >= 'a' && r[0] <= 'z')))
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = r[i];
        bool word = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
        if (!word && !((c == ',' || c == ':') && i + 1 < n))
            return false;
    }
    return true;
}

/* A condition type as Karpenter's providers name them: CamelCase letters and digits. */
static bool valid_type(const char *t)
{
    if (!(t[0] >= 'A' && t[0] <= 'Z') || strlen(t) > 316)
        return false;
    for (const char *c = t; *c; c++)
        if (!((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9')))
            return false;
    return true;
}

static const char *string_member(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int check_condition(const cJSON *cond, int i, const cJSON *conditions)
{
    if (!cJSON_IsObject(cond))
        return NS_FAIL(NS_ERR_INTERNAL, "status.conditions[%d] is not an object", i);
    const char *type = string_member(cond, "type"), *status = string_member(cond, "status");
    const char *reason = string_member(cond, "reason");
    const cJSON *message = cJSON_GetObjectItemCaseSensitive(cond, "message");
    if (!type || !valid_type(type))
        return NS_FAIL(NS_ERR_INTERNAL, "status.conditions[%d].type %s%s%s is not a CamelCase condition type", i,
                       type ? "\"" : "", type ? type : "is missing or not a string", type ? "\"" : "");
    if (strcmp(type, "Ready") == 0)
        return NS_FAIL(NS_ERR_INTERNAL, "status.conditions[%d] is \"Ready\", which the core derives from the "
                       "provider's conditions; report the dependent conditions only", i);
    for (int j = 0; j < i; j++) {
        const char *other = string_member(cJSON_GetArrayItem(conditions, j), "type");
        if (other && strcmp(other, type) == 0)
            return NS_FAIL(NS_ERR_INTERNAL, "status.conditions[%d]: condition type %s appears twice", i, type);
    }
    if (!status || (strcmp(status, "True") != 0 && strcmp(status, "False") != 0 && strcmp(status, "Unknown") != 0))
        return NS_FAIL(NS_ERR_INTERNAL, "status.conditions[%d] (%s): status must be \"True\", \"False\" or "
                       "\"Unknown\"", i, type);
    if (!reason || !valid_reason(reason))
        return NS_FAIL(NS_ERR_INTERNAL, "status.conditions[%d] (%s): reason %s%s%s must be 1 to %d characters of "
                       "[A-Za-z0-9_,:] starting with a letter", i, type, reason ? "\"" : "",
                       reason ? reason : "is missing or not a string", reason ? "\"" : "", REASON_MAX);
    if (message && (!cJSON_IsString(message) || strlen(message->valuestring) > MESSAGE_MAX))
        return NS_FAIL(NS_ERR_INTERNAL, "status.conditions[%d] (%s): message must be a string of at most %d "
                       "characters", i, type, MESSAGE_MAX);
    if (strcmp(status, "True") != 0 && (!message || !*message->valuestring))
        return NS_FAIL(NS_ERR_INTERNAL, "status.conditions[%d] (%s) is %s without a message saying why", i, type,
                       status);
    for (const cJSON *m = cond->child; m; m = m->next)
        if (strcmp(m->string, "type") != 0 && strcmp(m->string, "status") != 0 && strcmp(m->string, "reason") != 0 &&
            strcmp(m->string, "message") != 0)
            return NS_FAIL(NS_ERR_INTERNAL, "status.conditions[%d] (%s): unexpected field \"%s\" (the core sets "
                           "lastTransitionTime and observedGeneration; a provider gives type, status, reason and "
                           "message)", i, type, m->string);
    return NS_OK;
}

/* Ready: True when every dependent is True; else False when one is False, else Unknown; the message lists the
 * dependents that are not True ("SubnetsReady=False, AMIsReady=Unknown"). */
static int add_ready(cJSON *conditions)
{
    char message[1024] = "";
    size_t used = 0;
    bool any_false = false, all_true = true;
    const cJSON *c;
    cJSON_ArrayForEach(c, conditions)
    {
        const char *status = string_member(c, "status");
        if (strcmp(status, "True") == 0)
            continue;
        all_true = false;
        any_false = any_false || strcmp(status, "False") == 0;
        if (used < sizeof(message))
            used += (size_t)snprintf(message + used, sizeof(message) - used, "%s%s=%s", used ? ", " : "",
                                     string_member(c, "type"), status);
    }
    cJSON *ready = cJSON_CreateObject();
    if (!ready || !cJSON_AddStringToObject(ready, "type", "Ready") ||
        !cJSON_AddStringToObject(ready, "status", all_true ? "True" : any_false ? "False" : "Unknown") ||
        !cJSON_AddStringToObject(ready, "reason", all_true ? "Ready" : "UnhealthyDependents") ||
        !cJSON_AddStringToObject(ready, "message", message) || !cJSON_InsertItemInArray(conditions, 0, ready)) {
        cJSON_Delete(ready);
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory adding the Ready condition");
    }
    return NS_OK;
}

int ns_nodeclass_status_complete(cJSON *status)
{
    if (!cJSON_IsObject(status))
        return NS_FAIL(NS_ERR_INTERNAL, "the status is not a JSON object");
    cJSON *conditions = cJSON_GetObjectItemCaseSensitive(status, "conditions");
    if (!cJSON_IsArray(conditions) || cJSON_GetArraySize(conditions) == 0)
        return NS_FAIL(NS_ERR_INTERNAL, "status.conditions must be a non-empty array of the provider's conditions");
    int i = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, conditions)
    {
        int rc = check_condition(c, i++, conditions);
        if (rc != NS_OK)
            return rc;
    }
    return add_ready(conditions);
}

const char *ns_nodeclass_status_condition(const cJSON *status, const char *type, const char **reason,
                                          const char **message)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(status, "conditions"))
    {
        const char *t = string_member(c, "type");
        if (!t || strcmp(t, type) != 0)
            continue;
        if (reason)
            *reason = string_member(c, "reason");
        if (message)
            *message = string_member(c, "message");
        return string_member(c, "status");
    }
    return NULL;
}
