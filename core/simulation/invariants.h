/*
 * The lifecycle invariants, checked after any step (tests and timelines call ns_invariants_check after each one):
 *   1. no PodDisruptionBudget was violated by a voluntary eviction or deletion (seen as it happens, by wrapping the
 *      engine's cluster-writes layer, and counted with this file's own arithmetic, not the Eviction API's);
 *   2. no karpenter.sh/do-not-disrupt pod was evicted or deleted voluntarily;
 *   3. no instance runs without a NodeClaim once the garbage-collection grace period (plus two ticks) has passed;
 *   4. no pod stays pending, past the batch window, while capacity was available: an initialized node could take it
 *      (the scheduler stand-in should have bound it), or a NodePool could fit it and no NodeClaim is on its way and
 *      launches are not throttled. The patience (the batch window plus two ticks) counts from when the pod became
 *      pending or, if later, from when room may have appeared otherwise (the checker attached, a pod, Node or
 *      NodeClaim went, a taint or cordon was lifted, a NodePool or node class changed): a pod held back by a NodePool's limits until a node goes, or pending
 *      before the engine first ran, is not blamed for the time it could not be placed.
 * Checks declare what they wait for to the engine (ns_engine_due), so an event-driven run checks when stepping every
 * tick would find a violation.
 *
 * Memory and threading: as the engine. Attach after ns_engine_new; free before ns_engine_free.
 */
#ifndef NS_INVARIANTS_H
#define NS_INVARIANTS_H

#include <stddef.h>

#include "engine/engine.h"

typedef struct ns_invariants ns_invariants;

/* Wraps e's cluster writes to watch evictions. *out is the caller's; free with ns_invariants_free. */
int ns_invariants_attach(ns_engine *e, ns_invariants **out);
/* Restores the engine's writes and frees the checker. Accepts NULL. */
void ns_invariants_free(ns_invariants *inv);

/* Checks the state now and every write seen since the previous check. Returns the number of violations found (0 when
 * all hold) and writes one line per violation into report (may be NULL; truncated to len), or a negative ns_err when
 * the check itself failed (listing instances, scheduling). */
int ns_invariants_check(ns_invariants *inv, char *report, size_t len);
/* Tells the checker the cluster was changed from outside the engine's writes (a timeline step scaling a workload
 * goes straight to the store): pending pods get their patience again from now, as after a write that may make room. */
void ns_invariants_outside_change(ns_invariants *inv);
/* Violations found by every check so far. */
size_t ns_invariants_total(const ns_invariants *inv);

#endif
