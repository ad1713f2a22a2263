/* Reading Alibaba Cloud's JSON answers, whose lists come wrapped ({"InstanceTypes": {"InstanceType": [...]}}). */
#ifndef NS_ALI_JSON_H
#define NS_ALI_JSON_H

#include <nodesmith/provider.h>

/* o[a][b] (b may be NULL): the wrapped list, or NULL. */
const ns_json *ali_json_list(const ns_host *h, const ns_json *o, const char *a, const char *b);
const char *ali_json_str(const ns_host *h, const ns_json *o, const char *key);
/* A number, or a number written as a string; `fallback` when absent. */
double ali_json_num(const ns_host *h, const ns_json *o, const char *key, double fallback);

#endif
