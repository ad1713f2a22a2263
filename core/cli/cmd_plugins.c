/* `nodesmith plugins`: check every plugin in a directory through the loader. */
#include <getopt.h>
#include <stdio.h>

#include "cli/cli.h"
#include "errors/ns_error.h"

static const char plugins_help[] =
    "Usage: nodesmith plugins [--plugins-dir DIR]\n"
    "\n"
    "Loads every *.so in the plugins directory through the same checks the controller applies (permissions, entry\n"
    "symbol, ABI version, table size, required methods, options, init), and lists each with its ABI and provider\n"
    "versions or the reason it was refused. Each is loaded in a child process: one that crashes or hangs is refused\n"
    "with the provider and the method that did it. Exits 1 if any plugin was refused.\n"
    "\n"
    "  --plugins-dir DIR   directory to check (default: $NODESMITH_PLUGINS_DIR, else plugins.d beside the binary,\n"
    "                      else the install's)\n"
    "  --provider-timeout DUR  deadline of the entry function and of init, e.g. 30s (default:\n"
    "                      $NODESMITH_PROVIDER_TIMEOUT, else 5m)\n"
    "  --help              this text\n";

int cmd_plugins(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"plugins-dir", required_argument, NULL, CLI_OPT_PLUGINS_DIR},
        {"provider-timeout", required_argument, NULL, CLI_OPT_PROVIDER_TIMEOUT},
        {"help", no_argument, NULL, CLI_OPT_HELP},
        {NULL, 0, NULL, 0},
    };
    const char *dir_flag = NULL;
    int64_t timeout_ms = 0;
    int opt;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (opt) {
        case CLI_OPT_PLUGINS_DIR: dir_flag = optarg; break;
        case CLI_OPT_PROVIDER_TIMEOUT:
            if (cli_parse_provider_timeout("plugins", optarg, &timeout_ms) < 0)
                return NS_EXIT_USAGE;
            break;
        case CLI_OPT_HELP: fputs(plugins_help, stdout); return NS_EXIT_OK;
        default: return cli_usage_error("plugins", "unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return cli_usage_error("plugins", "unexpected argument '%s'", argv[optind]);
    const char *dir = ns_plugin_default_dir(dir_flag);
    ns_plugin_scan_entry *entries = NULL;
    size_t n = 0;
    if (ns_plugin_scan_dir(dir, timeout_ms, &entries, &n) != NS_OK)
        return cli_fail("plugins");
    int refused = 0;
    printf("plugins directory: %s\n", dir);
    if (n == 0)
        printf("no plugins (*.so) found\n");
    for (size_t i = 0; i < n; i++) {
        if (entries[i].code == NS_OK) {
            printf("%-12s ok       abi %u  version %s\n", entries[i].name, entries[i].abi_version, entries[i].version);
        } else {
            printf("%-12s refused  %s\n", entries[i].name, entries[i].error);
            refused++;
        }
    }
    ns_plugin_scan_free(entries, n);
    return refused ? NS_EXIT_FAILED : NS_EXIT_OK;
}
