#include "model/service.h"

#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"

ns_service *ns_service_new(void)
{
    ns_service *svc = calloc(1, sizeof(*svc));
    if (!svc)
        NS_FAIL(NS_ERR_INTERNAL, "out of memory allocating a Service");
    return svc;
}

void ns_service_free(ns_service *svc)
{
    if (!svc)
        return;
    ns_meta_free(&svc->meta);
    ns_labels_free(&svc->selector);
    free(svc);
}

/* labels.SelectorFromValidatedSet(selector).Matches: every key of the selector with its value. */
bool ns_service_selects(const ns_service *svc, const ns_labels *pod_labels)
{
    if (!svc->has_selector)
        return false;
    for (size_t i = 0; i < svc->selector.n; i++) {
        const char *v = ns_labels_get(pod_labels, svc->selector.items[i].key);
        if (!v || strcmp(v, svc->selector.items[i].value) != 0)
            return false;
    }
    return true;
}
