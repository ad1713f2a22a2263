/* check_drift (what only Azure knows: the VM's image, Kubernetes version and subnet against what the node class and
 * the provider's settings give now), validate_nodeclass and list_repair_policies. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "azure_arm.h"
#include "azure_bootstrap.h"
#include "azure_provider.h"

/* The reference port's policies: the kubelet's Ready condition and AKS's node health condition. The node problem
 * detector's PreemptionScheduled is no repair policy (repair would stamp the deadline "now" and wait on the unhealthy
 * nodes' circuit breaker, leaving pods about a second of grace, as the reference port found): it is an interruption
 * with the notice's deadline, read by event_from_node_condition (azure_node_events.c). */
static const ns_repair_policy REPAIR_POLICIES[] = {
    {sizeof(ns_repair_policy), "Ready", "False", 10 * 60 * 1000},
    {sizeof(ns_repair_policy), "Ready", "Unknown", 10 * 60 * 1000},
    {sizeof(ns_repair_policy), "kubernetes.azure.com/NodeHealthy", "False", 0},
};

int az_list_repair_policies(void *state, ns_repair_policy_cb cb, void *cb_ctx)
{
    (void)state;
    for (size_t i = 0; i < sizeof(REPAIR_POLICIES) / sizeof(REPAIR_POLICIES[0]); i++) {
        int rc = cb(cb_ctx, &REPAIR_POLICIES[i]);
        if (rc != 0)
            return rc;
    }
    return NS_OK;
}

int az_nodeclass_read(az_state *s, const ns_nodeclass *nc, az_nodeclass *out)
{
    return az_nodeclass_parse(s->host, s->ctx, nc, s->default_subnet, out);
}

int az_validate_nodeclass(void *state, const ns_nodeclass *nodeclass)
{
    az_state *s = state;
    az_nodeclass *nc = malloc(sizeof(*nc));
    if (!nc)
        return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "out of memory validating node class %s", nodeclass->name);
    int rc = az_nodeclass_read(s, nodeclass, nc);
    free(nc);
    return rc;
}

/* The subnet of the VM's NIC, from ARM. */
static int nic_subnet(az_state *s, const char *vm_name, char *out, size_t len)
{
    az_arm_result r;
    int rc = az_arm_get(s, true, vm_name, &r, NULL);
    if (rc < 0)
        return rc;
    const ns_host *h = s->host;
    const ns_json *ipc = h->json_at(h->json_get(h->json_get(r.body, "properties"), "ipConfigurations"), 0);
    const char *subnet = h->json_string(h->json_get(h->json_get(h->json_get(ipc, "properties"), "subnet"), "id"));
    snprintf(out, len, "%s", subnet ? subnet : "");
    az_arm_result_clear(s, &r);
    return NS_OK;
}

static int drift_of(az_state *s, const ns_instance *in, const az_nodeclass *nc, const char **reason)
{
    char name[128], want[512];
    *reason = NULL;
    if (!az_vm_name_of(s, in->provider_id, name, sizeof(name)))
        return NS_ERROR(s->host, s->ctx, NS_ERR_INVALID_ARGUMENT, "%.200s is not a VM of this provider",
                        in->provider_id);
    az_catalog *c = NULL;
    int rc = az_catalog_acquire(s, &c);
    if (rc < 0)
        return rc;
    const az_sku *k = az_catalog_find(c, in->instance_type);
    ns_json *image = NULL;
    if (k && (rc = az_image_for(s, nc, k, &image, want, sizeof(want))) == NS_OK) {
        s->host->json_free(image);
        if (strcasecmp(want, in->image_id) != 0)
            *reason = "ImageDrift";
    }
    az_catalog_release(s, c);
    if (rc < 0 || *reason)
        return rc;
    az_arm_result r;
    if ((rc = az_arm_get(s, false, name, &r, NULL)) < 0)
        return rc;
    const char *version = s->host->json_string(s->host->json_get(s->host->json_get(r.body, "tags"),
                                                                 "karpenter.azure.com_kubernetes-version"));
    if (version && strcmp(version, s->kubernetes_version) != 0)
        *reason = "K8sVersionDrift";
    az_arm_result_clear(s, &r);
    if (*reason)
        return NS_OK;
    char subnet[512];
    if ((rc = nic_subnet(s, name, subnet, sizeof(subnet))) < 0)
        return rc == NS_ERR_NOT_FOUND ? NS_OK : rc;
    if (subnet[0] && strcasecmp(subnet, nc->subnet) != 0)
        *reason = "SubnetDrift";
    return NS_OK;
}

int az_check_drift(void *state, const ns_instance *instance, const ns_nodeclass *nodeclass, bool *drifted,
                   char *reason, size_t reason_len)
{
    az_state *s = state;
    *drifted = false;
    az_nodeclass *nc = malloc(sizeof(*nc));
    if (!nc)
        return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "out of memory checking drift of %s",
                        instance->provider_id);
    const char *why = NULL;
    int rc = az_nodeclass_read(s, nodeclass, nc);
    if (rc == NS_OK)
        rc = drift_of(s, instance, nc, &why);
    if (rc == NS_OK && why) {
        *drifted = true;
        snprintf(reason, reason_len, "%s", why);
    }
    free(nc);
    return rc;
}
