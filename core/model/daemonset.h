/*
 * DaemonSets: kept as a pod template (one pod per eligible node), not expanded into pods at load time.
 */
#ifndef NS_DAEMONSET_H
#define NS_DAEMONSET_H

#include "model/meta.h"
#include "model/pod.h"

typedef struct ns_daemonset {
    ns_meta meta;
    /* The pod every eligible node runs: its name is the DaemonSet's, its owner kind "DaemonSet", its requests
     * computed. Owned by the DaemonSet. */
    ns_pod *template_pod;
} ns_daemonset;

ns_daemonset *ns_daemonset_new(void);
void ns_daemonset_free(ns_daemonset *ds); /* the DaemonSet and its template; accepts NULL */

#endif
