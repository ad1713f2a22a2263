/* The controller's run: cache, leader election, engine steps, clean stop. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock/ns_clock.h"
#include "controller/cluster_writes_kube.h"
#include "controller/commitment_report.h"
#include "controller/controller.h"
#include "controller/controller_events.h"
#include "controller/controller_metrics.h"
#include "controller/buffer_status.h"
#include "controller/controller_mirror.h"
#include "controller/endpoints.h"
#include "controller/nodeclass_status.h"
#include "controller/nodepool_status.h"
#include "controller/sim_kubelet_pods.h"
#include "disruption/disruption.h"
#include "engine/engine.h"
#include "errors/ns_error.h"
#include "kube/kube_config.h"
#include "kube/kube_lease.h"
#include "log/ns_log.h"

#define LEASE_RENEW_DEADLINE_MS 10000
#define LEASE_RETRY_MS 2000

typedef struct election {
    ns_kube_client *client; /* its own token bucket: throttling never delays renewal */
    const char *ns, *name, *identity;
    const volatile sig_atomic_t *stop;
    atomic_bool leader;
    atomic_bool lost;
    atomic_bool quit;
    pthread_t thread;
    bool started;
} election;

static bool stopping(const election *el)
{
    return atomic_load(&el->quit) || (el->stop && *el->stop);
}

static void *election_loop(void *arg)
{
    election *el = arg;
    int64_t last_renew = 0;
    bool was_leader = false;
    while (!stopping(el)) {
        bool leader = false;
        int rc = ns_kube_lease_try(el->client, el->ns, el->name, el->identity, NS_KUBE_LEASE_DURATION_S, &leader);
        int64_t now = ns_clock_now_ms();
        if (rc == 0 && leader) {
            last_renew = now;
            if (!was_leader)
                ns_log(NS_LOG_INFO, "controller", "successfully acquired lease", "lease", el->name, "namespace",
                       el->ns, "identity", el->identity, NULL);
            was_leader = true;
            atomic_store(&el->leader, true);
        } else if (was_leader && (rc == 0 || now - last_renew > LEASE_RENEW_DEADLINE_MS)) {
            ns_log(NS_LOG_ERROR, "controller", "leader election lost", "lease", el->name, "namespace", el->ns,
                   "error", rc < 0 ? ns_error_message() : "another replica holds the lease", NULL);
            atomic_store(&el->leader, false);
            atomic_store(&el->lost, true);
            return NULL;
        } else if (rc < 0) {
            ns_log(NS_LOG_ERROR, "controller", "error retrieving resource lock", "lease", el->name, "error",
                   ns_error_message(), NULL);
        }
        for (int64_t t = 0; t < LEASE_RETRY_MS && !stopping(el); t += 100)
            usleep(100 * 1000);
    }
    if (was_leader && ns_kube_lease_release(el->client, el->ns, el->name, el->identity) < 0)
        ns_log(NS_LOG_ERROR, "controller", "failed releasing the lease", "lease", el->name, "error",
               ns_error_message(), NULL);
    atomic_store(&el->leader, false);
    return NULL;
}

static void election_stop(election *el)
{
    if (!el->started)
        return;
    atomic_store(&el->quit, true);
    pthread_join(el->thread, NULL);
    el->started = false;
}

typedef struct run {
    const ns_controller_options *o;
    ns_kube_client *client, *lease_client, *kubelet_client; /* kubelet_client: the simulated kubelet's own bucket */
    ns_mirror *mirror;
    ns_cluster *cluster;
    ns_engine *engine;
    ns_nodepool_status *pool_status;
    ns_buffer_status *buffer_status; /* with the CapacityBuffer gate on */
    ns_nodeclass_status *class_status;
    ns_metrics *metrics;
    ns_controller_metrics *counts;
    ns_commitment_report *commitments; /* NULL without COMMITMENTS_FILE */
    ns_controller_events *events;
    ns_endpoints *endpoints;
    election el;
    char identity[300];
} run;

static void sleep_tick(const run *r, int64_t ms)
{
    for (int64_t t = 0; t < ms && !*r->o->stop; t += 50)
        usleep(50 * 1000);
}

static int connect_cluster(run *r)
{
    const ns_controller_settings *s = r->o->settings;
    ns_kube_config *cfg = NULL;
    int rc = ns_kube_config_load(s->kubeconfig, s->context, &cfg);
    if (rc < 0)
        return rc;
    ns_kube_client_options co = {.qps = s->kube_qps, .burst = s->kube_burst, .max_retries = -1};
    if ((rc = ns_kube_client_new(cfg, &co, &r->client)) < 0)
        return rc;
    /* Karpenter's default: the pod's own namespace (the kubeconfig context's outside a cluster) */
    r->el.ns = s->leader_election_namespace ? s->leader_election_namespace
                                            : ns_kube_client_config(r->client)->namespace_;
    if (r->o->simulate_kubelet &&
        (rc = ns_kube_client_new_sibling(r->client, NS_SIM_KUBELET_QPS, NS_SIM_KUBELET_BURST, &r->kubelet_client)) < 0)
        return rc;
    return ns_kube_client_new_sibling(r->client, 0, 0, &r->lease_client);
}

/* /metrics, /healthz and /readyz answer from before the cache syncs (not ready until it has). */
static int serve_endpoints(run *r)
{
    const ns_controller_settings *s = r->o->settings;
    if (!(r->metrics = ns_metrics_new()) || !(r->counts = ns_controller_metrics_new(r->metrics)))
        return NS_ERR_INTERNAL;
    int rc = ns_controller_metrics_update(r->counts, NULL, NULL, false);
    if (rc == 0 && s->commitments.n)
        rc = ns_commitment_report_new(r->metrics, &r->commitments);
    if (rc == 0)
        rc = ns_endpoints_start(s->bind_address, s->metrics_port, s->health_port, r->metrics, &r->endpoints);
    if (rc == 0)
        ns_endpoints_set_ready(r->endpoints, false, "waiting for the cache to sync (NodePool and NodeClaim CRDs served, "
                               "every informer listed)");
    return rc;
}

static int wait_for_cache(run *r)
{
    int rc = ns_mirror_new(r->client, r->o->kinds,
                           r->o->settings->gates.capacity_buffer ? NS_MIRROR_BUFFERS_GATED : NS_MIRROR_BUFFERS_OFF,
                           &r->mirror);
    if (rc == 0)
        rc = ns_mirror_start(r->mirror);
    if (rc < 0)
        return rc;
    int64_t waited = 0;
    while (!*r->o->stop && !ns_mirror_wait_synced(r->mirror, 1000)) {
        waited += 1000;
        if (waited % 10000 == 0)
            ns_log(NS_LOG_INFO, "controller", "waiting for the cache to sync", "error", ns_error_message(), NULL);
    }
    if (!*r->o->stop)
        ns_endpoints_set_ready(r->endpoints, true, NULL);
    if (*r->o->stop)
        return 0;
    ns_mirror_stats st;
    ns_mirror_get_stats(r->mirror, &st);
    char informers[32];
    snprintf(informers, sizeof(informers), "%zu", st.informers);
    ns_log(NS_LOG_INFO, "controller", "cache synced", "informers", informers, NULL);
    return 0;
}

static int build_engine(run *r)
{
    const ns_controller_settings *s = r->o->settings;
    if (!(r->cluster = ns_cluster_new()) || !(r->pool_status = ns_nodepool_status_new()) ||
        !(r->class_status = ns_nodeclass_status_new()) ||
        (s->gates.capacity_buffer && !(r->buffer_status = ns_buffer_status_new())))
        return NS_ERR_INTERNAL;
    ns_cluster_set_kinds(r->cluster, r->o->kinds);
    int rc = ns_mirror_apply(r->mirror, r->cluster, NULL);
    ns_cluster_writes w;
    if (rc == 0)
        rc = ns_cluster_writes_kube_new(r->client, r->mirror, r->cluster, &w);
    if (rc < 0)
        return rc;
    ns_engine_config cfg;
    ns_engine_config_default(&cfg);
    cfg.cluster_name = s->cluster_name;
    cfg.batch_idle_ms = s->batch_idle_ms;
    cfg.batch_max_ms = s->batch_max_ms;
    cfg.packing = s->packing;
    cfg.min_values_policy = s->min_values_policy;
    cfg.preference_policy = s->preference_policy;
    cfg.commitments = &s->commitments;
    cfg.default_spread = s->sched_config.default_spread;
    cfg.n_default_spread = s->sched_config.n_default_spread;
    cfg.simulate_kubelet = r->o->simulate_kubelet;
    cfg.registration_delay_ms = 1000;
    cfg.initialization_delay_ms = 2000;
    cfg.simulate_scheduler = false;
    cfg.simulate_controllers = false;
    cfg.node_repair = s->gates.node_repair;
    cfg.static_capacity = s->gates.static_capacity;
    cfg.reserved_capacity = s->gates.reserved_capacity;
    cfg.capacity_buffer = s->gates.capacity_buffer;
    if ((rc = ns_engine_new_with_store(r->cluster, r->o->plugin, &cfg, w, &r->engine)) < 0 ||
        (rc = ns_controller_events_new(r->client, r->mirror, &r->events)) < 0)
        return rc;
    ns_engine_set_stop_flag(r->engine, r->o->stop);
    ns_disruption_config dc = {.spot_to_spot = s->gates.spot_to_spot};
    return ns_disruption_register(r->engine, &dc);
}

/* One tick: the cache into the cluster, then (as leader) an engine step and the simulated kubelet's pods. */
static void tick(run *r, bool leader)
{
    int rc = ns_mirror_apply(r->mirror, r->cluster, NULL);
    if (rc < 0) {
        ns_log(NS_LOG_ERROR, "controller", "failed updating the cluster state from the cache", "error",
               ns_error_message(), NULL);
        return;
    }
    if (!leader)
        return;
    if ((rc = ns_engine_step(r->engine)) < 0 && !*r->o->stop)
        ns_log(NS_LOG_ERROR, "controller", "reconciler error", "error", ns_error_message(), NULL);
    if ((rc = ns_controller_events_publish(r->events, r->engine, r->cluster)) < 0)
        ns_log(NS_LOG_ERROR, "events", "failed publishing events", "error", ns_error_message(), NULL);
    if (r->o->simulate_kubelet && (rc = ns_sim_kubelet_pods(r->kubelet_client, r->mirror, r->cluster, NULL)) < 0)
        ns_log(NS_LOG_ERROR, "kubelet", "failed updating pods", "error", ns_error_message(), NULL);
    if ((rc = ns_nodepool_status_sync(r->pool_status, r->client, r->mirror, r->cluster)) < 0)
        ns_log(NS_LOG_ERROR, "nodepool.counter", "failed updating nodepool status", "error", ns_error_message(), NULL);
    if (r->buffer_status &&
        (rc = ns_buffer_status_sync(r->buffer_status, r->client, r->mirror, r->engine, r->cluster)) < 0)
        ns_log(NS_LOG_ERROR, "capacitybuffer", "failed updating capacity buffer status", "error", ns_error_message(),
               NULL);
    /* logs its own failures, naming the node class */
    ns_nodeclass_status_sync(r->class_status, r->o->plugin, r->client, r->cluster);
}

/* Each commitment's utilisation from the nodes the engine sees, once there is an engine. */
static int count_commitments(run *r)
{
    if (!r->commitments || !r->engine)
        return NS_OK;
    ns_commit_ledger *l = NULL;
    int rc = ns_engine_commit_ledger(r->engine, &l);
    if (rc == NS_OK)
        rc = ns_commitment_report_update(r->commitments, l);
    ns_commit_ledger_free(l);
    return rc;
}

static void count(run *r)
{
    if (ns_controller_metrics_update(r->counts, r->engine, r->cluster, ns_mirror_synced(r->mirror)) < 0 ||
        count_commitments(r) < 0)
        ns_log(NS_LOG_ERROR, "metrics", "failed updating metrics", "error", ns_error_message(), NULL);
}

static void run_free(run *r)
{
    election_stop(&r->el);
    ns_endpoints_stop(r->endpoints);
    ns_controller_metrics_free(r->counts);
    ns_commitment_report_free(r->commitments);
    ns_metrics_free(r->metrics);
    ns_controller_events_free(r->events);
    ns_engine_free(r->engine);
    ns_nodepool_status_free(r->pool_status);
    ns_buffer_status_free(r->buffer_status);
    ns_nodeclass_status_free(r->class_status);
    ns_mirror_free(r->mirror);
    ns_cluster_free(r->cluster);
    ns_kube_client_free(r->lease_client);
    ns_kube_client_free(r->kubelet_client);
    ns_kube_client_free(r->client);
}

int ns_controller_run(const ns_controller_options *o)
{
    run r;
    memset(&r, 0, sizeof(r));
    r.o = o;
    const ns_controller_settings *s = o->settings;
    if (o->identity)
        snprintf(r.identity, sizeof(r.identity), "%s", o->identity);
    else {
        char host[256] = "nodesmith";
        gethostname(host, sizeof(host) - 1);
        snprintf(r.identity, sizeof(r.identity), "%s_%ld", host, (long)getpid());
    }
    int rc = serve_endpoints(&r);
    if (rc == 0)
        rc = connect_cluster(&r);
    if (rc == 0)
        rc = wait_for_cache(&r);
    if (rc == 0 && !*o->stop)
        rc = build_engine(&r);
    if (rc == 0 && !*o->stop && s->leader_election) {
        r.el.client = r.lease_client;
        r.el.name = s->leader_election_name;
        r.el.identity = r.identity;
        r.el.stop = o->stop;
        if (pthread_create(&r.el.thread, NULL, election_loop, &r.el) != 0)
            rc = NS_FAIL(NS_ERR_INTERNAL, "controller: cannot start the leader-election thread");
        else {
            r.el.started = true;
            ns_log(NS_LOG_INFO, "controller", "attempting to acquire leader lease", "lease", r.el.name, "namespace",
                   r.el.ns, "identity", r.identity, NULL);
        }
    }
    int64_t tick_ms = o->tick_ms > 0 ? o->tick_ms : 500;
    while (rc == 0 && !*o->stop) {
        if (atomic_load(&r.el.lost)) {
            rc = NS_FAIL(NS_ERR_INTERNAL, "leader election lost: lease %s/%s", r.el.ns, r.el.name);
            break;
        }
        tick(&r, !s->leader_election || atomic_load(&r.el.leader));
        count(&r);
        sleep_tick(&r, tick_ms);
    }
    if (rc == 0)
        ns_log(NS_LOG_INFO, "controller", "stopping", "identity", r.identity, NULL);
    run_free(&r);
    if (rc == 0)
        ns_error_clear();
    return rc;
}
