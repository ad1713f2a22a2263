#include "sim_fixture.h"

#include <check.h>
#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errors/ns_error.h"

#define SIM_FX_MAX_SETTINGS 16

static int sim_fx_vload(const char *so_path, ns_plugin **out, const char *first_key, va_list ap)
{
    ns_plugin_setting settings[SIM_FX_MAX_SETTINGS];
    size_t n = 0;
    for (const char *key = first_key; key; key = va_arg(ap, const char *)) {
        ck_assert_uint_lt(n, SIM_FX_MAX_SETTINGS);
        settings[n].key = key;
        settings[n].value = va_arg(ap, const char *);
        n++;
    }
    ns_plugin_load_params params = {.config_path = NULL, .settings = settings, .n_settings = n};
    *out = NULL;
    return ns_plugin_load_file(so_path, &params, out);
}

int sim_fx_try_load(const char *so_path, ns_plugin **out, ...)
{
    va_list ap;
    va_start(ap, out);
    const char *first = va_arg(ap, const char *);
    int rc = sim_fx_vload(so_path, out, first, ap);
    va_end(ap);
    return rc;
}

ns_plugin *sim_fx_load(const char *first_key, ...)
{
    ns_plugin_setting hooks = {"test_hooks", "true"};
    ns_plugin_setting settings[SIM_FX_MAX_SETTINGS] = {hooks};
    size_t n = 1;
    va_list ap;
    va_start(ap, first_key);
    for (const char *key = first_key; key; key = va_arg(ap, const char *)) {
        ck_assert_uint_lt(n, SIM_FX_MAX_SETTINGS);
        settings[n].key = key;
        settings[n].value = va_arg(ap, const char *);
        n++;
    }
    va_end(ap);
    ns_plugin_load_params params = {.config_path = NULL, .settings = settings, .n_settings = n};
    ns_plugin *p = NULL;
    int rc = ns_plugin_load_file(SIM_SO, &params, &p);
    ck_assert_msg(rc == NS_OK, "loading %s failed (%d): %s", SIM_SO, rc, ns_error_message());
    return p;
}

sim_fx_nodeclass *sim_fx_nodeclass_new(const char *api_version, const char *kind, const char *spec_json)
{
    sim_fx_nodeclass *nc = calloc(1, sizeof(*nc));
    ck_assert_ptr_nonnull(nc);
    nc->spec = cJSON_Parse(spec_json);
    ck_assert_msg(nc->spec != NULL, "test node class spec is not JSON: %s", spec_json);
    nc->abi.struct_size = sizeof(nc->abi);
    nc->abi.api_version = api_version;
    nc->abi.kind = kind;
    nc->abi.name = "default";
    nc->abi.spec = (const ns_json *)nc->spec;
    return nc;
}

sim_fx_nodeclass *sim_fx_sim_nodeclass(const char *spec_json)
{
    return sim_fx_nodeclass_new("nodesmith.io/v1", "SimNodeClass", spec_json);
}

void sim_fx_nodeclass_free(sim_fx_nodeclass *nc)
{
    if (!nc)
        return;
    cJSON_Delete(nc->spec);
    free(nc);
}

void sim_fx_types(ns_plugin *p, const ns_nodeclass *nc, ns_itype_set *set)
{
    int rc = ns_itype_set_load(p, nc, set);
    ck_assert_msg(rc == NS_OK, "list_instance_types failed (%d): %s", rc, ns_error_message());
}

const ns_itype_offering *sim_fx_offering(const ns_itype *t, const char *zone, const char *capacity_type)
{
    for (size_t i = 0; i < t->n_offerings; i++)
        if (strcmp(t->offerings[i].zone, zone) == 0 && strcmp(t->offerings[i].capacity_type, capacity_type) == 0)
            return &t->offerings[i];
    return NULL;
}

int sim_fx_launch(ns_plugin *p, const ns_nodeclass *nc, const char *nodeclaim, const char *token,
                  const sim_fx_option *options, size_t n_options, ns_launch_result *out)
{
    ns_launch_option opts[32];
    ck_assert_uint_le(n_options, 32);
    for (size_t i = 0; i < n_options; i++) {
        memset(&opts[i], 0, sizeof(opts[i]));
        opts[i].struct_size = sizeof(opts[i]);
        opts[i].instance_type = options[i].instance_type;
        opts[i].zone = options[i].zone;
        opts[i].capacity_type = options[i].capacity_type;
    }
    sim_fx_nodeclass *fallback = nc ? NULL : sim_fx_sim_nodeclass("{}");
    ns_launch_request req;
    memset(&req, 0, sizeof(req));
    req.struct_size = sizeof(req);
    req.cluster_name = "test-cluster";
    req.nodeclaim_name = nodeclaim;
    req.nodepool_name = "default";
    req.client_token = token ? token : nodeclaim;
    req.nodeclass = nc ? nc : &fallback->abi;
    req.options = opts;
    req.n_options = n_options;
    int rc = ns_plugin_launch(p, &req, out);
    sim_fx_nodeclass_free(fallback);
    return rc;
}

void sim_fx_launch_one(ns_plugin *p, const char *nodeclaim, ns_launch_result *out)
{
    sim_fx_option opt = {"m5.large", "us-west-2a", NS_CAPACITY_ON_DEMAND};
    int rc = sim_fx_launch(p, NULL, nodeclaim, NULL, &opt, 1, out);
    ck_assert_msg(rc == NS_OK, "launch of %s failed (%d): %s", nodeclaim, rc, ns_error_message());
}

static int sim_fx_count_cb(void *ctx, const ns_instance *inst)
{
    (void)inst;
    (*(size_t *)ctx)++;
    return 0;
}

size_t sim_fx_count_instances(ns_plugin *p)
{
    size_t n = 0;
    int rc = ns_plugin_list_instances(p, sim_fx_count_cb, &n);
    ck_assert_msg(rc == NS_OK, "list_instances failed (%d): %s", rc, ns_error_message());
    return n;
}

char *sim_fx_write_temp(const char *text)
{
    char *path = strdup("/tmp/nodesmith-sim-XXXXXX.json");
    ck_assert_ptr_nonnull(path);
    int fd = mkstemps(path, 5);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}
