/* Turning the working state into the caller's result: named claims with launch options, placements, reasons. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "model/labels.h"
#include "sched/sched_internal.h"

static const char *const ct_names[SCHED_N_CT] = {NS_CAPACITY_SPOT, NS_CAPACITY_ON_DEMAND, NS_CAPACITY_RESERVED};

/* The claim's requirements with zone and capacity type narrowed to what its offerings allow. */
static int claim_requirements(const sched *s, const sched_claim *c, ns_requirements *out)
{
    const char *zones[SCHED_MAX_ZONES], *cts[SCHED_N_CT];
    size_t nz = 0, nc = 0;
    for (size_t z = 0; z < s->n_zones; z++)
        if (c->pairs & sched_zone_pairs((int)z))
            zones[nz++] = s->zones[z];
    for (int t = 0; t < SCHED_N_CT; t++) {
        bool any = false;
        for (size_t z = 0; z < s->n_zones && !any; z++)
            any = (c->pairs >> (z * SCHED_N_CT + (size_t)t)) & 1u;
        if (any)
            cts[nc++] = ct_names[t];
    }
    int rc = ns_requirements_copy(&c->reqs, out);
    if (rc == NS_OK)
        rc = ns_requirements_add_op(out, NS_LABEL_ZONE, NS_OP_IN, zones, nz, 0);
    if (rc == NS_OK)
        rc = ns_requirements_add_op(out, NS_LABEL_CAPACITY_TYPE, NS_OP_IN, cts, nc, 0);
    return rc;
}

int sched_result_fill(sched *s, ns_sched_result *out)
{
    const ns_cluster *cl = s->cl;
    out->placement = s->placement;
    out->n_placement = cl->n_pods;
    s->placement = NULL;
    out->claims = calloc(s->n_claims ? s->n_claims : 1, sizeof(*out->claims));
    if (!out->claims)
        return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory for %zu node claims", s->n_claims);
    out->n_claims = s->n_claims;
    int rc = NS_OK;
    for (size_t i = 0; rc == NS_OK && i < s->n_claims; i++) {
        const sched_claim *c = &s->claims[i];
        ns_sched_claim *oc = &out->claims[i];
        oc->nodepool = s->pools[c->pool].index;
        oc->pods = malloc((c->n_pods ? c->n_pods : 1) * sizeof(size_t));
        if (!oc->pods)
            rc = NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory listing a claim's pods");
        if (rc == NS_OK)
            rc = sched_vec_to(s, &c->used, &oc->pod_requests);
        if (rc == NS_OK && !s->static_claims)
            rc = sched_daemons_claim_overhead(s, c, &oc->daemon_overhead);
        if (rc == NS_OK)
            rc = claim_requirements(s, c, &oc->requirements);
        if (rc == NS_OK)
            oc->min_values_relaxed = sched_relax_min_values(s, c, &oc->requirements);
    }
    if (rc == NS_OK)
        rc = sched_claims_options(s, out);
    for (size_t i = 0; rc == NS_OK && i < cl->n_pods; i++) {
        size_t at = out->placement[i];
        if (at == NS_SCHED_NOT_PENDING)
            continue;
        out->n_pending++;
        if (at == NS_SCHED_UNPLACED)
            out->n_unschedulable++;
        else if (at < s->n_nodes)
            out->n_on_existing++;
        else {
            ns_sched_claim *oc = &out->claims[at - s->n_nodes];
            oc->pods[oc->n_pods++] = i;
        }
    }
    if (rc == NS_OK && out->n_unschedulable) {
        out->unschedulable = calloc(out->n_unschedulable, sizeof(*out->unschedulable));
        if (!out->unschedulable)
            rc = NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory listing unschedulable pods");
        size_t n = 0;
        for (size_t g = 0; rc == NS_OK && g < s->n_groups; g++)
            for (size_t i = s->groups[g].done; rc == NS_OK && i < s->groups[g].n_pods; i++) {
                out->unschedulable[n].pod = s->groups[g].pods[i];
                out->unschedulable[n].by_limits = s->groups[g].by_limits;
                out->unschedulable[n].deferred = s->groups[g].resv_deferred;
                if (!(out->unschedulable[n++].reason = strdup(s->groups[g].reason)))
                    rc = NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory recording a reason");
            }
    }
    if (rc != NS_OK)
        ns_sched_result_free(out);
    return rc;
}

void ns_sched_result_free(ns_sched_result *r)
{
    if (!r)
        return;
    for (size_t i = 0; r->claims && i < r->n_claims; i++) {
        ns_requirements_free(&r->claims[i].requirements);
        ns_res_free(&r->claims[i].pod_requests);
        ns_res_free(&r->claims[i].daemon_overhead);
        free(r->claims[i].pods);
    }
    free(r->claims);
    for (size_t i = 0; r->option_lists && i < r->n_option_lists; i++)
        free(r->option_lists[i]);
    free(r->option_lists);
    for (size_t i = 0; r->unschedulable && i < r->n_unschedulable; i++)
        free(r->unschedulable[i].reason);
    free(r->unschedulable);
    free(r->placement);
    memset(r, 0, sizeof(*r));
}
