/*
 * The skeleton's own node class, SkeletonNodeClass (skeleton.nodesmith.example/v1alpha1). The core loads node classes
 * of exactly the kinds a loaded provider declares (sk_kinds in skeleton_provider.c) and calls validate_nodeclass on
 * each as a manifest loads it, so a mistake is reported with this message before anything is launched.
 *
 * Its one field: spec.diskGiB, the root volume size, a whole number from 8 to 16384 (default 20).
 */
#include <string.h>

#include "skeleton.h"

int sk_validate_nodeclass(void *state, const ns_nodeclass *nodeclass)
{
    sk_state *st = state;
    const ns_host *h = st->host;
    size_t n = h->json_size(nodeclass->spec);

    for (size_t i = 0; i < n; i++) {
        const char *key = h->json_key(h->json_at(nodeclass->spec, i));
        if (strcmp(key, "diskGiB") != 0)
            return NS_ERROR(h, st->ctx, NS_ERR_INVALID_CONFIG, "%s %s: unknown field spec.%s (known: diskGiB)",
                            nodeclass->kind, nodeclass->name, key);
    }
    const ns_json *disk = h->json_get(nodeclass->spec, "diskGiB");
    double gib = disk && h->json_type(disk) == NS_JSON_NUMBER ? h->json_number(disk) : 20;
    if (disk && (h->json_type(disk) != NS_JSON_NUMBER || gib != (double)(int64_t)gib || gib < 8 || gib > 16384))
        return NS_ERROR(h, st->ctx, NS_ERR_INVALID_CONFIG, "%s %s: spec.diskGiB must be a whole number from 8 to 16384",
                        nodeclass->kind, nodeclass->name);
    return NS_OK;
}
