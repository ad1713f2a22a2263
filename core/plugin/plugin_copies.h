/*
 * Deep copies of what the core passes to a provider method, owned by the call (plugin_watchdog.h): a call the
 * watchdog abandons may go on reading its inputs after the caller has freed its own.
 */
#ifndef NS_PLUGIN_COPIES_H
#define NS_PLUGIN_COPIES_H

#include "nodesmith/provider.h"

/* Everything the copies allocated; zero-initialise, free with ns_copies_free (accepts a zeroed one). */
typedef struct ns_copies {
    void **blocks;
    size_t n_blocks, cap_blocks;
    ns_json **trees;
    size_t n_trees, cap_trees;
} ns_copies;

/* Each returns 0, or NS_ERR_INTERNAL (recorded) when out of memory; *dst is then partly filled and still freed by
 * ns_copies_free. Strings may be NULL. */
int ns_copy_string(ns_copies *c, const char *src, const char **dst);
int ns_copy_nodeclass(ns_copies *c, const ns_nodeclass *src, ns_nodeclass *dst);
int ns_copy_launch_request(ns_copies *c, const ns_launch_request *src, ns_launch_request *dst);
int ns_copy_fault(ns_copies *c, const ns_fault *src, ns_fault *dst);
int ns_copy_node_condition(ns_copies *c, const ns_node_condition *src, ns_node_condition *dst);
void ns_copies_free(ns_copies *c);

#endif
