/* Reasons about candidates recorded once while they last (disruption_internal.h, ds_report_once). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "disruption/disruption_internal.h"
#include "errors/ns_error.h"

void ds_reports_free(ds_reports *r)
{
    if (!r)
        return;
    free(r->items);
    r->items = NULL;
    r->n = 0;
}

static bool was_reported(const ds_reports *r, const char *claim, const char *why)
{
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->items[i].claim, claim) == 0 && strcmp(r->items[i].why, why) == 0)
            return true;
    return false;
}

int ds_report_once(ns_engine *e, ds_reports *r, ns_decision_kind kind, const ds_candidates *cands,
                   const char *(*why_of)(const ds_candidate *c), const char *(*pod_of)(const ds_candidate *c))
{
    ds_reported *now = calloc(cands->n ? cands->n : 1, sizeof(*now));
    if (!now)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory recording why disruption candidates are left alone");
    size_t n = 0;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < cands->n; i++) {
        const ds_candidate *c = &cands->items[i];
        const char *why = why_of(c);
        if (!why || !why[0])
            continue;
        if (!was_reported(r, c->claim->meta.name, why))
            rc = ns_engine_record(e, kind, NULL, why, c->node->meta.name, c->claim->meta.name,
                                  pod_of ? pod_of(c) : NULL, NULL);
        snprintf(now[n].claim, sizeof(now[n].claim), "%s", c->claim->meta.name);
        snprintf(now[n].why, sizeof(now[n].why), "%s", why);
        n++;
    }
    free(r->items);
    r->items = now;
    r->n = n;
    return rc;
}
