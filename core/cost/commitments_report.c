/* Each commitment's utilisation and what its scope spilled to on-demand, as JSON and as text (docs/cost.md). */
#include "cost/commitments.h"
#include "errors/ns_error.h"

cJSON *ns_commit_usage_json(const ns_commit_usage *u)
{
    cJSON *o = cJSON_CreateObject();
    bool ok = o && cJSON_AddStringToObject(o, "name", u->c->name) &&
              cJSON_AddStringToObject(o, "kind", ns_commit_kind_name(u->c->kind)) &&
              cJSON_AddNumberToObject(o, "amount", u->c->amount) && cJSON_AddNumberToObject(o, "used", u->used) &&
              cJSON_AddNumberToObject(o, "utilisation", u->used / u->c->amount) &&
              cJSON_AddNumberToObject(o, "nodes", (double)u->nodes) &&
              cJSON_AddNumberToObject(o, "spilled_nodes", (double)u->spilled_nodes) &&
              cJSON_AddNumberToObject(o, "spilled_per_hour", u->spilled_per_hour);
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

int ns_commit_ledger_json(const ns_commit_ledger *l, cJSON **out)
{
    *out = cJSON_CreateArray();
    for (size_t i = 0; *out && i < ns_commit_ledger_count(l); i++) {
        cJSON *o = ns_commit_usage_json(ns_commit_ledger_usage(l, i));
        if (!o || !cJSON_AddItemToArray(*out, o)) {
            cJSON_Delete(o);
            cJSON_Delete(*out);
            *out = NULL;
        }
    }
    return *out ? NS_OK : NS_FAIL(NS_ERR_INTERNAL, "out of memory writing the commitments' utilisation");
}

int ns_commit_ledger_text(FILE *out, const ns_commit_ledger *l)
{
    for (size_t i = 0; i < ns_commit_ledger_count(l); i++) {
        const ns_commit_usage *u = ns_commit_ledger_usage(l, i);
        const char *unit = u->c->kind == NS_COMMIT_SPEND ? " $/h" : "";
        if (fprintf(out,
                    "commitment %s (%s): %.4g of %.4g%s used (%.0f%%), %zu nodes; spilled to on-demand: %zu nodes, "
                    "$%.4f/h\n",
                    u->c->name, ns_commit_kind_name(u->c->kind), u->used, u->c->amount, unit,
                    100.0 * u->used / u->c->amount, u->nodes, u->spilled_nodes, u->spilled_per_hour) < 0)
            return NS_FAIL(NS_ERR_INTERNAL, "writing the utilisation of commitment %s failed", u->c->name);
    }
    return NS_OK;
}
