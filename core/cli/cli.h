/*
 * The nodesmith command line: one file per command, each `int cmd_NAME(int argc, char **argv)` returning the
 * process exit code (0 success, 1 the command failed, 2 the command line was wrong).
 */
#ifndef NS_CLI_H
#define NS_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "model/cluster.h"
#include "model/nodeclass_kinds.h"
#include "plugin/plugin_loader.h"

#define NS_EXIT_OK 0
#define NS_EXIT_FAILED 1
#define NS_EXIT_USAGE 2

int cmd_plugins(int argc, char **argv);
int cmd_offerings(int argc, char **argv);
int cmd_simulate(int argc, char **argv);
int cmd_kube(int argc, char **argv);
int cmd_controller(int argc, char **argv);

/* Prints "nodesmith CMD: <message>" and a pointer to --help on stderr; returns NS_EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) NS_PRINTF(2, 3);
/* Prints "nodesmith CMD: <the thread's error message>" on stderr; returns NS_EXIT_FAILED. */
int cli_fail(const char *cmd);

/* Provider selection shared by every command that loads a provider. */
typedef struct cli_provider_args {
    const char *name;         /* --provider, default "sim" */
    const char *plugins_dir;  /* --plugins-dir */
    const char *config_path;  /* --provider-config */
    ns_plugin_setting *settings; /* --set KEY=VALUE, repeatable; the strings point into argv */
    size_t n_settings;
    int64_t call_timeout_ms;  /* --provider-timeout; 0 = $NODESMITH_PROVIDER_TIMEOUT, else the loader's default */
} cli_provider_args;

/* Handles --provider/--plugins-dir/--provider-config/--set for option `opt` with argument `arg` (getopt_long's
 * values, using the CLI_PROVIDER_OPT_* codes). Returns 1 if handled, 0 if not a provider option, -1 on a bad value
 * (reported). */
enum {
    CLI_OPT_PROVIDER = 1000,
    CLI_OPT_PLUGINS_DIR,
    CLI_OPT_PROVIDER_CONFIG,
    CLI_OPT_SET,
    CLI_OPT_OUTPUT,
    CLI_OPT_HELP,
    CLI_OPT_PROVIDER_TIMEOUT,
};
/* --provider-timeout DURATION: a positive Go duration into *ms; -1 (reported) when it is not one. */
int cli_parse_provider_timeout(const char *cmd, const char *arg, int64_t *ms);
int cli_provider_arg(const char *cmd, cli_provider_args *args, int opt, char *arg);
void cli_provider_args_free(cli_provider_args *args);
/* Loads the provider and, when kinds is not NULL, the node-class kinds it declares into a new *kinds (the caller's,
 * free with ns_nodeclass_kinds_free before unloading the provider). Prints the error and returns NS_EXIT_FAILED. */
int cli_load_provider(const char *cmd, const cli_provider_args *args, ns_plugin **out, ns_nodeclass_kinds **kinds);

/* Reads the live cluster of the kubeconfig (NULL: $KUBECONFIG, in-cluster, ~/.kube/config) and context (NULL: its
 * current one) into c: Pods, Nodes, NodePools, NodeClaims, PDBs, DaemonSets and the node classes of the kinds
 * (borrowed) that the server serves, each listed once (get and list only; nothing is written). 0 or an error naming
 * what could not be read. */
int cli_cluster_from_live(const char *kubeconfig, const char *context, const ns_nodeclass_kinds *kinds,
                          ns_cluster *c);

#define CLI_PROVIDER_LONG_OPTIONS                                                                                      \
    {"provider", required_argument, NULL, CLI_OPT_PROVIDER},                                                           \
        {"plugins-dir", required_argument, NULL, CLI_OPT_PLUGINS_DIR},                                                 \
        {"provider-config", required_argument, NULL, CLI_OPT_PROVIDER_CONFIG},                                         \
        {"set", required_argument, NULL, CLI_OPT_SET},                                                                 \
        {"provider-timeout", required_argument, NULL, CLI_OPT_PROVIDER_TIMEOUT}

#define CLI_PROVIDER_HELP                                                                                              \
    "  --provider NAME          provider plugin to use (default: sim, the simulated cloud)\n"                         \
    "  --plugins-dir DIR        where NAME.so is (default: $NODESMITH_PLUGINS_DIR, else plugins.d beside the\n"       \
    "                           binary, else the install's)\n"                                                         \
    "  --provider-config FILE   the provider's options (default: DIR/NAME.yaml when present)\n"                       \
    "  --set KEY=VALUE          set one provider option; repeatable; applied after the config file\n"                 \
    "  --provider-timeout DUR   deadline of each call into the provider, e.g. 90s (default:\n"                       \
    "                           $NODESMITH_PROVIDER_TIMEOUT, else 5m); a call past it fails, naming the provider\n"  \
    "                           and the method\n"

/* The node class as {"apiVersion", "kind", "name", "status"}, the status as its provider resolves it (ABI 4,
 * checked and with its Ready condition); a provider without nodeclass_status gives "statusUnsupported" (why) instead
 * of "status". *out is the caller's. An error when the provider could not tell, or broke the method's rules. */
struct cJSON;
int cli_nodeclass_json(ns_plugin *plugin, const ns_nodeclass *nc, struct cJSON **out);
/* That object as text: "node class KIND NAME: Ready=STATUS (REASON)", one line per condition, one per resolved field. */
void cli_nodeclass_text(FILE *f, const struct cJSON *nodeclass);

/* "text" or "json". */
int cli_parse_output(const char *cmd, const char *arg, bool *json);

#endif
