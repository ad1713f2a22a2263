/*
 * Loading provider plugins (libvirt's virmodule, OpenSSL's provider activation).
 *
 * Provider NAME is the file NAME.so in the plugins directory; its options come from NAME.yaml beside it (or a file
 * named explicitly). Loading checks, in order, and refuses with a message naming the file and the cause:
 *   the file or its directory writable by others than its owner; dlopen failure; a missing entry symbol; an ABI
 *   version outside [NS_PROVIDER_ABI_MIN, NS_PROVIDER_ABI_VERSION]; a struct_size too small for the version claimed;
 *   a missing required method; (ABI 3) no node-class kinds or a malformed one; a provider name that does not match
 *   the file; options that are unknown or of the wrong type; init failing.
 * Every call into the plugin, from its entry function on, runs under the watchdog (plugin_watchdog.h): a call that
 * does not return by its deadline fails with NS_ERR_THROTTLED naming the provider and the method, and a crash
 * inside one is reported with the provider and the method before the process ends.
 * Modules are opened with RTLD_NODELETE and never dlclosed: unloading is unsafe while threads may still run their
 * code. ns_plugin_unload only destroys the provider's state.
 */
#ifndef NS_PLUGIN_LOADER_H
#define NS_PLUGIN_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/provider_options.h"
#include "nodesmith/provider.h"

typedef struct ns_plugin ns_plugin;
struct ns_ctx;


typedef struct ns_plugin_load_params {
    const char *config_path; /* NULL: <dir>/<name>.yaml when it exists, else defaults only */
    const ns_plugin_setting *settings; /* applied after the config file; may be NULL */
    size_t n_settings;
    /* The context the provider lives in (context/ns_ctx.h): the clock, logger and error sink its host upcalls use.
     * NULL: the loading thread's current context. It must outlive the plugin. */
    struct ns_ctx *ctx;
    /* The deadline of each call into the provider, its entry function and init included (plugin_watchdog.h):
     * 0 = $NODESMITH_PROVIDER_TIMEOUT, else 5 minutes; negative = none. */
    int64_t call_timeout_ms;
} ns_plugin_load_params;

/* Minimum struct_size of a provider table claiming `abi_version`; 0 for an unsupported version. The loader and the
 * conformance suite both judge tables by this one function. */
size_t ns_plugin_min_table_size(uint32_t abi_version);

/* Loads <plugins_dir>/<name>.so. On success *out is the caller's; free with ns_plugin_unload. */
int ns_plugin_load(const char *plugins_dir, const char *name, const ns_plugin_load_params *params, ns_plugin **out);
/* Loads a plugin by path (the conformance suite's entry). */
int ns_plugin_load_file(const char *so_path, const ns_plugin_load_params *params, ns_plugin **out);
/* The context the plugin was loaded into. */
struct ns_ctx *ns_plugin_ctx(const ns_plugin *plugin);
/* Changes the deadline of the plugin's calls from the next one on (as call_timeout_ms, 0 excepted: <= 0 is none), so
 * one method known to be slow, or a test's one hang, gets its own while the others keep theirs. Not thread-safe
 * against calls in flight on the same plugin. */
void ns_plugin_set_call_timeout(ns_plugin *plugin, int64_t call_timeout_ms);
/* Calls the provider's destroy and frees the handle (the module stays mapped). Accepts NULL. A plugin with a call
 * the watchdog abandoned is neither destroyed nor freed: that call's thread may still use both. */
void ns_plugin_unload(ns_plugin *plugin);

const char *ns_plugin_name(const ns_plugin *plugin);
const char *ns_plugin_version(const ns_plugin *plugin);
const char *ns_plugin_path(const ns_plugin *plugin);
uint32_t ns_plugin_abi_version(const ns_plugin *plugin); /* the version the provider claims */
/* The provider's table as the core sees it: a zeroed copy of what the provider's struct_size covers. */
const ns_provider *ns_plugin_table(const ns_plugin *plugin);

/* Adds the node-class kinds the provider declares (ABI 3) to `kinds`, each validated by the provider's
 * validate_nodeclass when a manifest loads one; an older provider is added as taking any custom kind
 * (model/nodeclass_kinds.h). The registry keeps `plugin` as a borrowed pointer: unload it only after the registry. */
struct ns_nodeclass_kinds;
int ns_plugin_declare_kinds(ns_plugin *plugin, struct ns_nodeclass_kinds *kinds);

/* The plugins directory: --plugins-dir, else $NODESMITH_PLUGINS_DIR, else plugins.d beside the running binary when
 * it exists (a build tree), else the install's. Returns a static or caller-given string. */
const char *ns_plugin_default_dir(const char *flag_value);

/* Checks every *.so in dir through the loader (loading then unloading each, each in a child process so a plugin that
 * crashes is one refusal, not the end of the listing; call_timeout_ms as in ns_plugin_load_params). Entries are the
 * caller's; free with ns_plugin_scan_free. Returns NS_OK even when some plugins were refused (see each entry's code); an error only when
 * the directory itself cannot be read. */
typedef struct ns_plugin_scan_entry {
    char *file;     /* full path */
    char *name;     /* from the file name */
    int code;       /* NS_OK or the refusal's category */
    char *error;    /* the refusal's message, or NULL */
    uint32_t abi_version;
    char *version;  /* provider's own version, or NULL when refused before it was known */
} ns_plugin_scan_entry;
int ns_plugin_scan_dir(const char *dir, int64_t call_timeout_ms, ns_plugin_scan_entry **entries, size_t *n_entries);
void ns_plugin_scan_free(ns_plugin_scan_entry *entries, size_t n_entries);

/* ---- Calls. Each wrapper checks its arguments, clears the thread's error record, and returns NS_ERR_UNSUPPORTED
 * for a NULL optional method. Callback data is copied into full-size zeroed structs before the caller sees it, so
 * core code may read every field whatever the provider's ABI version. */

int ns_plugin_list_instance_types(ns_plugin *plugin, const ns_nodeclass *nodeclass, ns_instance_type_cb cb,
                                  void *cb_ctx);
int ns_plugin_launch(ns_plugin *plugin, const ns_launch_request *req, ns_launch_result *result);
int ns_plugin_terminate(ns_plugin *plugin, const char *provider_id, bool *already_gone);
int ns_plugin_list_instances(ns_plugin *plugin, ns_instance_cb cb, void *cb_ctx);
/* ABI 1 providers have no get_instance: the core scans list_instances instead. */
int ns_plugin_get_instance(ns_plugin *plugin, const char *provider_id, ns_instance *out);
int ns_plugin_poll_events(ns_plugin *plugin, ns_event_cb cb, void *cb_ctx);
int ns_plugin_check_drift(ns_plugin *plugin, const ns_instance *instance, const ns_nodeclass *nodeclass,
                          bool *drifted, char *reason, size_t reason_len);
int ns_plugin_validate_nodeclass(ns_plugin *plugin, const ns_nodeclass *nodeclass);
/* ABI 4: the node class's status as the provider resolved it, checked against provider.h's rules and completed with
 * the root "Ready" condition (plugin_status.h). On NS_OK *status is the caller's (cJSON_Delete). NS_ERR_UNSUPPORTED
 * when the provider has no nodeclass_status (an older ABI, or NULL). A resolution that failed is NS_OK with a False
 * condition; an error means the status could not be determined, or the provider broke the rules. */
struct cJSON;
int ns_plugin_nodeclass_status(ns_plugin *plugin, const ns_nodeclass *nodeclass, struct cJSON **status);
/* ABI 5: whether a Node condition (of status "True") announces an interruption of the node's instance; on NS_OK with
 * *is_event true, *event is the provider's event, checked (a known kind, an id, the condition's provider_id, no
 * negative time). NS_ERR_UNSUPPORTED when the provider has no event_from_node_condition (an older ABI, or NULL). */
int ns_plugin_event_from_node_condition(ns_plugin *plugin, const ns_node_condition *condition, ns_event *event,
                                        bool *is_event);
int ns_plugin_list_repair_policies(ns_plugin *plugin, ns_repair_policy_cb cb, void *cb_ctx);
/* ABI 6: the provider's requirement defaults for v1alpha5 Provisioners, each passed to cb as the provider gave it
 * (the loader asks once, right after init, and keeps a checked copy: see ns_plugin_v1alpha5_defaults_of).
 * NS_ERR_UNSUPPORTED when the provider has none (an older ABI, or NULL). */
int ns_plugin_v1alpha5_defaults(ns_plugin *plugin, ns_requirement_default_cb cb, void *cb_ctx);
/* The checked copy the loader kept; NULL when the provider declares none. Owned by the plugin. */
struct ns_req_defaults;
const struct ns_req_defaults *ns_plugin_v1alpha5_defaults_of(const ns_plugin *plugin);
/* The provider's own test hook, as is (the conformance suite's fault rules: a provider with an emulator turns faults
 * into the cloud's own answers, so its error handling is what is tested). */
int ns_plugin_test_inject_fault(ns_plugin *plugin, const ns_fault *fault);
/* Faults for simulation and tests, whatever the provider: insufficient capacity, throttling, failures and delays are
 * the core's fault layer in front of the provider (plugin_faults.h); an interruption event is passed to the
 * provider's test_inject_fault, the one thing only it can do; CLEAR clears both. */
int ns_plugin_inject_fault(ns_plugin *plugin, const ns_fault *fault);
/* The next `count` calls of `method` hang until the plugin's call deadline (call_timeout_ms) in the core's fault
 * layer, then fail as the watchdog fails a call that did not return (NS_ERR_THROTTLED); the provider is not called.
 * NS_ERR_INVALID_CONFIG when the plugin's calls have no deadline (a hang would never end). CLEAR removes it. */
int ns_plugin_inject_hang(ns_plugin *plugin, const char *method, uint32_t count);

/* True when the calling thread's last failed call failed without the provider describing why, so its message is the
 * core's default ("failed (...) without saying why"): the conformance suite's error-message rule. */
bool ns_plugin_error_defaulted(void);

#endif
