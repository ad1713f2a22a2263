/*
 * Node-class status (provider ABI 4): what the provider resolves for each node class (its subnets, images, ...,
 * and conditions with the root Ready the core derives), written to the node class's /status as Karpenter's providers
 * write it. Each condition gets its lastTransitionTime, kept from the previous write while its status is unchanged.
 * A class is resolved again when its spec changes and every 5 minutes (Karpenter re-resolves periodically); the
 * status is written only when it changed. A provider without the method (NS_ERR_UNSUPPORTED) gets nothing written; a
 * failed call keeps the old status and is logged.
 */
#ifndef NS_NODECLASS_STATUS_H
#define NS_NODECLASS_STATUS_H

#include "kube/kube_client.h"
#include "model/cluster.h"
#include "plugin/plugin_loader.h"

#define NS_NODECLASS_STATUS_REFRESH_MS (5 * 60 * 1000)

typedef struct ns_nodeclass_status ns_nodeclass_status;

ns_nodeclass_status *ns_nodeclass_status_new(void); /* NULL with NS_ERR_INTERNAL recorded */
void ns_nodeclass_status_free(ns_nodeclass_status *s); /* accepts NULL */

/* One pass over c's node classes. 0, or the first failure after trying every class. */
int ns_nodeclass_status_sync(ns_nodeclass_status *s, ns_plugin *plugin, ns_kube_client *client, const ns_cluster *c);

#endif
