/*
 * nodeclass_status (ABI 4): an AKSNodeClass's status as the reference port's status controller writes it
 * (pkg/controllers/nodeclass/status): images [{id, requirements}], kubernetesVersion, localDNSState (v1beta1) and
 * the conditions ValidationSucceeded, KubernetesVersionReady, ImagesReady, SubnetsReady, LocalDNSReady (v1beta1).
 * Read only: the subnet and each community gallery image version are looked up in ARM (GET), nothing is written.
 *
 *   ValidationSucceeded  False (ValidationFailed) with the refusal's words when the spec is refused; nothing else is
 *                        resolved then.
 *   KubernetesVersionReady  the provider's kubernetes_version (the reference port asks the cluster; here the operator
 *                        sets it).
 *   ImagesReady          the family's gallery definitions (gen2 and gen1 amd64, gen2 arm64) at the pinned version
 *                        that the community gallery has; False ImagesNotFound when it has none; False
 *                        SIGRequiredForFIPS for FIPS without spec.imageID. spec.imageID (extension): that image, for
 *                        every size; Windows families (extension): the marketplace image, amd64 only.
 *   SubnetsReady         False SubnetNotFound when ARM has no such subnet.
 *   LocalDNSReady        Required -> Enabled, Disabled or unset -> Disabled; Preferred -> Disabled when a static
 *                        gate fails (Kubernetes below 1.36, network plugin none), else Unknown: the cluster gates need
 *                        the Kubernetes API, which a provider does not read.
 * An ARM failure other than "not found" (throttling, authorization) is the call's error: the status is unknown.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "azure_arm.h"
#include "azure_bootstrap.h"
#include "azure_provider.h"
#include "status_doc.h"

static void image(status_doc *d, ns_json *images, const char *id, const char *arch, const char *generation)
{
    ns_json *img = status_doc_put(d, images, NULL, d->h->json_new_object());
    if (!img)
        return;
    status_doc_put(d, img, "id", d->h->json_new_string(id));
    ns_json *reqs = status_doc_put(d, img, "requirements", d->h->json_new_array());
    if (reqs && arch)
        status_doc_requirement(d, reqs, "kubernetes.io/arch", "In", arch);
    if (reqs && generation)
        status_doc_requirement(d, reqs, "karpenter.azure.com/sku-hyperv-generation", "In", generation);
}

/* NS_OK (found), NS_ERR_NOT_FOUND, or the error of the GET. */
static int arm_exists(az_state *s, const char *path, const char *api, const char *what)
{
    az_arm_result r;
    int rc = az_arm_call(s, "GET", path, api, NULL, what, &r, NULL);
    if (rc == NS_OK)
        az_arm_result_clear(s, &r);
    return rc;
}

static int gallery_images(az_state *s, status_doc *d, const az_nodeclass *nc)
{
    const char *gallery, *version;
    az_gallery_image defs[3];
    size_t n = az_gallery_images(s, nc, &gallery, &version, defs);
    ns_json *images = NULL;
    for (size_t i = 0; i < n; i++) {
        char path[600], what[200], id[400];
        snprintf(path, sizeof(path), "/subscriptions/%s/providers/Microsoft.Compute/locations/%s/communityGalleries/"
                 "%s/images/%s/versions/%s", s->subscription, s->location, gallery, defs[i].definition, version);
        snprintf(what, sizeof(what), "GET community gallery image %s version %s", defs[i].definition, version);
        int rc = arm_exists(s, path, AZ_API_GALLERY, what);
        if (rc == NS_ERR_NOT_FOUND)
            continue;
        if (rc < 0)
            return rc;
        if (!images && !(images = status_doc_put(d, d->status, "images", d->h->json_new_array())))
            return NS_OK;
        snprintf(id, sizeof(id), "/CommunityGalleries/%s/images/%s/versions/%s", gallery, defs[i].definition, version);
        image(d, images, id, defs[i].arch, defs[i].generation);
    }
    if (images) {
        status_doc_ready(d, "ImagesReady");
        return NS_OK;
    }
    char message[400];
    snprintf(message, sizeof(message), "community gallery %s has no image of family %s at version %s", gallery,
             nc->image_family, version);
    status_doc_condition(d, "ImagesReady", "False", "ImagesNotFound", message);
    return NS_OK;
}

static int images(az_state *s, status_doc *d, const az_nodeclass *nc)
{
    if (nc->image_id[0]) {
        ns_json *list = status_doc_put(d, d->status, "images", d->h->json_new_array());
        if (list)
            image(d, list, nc->image_id, NULL, NULL);
        status_doc_ready(d, "ImagesReady");
        return NS_OK;
    }
    if (nc->fips) {
        status_doc_condition(d, "ImagesReady", "False", "SIGRequiredForFIPS", AZ_FIPS_NO_IMAGE);
        return NS_OK;
    }
    if (nc->windows) {
        ns_json *img = NULL, *list = status_doc_put(d, d->status, "images", d->h->json_new_array());
        char ref[200];
        /* the image reference does not depend on the size for Windows: any x64 Hyper-V generation 2 size */
        az_sku k = {.hyperv_v2 = true};
        snprintf(k.arch, sizeof(k.arch), "amd64");
        if (list && az_image_for(s, nc, &k, &img, ref, sizeof(ref)) == NS_OK) {
            s->host->json_free(img);
            image(d, list, ref, "amd64", NULL);
        }
        status_doc_ready(d, "ImagesReady");
        return NS_OK;
    }
    return gallery_images(s, d, nc);
}

static int subnet(az_state *s, status_doc *d, const az_nodeclass *nc)
{
    char what[700];
    snprintf(what, sizeof(what), "GET subnet %s", nc->subnet);
    int rc = arm_exists(s, nc->subnet, AZ_API_NETWORK, what);
    if (rc == NS_OK) {
        status_doc_ready(d, "SubnetsReady");
        return NS_OK;
    }
    if (rc != NS_ERR_NOT_FOUND)
        return rc;
    char message[700];
    snprintf(message, sizeof(message), "resource not found: %s", nc->subnet);
    status_doc_condition(d, "SubnetsReady", "False", "SubnetNotFound", message);
    return NS_OK;
}

/* Kubernetes at least major.minor. */
static bool k8s_at_least(const char *version, int major, int minor)
{
    int ma = 0, mi = 0;
    if (sscanf(version[0] == 'v' ? version + 1 : version, "%d.%d", &ma, &mi) != 2)
        return false;
    return ma > major || (ma == major && mi >= minor);
}

static void local_dns(az_state *s, status_doc *d, const az_nodeclass *nc)
{
    const char *mode = nc->local_dns_mode, *state = "Disabled";
    if (strcmp(mode, "Required") == 0)
        state = "Enabled";
    if (strcmp(mode, "Preferred") == 0 && k8s_at_least(s->kubernetes_version, 1, 36) &&
        strcmp(s->network_plugin, "none") != 0) {
        status_doc_condition(d, "LocalDNSReady", "Unknown", "ClusterRequirementsUnchecked",
                  "spec.localDNS.mode Preferred: the cluster's gates (conflicting NetworkPolicies, an upstream "
                  "node-local-dns DaemonSet) need the Kubernetes API, which the azure provider does not read; set "
                  "mode Required or Disabled");
        return;
    }
    status_doc_put(d, d->status, "localDNSState", d->h->json_new_string(state));
    status_doc_ready(d, "LocalDNSReady");
}

static int resolve(az_state *s, status_doc *d, const az_nodeclass *nc)
{
    status_doc_ready(d, "ValidationSucceeded");
    status_doc_put(d, d->status, "kubernetesVersion", d->h->json_new_string(s->kubernetes_version));
    status_doc_ready(d, "KubernetesVersionReady");
    int rc = images(s, d, nc);
    if (rc == NS_OK)
        rc = subnet(s, d, nc);
    if (rc == NS_OK && !nc->v1alpha2)
        local_dns(s, d, nc);
    return rc;
}

int az_nodeclass_status(void *state, const ns_nodeclass *nodeclass, ns_json **status)
{
    az_state *s = state;
    const ns_host *h = s->host;
    *status = NULL;
    az_nodeclass *nc = malloc(sizeof(*nc));
    status_doc d;
    bool opened = status_doc_open(&d, h);
    int rc;
    if (!nc || !opened) {
        rc = NS_ERROR(h, s->ctx, NS_ERR_INTERNAL, "nodeclass_status %s: out of memory", nodeclass->name);
        goto fail;
    }
    rc = az_nodeclass_read(s, nodeclass, nc);
    if (rc == NS_ERR_INVALID_CONFIG) {
        /* a refused spec is a status, not a failure: the refusal's words become the condition's */
        status_doc_condition(&d, "ValidationSucceeded", "False", "ValidationFailed", nc->why);
        rc = NS_OK;
    } else if (rc == NS_OK) {
        rc = resolve(s, &d, nc);
    }
    if (rc == NS_OK && d.oom)
        rc = NS_ERROR(h, s->ctx, NS_ERR_INTERNAL, "nodeclass_status %s: out of memory", nodeclass->name);
    if (rc == NS_OK)
        *status = status_doc_take(&d);
fail:
    free(nc);
    status_doc_close(&d);
    return rc;
}
