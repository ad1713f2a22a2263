/*
 * Kubernetes label selectors (metav1.LabelSelector: matchLabels AND matchExpressions with In, NotIn, Exists,
 * DoesNotExist), as used by PodDisruptionBudgets, pod (anti-)affinity and topology spread constraints.
 */
#ifndef NS_SELECTOR_H
#define NS_SELECTOR_H

#include <stdbool.h>
#include <stddef.h>

#include "model/labels.h"
#include "model/requirements.h"

typedef struct ns_label_selector {
    /* False when the manifest had no selector (null). A null selector selects nothing; an empty one ({})
     * selects everything (metav1.LabelSelectorAsSelector). */
    bool present;
    ns_labels match_labels;
    ns_selector_req *exprs; /* operators In, NotIn, Exists, DoesNotExist only */
    size_t n_exprs;
} ns_label_selector;

/* True when the labels satisfy the selector. A missing label satisfies NotIn and DoesNotExist. */
bool ns_label_selector_matches(const ns_label_selector *s, const ns_labels *labels);
int ns_label_selector_copy(const ns_label_selector *src, ns_label_selector *dst); /* 0 or NS_ERR_INTERNAL */
void ns_label_selector_free(ns_label_selector *s);                             /* members; accepts NULL */

#endif
