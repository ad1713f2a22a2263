/* Manifests: multi-document YAML or JSON through the loader (every kind's decoder), then cross-object checks. */
#include "fuzz.h"
#include "log/ns_log.h"
#include "manifest/loader.h"
#include "model/cluster.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ns_log_set_level(NS_LOG_ERROR + 1);
    ns_cluster *c = ns_cluster_new();
    if (c && ns_manifest_load_string(c, "fuzz.yaml", (const char *)data, size) == 0)
        ns_cluster_resolve(c);
    ns_cluster_free(c);
    return 0;
}
