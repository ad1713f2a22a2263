/* Services (v1): only spec.selector is used (model/service.h). With strict (manifests) the other spec fields are
 * checked by name, as every manifest kind's are, so a typo is an error and not a silently ignored field; the API
 * server's objects may carry fields newer than this list. */
#include <stdlib.h>

#include "errors/ns_error.h"
#include "manifest/decoders.h"
#include "model/service.h"

static const char *const service_spec_fields[] = {
    "allocateLoadBalancerNodePorts", "clusterIP", "clusterIPs", "externalIPs", "externalName",
    "externalTrafficPolicy", "healthCheckNodePort", "internalTrafficPolicy", "ipFamilies", "ipFamilyPolicy",
    "loadBalancerClass", "loadBalancerIP", "loadBalancerSourceRanges", "ports", "publishNotReadyAddresses",
    "selector", "sessionAffinity", "sessionAffinityConfig", "trafficDistribution", "type", NULL};

int ns_decode_service(ns_dec *d, const ns_ynode *root, bool strict, ns_service *out)
{
    int rc;
    if ((rc = ns_decode_top_fields(d, root, NULL)) < 0 || (rc = ns_decode_meta(d, root, "Service", true, &out->meta)) < 0)
        return rc;
    const ns_ynode *spec = ns_dec_child(d, root, "", "spec", NS_Y_MAP, &rc);
    if (rc < 0 || !spec)
        return rc;
    if (strict && (rc = ns_dec_fields(d, spec, "spec", service_spec_fields)) < 0)
        return rc;
    const ns_ynode *sel = ns_dec_child(d, spec, "spec", "selector", NS_Y_MAP, &rc);
    if (rc < 0 || !sel)
        return rc;
    out->has_selector = true;
    return ns_dec_label_map(d, spec, "spec", "selector", &out->selector);
}

int ns_load_service(ns_dec *d, const ns_ynode *root, ns_cluster *c)
{
    ns_service *svc = ns_service_new();
    if (!svc)
        return NS_ERR_INTERNAL;
    int rc = ns_decode_service(d, root, true, svc);
    if (rc < 0) {
        ns_service_free(svc);
        return rc;
    }
    return ns_cluster_add_service(c, svc);
}
