/* `nodesmith simulate`: one provisioning round of the controller's code against manifests and a provider plugin. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "cli/cli.h"
#include "clock/ns_clock.h"
#include "cloud/instance_types.h"
#include "disruption/disruption.h"
#include "engine/engine.h"
#include "simulation/engine_sim.h"
#include "simulation/timeline_run.h"
#include "errors/ns_error.h"
#include "log/ns_log.h"
#include "manifest/loader.h"
#include "report/report.h"
#include "sched/sched.h"
#include "simulation/sched_launch.h"
#include "simulation/sched_report.h"

#define SIMULATE_CLUSTER "nodesmith-simulate"

static const char simulate_help[] =
    "Usage: nodesmith simulate -f FILE [-f FILE...] [--provider NAME] [--catalog FILE] [--output text|json]\n"
    "                          [--timeline FILE [--report FILE.html]]\n"
    "\n"
    "Loads the manifests (Pods, workloads, DaemonSets, PDBs, Nodes, NodePools, NodeClaims, node classes), runs one\n"
    "provisioning round as the controller would, launches the node claims it decides through the provider plugin\n"
    "and prints Karpenter-style log lines and a summary. See docs/simulate.md.\n"
    "\n"
    "With --timeline, runs the node-lifecycle engine over simulated time instead and applies the timeline's steps\n"
    "(scale, add, delete, patch, interrupt, launchFailure, advance) as it goes. See docs/timeline.md.\n"
    "\n"
    "  -f, --filename PATH      a manifest file, or a directory of *.yaml/*.yml/*.json; repeatable\n"
    "  --catalog FILE           instance-type catalog for the sim provider (sets its `catalog` option)\n"
    "  --output text|json       a table (default), or one JSON document on stdout with the log lines on stderr\n"
    "  --timeline FILE          run this timeline of steps over simulated time\n"
    "  --report FILE.html       with --timeline: also write a self-contained HTML report (chart and decision log)\n"
    CLI_PROVIDER_HELP
    "  --help                   this text\n";

enum { OPT_CATALOG = 2000, OPT_TIMELINE, OPT_REPORT };

typedef struct sim_run {
    ns_cluster *cluster;
    ns_plugin *plugin;
    ns_itype_set *sets;       /* one per node class in use */
    const ns_nodeclass_def **set_owner;
    size_t n_sets;
    const ns_itype_set **pool_types;
    char **pool_errors;
    const ns_nodeclass **pool_nodeclass;
    ns_sched_result result;
    ns_sched_launch *launches;
} sim_run;

static void sim_run_free(sim_run *r)
{
    size_t pools = r->cluster ? r->cluster->n_nodepools : 0;
    for (size_t i = 0; r->pool_errors && i < pools; i++)
        free(r->pool_errors[i]);
    free(r->pool_errors);
    free(r->pool_types);
    free(r->pool_nodeclass);
    for (size_t i = 0; i < r->n_sets; i++)
        ns_itype_set_free(&r->sets[i]);
    free(r->sets);
    free(r->set_owner);
    ns_sched_launches_free(r->launches, r->launches ? r->result.n_claims : 0);
    ns_sched_result_free(&r->result);
    ns_plugin_unload(r->plugin);
    ns_cluster_free(r->cluster);
}

/* One instance-type set per node class the NodePools use; a class that fails to load disables its pools with the
 * provider's message as the reason. */
static int load_types(sim_run *r)
{
    size_t n = r->cluster->n_nodepools;
    r->sets = calloc(n ? n : 1, sizeof(*r->sets));
    r->set_owner = calloc(n ? n : 1, sizeof(*r->set_owner));
    r->pool_types = calloc(n ? n : 1, sizeof(*r->pool_types));
    r->pool_errors = calloc(n ? n : 1, sizeof(*r->pool_errors));
    r->pool_nodeclass = calloc(n ? n : 1, sizeof(*r->pool_nodeclass));
    if (!r->sets || !r->set_owner || !r->pool_types || !r->pool_errors || !r->pool_nodeclass)
        return NS_FAIL(NS_ERR_INTERNAL, "simulate: out of memory for %zu NodePools", n);
    for (size_t p = 0; p < n; p++) {
        const ns_nodepool *np = r->cluster->nodepools[p];
        const ns_nodeclass_def *def = ns_cluster_nodeclass_for(r->cluster, &np->nodeclass_ref);
        if (!def) {
            char buf[512];
            snprintf(buf, sizeof(buf), "its node class %s %s is not loaded", np->nodeclass_ref.kind,
                     np->nodeclass_ref.name);
            if (!(r->pool_errors[p] = strdup(buf)))
                return NS_FAIL(NS_ERR_INTERNAL, "simulate: out of memory");
            continue;
        }
        r->pool_nodeclass[p] = &def->abi;
        size_t s = 0;
        while (s < r->n_sets && r->set_owner[s] != def)
            s++;
        if (s == r->n_sets) {
            r->set_owner[r->n_sets++] = def;
            if (ns_itype_set_load(r->plugin, &def->abi, &r->sets[s]) != NS_OK) {
                char buf[1200];
                snprintf(buf, sizeof(buf), "listing instance types for %s %s failed: %s", def->kind,
                         def->meta.name, ns_error_message());
                ns_log(NS_LOG_ERROR, "provisioner", "could not list instance types", "nodeclass", def->meta.name,
                       "error", ns_error_message(), NULL);
                r->set_owner[s] = NULL;
                if (!(r->pool_errors[p] = strdup(buf)))
                    return NS_FAIL(NS_ERR_INTERNAL, "simulate: out of memory");
                continue;
            }
        }
        if (r->set_owner[s])
            r->pool_types[p] = &r->sets[s];
        else if (!(r->pool_errors[p] = strdup("its node class's instance types could not be listed")))
            return NS_FAIL(NS_ERR_INTERNAL, "simulate: out of memory");
    }
    return NS_OK;
}

/* "default/a, default/b and 3 other(s)", as Karpenter lists pods in its log lines. */
static void pod_list(const ns_cluster *cl, char *buf, size_t len)
{
    size_t off = 0, shown = 0, total = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < cl->n_pods; i++) {
        if (!ns_sched_pod_is_pending(cl->pods[i]))
            continue;
        total++;
        if (shown < 5 && off < len) {
            const ns_pod *p = cl->pods[i];
            int w = snprintf(buf + off, len - off, "%s%s/%s", shown ? ", " : "",
                             p->meta.namespace_ ? p->meta.namespace_ : "default", p->meta.name);
            off += w > 0 ? (size_t)w : 0;
            shown++;
        }
    }
    if (total > shown && off < len)
        snprintf(buf + off, len - off, " and %zu other(s)", total - shown);
}

static double seconds_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

static int simulate(sim_run *r, bool json)
{
    int rc = load_types(r);
    if (rc != NS_OK)
        return rc;
    char pods[1024], num[32], dur[32];
    pod_list(r->cluster, pods, sizeof(pods));
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ns_sched_input in = {.cluster = r->cluster, .pool_types = r->pool_types,
                         .pool_errors = (const char *const *)r->pool_errors};
    if ((rc = ns_sched_run(&in, &r->result)) != NS_OK)
        return rc;
    snprintf(dur, sizeof(dur), "%.3fms", seconds_since(&t0) * 1e3);
    snprintf(num, sizeof(num), "%zu", r->result.n_pending);
    ns_log(NS_LOG_INFO, "provisioner", "found provisionable pod(s)", "Pods", pods, "count", num, "duration", dur,
           NULL);
    for (size_t i = 0; i < r->result.n_unschedulable; i++) {
        const ns_pod *p = r->cluster->pods[r->result.unschedulable[i].pod];
        ns_log(NS_LOG_ERROR, "provisioner", "could not schedule pod", "Pod", p->meta.name, "namespace",
               p->meta.namespace_ ? p->meta.namespace_ : "default", "error", r->result.unschedulable[i].reason, NULL);
    }
    char nclaims[32], npods[32];
    size_t on_claims = r->result.n_pending - r->result.n_on_existing - r->result.n_unschedulable;
    snprintf(nclaims, sizeof(nclaims), "%zu", r->result.n_claims);
    snprintf(npods, sizeof(npods), "%zu", on_claims);
    if (r->result.n_claims)
        ns_log(NS_LOG_INFO, "provisioner", "computed new nodeclaim(s) to fit pod(s)", "nodeclaims", nclaims, "pods",
               npods, NULL);
    r->launches = calloc(r->result.n_claims ? r->result.n_claims : 1, sizeof(*r->launches));
    if (!r->launches)
        return NS_FAIL(NS_ERR_INTERNAL, "simulate: out of memory for %zu launches", r->result.n_claims);
    if ((rc = ns_sched_launch_claims(r->plugin, r->cluster, r->pool_nodeclass, SIMULATE_CLUSTER, &r->result,
                                     r->launches)) != NS_OK)
        return rc;
    if (!json) {
        ns_sched_report_text(stdout, r->cluster, &r->result, r->launches);
        return NS_OK;
    }
    cJSON *doc = ns_sched_report_json(r->cluster, &r->result, r->launches);
    char *text = doc ? cJSON_Print(doc) : NULL;
    cJSON_Delete(doc);
    if (!text)
        return NS_FAIL(NS_ERR_INTERNAL, "simulate: out of memory printing the JSON summary");
    puts(text);
    free(text);
    return NS_OK;
}

/* Prints the report document (JSON) or its summary (text), and writes the HTML page when asked. */
static int timeline_outputs(const cJSON *doc, bool json, const char *report)
{
    int rc = NS_OK;
    if (json) {
        char *text = cJSON_Print(doc);
        if (!text)
            return NS_FAIL(NS_ERR_INTERNAL, "simulate: out of memory printing the JSON document");
        puts(text);
        cJSON_free(text);
    } else {
        rc = ns_report_text(stdout, doc);
    }
    if (rc == NS_OK && report)
        rc = ns_report_html_file(report, doc);
    return rc;
}

/* The timeline run: the engine over the loaded cluster, on a simulated clock that the plugin was loaded with. */
static int simulate_timeline(sim_run *r, const ns_timeline *t, ns_tl_sources *sources, bool json, const char *report)
{
    ns_engine_config cfg;
    ns_engine_config_default(&cfg);
    cfg.cluster_name = SIMULATE_CLUSTER;
    ns_timeline_engine_config(t, &cfg);
    ns_engine *engine = NULL;
    cJSON *doc = NULL;
    ns_disruption_config disruption = {.spot_to_spot = t->engine.spot_to_spot > 0};
    int rc = ns_engine_new(r->cluster, r->plugin, &cfg, &engine);
    if (rc == NS_OK)
        rc = ns_disruption_register(engine, &disruption);
    if (rc == NS_OK)
        rc = ns_timeline_run(engine, t, sources, &doc);
    /* A failed run still reports the steps it completed, then fails with the step's error. */
    if (doc) {
        ns_error_record failure = *ns_error_last();
        int out_rc = timeline_outputs(doc, json, report);
        if (rc == NS_OK)
            rc = out_rc;
        else
            ns_error_set(failure.code, failure.file, failure.line, "%s", failure.message);
    }
    cJSON_Delete(doc);
    ns_engine_free(engine);
    return rc;
}

static int add_catalog(cli_provider_args *pargs, char *path)
{
    ns_plugin_setting *grown = realloc(pargs->settings, (pargs->n_settings + 1) * sizeof(*grown));
    if (!grown) {
        fprintf(stderr, "nodesmith simulate: out of memory\n");
        return NS_EXIT_FAILED;
    }
    pargs->settings = grown;
    pargs->settings[pargs->n_settings++] = (ns_plugin_setting){"catalog", path};
    return NS_EXIT_OK;
}

/* test_hooks=true goes first, so a --set test_hooks=... of the user's still wins. */
static int enable_test_hooks(cli_provider_args *pargs)
{
    ns_plugin_setting *grown = realloc(pargs->settings, (pargs->n_settings + 1) * sizeof(*grown));
    if (!grown) {
        fprintf(stderr, "nodesmith simulate: out of memory\n");
        return NS_EXIT_FAILED;
    }
    memmove(grown + 1, grown, pargs->n_settings * sizeof(*grown));
    grown[0] = (ns_plugin_setting){"test_hooks", "true"};
    pargs->settings = grown;
    pargs->n_settings++;
    return NS_EXIT_OK;
}

int cmd_simulate(int argc, char **argv)
{
    static const struct option longopts[] = {
        CLI_PROVIDER_LONG_OPTIONS,
        {"filename", required_argument, NULL, 'f'},
        {"catalog", required_argument, NULL, OPT_CATALOG},
        {"output", required_argument, NULL, CLI_OPT_OUTPUT},
        {"timeline", required_argument, NULL, OPT_TIMELINE},
        {"report", required_argument, NULL, OPT_REPORT},
        {"help", no_argument, NULL, CLI_OPT_HELP},
        {NULL, 0, NULL, 0},
    };
    cli_provider_args pargs = {0};
    bool json = false;
    int rc = NS_EXIT_OK, opt;
    char **files = calloc((size_t)argc + 1, sizeof(char *));
    size_t n_files = 0;
    sim_run run = {0};
    const char *timeline_path = NULL, *report = NULL;
    ns_timeline *timeline = NULL;
    ns_tl_sources *sources = NULL;
    ns_nodeclass_kinds *kinds = NULL;
    if (!files) {
        fprintf(stderr, "nodesmith simulate: out of memory\n");
        return NS_EXIT_FAILED;
    }
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "f:", longopts, NULL)) != -1) {
        int handled = cli_provider_arg("simulate", &pargs, opt, optarg);
        if (handled < 0) {
            rc = NS_EXIT_USAGE;
            goto cleanup;
        }
        if (handled)
            continue;
        if (opt == 'f') {
            files[n_files++] = optarg;
        } else if (opt == OPT_CATALOG) {
            if ((rc = add_catalog(&pargs, optarg)) != NS_EXIT_OK)
                goto cleanup;
        } else if (opt == OPT_TIMELINE) {
            timeline_path = optarg;
        } else if (opt == OPT_REPORT) {
            report = optarg;
        } else if (opt == CLI_OPT_OUTPUT) {
            if ((rc = cli_parse_output("simulate", optarg, &json)) != NS_EXIT_OK)
                goto cleanup;
        } else if (opt == CLI_OPT_HELP) {
            fputs(simulate_help, stdout);
            goto cleanup;
        } else {
            rc = cli_usage_error("simulate", "unknown or incomplete option '%s'", argv[optind - 1]);
            goto cleanup;
        }
    }
    if (optind < argc) {
        rc = cli_usage_error("simulate", "unexpected argument '%s'", argv[optind]);
        goto cleanup;
    }
    if (n_files == 0) {
        rc = cli_usage_error("simulate", "no manifests given (use -f FILE)");
        goto cleanup;
    }
    if (report && !timeline_path) {
        rc = cli_usage_error("simulate", "--report needs --timeline (the report shows a timeline run)");
        goto cleanup;
    }
    /* Text output shows log lines and the table together; JSON keeps stdout for the one document. */
    ns_log_set_output(json ? stderr : stdout);
    if (!(run.cluster = ns_cluster_new())) {
        rc = cli_fail("simulate");
        goto cleanup;
    }
    /* Interruptions and launch failures are injected through the sim provider's test hooks. */
    if (timeline_path && (!pargs.name || strcmp(pargs.name, "sim") == 0) &&
        (rc = enable_test_hooks(&pargs)) != NS_EXIT_OK)
        goto cleanup;
    /* The provider comes first: the node-class kinds the manifests and the timeline may hold are its own. */
    if ((rc = cli_load_provider("simulate", &pargs, &run.plugin, &kinds)) != NS_EXIT_OK)
        goto cleanup;
    ns_cluster_set_kinds(run.cluster, kinds);
    /* The timeline is read before the manifests: its errors come before any work, and its start sets the clock. */
    if (timeline_path) {
        if (ns_timeline_load_file(timeline_path, kinds, &timeline) != NS_OK || !(sources = ns_tl_sources_new())) {
            rc = cli_fail("simulate");
            goto cleanup;
        }
        ns_clock_use_simulated(timeline->start_ms);
    }
    for (size_t i = 0; i < n_files; i++)
        if (ns_manifest_load_path(run.cluster, files[i]) != NS_OK ||
            (sources && ns_tl_sources_add_path(sources, files[i]) != NS_OK)) {
            rc = cli_fail("simulate");
            goto cleanup;
        }
    if (ns_cluster_resolve(run.cluster) != NS_OK) {
        rc = cli_fail("simulate");
        goto cleanup;
    }
    if ((timeline ? simulate_timeline(&run, timeline, sources, json, report) : simulate(&run, json)) != NS_OK)
        rc = cli_fail("simulate");
cleanup:
    ns_tl_sources_free(sources);
    ns_timeline_free(timeline);
    sim_run_free(&run);
    ns_nodeclass_kinds_free(kinds);
    cli_provider_args_free(&pargs);
    free(files);
    return rc;
}
