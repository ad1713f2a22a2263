/*
 * Helpers shared by the sim's tests: load sim.so (or the ABI 1 build) through the core's loader, build node classes
 * from JSON text, launch from a short list of offerings. Every helper asserts with Check, so tests stay short.
 */
#ifndef SIM_FIXTURE_H
#define SIM_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>

#include "cloud/instance_types.h"
#include "nodesmith/provider.h"
#include "plugin/plugin_loader.h"

/* Loads SIM_SO with "key", "value", ... pairs ending with NULL; returns the error code and leaves *out NULL on
 * failure. */
int sim_fx_try_load(const char *so_path, ns_plugin **out, ...);
/* Loads SIM_SO with test_hooks on plus the given pairs, asserting success. Free with ns_plugin_unload. */
ns_plugin *sim_fx_load(const char *first_key, ...);

/* A node class named "default" whose spec (a cJSON tree, which is what the core's ns_json is) is owned here. */
typedef struct sim_fx_nodeclass {
    ns_nodeclass abi;
    void *spec; /* cJSON * */
} sim_fx_nodeclass;

/* From apiVersion, kind and spec JSON text (asserted valid); free with sim_fx_nodeclass_free. */
sim_fx_nodeclass *sim_fx_nodeclass_new(const char *api_version, const char *kind, const char *spec_json);
/* SimNodeClass (nodesmith.io/v1) with the given spec ("{}" for defaults). */
sim_fx_nodeclass *sim_fx_sim_nodeclass(const char *spec_json);
void sim_fx_nodeclass_free(sim_fx_nodeclass *nc); /* accepts NULL */

/* Instance types for the node class; free with ns_itype_set_free. */
void sim_fx_types(ns_plugin *p, const ns_nodeclass *nc, ns_itype_set *set);
const ns_itype_offering *sim_fx_offering(const ns_itype *t, const char *zone, const char *capacity_type);

/* One launch option as "type/zone/capacity-type". */
typedef struct sim_fx_option {
    const char *instance_type;
    const char *zone;
    const char *capacity_type;
} sim_fx_option;

/* Launches nodeclaim with the options. nc NULL: an empty SimNodeClass; token NULL: the nodeclaim name. Returns the
 * code; *out filled on success. */
int sim_fx_launch(ns_plugin *p, const ns_nodeclass *nc, const char *nodeclaim, const char *token,
                  const sim_fx_option *options, size_t n_options, ns_launch_result *out);
/* Launches one on-demand m5.large in us-west-2a, asserting success. */
void sim_fx_launch_one(ns_plugin *p, const char *nodeclaim, ns_launch_result *out);

/* Number of instances list_instances reports. */
size_t sim_fx_count_instances(ns_plugin *p);

/* Asserts the thread's last error mentions needle. */
#define sim_fx_assert_error_has(needle)                                                                                \
    ck_assert_msg(strstr(ns_error_message(), (needle)) != NULL, "error '%s' lacks '%s'", ns_error_message(), (needle))

/* Path of a file in the temp directory holding text; the caller frees the string and unlinks the file. */
char *sim_fx_write_temp(const char *text);

#endif
