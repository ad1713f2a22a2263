/*
 * The conformance suite's shared pieces: the run's configuration, the per-test plugin fixture, the ledger of every
 * instance the suite launched, and helpers that launch, list and terminate through the core's plugin wrappers.
 *
 * Check forks each test by default, so each test loads the provider itself (a checked fixture runs in the child)
 * and nothing but the ledger, which lives in shared memory, outlives a test. With CK_FORK=no the same fixture loads
 * and unloads the provider around each test in one process.
 *
 * Failure messages start with the rule they enforce in brackets ("[idempotent-launch] ..."); docs/provider-abi.md
 * lists the rules and test/conformance/expect_violation.sh matches on them.
 */
#ifndef CONF_H
#define CONF_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cloud/instance_types.h"
#include "nodesmith/provider.h"
#include "plugin/plugin_loader.h"

/* ck_assert_msg with the rule's tag in front of the message. `rule` is a string literal. */
#define CONF_CHECK(rule, expr, ...) ck_assert_msg((expr), "[" rule "] " __VA_ARGS__)

/* The run's configuration, set by main before any test runs (children inherit it). */
typedef struct conf_config {
    const char *so_path;
    ns_plugin_load_params params;
    ns_nodeclass nodeclass; /* what every list_instance_types and launch passes */
    int timeout_s;          /* per test */
    bool require_hooks;     /* fail instead of skip when the provider has no test hooks */
    bool require_all_kinds; /* fail when the hook refuses an optional event kind (the provider emits them all) */
    uint32_t run_nonce;     /* makes client tokens unique across runs against a real cloud */
} conf_config;

extern conf_config conf_cfg;

/* The provider loaded for the test in progress (NULL outside tests). */
extern ns_plugin *conf_plugin;

/* Checked fixture: loads conf_cfg.so_path through the core loader / terminates what the test left and unloads. */
void conf_setup(void);
void conf_teardown(void);

/* The ledger (conf_ledger.c). conf_ledger_init creates it in shared memory; call once in main before srunner_run.
 * All return 0 or NS_ERR_INTERNAL (recorded). */
typedef struct conf_ids {
    char **ids;
    size_t n;
} conf_ids;
int conf_ledger_init(void);
int conf_ledger_record(const char *provider_id, size_t since); /* once per ID since the mark `since` */
void conf_ledger_mark_terminated(const char *provider_id);
/* A position in the ledger: what a test recorded after it is that test's. */
size_t conf_ledger_mark(void);
/* Provider IDs not yet terminated (whole run / since mark), or every ID since mark; *out is the caller's (free with
 * conf_ids_free). */
int conf_ledger_live(conf_ids *out);
int conf_ledger_live_since(size_t mark, conf_ids *out);
int conf_ledger_all_since(size_t mark, conf_ids *out);
/* Tests the provider's missing test hooks made the suite skip. */
void conf_skip_count(void);
unsigned conf_skipped_count(void);

void conf_ids_free(conf_ids *ids);
bool conf_ids_contains(const conf_ids *ids, const char *id);
size_t conf_ids_count(const conf_ids *ids, const char *id);
/* Appends a copy of id; 0 or NS_ERR_INTERNAL. */
int conf_ids_add(conf_ids *ids, const char *id);

/* A fresh client token unique to this run, process and call. buf needs NS_NAME_MAX bytes. */
void conf_token(char *buf, size_t len);

/* One launch option as the suite builds requests. */
typedef struct conf_choice {
    const char *instance_type;
    const char *zone;
    const char *capacity_type;
    double price;
} conf_choice;

/* Launches with the given options (sorted cheapest first, as the core does) and token; on success records the
 * instance in the ledger. Returns the wrapper's code; the error record is ns_error_last(). Thread-safe. */
int conf_launch(const conf_choice *choices, size_t n, const char *token, ns_launch_result *result);
/* Launches one instance of the first available choice of the catalog; a failure fails the test. */
void conf_launch_one(ns_launch_result *result);
/* Terminates through the wrapper and, on success, marks the ledger entry. */
int conf_terminate(const char *provider_id, bool *already_gone);

/* Lists instances into *out; failures of the list call itself or malformed entries fail the test. */
void conf_list(conf_ids *out);

/* Terminates every instance this test launched that is still live and asserts list_instances no longer shows them
 * (rule "cleanup"). Tests that launch end with it. */
void conf_release_all(void);

/* The provider's catalog through the core's copy (ns_itype_set_load), and its available non-reserved offerings as
 * launch choices, in catalog order. Loaded once per test, owned by the fixture (freed by conf_teardown); a failure
 * or an empty result fails the test. */
const ns_itype_set *conf_catalog(void);
const conf_choice *conf_choices(size_t *n);

/* Injects a fault. Returns true when injected; false when the provider has no test hooks, after logging a "skipped"
 * line for `test` (or failing the test when --require-hooks was given). Any other error fails the test. */
bool conf_inject_or_skip(const char *test, const ns_fault *fault);

/* Thread-safe formatting of the thread's last error for messages: "<category>: <message>". */
const char *conf_last_error(void);

/* The suites, in the order main runs them; cleanup must be last. */
Suite *conf_suite_abi(void);
Suite *conf_suite_offerings(void);
Suite *conf_suite_launch(void);
Suite *conf_suite_events(void);
Suite *conf_suite_faults(void);
Suite *conf_suite_threads(void);
Suite *conf_suite_cleanup(void);

#endif
