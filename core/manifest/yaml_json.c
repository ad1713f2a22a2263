#include "manifest/yaml_json.h"

#include "errors/ns_error.h"

#define JSON_BUDGET 100000

/* Aliases share nodes, so a small document can stand for a huge or deep tree ("billion laughs"): both the number of
 * values and the depth of the expansion are bounded. */
static int convert(const ns_dec *d, const ns_ynode *n, const char *path, size_t *budget, int depth, cJSON **out)
{
    *out = NULL;
    if ((*budget)-- == 0)
        return ns_dec_fail(d, n, path, "expands to more than %d values once aliases are expanded", JSON_BUDGET);
    if (depth > NS_YAML_MAX_DEPTH)
        return ns_dec_fail(d, n, path, "nests deeper than %d levels once aliases are expanded", NS_YAML_MAX_DEPTH);
    cJSON *v = NULL;
    int rc = 0;
    if (n->kind == NS_Y_SCALAR) {
        switch (n->type) {
        case NS_YS_NULL:
            v = cJSON_CreateNull();
            break;
        case NS_YS_BOOL:
            v = cJSON_CreateBool(n->b);
            break;
        case NS_YS_INT:
            v = cJSON_CreateNumber((double)n->i);
            break;
        case NS_YS_FLOAT:
            v = cJSON_CreateNumber(n->f);
            break;
        default:
            v = cJSON_CreateString(n->text);
            break;
        }
    } else if (n->kind == NS_Y_SEQ) {
        v = cJSON_CreateArray();
        for (size_t i = 0; v && rc == 0 && i < n->n; i++) {
            char p[NS_PATH_MAX];
            ns_path_index(p, sizeof(p), path, i);
            cJSON *item;
            if ((rc = convert(d, n->items[i], p, budget, depth + 1, &item)) == 0)
                cJSON_AddItemToArray(v, item);
        }
    } else {
        v = cJSON_CreateObject();
        rc = v ? ns_dec_fields(d, n, path, NULL) : 0;
        for (size_t i = 0; v && rc == 0 && i < n->n; i++) {
            const ns_ynode *k = ns_ymap_key(n, i);
            char p[NS_PATH_MAX];
            ns_path_key(p, sizeof(p), path, k->str);
            cJSON *item;
            if ((rc = convert(d, ns_ymap_value(n, i), p, budget, depth + 1, &item)) == 0)
                cJSON_AddItemToObject(v, k->str, item);
        }
    }
    if (!v)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory converting %s to JSON", path);
    if (rc < 0) {
        cJSON_Delete(v);
        return rc;
    }
    *out = v;
    return 0;
}

int ns_yaml_to_json(const ns_dec *d, const ns_ynode *node, const char *path, cJSON **out)
{
    size_t budget = JSON_BUDGET;
    return convert(d, node, path, &budget, 0, out);
}
