/* VolumeAttachments and termination, from Karpenter's node termination controller (v1.14,
 * pkg/controllers/node/termination: awaitVolumeDetachment, filterVolumeAttachments): a drained node is not terminated
 * while an attachment of its drainable pods' persistent volumes remains, up to its terminationGracePeriod; inline
 * volumes and the volumes of pods that stay on the node are not waited for. The attach-detach controller's stand-in
 * attaches a running pod's CSI volume and detaches it volume_detach_delay_ms after the pod left. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "engine_fixture.h"
#include "errors/ns_error.h"

/* Pod db with claim data bound to the CSI volume pv-data; `tolerations` is its spec.tolerations line. */
#define DB_POD(tolerations)                                                                                           \
    "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv-data}\nspec:\n  capacity: {storage: 10Gi}\n"        \
    "  accessModes: [ReadWriteOnce]\n  csi: {driver: disk.csi.example.com, volumeHandle: vol-1}\n"                   \
    "  claimRef: {namespace: default, name: data}\n"                                                                  \
    "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: data\n"  \
    "  annotations: {pv.kubernetes.io/bind-completed: 'yes'}\nspec:\n"                              \
    "  accessModes: [ReadWriteOnce]\n  storageClassName: ''\n  volumeName: pv-data\n"                                 \
    "  resources: {requests: {storage: 10Gi}}\n"                                                                      \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: db}\nspec:\n" tolerations                                       \
    "  volumes: [{name: data, persistentVolumeClaim: {claimName: data}}]\n"                                           \
    "  containers: [{name: c, resources: {requests: {cpu: '1', memory: 1Gi}}}]\n"

/* An attachment of an inline volume on node `node`, which termination does not wait for. */
static void load_inline_attachment(efx *x, const char *node)
{
    char yaml[512];
    snprintf(yaml, sizeof(yaml),
             "apiVersion: storage.k8s.io/v1\nkind: VolumeAttachment\nmetadata: {name: inline-1}\nspec:\n"
             "  attacher: disk.csi.example.com\n  nodeName: %s\n"
             "  source: {inlineVolumeSpec: {csi: {driver: disk.csi.example.com, volumeHandle: vol-2}}}\n"
             "status: {attached: true}\n",
             node);
    efx_load(x, yaml);
}

static bool db_running(efx *x)
{
    return efx_bound(x) == 1 && efx_initialized(x) == 1;
}

/* The claim under termination (the provisioner may launch a replacement for its leaving pod meanwhile). */
static char terminating[128];

static bool claim_gone(efx *x)
{
    return !ns_cluster_find_nodeclaim(x->cluster, terminating);
}

static const ns_volume_attachment *attachment_of(efx *x, const char *pv)
{
    for (size_t i = 0; i < x->cluster->n_volume_attachments; i++)
        if (x->cluster->volume_attachments[i]->pv_name && strcmp(x->cluster->volume_attachments[i]->pv_name, pv) == 0)
            return x->cluster->volume_attachments[i];
    return NULL;
}

static const char *volumes_detached(const ns_nodeclaim *c)
{
    const ns_condition *cond = ns_conditions_get(&c->conditions, NS_COND_VOLUMES_DETACHED);
    return cond ? cond->status : "";
}

/* Starts with db running on one node; the node's name into node. */
static efx *db_running_on(const char *base, const char *tolerations, int64_t detach_delay_ms, char *node, size_t len)
{
    ns_engine_config cfg;
    ns_engine_config_default(&cfg);
    cfg.volume_detach_delay_ms = detach_delay_ms;
    char *extra = malloc(4096);
    snprintf(extra, 4096, DB_POD("%s"), tolerations);
    efx *x = efx_new(base, extra, &cfg);
    free(extra);
    ck_assert(efx_run_until(x, db_running, EFX_S(120)));
    efx_step(x); /* the attach-detach controller sees the pod bound */
    snprintf(node, len, "%s", efx_node_of(x, efx_claim(x, 0))->meta.name);
    snprintf(terminating, sizeof(terminating), "%s", efx_claim(x, 0)->meta.name);
    return x;
}

START_TEST(test_attach_and_wait_for_detach)
{
    char node[128];
    efx *x = db_running_on(EFX_BASE, EFX_POD_TOLERATE, EFX_S(40), node, sizeof(node));
    /* the stand-in attached db's volume to its node */
    const ns_volume_attachment *va = attachment_of(x, "pv-data");
    ck_assert_ptr_nonnull(va);
    ck_assert_str_eq(va->node_name, node);
    ck_assert_str_eq(va->attacher, "disk.csi.example.com");
    ck_assert(va->attached);
    load_inline_attachment(x, node);
    ns_nodeclaim *claim = efx_claim(x, 0);
    ck_assert_int_eq(ns_engine_delete_claim(x->engine, claim, "test", "Manual"), NS_OK);
    int64_t deleted = efx_now();
    efx_run_for(x, EFX_S(20));
    /* drained (db evicted at once, the minimum drain time passed), but the volume is still attached: the instance
     * stays and the claim says why */
    ck_assert_uint_eq(efx_count(x, NS_DECISION_EVICTED_POD, "default/db"), 1);
    ck_assert_ptr_nonnull(attachment_of(x, "pv-data"));
    ck_assert_str_eq(volumes_detached(claim), "Unknown");
    ck_assert_str_eq(ns_conditions_get(&claim->conditions, NS_COND_VOLUMES_DETACHED)->reason,
                     "AwaitingVolumeDetachment");
    ck_assert_uint_eq(efx_count(x, NS_DECISION_TERMINATED_INSTANCE, NULL), 0);
    ck_assert(efx_run_until(x, claim_gone, EFX_S(120)));
    /* detached 40 s after db left (the step after its eviction), then the instance and the node went; the inline
     * volume's attachment was never waited for and is still there */
    int64_t evicted = efx_first(x, NS_DECISION_EVICTED_POD, "default/db")->time_ms;
    int64_t terminated = efx_first(x, NS_DECISION_TERMINATED_INSTANCE, NULL)->time_ms;
    ck_assert_int_le(evicted, deleted + EFX_S(1));
    ck_assert_int_ge(terminated, evicted + EFX_S(40));
    ck_assert_int_le(terminated, evicted + EFX_S(42));
    ck_assert_ptr_null(attachment_of(x, "pv-data"));
    ck_assert_ptr_nonnull(ns_cluster_find_volume_attachment(x->cluster, "inline-1"));
    efx_free(x);
}
END_TEST

/* A pod tolerating karpenter.sh/disrupted:NoSchedule is not drainable: its volume stays attached and is not waited
 * for. */
START_TEST(test_undrainable_pod_volume_not_waited_for)
{
    char node[128];
    efx *x = db_running_on(EFX_BASE,
                           "  tolerations: [{key: dedicated, operator: Equal, value: web, effect: NoSchedule},\n"
                           "                {key: karpenter.sh/disrupted, operator: Exists, effect: NoSchedule}]\n",
                           EFX_S(600), node, sizeof(node));
    ck_assert_ptr_nonnull(attachment_of(x, "pv-data"));
    ns_nodeclaim *claim = efx_claim(x, 0);
    ck_assert_int_eq(ns_engine_delete_claim(x->engine, claim, "test", "Manual"), NS_OK);
    int64_t deleted = efx_now();
    ck_assert(efx_run_until(x, claim_gone, EFX_S(60)));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_EVICTED_POD, "default/db"), 0);
    ck_assert_int_le(efx_first(x, NS_DECISION_TERMINATED_INSTANCE, NULL)->time_ms, deleted + EFX_S(10));
    efx_free(x);
}
END_TEST

/* The base pool with terminationGracePeriod: 2m. */
static char *base_with_tgp(void)
{
    const char *anchor = "      nodeClassRef:";
    const char *at = strstr(EFX_BASE, anchor);
    size_t len = strlen(EFX_BASE) + 128;
    char *s = malloc(len);
    snprintf(s, len, "%.*s      terminationGracePeriod: 2m\n%s", (int)(at - EFX_BASE), EFX_BASE, at);
    return s;
}

/* At the claim's terminationGracePeriod, termination goes on with the attachment left (VolumesDetached turns False
 * and the instance, the node and the claim go in the same step). */
START_TEST(test_grace_period_ends_the_wait)
{
    char node[128];
    char *base = base_with_tgp();
    efx *x = db_running_on(base, EFX_POD_TOLERATE, EFX_S(3600), node, sizeof(node));
    free(base);
    ns_nodeclaim *claim = efx_claim(x, 0);
    ck_assert_int_eq(ns_engine_delete_claim(x->engine, claim, "test", "Manual"), NS_OK);
    int64_t deleted = efx_now();
    efx_run_for(x, EFX_S(119));
    /* drained long ago (db evicted at once), still waiting for its volume one second before the grace period ends */
    ck_assert_uint_eq(efx_count(x, NS_DECISION_EVICTED_POD, "default/db"), 1);
    ck_assert_str_eq(volumes_detached(ns_cluster_find_nodeclaim(x->cluster, terminating)), "Unknown");
    ck_assert_uint_eq(efx_count(x, NS_DECISION_TERMINATED_INSTANCE, NULL), 0);
    ck_assert(efx_run_until(x, claim_gone, EFX_S(60)));
    ck_assert_int_eq(efx_now(), deleted + EFX_S(120));
    ck_assert_int_eq(efx_first(x, NS_DECISION_TERMINATED_INSTANCE, NULL)->time_ms, deleted + EFX_S(120));
    /* the volume was never detached: the instance went with it attached */
    ck_assert_ptr_nonnull(attachment_of(x, "pv-data"));
    efx_free(x);
}
END_TEST

/* An unhealthy instance (aws pkg/controllers/interruption/utils.go: ForcefulTermination) has its termination
 * timestamp set to now, so termination does not wait for the volume to detach: the instance goes after the minimum
 * drain time with the attachment left, an hour before the detach would come. */
START_TEST(test_unhealthy_instance_does_not_wait_for_detach)
{
    char node[128];
    efx *x = db_running_on(EFX_BASE, EFX_POD_TOLERATE, EFX_S(3600), node, sizeof(node));
    ck_assert_int_eq(ns_engine_inject_event(x->engine, terminating, NS_EVENT_INSTANCE_UNHEALTHY, 0), NS_OK);
    int64_t noticed = efx_now();
    ck_assert(efx_run_until(x, claim_gone, EFX_S(20)));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_EVICTED_POD, "default/db"), 1);
    ck_assert_int_le(efx_first(x, NS_DECISION_TERMINATED_INSTANCE, NULL)->time_ms, noticed + EFX_S(10));
    ck_assert_ptr_nonnull(attachment_of(x, "pv-data"));
    efx_free(x);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("engine-volume-detach");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_attach_and_wait_for_detach);
    tcase_add_test(tc, test_undrainable_pod_volume_not_waited_for);
    tcase_add_test(tc, test_grace_period_ends_the_wait);
    tcase_add_test(tc, test_unhealthy_instance_does_not_wait_for_detach);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
