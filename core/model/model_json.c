/* Model objects into cJSON, in the API server's shapes (Karpenter's NodeClaim fields): one encoder shared by the
 * controller's writes and simulate's report. */
#include <stdbool.h>
#include <stdio.h>

#include "errors/ns_error.h"
#include "model/model_json.h"
#include "model/quantity.h"

static cJSON *oom(cJSON *partial, const char *what)
{
    cJSON_Delete(partial);
    NS_FAIL(NS_ERR_INTERNAL, "out of memory writing %s as JSON", what);
    return NULL;
}

cJSON *ns_model_labels_json(const ns_labels *l)
{
    cJSON *o = cJSON_CreateObject();
    for (size_t i = 0; o && i < l->n; i++)
        if (!cJSON_AddStringToObject(o, l->items[i].key, l->items[i].value ? l->items[i].value : ""))
            return oom(o, "labels");
    return o ? o : oom(NULL, "labels");
}

cJSON *ns_model_strings_json(char *const *v, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < n; i++)
        if (!cJSON_AddItemToArray(a, cJSON_CreateString(v[i])))
            return oom(a, "a list");
    return a ? a : oom(NULL, "a list");
}

cJSON *ns_model_taints_json(const ns_taint *t, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(a, o) || !cJSON_AddStringToObject(o, "key", t[i].key) ||
            (t[i].value && *t[i].value && !cJSON_AddStringToObject(o, "value", t[i].value)) ||
            !cJSON_AddStringToObject(o, "effect", t[i].effect ? t[i].effect : ""))
            return oom(a, "taints");
    }
    return a ? a : oom(NULL, "taints");
}

static bool add_quantity(cJSON *o, const char *name, int64_t v, int scale, bool binary)
{
    char q[48];
    return cJSON_AddStringToObject(o, name, ns_quantity_format(v, scale, binary, q, sizeof(q))) != NULL;
}

cJSON *ns_model_resources_json(const ns_res *r)
{
    cJSON *o = cJSON_CreateObject();
    bool ok = o != NULL;
    if (ok && r->cpu_milli)
        ok = add_quantity(o, NS_RES_CPU, r->cpu_milli, NS_QTY_MILLI, false);
    if (ok && r->memory_bytes)
        ok = add_quantity(o, NS_RES_MEMORY, r->memory_bytes, NS_QTY_UNITS, true);
    if (ok && r->pods)
        ok = add_quantity(o, NS_RES_PODS, r->pods, NS_QTY_UNITS, false);
    if (ok && r->ephemeral_storage_bytes)
        ok = add_quantity(o, NS_RES_EPHEMERAL_STORAGE, r->ephemeral_storage_bytes, NS_QTY_UNITS, true);
    for (uint32_t i = 0; ok && i < r->n_ext; i++)
        ok = add_quantity(o, r->ext[i].name, r->ext[i].value, NS_QTY_UNITS, false);
    return ok ? o : oom(o, "resources");
}

cJSON *ns_model_requirements_json(const ns_selector_req *r, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(a, o) || !cJSON_AddStringToObject(o, "key", r[i].key) ||
            !cJSON_AddStringToObject(o, "operator", ns_req_op_name(r[i].op)) ||
            (r[i].n_values && !cJSON_AddItemToObject(o, "values", ns_model_strings_json(r[i].values, r[i].n_values))) ||
            (r[i].min_values && !cJSON_AddNumberToObject(o, "minValues", r[i].min_values)))
            return oom(a, "requirements");
    }
    return a ? a : oom(NULL, "requirements");
}
