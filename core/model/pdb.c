#include "model/pdb.h"

#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"

int64_t ns_int_or_percent_scaled(const ns_int_or_percent *v, int64_t total)
{
    if (!v->set)
        return 0;
    if (!v->percent)
        return v->value;
    return (v->value * total + 99) / 100;
}

ns_pdb *ns_pdb_new(void)
{
    ns_pdb *pdb = calloc(1, sizeof(*pdb));
    if (!pdb)
        NS_FAIL(NS_ERR_INTERNAL, "out of memory allocating a PodDisruptionBudget");
    return pdb;
}

void ns_pdb_free(ns_pdb *pdb)
{
    if (!pdb)
        return;
    ns_meta_free(&pdb->meta);
    ns_label_selector_free(&pdb->selector);
    free(pdb->unhealthy_pod_eviction_policy);
    free(pdb);
}

bool ns_pdb_selects(const ns_pdb *pdb, const ns_pod *pod)
{
    const char *a = pdb->meta.namespace_ ? pdb->meta.namespace_ : "default";
    const char *b = pod->meta.namespace_ ? pod->meta.namespace_ : "default";
    return strcmp(a, b) == 0 && ns_label_selector_matches(&pdb->selector, &pod->meta.labels);
}
