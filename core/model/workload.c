#include "model/workload.h"

#include <stdlib.h>

#include "model/model_util.h"

void ns_workload_free(ns_workload *w)
{
    if (!w)
        return;
    ns_meta_free(&w->meta);
    ns_label_selector_free(&w->selector);
    ns_strv_free(w->volume_claim_templates, w->n_volume_claim_templates);
    ns_pod_free(w->template_pod);
    free(w);
}
