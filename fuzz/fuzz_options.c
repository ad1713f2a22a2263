/* Provider option files (plugins.d/NAME.yaml) and option values of every type. */
#include "config/scalar_parse.h"
#include "config/yaml_flat_map.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ns_flat_map map;
    if (ns_flat_map_parse("fuzz.yaml", (const char *)data, size, &map) != 0)
        return 0;
    for (size_t i = 0; i < map.n; i++) {
        int64_t n;
        bool b;
        ns_parse_int64(map.entries[i].value, &n);
        ns_parse_bool(map.entries[i].value, &b);
        ns_parse_duration_ms(map.entries[i].value, &n);
    }
    ns_flat_map_free(&map);
    return 0;
}
