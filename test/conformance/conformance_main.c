/*
 * nodesmith-conformance: checks that a provider plugin honours the provider ABI's contract.
 *
 *   nodesmith-conformance PATH/TO/provider.so [--config FILE] [--set KEY=VALUE]... [--nodeclass FILE]
 *                         [--timeout SECONDS] [--call-timeout SECONDS] [--require-hooks] [--require-all-kinds]
 *                         [--verbose]
 *
 * The plugin is loaded through the core's loader, exactly as the controller loads it, and every call runs under the
 * core's watchdog (core/plugin/plugin_watchdog.h): a call that hangs fails its check naming the provider and the
 * method, and a crash fails the test in progress with the provider and the method (rule no-crash). Exit status:
 * 0 when every check passed, 3 ("PASSED WITH SKIPS") when every check that ran passed but some were skipped for lack
 * of test hooks, 1 when a check failed, 2 when the command line is wrong or the plugin cannot be loaded at all.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "conf.h"
#include "errors/ns_error.h"
#include "json/host_json.h"
#include "log/ns_log.h"
#include "model/nodeclass_kinds.h"
#include "plugin/plugin_watchdog.h"

#define MAX_SETTINGS 64
#define EXIT_PASSED_WITH_SKIPS 3

static const char usage[] =
    "usage: nodesmith-conformance PATH/TO/provider.so [options]\n"
    "  --config FILE       the provider's options file (YAML); default: PROVIDER.yaml beside the plugin, if any\n"
    "  --set KEY=VALUE     set one provider option over the file (repeatable), e.g. --set test_hooks=true\n"
    "  --nodeclass FILE    the node class to launch with, as JSON: {\"apiVersion\", \"kind\", \"metadata\": {\"name\"},\n"
    "                      \"spec\"}; default: NodeClass (nodesmith.io/v1) \"conformance\" with an empty spec\n"
    "  --timeout SECONDS   time limit of each test (default 60)\n"
    "  --call-timeout SECONDS  deadline of each call into the provider (default: a third of --timeout); a call\n"
    "                      past it fails its check, naming the provider and the method\n"
    "  --require-hooks     fail, instead of skip, the checks that need the provider's test hooks (without it, a run\n"
    "                      that skipped some ends PASSED WITH SKIPS, exit status 3)\n"
    "  --require-all-kinds fail when the test hook refuses to raise one of the event kinds a provider may leave out\n"
    "                      (unhealthy instance, capacity reservation interruption): for a provider that emits them\n"
    "  --verbose           show the core's and the provider's log lines\n"
    "Check's CK_FORK=no, CK_RUN_SUITE and CK_RUN_CASE environment variables apply.\n";

typedef struct cli {
    ns_plugin_setting settings[MAX_SETTINGS];
    size_t n_settings;
    const char *nodeclass_path;
    bool verbose;
} cli;

NS_PRINTF(1, 2) static int fail_usage(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    fprintf(stderr, "nodesmith-conformance: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n%s", usage);
    va_end(ap);
    return 2;
}

static int parse_args(int argc, char **argv, cli *c)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;

        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage, stdout);
            exit(0);
        } else if (strcmp(a, "--require-hooks") == 0) {
            conf_cfg.require_hooks = true;
        } else if (strcmp(a, "--require-all-kinds") == 0) {
            conf_cfg.require_all_kinds = true;
        } else if (strcmp(a, "--verbose") == 0) {
            c->verbose = true;
        } else if (strcmp(a, "--config") == 0 || strcmp(a, "--set") == 0 || strcmp(a, "--nodeclass") == 0 ||
                   strcmp(a, "--timeout") == 0 || strcmp(a, "--call-timeout") == 0) {
            if (!value)
                return fail_usage("%s needs a value", a);
            i++;
            if (strcmp(a, "--config") == 0) {
                conf_cfg.params.config_path = value;
            } else if (strcmp(a, "--nodeclass") == 0) {
                c->nodeclass_path = value;
            } else if (strcmp(a, "--timeout") == 0 || strcmp(a, "--call-timeout") == 0) {
                char *end;
                long t = strtol(value, &end, 10);

                if (*end || t <= 0 || t > 86400)
                    return fail_usage("%s %s: want a number of seconds from 1 to 86400", a, value);
                if (strcmp(a, "--timeout") == 0)
                    conf_cfg.timeout_s = (int)t;
                else
                    conf_cfg.params.call_timeout_ms = t * 1000;
            } else {
                char *eq = strchr(value, '=');

                if (!eq || eq == value)
                    return fail_usage("--set %s: want KEY=VALUE", value);
                if (c->n_settings == MAX_SETTINGS)
                    return fail_usage("--set %s: too many settings", value);
                *eq = '\0';
                c->settings[c->n_settings++] = (ns_plugin_setting){value, eq + 1};
            }
        } else if (a[0] == '-') {
            return fail_usage("unknown option %s", a);
        } else if (conf_cfg.so_path) {
            return fail_usage("one provider at a time (also given: %s)", a);
        } else {
            /* An absolute path: dlopen searches the library path for a bare file name. */
            char *abs = realpath(a, NULL);

            if (!abs)
                return fail_usage("provider %s: no such file", a);
            conf_cfg.so_path = abs;
        }
    }
    if (!conf_cfg.so_path)
        return fail_usage("%s", "no provider given");
    conf_cfg.params.settings = c->settings;
    conf_cfg.params.n_settings = c->n_settings;
    /* A hung call must fail its own check, well before Check's time limit kills the whole test without a word. */
    if (conf_cfg.params.call_timeout_ms == 0)
        conf_cfg.params.call_timeout_ms = (int64_t)conf_cfg.timeout_s * 1000 / 3;
    if (conf_cfg.params.call_timeout_ms >= (int64_t)conf_cfg.timeout_s * 1000)
        return fail_usage("--call-timeout must be shorter than --timeout (%d s)", conf_cfg.timeout_s);
    return 0;
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long size;

    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (buf = malloc((size_t)size + 1)) != NULL) {
        *len = fread(buf, 1, (size_t)size, f);
        buf[*len] = '\0';
    }
    fclose(f);
    return buf;
}

/* The parsed --nodeclass document: conf_cfg.nodeclass points into it for the whole run. Kept here so the forked
 * test processes, and the end of main, still hold its root. */
static ns_json *nodeclass_doc;

/* Fills conf_cfg.nodeclass from a JSON manifest; the parsed document lives for the whole run. */
static int load_nodeclass(const char *path)
{
    size_t len = 0;
    char *text = read_file(path, &len);
    const char *why = text ? "not valid JSON" : strerror(errno);
    ns_json *doc = text ? ns_host_json_parse(text, len) : NULL;
    const ns_json *spec;
    ns_nodeclass *nc = &conf_cfg.nodeclass;

    free(text);
    if (!doc) {
        fprintf(stderr, "nodesmith-conformance: node class %s: %s\n", path, why);
        return 2;
    }
    nc->api_version = ns_host_json_string(ns_host_json_get(doc, "apiVersion"));
    nc->kind = ns_host_json_string(ns_host_json_get(doc, "kind"));
    nc->name = ns_host_json_string(ns_host_json_get(ns_host_json_get(doc, "metadata"), "name"));
    spec = ns_host_json_get(doc, "spec");
    if (!nc->api_version || !nc->kind || !nc->name || (spec && ns_host_json_type(spec) != NS_JSON_OBJECT)) {
        fprintf(stderr, "nodesmith-conformance: node class %s: needs string apiVersion, kind and metadata.name, and "
                        "an object spec when present\n", path);
        ns_host_json_free(doc);
        return 2;
    }
    nodeclass_doc = doc;
    if (!spec) {
        /* An absent spec reads as an empty object; it is added to the document so one free releases both. */
        ns_json *empty = ns_host_json_new_object();
        if (ns_host_json_add(doc, "spec", empty) != NS_OK) {
            fprintf(stderr, "nodesmith-conformance: node class %s: out of memory\n", path);
            return 2;
        }
        spec = ns_host_json_get(doc, "spec");
    }
    nc->spec = spec;
    return 0;
}

/* Without --nodeclass: the provider's first declared kind with an empty spec. Its strings are the provider's static
 * table, which stays mapped for the whole run. */
static int default_nodeclass(ns_plugin *p)
{
    ns_nodeclass_kinds *k = ns_nodeclass_kinds_new();
    int rc = k ? ns_plugin_declare_kinds(p, k) : NS_ERR_INTERNAL;
    const ns_nodeclass_kind_info *first = ns_nodeclass_kinds_at(k, 0);
    if (rc == NS_OK && (!first || first->any_kind))
        rc = NS_FAIL(NS_ERR_INVALID_CONFIG, "provider %s (ABI %u) declares no node-class kinds; give --nodeclass FILE",
                     ns_plugin_name(p), ns_plugin_abi_version(p));
    if (rc == NS_OK) {
        const ns_nodeclass_kind *decl = NS_AT(ns_plugin_table(p)->nodeclass_kinds, 0);
        static char api_version[512];
        snprintf(api_version, sizeof(api_version), "%s/%s", decl->group, decl->version);
        conf_cfg.nodeclass.api_version = api_version;
        conf_cfg.nodeclass.kind = decl->kind;
        conf_cfg.nodeclass.name = "conformance";
        if (!(nodeclass_doc = ns_host_json_new_object()))
            rc = NS_FAIL(NS_ERR_INTERNAL, "out of memory");
        conf_cfg.nodeclass.spec = nodeclass_doc;
    }
    ns_nodeclass_kinds_free(k);
    return rc;
}

/* Loads the provider once before forking any test, so a plugin that cannot load at all is one clear error rather
 * than the same failure in every test, and says which provider is under test. */
static int preflight(void)
{
    ns_plugin *p = NULL;
    ns_fault clear = {.struct_size = sizeof(clear), .kind = NS_FAULT_CLEAR};
    int hooks;

    if (ns_plugin_load_file(conf_cfg.so_path, &conf_cfg.params, &p) != NS_OK) {
        fprintf(stderr, "nodesmith-conformance: cannot load %s: %s\n", conf_cfg.so_path, conf_last_error());
        return 2;
    }
    /* The node class every test uses must be one the provider accepts, said once here with its own message. */
    int vrc = conf_cfg.nodeclass.kind ? NS_OK : default_nodeclass(p);
    if (vrc == NS_OK && ns_plugin_table(p)->validate_nodeclass)
        vrc = ns_plugin_validate_nodeclass(p, &conf_cfg.nodeclass);
    if (vrc != NS_OK) {
        fprintf(stderr, "nodesmith-conformance: node class for %s: %s\n", conf_cfg.so_path, conf_last_error());
        ns_plugin_unload(p);
        return 2;
    }
    hooks = ns_plugin_test_inject_fault(p, &clear);
    printf("conformance: provider %s %s (ABI %u) from %s; test hooks: %s\n", ns_plugin_name(p), ns_plugin_version(p),
           ns_plugin_abi_version(p), conf_cfg.so_path,
           hooks == NS_OK ? "yes" : hooks == NS_ERR_UNSUPPORTED ? "no (fault checks will be skipped)" : "broken");
    ns_plugin_unload(p);
    return 0;
}

/* A provider that crashes inside a call (the watchdog's crash handler names it): in Check's forked test process the
 * crash fails the test in progress with that line, under the rule no-crash, instead of Check's bare "received
 * signal 11" at whatever check came last. Check's failure path is not async-signal-safe; the process is ending
 * anyway, and the line is already on stderr should it not get through. Without fork (CK_FORK=no) Check would
 * longjmp across threads: there the line on stderr and the signal are all there is. */
static SRunner *runner;

static void crash_in_test(const char *line)
{
    if (runner && srunner_fork_status(runner) != CK_NOFORK)
        ck_abort_msg("[no-crash] %s", line);
}

int main(int argc, char **argv)
{
    cli c = {0};
    SRunner *sr;
    int rc, failed;

    setvbuf(stdout, NULL, _IOLBF, 0);
    conf_cfg.timeout_s = 60;
    conf_cfg.run_nonce = (uint32_t)time(NULL) ^ ((uint32_t)getpid() << 16);
    rc = parse_args(argc, argv, &c);
    if (rc != 0)
        return rc;
    ns_log_set_level(c.verbose ? NS_LOG_DEBUG : NS_LOG_WARN);
    if (c.nodeclass_path)
        rc = load_nodeclass(c.nodeclass_path);
    conf_cfg.nodeclass.struct_size = sizeof(conf_cfg.nodeclass);
    if (rc != 0 || (rc = preflight()) != 0) {
        ns_host_json_free(nodeclass_doc);
        return rc;
    }
    if (conf_ledger_init() != NS_OK) {
        fprintf(stderr, "nodesmith-conformance: %s\n", ns_error_message());
        ns_host_json_free(nodeclass_doc);
        return 2;
    }
    sr = srunner_create(conf_suite_abi());
    srunner_add_suite(sr, conf_suite_offerings());
    srunner_add_suite(sr, conf_suite_launch());
    srunner_add_suite(sr, conf_suite_events());
    srunner_add_suite(sr, conf_suite_faults());
    srunner_add_suite(sr, conf_suite_threads());
    srunner_add_suite(sr, conf_suite_cleanup());
    runner = sr;
    ns_call_set_crash_hook(crash_in_test);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    ns_call_set_crash_hook(NULL);
    runner = NULL;
    srunner_free(sr);
    ns_host_json_free(nodeclass_doc);
    if (conf_skipped_count() > 0)
        printf("conformance: %u checks were SKIPPED because the provider has no test hooks (test_inject_fault is "
               "NULL or refused); enable them (for example --set test_hooks=true) for a full run\n",
               conf_skipped_count());
    if (failed > 0) {
        printf("conformance: FAILED (each failure above names the rule it broke)\n");
        return 1;
    }
    if (conf_skipped_count() > 0) {
        printf("conformance: PASSED WITH SKIPS (exit status %d; --require-hooks makes skips failures)\n",
               EXIT_PASSED_WITH_SKIPS);
        return EXIT_PASSED_WITH_SKIPS;
    }
    printf("conformance: PASSED\n");
    return 0;
}
