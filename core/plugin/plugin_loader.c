#include "plugin/plugin_loader.h"

#include <dlfcn.h>
#include <errno.h>
#include <libgen.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errors/ns_error.h"
#include "log/ns_log.h"
#include "model/nodeclass_kinds.h"
#include "model/req_defaults.h"
#include "plugin/plugin_internal.h"
#include "plugin/plugin_watchdog.h"

#define END_OF(member) (offsetof(ns_provider, member) + sizeof(((ns_provider *)0)->member))

/* The one definition of each version's minimum table, used by the loader and the conformance suite. Optional fields
 * added to a released version (drift_fields in ABI 2) never count here: they are read when struct_size covers them. */
size_t ns_plugin_min_table_size(uint32_t abi_version)
{
    switch (abi_version) {
    case 1: return END_OF(poll_events);
    case 2: return END_OF(test_inject_fault);
    case 3: return END_OF(n_nodeclass_kinds);
    case 4: return END_OF(nodeclass_status);
    case 5: return END_OF(event_from_node_condition);
    case 6: return END_OF(v1alpha5_defaults);
    case 7: return END_OF(v1alpha5_defaults); /* ABI 7 added no method */
    default: return 0;
    }
}

/* Fields a version reads when the table reaches them, beyond its minimum. */
static const struct {
    uint32_t abi_version;
    size_t end;
} optional_fields[] = {
    {2, END_OF(drift_fields)},
};

static size_t readable_table_size(uint32_t abi_version, uint32_t struct_size)
{
    size_t n = ns_plugin_min_table_size(abi_version);
    for (size_t i = 0; i < sizeof(optional_fields) / sizeof(optional_fields[0]); i++)
        if (optional_fields[i].abi_version == abi_version && struct_size >= optional_fields[i].end &&
            optional_fields[i].end > n)
            n = optional_fields[i].end;
    return n;
}

/* A plugin anyone but its owner can rewrite is a way to run code as the controller: refuse it, and the same for
 * the directory, where a replacement file could be dropped. */
static int check_not_writable_by_others(const char *path, const char *what)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return NS_FAIL(errno == ENOENT ? NS_ERR_NOT_FOUND : NS_ERR_INVALID_CONFIG, "%s %s: cannot stat: %s", what,
                       path, strerror(errno));
    if (st.st_mode & (S_IWGRP | S_IWOTH))
        return NS_FAIL(NS_ERR_INVALID_CONFIG,
                       "%s %s is writable by %s (mode %04o); refusing to load code others can replace "
                       "(chmod go-w it)",
                       what, path, (st.st_mode & S_IWOTH) ? "everyone" : "its group", (unsigned)(st.st_mode & 07777));
    return NS_OK;
}

typedef struct method_req {
    const char *name;
    size_t offset;
    uint32_t since;
} method_req;

#define REQUIRED(method, version) {#method, offsetof(ns_provider, method), version}

static const method_req required_methods[] = {
    REQUIRED(init, 1),          REQUIRED(destroy, 1),        REQUIRED(list_instance_types, 1),
    REQUIRED(launch, 1),        REQUIRED(terminate, 1),      REQUIRED(list_instances, 1),
    REQUIRED(poll_events, 1),   REQUIRED(get_instance, 2),
};

static int check_required(const char *path, const ns_provider *t)
{
    for (size_t i = 0; i < sizeof(required_methods) / sizeof(required_methods[0]); i++) {
        const method_req *m = &required_methods[i];
        if (t->abi_version < m->since)
            continue;
        void *fn;
        memcpy(&fn, (const char *)t + m->offset, sizeof(fn));
        if (!fn)
            return NS_FAIL(NS_ERR_INVALID_CONFIG, "plugin %s: required method '%s' (ABI %u) is NULL", path, m->name,
                           m->since);
    }
    if (!t->name || !*t->name)
        return NS_FAIL(NS_ERR_INVALID_CONFIG, "plugin %s: the provider table has no name", path);
    if (!t->version || !*t->version)
        return NS_FAIL(NS_ERR_INVALID_CONFIG, "plugin %s: the provider table has no version", path);
    return NS_OK;
}

/* ABI 3: at least one declared node-class kind, each well formed (checked by adding them to a scratch registry). */
static int check_kinds(const char *path, ns_plugin *p)
{
    if (!p->table.nodeclass_kinds || p->table.n_nodeclass_kinds == 0)
        return NS_FAIL(NS_ERR_INVALID_CONFIG,
                       "plugin %s: provider %s claims ABI %u but declares no node-class kinds (nodeclass_kinds)", path,
                       p->table.name, p->table.abi_version);
    ns_nodeclass_kinds *k = ns_nodeclass_kinds_new();
    int rc = k ? ns_plugin_declare_kinds(p, k) : NS_ERR_INTERNAL;
    ns_nodeclass_kinds_free(k);
    return rc == NS_OK ? NS_OK : ns_error_prefix("plugin %s: ", path);
}

static char *name_from_path(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t len = strlen(base);
    if (len > 3 && strcmp(base + len - 3, ".so") == 0)
        len -= 3;
    return strndup(base, len);
}

typedef struct entry_call {
    ns_provider_entry_fn entry;
    const ns_provider *table;
} entry_call;

static int run_entry(void *arg)
{
    entry_call *e = arg;
    e->table = e->entry();
    return NS_OK;
}

/* The entry function is the plugin's code too: it runs under the watchdog, named by the plugin's path. */
static int call_entry(const char *path, ns_provider_entry_fn entry, int64_t timeout_ms, const ns_provider **out)
{
    entry_call *e = calloc(1, sizeof(*e));
    if (!e)
        return NS_FAIL(NS_ERR_INTERNAL, "plugin %s: out of memory", path);
    e->entry = entry;
    ns_call *h;
    int rc = ns_call_run(path, NS_PROVIDER_ENTRY, timeout_ms, run_entry, e, free, &h, NULL);
    if (!h) {
        free(e);
        return rc;
    }
    *out = e->table;
    ns_call_release(h);
    return rc == NS_OK ? NS_OK : ns_error_prefix("plugin %s: %s(): ", path, NS_PROVIDER_ENTRY);
}

static int open_module(const char *path, ns_plugin *p)
{
    char *dir_copy = strdup(path);
    if (!dir_copy)
        return NS_FAIL(NS_ERR_INTERNAL, "plugin %s: out of memory", path);
    int rc = check_not_writable_by_others(dirname(dir_copy), "plugins directory");
    free(dir_copy);
    if (rc == NS_OK)
        rc = check_not_writable_by_others(path, "plugin");
    if (rc != NS_OK)
        return rc;
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!handle)
        return NS_FAIL(NS_ERR_INVALID_CONFIG, "plugin %s: cannot be loaded: %s", path, dlerror());
    /* Never dlclose: with RTLD_NODELETE the module stays mapped anyway, and threads may still be in its code. */
    dlerror();
    void *sym = dlsym(handle, NS_PROVIDER_ENTRY);
    if (!sym)
        return NS_FAIL(NS_ERR_INVALID_CONFIG, "plugin %s: missing entry symbol '%s'", path, NS_PROVIDER_ENTRY);
    ns_provider_entry_fn entry;
    memcpy(&entry, &sym, sizeof(entry));
    const ns_provider *t = NULL;
    if (call_entry(path, entry, p->call_timeout_ms, &t) < 0)
        return NS_ERR_INVALID_CONFIG;
    if (!t)
        return NS_FAIL(NS_ERR_INVALID_CONFIG, "plugin %s: %s() returned NULL", path, NS_PROVIDER_ENTRY);
    if (t->abi_version < NS_PROVIDER_ABI_MIN || t->abi_version > NS_PROVIDER_ABI_VERSION)
        return NS_FAIL(NS_ERR_INVALID_CONFIG, "plugin %s: built for provider ABI %u; this nodesmith supports %d to %d",
                       path, t->abi_version, NS_PROVIDER_ABI_MIN, NS_PROVIDER_ABI_VERSION);
    size_t min = ns_plugin_min_table_size(t->abi_version);
    if (t->struct_size < min)
        return NS_FAIL(NS_ERR_INVALID_CONFIG,
                       "plugin %s: provider table is %u bytes, too small for ABI %u (needs at least %zu)", path,
                       t->struct_size, t->abi_version, min);
    memset(&p->table, 0, sizeof(p->table));
    memcpy(&p->table, t, t->struct_size < sizeof(p->table) ? t->struct_size : sizeof(p->table));
    p->claimed_struct_size = t->struct_size;
    /* Fields past the claimed version are not the provider's to set, whatever its struct holds there. */
    size_t readable = readable_table_size(t->abi_version, t->struct_size);
    if (readable < sizeof(p->table))
        memset((char *)&p->table + readable, 0, sizeof(p->table) - readable);
    rc = check_required(path, &p->table);
    if (rc == NS_OK && p->table.abi_version >= 3)
        rc = check_kinds(path, p);
    return rc;
}

static const char *default_config_path(const char *so_path, char *buf, size_t len)
{
    size_t n = strlen(so_path);
    if (n < 3 || strcmp(so_path + n - 3, ".so") != 0 || n + 3 > len)
        return NULL;
    snprintf(buf, len, "%.*s.yaml", (int)(n - 3), so_path);
    return access(buf, F_OK) == 0 ? buf : NULL;
}

/* Plugins with a call the watchdog abandoned: that call's thread may still use the provider's state and the plugin's
 * host context, so they are kept for the life of the process, on this list rather than lost (a leak checker sees them
 * kept, which is what they are). */
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;
static ns_plugin *kept_plugins;

static void keep_for_abandoned_calls(ns_plugin *p)
{
    pthread_mutex_lock(&kept_lock);
    p->next_kept = kept_plugins;
    kept_plugins = p;
    pthread_mutex_unlock(&kept_lock);
}

static int load_file(const char *so_path, const ns_plugin_load_params *params, ns_plugin **out)
{
    int rc;
    char config_buf[4096];
    ns_plugin *p = NULL;
    ns_error_clear();
    if (!so_path || !out)
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "plugin load: path and result are required");
    *out = NULL;
    p = calloc(1, sizeof(*p));
    if (!p || !(p->path = strdup(so_path)) || !(p->name = name_from_path(so_path)) ||
        !(p->faults = ns_fault_layer_new())) {
        rc = NS_FAIL(NS_ERR_INTERNAL, "plugin %s: out of memory", so_path);
        goto fail;
    }
    p->call_timeout_ms = params ? params->call_timeout_ms : 0;
    if (p->call_timeout_ms == 0 && (rc = ns_call_default_timeout(&p->call_timeout_ms)) < 0) {
        ns_error_prefix("plugin %s: ", so_path);
        goto fail;
    }
    rc = open_module(so_path, p);
    if (rc != NS_OK)
        goto fail;
    rc = ns_option_table_check(p->table.name, p->table.options);
    if (rc != NS_OK) {
        ns_error_prefix("plugin %s: ", so_path);
        goto fail;
    }
    const char *config = params && params->config_path ? params->config_path
                                                       : default_config_path(so_path, config_buf, sizeof(config_buf));
    rc = ns_option_values_build(p->table.name, p->table.options, config, params ? params->settings : NULL,
                                params ? params->n_settings : 0, &p->options);
    if (rc != NS_OK)
        goto fail;
    p->ctx.plugin = p;
    p->ctx.core = params && params->ctx ? params->ctx : ns_ctx_current();
    snprintf(p->ctx.logger, sizeof(p->ctx.logger), "provider.%s", p->table.name);
    ns_error_clear();
    rc = ns_plugin_call_init(p);
    if (rc != NS_OK && atomic_load(&p->abandoned_calls) > 0) {
        /* init may still be running with p's host context and options: p is the provider's now, never freed. */
        rc = ns_error_prefix("plugin %s: provider %s: init: ", so_path, p->table.name);
        keep_for_abandoned_calls(p);
        return rc;
    }
    if (rc != NS_OK) {
        const ns_error_record *e = ns_error_last();
        if (e->code == NS_OK)
            NS_FAIL(rc < 0 ? rc : NS_ERR_INTERNAL, "init returned %d (%s) without an error message", rc,
                    ns_err_name(rc));
        else if (rc > 0 || rc < NS_ERR_INVALID_ARGUMENT)
            rc = NS_ERR_INTERNAL;
        rc = ns_error_prefix("plugin %s: provider %s failed to initialise: ", so_path, p->table.name);
        ns_plugin_call_destroy(p);
        goto fail;
    }
    if ((rc = ns_plugin_collect_v1alpha5_defaults(p)) != NS_OK) {
        rc = ns_error_prefix("plugin %s: provider %s: ", so_path, p->table.name);
        if (atomic_load(&p->abandoned_calls) > 0) {
            keep_for_abandoned_calls(p);
            return rc;
        }
        ns_plugin_call_destroy(p);
        goto fail;
    }
    ns_log(NS_LOG_INFO, "plugin", "loaded provider", "provider", p->table.name, "version", p->table.version, "path",
           so_path, NULL);
    *out = p;
    return NS_OK;
fail:
    if (p) {
        ns_fault_layer_free(p->faults);
        ns_option_values_free(p->options);
        free(p->path);
        free(p->name);
        free(p);
    }
    return rc;
}

/* The load (its log lines, the provider's init) runs in the context the plugin is loaded into. */
int ns_plugin_load_file(const char *so_path, const ns_plugin_load_params *params, ns_plugin **out)
{
    if (!params || !params->ctx)
        return load_file(so_path, params, out);
    ns_ctx *previous = ns_ctx_enter(params->ctx);
    int rc = load_file(so_path, params, out);
    ns_ctx_leave(previous);
    return rc;
}

int ns_plugin_load(const char *plugins_dir, const char *name, const ns_plugin_load_params *params, ns_plugin **out)
{
    char path[4096];
    if (!plugins_dir || !name || !*name || strchr(name, '/'))
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "provider name '%s' is not a plain name", name ? name : "");
    int n = snprintf(path, sizeof(path), "%s/%s.so", plugins_dir, name);
    if (n < 0 || (size_t)n >= sizeof(path))
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "plugins directory path too long: %s", plugins_dir);
    if (access(path, F_OK) != 0)
        return NS_FAIL(NS_ERR_NOT_FOUND, "provider %s: no file %s (plugins directory %s)", name, path, plugins_dir);
    int rc = ns_plugin_load_file(path, params, out);
    if (rc != NS_OK)
        return rc;
    if (strcmp((*out)->table.name, name) != 0) {
        rc = NS_FAIL(NS_ERR_INVALID_CONFIG, "plugin %s: declares provider name '%s', expected '%s' from its file name",
                     path, (*out)->table.name, name);
        ns_plugin_unload(*out);
        *out = NULL;
    }
    return rc;
}

void ns_plugin_set_call_timeout(ns_plugin *plugin, int64_t call_timeout_ms)
{
    plugin->call_timeout_ms = call_timeout_ms;
}

ns_ctx *ns_plugin_ctx(const ns_plugin *plugin)
{
    return plugin->ctx.core;
}

void ns_plugin_unload(ns_plugin *plugin)
{
    if (!plugin)
        return;
    if (atomic_load(&plugin->abandoned_calls) > 0) {
        ns_log(NS_LOG_WARN, "plugin", "provider not destroyed: a call the watchdog abandoned may still be running",
               "provider", plugin->table.name, NULL);
        keep_for_abandoned_calls(plugin);
        return;
    }
    ns_plugin_call_destroy(plugin);
    ns_req_defaults_free(plugin->v1alpha5_defaults);
    ns_fault_layer_free(plugin->faults);
    ns_option_values_free(plugin->options);
    free(plugin->path);
    free(plugin->name);
    free(plugin);
}

const char *ns_plugin_name(const ns_plugin *plugin)
{
    return plugin->table.name;
}

const char *ns_plugin_version(const ns_plugin *plugin)
{
    return plugin->table.version;
}

const char *ns_plugin_path(const ns_plugin *plugin)
{
    return plugin->path;
}

uint32_t ns_plugin_abi_version(const ns_plugin *plugin)
{
    return plugin->table.abi_version;
}

const ns_provider *ns_plugin_table(const ns_plugin *plugin)
{
    return &plugin->table;
}

/* The manifest loader's validator for this provider's node classes: its validate_nodeclass through the wrapper. */
static int validate_adapter(void *owner, const ns_nodeclass *nodeclass)
{
    return ns_plugin_validate_nodeclass(owner, nodeclass);
}

#define NS_KIND_MIN_SIZE (offsetof(ns_nodeclass_kind, flags) + sizeof(uint32_t))

int ns_plugin_declare_kinds(ns_plugin *p, ns_nodeclass_kinds *kinds)
{
    if (!p || !kinds)
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "declare kinds: a provider and a registry are required");
    ns_nodeclass_validate_fn validate = p->table.validate_nodeclass ? validate_adapter : NULL;
    if (p->table.abi_version < 3)
        return ns_nodeclass_kinds_add_any(kinds, p->table.name, p, validate);
    for (size_t i = 0; i < p->table.n_nodeclass_kinds; i++) {
        const ns_nodeclass_kind *src = NS_AT(p->table.nodeclass_kinds, i);
        if (src->struct_size < NS_KIND_MIN_SIZE)
            return NS_FAIL(NS_ERR_INVALID_CONFIG,
                           "provider %s: nodeclass_kinds[%zu] has struct_size %u, less than ABI 3's %zu bytes",
                           p->table.name, i, src->struct_size, NS_KIND_MIN_SIZE);
        ns_nodeclass_kind copy;
        memset(&copy, 0, sizeof(copy));
        memcpy(&copy, src, src->struct_size < sizeof(copy) ? src->struct_size : sizeof(copy));
        int rc = ns_nodeclass_kinds_add(kinds, p->table.name, &copy, p, validate);
        if (rc != NS_OK)
            return rc;
    }
    ns_nodeclass_kinds_set_v1alpha5_defaults(kinds, p->table.name, p->v1alpha5_defaults);
    return NS_OK;
}
