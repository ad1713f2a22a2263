#include "test_kinds.h"

#include <check.h>
#include <pthread.h>
#include <stddef.h>

#include "errors/ns_error.h"
#include "plugin/plugin_loader.h"

/* Engines of one test may build their clusters in parallel threads (engine-contexts): the first caller fills the
 * shared registry under the lock, so no second copy is built and lost. */
static pthread_mutex_t kinds_lock = PTHREAD_MUTEX_INITIALIZER;

static const ns_nodeclass_kinds *sim_kinds_locked(void)
{
    static ns_plugin *sim;
    static ns_nodeclass_kinds *kinds;
    if (kinds)
        return kinds;
    ns_plugin_setting settings[] = {{"test_hooks", "true"}};
    ns_plugin_load_params params = {.settings = settings, .n_settings = 1};
    ck_assert_msg(ns_plugin_load_file(TEST_SIM_SO, &params, &sim) == NS_OK, "loading %s: %s", TEST_SIM_SO,
                  ns_error_message());
    kinds = ns_nodeclass_kinds_new();
    ck_assert_ptr_nonnull(kinds);
    ck_assert_msg(ns_plugin_declare_kinds(sim, kinds) == NS_OK, "sim kinds: %s", ns_error_message());
    return kinds;
}

const ns_nodeclass_kinds *test_sim_kinds(void)
{
    pthread_mutex_lock(&kinds_lock);
    const ns_nodeclass_kinds *kinds = sim_kinds_locked();
    pthread_mutex_unlock(&kinds_lock);
    return kinds;
}

ns_cluster *test_cluster_new(void)
{
    ns_cluster *c = ns_cluster_new();
    ck_assert_ptr_nonnull(c);
    ns_cluster_set_kinds(c, test_sim_kinds());
    return c;
}
