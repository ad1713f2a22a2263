#include "model/daemonset.h"

#include <stdlib.h>

#include "errors/ns_error.h"

ns_daemonset *ns_daemonset_new(void)
{
    ns_daemonset *ds = calloc(1, sizeof(*ds));
    if (!ds)
        NS_FAIL(NS_ERR_INTERNAL, "out of memory allocating a DaemonSet");
    return ds;
}

void ns_daemonset_free(ns_daemonset *ds)
{
    if (!ds)
        return;
    ns_meta_free(&ds->meta);
    ns_pod_free(ds->template_pod);
    free(ds);
}
