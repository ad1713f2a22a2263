/* `nodesmith controller`: Karpenter's controller, the engine over a live cluster (core/controller). */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "controller/controller.h"
#include "errors/ns_error.h"
#include "log/ns_log.h"

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
    (void)sig;
    stop_signal = 1;
}

enum { OPT_SIMULATE_KUBELET = 3000, OPT_IDENTITY, OPT_SETTING };

static void help(void)
{
    printf("Usage: nodesmith controller [OPTIONS]\n"
           "\n"
           "Runs Karpenter's controller against the cluster of the kubeconfig (or in-cluster): NodePools and pending\n"
           "pods in, NodeClaims and instances of the provider out. Settings come from Karpenter's environment\n"
           "variables; a flag overrides its variable. SIGTERM stops it cleanly, releasing the leader Lease.\n"
           "\n"
           "Settings:\n%s"
           "\n"
           "Provider:\n" CLI_PROVIDER_HELP
           "\n"
           "  --simulate-kubelet       register each launched instance's Node and play its kubelet (Ready, pods\n"
           "                           Running): for the simulated provider, whose instances run no kubelet\n"
           "  --identity NAME          the leader Lease's holder name (default HOSTNAME_PID)\n"
           "  --help                   this text\n",
           ns_controller_settings_help());
}

int cmd_controller(int argc, char **argv)
{
    static const struct option longopts[] = {
        CLI_PROVIDER_LONG_OPTIONS,
        {"simulate-kubelet", no_argument, NULL, OPT_SIMULATE_KUBELET},
        {"identity", required_argument, NULL, OPT_IDENTITY},
        {"help", no_argument, NULL, CLI_OPT_HELP},
        {"batch-max-duration", required_argument, NULL, OPT_SETTING},
        {"batch-idle-duration", required_argument, NULL, OPT_SETTING},
        {"feature-gates", required_argument, NULL, OPT_SETTING},
        {"log-level", required_argument, NULL, OPT_SETTING},
        {"kube-client-qps", required_argument, NULL, OPT_SETTING},
        {"kube-client-burst", required_argument, NULL, OPT_SETTING},
        {"metrics-port", required_argument, NULL, OPT_SETTING},
        {"health-probe-port", required_argument, NULL, OPT_SETTING},
        {"disable-leader-election", optional_argument, NULL, OPT_SETTING},
        {"leader-election-name", required_argument, NULL, OPT_SETTING},
        {"leader-election-namespace", required_argument, NULL, OPT_SETTING},
        {"cluster-name", required_argument, NULL, OPT_SETTING},
        {"packing", required_argument, NULL, OPT_SETTING},
        {"min-values-policy", required_argument, NULL, OPT_SETTING},
        {"preference-policy", required_argument, NULL, OPT_SETTING},
        {"bind-address", required_argument, NULL, OPT_SETTING},
        {"kubeconfig", required_argument, NULL, OPT_SETTING},
        {"context", required_argument, NULL, OPT_SETTING},
        {NULL, 0, NULL, 0},
    };
    ns_controller_settings s;
    cli_provider_args pargs = {0};
    ns_controller_options o = {.settings = &s, .stop = &stop_signal};
    ns_plugin *plugin = NULL;
    ns_nodeclass_kinds *kinds = NULL;
    int code = NS_EXIT_FAILED;
    if (ns_controller_settings_default(&s) < 0)
        return cli_fail("controller");
    if (ns_controller_settings_from_env(&s, NULL) < 0) {
        code = cli_fail("controller");
        goto done;
    }
    int opt, idx = 0;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "", longopts, &idx)) != -1) {
        int handled = cli_provider_arg("controller", &pargs, opt, optarg);
        if (handled < 0) {
            code = NS_EXIT_USAGE;
            goto done;
        }
        if (handled)
            continue;
        switch (opt) {
        case OPT_SIMULATE_KUBELET: o.simulate_kubelet = true; break;
        case OPT_IDENTITY: o.identity = optarg; break;
        case CLI_OPT_HELP: help(); code = NS_EXIT_OK; goto done;
        case OPT_SETTING:
            if (ns_controller_settings_flag(&s, longopts[idx].name, optarg) < 0) {
                code = cli_usage_error("controller", "%s", ns_error_message());
                goto done;
            }
            break;
        default: code = cli_usage_error("controller", "unknown or incomplete option '%s'", argv[optind - 1]); goto done;
        }
    }
    if (optind != argc) {
        code = cli_usage_error("controller", "unexpected argument '%s'", argv[optind]);
        goto done;
    }
    if (ns_controller_settings_check(&s) < 0) {
        code = cli_usage_error("controller", "%s", ns_error_message());
        goto done;
    }
    ns_log_set_level(s.log_level);
    if ((code = cli_load_provider("controller", &pargs, &plugin, &kinds)) != NS_EXIT_OK)
        goto done;
    o.plugin = plugin;
    o.kinds = kinds;
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    code = ns_controller_run(&o) < 0 ? cli_fail("controller") : NS_EXIT_OK;
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
done:
    ns_nodeclass_kinds_free(kinds);
    ns_plugin_unload(plugin);
    cli_provider_args_free(&pargs);
    ns_controller_settings_free(&s);
    return code;
}
