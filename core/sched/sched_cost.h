/*
 * Cost packing's plan for one class of pods (sched_cost.c): pods of one NodePool whose groups allow the same instance
 * types and offerings, so any of them may share a claim. The plan is a list of bins, each the pods one new claim
 * would hold, priced at the cheapest type that holds them.
 */
#ifndef NS_SCHED_COST_H
#define NS_SCHED_COST_H

#include "sched/sched_internal.h"

typedef struct cost_item {
    sched_group *g;
    int64_t n;    /* pods of g to place */
    double value; /* a lower bound of what one pod costs per hour: its largest request at the cheapest unit price */
} cost_item;

typedef struct cost_fill {
    size_t item;
    int64_t k;
} cost_fill;

typedef struct cost_bin {
    size_t first; /* fills[first .. first + n) */
    size_t n;
    int64_t packed; /* pods */
    double price;
} cost_bin;

typedef struct cost_plan {
    cost_bin *bins;
    size_t n_bins, cap_bins;
    cost_fill *fills;
    size_t n_fills, cap_fills;
    double price; /* the bins' total */
} cost_plan;

typedef struct cost_cand {
    size_t type; /* bit of the pool */
    double price;
} cost_cand;

/* A class of the cost pass (sched_cost.c): the greedy claims of one pool (and zone) whose pods share a view, planned
 * again together. Owns claims, items, left, types and plan (freed by the pass). */
typedef struct cost_class {
    size_t pool;
    int zone; /* the zone its pods stay in, -1 when they may go to any */
    sched_group *rep;
    uint64_t pairs; /* the offerings its claims may use: the pool's, the group's, and its zone's */
    size_t *claims;
    size_t n_claims;
    double greedy_price;
    cost_item *items;
    size_t n_items;
    int64_t *left;   /* per item: pods still to place again */
    uint64_t *types; /* the pool's types the plan may use (the pool's words) */
    bool tight;      /* limits: each bin's claim may launch no type larger than the cheapest that holds the bin */
    cost_plan plan;
} cost_class;

/* Plans the items (reordered, heaviest first) on pool pi with the offerings `pairs` and the types `types` (a bitset of
 * the pool) allow: each bin is the type whose greedy fill costs least per unit of value packed. 0, 1 when some pod
 * fits no type (no plan), or NS_ERR_INTERNAL. */
int sched_cost_plan(sched *s, size_t pi, const uint64_t *types, uint64_t pairs, cost_item *items, size_t n_items,
                    cost_plan *out);
void sched_cost_plan_free(cost_plan *p);

/* Greedy bins for the pods rem[] counts (consumed) over candidates c (cheapest first), appended to out: each bin the
 * candidate whose first-fit-decreasing fill costs least per packed value. 0, 1 when some pod fits no candidate, or
 * NS_ERR_INTERNAL. */
int sched_cost_greedy(sched *s, const sched_pool *p, const cost_cand *c, size_t n_c, const cost_item *items,
                      size_t n_items, int64_t *rem, cost_plan *out);
/* Appends a bin of take[j] pods of each item at price. 0 or NS_ERR_INTERNAL. */
int sched_cost_push_bin(cost_plan *pl, const int64_t *take, size_t n_items, double price);
/* The price of the cheapest candidate whose allocatable holds used, or -1. */
double sched_cost_bin_price(const sched *s, const sched_pool *p, const cost_cand *c, size_t n_c, const sched_vec *used);

/* The LP plan (sched_cost_lp.c): the set-covering LP over packing patterns solved by column generation, rounded down,
 * the rest planned greedily; and rounded up, clipped. The cheaper of the two into out (empty when the LP gives up).
 * 0 or NS_ERR_INTERNAL. */
int sched_cost_plan_lp(sched *s, const sched_pool *p, const cost_cand *c, size_t n_c, const cost_item *items,
                       size_t n_items, cost_plan *out);

/* The candidates the LP plan prices patterns on (sched_cost_dom.c): c (n_c of them) without each type B for which a
 * kept type A and a whole k >= 1 hold k copies of any pattern of the items B holds (alloc per type, as the plan fills
 * them; no more pods of an item than items[j].n) at a price of at most k times B's. out (room for n_c, not c) gets
 * them in c's order, *n_out their number. 0 or NS_ERR_INTERNAL. */
int sched_cost_undominated(const sched *s, const sched_vec *alloc, const cost_cand *c, size_t n_c,
                           const cost_item *items, size_t m, cost_cand *out, size_t *n_out);

/* The exact plan (sched_cost_exact.c): the cheapest bins for the pods rem[] counts, appended to out, when the dynamic
 * program over every sub-vector of rem is small enough. 0, 1 when it is too large or some pod fits no candidate (out
 * unchanged), or NS_ERR_INTERNAL. */
int sched_cost_exact(sched *s, const sched_pool *p, const cost_cand *c, size_t n_c, const cost_item *items,
                     size_t n_items, const int64_t *rem, cost_plan *out);

/* How many replaced fills the pricing search keeps (cost_knap.earlier). */
#define COST_KNAP_EARLIER 7

/* Scratch of the LP plan's pricing problem (sched_cost_knap.c) for one class's items. */
typedef struct cost_knap {
    const sched *s;
    const cost_item *items;
    size_t m;
    const double *value;
    size_t *act;  /* the items of positive value, densest first */
    size_t n_act;
    size_t *dims; /* the dimensions some of them request */
    double *coef; /* rows of the bound: per row, a weight per dimension (a dimension alone, or a mix of two) */
    double *w;    /* per row, each position's requests weighed by it */
    size_t n_d;   /* rows */
    size_t *dord; /* per row, positions of act by value per weight of it, largest first */
    int64_t *room, *zero, *cur, *best;
    double *key, best_v;
    bool *mono; /* per position, whether it is the densest of the positions from it on in every dimension */
    size_t *twin; /* per position, the nearest earlier one of the same requests (worth no less), or SIZE_MAX */
    size_t nodes, max_nodes;
    bool cut;
    /* The fills the search replaced by better ones (each beat the value to beat on entry), most recent first: more
     * columns from one search (sched_cost_knap_earlier). */
    int64_t *earlier; /* COST_KNAP_EARLIER x m */
    double earlier_v[COST_KNAP_EARLIER];
    size_t n_earlier;
    bool found; /* best holds a fill the search found */
} cost_knap;

/* Scratch for m items (kept by K, not owned: items must outlive it). 0 or NS_ERR_INTERNAL; free with
 * sched_cost_knap_free. */
int sched_cost_knap_init(cost_knap *K, sched *s, const cost_item *items, size_t m);
void sched_cost_knap_free(cost_knap *K);
/* The fill of the most value (the sum of value[j] * best[j]) that alloc holds with best[j] <= items[j].n, items of
 * value <= 0 left out, by branch and bound over the items in `order` (densest first explores least). best holds a
 * fill worth best_v on entry (or zeros and a threshold to beat) and is replaced only by a fill worth more. At most
 * max_nodes nodes; *complete when the search finished, so nothing beats the value returned. */
double sched_cost_knapsack(cost_knap *K, const sched_vec *alloc, const double *value, const size_t *order,
                           int64_t *best, double best_v, size_t max_nodes, bool *complete);
/* After sched_cost_knapsack on K ran out of nodes: the same search settled by a dynamic program over cpu and memory
 * (exact when its fill fits, a bound when it is no better than the fill held), run when its work, counted in nodes
 * (K->nodes after), is at most max_nodes. Over 65536 cells, when the search found no fill, a coarse grid (requests
 * rounded up, room down) only looks for a fill that holds, settling nothing. best is replaced only by a fill worth
 * more. The best value; *complete as sched_cost_knapsack's. */
double sched_cost_knap_grid(cost_knap *K, size_t max_nodes, bool *complete);
/* The i-th (0 the most recent) of the fills the last search on K found and then replaced by a better one, each worth
 * more than the value to beat passed to sched_cost_knapsack; its value into *v. Borrowed from K, valid until the next
 * search; NULL past K->n_earlier. */
const int64_t *sched_cost_knap_earlier(const cost_knap *K, size_t i, double *v);

#endif
