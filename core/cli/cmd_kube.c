/* `nodesmith kube get RESOURCE`: lists one resource through the client the controller uses (configuration,
 * credentials, transport, paginated list, decoding into the model), to check a kubeconfig or a service account. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cli/cli.h"
#include "errors/ns_error.h"
#include "kube/kube_config.h"
#include "kube/kube_decode.h"
#include "kube/kube_informer.h"

static const char kube_help[] =
    "Usage: nodesmith kube get RESOURCE [--namespace NS] [--kubeconfig FILE] [--context NAME]\n"
    "\n"
    "Lists RESOURCE (pods, nodes, nodepools, nodeclaims, daemonsets, poddisruptionbudgets, storageclasses,\n"
    "persistentvolumes, persistentvolumeclaims, leases, deployments, replicasets, statefulsets, events, namespaces)\n"
    "the way the controller's informers do: pages of 500, each object decoded into the engine's model. Objects that\n"
    "do not decode are reported on stderr, naming the object and the field; the exit status is then 1.\n"
    "\n"
    "  --namespace, -n NS  one namespace (default: all)\n"
    "  --kubeconfig FILE   default: $KUBECONFIG, in-cluster, ~/.kube/config\n"
    "  --context NAME      a kubeconfig context other than the current one\n"
    "  --help              this text\n";

enum { OPT_KUBECONFIG = 2000, OPT_CONTEXT };

static const ns_kube_resource *find_resource(const char *name)
{
    for (size_t i = 0; ns_kube_builtin_resources[i]; i++) {
        const ns_kube_resource *r = ns_kube_builtin_resources[i];
        size_t n = strlen(r->resource);
        if (strcasecmp(name, r->resource) == 0 || strcasecmp(name, r->kind) == 0 ||
            (strncasecmp(name, r->resource, n - 1) == 0 && name[n - 1] == '\0'))
            return r;
    }
    return NULL;
}

static bool print_obj(void *ud, const ns_kube_obj *o)
{
    printf("%-20s %-50s %s\n", o->namespace_ ? o->namespace_ : "-", o->name,
           o->node_name ? o->node_name : o->provider_id ? o->provider_id : "");
    return true;
}

static int get(const ns_kube_resource *r, const char *ns, const char *kubeconfig, const char *context)
{
    ns_kube_config *cfg = NULL;
    ns_kube_client *c = NULL;
    ns_kube_informer *inf = NULL;
    int rc = NS_EXIT_FAILED;
    if (ns_kube_config_load(kubeconfig, context, &cfg) < 0 || ns_kube_client_new(cfg, NULL, &c) < 0)
        goto done;
    ns_kube_informer_options o = {.resource = r, .namespace_ = ns, .decoder = ns_kube_decoder_for(r)};
    if (ns_kube_informer_new(c, &o, &inf) < 0 || ns_kube_informer_list_once(inf) < 0)
        goto done;
    printf("%-20s %-50s %s\n", "NAMESPACE", "NAME", "NODE/PROVIDER-ID");
    ns_kube_informer_rdlock(inf);
    ns_kube_store_each(ns_kube_informer_store(inf), NS_KUBE_N_INDEXES, NULL, print_obj, NULL);
    ns_kube_informer_unlock(inf);
    ns_kube_informer_stats st;
    ns_kube_informer_get_stats(inf, &st);
    if (st.decode_errors) {
        fprintf(stderr, "nodesmith kube: %llu object(s) did not decode; the last: %s\n",
                (unsigned long long)st.decode_errors, st.last_decode_error);
        goto done;
    }
    rc = NS_EXIT_OK;
done:
    if (rc != NS_EXIT_OK && ns_error_last()->code != NS_OK)
        cli_fail("kube");
    ns_kube_informer_free(inf);
    ns_kube_client_free(c);
    return rc;
}

int cmd_kube(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"namespace", required_argument, NULL, 'n'},
        {"kubeconfig", required_argument, NULL, OPT_KUBECONFIG},
        {"context", required_argument, NULL, OPT_CONTEXT},
        {"help", no_argument, NULL, CLI_OPT_HELP},
        {NULL, 0, NULL, 0},
    };
    const char *ns = NULL, *kubeconfig = NULL, *context = NULL;
    int opt;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "n:", longopts, NULL)) != -1) {
        switch (opt) {
        case 'n': ns = optarg; break;
        case OPT_KUBECONFIG: kubeconfig = optarg; break;
        case OPT_CONTEXT: context = optarg; break;
        case CLI_OPT_HELP: fputs(kube_help, stdout); return NS_EXIT_OK;
        default: return cli_usage_error("kube", "unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    if (optind + 2 != argc || strcmp(argv[optind], "get") != 0)
        return cli_usage_error("kube", "expected: get RESOURCE");
    const ns_kube_resource *r = find_resource(argv[optind + 1]);
    if (!r)
        return cli_usage_error("kube", "unknown resource '%s'", argv[optind + 1]);
    return get(r, ns, kubeconfig, context);
}
