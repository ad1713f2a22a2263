#include "json/host_json.h"

#include <stdlib.h>

#define AS_C(v) ((const cJSON *)(v))
#define AS_M(v) ((cJSON *)(v))

ns_json *ns_host_json_parse(const char *text, size_t len)
{
    if (!text)
        return NULL;
    return (ns_json *)cJSON_ParseWithLength(text, len);
}

char *ns_host_json_print(const ns_json *value)
{
    return value ? cJSON_PrintUnformatted(AS_C(value)) : NULL;
}

void ns_host_json_free(ns_json *value)
{
    cJSON_Delete(AS_M(value));
}

ns_json_type ns_host_json_type(const ns_json *value)
{
    const cJSON *c = AS_C(value);
    if (!c || cJSON_IsInvalid(c))
        return NS_JSON_INVALID;
    if (cJSON_IsNull(c))
        return NS_JSON_NULL;
    if (cJSON_IsBool(c))
        return NS_JSON_BOOL;
    if (cJSON_IsNumber(c))
        return NS_JSON_NUMBER;
    if (cJSON_IsString(c))
        return NS_JSON_STRING;
    if (cJSON_IsArray(c))
        return NS_JSON_ARRAY;
    if (cJSON_IsObject(c))
        return NS_JSON_OBJECT;
    return NS_JSON_INVALID;
}

const ns_json *ns_host_json_get(const ns_json *object, const char *key)
{
    if (!cJSON_IsObject(AS_C(object)) || !key)
        return NULL;
    return (const ns_json *)cJSON_GetObjectItemCaseSensitive(AS_C(object), key);
}

size_t ns_host_json_size(const ns_json *container)
{
    const cJSON *c = AS_C(container);
    if (!cJSON_IsArray(c) && !cJSON_IsObject(c))
        return 0;
    return (size_t)cJSON_GetArraySize(c);
}

const ns_json *ns_host_json_at(const ns_json *container, size_t index)
{
    const cJSON *c = AS_C(container);
    if (!cJSON_IsArray(c) && !cJSON_IsObject(c))
        return NULL;
    const cJSON *item = c->child;
    for (size_t i = 0; item && i < index; i++)
        item = item->next;
    return (const ns_json *)item;
}

const char *ns_host_json_key(const ns_json *member)
{
    return member ? AS_C(member)->string : NULL;
}

const char *ns_host_json_string(const ns_json *value)
{
    return cJSON_IsString(AS_C(value)) ? AS_C(value)->valuestring : NULL;
}

double ns_host_json_number(const ns_json *value)
{
    return cJSON_IsNumber(AS_C(value)) ? AS_C(value)->valuedouble : 0.0;
}

bool ns_host_json_bool(const ns_json *value)
{
    return cJSON_IsTrue(AS_C(value));
}

ns_json *ns_host_json_new_object(void)
{
    return (ns_json *)cJSON_CreateObject();
}

ns_json *ns_host_json_new_array(void)
{
    return (ns_json *)cJSON_CreateArray();
}

ns_json *ns_host_json_new_string(const char *s)
{
    return (ns_json *)cJSON_CreateString(s ? s : "");
}

ns_json *ns_host_json_new_number(double n)
{
    return (ns_json *)cJSON_CreateNumber(n);
}

ns_json *ns_host_json_new_bool(bool b)
{
    return (ns_json *)cJSON_CreateBool(b);
}

int ns_host_json_add(ns_json *container, const char *key, ns_json *item)
{
    cJSON *c = AS_M(container);
    if (!item)
        return NS_ERR_INVALID_ARGUMENT;
    if (cJSON_IsArray(c) && !key) {
        if (!cJSON_AddItemToArray(c, AS_M(item))) {
            cJSON_Delete(AS_M(item));
            return NS_ERR_INTERNAL;
        }
        return NS_OK;
    }
    if (cJSON_IsObject(c) && key) {
        cJSON_DeleteItemFromObjectCaseSensitive(c, key);
        if (!cJSON_AddItemToObject(c, key, AS_M(item))) {
            cJSON_Delete(AS_M(item));
            return NS_ERR_INTERNAL;
        }
        return NS_OK;
    }
    cJSON_Delete(AS_M(item));
    return NS_ERR_INVALID_ARGUMENT;
}
