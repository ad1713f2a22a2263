/* `nodesmith offerings`: what a provider can launch, one row per instance type x zone x capacity type. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli/cli.h"
#include "cloud/instance_types.h"
#include "errors/ns_error.h"
#include "manifest/loader.h"
#include "model/cluster.h"

static const char offerings_help[] =
    "Usage: nodesmith offerings [--provider NAME] [--nodeclass FILE] [--output text|json] [provider options]\n"
    "\n"
    "Lists every instance type the provider offers for a node class, with its capacity, allocatable resources\n"
    "after kubelet reservations, and one row per zone and capacity type with the hourly price; then the node\n"
    "class's status as the provider resolves it (its conditions and what it resolved: images, subnets, ...).\n"
    "\n" CLI_PROVIDER_HELP
    "  --nodeclass FILE         the node class (a manifest holding one, of a kind the provider declares);\n"
    "                           default: the provider's first declared kind with an empty spec\n"
    "  --output text|json       table (default) or one JSON document\n"
    "  --help                   this text\n";

enum { OPT_NODECLASS = 2000 };

static const char *label_or_dash(const ns_itype *t, const char *key)
{
    const char *v = ns_itype_label(t, key);
    return v ? v : "-";
}

static void print_text(const ns_itype_set *set)
{
    printf("%-20s %-6s %-8s %7s %10s %5s %-16s %-10s %10s %s\n", "INSTANCE TYPE", "ARCH", "OS", "CPU", "MEMORY",
           "PODS", "ZONE", "CAPACITY", "PRICE/H", "AVAILABLE");
    for (size_t i = 0; i < set->n; i++) {
        const ns_itype *t = &set->items[i];
        for (size_t j = 0; j < t->n_offerings; j++) {
            const ns_itype_offering *o = &t->offerings[j];
            printf("%-20s %-6s %-8s %6" PRId64 "m %8" PRId64 "Mi %5" PRId64 " %-16s %-10s %10.4f %s\n", t->name,
                   label_or_dash(t, "kubernetes.io/arch"), label_or_dash(t, "kubernetes.io/os"),
                   t->capacity.cpu_milli, t->capacity.memory_bytes / (1024 * 1024), t->capacity.pods, o->zone,
                   o->capacity_type, o->price_per_hour, o->available ? "yes" : "no");
        }
    }
}

static cJSON *resources_json(const ns_res *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "cpu_milli", (double)r->cpu_milli);
    cJSON_AddNumberToObject(o, "memory_bytes", (double)r->memory_bytes);
    cJSON_AddNumberToObject(o, "pods", (double)r->pods);
    cJSON_AddNumberToObject(o, "ephemeral_storage_bytes", (double)r->ephemeral_storage_bytes);
    for (uint32_t i = 0; i < r->n_ext; i++)
        cJSON_AddNumberToObject(o, r->ext[i].name, (double)r->ext[i].value);
    return o;
}

static int print_json(const ns_plugin *plugin, const ns_itype_set *set, cJSON *nodeclass)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "provider", ns_plugin_name(plugin));
    cJSON_AddItemReferenceToObject(root, "nodeclass", nodeclass);
    cJSON *types = cJSON_AddArrayToObject(root, "instance_types");
    for (size_t i = 0; i < set->n; i++) {
        const ns_itype *t = &set->items[i];
        cJSON *jt = cJSON_CreateObject();
        cJSON_AddItemToArray(types, jt);
        cJSON_AddStringToObject(jt, "name", t->name);
        cJSON *labels = cJSON_AddObjectToObject(jt, "labels");
        for (size_t j = 0; j < t->n_labels; j++)
            cJSON_AddStringToObject(labels, t->labels[j].key, t->labels[j].value);
        cJSON_AddItemToObject(jt, "capacity", resources_json(&t->capacity));
        cJSON_AddItemToObject(jt, "allocatable", resources_json(&t->allocatable));
        cJSON *offs = cJSON_AddArrayToObject(jt, "offerings");
        for (size_t j = 0; j < t->n_offerings; j++) {
            cJSON *jo = cJSON_CreateObject();
            cJSON_AddItemToArray(offs, jo);
            cJSON_AddStringToObject(jo, "zone", t->offerings[j].zone);
            cJSON_AddStringToObject(jo, "capacity_type", t->offerings[j].capacity_type);
            cJSON_AddNumberToObject(jo, "price_per_hour", t->offerings[j].price_per_hour);
            cJSON_AddBoolToObject(jo, "available", t->offerings[j].available);
        }
    }
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text)
        return NS_FAIL(NS_ERR_INTERNAL, "offerings: out of memory printing JSON");
    puts(text);
    free(text);
    return NS_OK;
}

/* The one node class of FILE, validated by its provider as the manifest loader does for every node class. */
static int nodeclass_from_file(const char *path, ns_cluster *c, const ns_nodeclass **out)
{
    char known[1024];
    int rc = ns_manifest_load_path(c, path);
    if (rc != NS_OK)
        return rc;
    if (c->n_nodeclasses != 1)
        return NS_FAIL(NS_ERR_INVALID_CONFIG, "--nodeclass %s holds %zu node classes of the provider's kinds (%s); "
                       "give a file with exactly one",
                       path, c->n_nodeclasses, ns_nodeclass_kinds_describe(c->kinds, known, sizeof(known)));
    *out = &c->nodeclasses[0]->abi;
    return NS_OK;
}

/* The provider's first declared kind with an empty spec, as a NodePool naming a fresh node class would. */
static int default_nodeclass(const ns_plugin *plugin, const ns_nodeclass_kinds *kinds, ns_cluster *c,
                             const ns_nodeclass **out)
{
    const ns_nodeclass_kind_info *k = ns_nodeclass_kinds_at(kinds, 0);
    if (!k || k->any_kind)
        return NS_FAIL(NS_ERR_INVALID_CONFIG, "provider %s declares no node-class kinds (ABI %u); give --nodeclass "
                       "FILE", ns_plugin_name(plugin), ns_plugin_abi_version(plugin));
    char doc[1024];
    snprintf(doc, sizeof(doc), "{\"apiVersion\": \"%s\", \"kind\": \"%s\", \"metadata\": {\"name\": \"default\"}}",
             k->api_version, k->kind);
    int rc = ns_manifest_load_string(c, "(default node class)", doc, strlen(doc));
    if (rc != NS_OK)
        return ns_error_prefix("an empty %s does not suit provider %s; give --nodeclass FILE: ", k->kind,
                               ns_plugin_name(plugin));
    *out = &c->nodeclasses[0]->abi;
    return NS_OK;
}

int cmd_offerings(int argc, char **argv)
{
    static const struct option longopts[] = {
        CLI_PROVIDER_LONG_OPTIONS,
        {"output", required_argument, NULL, CLI_OPT_OUTPUT},
        {"nodeclass", required_argument, NULL, OPT_NODECLASS},
        {"help", no_argument, NULL, CLI_OPT_HELP},
        {NULL, 0, NULL, 0},
    };
    cli_provider_args pargs = {0};
    bool json = false;
    int rc = NS_EXIT_OK, opt;
    ns_plugin *plugin = NULL;
    ns_nodeclass_kinds *kinds = NULL;
    ns_cluster *cluster = NULL;
    const char *nodeclass_path = NULL;
    const ns_nodeclass *nodeclass = NULL;
    ns_itype_set set = {0};
    cJSON *status = NULL;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        int handled = cli_provider_arg("offerings", &pargs, opt, optarg);
        if (handled < 0) {
            rc = NS_EXIT_USAGE;
            goto cleanup;
        }
        if (handled)
            continue;
        if (opt == CLI_OPT_HELP) {
            fputs(offerings_help, stdout);
            goto cleanup;
        }
        if (opt == CLI_OPT_OUTPUT) {
            if ((rc = cli_parse_output("offerings", optarg, &json)) != NS_EXIT_OK)
                goto cleanup;
            continue;
        }
        if (opt == OPT_NODECLASS) {
            nodeclass_path = optarg;
            continue;
        }
        rc = cli_usage_error("offerings", "unknown or incomplete option '%s'", argv[optind - 1]);
        goto cleanup;
    }
    if (optind < argc) {
        rc = cli_usage_error("offerings", "unexpected argument '%s'", argv[optind]);
        goto cleanup;
    }
    if ((rc = cli_load_provider("offerings", &pargs, &plugin, &kinds)) != NS_EXIT_OK)
        goto cleanup;
    if (!(cluster = ns_cluster_new())) {
        rc = cli_fail("offerings");
        goto cleanup;
    }
    ns_cluster_set_kinds(cluster, kinds);
    if ((nodeclass_path ? nodeclass_from_file(nodeclass_path, cluster, &nodeclass)
                        : default_nodeclass(plugin, kinds, cluster, &nodeclass)) != NS_OK ||
        ns_itype_set_load(plugin, nodeclass, &set) != NS_OK ||
        cli_nodeclass_json(plugin, nodeclass, &status) != NS_OK ||
        (json ? print_json(plugin, &set, status) : (print_text(&set), cli_nodeclass_text(stdout, status), NS_OK)) !=
            NS_OK)
        rc = cli_fail("offerings");
cleanup:
    cJSON_Delete(status);
    ns_itype_set_free(&set);
    ns_cluster_free(cluster);
    ns_nodeclass_kinds_free(kinds);
    ns_plugin_unload(plugin);
    cli_provider_args_free(&pargs);
    return rc;
}
