/*
 * Status conditions (metav1.Condition): what the lifecycle engine records on NodeClaims and Nodes.
 *
 * Memory: an ns_conditions owns its entries' strings; ns_conditions_free frees them (accepts NULL).
 */
#ifndef NS_CONDITIONS_H
#define NS_CONDITIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ns_condition {
    char *type;   /* "Launched", "Registered", "Initialized", "Drifted", ... */
    char *status; /* "True", "False" or "Unknown" */
    char *reason; /* CamelCase; may be NULL */
    char *message; /* may be NULL */
    int64_t last_transition_ms; /* when status last changed */
} ns_condition;

typedef struct ns_conditions {
    ns_condition *items; /* in the order first set */
    size_t n;
    size_t cap;
} ns_conditions;

/* Sets a condition (adding it when absent). The transition time changes only when the status does. reason and
 * message may be NULL. 0 or NS_ERR_INTERNAL. */
int ns_conditions_set(ns_conditions *c, const char *type, const char *status, const char *reason, const char *message,
                      int64_t now_ms);
/* The condition of this type, or NULL. */
const ns_condition *ns_conditions_get(const ns_conditions *c, const char *type);
/* True when the condition exists with status "True". */
bool ns_conditions_true(const ns_conditions *c, const char *type);
/* Removes the condition when present. */
void ns_conditions_remove(ns_conditions *c, const char *type);
int ns_conditions_copy(const ns_conditions *src, ns_conditions *dst); /* dst must be empty; 0 or NS_ERR_INTERNAL */
void ns_conditions_free(ns_conditions *c);

#endif
