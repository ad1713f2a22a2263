#include "ali_json.h"

#include <stdlib.h>

const ns_json *ali_json_list(const ns_host *h, const ns_json *o, const char *a, const char *b)
{
    const ns_json *v = h->json_get(o, a);
    if (b)
        v = h->json_get(v, b);
    return h->json_type(v) == NS_JSON_ARRAY ? v : NULL;
}

const char *ali_json_str(const ns_host *h, const ns_json *o, const char *key)
{
    return h->json_string(h->json_get(o, key));
}

double ali_json_num(const ns_host *h, const ns_json *o, const char *key, double fallback)
{
    const ns_json *v = h->json_get(o, key);
    if (h->json_type(v) == NS_JSON_NUMBER)
        return h->json_number(v);
    const char *s = h->json_string(v);
    char *end;
    double d = s ? strtod(s, &end) : 0;
    return s && end != s && !*end ? d : fallback;
}
