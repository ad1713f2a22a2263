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
};

/* The host table handed to every provider (one, shared: the ctx tells providers apart). */
const ns_host *ns_plugin_host_table(void);

#endif
