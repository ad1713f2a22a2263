#include "engine_fixture.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "errors/ns_error.h"
#include "log/ns_log.h"
#include "manifest/loader.h"
#include "test_kinds.h"

const char EFX_BASE[] =
    "apiVersion: nodesmith.io/v1\n"
    "kind: SimNodeClass\n"
    "metadata: {name: default}\n"
    "spec: {}\n"
    "---\n"
    "apiVersion: karpenter.sh/v1\n"
    "kind: NodePool\n"
    "metadata: {name: default}\n"
    "spec:\n"
    "  template:\n"
    "    metadata:\n"
    "      labels: {team: web}\n"
    "    spec:\n"
    "      nodeClassRef: {group: nodesmith.io, kind: SimNodeClass, name: default}\n"
    "      taints: [{key: dedicated, value: web, effect: NoSchedule}]\n"
    "      startupTaints: [{key: example.com/agent-not-ready, effect: NoSchedule}]\n"
    "      requirements:\n"
    "        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}\n"
    "        - {key: kubernetes.io/arch, operator: In, values: [amd64]}\n"
    "  disruption:\n"
    "    consolidateAfter: Never\n";

static ns_plugin *load_sim(const char *catalog)
{
    ns_plugin_setting settings[] = {{"test_hooks", "true"}, {"catalog", catalog}};
    ns_plugin_load_params params = {.settings = settings, .n_settings = catalog ? 2 : 1};
    ns_plugin *p = NULL;
    int rc = ns_plugin_load_file(SIM_SO, &params, &p);
    ck_assert_msg(rc == NS_OK, "loading %s: %s", SIM_SO, ns_error_message());
    return p;
}

static void attach(efx *x)
{
    int rc = ns_engine_new(x->cluster, x->plugin, &x->cfg, &x->engine);
    ck_assert_msg(rc == NS_OK, "ns_engine_new: %s", ns_error_message());
    rc = ns_invariants_attach(x->engine, &x->inv);
    ck_assert_msg(rc == NS_OK, "ns_invariants_attach: %s", ns_error_message());
}

efx *efx_new(const char *base, const char *extra, const ns_engine_config *cfg)
{
    return efx_new_catalog(base, extra, cfg, NULL);
}

efx *efx_new_catalog(const char *base, const char *extra, const ns_engine_config *cfg, const char *catalog)
{
    static bool quiet;
    if (!quiet && !getenv("EFX_VERBOSE")) {
        ns_log_set_level(NS_LOG_ERROR);
        quiet = true;
    }
    ns_clock_use_simulated(EFX_T0);
    efx *x = calloc(1, sizeof(*x));
    ck_assert_ptr_nonnull(x);
    if (cfg)
        x->cfg = *cfg;
    else
        ns_engine_config_default(&x->cfg);
    x->cluster = test_cluster_new();
    ck_assert_ptr_nonnull(x->cluster);
    const char *docs[] = {base, extra};
    for (size_t i = 0; i < 2; i++) {
        if (!docs[i])
            continue;
        int rc = ns_manifest_load_string(x->cluster, "test.yaml", docs[i], strlen(docs[i]));
        ck_assert_msg(rc == NS_OK, "manifest: %s", ns_error_message());
    }
    ck_assert_msg(ns_cluster_resolve(x->cluster) == NS_OK, "resolve: %s", ns_error_message());
    x->plugin = load_sim(catalog);
    attach(x);
    return x;
}

void efx_restart(efx *x)
{
    ns_invariants_free(x->inv);
    ns_engine_free(x->engine);
    attach(x);
}

void efx_free(efx *x)
{
    if (!x)
        return;
    ns_invariants_free(x->inv);
    ns_engine_free(x->engine);
    ns_plugin_unload(x->plugin);
    ns_cluster_free(x->cluster);
    free(x);
}

void efx_load(efx *x, const char *yaml)
{
    /* Load into a scratch cluster, then hand each pod to the engine so it arrives as a timeline would add it. */
    ns_cluster *tmp = test_cluster_new();
    ck_assert_ptr_nonnull(tmp);
    int rc = ns_manifest_load_string(tmp, "extra.yaml", yaml, strlen(yaml));
    ck_assert_msg(rc == NS_OK, "manifest: %s", ns_error_message());
    for (size_t i = 0; i < tmp->n_pods; i++) {
        ns_pod *copy = ns_pod_copy(tmp->pods[i]);
        ck_assert_ptr_nonnull(copy);
        ck_assert_msg(ns_engine_add_pod(x->engine, copy) == NS_OK, "add pod: %s", ns_error_message());
    }
    /* VolumeAttachments as the attach-detach controller would create them: straight into the cluster */
    for (size_t i = 0; i < tmp->n_volume_attachments; i++) {
        ns_volume_attachment *va = tmp->volume_attachments[i];
        tmp->volume_attachments[i] = NULL;
        ck_assert_msg(ns_cluster_add_volume_attachment(x->cluster, va) == NS_OK, "add: %s", ns_error_message());
    }
    ck_assert_uint_eq(tmp->n_nodepools + tmp->n_pdbs + tmp->n_daemonsets, 0);
    ns_cluster_free(tmp);
}

int64_t efx_now(void)
{
    return ns_clock_now_ms();
}

static void check_invariants(efx *x)
{
    char report[4096];
    int n = ns_invariants_check(x->inv, report, sizeof(report));
    ck_assert_msg(n == 0, "invariants violated at t=%llds:\n%s", (long long)((efx_now() - EFX_T0) / 1000), report);
}

void efx_step(efx *x)
{
    int rc = ns_engine_step(x->engine);
    ck_assert_msg(rc == NS_OK, "step at t=%llds: %s", (long long)((efx_now() - EFX_T0) / 1000), ns_error_message());
    check_invariants(x);
}

void efx_run_for(efx *x, int64_t ms)
{
    int64_t end = efx_now() + ms;
    while (efx_now() < end) {
        ns_clock_advance(x->cfg.tick_ms < end - efx_now() ? x->cfg.tick_ms : end - efx_now());
        efx_step(x);
    }
}

bool efx_run_until(efx *x, bool (*pred)(efx *), int64_t max_ms)
{
    int64_t end = efx_now() + max_ms;
    while (!pred(x)) {
        if (efx_now() >= end)
            return false;
        ns_clock_advance(x->cfg.tick_ms);
        efx_step(x);
    }
    return true;
}

static bool matches(const ns_decision *d, ns_decision_kind kind, const char *needle)
{
    if (d->kind != kind)
        return false;
    if (!needle)
        return true;
    const char *fields[] = {d->nodes, d->nodeclaims, d->pods, d->method, d->reason, d->detail};
    for (size_t i = 0; i < 6; i++)
        if (strstr(fields[i], needle))
            return true;
    return false;
}

size_t efx_count(efx *x, ns_decision_kind kind, const char *needle)
{
    size_t n, count = 0;
    const ns_decision *d = ns_engine_decisions(x->engine, &n);
    for (size_t i = 0; i < n; i++)
        count += matches(&d[i], kind, needle);
    return count;
}

const ns_decision *efx_first(efx *x, ns_decision_kind kind, const char *needle)
{
    size_t n;
    const ns_decision *d = ns_engine_decisions(x->engine, &n);
    for (size_t i = 0; i < n; i++)
        if (matches(&d[i], kind, needle))
            return &d[i];
    return NULL;
}

const ns_decision *efx_last(efx *x, ns_decision_kind kind, const char *needle)
{
    size_t n;
    const ns_decision *d = ns_engine_decisions(x->engine, &n);
    for (size_t i = n; i-- > 0;)
        if (matches(&d[i], kind, needle))
            return &d[i];
    return NULL;
}

size_t efx_pending(efx *x)
{
    size_t n = 0;
    for (size_t i = 0; i < x->cluster->n_pods; i++)
        n += ns_sched_pod_is_pending(x->cluster->pods[i]);
    return n;
}

size_t efx_bound(efx *x)
{
    size_t n = 0;
    for (size_t i = 0; i < x->cluster->n_pods; i++)
        n += x->cluster->pods[i]->node_name && !ns_engine_pod_is_daemon(x->cluster->pods[i]);
    return n;
}

static int count_cb(void *ctx, const ns_instance *inst)
{
    (void)inst;
    (*(size_t *)ctx)++;
    return 0;
}

size_t efx_instances(efx *x)
{
    size_t n = 0;
    ck_assert_int_eq(ns_plugin_list_instances(x->plugin, count_cb, &n), NS_OK);
    return n;
}

size_t efx_initialized(efx *x)
{
    size_t n = 0;
    for (size_t i = 0; i < x->cluster->n_nodeclaims; i++)
        n += ns_claim_initialized(x->cluster->nodeclaims[i]);
    return n;
}

ns_nodeclaim *efx_claim(efx *x, size_t i)
{
    ck_assert_uint_lt(i, x->cluster->n_nodeclaims);
    return x->cluster->nodeclaims[i];
}

ns_node *efx_node_of(efx *x, const ns_nodeclaim *c)
{
    ns_node *n = ns_engine_node_of_claim(x->engine, c);
    ck_assert_msg(n != NULL, "nodeclaim %s has no node", c->meta.name);
    return n;
}

size_t efx_pods_on(efx *x, const char *node)
{
    size_t n = 0;
    for (size_t i = 0; i < x->cluster->n_pods; i++) {
        const ns_pod *p = x->cluster->pods[i];
        n += p->node_name && strcmp(p->node_name, node) == 0 && !ns_engine_pod_is_daemon(p);
    }
    return n;
}
