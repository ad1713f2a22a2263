/* terminate, list_instances, get_instance; names and IDs; leaked NICs. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "azure_arm.h"
#include "azure_provider.h"

int az_vm_name(const char *claim, char *out, size_t len)
{
    /* Azure VM names: letters, digits, '-', '.', '_', at most 64; Linux computer names at most 64. */
    size_t n = strlen(claim);
    if (n == 0 || n + 4 > 64 || n + 5 > len)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)claim[i]) && claim[i] != '-' && claim[i] != '.')
            return -1;
    snprintf(out, len, "aks-%s", claim);
    return 0;
}

void az_resource_path(const az_state *s, const char *provider, const char *type, const char *name, char *out,
                      size_t len)
{
    snprintf(out, len, "/subscriptions/%s/resourceGroups/%s/providers/Microsoft.%s/%s/%s", s->subscription, s->node_rg,
             provider, type, name);
}

int az_arm_get(az_state *s, bool nic, const char *name, az_arm_result *res, az_arm_error *err)
{
    char path[600], what[200];
    az_resource_path(s, nic ? "Network" : "Compute", nic ? "networkInterfaces" : "virtualMachines", name, path,
                     sizeof(path));
    snprintf(what, sizeof(what), "GET %s %s", nic ? "NIC" : "VM", name);
    return az_arm_call(s, "GET", path, nic ? AZ_API_NETWORK : AZ_API_COMPUTE, NULL, what, res, err);
}

int az_arm_delete(az_state *s, bool nic, const char *name, bool force, long *status)
{
    char path[600], target[700], what[200];
    az_resource_path(s, nic ? "Network" : "Compute", nic ? "networkInterfaces" : "virtualMachines", name, path,
                     sizeof(path));
    snprintf(target, sizeof(target), "%s%s", path, force ? "?forceDeletion=true" : "");
    snprintf(what, sizeof(what), "DELETE %s %s", nic ? "NIC" : "VM", name);
    az_arm_result r;
    int rc = az_arm_call(s, "DELETE", target, nic ? AZ_API_NETWORK : AZ_API_COMPUTE, NULL, what, &r, NULL);
    if (rc < 0)
        return rc;
    if (status)
        *status = r.status;
    rc = az_arm_wait(s, &r, what, NULL);
    az_arm_result_clear(s, &r);
    return rc;
}

bool az_vm_name_of(const az_state *s, const char *provider_id, char *out, size_t len)
{
    char prefix[400];
    int n = snprintf(prefix, sizeof(prefix), "azure:///subscriptions/%s/resourceGroups/%s/providers/"
                     "Microsoft.Compute/virtualMachines/", s->subscription, s->node_rg);
    if (!provider_id || strncasecmp(provider_id, prefix, (size_t)n) != 0)
        return false;
    const char *name = provider_id + n;
    if (!*name || strchr(name, '/') || strlen(name) >= len)
        return false;
    snprintf(out, len, "%s", name);
    return true;
}

static int64_t parse_time_ms(const char *iso)
{
    struct tm tm = {0};
    if (!iso || !strptime(iso, "%Y-%m-%dT%H:%M:%S", &tm))
        return 0;
    return (int64_t)timegm(&tm) * 1000;
}

static const char *tag(const ns_host *h, const ns_json *vm, const char *key)
{
    const char *v = h->json_string(h->json_get(h->json_get(vm, "tags"), key));
    return v ? v : "";
}

int az_instance_from_vm(az_state *s, const ns_json *vm, ns_instance *out)
{
    const ns_host *h = s->host;
    memset(out, 0, sizeof(*out));
    out->struct_size = sizeof(*out);
    const char *id = h->json_string(h->json_get(vm, "id"));
    const ns_json *p = h->json_get(vm, "properties");
    const char *size = h->json_string(h->json_get(h->json_get(p, "hardwareProfile"), "vmSize"));
    if (!id || !size)
        return NS_ERROR(h, s->ctx, NS_ERR_INTERNAL, "ARM VM without id or hardwareProfile.vmSize");
    if (snprintf(out->provider_id, sizeof(out->provider_id), "azure://%s", id) >= (int)sizeof(out->provider_id))
        return NS_ERROR(h, s->ctx, NS_ERR_INTERNAL, "VM ID %.100s... does not fit a provider ID", id);
    snprintf(out->instance_type, sizeof(out->instance_type), "%s", size);
    const char *zone = h->json_string(h->json_at(h->json_get(vm, "zones"), 0));
    if (zone)
        snprintf(out->zone, sizeof(out->zone), "%.50s-%.8s", s->location, zone);
    else
        snprintf(out->zone, sizeof(out->zone), "0");
    const char *priority = h->json_string(h->json_get(p, "priority"));
    snprintf(out->capacity_type, sizeof(out->capacity_type), "%s",
             priority && (strcmp(priority, "Spot") == 0 || strcmp(priority, "Low") == 0) ? NS_CAPACITY_SPOT
                                                                                          : NS_CAPACITY_ON_DEMAND);
    const ns_json *img = h->json_get(h->json_get(p, "storageProfile"), "imageReference");
    const char *image = h->json_string(h->json_get(img, "communityGalleryImageId"));
    if (!image)
        image = h->json_string(h->json_get(img, "sharedGalleryImageId"));
    if (!image)
        image = h->json_string(h->json_get(img, "id"));
    if (!image && h->json_string(h->json_get(img, "sku"))) {
        snprintf(out->image_id, sizeof(out->image_id), "%s:%s:%s:%s", h->json_string(h->json_get(img, "publisher")),
                 h->json_string(h->json_get(img, "offer")), h->json_string(h->json_get(img, "sku")),
                 h->json_string(h->json_get(img, "version")));
    } else if (image) {
        snprintf(out->image_id, sizeof(out->image_id), "%s", image);
    }
    snprintf(out->nodeclaim_name, sizeof(out->nodeclaim_name), "%s", tag(h, vm, AZ_TAG_NODECLAIM));
    snprintf(out->nodepool_name, sizeof(out->nodepool_name), "%s", tag(h, vm, AZ_TAG_NODEPOOL));
    snprintf(out->nodeclass_name, sizeof(out->nodeclass_name), "%s", tag(h, vm, AZ_TAG_NODECLASS));
    const char *state = h->json_string(h->json_get(p, "provisioningState"));
    out->state = !state ? NS_INSTANCE_PENDING
                 : strcmp(state, "Succeeded") == 0 ? NS_INSTANCE_RUNNING
                 : strcmp(state, "Deleting") == 0  ? NS_INSTANCE_SHUTTING_DOWN
                 : strcmp(state, "Failed") == 0    ? NS_INSTANCE_STOPPED
                                                   : NS_INSTANCE_PENDING;
    out->launch_time_ms = parse_time_ms(h->json_string(h->json_get(p, "timeCreated")));
    return NS_OK;
}

static bool ours(az_state *s, const ns_json *resource)
{
    return strcmp(tag(s->host, resource, AZ_TAG_CLUSTER), s->cluster) == 0;
}

int az_get_instance(void *state, const char *provider_id, ns_instance *out)
{
    az_state *s = state;
    char name[128];
    if (!az_vm_name_of(s, provider_id, name, sizeof(name)))
        return NS_ERROR(s->host, s->ctx, NS_ERR_NOT_FOUND, "%.200s is not a VM of this provider's subscription and "
                        "node resource group", provider_id ? provider_id : "(null)");
    az_arm_result r;
    int rc = az_arm_get(s, false, name, &r, NULL);
    if (rc < 0)
        return rc;
    if (!ours(s, r.body))
        rc = NS_ERROR(s->host, s->ctx, NS_ERR_NOT_FOUND, "VM %s is not tagged for cluster %s", name, s->cluster);
    else
        rc = az_instance_from_vm(s, r.body, out);
    az_arm_result_clear(s, &r);
    return rc;
}

int az_terminate(void *state, const char *provider_id, bool *already_gone)
{
    az_state *s = state;
    char name[128];
    if (already_gone)
        *already_gone = false;
    if (!az_vm_name_of(s, provider_id, name, sizeof(name)))
        return NS_ERROR(s->host, s->ctx, NS_ERR_INVALID_ARGUMENT, "%.200s is not a VM of this provider",
                        provider_id ? provider_id : "(null)");
    long status = 0;
    int rc = az_arm_delete(s, false, name, true, &status);
    if (rc < 0)
        return rc;
    bool gone = status == 204;
    /* The NIC goes with the VM (deleteOption Delete); one left by a VM created elsewhere is deleted here. */
    rc = az_arm_delete(s, true, name, false, NULL);
    if (rc == NS_ERR_NOT_FOUND)
        rc = NS_OK;
    if (rc == NS_OK && already_gone)
        *already_gone = gone;
    if (rc == NS_OK && !gone) {
        ns_label fields[] = {{"provider-id", provider_id}};
        s->host->log(s->ctx, NS_LOG_INFO, "terminated instance", fields, 1);
    }
    return rc;
}

typedef struct list_ctx {
    az_state *s;
    ns_instance_cb cb;
    void *cb_ctx;
} list_ctx;

static int on_vm(void *ctx, const ns_json *vm)
{
    list_ctx *l = ctx;
    if (!ours(l->s, vm))
        return 0;
    ns_instance in;
    int rc = az_instance_from_vm(l->s, vm, &in);
    return rc < 0 ? rc : l->cb(l->cb_ctx, &in);
}

int az_list_instances(void *state, ns_instance_cb cb, void *cb_ctx)
{
    az_state *s = state;
    char path[600];
    snprintf(path, sizeof(path), "/subscriptions/%s/resourceGroups/%s/providers/Microsoft.Compute/virtualMachines",
             s->subscription, s->node_rg);
    list_ctx l = {s, cb, cb_ctx};
    int rc = az_arm_list(s, path, AZ_API_COMPUTE, "list VMs", on_vm, &l);
    if (rc == NS_OK && az_collect_leaked_nics(s) < 0) {
        ns_label fields[] = {{"resource-group", s->node_rg}};
        s->host->log(s->ctx, NS_LOG_WARN, "collecting leaked NICs failed; retried at the next listing", fields, 1);
        rc = NS_OK;
    }
    return rc;
}

typedef struct nic_ctx {
    az_state *s;
    char names[64][80];
    size_t n;
} nic_ctx;

static int on_nic(void *ctx, const ns_json *nic)
{
    nic_ctx *k = ctx;
    const ns_host *h = k->s->host;
    const char *name = h->json_string(h->json_get(nic, "name"));
    if (!ours(k->s, nic) || !name || h->json_get(h->json_get(nic, "properties"), "virtualMachine") || k->n == 64 ||
        strlen(name) >= sizeof(k->names[0]))
        return 0;
    snprintf(k->names[k->n++], sizeof(k->names[0]), "%s", name);
    return 0;
}

int az_collect_leaked_nics(az_state *s)
{
    char path[600];
    snprintf(path, sizeof(path), "/subscriptions/%s/resourceGroups/%s/providers/Microsoft.Network/networkInterfaces",
             s->subscription, s->node_rg);
    nic_ctx *k = calloc(1, sizeof(*k));
    if (!k)
        return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "out of memory listing NICs");
    k->s = s;
    int rc = az_arm_list(s, path, AZ_API_NETWORK, "list NICs", on_nic, k);
    for (size_t i = 0; rc == NS_OK && i < k->n; i++) {
        /* A launch of the same claim in this process holds its lock between the NIC and the VM: leave it be. */
        pthread_mutex_t *lock = az_claim_lock(k->names[i]);
        if (pthread_mutex_trylock(lock) != 0)
            continue;
        az_arm_result r;
        int vm = az_arm_get(s, false, k->names[i], &r, NULL);
        if (vm == NS_OK)
            az_arm_result_clear(s, &r);
        if (vm == NS_ERR_NOT_FOUND) {
            if ((rc = az_arm_delete(s, true, k->names[i], false, NULL)) == NS_OK) {
                ns_label fields[] = {{"nic", k->names[i]}};
                s->host->log(s->ctx, NS_LOG_INFO, "deleted leaked network interface", fields, 1);
            }
        }
        pthread_mutex_unlock(lock);
    }
    free(k);
    return rc;
}
