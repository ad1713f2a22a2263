/* What the Azure provider tests share: azure.so loaded through the core's loader (the real host) against the
 * emulator with_emulator.py started, the emulator's control endpoint, and node classes built from JSON text. */
#ifndef NS_AZURE_FIXTURE_H
#define NS_AZURE_FIXTURE_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "plugin/plugin_loader.h"

/* Loads AZURE_PLUGIN with the emulator's endpoints, cluster "demo", and `extra` settings (key, value pairs ending
 * with NULL). Fails the test (ck_assert) when loading fails. */
ns_plugin *azf_load(const char *const *extra);
/* Loading is expected to fail: returns the error category, the message into msg. */
int azf_load_fails(const char *const *extra, char *msg, size_t len);

/* A node class from "apiVersion", "kind" and the spec's JSON text; release with azf_nodeclass_free. */
ns_nodeclass *azf_nodeclass(const char *api_version, const char *name, const char *spec_json);
void azf_nodeclass_free(ns_nodeclass *nc);

/* The control endpoint: POST a JSON body (or GET when json is NULL) to /_emulator/<path>; returns the HTTP status;
 * *answer (may be NULL) gets the body. */
long azf_control(const char *path, const char *json, char **answer);
/* GET /_emulator/state, parsed. */
cJSON *azf_state(void);
/* The VM of the emulator's state with this name (in doc), or NULL. */
const cJSON *azf_vm(const cJSON *state, const char *name);
/* A request count from the state ("vm.put", ...). */
int azf_requests(const cJSON *state, const char *op);

/* API versions and zones of the emulator's subscription, as the tests name them. */
#define V1BETA1 "karpenter.azure.com/v1beta1"
#define ZONE1 "southcentralus-1"
#define ZONE2 "southcentralus-2"

/* The number of instance types listed for nc, or the listing's error. */
int azf_list_count(ns_plugin *p, const ns_nodeclass *nc);
/* A claim name unique to this process and call (prefix-pid-seq), in a static buffer the next call overwrites. */
const char *azf_fresh_claim(const char *prefix);

/* A launch of one option. */
int azf_launch(ns_plugin *p, const ns_nodeclass *nc, const char *claim, const char *type, const char *zone,
               const char *capacity_type, ns_launch_result *out);

#endif
