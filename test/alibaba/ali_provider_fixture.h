/* What the alibaba.so tests through the core's loader share (test_provider.c, test_credentials.c): each test forks,
 * sets its own environment and loads the provider afresh against the one emulator alf_run started. */
#ifndef NS_ALI_PROVIDER_FIXTURE_H
#define NS_ALI_PROVIDER_FIXTURE_H

#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>

#include "ali_emulator.h"
#include "plugin/plugin_loader.h"

#define REGION "cn-hangzhou"
#define SPEC_DEMO "\"vSwitchSelectorTerms\":[{\"tags\":{\"karpenter.sh/discovery\":\"demo\"}}]," \
                  "\"securityGroupSelectorTerms\":[{\"tags\":{\"karpenter.sh/discovery\":\"demo\"}}]," \
                  "\"imageSelectorTerms\":[{\"alias\":\"AlibabaCloudLinux3@latest\"}]"

extern emulator alf_emu;
extern const char *alf_plugin_path;
extern char alf_tmpdir[256];
extern FILE *alf_logfile;

/* No credential variable set, a HOME of the test's own (no profile or credentials file of another test), the region. */
void alf_env_clear(void);
/* alf_env_clear, then the emulator's static access key in the environment. */
void alf_env_static_keys(void);
void alf_write_file(const char *path, const char *text);
/* Loads the provider with cluster c-demo on the emulator plus `extra` settings (key, value pairs, NULL-ended); with
 * rc_out NULL a failure fails the test, else *rc_out gets the result. */
ns_plugin *alf_load_with(const char *const *extra, int *rc_out);
ns_plugin *alf_load(void);

typedef struct alf_nodeclass_doc {
    ns_json *spec;
    ns_nodeclass nc;
} alf_nodeclass_doc;
/* An ECSNodeClass named `name` with the spec's JSON text (the spec is the caller's to free). */
void alf_nodeclass_of(alf_nodeclass_doc *d, const char *name, const char *spec);

/* GET /_emulator/state, parsed (the caller's); the count of one action in it. */
cJSON *alf_state(void);
int alf_count(const char *action);
int alf_collect_none(void *ctx, const ns_instance *inst);
/* One API call that needs credentials. */
void alf_call_api(ns_plugin *p);
/* Captures the core's log in a temporary file; everything logged so far (the caller's). */
void alf_start_logging(void);
char *alf_logged(void);
void alf_assert_no_secret(const char *text, const char *secret);

/* Starts the emulator and a temporary directory, runs the suite, cleans up; the process's exit status. */
int alf_run(Suite *s);

#endif
