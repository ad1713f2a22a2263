/*
 * The scheduler's working state. Everything the hot loop touches is precomputed into flat arrays: resources as
 * fixed vectors, instance types per NodePool sorted cheapest first and addressed by bit position, zone x capacity
 * type pairs as a 64-bit mask, topology counts as integer arrays indexed by zone and by host.
 *
 * Hosts: every existing node and every new claim is one hostname domain, numbered nodes first, then claims.
 */
#ifndef NS_SCHED_INTERNAL_H
#define NS_SCHED_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sched/sched.h"
#include "sched/sched_bits.h"
#include "sched/sched_domains.h"
#include "sched/sched_skip.h"

/* cpu, memory, ephemeral-storage, pods, then extended resources in order of first appearance: as many as the round's
 * pods, nodes, NodePool limits and instance types name (sched->n_dims), with no fixed limit. */
enum { SCHED_CPU = 0, SCHED_MEM, SCHED_EPH, SCHED_PODS, SCHED_EXT0 };

/* Zones x capacity types must fit in 64 bits of pair mask. */
#define SCHED_N_CT 3
#define SCHED_MAX_ZONES 21

/* n_dims values. Storage comes from the round's arena (sched_vec_init), or for claims from sched->claim_used, so a
 * vector is as long as the round needs and is never freed on its own. */
typedef struct sched_vec {
    int64_t *v;
} sched_vec;

/* A block of the round's arena: vectors and per-dimension flags that live until ns_sched_run returns. */
typedef struct sched_block sched_block;

/* Types of a pool that run the same DaemonSets (sched_daemons.c). */
typedef struct sched_ds_group {
    uint64_t *types;          /* bitset over the pool's types (arena) */
    sched_vec overhead;       /* the DaemonSets' summed requests */
    const ns_pod **port_pods; /* their template pods that take host ports (owned array) */
    size_t n_port_pods;
} sched_ds_group;

typedef struct sched_pool {
    const ns_nodepool *np;
    size_t index; /* in cluster->nodepools */
    ns_requirements reqs;
    size_t n_types;
    const ns_itype **types; /* sorted cheapest first; bit i is types[i] */
    sched_vec *alloc;       /* allocatable after kubelet settings, minus the DaemonSet overhead */
    sched_vec *capacity;    /* for NodePool limits */
    uint64_t *offers;       /* per type: available (zone, capacity type) pairs */
    double *price;          /* per type: its cheapest available offering among the pool's pairs */
    int16_t **offer_pair;   /* per type, per offering: its pair bit, or -1 when unavailable or unknown */
    int32_t **offer_resv;   /* per type, per offering: its counted reservation (sched_resv.c) or -1; NULL when the
                             * round counts none */
    size_t words;
    const char **keys;   /* label keys the node class's instance types define (borrowed strings) */
    size_t n_keys;
    uint64_t *in_limits; /* types whose capacity fits the remaining limits */
    uint64_t pairs;      /* pairs the pool's requirements allow */
    bool has_limits;
    bool *limited; /* per dimension (arena) */
    long nodes_dim; /* the dimension of limits.nodes, -1 when the pool does not limit nodes */
    sched_vec limit;     /* spec.limits, per dimension (meaningful where limited) */
    sched_vec remaining;
    sched_ds_group *ds_groups;
    size_t n_ds_groups;
    uint32_t *ds_group_of; /* per type: its group */
    char *unusable; /* why the pool offers nothing at all, or NULL */
    /* sched_pool_index.h: per dimension, types by allocatable (ascending) and the bitset of each suffix of that
     * order ((n_types + 1) x words); per pair, the types offering it (64 x words). */
    size_t ix_dims;
    uint32_t **ix_order;
    uint64_t **ix_suffix;
    uint64_t *ix_pair;
    uint32_t claim_seq;
} sched_pool;

enum { SCHED_TOPO_SPREAD = 0, SCHED_TOPO_AFFINITY, SCHED_TOPO_ANTI };

/* The domains of a topology on a key other than zone and hostname (sched_keyed.c): the label values the pools'
 * requirements, their instance types (capacity type: their offerings) and the existing nodes give the key. */
typedef struct sched_keyed {
    char **values; /* owned */
    int32_t *count; /* pods the selector matches, per domain */
    int32_t *owner; /* anti-affinity: pods that declared the term, per domain */
    size_t n, cap;
} sched_keyed;

typedef struct sched_topo {
    int kind;
    bool hostname;
    bool keyed;      /* neither zone nor hostname: counted per value of key in dom */
    const char *key; /* borrowed from the declaring pod */
    sched_keyed dom;
    int32_t max_skew;
    int32_t min_domains;
    const ns_label_selector *selector; /* borrowed from the first pod that declared it, or owned_selector */
    ns_label_selector *owned_selector; /* a spread selector widened by matchLabelKeys; owned */
    sched_domain_filter filter;        /* spread: which nodes and claims count (sched_domains.h) */
    uint32_t universe;                 /* zonal spread: the zones the filter leaves as domains */
    const char *const *namespaces;     /* borrowed; n_namespaces == 0 and !all_namespaces: own namespace */
    size_t n_namespaces;
    const char *own_namespace;
    bool all_namespaces;
    char *sig;
    int32_t zone[SCHED_MAX_ZONES];       /* pods the selector matches, per zone */
    int32_t owner_zone[SCHED_MAX_ZONES]; /* anti-affinity: pods that declared the term, per zone */
    int32_t *host;
    int32_t *owner_host;
    size_t host_cap;
    int64_t total;
    /* Hostname spread: [0] claims whose count reached maxSkew (closed to pods the selector matches), [1] claims past
     * it (closed to all). Hostname anti-affinity: [0] claims running a matching pod, [1] claims running a pod with
     * the required term (closed to pods it matches). Unused otherwise. */
    sched_skip skip[2];
} sched_topo;

enum { SCHED_SRC_SPREAD = 0, SCHED_SRC_AFF_REQ, SCHED_SRC_AFF_PREF, SCHED_SRC_ANTI_REQ, SCHED_SRC_ANTI_PREF };

typedef struct sched_constraint {
    uint32_t topo;
    uint8_t src;
    bool active;
    bool schedule_anyway;
    bool self; /* the selector matches the declaring pod itself */
    int32_t weight;
    uint32_t order; /* removal order among preferred terms of the same source, heaviest first */
    const char *key;
} sched_constraint;

typedef struct sched_group {
    const ns_pod *pod; /* representative */
    size_t *pods;      /* cluster pod indices */
    size_t n_pods;
    size_t done; /* pods[0..done) are placed */
    sched_vec req;
    /* Relaxation state. */
    int req_term;          /* required node-affinity term in use; -1 when the pod has none */
    int pref_node;         /* preferred node term in use (weight order); -1 when none is left */
    uint32_t removed_aff;  /* preferred pod affinity terms removed */
    uint32_t removed_anti; /* preferred anti-affinity terms removed */
    bool tolerate_pns;
    sched_constraint *cons;
    size_t n_cons;
    uint32_t *counted_by; /* topologies whose selector matches this pod */
    size_t n_counted_by;
    uint32_t *inverse; /* anti-affinity topologies whose selector matches this pod */
    size_t n_inverse;
    char keyed_why[256]; /* why a constraint on another key than zone or hostname has no domain left, or "" */
    ns_requirements vol_reqs; /* what the pod's volumes require of its node (sched_volumes.h), zone labels rewritten */
    char *vol_why;            /* why a claim of the pod cannot be used (owned), NULL when they can */
    uint32_t *skips; /* blocked-claim lists that apply at the current relaxation level: topology * 2 + list */
    size_t n_skips;
    /* Derived from the relaxation state by sched_group_prepare. */
    ns_requirements reqs;
    uint32_t req_id;
    uint32_t pod_zones; /* zones (bit per zone) the pod's own requirements allow: Karpenter's podDomains */
    uint64_t *pool_bits; /* n_pools x words bitsets, pool by pool */
    uint64_t *pool_pairs;
    bool *pool_ok;
    char **pool_why; /* why a pool is incompatible (owned), NULL when compatible */
    uint8_t *node_ok; /* per existing node: 0 unknown, 1 compatible, 2 not */
    char reason[768];
    bool by_limits; /* the reason is NodePool limits alone (ns_sched_unschedulable.by_limits) */
    bool resv_deferred; /* the last new-claim attempt was refused for reserved capacity (ns_sched_unschedulable) */
} sched_group;

/* What a claim's kept types offer: the most allocatable cpu, memory and pods among them (for the capacity index) and
 * their available (zone, capacity type) pairs. */
/* How a pool's limits reason starts (sched_new_claim_explain); explain() tells limits from other causes by it. */
#define SCHED_LIMITS_REASON "all instance types exceed the NodePool's limits"

typedef struct sched_room {
    int64_t max[3];
    uint64_t offered;
} sched_room;

typedef struct sched_claim {
    uint32_t pool;
    uint32_t host;
    uint64_t *types;
    uint64_t pairs;
    sched_vec used;
    ns_requirements reqs;
    uint32_t *req_ids;
    size_t n_req_ids;
    size_t n_pods;
    const ns_pod **port_pods; /* pods with host ports on this claim */
    size_t n_port_pods;
    sched_room room;
    uint32_t *held; /* the reservations (sched->resv) the claim holds an instance of, sched_resv.c */
    size_t n_held;
    int64_t *charged; /* n_dims: what the claim took from its pool's remaining limits when it was made (owned), NULL
                       * when the pool has no limits */
} sched_claim;

typedef struct sched_node {
    const ns_node *node;
    int zone;      /* -1 when the node has no known zone */
    long pool;     /* nodepool index from karpenter.sh/nodepool, -1 when none */
    bool usable;   /* ready and schedulable */
    sched_vec free;
    const ns_pod **port_pods;
    size_t n_port_pods;
} sched_node;

/* A capacity reservation and how many instances it can still take in this round (sched_resv.c). */
typedef struct sched_resv {
    const char *id; /* borrowed from an offering */
    int64_t left;
} sched_resv;

typedef struct sched {
    const ns_sched_input *in;
    const ns_cluster *cl;
    size_t n_dims;
    const char **ext_names; /* interned names of dimensions SCHED_EXT0.. (owned array) */
    size_t cap_ext_names;
    sched_block *arena;
    sched_vec zero;              /* all zeros */
    sched_vec kubelet_tmp[3];    /* sched_kubelet.c's scratch */
    const char *zones[SCHED_MAX_ZONES];
    size_t n_zones;
    sched_pool *pools;
    size_t n_pools;
    ns_zone_labels *zone_labels; /* the offerings' zone labels, NULL when none (cloud/instance_types.h) */
    size_t *pool_order; /* pool indices by priority */
    bool any_prefer_no_schedule;
    sched_topo *topos;
    size_t n_topos, cap_topos;
    sched_group *groups;
    size_t n_groups;
    sched_node *nodes;
    size_t n_nodes;
    sched_claim *claims;
    size_t n_claims, cap_claims;
    int64_t *claim_used; /* cap_claims x n_dims: claims[i].used.v is row i (re-pointed when it grows) */
    /* Max-tree over claims of (free cpu, free memory, free pods) on their roomiest type: it prunes claims without
     * room before the fewest-pods order is applied (sched_place_planned). */
    int64_t *tree;
    size_t tree_leaves;
    size_t *cand; /* sched_place_planned's scratch: the claims that refused the pod being placed */
    size_t cap_cand;
    size_t *placement;
    uint32_t next_req_id;
    uint64_t *scratch; /* one bitset of the largest pool */
    uint64_t *keep;    /* another, for the types a placement keeps */
    uint64_t *pairs_scratch; /* a third, for offering queries */
    int64_t *fit;      /* per type: how many pods fit, for the type being tried */
    size_t max_types;
    size_t max_words;
    bool static_claims; /* ns_sched_static_claims: the claims carry no DaemonSet overhead */
    sched_resv *resv;   /* counted reservations; NULL when none */
    size_t n_resv;
    uint32_t *resv_plan; /* sched_resv_plan's answer: the reservations a claim would hold */
    size_t n_resv_plan;
    uint32_t *resv_mark; /* per reservation: the plan that listed it last (resv_epoch) */
    uint32_t resv_epoch;
    bool resv_refused; /* the last try_claim was refused for reserved capacity */
} sched;

/* Resources. */
int sched_dims_add(sched *s, const ns_res *r);
/* Zeroed memory from the round's arena (8-byte aligned), or NULL when out of memory. */
void *sched_arena_alloc(sched *s, size_t bytes);
void sched_arena_free(sched *s);
/* Once every dimension is known: v gets n_dims zeros from the arena. 0 or NS_ERR_INTERNAL. */
int sched_vec_init(sched *s, sched_vec *v);
/* Fills out (already initialised) from r; resources without a dimension are left out. */
void sched_vec_from(const sched *s, const ns_res *r, sched_vec *out);
int sched_vec_to(const sched *s, const sched_vec *v, ns_res *out); /* 0 or NS_ERR_INTERNAL */
int sched_zone_index(const sched *s, const char *zone);
int sched_ct_index(const char *capacity_type);
const char *sched_ct_name(int index); /* NULL out of range */
uint64_t sched_ct_pairs(const sched *s, int index); /* the pairs of one capacity type, in every zone */
uint64_t sched_zone_pairs(int zone);
uint64_t sched_pairs_for(const sched *s, const ns_requirements *reqs);
uint32_t sched_pairs_zones(const sched *s, uint64_t pairs); /* the zones (bit per zone) pairs name */

/* sched_pools.c */
int sched_pools_build(sched *s);
void sched_pools_free(sched *s);

/* sched_limits.c */
/* The pool's remaining limits once its existing Nodes and NodeClaims are counted. 0 or NS_ERR_INTERNAL. */
int sched_pool_limits(sched *s, sched_pool *p);
void sched_pool_recompute_limits(sched *s, sched_pool *p);
/* Into out (the pool's words): the pool's types whose capacity fits `remaining` in every limited dimension. */
void sched_pool_types_within(const sched *s, const sched_pool *p, const sched_vec *remaining, uint64_t *out);

/* sched_daemons.c: after the pool's types and their allocatable are set, groups them by the DaemonSets that run on
 * them and takes each group's overhead off its types' allocatable. 0 or an error. */
int sched_daemons_build(sched *s, sched_pool *p);
void sched_daemons_free(sched_pool *p);
/* Clears from `types` the types where a DaemonSet takes a host port the pod asks for; the first such DaemonSet's
 * template pod, or NULL when none conflicts. */
const ns_pod *sched_daemons_port_block(const sched_pool *p, const ns_pod *pod, uint64_t *types);
/* The least DaemonSet overhead among the claim's types (Karpenter's addDaemonRequests). 0 or NS_ERR_INTERNAL. */
int sched_daemons_claim_overhead(sched *s, const sched_claim *c, ns_res *out);

/* sched_groups.c */
int sched_groups_build(sched *s);
int sched_group_prepare(sched *s, sched_group *g);
bool sched_group_relax(sched *s, sched_group *g, char *what, size_t what_len);
void sched_groups_free(sched *s);

/* sched_topology.c */
int sched_topo_register(sched *s, sched_group *g);
/* The selector kube-scheduler deduces for pod p's default topology spread (sched_default_spread.c) into *out (the
 * caller frees it with ns_label_selector_free); *found is false, and *out empty, when nothing selects the pod. 0 or
 * NS_ERR_INTERNAL. */
int sched_default_selector(const ns_cluster *c, const ns_pod *p, ns_label_selector *out, bool *found);
int sched_topo_link(sched *s, sched_group *g);
int sched_topo_hosts(sched *s, size_t n_hosts);
bool sched_topo_matches(const sched_topo *t, const ns_pod *pod);
/* Narrows *zones (bit per zone) and *limit (pods of g that may go on host) for placing g on host. */
bool sched_topo_allow(const sched *s, const sched_group *g, uint32_t host, uint32_t *zones, int64_t *limit,
                      char *why, size_t why_len);
void sched_topo_record(sched *s, const sched_group *g, uint32_t host, uint32_t zones, int64_t count);
void sched_topo_record_pod(sched *s, const ns_pod *pod, uint32_t host, int zone);
/* Zones (bit per zone) g's zonal constraints may still allow on some claim: a superset, for pruning the search. */
uint32_t sched_topo_zones(const sched *s, const sched_group *g);
/* Registers the anti-affinity terms of a pod already bound to a node, so pending pods honour them. */
int sched_topo_register_bound(sched *s, const ns_pod *pod);
/* Fills g->skips from its active constraints and the anti-affinity terms that match it. */
int sched_topo_group_skips(const sched *s, sched_group *g);
void sched_topos_free(sched *s);

/* sched_keyed.c: topologies on any key but zone and hostname. Such a constraint becomes "key In [the domains it
 * allows]" in the group's requirements (sched_group_prepare), so existing nodes, claims and pools are matched by the
 * requirement code; the group's pods then go one at a time, each with the counts the previous one left. */
long sched_keyed_add(sched_keyed *k, const char *value); /* the value's index, added when new; -1 out of memory */
void sched_keyed_free(sched_keyed *k);
/* Fills t->dom with the domains of t->key its filter leaves. 0 or NS_ERR_INTERNAL. */
int sched_keyed_universe(sched *s, sched_topo *t);
/* g has an active constraint, or is matched by another pod's required anti-affinity, on such a key. */
bool sched_keyed_group(const sched *s, const sched_group *g);
/* Adds the domains g's keyed constraints allow to g->reqs, or says in g->keyed_why why one allows none. */
int sched_keyed_requirements(sched *s, sched_group *g);
/* After g's pods joined claim c: a spread (or a self-affinity starting its domain) picks one domain among those the
 * claim still offers, the one with the fewest matching pods, and the claim keeps only types offering it. */
int sched_keyed_narrow(sched *s, const sched_group *g, sched_claim *c);
/* Counts `count` pods on host in t (owner: as pods that declared t's anti-affinity term). */
void sched_keyed_record(sched *s, sched_topo *t, uint32_t host, int64_t count, bool owner);

/* sched_place.c */
int64_t sched_try_node(sched *s, sched_group *g, size_t node, int64_t want);
int64_t sched_try_claim(sched *s, sched_group *g, size_t claim, int64_t want);
int64_t sched_new_claim(sched *s, sched_group *g, int64_t want);
/* As sched_new_claim; on failure why_pool[i] (owned, caller frees) says why pool i could not take the pod. */
int64_t sched_new_claim_explain(sched *s, sched_group *g, int64_t want, char **why_pool);
void sched_group_assign(sched *s, sched_group *g, size_t target, int64_t k);
void sched_claim_release(sched_claim *c); /* its members, zeroed */
/* Appends a claim of pool pi with no pod that may take any of the pool's types (a static pool's claim). 0 or
 * NS_ERR_INTERNAL. */
int sched_static_claim_add(sched *s, size_t pi);
bool sched_ports_conflict(const ns_pod *a, const ns_pod *b);
/* The first host port of a that b also takes (same port and protocol, overlapping IPs), or NULL. */
const ns_host_port *sched_ports_conflict_at(const ns_pod *a, const ns_pod *b);

/* sched_index.c: the index over claims (leaf value: claim room minus used, per cpu, memory, pods; and its pod count). */
void sched_tree_clear(sched *s, size_t leaf);
int sched_tree_grow(sched *s, size_t need);
void sched_tree_update(sched *s, size_t claim);
/* Offers pods of g to the round's planned claims, fewest pods first (ties: the earlier claim), as Karpenter's
 * scheduler does; at most `want` pods go to one claim, and no more than keep it the fewest-pods choice. Pods go one
 * at a time when one_at_a_time (a placement may open other claims to the group). How many were placed (0: no claim
 * took one), or -1 on error. */
int64_t sched_place_planned(sched *s, sched_group *g, int64_t want, bool one_at_a_time);

/* sched_fit.c */
/* How many pods of `req` fit on top of `used` in `free` (dimensions g does not request are ignored), at most limit. */
int64_t sched_fit_count(const sched *s, const sched_vec *free_, const sched_vec *used, const sched_vec *req,
                        int64_t limit);
/* The largest k <= limit such that some type of claim c (and of g's view of the pool, offered in `pairs`) holds k
 * more pods of g and minValues still hold; keep = those types, room = what they offer. */
int64_t sched_fit_types(sched *s, const sched_pool *p, const sched_claim *c, const sched_group *g, uint64_t pairs,
                        int64_t limit, bool merged_min_values, uint64_t *keep, sched_room *room, char *why,
                        size_t len);
void sched_claims_free(sched *s);
/* What the types in `types` offer (sched_room). */
void sched_room_of(const sched_pool *p, const uint64_t *types, sched_room *room);
/* Distinct values of r's key among the types in keep (for zone and capacity type: among their offerings within
 * pairs); for other keys it stops counting at r's minValues. */
size_t sched_min_values_count(const sched *s, const sched_pool *p, const uint64_t *keep, uint64_t pairs,
                              const ns_requirement *r);

/* sched_policies.c */
/* Under PREFERENCE_POLICY Ignore, g starts with its preferences relaxed away (sched.h); nothing otherwise. Called
 * once the group's constraints are registered. */
void sched_ignore_preferences(sched *s, sched_group *g);
/* Under MIN_VALUES_POLICY BestEffort, lowers each minValues of reqs (claim c's) to the values c's types have left;
 * true when one was lowered. Nothing under Strict. */
bool sched_relax_min_values(const sched *s, const sched_claim *c, ns_requirements *reqs);

/* sched_result.c */
int sched_result_fill(sched *s, ns_sched_result *out);
/* sched_options.c: fills n_types, options and n_options of res->claims[0..n_claims), each distinct list once in
 * res->option_lists. */
int sched_claims_options(sched *s, ns_sched_result *res);
/* The price of type (a bit of pool p) on claim c: its cheapest offering in the claim's pairs, -1 when none is. */
double sched_claim_type_price(const sched_pool *p, const sched_claim *c, size_t type);

/* sched_resv.c: capacity reservations counted as Karpenter's ReservationManager does (see the file). */
#define SCHED_RESV_REFUSED 1
/* Counts the pools' reservations once the pools are built. 0 or NS_ERR_INTERNAL. */
int sched_resv_build(sched *s);
void sched_resv_free(sched *s);
bool sched_resv_held(const sched_claim *c, uint32_t r);
/* The reservations claim c would hold with types `keep` and pairs `pairs`, into s->resv_plan: NS_OK, or
 * SCHED_RESV_REFUSED when strict mode refuses the change (a compatible reservation exists but none can be held, or
 * the claim would lose every one it holds). */
int sched_resv_plan(sched *s, const sched_claim *c, const uint64_t *keep, uint64_t pairs);
/* Makes s->resv_plan the claim's holdings: takes the new ones, gives back the ones left. 0 or NS_ERR_INTERNAL. */
int sched_resv_commit(sched *s, sched_claim *c);
/* A claim that holds reservations launches only into them, one that holds none into no counted reservation. */
bool sched_resv_offering_ok(const sched_pool *p, const sched_claim *c, size_t type, size_t offering);
/* Once the round is over: a claim that holds reservations keeps only their pairs (Karpenter's FinalizeScheduling),
 * one that holds none drops the pairs only used-up reservations offer. */
void sched_resv_finish(sched *s);

/* sched_cost.c: with packing "cost", re-packs the round's new claims that hold only unconstrained pods into the
 * cheapest set of claims it finds, keeping the greedy claims when they cost no more. 0 or NS_ERR_INTERNAL. */
int sched_cost_pack(sched *s);

#endif
