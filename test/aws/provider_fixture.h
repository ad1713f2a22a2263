/*
 * What the aws.so tests share: the plugin loaded with dlopen (AWS_PLUGIN), one emulator for the whole program, a fake
 * host with the provider's options at their defaults (overridable per test), node classes built from JSON, and the
 * emulator's control endpoint read as JSON.
 */
#ifndef NS_AWS_PROVIDER_FIXTURE_H
#define NS_AWS_PROVIDER_FIXTURE_H

#include <cjson/cJSON.h>

#include <nodesmith/provider.h>

#include "aws_emulator.h"
#include "fake_host.h"

extern emulator pf_emu;
extern const ns_provider *pf_provider;
extern fake_host pf_host;
extern void *pf_state;

/* A v1 EC2NodeClass spec selecting the emulator's subnets and security group, with the al2023@latest alias. */
#define PF_SPEC_BASE                                                                                                   \
    "\"subnetSelectorTerms\":[{\"tags\":{\"karpenter.sh/discovery\":\"demo\"}}],"                                     \
    "\"securityGroupSelectorTerms\":[{\"tags\":{\"karpenter.sh/discovery\":\"demo\"}}]"
#define PF_SPEC_AL2023 "{" PF_SPEC_BASE ",\"amiSelectorTerms\":[{\"alias\":\"al2023@latest\"}],\"role\":\"KarpenterNodeRole-demo\"}"

/* Loads the plugin, starts the emulator and points the AWS environment at it. 0, or -1 with a message. */
int pf_start(void);
void pf_stop(void);

/* Checked fixture: clears the emulator's faults, sets the default options (call pf_option before pf_init to change
 * them) and initialises the provider; teardown destroys it. */
void pf_setup(void);
void pf_teardown(void);
/* Re-initialises the provider with the options set so far (destroying the current one). */
void pf_reinit(void);
void pf_option(const char *key, const char *value);

/* A node class of `kind` ("EC2NodeClass" is karpenter.k8s.aws/v1, "AWSNodeTemplate" v1alpha1) named `name`; *spec
 * is the parsed JSON the caller frees. */
ns_nodeclass pf_nodeclass(cJSON **spec, const char *kind, const char *name, const char *spec_text);
ns_launch_request pf_request(const ns_nodeclass *nc, const ns_launch_option *options, size_t n, const char *token);
/* A token unique to this process and call. */
void pf_token(char *buf, size_t len, const char *prefix);

/* The emulator's control endpoint: a POST that must answer 200, and a GET parsed as JSON (caller frees). */
void pf_control(const char *path, const char *json);
cJSON *pf_control_get(const char *path);
/* The launch template the emulator holds with this ID (an item of GET /_emulator/launch_templates, inside *all,
 * which the caller frees), or NULL. */
const cJSON *pf_template(cJSON **all, const char *id);
/* The most recent CreateFleet request's parameters (inside *all, which the caller frees). */
const cJSON *pf_last_fleet(cJSON **all);
/* The emulator's record of one instance (inside *all), or NULL. */
const cJSON *pf_instance(cJSON **all, const char *provider_id);

#endif
