/* The Azure test fixture (azure_fixture.h). */
#include "azure_fixture.h"

#include "curl_body.h"

#include <check.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errors/ns_error.h"
#include "json/host_json.h"

static const char *need_env(const char *name)
{
    const char *v = getenv(name);
    ck_assert_msg(v && *v, "%s is not set: run under test/azure/with_emulator.py", name);
    return v;
}

static size_t fill_settings(const char *const *extra, ns_plugin_setting *out, char *urls, size_t urls_len)
{
    const char *url = need_env("AZURE_EMULATOR_URL");
    snprintf(urls, urls_len, "%s", url);
    size_t n = 0;
    out[n++] = (ns_plugin_setting){"cluster_name", "demo"};
    out[n++] = (ns_plugin_setting){"arm_endpoint", urls};
    out[n++] = (ns_plugin_setting){"prices_endpoint", urls};
    out[n++] = (ns_plugin_setting){"request_timeout", "3s"};
    for (size_t i = 0; extra && extra[i] && n < 30; i += 2)
        out[n++] = (ns_plugin_setting){extra[i], extra[i + 1]};
    return n;
}

ns_plugin *azf_load(const char *const *extra)
{
    ck_assert_int_eq(azf_control("clear", "{}", NULL), 200); /* a failed test's faults must not outlive it */
    ns_plugin_setting settings[32];
    char url[128];
    size_t n = fill_settings(extra, settings, url, sizeof(url));
    ns_plugin_load_params params = {.settings = settings, .n_settings = n};
    ns_plugin *p = NULL;
    int rc = ns_plugin_load_file(need_env("AZURE_PLUGIN"), &params, &p);
    ck_assert_msg(rc == NS_OK, "loading azure.so: %s", ns_error_message());
    return p;
}

int azf_load_fails(const char *const *extra, char *msg, size_t len)
{
    ns_plugin_setting settings[32];
    char url[128];
    size_t n = fill_settings(extra, settings, url, sizeof(url));
    ns_plugin_load_params params = {.settings = settings, .n_settings = n};
    ns_plugin *p = NULL;
    int rc = ns_plugin_load_file(need_env("AZURE_PLUGIN"), &params, &p);
    snprintf(msg, len, "%s", ns_error_message());
    ns_plugin_unload(p);
    return rc;
}

ns_nodeclass *azf_nodeclass(const char *api_version, const char *name, const char *spec_json)
{
    ns_nodeclass *nc = calloc(1, sizeof(*nc));
    ck_assert_ptr_nonnull(nc);
    ns_json *spec = ns_host_json_parse(spec_json, strlen(spec_json));
    ck_assert_msg(spec != NULL, "bad test spec %s", spec_json);
    *nc = (ns_nodeclass){sizeof(*nc), api_version, "AKSNodeClass", name, spec};
    return nc;
}

void azf_nodeclass_free(ns_nodeclass *nc)
{
    if (!nc)
        return;
    ns_host_json_free((ns_json *)nc->spec);
    free(nc);
}

long azf_control(const char *path, const char *json, char **answer)
{
    char url[512];
    snprintf(url, sizeof(url), "%s/_emulator/%s", need_env("AZURE_EMULATOR_URL"), path);
    CURL *c = curl_easy_init();
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    curl_body b = {NULL, 0};
    long status = 0;
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CAINFO, need_env("NODESMITH_CA_BUNDLE"));
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, curl_body_collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    if (json)
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, json);
    if (curl_easy_perform(c) == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    if (answer)
        *answer = b.data;
    else
        free(b.data);
    return status;
}

cJSON *azf_state(void)
{
    char *text = NULL;
    ck_assert_int_eq(azf_control("state", NULL, &text), 200);
    cJSON *doc = cJSON_Parse(text);
    free(text);
    ck_assert_ptr_nonnull(doc);
    return doc;
}

const cJSON *azf_vm(const cJSON *state, const char *name)
{
    const cJSON *vm;
    cJSON_ArrayForEach(vm, cJSON_GetObjectItemCaseSensitive(state, "vms")) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(vm, "name");
        if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0)
            return vm;
    }
    return NULL;
}

int azf_requests(const cJSON *state, const char *op)
{
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(state, "requests"), op);
    return cJSON_IsNumber(n) ? n->valueint : 0;
}

int azf_launch(ns_plugin *p, const ns_nodeclass *nc, const char *claim, const char *type, const char *zone,
               const char *capacity_type, ns_launch_result *out)
{
    ns_launch_option opt = {sizeof(opt), type, zone, capacity_type, 0.1};
    ns_label labels[] = {{"team", "a"}};
    ns_taint taints[] = {{"dedicated", "gpu", "NoSchedule"}};
    ns_launch_request req = {.struct_size = sizeof(req), .cluster_name = "demo", .nodeclaim_name = claim,
                             .nodepool_name = "default", .client_token = claim, .nodeclass = nc, .options = &opt,
                             .n_options = 1, .labels = labels, .n_labels = 1, .taints = taints, .n_taints = 1};
    *out = (ns_launch_result){.struct_size = sizeof(*out)};
    return ns_plugin_launch(p, &req, out);
}

static int count_types(void *ctx, const ns_instance_type *t)
{
    (void)t;
    (*(int *)ctx)++;
    return 0;
}

int azf_list_count(ns_plugin *p, const ns_nodeclass *nc)
{
    int n = 0;
    int rc = ns_plugin_list_instance_types(p, nc, count_types, &n);
    return rc == NS_OK ? n : rc;
}

const char *azf_fresh_claim(const char *prefix)
{
    static char name[64];
    static unsigned seq;
    snprintf(name, sizeof(name), "%s-%x-%u", prefix, (unsigned)getpid(), seq++);
    return name;
}
