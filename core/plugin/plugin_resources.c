#include "plugin/plugin_resources.h"

#include <string.h>

#include "errors/ns_error.h"

int ns_res_from_abi(const ns_resources *src, ns_res *dst, const char *what)
{
    ns_res_free(dst);
    if (src->n_extended > NS_MAX_EXTENDED_RESOURCES)
        return NS_FAIL(NS_ERR_INVALID_CONFIG, "%s: %u extended resources, the ABI allows at most %d", what,
                       (unsigned)src->n_extended, NS_MAX_EXTENDED_RESOURCES);
    dst->cpu_milli = src->cpu_milli;
    dst->memory_bytes = src->memory_bytes;
    dst->pods = src->pods;
    dst->ephemeral_storage_bytes = src->ephemeral_storage_bytes;
    for (uint32_t i = 0; i < src->n_extended; i++) {
        const ns_extended_resource *e = &src->extended[i];
        int rc = memchr(e->name, '\0', sizeof(e->name))
                     ? ns_res_set(dst, e->name, e->value)
                     : NS_FAIL(NS_ERR_INVALID_CONFIG, "%s: extended resource %u has no terminating NUL in its %d-byte "
                               "name", what, (unsigned)i, NS_NAME_MAX);
        if (rc < 0) {
            ns_res_free(dst);
            return rc;
        }
    }
    return 0;
}
