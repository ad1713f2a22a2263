/*
 * The one way a NodeClaim becomes a provider launch: its launch options (from the claim's requirements and the node
 * class's instance types) and the launch request. Every launch the core makes, from a controller, a disruption's
 * replacement or `nodesmith simulate`, goes through these two functions.
 */
#ifndef NS_LAUNCH_REQUEST_H
#define NS_LAUNCH_REQUEST_H

#include <stddef.h>
#include <stdint.h>

#include "cloud/instance_types.h"
#include "engine/unavailable.h"
#include "model/cluster.h"
#include "nodesmith/provider.h"

/* A launch option and the instance type it offers (for the launch's price, capacity and labels). */
typedef struct ns_launch_choice {
    ns_launch_option opt; /* strings point into the instance-type set */
    const ns_itype *type;
} ns_launch_choice;

/* The claim's launch options, cheapest first (ties in the order of the claim's instance-type requirement, then of
 * the provider's offerings): every available offering of a type the claim's node.kubernetes.io/instance-type
 * requirement names that has room for the claim's requests, in a zone and capacity type its requirements allow, and
 * not in `unavailable` at now_ms (may be NULL); cut to the offerings of the NS_SCHED_MAX_LAUNCH_TYPES cheapest types
 * (Karpenter's MaxInstanceTypes). *out is malloc'd (free with free()); empty when nothing is left. 0 or
 * NS_ERR_INTERNAL. */
int ns_launch_options(const ns_itype_set *set, const ns_nodeclaim *claim, const ns_unavailable_cache *unavailable,
                      int64_t now_ms, ns_launch_choice **out, size_t *n);

/* Fills *req for launching claim with opts. The client token is the claim's name, so launching again after a lost
 * answer or a restart returns the same instance; names come from generateName and are at most 63 characters, within
 * the ABI's 64-character token limit. Labels are the claim's, taints its taints and startup taints. *req points into
 * claim, nodeclass and opts, which must outlive it. */
void ns_launch_request_for(const ns_nodeclaim *claim, const char *cluster_name, const ns_nodeclass *nodeclass,
                           const ns_launch_option *opts, size_t n_opts, ns_launch_request *req);

#endif
