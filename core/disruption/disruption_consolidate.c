/* Consolidation decisions (see disruption_consolidate.h). */
#include "disruption/disruption_consolidate.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "model/labels.h"

static void free_parts(ns_consol_result *r)
{
    for (size_t i = 0; i < r->n_parts; i++)
        ns_consol_result_free(&r->parts[i]);
    free(r->parts);
    r->parts = NULL;
    r->n_parts = 0;
}

static void vnoop(ns_consol_result *r, bool published, const char *fmt, va_list ap)
{
    free_parts(r);
    free(r->options);
    r->options = NULL;
    r->n_options = 0;
    r->n_types = 0;
    r->spot_only = false;
    r->decision = NS_CONSOL_NOOP;
    r->published = published;
    vsnprintf(r->why, sizeof(r->why), fmt, ap);
}

/* Nothing to do, and Karpenter says nothing about it (or logs an error). */
static void noop(ns_consol_result *r, const char *fmt, ...) NS_PRINTF(2, 3);
static void noop(ns_consol_result *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vnoop(r, false, fmt, ap);
    va_end(ap);
}

/* Nothing to do, with the message of Karpenter's Unconsolidatable event. */
static void unconsolidatable(ns_consol_result *r, const char *fmt, ...) NS_PRINTF(2, 3);
static void unconsolidatable(ns_consol_result *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vnoop(r, true, fmt, ap);
    va_end(ap);
}

/* Karpenter's message when minValues cannot be met after the price filter ("Filtering by price: " and
 * SatisfiesMinValues' error; it names every unmet key, nodesmith the first). */
static void min_values_unmet(ns_consol_result *r, const ns_requirement *unmet)
{
    unconsolidatable(r, "Filtering by price: minValues requirement is not met for label(s) (label(s)=[%s])", unmet->key);
}

void ns_consol_result_free(ns_consol_result *r)
{
    if (!r)
        return;
    free_parts(r);
    free(r->options);
    r->options = NULL;
    r->n_options = 0;
}

size_t ns_consol_n_replacements(const ns_consol_result *r)
{
    return r->decision != NS_CONSOL_REPLACE ? 0 : r->n_parts ? r->n_parts : 1;
}

const ns_consol_result *ns_consol_replacement(const ns_consol_result *r, size_t i)
{
    return r->n_parts ? &r->parts[i] : r;
}

static bool is_spot(const char *capacity_type)
{
    return capacity_type && strcmp(capacity_type, "spot") == 0;
}

static size_t count_types(const ns_sched_option *o, size_t n)
{
    size_t types = 0;
    for (size_t i = 0; i < n; i++) {
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = o[j].type == o[i].type;
        types += !seen;
    }
    return types;
}

/* Keeps the options of r with price below max_price (and spot ones only when spot_only). */
static void filter_options(ns_consol_result *r, double max_price, bool spot_only)
{
    size_t kept = 0;
    for (size_t i = 0; i < r->n_options; i++)
        if (r->options[i].price_per_hour < max_price && (!spot_only || is_spot(r->options[i].capacity_type)))
            r->options[kept++] = r->options[i];
    r->n_options = kept;
    r->n_types = count_types(r->options, kept);
}

/* Keeps the options of the first `types` distinct instance types (in price order). */
static void truncate_types(ns_consol_result *r, size_t types)
{
    const ns_itype **chosen = calloc(types ? types : 1, sizeof(*chosen));
    size_t n_chosen = 0, kept = 0;
    if (!chosen)
        return; /* keeping every option is still a valid, if less conservative, launch */
    for (size_t i = 0; i < r->n_options; i++) {
        bool in = false;
        for (size_t j = 0; j < n_chosen && !in; j++)
            in = chosen[j] == r->options[i].type;
        if (!in && n_chosen < types) {
            chosen[n_chosen++] = r->options[i].type;
            in = true;
        }
        if (in)
            r->options[kept++] = r->options[i];
    }
    free(chosen);
    r->n_options = kept;
    r->n_types = count_types(r->options, kept);
}

static const char *type_value(const ns_itype *t, const char *key)
{
    const char *v = ns_itype_label(t, key);
    if (!v && strcmp(key, NS_LABEL_INSTANCE_TYPE) == 0)
        v = t->name;
    return v;
}

/* Distinct values of key among the first `types` distinct instance types of the options. */
static size_t distinct_values(const ns_sched_option *o, size_t n, size_t types, const char *key)
{
    const char *values[NS_SCHED_MAX_LAUNCH_TYPES * 4];
    const ns_itype *seen_types[NS_SCHED_MAX_LAUNCH_TYPES * 4];
    size_t n_values = 0, n_seen = 0;
    for (size_t i = 0; i < n && n_seen < types && n_seen < sizeof(seen_types) / sizeof(seen_types[0]); i++) {
        bool seen = false;
        for (size_t j = 0; j < n_seen && !seen; j++)
            seen = seen_types[j] == o[i].type;
        if (seen)
            continue;
        seen_types[n_seen++] = o[i].type;
        const char *v = type_value(o[i].type, key);
        if (!v)
            continue;
        bool dup = false;
        for (size_t j = 0; j < n_values && !dup; j++)
            dup = strcmp(values[j], v) == 0;
        if (!dup)
            values[n_values++] = v;
    }
    return n_values;
}

/* The first requirement whose minValues the first `types` types miss, or NULL when all hold. */
static const ns_requirement *unmet_min_values(const ns_requirements *reqs, const ns_sched_option *o, size_t n,
                                             size_t types, size_t *have)
{
    for (size_t i = 0; i < reqs->n; i++) {
        const ns_requirement *r = &reqs->items[i];
        if (r->min_values <= 0)
            continue;
        *have = distinct_values(o, n, types, r->key);
        if (*have < (size_t)r->min_values)
            return r;
    }
    return NULL;
}

static bool allows_capacity_type(const ns_sched_claim *c, const char *capacity_type)
{
    const ns_requirement *r = ns_requirements_get(&c->requirements, NS_LABEL_CAPACITY_TYPE);
    return !r || ns_requirement_has(r, capacity_type);
}

static void spot_to_spot(ns_consol_result *r, const ns_sched_claim *claim, size_t n_cands, bool enabled)
{
    if (!enabled) {
        unconsolidatable(r, "SpotToSpotConsolidation is disabled, can't replace a spot node with a spot node");
        return;
    }
    filter_options(r, r->price, true);
    r->spot_only = true;
    size_t have = 0;
    const ns_requirement *unmet = unmet_min_values(&claim->requirements, r->options, r->n_options, r->n_types, &have);
    if (unmet) {
        min_values_unmet(r, unmet);
        return;
    }
    if (r->n_options == 0) {
        unconsolidatable(r, "Can't replace with a cheaper node");
        return;
    }
    if (n_cands > 1)
        return;
    if (r->n_types < NS_SPOT_TO_SPOT_MIN_TYPES) {
        unconsolidatable(r,
                         "SpotToSpotConsolidation requires %d cheaper instance type options than the current "
                         "candidate to consolidate, got %zu",
                         NS_SPOT_TO_SPOT_MIN_TYPES, r->n_types);
        return;
    }
    /* Launch from the 15 cheapest (or as many as minValues needs): the node we get is then among the cheapest
     * choices and not itself replaceable by the next round. */
    size_t keep = NS_SPOT_TO_SPOT_MIN_TYPES;
    if (ns_requirements_has_min_values(&claim->requirements)) {
        size_t need = 1;
        while (need < r->n_types && unmet_min_values(&claim->requirements, r->options, r->n_options, need, &have))
            need++;
        if (need > keep)
            keep = need;
    }
    truncate_types(r, keep);
}

/* The one-claim rules: out becomes a REPLACE by claim with the options priced below out->price (set by the caller),
 * or a NOOP saying why. */
static int replace_by(ns_consol_result *out, const ns_sched_claim *claim, size_t n_cands, bool all_spot,
                      bool spot_to_spot_enabled)
{
    if (claim->n_options) {
        out->options = malloc(claim->n_options * sizeof(*out->options));
        if (!out->options) {
            noop(out, "out of memory");
            return NS_FAIL(NS_ERR_INTERNAL, "out of memory copying %zu launch options", claim->n_options);
        }
        memcpy(out->options, claim->options, claim->n_options * sizeof(*out->options));
    }
    out->n_options = claim->n_options;
    out->n_types = count_types(out->options, out->n_options);
    out->decision = NS_CONSOL_REPLACE;

    if (all_spot && allows_capacity_type(claim, "spot")) {
        spot_to_spot(out, claim, n_cands, spot_to_spot_enabled);
        return 0;
    }
    bool mixed = allows_capacity_type(claim, "spot") && allows_capacity_type(claim, "on-demand");
    filter_options(out, out->price, false);
    size_t have = 0;
    const ns_requirement *unmet = unmet_min_values(&claim->requirements, out->options, out->n_options, out->n_types, &have);
    if (unmet) {
        min_values_unmet(out, unmet);
        return 0;
    }
    if (mixed) {
        filter_options(out, out->price, true);
        out->spot_only = true;
    }
    if (out->n_options == 0)
        unconsolidatable(out, "Can't replace with a cheaper node");
    return 0;
}

/* The cheapest option replace_by could keep for claim whatever the price (spot only where it holds the claim to
 * spot), or -1 when none. */
static double cheapest_eligible(const ns_sched_claim *claim, bool all_spot)
{
    bool spot = allows_capacity_type(claim, "spot");
    bool spot_only = spot && (all_spot || allows_capacity_type(claim, "on-demand"));
    double best = -1;
    for (size_t i = 0; i < claim->n_options; i++)
        if ((!spot_only || is_spot(claim->options[i].capacity_type)) &&
            (best < 0 || claim->options[i].price_per_hour < best))
            best = claim->options[i].price_per_hour;
    return best;
}

/* Several new claims (cost packing): each a part priced at its cheapest eligible option plus an equal share of the
 * saving (see the header). */
static int replace_by_many(ns_consol_result *out, size_t n_cands, const ns_consol_sim *sim, bool all_spot,
                           bool spot_to_spot_enabled)
{
    size_t k = sim->n_new_claims;
    double sum = 0;
    for (size_t j = 0; j < k; j++) {
        double c = cheapest_eligible(&sim->all_claims[sim->needed[j]], all_spot);
        if (c < 0) {
            unconsolidatable(out, "Can't replace with a cheaper node");
            return 0;
        }
        sum += c;
    }
    if (sum >= out->price) {
        unconsolidatable(out, "Can't replace with %zu cheaper nodes", k);
        return 0;
    }
    if (!(out->parts = calloc(k, sizeof(*out->parts)))) {
        noop(out, "out of memory");
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory deciding a replacement by %zu nodeclaims", k);
    }
    out->n_parts = k;
    out->decision = NS_CONSOL_REPLACE;
    for (size_t j = 0; j < k; j++) {
        const ns_sched_claim *claim = &sim->all_claims[sim->needed[j]];
        ns_consol_result *part = &out->parts[j];
        part->price = cheapest_eligible(claim, all_spot) + (out->price - sum) / (double)k;
        int rc = replace_by(part, claim, n_cands, all_spot, spot_to_spot_enabled);
        if (rc < 0 || part->decision != NS_CONSOL_REPLACE) {
            char why[sizeof(part->why)];
            bool published = part->published;
            snprintf(why, sizeof(why), "%s", part->why);
            if (published)
                unconsolidatable(out, "%s", why);
            else
                noop(out, "%s", why);
            return rc;
        }
    }
    return 0;
}

int ns_consol_compute(const ns_consol_candidate *cands, size_t n, const ns_consol_sim *sim, bool spot_to_spot_enabled,
                      ns_consol_result *out)
{
    memset(out, 0, sizeof(*out));
    if (n == 0) {
        noop(out, "no candidates");
        return 0;
    }
    if (!sim->all_scheduled) {
        /* pretty.Sentence: the first letter upper case */
        const char *why = sim->unscheduled_reason && sim->unscheduled_reason[0] ? sim->unscheduled_reason
                                                                                 : "not all pods would schedule";
        unconsolidatable(out, "%c%s", toupper((unsigned char)why[0]), why + 1);
        return 0;
    }
    if (sim->n_new_claims == 0) {
        out->decision = NS_CONSOL_DELETE;
        return 0;
    }
    bool many = sim->n_new_claims > 1 && sim->multi_claim && sim->all_claims && sim->needed;
    if (!many && (sim->n_new_claims != 1 || !sim->claim)) {
        unconsolidatable(out, "Can't remove without creating %zu candidates", sim->n_new_claims);
        return 0;
    }
    bool all_spot = true;
    for (size_t i = 0; i < n; i++) {
        if (cands[i].price < 0) {
            noop(out, "the price of %s (%s/%s) is unknown", cands[i].name, cands[i].instance_type,
                 cands[i].capacity_type);
            return 0;
        }
        out->price += cands[i].price;
        all_spot = all_spot && is_spot(cands[i].capacity_type);
    }
    return many ? replace_by_many(out, n, sim, all_spot, spot_to_spot_enabled)
                : replace_by(out, sim->claim, n, all_spot, spot_to_spot_enabled);
}

void ns_consol_filter_same_type(ns_consol_result *r, const ns_consol_candidate *cands, size_t n)
{
    if (r->decision != NS_CONSOL_REPLACE)
        return;
    for (size_t i = 0; i < r->n_parts; i++) {
        ns_consol_filter_same_type(&r->parts[i], cands, n);
        if (r->parts[i].decision != NS_CONSOL_REPLACE) {
            noop(r, "a candidate's instance type is among a replacement's and no cheaper one is left");
            return;
        }
    }
    if (r->n_parts)
        return;
    double max_price = -1;
    for (size_t i = 0; i < r->n_options; i++) {
        for (size_t j = 0; j < n; j++) {
            if (!cands[j].instance_type || strcmp(cands[j].instance_type, r->options[i].type->name) != 0 ||
                cands[j].price < 0)
                continue;
            if (max_price < 0 || cands[j].price < max_price)
                max_price = cands[j].price;
        }
    }
    if (max_price < 0)
        return;
    filter_options(r, max_price, r->spot_only);
    if (r->n_options == 0)
        noop(r, "a candidate's instance type is among the replacement's and no cheaper one is left");
}

int ns_consol_first_n(size_t n_candidates, ns_consol_prefix_fn fn, void *ctx, size_t *n_chosen, ns_consol_result *out)
{
    memset(out, 0, sizeof(*out));
    *n_chosen = 0;
    noop(out, "fewer than two candidates");
    if (n_candidates < 2)
        return 0;
    size_t lo = 1, hi = (n_candidates > NS_MULTI_NODE_MAX_CANDIDATES ? NS_MULTI_NODE_MAX_CANDIDATES : n_candidates) - 1;
    snprintf(out->why, sizeof(out->why), "no prefix of the candidates consolidates");
    while (lo <= hi) {
        size_t mid = (lo + hi) / 2;
        ns_consol_result r;
        memset(&r, 0, sizeof(r));
        int rc = fn(ctx, mid + 1, &r);
        if (rc < 0) {
            ns_consol_result_free(&r);
            return rc;
        }
        if (r.decision == NS_CONSOL_DELETE || (r.decision == NS_CONSOL_REPLACE && (r.n_options > 0 || r.n_parts))) {
            ns_consol_result_free(out);
            *out = r;
            *n_chosen = mid + 1;
            lo = mid + 1;
        } else {
            ns_consol_result_free(&r);
            hi = mid - 1;
        }
    }
    return 0;
}
