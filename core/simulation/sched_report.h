/*
 * The summary of a provisioning round after launch, as `nodesmith simulate` prints it (docs/simulate.md): a JSON
 * document or a text table. Pods on claims whose launch failed count as unschedulable, with the launch error.
 */
#ifndef NS_SCHED_REPORT_H
#define NS_SCHED_REPORT_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "sched/sched.h"
#include "simulation/sched_launch.h"

/* The JSON document; NULL with NS_ERR_INTERNAL recorded on allocation failure. Free with cJSON_Delete. */
cJSON *ns_sched_report_json(const ns_cluster *cl, const ns_sched_result *r, const ns_sched_launch *launches);
/* The text table and totals. */
void ns_sched_report_text(FILE *out, const ns_cluster *cl, const ns_sched_result *r,
                          const ns_sched_launch *launches);

#endif
