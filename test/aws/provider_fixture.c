#include "provider_fixture.h"

#include <check.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emulator_json.h"

emulator pf_emu;
const ns_provider *pf_provider;
fake_host pf_host;
void *pf_state;

int pf_start(void)
{
    const char *plugin = getenv("AWS_PLUGIN");
    void *handle = plugin ? dlopen(plugin, RTLD_NOW | RTLD_LOCAL) : NULL;
    ns_provider_entry_fn entry = handle ? (ns_provider_entry_fn)dlsym(handle, NS_PROVIDER_ENTRY) : NULL;
    if (!entry) {
        fprintf(stderr, "cannot load the aws provider from %s: %s\n", plugin ? plugin : "(AWS_PLUGIN unset)",
                dlerror());
        return -1;
    }
    pf_provider = entry();
    if (emulator_start(&pf_emu) != 0)
        return -1;
    emulator_export_env(&pf_emu);
    return 0;
}

void pf_stop(void)
{
    emulator_stop(&pf_emu);
}

void pf_option(const char *key, const char *value)
{
    fake_host_set_option(&pf_host, key, value);
}

void pf_reinit(void)
{
    if (pf_state)
        pf_provider->destroy(pf_state);
    pf_state = NULL;
    ck_assert_msg(pf_provider->init(&pf_host.table, (ns_host_ctx *)&pf_host, &pf_state) == NS_OK, "init: %s",
                  pf_host.last_error_message);
}

void pf_setup(void)
{
    static char control[96];
    ck_assert_int_eq(emulator_control(&pf_emu, "/_emulator/clear", "{}", NULL), 200);
    ck_assert_int_eq(emulator_control(&pf_emu, "/_emulator/clock", "{\"offset_s\":0}", NULL), 200);
    fake_host_init(&pf_host);
    snprintf(control, sizeof(control), "%s/_emulator", pf_emu.url);
    /* the option table's defaults; durations in milliseconds, as the fake host reads them */
    pf_option("cluster_name", "demo");
    pf_option("interruption_queue", "nodesmith-interruptions");
    pf_option("kubernetes_version", "1.30");
    pf_option("catalog_ttl", "300000");
    pf_option("pricing_ttl", "43200000");
    pf_option("max_attempts", "3");
    pf_option("request_timeout", "30000");
    pf_option("test_hooks", "false");
    pf_option("test_control_url", control);
    pf_state = NULL;
    pf_reinit();
}

void pf_teardown(void)
{
    if (pf_state)
        pf_provider->destroy(pf_state);
    pf_state = NULL;
}

ns_nodeclass pf_nodeclass(cJSON **spec, const char *kind, const char *name, const char *spec_text)
{
    *spec = cJSON_Parse(spec_text);
    ck_assert_msg(*spec != NULL, "bad test JSON: %s", spec_text);
    bool legacy = strcmp(kind, "AWSNodeTemplate") == 0;
    return (ns_nodeclass){sizeof(ns_nodeclass), legacy ? "karpenter.k8s.aws/v1alpha1" : "karpenter.k8s.aws/v1", kind,
                          name, (const ns_json *)*spec};
}

ns_launch_request pf_request(const ns_nodeclass *nc, const ns_launch_option *options, size_t n, const char *token)
{
    return (ns_launch_request){.struct_size = sizeof(ns_launch_request),
                               .cluster_name = "demo",
                               .nodeclaim_name = token,
                               .nodepool_name = "default",
                               .client_token = token,
                               .nodeclass = nc,
                               .options = options,
                               .n_options = n};
}

void pf_token(char *buf, size_t len, const char *prefix)
{
    static int serial;
    snprintf(buf, len, "%s-%d-%lld-%d", prefix, getpid(), (long long)pf_host.clock_ms % 1000000, ++serial);
}

void pf_control(const char *path, const char *json)
{
    ck_assert_int_eq(emulator_control(&pf_emu, path, json, NULL), 200);
}

cJSON *pf_control_get(const char *path)
{
    return emulator_get_json(&pf_emu, path);
}

const cJSON *pf_template(cJSON **all, const char *id)
{
    *all = pf_control_get("/_emulator/launch_templates");
    const cJSON *t;
    cJSON_ArrayForEach(t, *all)
        if (strcmp(cJSON_GetObjectItemCaseSensitive(t, "id")->valuestring, id) == 0)
            return t;
    return NULL;
}

const cJSON *pf_last_fleet(cJSON **all)
{
    *all = pf_control_get("/_emulator/fleets");
    int n = cJSON_GetArraySize(*all);
    return n ? cJSON_GetArrayItem(*all, n - 1) : NULL;
}

const cJSON *pf_instance(cJSON **all, const char *provider_id)
{
    *all = pf_control_get("/_emulator/state");
    const char *id = strrchr(provider_id, '/');
    const cJSON *i;
    cJSON_ArrayForEach(i, cJSON_GetObjectItemCaseSensitive(*all, "instances"))
        if (id && strcmp(cJSON_GetObjectItemCaseSensitive(i, "id")->valuestring, id + 1) == 0)
            return i;
    return NULL;
}
