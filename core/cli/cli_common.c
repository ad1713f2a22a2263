#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "config/scalar_parse.h"
#include "errors/ns_error.h"

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "nodesmith %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nRun 'nodesmith %s --help' for usage.\n", cmd);
    return NS_EXIT_USAGE;
}

int cli_fail(const char *cmd)
{
    fprintf(stderr, "nodesmith %s: %s\n", cmd, ns_error_message());
    return NS_EXIT_FAILED;
}

int cli_provider_arg(const char *cmd, cli_provider_args *args, int opt, char *arg)
{
    switch (opt) {
    case CLI_OPT_PROVIDER: args->name = arg; return 1;
    case CLI_OPT_PLUGINS_DIR: args->plugins_dir = arg; return 1;
    case CLI_OPT_PROVIDER_CONFIG: args->config_path = arg; return 1;
    case CLI_OPT_PROVIDER_TIMEOUT: return cli_parse_provider_timeout(cmd, arg, &args->call_timeout_ms) < 0 ? -1 : 1;
    case CLI_OPT_SET: {
        char *eq = strchr(arg, '=');
        if (!eq || eq == arg) {
            cli_usage_error(cmd, "--set takes KEY=VALUE, got '%s'", arg);
            return -1;
        }
        ns_plugin_setting *grown = realloc(args->settings, (args->n_settings + 1) * sizeof(*grown));
        if (!grown) {
            fprintf(stderr, "nodesmith %s: out of memory\n", cmd);
            return -1;
        }
        args->settings = grown;
        *eq = '\0';
        args->settings[args->n_settings++] = (ns_plugin_setting){arg, eq + 1};
        return 1;
    }
    default: return 0;
    }
}

void cli_provider_args_free(cli_provider_args *args)
{
    free(args->settings);
    args->settings = NULL;
    args->n_settings = 0;
}

int cli_load_provider(const char *cmd, const cli_provider_args *args, ns_plugin **out, ns_nodeclass_kinds **kinds)
{
    ns_plugin_load_params params = {
        .config_path = args->config_path,
        .settings = args->settings,
        .n_settings = args->n_settings,
        .call_timeout_ms = args->call_timeout_ms,
    };
    const char *dir = ns_plugin_default_dir(args->plugins_dir);
    if (ns_plugin_load(dir, args->name ? args->name : "sim", &params, out) != NS_OK)
        return cli_fail(cmd);
    if (kinds && (!(*kinds = ns_nodeclass_kinds_new()) || ns_plugin_declare_kinds(*out, *kinds) != NS_OK))
        return cli_fail(cmd);
    return NS_EXIT_OK;
}

int cli_parse_output(const char *cmd, const char *arg, bool *json)
{
    if (strcmp(arg, "text") == 0)
        *json = false;
    else if (strcmp(arg, "json") == 0)
        *json = true;
    else
        return cli_usage_error(cmd, "--output must be text or json, got '%s'", arg);
    return NS_EXIT_OK;
}

int cli_parse_provider_timeout(const char *cmd, const char *arg, int64_t *ms)
{
    if (ns_parse_duration_ms(arg, ms) != 0 || *ms <= 0) {
        cli_usage_error(cmd, "--provider-timeout takes a positive duration such as 90s or 5m, got '%.64s'", arg);
        return -1;
    }
    return 0;
}
