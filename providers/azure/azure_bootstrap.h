/* What a VM boots with: the node image of a family and the AKS bootstrap script carried in customData. */
#ifndef NS_AZURE_BOOTSTRAP_H
#define NS_AZURE_BOOTSTRAP_H

#include "azure_provider.h"

/* Why a FIPS node class needs spec.imageID (the reference port's SIGRequiredForFIPS). */
#define AZ_FIPS_NO_IMAGE                                                                                              \
    "spec.fipsMode FIPS: AKS publishes FIPS node images only in its shared image gallery (node auto-provisioning), " \
    "not in the community galleries this provider launches from; set spec.imageID to a FIPS image"

/* The node images of the family in the AKS community galleries: the definitions (Hyper-V generation 2 and 1 for
 * amd64, generation 2 for arm64) at the version the node class or the provider pins. Fills the gallery's name and up to
 * three definitions with their architecture and generation; returns how many. Not for Windows, FIPS or imageID. */
typedef struct az_gallery_image {
    char definition[32];
    const char *arch; /* "amd64" | "arm64" */
    const char *generation; /* "1" | "2" */
} az_gallery_image;
size_t az_gallery_images(const az_state *s, const az_nodeclass *nc, const char **gallery, const char **version,
                         az_gallery_image out[3]);

/* The imageReference JSON member for a size under a node class: the node class's own image (extension), the
 * Windows Server marketplace image, or the AKS community gallery node image of the family, generation and
 * architecture at the provider's image version. `ref` gets the image's ID, as drift compares it. */
int az_image_for(az_state *s, const az_nodeclass *nc, const az_sku *k, ns_json **image, char *ref, size_t len);

/* customData: base64 of the node class's userData (extension), else of the AKS bootstrap script. The caller frees
 * *out with free(). */
int az_custom_data(az_state *s, const az_nodeclass *nc, const ns_launch_request *req, const az_sku *k, char **out);

#endif
