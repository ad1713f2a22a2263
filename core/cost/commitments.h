/*
 * Commitments: capacity an operator has already bought at a discount (docs/cost.md, "Commitments"), in two
 * cloud-neutral kinds. Each cloud's names for them (savings plans, reserved instances, reservations) are documented
 * in docs/cost.md; the core names no cloud.
 *
 *   instances  a number of instances of a scope at an effective price (reserved instances, reservations)
 *   spend      a spend per hour that buys on-demand usage of a scope at a discount (savings plans)
 *
 * A commitment covers on-demand offerings only, of the instance types its scope allows: instanceType (a shell
 * pattern, "m5.*"), family (the value of the type's label familyLabel), region (the type's
 * topology.kubernetes.io/region) and zone. A ledger tracks what each commitment has left: the nodes that already
 * run consume it first (in the order of ns_commit_ledger_consume calls, each node taking the first commitment that
 * covers it in declared order), and an offering is then priced at its effective cost while its commitment has room,
 * at its own price once the commitment is used up. Pricing changes prices only, never the scheduler's algorithm.
 *
 * Memory: ns_commitments owns its strings (ns_commitments_free); a ledger borrows its commitments, which must outlive
 * it. Errors follow errors/ns_error.h.
 */
#ifndef NS_COST_COMMITMENTS_H
#define NS_COST_COMMITMENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "cloud/instance_types.h"
#include "sched/sched.h"

typedef enum ns_commit_kind { NS_COMMIT_INSTANCES = 1, NS_COMMIT_SPEND } ns_commit_kind;

typedef struct ns_commitment {
    char *name;
    ns_commit_kind kind;
    /* Scope; NULL allows any. */
    char *instance_type; /* fnmatch(3) pattern over the type name */
    char *family;        /* with family_label: the value that label must have */
    char *family_label;
    char *region;
    char *zone;
    double amount;   /* instances: how many; spend: dollars per hour */
    double discount; /* fraction of the on-demand price saved, in (0, 1); 0 when effective_price is given */
    double effective_price; /* instances only: dollars per hour per instance; -1 when discount is given */
} ns_commitment;

typedef struct ns_commitments {
    ns_commitment *items;
    size_t n;
} ns_commitments;

/* Decodes a settings file whose document is a mapping with a `commitments` list (other top-level keys are refused,
 * so a typo is not silently ignored). Each item: name, kind (instances|spend), amount, discount or effectivePrice,
 * and the scope fields instanceType, family with familyLabel, region, zone. Errors are NS_ERR_INVALID_CONFIG
 * "FILE:LINE: commitment NAME: FIELD: why". *out is the caller's (ns_commitments_free); empty on error. */
int ns_commitments_read(const char *path, ns_commitments *out);
/* The same from text in memory; `name` names it in messages. */
int ns_commitments_parse(const char *name, const char *text, size_t len, ns_commitments *out);
void ns_commitments_free(ns_commitments *c); /* accepts NULL */

/* What one node, or one offering, is: its type (labels for family and region), zone, capacity type and its own
 * (on-demand) price per hour. */
typedef struct ns_commit_subject {
    const char *instance_type;
    const ns_label *labels; /* the instance type's labels (or the node's), for familyLabel and region */
    size_t n_labels;
    const char *zone;
    const char *capacity_type;
    double price_per_hour;
} ns_commit_subject;

typedef struct ns_commit_ledger ns_commit_ledger;

/* A ledger with every commitment unused. c may be NULL or empty (the ledger then prices nothing). */
int ns_commit_ledger_new(const ns_commitments *c, ns_commit_ledger **out);
void ns_commit_ledger_free(ns_commit_ledger *l); /* accepts NULL */
/* The effective price of s with what the commitments have left, without consuming: the first commitment in
 * declared order that covers s and has room prices it (an instance commitment at its effective price; a spend
 * commitment at the discounted price for the part its remaining spend buys and at s's own price for the rest);
 * s's own price when none does. */
double ns_commit_ledger_price(const ns_commit_ledger *l, const ns_commit_subject *s);
/* Consumes for one running or launched node: the commitment that prices it as above takes it; a node that some
 * commitment's scope covers but none has room for is counted as spilled to on-demand on the first that covers it.
 * Returns its effective price. */
double ns_commit_ledger_consume(ns_commit_ledger *l, const ns_commit_subject *s);

/* A copy of `set` whose on-demand offerings are priced by ns_commit_ledger_price (the rest as in `set`). The copy
 * shares the names, labels and resources of `set`, which must outlive it; free it with ns_commit_priced_set_free. */
int ns_commit_priced_set(const ns_commit_ledger *l, const ns_itype_set *set, ns_itype_set *out);
void ns_commit_priced_set_free(ns_itype_set *s); /* accepts NULL */

/* Plays a scheduling round's new claims in order against the ledger: each claim's launch options are re-priced, from
 * their own prices in pool_types (the unpriced sets, indexed like the NodePools), with what the claims before it left (so a claim after a commitment is used up sees its offerings' own prices and is
 * ordered by them), then its cheapest option consumes. Re-priced claims get option lists of their own, added to
 * r->option_lists. NS_OK or NS_ERR_INTERNAL. */
int ns_commit_ledger_play_round(ns_commit_ledger *l, const ns_itype_set *const *pool_types,
                                ns_sched_result *r);

/* Per commitment: used and amount (instances or dollars per hour), the nodes it covers, and the nodes and dollars
 * per hour its scope spilled to on-demand. */
typedef struct ns_commit_usage {
    const ns_commitment *c;
    double used;
    size_t nodes;
    size_t spilled_nodes;
    double spilled_per_hour;
} ns_commit_usage;
size_t ns_commit_ledger_count(const ns_commit_ledger *l);
const ns_commit_usage *ns_commit_ledger_usage(const ns_commit_ledger *l, size_t i);

/* The usage as a JSON array (docs/cost.md) and as text lines, one per commitment. 0 or NS_ERR_INTERNAL. */
int ns_commit_ledger_json(const ns_commit_ledger *l, cJSON **out);
/* One commitment's usage as the JSON object the array holds (name, kind, amount, used, utilisation, nodes,
 * spilled_nodes, spilled_per_hour); a new object (the caller's), or NULL when out of memory. */
cJSON *ns_commit_usage_json(const ns_commit_usage *u);
int ns_commit_ledger_text(FILE *out, const ns_commit_ledger *l);

const char *ns_commit_kind_name(ns_commit_kind k);

#endif
