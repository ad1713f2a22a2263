/*
 * The JSON upcalls of the host table: a thin, NULL-safe layer over cJSON. ns_json is a cJSON node.
 */
#ifndef NS_HOST_JSON_H
#define NS_HOST_JSON_H

#include <cjson/cJSON.h>

#include "nodesmith/provider.h"

static inline const ns_json *ns_json_from_cjson(const cJSON *c)
{
    return (const ns_json *)c;
}

ns_json *ns_host_json_parse(const char *text, size_t len);
char *ns_host_json_print(const ns_json *value);
void ns_host_json_free(ns_json *value);
ns_json_type ns_host_json_type(const ns_json *value);
const ns_json *ns_host_json_get(const ns_json *object, const char *key);
size_t ns_host_json_size(const ns_json *container);
const ns_json *ns_host_json_at(const ns_json *container, size_t index);
const char *ns_host_json_key(const ns_json *member);
const char *ns_host_json_string(const ns_json *value);
double ns_host_json_number(const ns_json *value);
bool ns_host_json_bool(const ns_json *value);
ns_json *ns_host_json_new_object(void);
ns_json *ns_host_json_new_array(void);
ns_json *ns_host_json_new_string(const char *s);
ns_json *ns_host_json_new_number(double n);
ns_json *ns_host_json_new_bool(bool b);
int ns_host_json_add(ns_json *container, const char *key, ns_json *item);

#endif
