#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "log/ns_log.h"

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"plugins", cmd_plugins, "check and list the provider plugins in a directory"},
    {"offerings", cmd_offerings, "list a provider's instance types, zones, capacity types and prices"},
    {"simulate", cmd_simulate, "run one provisioning round on manifests and launch its node claims"},
    {"controller", cmd_controller, "run Karpenter's controller against a cluster (nodes for pending pods)"},
    {"kube", cmd_kube, "list a Kubernetes resource through nodesmith's API client (kube get RESOURCE)"},
};

static void usage(FILE *out)
{
    fprintf(out, "Usage: nodesmith [--log-level debug|info|warn|error] COMMAND [OPTIONS]\n\n"
                 "A Karpenter-compatible Kubernetes node autoscaler; clouds are provider plugins.\n\nCommands:\n");
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        fprintf(out, "  %-12s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "  %-12s %s\n", "version", "print the version and the provider ABI range");
    fprintf(out, "\nRun 'nodesmith COMMAND --help' for a command's options.\n");
}

int main(int argc, char **argv)
{
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return NS_EXIT_OK;
        }
        if (strcmp(argv[i], "--log-level") == 0 && i + 1 < argc) {
            ns_log_level level;
            if (ns_log_parse_level(argv[++i], &level) != 0) {
                fprintf(stderr, "nodesmith: --log-level must be debug, info, warn or error, got '%s'\n", argv[i]);
                return NS_EXIT_USAGE;
            }
            ns_log_set_level(level);
            continue;
        }
        fprintf(stderr, "nodesmith: unknown option '%s'\nRun 'nodesmith --help' for usage.\n", argv[i]);
        return NS_EXIT_USAGE;
    }
    if (i >= argc) {
        usage(stderr);
        return NS_EXIT_USAGE;
    }
    if (strcmp(argv[i], "version") == 0) {
        printf("nodesmith %s (provider ABI %d to %d)\n", NS_VERSION, NS_PROVIDER_ABI_MIN, NS_PROVIDER_ABI_VERSION);
        return NS_EXIT_OK;
    }
    for (size_t c = 0; c < sizeof(commands) / sizeof(commands[0]); c++) {
        if (strcmp(argv[i], commands[c].name) == 0) {
            optind = 1;
            return commands[c].run(argc - i, argv + i);
        }
    }
    fprintf(stderr, "nodesmith: unknown command '%s'\nRun 'nodesmith --help' for the list.\n", argv[i]);
    return NS_EXIT_USAGE;
}
