/*
 * PodDisruptionBudgets (policy/v1).
 */
#ifndef NS_PDB_H
#define NS_PDB_H

#include <stdbool.h>
#include <stdint.h>

#include "model/meta.h"
#include "model/pod.h"
#include "model/selector.h"

/* An intstr.IntOrString that is either a count or a percentage ("50%"). */
typedef struct ns_int_or_percent {
    bool set;
    bool percent;
    int64_t value;
} ns_int_or_percent;

/* Resolves against a total the way Kubernetes does for PDBs (GetScaledValueFromIntOrPercent, rounding up). */
int64_t ns_int_or_percent_scaled(const ns_int_or_percent *v, int64_t total);

typedef struct ns_pdb {
    ns_meta meta;
    ns_int_or_percent min_available;   /* at most one of min_available and max_unavailable is set */
    ns_int_or_percent max_unavailable;
    ns_label_selector selector;        /* in policy/v1 an empty selector selects every pod of the namespace */
    char *unhealthy_pod_eviction_policy; /* NULL = IfHealthyBudget */
} ns_pdb;

ns_pdb *ns_pdb_new(void);
void ns_pdb_free(ns_pdb *pdb); /* accepts NULL */
/* True when the PDB covers the pod: same namespace and the selector matches its labels. */
bool ns_pdb_selects(const ns_pdb *pdb, const ns_pod *pod);

#endif
