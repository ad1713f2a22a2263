/*
 * Node-class kinds for tests that load manifests: the kinds the build's sim.so declares, read through the loader the
 * way nodesmith reads them, so a test's EC2NodeClass or SimNodeClass is accepted because a loaded provider declares
 * it, never because the core knows it.
 */
#ifndef TEST_KINDS_H
#define TEST_KINDS_H

#include "model/cluster.h"
#include "model/nodeclass_kinds.h"

/* Loads sim.so once per process (with test hooks on) and returns its kinds; both live until the process exits. A
 * failure aborts the test with the loader's message. */
const ns_nodeclass_kinds *test_sim_kinds(void);
/* A new empty cluster that accepts the sim's kinds; the caller frees it with ns_cluster_free. */
ns_cluster *test_cluster_new(void);

#endif
