/*
 * The summary of one provisioning round (`nodesmith simulate` without --timeline): the engine's first step, read back
 * from its decisions and NodeClaims (docs/simulate.md). The document is JSON; the text form is rendered from it.
 */
#ifndef NS_ROUND_REPORT_H
#define NS_ROUND_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "engine/engine.h"

/* The round's document (docs/simulate.md, "--output json") from the engine after the step: pending lists the pods
 * ("namespace/name") that were pending before it. Claims come from the engine's "created nodeclaim" decisions (their
 * pods) and the NodeClaims' launch results; pods neither bound nor on a launched claim are unschedulable with the
 * scheduler's reason or the launch's error. Each claim has its pod_count; full adds its "pods" (by name) and
 * "instance_type_options", which the text form does not show and which are most of the document's size. *doc is the
 * caller's (cJSON_Delete). 0 or NS_ERR_INTERNAL. */
int ns_report_round(const ns_engine *e, char *const *pending, size_t n_pending, bool full, cJSON **doc);
/* The table of launched claims and the totals, from the round's document. 0 or NS_ERR_INTERNAL. */
int ns_report_round_text(FILE *out, const cJSON *doc);

#endif
