/* Disruption budget schedules: parse, then ask when the schedule fired last and whether it is active. */
#include <stdlib.h>

#include "fuzz.h"
#include "model/cron.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_strndup(data, size);
    ns_cron c;
    if (ns_cron_parse(text, &c) == 0) {
        bool active = false;
        int64_t hit;
        ns_cron_active(text, 3600000, INT64_C(1767225600000), &active);
        ns_cron_next(&c, INT64_C(1767225600000), INT64_C(1767225600000) + INT64_C(4) * 366 * 86400000, &hit);
        ns_cron_prev(&c, INT64_C(1767225600000), INT64_C(1767225600000) - INT64_C(4) * 366 * 86400000, &hit);
    }
    free(text);
    return 0;
}
