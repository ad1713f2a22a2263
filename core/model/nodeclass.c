#include "model/nodeclass.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "json/host_json.h"
#include "model/model_util.h"

ns_nodeclass_def *ns_nodeclass_def_new(const char *api_version, const char *kind, const char *name, cJSON *spec)
{
    ns_nodeclass_def *def = calloc(1, sizeof(*def));
    if (!spec)
        spec = cJSON_CreateObject();
    if (!def || !spec) {
        free(def);
        cJSON_Delete(spec);
        NS_FAIL(NS_ERR_INTERNAL, "out of memory allocating node class %s", name ? name : "");
        return NULL;
    }
    def->spec = spec;
    def->api_version = ns_strdup(api_version);
    def->kind = ns_strdup(kind);
    def->meta.name = ns_strdup(name);
    if (!def->api_version || !def->kind || !def->meta.name) {
        ns_nodeclass_def_free(def);
        return NULL;
    }
    def->abi.struct_size = sizeof(def->abi);
    def->abi.api_version = def->api_version;
    def->abi.kind = def->kind;
    def->abi.name = def->meta.name;
    def->abi.spec = ns_json_from_cjson(def->spec);
    return def;
}

void ns_nodeclass_def_free(ns_nodeclass_def *def)
{
    if (!def)
        return;
    ns_meta_free(&def->meta);
    free(def->api_version);
    free(def->kind);
    cJSON_Delete(def->spec);
    ns_kubelet_config_free(&def->kubelet);
    free(def);
}

const char *ns_api_group(const char *api_version, char *buf, size_t len)
{
    const char *slash = api_version ? strrchr(api_version, '/') : NULL;
    size_t n = slash ? (size_t)(slash - api_version) : 0;
    snprintf(buf, len, "%.*s", (int)n, slash ? api_version : "");
    return buf;
}
