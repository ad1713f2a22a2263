/*
 * Taints and tolerations with Kubernetes' matching rules (k8s.io/api/core/v1 Toleration.ToleratesTaint) and
 * Karpenter's use of them.
 *
 * Taints use the ABI's ns_taint. Taints inside model objects own their strings (the fields are const only because
 * the struct is shared with the provider ABI); free them with ns_taints_free.
 *
 * Rules:
 *   - A toleration with an empty effect matches every effect; otherwise the effects must be equal.
 *   - A toleration with an empty key and operator Exists tolerates every taint; otherwise the keys must be equal.
 *   - Operator Exists ignores the value; operator Equal (the default) needs equal values (a missing value is "").
 *   - PreferNoSchedule taints do not block scheduling in Kubernetes; Karpenter blocks on them first and relaxes that
 *     preference later, so the caller chooses with NS_TAINTS_IGNORE_PREFER_NO_SCHEDULE.
 *   - Startup taints of a NodePool never block provisioning (Karpenter ignores them when scheduling); pass them as
 *     `ignored` and taints matching one by key and effect are skipped.
 */
#ifndef NS_TAINTS_H
#define NS_TAINTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nodesmith/provider.h"

#define NS_EFFECT_NO_SCHEDULE "NoSchedule"
#define NS_EFFECT_PREFER_NO_SCHEDULE "PreferNoSchedule"
#define NS_EFFECT_NO_EXECUTE "NoExecute"

typedef struct ns_toleration {
    char *key;    /* NULL or "" = any key (only with exists) */
    char *value;  /* NULL = "" */
    char *effect; /* NULL or "" = every effect */
    int64_t toleration_seconds;
    bool has_toleration_seconds;
    bool exists; /* operator Exists; false = Equal */
} ns_toleration;

/* True when the name is NoSchedule, PreferNoSchedule or NoExecute. */
bool ns_taint_effect_valid(const char *effect);

bool ns_toleration_tolerates(const ns_toleration *t, const ns_taint *taint);
/* True when any of the n tolerations tolerates the taint. */
bool ns_tolerations_tolerate(const ns_toleration *tols, size_t n, const ns_taint *taint);

/* Same key and effect (Kubernetes' Taint.MatchTaint). */
bool ns_taint_matches(const ns_taint *a, const ns_taint *b);

/* Taints Karpenter expects on a node while it initialises (pkg/scheduling/taints.go): node.kubernetes.io/not-ready
 * (NoSchedule, NoExecute), node.kubernetes.io/unreachable, node.cloudprovider.kubernetes.io/uninitialized,
 * karpenter.sh/unregistered, matched by key and effect, and any key under readiness.k8s.io/. They are ignored only on
 * a managed node that is not initialized yet (the engine's scheduling view drops them there) and apply after. */
bool ns_taint_is_known_ephemeral(const ns_taint *taint);

#define NS_TAINTS_IGNORE_PREFER_NO_SCHEDULE 0x1u /* PreferNoSchedule never blocks */

/* True when every taint is tolerated, skipping taints that match one in `ignored` (may be NULL) and those the flags
 * exclude. On false, reason (may be NULL) receives a sentence about the first untolerated taint, e.g.
 * "did not tolerate taint dedicated=gpu:NoSchedule". */
bool ns_taints_tolerated(const ns_taint *taints, size_t n, const ns_taint *ignored, size_t n_ignored,
                         const ns_toleration *tols, size_t n_tols, unsigned flags, char *reason, size_t reason_len);

/* "key=value:Effect" or "key:Effect". Returns buf. */
char *ns_taint_format(const ns_taint *taint, char *buf, size_t len);

/* Owned-copy helpers. */
int ns_taints_copy(const ns_taint *src, size_t n, ns_taint **dst); /* 0 or NS_ERR_INTERNAL */
void ns_taint_free(ns_taint *t);                                   /* members only; accepts NULL */
void ns_taints_free(ns_taint *v, size_t n);                        /* members and array; accepts NULL */
void ns_toleration_free(ns_toleration *t);                         /* members only; accepts NULL */
void ns_tolerations_free(ns_toleration *v, size_t n);              /* members and array; accepts NULL */
int ns_tolerations_copy(const ns_toleration *src, size_t n, ns_toleration **dst);

/* Edits of an owned array *v of *n taints (a Node's spec.taints), shared by every store that writes Nodes so the
 * in-memory cluster and the API server's mirror change alike. Each returns 0 or NS_ERR_INTERNAL and leaves the array
 * as it was on failure. */
int ns_taints_append(ns_taint **v, size_t *n, const ns_taint *taint); /* a copy at the end, duplicates allowed */
/* Kubernetes keeps one taint per key and effect: the value of the taint matching taint's key and effect is set, or a
 * copy is appended. */
int ns_taints_put(ns_taint **v, size_t *n, const ns_taint *taint);
/* Drops the taint with this key and effect (effect NULL or "" matches only an empty effect); no match is no change. */
void ns_taints_remove(ns_taint *v, size_t *n, const char *key, const char *effect);

#endif
