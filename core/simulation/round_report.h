/*
 * The summary of one provisioning round (`nodesmith simulate` without --timeline): the engine's first step, read back
 * from its decisions and NodeClaims (docs/simulate.md). The summary is compact rows that point into the engine; the
 * text form is rendered from them, and the JSON document is built from them only when it is asked for, so a round of
 * tens of thousands of pods holds no document tree per claim or pod.
 */
#ifndef NS_ROUND_REPORT_H
#define NS_ROUND_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "engine/engine.h"

typedef struct ns_round_report ns_round_report;

/* The round's summary from the engine after the step. pending lists the pods ("namespace/name") that were pending
 * before it; the report takes it (the array and its strings), also on failure. Claims come from the engine's
 * "created nodeclaim" decisions (their pods) and the NodeClaims' launch results; pods neither bound nor on a launched
 * claim are unschedulable with the scheduler's reason or the launch's error. The report borrows the engine's
 * decisions and NodeClaims: the engine must outlive it and take no further step. *out is the caller's
 * (ns_round_report_free). 0 or NS_ERR_INTERNAL. */
int ns_report_round(const ns_engine *e, char **pending, size_t n_pending, ns_round_report **out);
void ns_round_report_free(ns_round_report *r); /* accepts NULL */

/* True when a claim the round created was not launched (the document's launch_failures is not empty). */
bool ns_round_report_launch_failed(const ns_round_report *r);

/* The round's document (docs/simulate.md, "--output json"). Each claim has its pod_count; full adds its "labels",
 * "annotations", "taints", "startup_taints" and "requirements" (as the NodeClaim carries them), "pods" (by name) and
 * "instance_type_options", and the document's "existing_node_placements" ({pod, node} for each pod bound to an
 * existing node); the per-claim lists are most of the document's size. *doc is the caller's (cJSON_Delete). 0 or
 * NS_ERR_INTERNAL. */
int ns_round_report_json(const ns_round_report *r, bool full, cJSON **doc);
/* The table of launched claims, the totals and the unschedulable pods. 0 or NS_ERR_INTERNAL. */
int ns_round_report_text(FILE *out, const ns_round_report *r);

#endif
