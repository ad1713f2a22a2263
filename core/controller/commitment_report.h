/*
 * The controller's report of commitments (docs/cost.md), independent of NodePools: after each tick, gauges per
 * commitment (labels commitment and kind) of its amount, use, utilisation, the nodes it covers and what its scope
 * spilled to on-demand, and one log line "commitment utilisation" per commitment whose use or spill changed since the
 * last line.
 */
#ifndef NS_COMMITMENT_REPORT_H
#define NS_COMMITMENT_REPORT_H

#include "controller/metrics.h"
#include "cost/commitments.h"

typedef struct ns_commitment_report ns_commitment_report;

/* m is borrowed. 0, or NS_ERR_INTERNAL with *out NULL. */
int ns_commitment_report_new(ns_metrics *m, ns_commitment_report **out);
void ns_commitment_report_free(ns_commitment_report *r); /* accepts NULL */
/* Sets the gauges from l (its commitments must be those of earlier calls, in the same order) and logs the changes.
 * 0 or NS_ERR_INTERNAL. */
int ns_commitment_report_update(ns_commitment_report *r, const ns_commit_ledger *l);

#endif
