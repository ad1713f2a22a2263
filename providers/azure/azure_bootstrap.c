/* Node images and the AKS bootstrap (azure_bootstrap.h). The script sets the variables AKS node images' provision
 * script reads and runs it, as the reference port's aksscriptless mode does (research notes section 4.5). */
#include "azure_bootstrap.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UBUNTU_GALLERY "AKSUbuntu-38d80f77-467a-481f-a8d4-09b6d4220bd2"
#define AZURELINUX_GALLERY "AKSAzureLinux-f7c7cda5-1c9a-4bdc-a222-9614c968580b"

/* The image definition of the family for an architecture and Hyper-V generation (the reference port's names). */
static const char *image_name(const az_nodeclass *nc, bool arm, bool gen2)
{
    if (strcmp(nc->image_family, "AzureLinux") == 0)
        return arm ? "V2gen2arm64" : gen2 ? "V2gen2" : "V2";
    if (strcmp(nc->image_family, "Ubuntu2404") == 0)
        return arm ? "2404gen2arm64containerd" : gen2 ? "2404gen2containerd" : "2404containerd";
    return arm ? "2204gen2arm64containerd" : gen2 ? "2204gen2containerd" : "2204containerd";
}

static const char *gallery_of(const az_nodeclass *nc)
{
    return strcmp(nc->image_family, "AzureLinux") == 0 ? AZURELINUX_GALLERY : UBUNTU_GALLERY;
}

size_t az_gallery_images(const az_state *s, const az_nodeclass *nc, const char **gallery, const char **version,
                         az_gallery_image out[3])
{
    static const struct {
        bool arm, gen2;
        const char *arch, *generation;
    } KINDS[] = {{false, true, "amd64", "2"}, {false, false, "amd64", "1"}, {true, true, "arm64", "2"}};
    *gallery = gallery_of(nc);
    *version = nc->image_version[0] ? nc->image_version : s->image_version;
    for (size_t i = 0; i < 3; i++) {
        snprintf(out[i].definition, sizeof(out[i].definition), "%s", image_name(nc, KINDS[i].arm, KINDS[i].gen2));
        out[i].arch = KINDS[i].arch;
        out[i].generation = KINDS[i].generation;
    }
    return 3;
}

int az_image_for(az_state *s, const az_nodeclass *nc, const az_sku *k, ns_json **image, char *ref, size_t len)
{
    const ns_host *h = s->host;
    if (nc->fips && !nc->image_id[0])
        return NS_ERROR(h, s->ctx, NS_ERR_INVALID_CONFIG, "AKSNodeClass %s: " AZ_FIPS_NO_IMAGE, nc->name);
    ns_json *o = h->json_new_object();
    if (!o)
        return NS_ERROR(h, s->ctx, NS_ERR_INTERNAL, "out of memory building an image reference");
    int rc = NS_OK;
    if (nc->image_id[0]) {
        bool community = strncmp(nc->image_id, "/CommunityGalleries/", 20) == 0;
        bool shared = strncmp(nc->image_id, "/SharedGalleries/", 17) == 0;
        rc = h->json_add(o, community ? "communityGalleryImageId" : shared ? "sharedGalleryImageId" : "id",
                         h->json_new_string(nc->image_id));
        snprintf(ref, len, "%s", nc->image_id);
    } else if (nc->windows) {
        const char *sku = strcmp(nc->image_family, "Windows2019") == 0 ? "2019-datacenter-core-smalldisk-g2"
                                                                         : "2022-datacenter-core-smalldisk-g2";
        if (h->json_add(o, "publisher", h->json_new_string("MicrosoftWindowsServer")) < 0 ||
            h->json_add(o, "offer", h->json_new_string("WindowsServer")) < 0 ||
            h->json_add(o, "sku", h->json_new_string(sku)) < 0 ||
            h->json_add(o, "version", h->json_new_string("latest")) < 0)
            rc = NS_ERR_INTERNAL;
        snprintf(ref, len, "MicrosoftWindowsServer:WindowsServer:%s:latest", sku);
    } else {
        const char *version = nc->image_version[0] ? nc->image_version : s->image_version;
        snprintf(ref, len, "/CommunityGalleries/%s/images/%s/versions/%s", gallery_of(nc),
                 image_name(nc, strcmp(k->arch, "arm64") == 0, k->hyperv_v2), version);
        rc = h->json_add(o, "communityGalleryImageId", h->json_new_string(ref));
    }
    if (rc < 0) {
        h->json_free(o);
        return NS_ERROR(h, s->ctx, NS_ERR_INTERNAL, "out of memory building an image reference");
    }
    *image = o;
    return NS_OK;
}

typedef struct script {
    char *buf;
    size_t len, cap;
    bool failed;
} script;

static void put(script *sc, const char *text)
{
    size_t n = strlen(text);
    if (sc->failed)
        return;
    if (sc->len + n + 1 > sc->cap) {
        size_t cap = (sc->cap ? sc->cap * 2 : 4096) + n;
        char *grown = realloc(sc->buf, cap);
        if (!grown) {
            sc->failed = true;
            return;
        }
        sc->buf = grown;
        sc->cap = cap;
    }
    memcpy(sc->buf + sc->len, text, n + 1);
    sc->len += n;
}

/* NAME='value' with the value single-quoted for the shell. */
static void var(script *sc, const char *name, const char *value)
{
    put(sc, name);
    put(sc, "='");
    for (const char *p = value ? value : ""; *p; p++) {
        char one[2] = {*p, 0};
        put(sc, *p == '\'' ? "'\\''" : one);
    }
    put(sc, "'\n");
}

/* "key=value,..." of the node's labels (values with a quote are left out: both shells quote with it). */
static void label_list(script *sc, const ns_launch_request *req)
{
    size_t n = 0;
    for (size_t i = 0; i < req->n_labels; i++) {
        if (strchr(req->labels[i].key, '\'') || strchr(req->labels[i].value, '\''))
            continue;
        put(sc, n++ ? "," : "");
        put(sc, req->labels[i].key);
        put(sc, "=");
        put(sc, req->labels[i].value);
    }
}

/* "key=value:Effect,..." of the taints and startup taints the kubelet registers with. */
static void taint_list(script *sc, const ns_launch_request *req)
{
    size_t n = 0;
    const ns_taint *lists[] = {req->taints, req->startup_taints};
    size_t counts[] = {req->n_taints, req->n_startup_taints};
    for (int l = 0; l < 2; l++)
        for (size_t i = 0; i < counts[l]; i++) {
            const ns_taint *t = &lists[l][i];
            if (strchr(t->key, '\'') || (t->value && strchr(t->value, '\'')))
                continue;
            put(sc, n++ ? "," : "");
            put(sc, t->key);
            if (t->value && *t->value) {
                put(sc, "=");
                put(sc, t->value);
            }
            put(sc, ":");
            put(sc, t->effect);
        }
}

static void joined_labels(script *sc, const ns_launch_request *req)
{
    put(sc, "KUBELET_NODE_LABELS='");
    label_list(sc, req);
    put(sc, "'\nKUBELET_REGISTER_WITH_TAINTS='");
    taint_list(sc, req);
    put(sc, "'\n");
}

/* The kubelet's flags from the node class, separated by single spaces (none holds a space). */
static void kubelet_flag_list(script *sc, const az_nodeclass *nc, int max_pods)
{
    char flag[160];
    const az_kubelet *k = &nc->kubelet;
    snprintf(flag, sizeof(flag), "--max-pods=%d", max_pods);
    put(sc, flag);
    if (k->cpu_manager_policy[0])
        snprintf(flag, sizeof(flag), " --cpu-manager-policy=%s", k->cpu_manager_policy), put(sc, flag);
    if (k->cpu_cfs_quota >= 0)
        snprintf(flag, sizeof(flag), " --cpu-cfs-quota=%s", k->cpu_cfs_quota ? "true" : "false"), put(sc, flag);
    if (k->cpu_cfs_quota_period[0])
        snprintf(flag, sizeof(flag), " --cpu-cfs-quota-period=%s", k->cpu_cfs_quota_period), put(sc, flag);
    if (k->image_gc_high >= 0)
        snprintf(flag, sizeof(flag), " --image-gc-high-threshold=%d", k->image_gc_high), put(sc, flag);
    if (k->image_gc_low >= 0)
        snprintf(flag, sizeof(flag), " --image-gc-low-threshold=%d", k->image_gc_low), put(sc, flag);
    if (k->topology_manager_policy[0])
        snprintf(flag, sizeof(flag), " --topology-manager-policy=%s", k->topology_manager_policy), put(sc, flag);
    if (k->container_log_max_size[0])
        snprintf(flag, sizeof(flag), " --container-log-max-size=%s", k->container_log_max_size), put(sc, flag);
    if (k->container_log_max_files >= 0)
        snprintf(flag, sizeof(flag), " --container-log-max-files=%d", k->container_log_max_files), put(sc, flag);
    if (k->pod_pids_limit >= 0)
        snprintf(flag, sizeof(flag), " --pod-max-pids=%lld", (long long)k->pod_pids_limit), put(sc, flag);
    if (k->fail_swap_on >= 0)
        snprintf(flag, sizeof(flag), " --fail-swap-on=%s", k->fail_swap_on ? "true" : "false"), put(sc, flag);
    for (size_t i = 0; i < k->n_sysctls; i++) {
        put(sc, i ? "," : " --allowed-unsafe-sysctls=");
        put(sc, k->allowed_unsafe_sysctls[i]);
    }
}

static void kubelet_flags(script *sc, const az_nodeclass *nc, int max_pods)
{
    put(sc, "KUBELET_FLAGS='");
    kubelet_flag_list(sc, nc, max_pods);
    put(sc, "'\n");
}

static void bootstrap_script(az_state *s, const az_nodeclass *nc, const ns_launch_request *req, const az_sku *k,
                             int max_pods, script *sc)
{
    char cores[16];
    snprintf(cores, sizeof(cores), "%d", k->vcpus);
    put(sc, "#!/bin/bash\n# nodesmith azure: AKS node bootstrap (the node image's provision script does the work)\n");
    var(sc, "KUBERNETES_VERSION", s->kubernetes_version);
    var(sc, "TENANT_ID", s->tenant);
    var(sc, "SUBSCRIPTION_ID", s->subscription);
    var(sc, "RESOURCE_GROUP", s->node_rg);
    var(sc, "LOCATION", s->location);
    var(sc, "VM_TYPE", "vm");
    var(sc, "VM_SIZE", k->name);
    var(sc, "VM_CORES", cores);
    var(sc, "SUBNET", nc->subnet);
    var(sc, "NETWORK_PLUGIN", s->network_plugin);
    var(sc, "NETWORK_PLUGIN_MODE", s->network_plugin_mode);
    var(sc, "NETWORK_DATAPLANE", s->network_dataplane);
    var(sc, "DNS_SERVICE_IP", s->dns_service_ip);
    var(sc, "API_SERVER_NAME", s->cluster_endpoint);
    var(sc, "KUBELET_BOOTSTRAP_TOKEN", s->bootstrap_token);
    var(sc, "KUBELET_IDENTITY_CLIENT_ID", s->kubelet_client_id);
    var(sc, "FIPS_ENABLED", nc->fips ? "true" : "false");
    var(sc, "NODECLAIM", req->nodeclaim_name);
    kubelet_flags(sc, nc, max_pods);
    joined_labels(sc, req);
    put(sc, "for i in $(seq 1 100); do [ -x /opt/azure/containers/provision.sh ] && break; sleep 3; done\n"
            "exec /opt/azure/containers/provision.sh\n");
}

/* $global:NAME='value' with the value single-quoted for PowerShell (a quote is doubled). */
static void psvar(script *sc, const char *name, const char *value)
{
    put(sc, "$global:");
    put(sc, name);
    put(sc, "='");
    for (const char *p = value ? value : ""; *p; p++) {
        char one[2] = {*p, 0};
        put(sc, *p == '\'' ? "''" : one);
    }
    put(sc, "'\n");
}

/* The Windows node's setup script, as AKS provisions Windows nodes: Windows writes customData to
 * C:\AzureData\CustomData.bin, the custom script extension (az_windows_cse_command) runs it as PowerShell with
 * -CSEResultFilePath, and the script writes 0 there or the error. It sets the globals AKS's Windows CSE scripts read
 * (their names), fetches that package and runs its steps: cluster config, Kubernetes binaries, containerd, bootstrap
 * kubeconfig with the TLS bootstrap token, kubelet and kube-proxy services, the CNI. */
static void windows_script(az_state *s, const az_nodeclass *nc, const ns_launch_request *req, const az_sku *k,
                           int max_pods, script *sc)
{
    char url[300];
    put(sc, "# nodesmith azure: AKS Windows node bootstrap (AKS's Windows CSE scripts do the work)\n"
            "param([Parameter(Mandatory=$true)][string]$CSEResultFilePath)\n$ErrorActionPreference = 'Stop'\n");
    psvar(sc, "MasterIP", s->cluster_endpoint);
    psvar(sc, "KubeDnsServiceIp", s->dns_service_ip);
    psvar(sc, "Location", s->location);
    psvar(sc, "TenantId", s->tenant);
    psvar(sc, "SubscriptionId", s->subscription);
    psvar(sc, "ResourceGroup", s->node_rg);
    psvar(sc, "VmType", "vm");
    psvar(sc, "VMSize", k->name);
    psvar(sc, "SubnetId", nc->subnet);
    psvar(sc, "NetworkPlugin", s->network_plugin);
    psvar(sc, "NetworkPluginMode", s->network_plugin_mode);
    psvar(sc, "KubeBinariesVersion", s->kubernetes_version);
    snprintf(url, sizeof(url), "https://packages.aks.azure.com/kubernetes/v%s/windowszip/v%s-1int.zip",
             s->kubernetes_version, s->kubernetes_version);
    psvar(sc, "KubeBinariesPackageSASURL", url);
    psvar(sc, "CSEScriptsPackageUrl", s->windows_cse_package);
    psvar(sc, "TLSBootstrapToken", s->bootstrap_token);
    psvar(sc, "KubeletIdentityClientId", s->kubelet_client_id);
    psvar(sc, "NodeClaim", req->nodeclaim_name);
    put(sc, "$global:KubeletNodeLabels='");
    label_list(sc, req);
    put(sc, "'\n$global:KubeletRegisterWithTaints='");
    taint_list(sc, req);
    put(sc, "'\n$global:KubeletConfigArgs=@( '");
    script flags = {0};
    kubelet_flag_list(&flags, nc, max_pods);
    for (const char *p = flags.buf ? flags.buf : ""; *p; p++) {
        char one[2] = {*p, 0};
        put(sc, *p == ' ' ? "', '" : one);
    }
    sc->failed |= flags.failed;
    free(flags.buf);
    put(sc, "' )\n$global:KubeDir = 'c:\\k'\n"
            "try {\n"
            "  $zip = 'C:\\AzureData\\windows-cse.zip'\n"
            "  Invoke-WebRequest -UseBasicParsing -Uri $global:CSEScriptsPackageUrl -OutFile $zip\n"
            "  Expand-Archive $zip -DestinationPath 'C:\\AzureData\\windows' -Force\n"
            "  Get-ChildItem 'C:\\AzureData\\windows' -Filter '*func.ps1' -Recurse | ForEach-Object { . $_.FullName }\n"
            "  New-Item -ItemType Directory -Force -Path $global:KubeDir | Out-Null\n"
            "  Write-KubeClusterConfig -MasterIP $global:MasterIP -KubeDnsServiceIp $global:KubeDnsServiceIp\n"
            "  Get-KubePackage -KubeBinariesSASURL $global:KubeBinariesPackageSASURL\n"
            "  Install-Containerd-Based-On-Kubernetes-Version -KubeDir $global:KubeDir "
            "-KubernetesVersion $global:KubeBinariesVersion\n"
            "  Write-BootstrapKubeConfig -KubeDir $global:KubeDir -MasterFQDNPrefix $global:MasterIP "
            "-MasterIP $global:MasterIP -TLSBootstrapToken $global:TLSBootstrapToken\n"
            "  Install-KubernetesServices -KubeDir $global:KubeDir\n"
            "  Check-APIServerConnectivity -MasterIP $global:MasterIP\n"
            "  Start-Service kubelet\n"
            "  Set-Content -Path $CSEResultFilePath -Value '0'\n"
            "} catch {\n"
            "  Set-Content -Path $CSEResultFilePath -Value \"ExitCode: |1|, Output: |NODESMITH_WINDOWS_BOOTSTRAP|, "
            "Error: |$_|\"\n  throw\n}\n");
}

int az_custom_data(az_state *s, const az_nodeclass *nc, const ns_launch_request *req, const az_sku *k, char **out)
{
    script sc = {0};
    ns_resources cap;
    az_sku_allocatable(s, k, nc, &cap);
    if (nc->user_data)
        put(&sc, nc->user_data);
    else if (nc->windows)
        windows_script(s, nc, req, k, (int)cap.pods, &sc);
    else
        bootstrap_script(s, nc, req, k, (int)cap.pods, &sc);
    if (sc.failed || !sc.buf) {
        free(sc.buf);
        return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "out of memory building the bootstrap for %s",
                        req->nodeclaim_name);
    }
    size_t b64_len = 4 * ((sc.len + 2) / 3) + 1;
    if (b64_len > 87381) {
        free(sc.buf);
        return NS_ERROR(s->host, s->ctx, NS_ERR_INVALID_CONFIG, "node class %s: customData would be %zu base64 "
                        "characters; Azure takes 87380", nc->name, b64_len - 1);
    }
    char *b64 = malloc(b64_len);
    if (!b64) {
        free(sc.buf);
        return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "out of memory encoding customData");
    }
    EVP_EncodeBlock((unsigned char *)b64, (const unsigned char *)sc.buf, (int)sc.len);
    memset(sc.buf, 0, sc.len); /* it holds the bootstrap token */
    free(sc.buf);
    *out = b64;
    return NS_OK;
}
