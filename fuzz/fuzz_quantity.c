/* Quantities at both scales, durations, and their formatting back. */
#include <stdlib.h>

#include "fuzz.h"
#include "model/duration.h"
#include "model/quantity.h"
#include "model/resources.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_strndup(data, size);
    char buf[64];
    int64_t v;
    if (ns_quantity_parse(text, NS_QTY_MILLI, "q", &v, NULL) == 0)
        ns_quantity_format(v, NS_QTY_MILLI, false, buf, sizeof(buf));
    if (ns_quantity_parse(text, NS_QTY_UNITS, "q", &v, NULL) == 0)
        ns_quantity_format(v, NS_QTY_UNITS, true, buf, sizeof(buf));
    if (ns_duration_parse(text, true, "d", &v) == 0)
        ns_duration_format(v, buf, sizeof(buf));
    ns_res r = {0}, sum = {0};
    if (ns_res_set_text(&r, "memory", text, "m") == 0 && ns_res_add(&sum, &r) == 0)
        ns_res_add(&sum, &r);
    ns_res_free(&r);
    ns_res_free(&sum);
    free(text);
    return 0;
}
