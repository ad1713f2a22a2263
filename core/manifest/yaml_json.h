/*
 * YAML tree -> cJSON, for the parts of manifests the core hands to providers untouched (node class specs).
 */
#ifndef NS_YAML_JSON_H
#define NS_YAML_JSON_H

#include <cjson/cJSON.h>

#include "manifest/decode.h"
#include "manifest/yaml_doc.h"

/* Converts node into a new cJSON value (*out; free with cJSON_Delete). Keys must be scalars. Aliases are copied; a
 * tree that would expand beyond 100000 values is refused (alias bombs). Errors name file, line and path. */
int ns_yaml_to_json(const ns_dec *d, const ns_ynode *node, const char *path, cJSON **out);

#endif
