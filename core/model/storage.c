#include "model/storage.h"

#include <stdlib.h>

static void terms_free(ns_node_selector_term *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        ns_node_selector_term_free(&v[i]);
    free(v);
}

void ns_storage_class_free(ns_storage_class *sc)
{
    if (!sc)
        return;
    ns_meta_free(&sc->meta);
    free(sc->provisioner);
    terms_free(sc->allowed_topologies, sc->n_allowed_topologies);
    free(sc);
}

void ns_pv_free(ns_pv *pv)
{
    if (!pv)
        return;
    ns_meta_free(&pv->meta);
    free(pv->storage_class);
    free(pv->csi_driver);
    terms_free(pv->node_affinity, pv->n_node_affinity);
    free(pv->claim_namespace);
    free(pv->claim_name);
    free(pv->phase);
    free(pv);
}

void ns_pvc_free(ns_pvc *pvc)
{
    if (!pvc)
        return;
    ns_meta_free(&pvc->meta);
    free(pvc->storage_class);
    free(pvc->volume_name);
    free(pvc->phase);
    free(pvc);
}

void ns_volume_attachment_free(ns_volume_attachment *va)
{
    if (!va)
        return;
    ns_meta_free(&va->meta);
    free(va->attacher);
    free(va->node_name);
    free(va->pv_name);
    free(va);
}
