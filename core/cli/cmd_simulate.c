/* `nodesmith simulate`: the engine over manifests and a provider plugin, for one provisioning round (its first step)
 * or a timeline. Every instance it launched is terminated before it exits, also on SIGINT/SIGTERM. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli/cli.h"
#include "clock/ns_clock.h"
#include "disruption/disruption.h"
#include "engine/engine.h"
#include "errors/ns_error.h"
#include "log/ns_log.h"
#include "manifest/loader.h"
#include "manifest/scheduler_config.h"
#include "model/model_util.h"
#include "report/report.h"
#include "sched/sched.h"
#include "simulation/engine_sim.h"
#include "simulation/round_report.h"
#include "simulation/timeline_run.h"

#define SIMULATE_CLUSTER "nodesmith-simulate"

static const char simulate_help[] =
    "Usage: nodesmith simulate -f FILE [-f FILE...] [--provider NAME [--allow-launch]] [--catalog FILE]\n"
    "                          [--output text|json] [--timeline FILE [--report FILE.html] [--every-tick]]\n"
    "                          [--packing karpenter|cost] [--min-values-policy Strict|BestEffort]\n"
    "                          [--preference-policy Respect|Ignore] [--scheduler-config DOCUMENT]\n"
    "                          [--commitments FILE]\n"
    "       nodesmith simulate --from-cluster [--kubeconfig FILE] [--context NAME] [-f FILE...] [options]\n"
    "\n"
    "Loads the manifests (Pods, workloads, DaemonSets, PDBs, Nodes, NodePools, NodeClaims, node classes), runs one\n"
    "provisioning round of the node-lifecycle engine (its first step), launches the node claims it decides through the\n"
    "provider plugin and prints Karpenter-style log lines and a summary. See docs/simulate.md.\n"
    "\n"
    "With --from-cluster, starts from the live cluster instead (its Pods, Nodes, NodePools, NodeClaims, node classes,\n"
    "PDBs and DaemonSets, read with get and list only): what nodesmith would do now. Nothing is written to the\n"
    "cluster and nothing is launched: it runs on the sim provider (give --catalog for your cloud's types). Manifests\n"
    "given with -f are added to what the cluster holds: what would happen if they were applied.\n"
    "\n"
    "With --timeline, runs the engine over simulated time instead and applies the timeline's steps (scale, add,\n"
    "delete, patch, interrupt, launchFailure, advance) as it goes. See docs/timeline.md. A violated invariant makes\n"
    "the exit status non-zero.\n"
    "\n"
    "Every instance simulate launched is terminated before it exits, also on SIGINT and SIGTERM. A provider other than\n"
    "sim launches real instances: simulate refuses unless --allow-launch is given.\n"
    "\n"
    "  -f, --filename PATH      a manifest file, or a directory of *.yaml/*.yml/*.json; repeatable\n"
    "  --from-cluster           start from the live cluster (see above)\n"
    "  --kubeconfig FILE        with --from-cluster (default: $KUBECONFIG, in-cluster, ~/.kube/config)\n"
    "  --context NAME           with --from-cluster: a kubeconfig context other than the current one\n"
    "  --allow-launch           let a provider other than sim launch (real) instances\n"
    "  --catalog FILE           instance-type catalog for the sim provider (sets its `catalog` option)\n"
    "  --output text|json       a table (default), or one JSON document on stdout with the log lines on stderr\n"
    "  --timeline FILE          run this timeline of steps over simulated time\n"
    "  --report FILE.html       with --timeline: also write a self-contained HTML report (chart and decision log)\n"
    "  --every-tick             with --timeline: step the engine at every tick, not only when something is due\n"
    "                           (slower; the same decisions and report, for comparison)\n"
    "  --packing karpenter|cost karpenter: Karpenter's greedy packing (default); cost: the new nodes of each round\n"
    "                           cost the least per hour found for the same pods (docs/cost.md)\n"
    "  --min-values-policy Strict|BestEffort\n"
    "                           Karpenter's MIN_VALUES_POLICY (the variable is read when the flag is not given):\n"
    "                           Strict (default) keeps each minValues; BestEffort lowers it to what is left\n"
    "  --preference-policy Respect|Ignore\n"
    "                           Karpenter's PREFERENCE_POLICY (likewise): Respect (default) or Ignore preferred\n"
    "                           affinity terms and ScheduleAnyway spreads\n"
    "  --scheduler-config DOCUMENT\n"
    "                           Karpenter's SCHEDULER_CONFIG (likewise): a YAML or JSON document whose\n"
    "                           podTopologySpread.defaultConstraints spread every pending pod that has no\n"
    "                           topologySpreadConstraints, selected as kube-scheduler selects it (docs/simulate.md)\n"
    "  --commitments FILE       savings plans and reserved capacity (docs/cost.md): offerings they cover are priced\n"
    "                           at their effective cost while they have room; prints each one's utilisation\n"
    CLI_PROVIDER_HELP
    "  --help                   this text\n";

enum {
    OPT_CATALOG = 2000,
    OPT_TIMELINE,
    OPT_REPORT,
    OPT_ALLOW_LAUNCH,
    OPT_FROM_CLUSTER,
    OPT_KUBECONFIG,
    OPT_CONTEXT,
    OPT_EVERY_TICK,
    OPT_PACKING,
    OPT_MIN_VALUES_POLICY,
    OPT_PREFERENCE_POLICY,
    OPT_SCHEDULER_CONFIG,
    OPT_COMMITMENTS
};

/* Set by SIGINT/SIGTERM: the engine stops between two steps and simulate cleans up. */
static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
    stop_signal = sig;
}

/* No SA_RESTART: a blocking wait returns, and the run notices the flag at the next step. */
static void catch_signals(struct sigaction *old_int, struct sigaction *old_term)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, old_int);
    sigaction(SIGTERM, &sa, old_term);
}

typedef struct sim_run {
    ns_cluster *cluster;
    ns_plugin *plugin;
    ns_engine *engine;
    bool json;
    bool every_tick;        /* --every-tick */
    ns_sched_packing packing; /* --packing */
    ns_sched_min_values_policy min_values_policy; /* --min-values-policy, MIN_VALUES_POLICY */
    ns_sched_preference_policy preference_policy; /* --preference-policy, PREFERENCE_POLICY */
    ns_scheduler_config sched_config;             /* --scheduler-config, SCHEDULER_CONFIG */
    ns_commitments commitments; /* --commitments */
    ns_commit_ledger *ledger;   /* their utilisation once the run is over; NULL without commitments */
    ns_round_report *round; /* the round's summary */
    cJSON *doc;             /* the timeline's document, or the round's when JSON is printed */
    /* The clean-up's lists of terminated instances and failures, for the document. */
    cJSON *terminated, *termination_failures;
    bool launch_failed; /* a claim of the round was not launched */
    size_t violations;  /* invariant violations the timeline's steps recorded */
} sim_run;

static void sim_run_free(sim_run *r)
{
    cJSON_Delete(r->termination_failures);
    cJSON_Delete(r->terminated);
    cJSON_Delete(r->doc);
    ns_round_report_free(r->round);
    ns_commit_ledger_free(r->ledger);
    ns_engine_free(r->engine);
    ns_commitments_free(&r->commitments); /* after the engine, which borrowed them */
    ns_plugin_unload(r->plugin);
    ns_cluster_free(r->cluster);
    ns_scheduler_config_free(&r->sched_config);
}

/* "namespace/name" of every pod provisioning considers now. */
static int pending_pods(const ns_cluster *c, char ***out, size_t *n)
{
    *n = 0;
    if (!(*out = calloc(c->n_pods ? c->n_pods : 1, sizeof(char *))))
        return NS_FAIL(NS_ERR_INTERNAL, "simulate: out of memory listing pending pods");
    for (size_t i = 0; i < c->n_pods; i++) {
        const ns_pod *p = c->pods[i];
        if (!ns_sched_pod_is_pending(p))
            continue;
        char ref[600];
        snprintf(ref, sizeof(ref), "%s/%s", p->meta.namespace_ ? p->meta.namespace_ : "default", p->meta.name);
        if (!((*out)[(*n)++] = ns_strdup(ref)))
            return NS_FAIL(NS_ERR_INTERNAL, "simulate: out of memory listing pending pods");
    }
    return NS_OK;
}

/* One provisioning round: the engine's first step, with the batch window closed. */
static int simulate_round(sim_run *r)
{
    ns_engine_config cfg;
    ns_engine_config_default(&cfg);
    cfg.cluster_name = SIMULATE_CLUSTER;
    cfg.batch_idle_ms = 0;
    cfg.batch_max_ms = 0;
    cfg.packing = r->packing;
    cfg.min_values_policy = r->min_values_policy;
    cfg.preference_policy = r->preference_policy;
    cfg.default_spread = r->sched_config.default_spread;
    cfg.n_default_spread = r->sched_config.n_default_spread;
    cfg.commitments = &r->commitments;
    char **pending = NULL;
    size_t n_pending = 0;
    int rc = ns_engine_new(r->cluster, r->plugin, &cfg, &r->engine);
    if (rc == NS_OK)
        ns_engine_set_stop_flag(r->engine, &stop_signal);
    if (rc == NS_OK)
        rc = pending_pods(r->cluster, &pending, &n_pending);
    if (rc == NS_OK)
        rc = ns_engine_step(r->engine);
    if (rc == NS_OK) {
        rc = ns_report_round(r->engine, pending, n_pending, &r->round); /* takes pending */
        pending = NULL;
        n_pending = 0;
    }
    ns_strv_free(pending, n_pending);
    if (rc == NS_OK)
        r->launch_failed = ns_round_report_launch_failed(r->round);
    if (rc == NS_OK && r->commitments.n)
        rc = ns_engine_commit_ledger(r->engine, &r->ledger);
    return rc;
}

/* The timeline run: the engine over the loaded cluster, on a simulated clock that the plugin was loaded with. A
 * failed run still keeps the steps it completed in r->doc. */
static int simulate_timeline(sim_run *r, const ns_timeline *t, ns_tl_sources *sources)
{
    ns_engine_config cfg;
    ns_engine_config_default(&cfg);
    cfg.cluster_name = SIMULATE_CLUSTER;
    cfg.every_tick = r->every_tick;
    cfg.packing = r->packing;
    cfg.min_values_policy = r->min_values_policy;
    cfg.preference_policy = r->preference_policy;
    cfg.default_spread = r->sched_config.default_spread;
    cfg.n_default_spread = r->sched_config.n_default_spread;
    cfg.commitments = &r->commitments;
    ns_timeline_engine_config(t, &cfg);
    ns_disruption_config disruption = {.spot_to_spot = t->engine.spot_to_spot > 0};
    int rc = ns_engine_new(r->cluster, r->plugin, &cfg, &r->engine);
    if (rc == NS_OK)
        ns_engine_set_stop_flag(r->engine, &stop_signal);
    if (rc == NS_OK)
        rc = ns_disruption_register(r->engine, &disruption);
    if (rc == NS_OK)
        rc = ns_timeline_run(r->engine, t, sources, &r->doc);
    r->violations = r->doc ? ns_timeline_violations(r->doc) : 0;
    if (rc == NS_OK && r->commitments.n)
        rc = ns_engine_commit_ledger(r->engine, &r->ledger);
    return rc;
}

/* ---- Cleaning up: every instance of a node claim this run created is terminated. */

typedef struct owned {
    const ns_engine *e;
    char **ids;     /* provider IDs to terminate */
    char **claims;  /* their node claims */
    size_t n, cap;
    int rc;
} owned;

static bool created_here(const ns_engine *e, const char *claim)
{
    size_t nd;
    const ns_decision *d = ns_engine_decisions(e, &nd);
    for (size_t i = 0; claim && i < nd; i++)
        if (d[i].kind == NS_DECISION_CREATED_NODECLAIM && strcmp(d[i].nodeclaims, claim) == 0)
            return true;
    return false;
}

static void owned_add(owned *o, const char *id, const char *claim)
{
    for (size_t i = 0; i < o->n; i++)
        if (strcmp(o->ids[i], id) == 0)
            return;
    if (o->rc == NS_OK && (ns_grow((void **)&o->ids, &o->cap, o->n + 1, sizeof(char *)) < 0 ||
                           !(o->claims = realloc(o->claims, o->cap * sizeof(char *)))))
        o->rc = NS_FAIL(NS_ERR_INTERNAL, "simulate: out of memory listing instances to terminate");
    if (o->rc != NS_OK)
        return;
    o->ids[o->n] = ns_strdup(id);
    o->claims[o->n] = ns_strdup(claim ? claim : "");
    if (!o->ids[o->n] || !o->claims[o->n])
        o->rc = NS_FAIL(NS_ERR_INTERNAL, "simulate: out of memory listing instances to terminate");
    o->n++;
}

static int on_instance(void *ctx, const ns_instance *inst)
{
    owned *o = ctx;
    if (created_here(o->e, inst->nodeclaim_name))
        owned_add(o, inst->provider_id, inst->nodeclaim_name);
    return o->rc;
}

/* The claims still holding an instance, and whatever the provider lists for a claim this run created (a launch
 * whose answer was lost still left an instance). */
static int collect_owned(const sim_run *r, owned *o, char *why, size_t len)
{
    const ns_cluster *c = r->cluster;
    for (size_t i = 0; i < c->n_nodeclaims; i++)
        if (c->nodeclaims[i]->provider_id && c->nodeclaims[i]->provider_id[0] &&
            created_here(r->engine, c->nodeclaims[i]->meta.name))
            owned_add(o, c->nodeclaims[i]->provider_id, c->nodeclaims[i]->meta.name);
    if (ns_plugin_list_instances(r->plugin, on_instance, o) != NS_OK)
        snprintf(why, len, "listing the provider's instances failed: %s", ns_error_message());
    return o->rc;
}

static void owned_free(owned *o)
{
    ns_strv_free(o->ids, o->n);
    ns_strv_free(o->claims, o->n);
}

/* Terminates what the run launched; the summary goes into r's lists for the JSON document or to stdout. Every failure is an
 * error naming the instance; the first one is returned. */
static int terminate_launched(sim_run *r)
{
    if (!r->engine)
        return NS_OK;
    owned o = {.e = r->engine};
    char list_failed[1200] = "";
    int rc = collect_owned(r, &o, list_failed, sizeof(list_failed)), first = NS_OK;
    char first_msg[1200] = "";
    cJSON *done = cJSON_CreateArray(), *failed = cJSON_CreateArray();
    if (!done || !failed)
        rc = NS_FAIL(NS_ERR_INTERNAL, "simulate: out of memory summarising terminations");
    int n_done = 0, n_failed = 0;
    for (size_t i = 0; rc == NS_OK && i < o.n; i++) {
        bool gone = false;
        /* Only the JSON document lists them; the text output says each on its line. */
        cJSON *item = r->json ? cJSON_CreateObject() : NULL;
        cJSON_AddStringToObject(item, "provider_id", o.ids[i]);
        cJSON_AddStringToObject(item, "nodeclaim", o.claims[i]);
        if (ns_plugin_terminate(r->plugin, o.ids[i], &gone) == NS_OK) {
            n_done++;
            cJSON_AddItemToArray(done, item);
            if (!r->json)
                printf("terminated instance %s (nodeclaim %s)%s\n", o.ids[i], o.claims[i],
                       gone ? ", already gone" : "");
            continue;
        }
        char msg[1200];
        snprintf(msg, sizeof(msg), "terminating instance %s (nodeclaim %s) failed: %s", o.ids[i], o.claims[i],
                 ns_error_message());
        n_failed++;
        cJSON_AddStringToObject(item, "error", msg);
        cJSON_AddItemToArray(failed, item);
        fprintf(stderr, "nodesmith simulate: %s\n", msg);
        if (first == NS_OK) {
            first = NS_ERR_INTERNAL;
            snprintf(first_msg, sizeof(first_msg), "%s", msg);
        }
    }
    if (rc == NS_OK && list_failed[0]) {
        fprintf(stderr, "nodesmith simulate: %s\n", list_failed);
        if (first == NS_OK) {
            first = NS_ERR_INTERNAL;
            snprintf(first_msg, sizeof(first_msg), "%s", list_failed);
        }
    }
    if (rc == NS_OK && !r->json)
        printf("%d instance(s) terminated, %d could not be\n", n_done, n_failed);
    if (rc == NS_OK) {
        r->terminated = done;
        r->termination_failures = failed;
    } else {
        cJSON_Delete(done);
        cJSON_Delete(failed);
    }
    owned_free(&o);
    if (rc == NS_OK && first != NS_OK)
        rc = NS_FAIL(first, "%s", first_msg);
    return rc;
}

/* The JSON document's "nodeclasses": each node class with the status its provider resolves for it (ABI 4). */
static int add_nodeclass_statuses(const sim_run *r)
{
    cJSON *list = cJSON_AddArrayToObject(r->doc, "nodeclasses");
    if (!list)
        return NS_FAIL(NS_ERR_INTERNAL, "simulate: out of memory adding node-class statuses");
    for (size_t i = 0; i < r->cluster->n_nodeclasses; i++) {
        cJSON *nc = NULL;
        if (cli_nodeclass_json(r->plugin, &r->cluster->nodeclasses[i]->abi, &nc) != NS_OK)
            return ns_error_prefix("simulate: ");
        cJSON_AddItemToArray(list, nc);
    }
    return NS_OK;
}

/* The JSON document's "commitments": each commitment's utilisation once the run is over (docs/cost.md). */
static int add_commitments(const sim_run *r)
{
    cJSON *list = NULL;
    if (!r->ledger)
        return NS_OK;
    int rc = ns_commit_ledger_json(r->ledger, &list);
    if (rc == NS_OK && !cJSON_AddItemToObject(r->doc, "commitments", list)) {
        cJSON_Delete(list);
        rc = NS_FAIL(NS_ERR_INTERNAL, "simulate: out of memory adding the commitments' utilisation");
    }
    return rc;
}

/* Prints the document (JSON) or its summary (text), and writes the HTML page when asked. The round's document is
 * built here, only for JSON; the clean-up's lists move into the document. */
static int print_outputs(sim_run *r, bool timeline, const char *report)
{
    int rc = NS_OK;
    if (!timeline && r->json && (rc = ns_round_report_json(r->round, true, &r->doc)) != NS_OK)
        return rc;
    if (r->doc && r->terminated) {
        cJSON_AddItemToObject(r->doc, "terminated", r->terminated);
        cJSON_AddItemToObject(r->doc, "termination_failures", r->termination_failures);
        r->terminated = r->termination_failures = NULL;
    }
    if (r->json) {
        if ((rc = add_nodeclass_statuses(r)) != NS_OK || (rc = add_commitments(r)) != NS_OK)
            return rc;
        char *text = cJSON_Print(r->doc);
        if (!text)
            return NS_FAIL(NS_ERR_INTERNAL, "simulate: out of memory printing the JSON document");
        puts(text);
        cJSON_free(text);
    } else {
        rc = timeline ? ns_report_text(stdout, r->doc) : ns_round_report_text(stdout, r->round);
        if (rc == NS_OK && r->ledger)
            rc = ns_commit_ledger_text(stdout, r->ledger);
    }
    if (rc == NS_OK && report)
        rc = ns_report_html_file(report, r->doc);
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

/* The scheduling policies from their flags, else from Karpenter's variables (an empty variable is unset, as
 * Karpenter's env.WithDefaultString reads it). A bad value is a usage error naming the setting; a bad scheduler
 * config's also names where the document came from (the flag or the variable), its line and its field. */
static int read_policies(sim_run *r, const char *min_values, const char *preference, const char *sched_config,
                         const char *sched_config_source)
{
    if (sched_config && *sched_config &&
        ns_scheduler_config_parse(sched_config_source, sched_config, &r->sched_config) < 0)
        return cli_usage_error("simulate", "setting SCHEDULER_CONFIG (--scheduler-config): %s", ns_error_message());
    if (min_values && *min_values && ns_sched_min_values_policy_parse(min_values, &r->min_values_policy) < 0)
        return cli_usage_error("simulate", "setting MIN_VALUES_POLICY (--min-values-policy): %s", ns_error_message());
    if (preference && *preference && ns_sched_preference_policy_parse(preference, &r->preference_policy) < 0)
        return cli_usage_error("simulate", "setting PREFERENCE_POLICY (--preference-policy): %s",
                               ns_error_message());
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

/* The run, its outputs, then the clean-up, which happens whatever went before (an error, a signal). The exit status
 * is non-zero when any of them failed, a launch failed, or a provider could not be reached. */
static int run_and_clean_up(sim_run *r, const ns_timeline *t, ns_tl_sources *sources, const char *report)
{
    struct sigaction old_int, old_term;
    catch_signals(&old_int, &old_term);
    int rc = t ? simulate_timeline(r, t, sources) : simulate_round(r);
    ns_error_record failure = *ns_error_last();
    if (r->engine && ns_engine_listing_error(r->engine) && rc == NS_OK)
        rc = NS_FAIL(NS_ERR_INTERNAL, "the provider could not be reached: %s", ns_engine_listing_error(r->engine));
    else if (rc != NS_OK)
        ns_error_set(failure.code, failure.file, failure.line, "%s", failure.message);
    failure = *ns_error_last();
    /* A failed run still reports what it did, then its error. */
    int clean_rc = terminate_launched(r);
    int out_rc = r->doc || r->round ? print_outputs(r, t != NULL, report) : NS_OK;
    int exit_rc = NS_EXIT_OK;
    if (rc != NS_OK) {
        ns_error_set(failure.code, failure.file, failure.line, "%s", failure.message);
        exit_rc = cli_fail("simulate");
    } else if (clean_rc != NS_OK || out_rc != NS_OK) {
        exit_rc = cli_fail("simulate");
    } else if (r->launch_failed) {
        fprintf(stderr, "nodesmith simulate: a node claim could not be launched (see launch_failures)\n");
        exit_rc = NS_EXIT_FAILED;
    } else if (r->violations) {
        fprintf(stderr, "nodesmith simulate: %zu invariant violation(s) (see each step's state.invariants)\n",
                r->violations);
        exit_rc = NS_EXIT_FAILED;
    }
    if (stop_signal) {
        fprintf(stderr, "nodesmith simulate: stopped by %s\n", stop_signal == SIGINT ? "SIGINT" : "SIGTERM");
        exit_rc = 128 + stop_signal;
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    return exit_rc;
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
        {"allow-launch", no_argument, NULL, OPT_ALLOW_LAUNCH},
        {"from-cluster", no_argument, NULL, OPT_FROM_CLUSTER},
        {"kubeconfig", required_argument, NULL, OPT_KUBECONFIG},
        {"context", required_argument, NULL, OPT_CONTEXT},
        {"every-tick", no_argument, NULL, OPT_EVERY_TICK},
        {"packing", required_argument, NULL, OPT_PACKING},
        {"commitments", required_argument, NULL, OPT_COMMITMENTS},
        {"min-values-policy", required_argument, NULL, OPT_MIN_VALUES_POLICY},
        {"preference-policy", required_argument, NULL, OPT_PREFERENCE_POLICY},
        {"scheduler-config", required_argument, NULL, OPT_SCHEDULER_CONFIG},
        {"help", no_argument, NULL, CLI_OPT_HELP},
        {NULL, 0, NULL, 0},
    };
    cli_provider_args pargs = {0};
    bool json = false, allow_launch = false, from_cluster = false;
    const char *kubeconfig = NULL, *context = NULL;
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
    const char *min_values_policy = getenv("MIN_VALUES_POLICY"), *preference_policy = getenv("PREFERENCE_POLICY");
    const char *sched_config = getenv("SCHEDULER_CONFIG"), *sched_config_source = "SCHEDULER_CONFIG";
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
        } else if (opt == OPT_ALLOW_LAUNCH) {
            allow_launch = true;
        } else if (opt == OPT_FROM_CLUSTER) {
            from_cluster = true;
        } else if (opt == OPT_KUBECONFIG) {
            kubeconfig = optarg;
        } else if (opt == OPT_CONTEXT) {
            context = optarg;
        } else if (opt == OPT_EVERY_TICK) {
            run.every_tick = true;
        } else if (opt == OPT_PACKING) {
            if (ns_sched_packing_parse(optarg, &run.packing) < 0) {
                rc = cli_usage_error("simulate", "--packing: %s", ns_error_message());
                goto cleanup;
            }
        } else if (opt == OPT_COMMITMENTS) {
            ns_commitments_free(&run.commitments);
            if (ns_commitments_read(optarg, &run.commitments) < 0) {
                rc = cli_usage_error("simulate", "--commitments: %s", ns_error_message());
                goto cleanup;
            }
        } else if (opt == OPT_MIN_VALUES_POLICY) {
            min_values_policy = optarg;
        } else if (opt == OPT_PREFERENCE_POLICY) {
            preference_policy = optarg;
        } else if (opt == OPT_SCHEDULER_CONFIG) {
            sched_config = optarg;
            sched_config_source = "--scheduler-config";
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
    if ((rc = read_policies(&run, min_values_policy, preference_policy, sched_config, sched_config_source)) != NS_EXIT_OK)
        goto cleanup;
    if (n_files == 0 && !from_cluster) {
        rc = cli_usage_error("simulate", "no manifests given (use -f FILE, or --from-cluster)");
        goto cleanup;
    }
    if ((kubeconfig || context) && !from_cluster) {
        rc = cli_usage_error("simulate", "--%s reads a live cluster: it needs --from-cluster",
                             kubeconfig ? "kubeconfig" : "context");
        goto cleanup;
    }
    /* A what-if must not touch the cloud: only the simulated one launches nothing real. */
    if (from_cluster && (allow_launch || (pargs.name && strcmp(pargs.name, "sim") != 0))) {
        rc = cli_usage_error("simulate", "--from-cluster launches nothing, so it runs on the sim provider only (give "
                             "--catalog FILE for your cloud's instance types), not with %s",
                             allow_launch ? "--allow-launch" : pargs.name);
        goto cleanup;
    }
    if (run.every_tick && !timeline_path) {
        rc = cli_usage_error("simulate", "--every-tick needs --timeline (a single round has no ticks)");
        goto cleanup;
    }
    if (report && !timeline_path) {
        rc = cli_usage_error("simulate", "--report needs --timeline (the report shows a timeline run)");
        goto cleanup;
    }
    bool real_cloud = pargs.name && strcmp(pargs.name, "sim") != 0;
    if (real_cloud && !allow_launch) {
        rc = cli_usage_error("simulate", "provider %s launches real instances; simulate launches only with "
                             "--allow-launch (and terminates each before it exits)", pargs.name);
        goto cleanup;
    }
    if (real_cloud)
        fprintf(stderr, "nodesmith simulate: --allow-launch: instances launched through provider %s are real; each "
                "is terminated before simulate exits\n", pargs.name);
    /* Text output shows log lines and the table together; JSON keeps stdout for the one document. */
    ns_log_set_output(json ? stderr : stdout);
    if (!(run.cluster = ns_cluster_new())) {
        rc = cli_fail("simulate");
        goto cleanup;
    }
    /* Interruptions are injected through the sim provider's test hooks. */
    if (timeline_path && (!pargs.name || strcmp(pargs.name, "sim") == 0) &&
        (rc = enable_test_hooks(&pargs)) != NS_EXIT_OK)
        goto cleanup;
    /* The provider comes first: the node-class kinds the manifests and the timeline may hold are its own. */
    if ((rc = cli_load_provider("simulate", &pargs, &run.plugin, &kinds)) != NS_EXIT_OK)
        goto cleanup;
    ns_cluster_set_kinds(run.cluster, kinds);
    /* Only the in-memory writes change this cluster's pods, and they bind packed pods (ns_pod_set_binding). */
    ns_cluster_set_packed_pods(run.cluster, true);
    /* The timeline is read before the manifests: its errors come before any work, and its start sets the clock. */
    if (timeline_path) {
        if (ns_timeline_load_file(timeline_path, kinds, &timeline) != NS_OK || !(sources = ns_tl_sources_new())) {
            rc = cli_fail("simulate");
            goto cleanup;
        }
        ns_clock_use_simulated(timeline->start_ms);
    }
    if (from_cluster && cli_cluster_from_live(kubeconfig, context, kinds, run.cluster) != NS_OK) {
        rc = cli_fail("simulate --from-cluster");
        goto cleanup;
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
    run.json = json;
    rc = run_and_clean_up(&run, timeline, sources, report);
cleanup:
    ns_tl_sources_free(sources);
    ns_timeline_free(timeline);
    sim_run_free(&run);
    ns_nodeclass_kinds_free(kinds);
    cli_provider_args_free(&pargs);
    free(files);
    return rc;
}
