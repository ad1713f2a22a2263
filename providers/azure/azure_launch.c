/* launch: a NIC in the node class's subnet, then a standalone VM (spot: eviction policy Delete, max price -1), both
 * named after the node claim, so a retried launch finds what the first one made. A capacity or quota refusal names
 * exactly the refused offering to the core (host->error_unavailable_offering, also when a later option launched; the
 * core's cache keeps it unavailable) and the next option is tried. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/rand.h>

#include "azure_arm.h"
#include "azure_bootstrap.h"
#include "azure_errors.h"
#include "azure_provider.h"
#include "azure_windows.h"

/* ---- JSON building: one failure flag instead of a check per member ---- */

typedef struct jb {
    const ns_host *h;
    bool failed;
} jb;

static ns_json *jobj(jb *b, ns_json *parent, const char *key)
{
    ns_json *o = b->h->json_new_object();
    if (!o || b->h->json_add(parent, key, o) < 0)
        b->failed = true;
    return o;
}

static void jadd(jb *b, ns_json *parent, const char *key, ns_json *v)
{
    if (!v || b->h->json_add(parent, key, v) < 0)
        b->failed = true;
}

static void jstr(jb *b, ns_json *parent, const char *key, const char *v)
{
    jadd(b, parent, key, b->h->json_new_string(v));
}

static char *print(jb *b, ns_json *doc)
{
    char *text = b->failed ? NULL : b->h->json_print(doc);
    b->h->json_free(doc);
    return text;
}

static void add_tags(jb *b, az_state *s, ns_json *doc, const ns_launch_request *req, const az_nodeclass *nc,
                     const char *image_ref)
{
    ns_json *tags = jobj(b, doc, "tags");
    for (size_t i = 0; i < nc->n_tags; i++)
        jstr(b, tags, nc->tags[i][0], nc->tags[i][1]);
    for (size_t i = 0; i < req->n_tags && i < 8; i++) {
        /* Azure tag names cannot hold '/': written with '_', as the reference port writes Karpenter's own keys */
        char key[257];
        snprintf(key, sizeof(key), "%s", req->tags[i].key);
        for (char *c = key; *c; c++)
            if (*c == '/')
                *c = '_';
        jstr(b, tags, key, req->tags[i].value);
    }
    jstr(b, tags, AZ_TAG_CLUSTER, s->cluster);
    jstr(b, tags, AZ_TAG_NODEPOOL, req->nodepool_name ? req->nodepool_name : "");
    jstr(b, tags, AZ_TAG_NODECLAIM, req->nodeclaim_name ? req->nodeclaim_name : "");
    jstr(b, tags, AZ_TAG_NODECLASS, nc->name);
    jstr(b, tags, AZ_TAG_BILLING, nc->windows ? "windows" : "linux");
    jstr(b, tags, "karpenter.azure.com_kubernetes-version", s->kubernetes_version);
    if (image_ref)
        jstr(b, tags, AZ_TAG_IMAGE, strrchr(image_ref, '/') ? strrchr(image_ref, '/') + 1 : image_ref);
}

static char *nic_body(az_state *s, const ns_launch_request *req, const az_nodeclass *nc, const az_sku *k)
{
    jb b = {s->host, false};
    ns_json *doc = s->host->json_new_object();
    if (!doc)
        return NULL;
    jstr(&b, doc, "location", s->location);
    add_tags(&b, s, doc, req, nc, NULL);
    ns_json *props = jobj(&b, doc, "properties");
    jadd(&b, props, "enableAcceleratedNetworking", s->host->json_new_bool(k->accelerated_networking));
    ns_json *ipcs = s->host->json_new_array();
    jadd(&b, props, "ipConfigurations", ipcs);
    ns_json *ipc = s->host->json_new_object();
    jadd(&b, ipcs, NULL, ipc);
    jstr(&b, ipc, "name", "ipconfig1");
    ns_json *ipp = jobj(&b, ipc, "properties");
    jadd(&b, ipp, "primary", s->host->json_new_bool(true));
    jstr(&b, ipp, "privateIPAllocationMethod", "Dynamic");
    jstr(&b, jobj(&b, ipp, "subnet"), "id", nc->subnet);
    return print(&b, doc);
}

static void random_password(char *out, size_t len)
{
    static const char SET[] = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";
    unsigned char raw[32];
    RAND_bytes(raw, sizeof(raw));
    size_t n = len - 5 < sizeof(raw) ? len - 5 : sizeof(raw);
    for (size_t i = 0; i < n; i++)
        out[i] = SET[raw[i] % (sizeof(SET) - 1)];
    memcpy(out + n, "#A7z", 5); /* Windows' complexity rule: upper, lower, digit, symbol */
}

static char *vm_body(az_state *s, const ns_launch_request *req, const az_nodeclass *nc, const az_sku *k,
                     const ns_launch_option *opt, const char *vm_name, const char *nic_id, const char *custom_data,
                     ns_json *image, const char *image_ref)
{
    const ns_host *h = s->host;
    jb b = {h, false};
    ns_json *doc = h->json_new_object();
    if (!doc) {
        h->json_free(image);
        return NULL;
    }
    jstr(&b, doc, "location", s->location);
    const char *dash = strrchr(opt->zone, '-');
    if (strcmp(opt->zone, "0") != 0 && dash) {
        ns_json *zones = h->json_new_array();
        jadd(&b, doc, "zones", zones);
        jadd(&b, zones, NULL, h->json_new_string(dash + 1));
    }
    add_tags(&b, s, doc, req, nc, image_ref);
    ns_json *p = jobj(&b, doc, "properties");
    jstr(&b, jobj(&b, p, "hardwareProfile"), "vmSize", k->name);
    ns_json *storage = jobj(&b, p, "storageProfile");
    jadd(&b, storage, "imageReference", image);
    ns_json *disk = jobj(&b, storage, "osDisk");
    jstr(&b, disk, "createOption", "FromImage");
    jstr(&b, disk, "deleteOption", "Delete");
    jstr(&b, disk, "caching", "ReadWrite");
    jadd(&b, disk, "diskSizeGB", h->json_new_number(nc->os_disk_gb));
    jstr(&b, jobj(&b, disk, "managedDisk"), "storageAccountType", k->premium_io ? "Premium_LRS" : "Standard_LRS");
    ns_json *os = jobj(&b, p, "osProfile");
    char windows_name[16];
    if (nc->windows)
        az_windows_computer_name(vm_name, windows_name);
    jstr(&b, os, "computerName", nc->windows ? windows_name : vm_name);
    jstr(&b, os, "adminUsername", "azureuser");
    jstr(&b, os, "customData", custom_data);
    char password[40];
    if (nc->windows) {
        random_password(password, sizeof(password));
        jstr(&b, os, "adminPassword", password);
        memset(password, 0, sizeof(password));
        ns_json *win = jobj(&b, os, "windowsConfiguration");
        jadd(&b, win, "provisionVMAgent", h->json_new_bool(true)); /* the bootstrap runs as a VM extension */
        jadd(&b, win, "enableAutomaticUpdates", h->json_new_bool(false));
    } else {
        ns_json *linux_cfg = jobj(&b, os, "linuxConfiguration");
        jadd(&b, linux_cfg, "disablePasswordAuthentication", h->json_new_bool(true));
        ns_json *keys = h->json_new_array();
        jadd(&b, jobj(&b, linux_cfg, "ssh"), "publicKeys", keys);
        ns_json *key = h->json_new_object();
        jadd(&b, keys, NULL, key);
        jstr(&b, key, "path", "/home/azureuser/.ssh/authorized_keys");
        jstr(&b, key, "keyData", s->ssh_key);
    }
    ns_json *nics = h->json_new_array();
    jadd(&b, jobj(&b, p, "networkProfile"), "networkInterfaces", nics);
    ns_json *nic = h->json_new_object();
    jadd(&b, nics, NULL, nic);
    jstr(&b, nic, "id", nic_id);
    ns_json *nicp = jobj(&b, nic, "properties");
    jadd(&b, nicp, "primary", h->json_new_bool(true));
    jstr(&b, nicp, "deleteOption", "Delete");
    if (strcmp(opt->capacity_type, NS_CAPACITY_SPOT) == 0) {
        jstr(&b, p, "priority", "Spot");
        jstr(&b, p, "evictionPolicy", "Delete");
        jadd(&b, jobj(&b, p, "billingProfile"), "maxPrice", h->json_new_number(-1));
    } else {
        jstr(&b, p, "priority", "Regular");
    }
    if (nc->encryption_at_host || nc->trusted_launch) {
        ns_json *sec = jobj(&b, p, "securityProfile");
        if (nc->encryption_at_host)
            jadd(&b, sec, "encryptionAtHost", h->json_new_bool(true));
        if (nc->trusted_launch) {
            jstr(&b, sec, "securityType", "TrustedLaunch");
            ns_json *uefi = jobj(&b, sec, "uefiSettings");
            jadd(&b, uefi, "secureBootEnabled", h->json_new_bool(true));
            jadd(&b, uefi, "vTpmEnabled", h->json_new_bool(true));
        }
    }
    char *text = print(&b, doc);
    return text;
}

/* ---- the launch ---- */

/* Serialises launches of one node claim within the process (two threads with one token make one VM). */
static pthread_mutex_t claim_locks[16] = {
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
};

pthread_mutex_t *az_claim_lock(const char *vm_name)
{
    unsigned hash = 5381;
    for (const char *p = vm_name; *p; p++)
        hash = hash * 33 + (unsigned char)*p;
    return &claim_locks[hash % 16];
}

static int fill_result(az_state *s, const ns_json *vm, const az_nodeclass *nc, az_catalog *c, ns_launch_result *res)
{
    ns_instance in;
    int rc = az_instance_from_vm(s, vm, &in);
    if (rc < 0)
        return rc;
    snprintf(res->provider_id, sizeof(res->provider_id), "%s", in.provider_id);
    snprintf(res->instance_type, sizeof(res->instance_type), "%s", in.instance_type);
    snprintf(res->zone, sizeof(res->zone), "%s", in.zone);
    snprintf(res->capacity_type, sizeof(res->capacity_type), "%s", in.capacity_type);
    snprintf(res->image_id, sizeof(res->image_id), "%s", in.image_id);
    res->launch_time_ms = in.launch_time_ms;
    const az_sku *k = az_catalog_find(c, in.instance_type);
    if (k)
        az_sku_allocatable(s, k, nc, &res->allocatable);
    return NS_OK;
}

/* An existing VM of the claim: NS_OK and *vm when it is usable (creating or running), 1 when there is none. A VM
 * left Failed by an earlier attempt is deleted first. */
static int existing_vm(az_state *s, const char *vm_name, ns_json **vm)
{
    az_arm_result r;
    az_arm_error e;
    int rc = az_arm_get(s, false, vm_name, &r, &e);
    if (rc == NS_ERR_NOT_FOUND)
        return 1;
    if (rc < 0)
        return rc;
    const ns_json *props = s->host->json_get(r.body, "properties");
    const char *state = s->host->json_string(s->host->json_get(props, "provisioningState"));
    if (state && (strcmp(state, "Failed") == 0 || strcmp(state, "Deleting") == 0)) {
        az_arm_result_clear(s, &r);
        (void)az_arm_delete(s, false, vm_name, false, NULL);
        return 1;
    }
    *vm = r.body;
    return NS_OK;
}

/* One option: PUT the VM and wait for it. NS_OK with *vm, or the error (capacity errors already marked). */
static int try_option(az_state *s, const ns_launch_request *req, const az_nodeclass *nc, const az_sku *k,
                      const ns_launch_option *opt, const char *vm_name, const char *nic_id, ns_json **vm)
{
    char *custom = NULL, *body = NULL, image_ref[512], path[600], what[200];
    ns_json *image = NULL;
    int rc = az_custom_data(s, nc, req, k, &custom);
    if (rc < 0 || (rc = az_image_for(s, nc, k, &image, image_ref, sizeof(image_ref))) < 0)
        goto done;
    body = vm_body(s, req, nc, k, opt, vm_name, nic_id, custom, image, image_ref);
    if (!body) {
        rc = NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "out of memory building VM %s", vm_name);
        goto done;
    }
    az_resource_path(s, "Compute", "virtualMachines", vm_name, path, sizeof(path));
    snprintf(what, sizeof(what), "PUT VM %s (%s, %s, %s)", vm_name, k->name, opt->zone, opt->capacity_type);
    az_arm_result r;
    az_arm_error e;
    rc = az_arm_call(s, "PUT", path, AZ_API_COMPUTE, body, what, &r, &e);
    if (rc == NS_OK) {
        rc = az_arm_wait(s, &r, what, &e);
        az_arm_result_clear(s, &r);
    }
    if (rc == NS_ERR_INSUFFICIENT_CAPACITY) {
        if (e.status == 200) /* the VM resource exists, Failed: remove it before the next option */
            (void)az_arm_delete(s, false, vm_name, false, NULL);
    }
    if (rc == NS_ERR_INVALID_ARGUMENT && strcmp(e.code, "PropertyChangeNotAllowed") == 0) {
        /* A VM of this name from an earlier attempt holds another zone or priority: its answer was lost, or its
         * delete has not finished. A usable one is the claim's VM; a failed or deleting one is removed and the
         * launch is worth retrying, which the core does on a throttling error. */
        rc = existing_vm(s, vm_name, vm);
        if (rc == 1)
            rc = NS_ERROR(s->host, s->ctx, NS_ERR_THROTTLED, "%s: VM %s from an earlier attempt was in the way (%s); "
                          "it was removed, launch again", what, vm_name, e.message);
        goto done;
    }
    if (rc == NS_OK && (rc = existing_vm(s, vm_name, vm)) == 1)
        rc = NS_ERROR(s->host, s->ctx, NS_ERR_THROTTLED, "VM %s vanished right after it was created", vm_name);
done:
    if (custom)
        memset(custom, 0, strlen(custom));
    free(custom);
    free(body);
    return rc;
}

static int ensure_nic(az_state *s, const ns_launch_request *req, const az_nodeclass *nc, const az_sku *k,
                      const char *name)
{
    char path[600], what[200];
    char *body = nic_body(s, req, nc, k);
    if (!body)
        return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "out of memory building NIC %s", name);
    az_resource_path(s, "Network", "networkInterfaces", name, path, sizeof(path));
    snprintf(what, sizeof(what), "PUT NIC %s", name);
    az_arm_result r;
    int rc = az_arm_call(s, "PUT", path, AZ_API_NETWORK, body, what, &r, NULL);
    free(body);
    if (rc == NS_OK) {
        rc = az_arm_wait(s, &r, what, NULL);
        az_arm_result_clear(s, &r);
    }
    return rc;
}

/* The offerings ARM refused for capacity or quota in this launch, and how many options could be tried at all. */
typedef struct refused {
    const ns_launch_option *opts[64];
    size_t n, tried;
} refused;

static int launch_options(az_state *s, const ns_launch_request *req, const az_nodeclass *nc, az_catalog *c,
                          const char *vm_name, ns_json **vm, refused *ref)
{
    char nic_path[600], nic_id[700];
    az_resource_path(s, "Network", "networkInterfaces", vm_name, nic_path, sizeof(nic_path));
    snprintf(nic_id, sizeof(nic_id), "%s", nic_path);
    bool nic_made = false;
    int rc = NS_ERR_INSUFFICIENT_CAPACITY;
    for (size_t i = 0; i < req->n_options; i++) {
        const ns_launch_option *opt = NS_AT(req->options, i);
        const az_sku *k = az_catalog_find(c, opt->instance_type);
        /* Not an offering of this node class (list_instance_types never offers it): skipped, and not named, since
         * it was refused for no lack of capacity. */
        if (!k || !az_sku_runs(k, nc) || (strcmp(opt->capacity_type, NS_CAPACITY_SPOT) == 0 && !k->spot_capable))
            continue;
        ref->tried++;
        if (!nic_made) {
            if ((rc = ensure_nic(s, req, nc, k, vm_name)) < 0)
                return rc;
            nic_made = true;
        }
        rc = try_option(s, req, nc, k, opt, vm_name, nic_id, vm);
        if (rc != NS_ERR_INSUFFICIENT_CAPACITY)
            return rc;
        nic_made = false; /* a refused VM deleted with its NIC (deleteOption Delete): the next one needs it again */
        if (ref->n < 64)
            ref->opts[ref->n++] = opt;
    }
    if (nic_made)
        (void)az_arm_delete(s, true, vm_name, false, NULL);
    return NS_ERR_INSUFFICIENT_CAPACITY;
}

int az_launch(void *state, const ns_launch_request *req, ns_launch_result *result)
{
    az_state *s = state;
    const ns_host *h = s->host;
    char vm_name[80];
    const char *claim = req->nodeclaim_name && *req->nodeclaim_name ? req->nodeclaim_name : req->client_token;
    if (!claim || !*claim || req->n_options == 0 || !req->nodeclass)
        return NS_ERROR(h, s->ctx, NS_ERR_INVALID_ARGUMENT, "azure launch needs a node claim name or client token, a "
                        "node class and at least one option");
    if (az_vm_name(claim, vm_name, sizeof(vm_name)) < 0)
        return NS_ERROR(h, s->ctx, NS_ERR_INVALID_ARGUMENT, "azure launch: node claim name %.100s makes no valid VM "
                        "name", claim);
    az_nodeclass *nc = malloc(sizeof(*nc));
    if (!nc)
        return NS_ERROR(h, s->ctx, NS_ERR_INTERNAL, "out of memory launching %s", claim);
    az_catalog *c = NULL;
    ns_json *vm = NULL;
    refused ref = {.n = 0};
    pthread_mutex_t *lock = az_claim_lock(vm_name);
    pthread_mutex_lock(lock);
    int rc = az_nodeclass_read(s, req->nodeclass, nc);
    if (rc < 0 || (rc = az_catalog_acquire(s, &c)) < 0)
        goto done;
    az_pricing_refresh(s);
    rc = existing_vm(s, vm_name, &vm);
    if (rc == 1)
        rc = launch_options(s, req, nc, c, vm_name, &vm, &ref);
    if (rc == NS_ERR_INSUFFICIENT_CAPACITY && ref.tried == 0)
        rc = NS_ERROR(h, s->ctx, NS_ERR_INVALID_ARGUMENT, "azure launch of %s: none of the %zu options is a size "
                      "node class %s can run (image architecture, spot capability or an unknown size)", claim,
                      req->n_options, nc->name);
    else if (rc == NS_ERR_INSUFFICIENT_CAPACITY)
        rc = NS_ERROR(h, s->ctx, NS_ERR_INSUFFICIENT_CAPACITY, "azure launch of %s: ARM refused each of the %zu "
                      "offerings it could try for capacity or quota (each is named)", claim, ref.tried);
    /* The refused offerings, after the error when there is one (the record belongs to it), and also when a later
     * option launched: the core's cache keeps them unavailable. */
    for (size_t i = 0; i < ref.n && rc != NS_ERR_INVALID_ARGUMENT; i++)
        h->error_unavailable_offering(s->ctx, ref.opts[i]->instance_type, ref.opts[i]->zone,
                                      ref.opts[i]->capacity_type);
    if (rc < 0)
        goto done;
    /* Windows: the extension that runs the node's bootstrap, also for a VM an earlier attempt made */
    if (rc == NS_OK && nc->windows && !nc->user_data)
        rc = az_windows_run_bootstrap(s, vm_name);
    if (rc == NS_OK)
        rc = fill_result(s, vm, nc, c, result);
    if (rc == NS_OK) {
        ns_label fields[] = {{"NodeClaim", claim}, {"provider-id", result->provider_id},
                             {"instance-type", result->instance_type}, {"zone", result->zone},
                             {"capacity-type", result->capacity_type}};
        h->log(s->ctx, NS_LOG_INFO, "launched instance", fields, 5);
    }
done:
    pthread_mutex_unlock(lock);
    h->json_free(vm);
    if (c)
        az_catalog_release(s, c);
    free(nc);
    return rc;
}
