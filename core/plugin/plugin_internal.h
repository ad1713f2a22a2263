/*
 * What the loader, the host upcalls and the call wrappers share about a loaded plugin.
 */
#ifndef NS_PLUGIN_INTERNAL_H
#define NS_PLUGIN_INTERNAL_H

#include "config/provider_options.h"
#include "context/ns_ctx.h"
#include "plugin/plugin_faults.h"
#include "plugin/plugin_loader.h"

struct ns_host_ctx {
    ns_plugin *plugin;
    ns_ctx *core; /* the context the upcalls use: clock, logger, error sink */
    char logger[NS_NAME_MAX + 16]; /* "provider.<name>" */
};

struct ns_plugin {
    char *path;
    char *name; /* from the file name */
    ns_provider table; /* zeroed, then the part of the provider's table its struct_size covers */
    uint32_t claimed_struct_size;
    void *state;
    ns_option_values *options;
    ns_host_ctx ctx;
    ns_fault_layer *faults; /* the core-side faults in front of this provider (plugin_faults.h) */
    struct ns_req_defaults *v1alpha5_defaults; /* ABI 6, checked after init (plugin_defaults.c); NULL = none */
    int64_t call_timeout_ms; /* each call's deadline (plugin_watchdog.h); <= 0 none */
    /* Calls the watchdog gave up on: their threads may still be in the provider, with its state and this plugin's
     * host context, so the plugin is then never destroyed nor freed. */
    _Atomic unsigned abandoned_calls;
    struct ns_plugin *next_kept; /* the loader's list of plugins kept for their abandoned calls */
};

/* Loads <dir>/<name>.so in a child process and fills e's code, error, abi_version and version from what it saw
 * (plugin_probe.c): a plugin that crashes on loading is refused with the watchdog's account of the crash. Returns
 * NS_OK, or an error when the probe itself could not run. */
int ns_plugin_probe(const char *dir, const char *name, const ns_plugin_load_params *params, ns_plugin_scan_entry *e);

/* init and destroy under the watchdog (plugin_call_args.c). init sets plugin->state; destroy clears it, and does
 * nothing once a call was abandoned. */
int ns_plugin_call_init(ns_plugin *plugin);
void ns_plugin_call_destroy(ns_plugin *plugin);

/* Asks an ABI-6 provider for its v1alpha5_defaults and keeps the checked copy in plugin->v1alpha5_defaults; NS_OK
 * with nothing kept for an older provider or a NULL method. An error names the default that broke a rule. */
int ns_plugin_collect_v1alpha5_defaults(ns_plugin *plugin);
/* The host table handed to every provider (one, shared: the ctx tells providers apart). */
const ns_host *ns_plugin_host_table(void);

#endif
