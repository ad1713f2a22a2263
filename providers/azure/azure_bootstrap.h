/* What a VM boots with: the node image of a family and the AKS bootstrap script carried in customData. */
#ifndef NS_AZURE_BOOTSTRAP_H
#define NS_AZURE_BOOTSTRAP_H

#include "azure_provider.h"

/* The imageReference JSON member for a size under a node class: the node class's own image (extension), the
 * Windows Server marketplace image, or the AKS community gallery node image of the family, generation and
 * architecture at the provider's image version. `ref` gets the image's ID, as drift compares it. */
int az_image_for(az_state *s, const az_nodeclass *nc, const az_sku *k, ns_json **image, char *ref, size_t len);

/* customData: base64 of the node class's userData (extension), else of the AKS bootstrap script. The caller frees
 * *out with free(). */
int az_custom_data(az_state *s, const az_nodeclass *nc, const ns_launch_request *req, const az_sku *k, char **out);

#endif
