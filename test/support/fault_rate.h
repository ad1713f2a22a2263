/*
 * What the providers' fault-rate tests (test/aws, test/alibaba, test/azure) share: FR_CLAIMS node claims launched by
 * FR_THREADS threads against an emulator injecting faults, each launch retried with its client token until it
 * succeeds, as the core does; listing and terminating the pool's instances through throttling; a Check runner for
 * the one test. What each cloud's emulator records is checked by each test in its own terms.
 */
#ifndef NS_TEST_FAULT_RATE_H
#define NS_TEST_FAULT_RATE_H

#include <check.h>
#include <cjson/cJSON.h>
#include <stdbool.h>

#include <nodesmith/provider.h>

#include "plugin/plugin_loader.h"

#define FR_THREADS 4
#define FR_CLAIMS_PER_THREAD 3
#define FR_CLAIMS (FR_THREADS * FR_CLAIMS_PER_THREAD)
/* The pool every fault-rate launch names; list and terminate keep to it. */
#define FR_NODEPOOL "faults"

typedef struct fr_claim {
    char token[64]; /* the client token and the node claim's name: "fault-<run>-<i>" */
    ns_launch_result result;
    int tries;
    int bad_code; /* an error other than the retryable ones, 0 when none */
    char bad_message[512];
} fr_claim;

typedef struct fr_run {
    ns_plugin *plugin;                 /* borrowed */
    const char *cluster_name;          /* borrowed */
    const ns_nodeclass *nodeclass;     /* borrowed */
    const ns_launch_option *options;   /* borrowed */
    size_t n_options;
    int max_tries;
    long pause_ms;                     /* between a failed call and its retry */
    bool capacity_is_retryable;        /* NS_ERR_INSUFFICIENT_CAPACITY is retried, not a failure */
    fr_claim claims[FR_CLAIMS];
} fr_run;

typedef struct fr_listed {
    char ids[64][NS_PROVIDER_ID_MAX];
    int n;
} fr_listed;

/* Names the claims "fault-<run>-<i>", <run> unique to this process. */
void fr_name_claims(fr_run *r);
/* Launches every claim from FR_THREADS threads; fails the test when a claim met an error that is not retryable or
 * never launched. Returns how many claims needed more than one call. */
int fr_launch_all(fr_run *r);
/* list_instances, retried through throttling as the core's garbage collector would: the FR_NODEPOOL instances. */
void fr_list_pool(const fr_run *r, fr_listed *l);
/* Terminates each listed instance, retried through throttling. */
void fr_terminate(const fr_run *r, const fr_listed *l);
/* The sum of the numbers FAULTS[0..n) names in INJECTED; fails the test when one of them was never injected. */
int fr_faults_injected(const cJSON *injected, const char *const kinds[], int n);
/* The sum of an object's number members (an emulator's request counts per action). */
int fr_sum_counts(const cJSON *counts);
/* RESOURCE's tag KEY under its TAGS member, "" when absent. */
const char *fr_tag(const cJSON *resource, const char *tags, const char *key);
/* Runs TEST as the suite NAME without forking (the plugin and emulator live in this process); the failures. */
int fr_run_test(const char *name, const TTest *test);

#endif
