/*
 * A workload counts once. Manifests written by hand hold a Deployment and the loader expands it into the pods its
 * controllers would create; a `kubectl get -o yaml` dump holds the Deployment, its ReplicaSets and their pods too.
 * There a workload stands through its own objects, matched by owner references: a Pod's controlling owner (a
 * ReplicaSet, StatefulSet or Job), a ReplicaSet's owning Deployment, and a Deployment's pods found through their
 * ReplicaSet's name, <deployment>-<pod-template-hash>, as the Deployment controller names it. Whichever comes first in
 * the files, the workload's expanded pods go (or are never made) once one of its own objects is loaded.
 *
 * The record is the cluster's (model/expansions.h): it spans every file loaded into that cluster.
 */
#ifndef NS_WORKLOAD_OWNERS_H
#define NS_WORKLOAD_OWNERS_H

#include <stdbool.h>

#include "model/cluster.h"
#include "model/meta.h"

/* True when objects already loaded stand for workload KIND (its metadata w): it is not to be expanded. */
bool ns_owners_stand_for(const ns_cluster *c, const char *kind, const ns_meta *w);

/* Records that pod POD was expanded from workload KIND w. 0 or NS_ERR_INTERNAL. */
int ns_owners_record_expanded(ns_cluster *c, const char *kind, const ns_meta *w, const char *pod);

/* A Pod or ReplicaSet loaded from a manifest (its metadata obj, before it is added to the cluster): the workloads it
 * belongs to stand through it from now on, and the pods expanded from them are removed. 0 or an error. */
int ns_owners_claim(ns_cluster *c, const char *kind, const ns_meta *obj);

#endif
