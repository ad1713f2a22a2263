/* Timelines: steps, engine settings, inline manifests and patches. */
#include "fuzz.h"
#include "log/ns_log.h"
#include "simulation/timeline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ns_log_set_level(NS_LOG_ERROR + 1);
    ns_timeline *t = NULL;
    ns_timeline_load_string("fuzz.yaml", (const char *)data, size, NULL, &t);
    ns_timeline_free(t);
    return 0;
}
