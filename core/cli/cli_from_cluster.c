/* simulate --from-cluster: the live cluster read into the engine's model the way the controller reads it (the same
 * informers and decoders, core/controller/controller_mirror.c), but listed once with no watch, so the reader needs
 * only get and list. CapacityBuffers (with their PodTemplates and Deployments) are read when the API server serves
 * them, whatever the gate: a timeline's featureGates decide whether their chunks are placed. Nothing is written to the cluster: the simulation's writes go to its in-memory store. */
#include "cli/cli.h"

#include "controller/controller_mirror.h"
#include "errors/ns_error.h"
#include "kube/kube_client.h"
#include "kube/kube_config.h"
#include "log/ns_log.h"

int cli_cluster_from_live(const char *kubeconfig, const char *context, const ns_nodeclass_kinds *kinds,
                          ns_cluster *c)
{
    ns_kube_config *cfg = NULL;
    ns_kube_client *client = NULL;
    ns_mirror *m = NULL;
    size_t applied = 0;
    int rc = ns_kube_config_load(kubeconfig, context, &cfg);
    if (rc == 0)
        rc = ns_kube_client_new(cfg, NULL, &client); /* takes cfg */
    if (rc == 0)
        rc = ns_mirror_new(client, kinds, NS_MIRROR_BUFFERS_IF_SERVED, &m);
    if (rc == 0)
        rc = ns_mirror_list_once(m);
    if (rc == 0)
        rc = ns_mirror_apply(m, c, &applied);
    if (rc == 0) {
        ns_mirror_stats st;
        ns_mirror_get_stats(m, &st);
        char objects[24], errors[24], held[24];
        snprintf(objects, sizeof(objects), "%zu", applied);
        snprintf(errors, sizeof(errors), "%llu", (unsigned long long)st.decode_errors);
        snprintf(held, sizeof(held), "%zu", st.held_aside);
        ns_log(st.decode_errors ? NS_LOG_WARN : NS_LOG_INFO, "simulate", "read the cluster", "objects", objects,
               "decode-errors", errors, "held-aside", held, NULL);
    }
    ns_mirror_free(m);
    ns_kube_client_free(client);
    return rc;
}
