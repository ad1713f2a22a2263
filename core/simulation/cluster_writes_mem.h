/*
 * The in-memory cluster-writes store (simulation only): every write applied to an ns_cluster at once, with stand-ins
 * for Kubernetes' workload controllers.
 */
#ifndef NS_CLUSTER_WRITES_MEM_H
#define NS_CLUSTER_WRITES_MEM_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/cluster_writes.h"

/* The in-memory implementation over cluster (not owned; must outlive it). simulate_controllers turns on the
 * workload-controller stand-ins (pending copies of evicted controller pods, DaemonSet pods created with each Node
 * and deleted with it, pods of a deleted Node deleted or recreated). The writes' ctx is owned: free it with
 * ns_cluster_writes_mem_free (or
 * hand it to ns_engine_new_with_store, whose ns_engine_free destroys it). */
int ns_cluster_writes_mem_new(ns_cluster *cluster, bool simulate_controllers, ns_cluster_writes *out);
void ns_cluster_writes_mem_free(ns_cluster_writes *w); /* accepts NULL or a zeroed struct */

/* The in-memory workload controllers' scale operation (see ns_engine_scale_workload). Only for the in-memory
 * implementation's writes; NS_ERR_UNSUPPORTED for any other. */
int ns_cluster_writes_mem_scale(ns_cluster_writes *w, const char *ns, const char *kind, const char *name,
                                size_t replicas);

#endif
