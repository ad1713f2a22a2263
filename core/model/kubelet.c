#include "model/kubelet.h"

#include <string.h>

#include "errors/ns_error.h"
#include "model/model_util.h"

int ns_kubelet_config_copy(const ns_kubelet_config *src, ns_kubelet_config *dst)
{
    *dst = *src;
    memset(&dst->eviction_hard, 0, sizeof(ns_labels));
    memset(&dst->eviction_soft, 0, sizeof(ns_labels));
    memset(&dst->eviction_soft_grace_period, 0, sizeof(ns_labels));
    dst->cluster_dns = NULL;
    dst->n_cluster_dns = 0;
    memset(&dst->kube_reserved, 0, sizeof(ns_res));
    memset(&dst->system_reserved, 0, sizeof(ns_res));
    if (ns_res_copy(&dst->kube_reserved, &src->kube_reserved) < 0 ||
        ns_res_copy(&dst->system_reserved, &src->system_reserved) < 0 || ns_labels_copy(&src->eviction_hard, &dst->eviction_hard) < 0 ||
        ns_labels_copy(&src->eviction_soft, &dst->eviction_soft) < 0 ||
        ns_labels_copy(&src->eviction_soft_grace_period, &dst->eviction_soft_grace_period) < 0 ||
        ns_strv_copy(src->cluster_dns, src->n_cluster_dns, &dst->cluster_dns) < 0) {
        ns_kubelet_config_free(dst);
        return NS_ERR_INTERNAL;
    }
    dst->n_cluster_dns = src->n_cluster_dns;
    return 0;
}

void ns_kubelet_config_free(ns_kubelet_config *k)
{
    if (!k)
        return;
    ns_labels_free(&k->eviction_hard);
    ns_labels_free(&k->eviction_soft);
    ns_labels_free(&k->eviction_soft_grace_period);
    ns_strv_free(k->cluster_dns, k->n_cluster_dns);
    ns_res_free(&k->kube_reserved);
    ns_res_free(&k->system_reserved);
    memset(k, 0, sizeof(*k));
}
