/* Writes against the real API server, read back by kubectl and python3-kubernetes: create with generateName, merge
 * patches with a resourceVersion precondition (409 when stale; concurrent writers that re-read and retry lose no
 * update), the Node finalizer removed by a strategic merge patch, the status subresource, delete with preconditions
 * and grace period, evictions refused by real PDBs (429, and the 500 of a pod under two PDBs), Events de-duplicated,
 * and Leases raced by two candidates. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock/ns_clock.h"
#include "errors/ns_error.h"
#include "kc_util.h"
#include "kube/kube_events.h"
#include "kube/kube_lease.h"
#include "kube/kube_writes.h"
#include "kube_bed.h"

static const ns_kube_resource CONFIGMAPS = {"", "v1", "configmaps", "ConfigMap", true};

static const char *str(const cJSON *obj, const char *a, const char *b)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, a), b);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* python3-kubernetes (Debian's), an independent client: prints the result of EXPR on object `o`. */
static char *python_read(const char *fetch, const char *expr)
{
    char script[2048];
    snprintf(script, sizeof(script),
             "import os, kubernetes\n"
             "kubernetes.config.load_kube_config(os.environ['NS_TEST_KUBECONFIG'])\n"
             "core = kubernetes.client.CoreV1Api()\n"
             "coord = kubernetes.client.CoordinationV1Api()\n"
             "o = %s\n"
             "print(%s)\n",
             fetch, expr);
    const char *path = kc_temp_file(script, 0600);
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "/usr/bin/python3 %s", path);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    char *out = calloc(1, 4096);
    size_t n = fread(out, 1, 4095, p);
    out[n] = '\0';
    ck_assert_int_eq(pclose(p), 0);
    unlink(path);
    out[strcspn(out, "\n")] = '\0';
    return out;
}

START_TEST(generate_name_and_stale_precondition)
{
    char ns[64];
    ns_kube_client *c = kc_admin();
    ck_assert_int_eq(kube_bed_namespace("kc-write", ns, sizeof(ns)), 0);
    cJSON *cm = kc_json("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"generateName\":\"pool-\"},"
                        "\"data\":{\"n\":\"0\"}}");
    cJSON *created = NULL;
    ck_assert_int_eq(ns_kube_create(c, &CONFIGMAPS, ns, cm, NULL, &created), 0);
    const char *name = str(created, "metadata", "name");
    ck_assert_int_eq(strncmp(name, "pool-", 5), 0);
    ck_assert_uint_eq(strlen(name), 10);
    char *kubectl = kc_kubectl("-n", ns, "get", "configmap", name, "-o", "jsonpath={.data.n}", NULL);
    ck_assert_str_eq(kubectl, "0");
    free(kubectl);
    const char *rv = str(created, "metadata", "resourceVersion");
    cJSON *patch = kc_json("{\"data\":{\"n\":\"1\"}}");
    ck_assert_int_eq(ns_kube_patch(c, &CONFIGMAPS, ns, name, NULL, NS_KUBE_MERGE_PATCH, patch, rv, NULL, NULL), 0);
    long status = 0;
    ck_assert_int_eq(ns_kube_patch(c, &CONFIGMAPS, ns, name, NULL, NS_KUBE_MERGE_PATCH, patch, rv, &status, NULL),
                     NS_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(status, 409);
    ck_assert_msg(strstr(ns_error_message(), "HTTP 409 Conflict"), "%s", ns_error_message());
    cJSON_Delete(patch);
    cJSON_Delete(cm);
    cJSON_Delete(created);
    ns_kube_client_free(c);
}
END_TEST

typedef struct counter_job {
    const char *ns;
    int conflicts;
    int failures;
} counter_job;

static int increment(void *ud, const cJSON *current, cJSON **patch)
{
    const cJSON *data = cJSON_GetObjectItemCaseSensitive(current, "data");
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(data, "n");
    char next[32];
    snprintf(next, sizeof(next), "%d", atoi(cJSON_IsString(n) ? n->valuestring : "0") + 1);
    *patch = cJSON_CreateObject();
    cJSON_AddStringToObject(cJSON_AddObjectToObject(*patch, "data"), "n", next);
    return 0;
}

static void *writer(void *arg)
{
    counter_job *job = arg;
    ns_kube_client *c = kc_admin();
    for (int i = 0; i < 15; i++) {
        int conflicts = 0;
        if (ns_kube_patch_retry(c, &CONFIGMAPS, job->ns, "counter", NULL, increment, NULL, &conflicts, NULL) < 0)
            job->failures++;
        job->conflicts += conflicts;
    }
    ns_kube_client_free(c);
    return NULL;
}

START_TEST(concurrent_writers_reread_on_conflict)
{
    char ns[64];
    ns_kube_client *c = kc_admin();
    ck_assert_int_eq(kube_bed_namespace("kc-409", ns, sizeof(ns)), 0);
    cJSON *cm = kc_json("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"counter\"},"
                        "\"data\":{\"n\":\"0\"}}");
    ck_assert_int_eq(ns_kube_create(c, &CONFIGMAPS, ns, cm, NULL, NULL), 0);
    cJSON_Delete(cm);
    counter_job jobs[3] = {{ns, 0, 0}, {ns, 0, 0}, {ns, 0, 0}};
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, writer, &jobs[i]);
    int conflicts = 0;
    for (int i = 0; i < 3; i++) {
        pthread_join(t[i], NULL);
        ck_assert_int_eq(jobs[i].failures, 0);
        conflicts += jobs[i].conflicts;
    }
    char *n = kc_kubectl("-n", ns, "get", "configmap", "counter", "-o", "jsonpath={.data.n}", NULL);
    ck_assert_str_eq(n, "45");
    free(n);
    fprintf(stderr, "concurrent writers: 45 increments, %d conflicts re-read and retried\n", conflicts);
    ns_kube_client_free(c);
}
END_TEST

START_TEST(node_finalizer_status_and_delete)
{
    ns_kube_client *c = kc_admin();
    cJSON *node = kc_json("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"generateName\":\"kc-node-\","
                          "\"finalizers\":[\"karpenter.sh/termination\",\"example.com/keep\"]},"
                          "\"spec\":{\"providerID\":\"kwok://kc\"}}");
    cJSON *created = NULL;
    ck_assert_int_eq(ns_kube_create(c, &NS_KUBE_NODES, NULL, node, NULL, &created), 0);
    char name[64], uid[64];
    snprintf(name, sizeof(name), "%s", str(created, "metadata", "name"));
    snprintf(uid, sizeof(uid), "%s", str(created, "metadata", "uid"));
    /* strategic merge: only our finalizer goes */
    ck_assert_msg(ns_kube_remove_finalizer(c, &NS_KUBE_NODES, NULL, name, "karpenter.sh/termination") == 0, "%s",
                  ns_error_message());
    char *fin = kc_kubectl("get", "node", name, "-o", "jsonpath={.metadata.finalizers}", NULL);
    ck_assert_str_eq(fin, "[\"example.com/keep\"]");
    free(fin);
    /* the status subresource */
    cJSON *st = kc_json("{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\","
                        "\"reason\":\"KubeletNotReady\",\"message\":\"nodesmith test\"}]}}");
    ck_assert_msg(ns_kube_patch(c, &NS_KUBE_NODES, NULL, name, "status", NS_KUBE_STRATEGIC_PATCH, st, NULL, NULL,
                                NULL) == 0, "%s", ns_error_message());
    cJSON_Delete(st);
    char fetch[128];
    snprintf(fetch, sizeof(fetch), "core.read_node('%s')", name);
    char *py = python_read(fetch, "[x.message for x in o.status.conditions if x.type == 'Ready'][0]");
    ck_assert_str_eq(py, "nodesmith test");
    free(py);
    /* delete: a wrong uid precondition is refused; the right one marks it deleting (a finalizer remains) */
    long status = 0;
    ns_kube_delete_opts wrong = {.uid = "00000000-0000-0000-0000-000000000000", .grace_period_s = -1};
    ck_assert_int_eq(ns_kube_delete(c, &NS_KUBE_NODES, NULL, name, &wrong, &status), NS_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(status, 409);
    ns_kube_delete_opts right = {.uid = uid, .grace_period_s = 0, .propagation = "Background"};
    ck_assert_int_eq(ns_kube_delete(c, &NS_KUBE_NODES, NULL, name, &right, NULL), 0);
    char *ts = kc_kubectl("get", "node", name, "-o", "jsonpath={.metadata.deletionTimestamp}", NULL);
    ck_assert_uint_gt(strlen(ts), 0);
    free(ts);
    ck_assert_int_eq(ns_kube_remove_finalizer(c, &NS_KUBE_NODES, NULL, name, "example.com/keep"), 0);
    cJSON *gone = NULL;
    for (int i = 0; i < 50 && ns_kube_get(c, &NS_KUBE_NODES, NULL, name, &status, &gone) == 0; i++) {
        cJSON_Delete(gone);
        gone = NULL;
        usleep(100000);
    }
    ck_assert_int_eq(status, 404);
    ns_error_clear();
    cJSON_Delete(node);
    cJSON_Delete(created);
    ns_kube_client_free(c);
}
END_TEST

static void running_pod(ns_kube_client *c, const char *ns, const char *name, const char *node, char *uid, size_t len)
{
    char text[1024];
    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"labels\":{\"app\":\"guarded\"}},"
             "\"spec\":{\"nodeName\":\"%s\",\"containers\":[{\"name\":\"c\",\"image\":\"nginx\"}]}}",
             name, node);
    cJSON *pod = kc_json(text), *created = NULL;
    ck_assert_int_eq(ns_kube_create(c, &NS_KUBE_PODS, ns, pod, NULL, &created), 0);
    snprintf(uid, len, "%s", str(created, "metadata", "uid"));
    cJSON *st = kc_json("{\"status\":{\"phase\":\"Running\",\"conditions\":[{\"type\":\"Ready\","
                        "\"status\":\"True\"}]}}");
    ck_assert_msg(ns_kube_patch(c, &NS_KUBE_PODS, ns, name, "status", NS_KUBE_MERGE_PATCH, st, NULL, NULL, NULL) == 0,
                  "%s", ns_error_message());
    cJSON_Delete(st);
    cJSON_Delete(pod);
    cJSON_Delete(created);
}

static void create_pdb(ns_kube_client *c, const char *ns, const char *name, const char *budget)
{
    char text[512];
    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"policy/v1\",\"kind\":\"PodDisruptionBudget\",\"metadata\":{\"name\":\"%s\"},"
             "\"spec\":{%s,\"selector\":{\"matchLabels\":{\"app\":\"guarded\"}}}}",
             name, budget);
    cJSON *pdb = kc_json(text);
    ck_assert_int_eq(ns_kube_create(c, &NS_KUBE_PDBS, ns, pdb, NULL, NULL), 0);
    cJSON_Delete(pdb);
    /* wait until the disruption controller has counted the pods */
    for (int i = 0; i < 200; i++) {
        cJSON *got = NULL;
        ck_assert_int_eq(ns_kube_get(c, &NS_KUBE_PDBS, ns, name, NULL, &got), 0);
        const cJSON *status = cJSON_GetObjectItemCaseSensitive(got, "status");
        const cJSON *healthy = cJSON_GetObjectItemCaseSensitive(status, "currentHealthy");
        bool ready = cJSON_IsNumber(healthy) && healthy->valueint == 2;
        cJSON_Delete(got);
        if (ready)
            return;
        usleep(100000);
    }
    ck_abort_msg("PDB %s never counted the pods", name);
}

START_TEST(eviction_refused_by_real_pdbs)
{
    char ns[64], node[96], uid1[64], uid2[64];
    ns_kube_client *c = kc_admin();
    ck_assert_int_eq(kube_bed_namespace("kc-evict", ns, sizeof(ns)), 0);
    snprintf(node, sizeof(node), "%s-node", ns);
    ck_assert_int_eq(kube_bed_ready_node(node, NULL, NULL), 0);
    running_pod(c, ns, "a", node, uid1, sizeof(uid1));
    running_pod(c, ns, "b", node, uid2, sizeof(uid2));
    create_pdb(c, ns, "all", "\"minAvailable\":2");
    ns_kube_evict_result r = NS_KUBE_EVICTED;
    ck_assert_msg(ns_kube_evict(c, ns, "a", uid1, &r) == 0, "%s", ns_error_message());
    ck_assert_int_eq(r, NS_KUBE_EVICT_BLOCKED);
    /* a second PDB over the same pod: the API server's 500, treated as a block */
    create_pdb(c, ns, "again", "\"maxUnavailable\":1");
    ck_assert_msg(ns_kube_evict(c, ns, "a", uid1, &r) == 0, "%s", ns_error_message());
    ck_assert_int_eq(r, NS_KUBE_EVICT_BLOCKED);
    ns_kube_delete_opts d = {.grace_period_s = -1};
    ck_assert_int_eq(ns_kube_delete(c, &NS_KUBE_PDBS, ns, "all", &d, NULL), 0);
    ck_assert_int_eq(ns_kube_delete(c, &NS_KUBE_PDBS, ns, "again", &d, NULL), 0);
    /* the pod was replaced (uid differs): gone; the right uid: evicted */
    ck_assert_int_eq(ns_kube_evict(c, ns, "a", uid2, &r), 0);
    ck_assert_int_eq(r, NS_KUBE_EVICT_GONE);
    ck_assert_int_eq(ns_kube_evict(c, ns, "a", uid1, &r), 0);
    ck_assert_int_eq(r, NS_KUBE_EVICTED);
    char *ts = kc_kubectl("-n", ns, "get", "pod", "a", "-o", "jsonpath={.metadata.deletionTimestamp}", NULL);
    ck_assert_ptr_nonnull(ts);
    ck_assert_uint_gt(strlen(ts), 0);
    free(ts);
    ck_assert_int_eq(ns_kube_evict(c, ns, "no-such-pod", NULL, &r), 0);
    ck_assert_int_eq(r, NS_KUBE_EVICT_GONE);
    ns_kube_client_free(c);
}
END_TEST

START_TEST(events_are_deduplicated)
{
    ns_kube_client *c = kc_admin();
    ns_kube_recorder *rec = NULL;
    ck_assert_int_eq(ns_kube_recorder_new(c, "karpenter", &rec), 0);
    char node[64];
    snprintf(node, sizeof(node), "kc-event-%lld", (long long)ns_clock_now_ms());
    ns_kube_event_ref ref = {.api_version = "v1", .kind = "Node", .name = node, .uid = "u-1"};
    int count = 0;
    ck_assert_msg(ns_kube_record(rec, &ref, "Normal", "DisruptionBlocked", "node is not empty", &count) == 0, "%s",
                  ns_error_message());
    ck_assert_int_eq(count, 1);
    ck_assert_int_eq(ns_kube_record(rec, &ref, "Normal", "DisruptionBlocked", "node is not empty", &count), 0);
    ck_assert_int_eq(count, 2);
    ck_assert_int_eq(ns_kube_record(rec, &ref, "Warning", "FailedDraining", "pdb blocks", &count), 0);
    ck_assert_int_eq(count, 1);
    char selector[160];
    snprintf(selector, sizeof(selector), "involvedObject.name=%s,reason=DisruptionBlocked", node);
    char *k = kc_kubectl("-n", "default", "get", "events", "--field-selector", selector, "-o",
                         "jsonpath={.items[*].count}", NULL);
    ck_assert_str_eq(k, "2");
    free(k);
    char fetch[256];
    snprintf(fetch, sizeof(fetch), "core.list_namespaced_event('default', field_selector='%s').items", selector);
    char *py = python_read(fetch, "[(e.count, e.source.component, e.type) for e in o]");
    ck_assert_str_eq(py, "[(2, 'karpenter', 'Normal')]");
    free(py);
    ns_kube_recorder_free(rec);
    ns_kube_client_free(c);
}
END_TEST

typedef struct candidate {
    const char *ns, *identity;
    bool leader;
    int rc;
} candidate;

static void *campaign(void *arg)
{
    candidate *cand = arg;
    ns_kube_client *c = kc_admin(), *le = NULL;
    ck_assert_int_eq(ns_kube_client_new_sibling(c, 5, 10, &le), 0);
    cand->rc = ns_kube_lease_try(le, cand->ns, NS_KUBE_LEASE_NAME, cand->identity, 2, &cand->leader);
    ns_kube_client_free(le);
    ns_kube_client_free(c);
    return NULL;
}

START_TEST(leases_raced_by_two_candidates)
{
    char ns[64];
    ck_assert_int_eq(kube_bed_namespace("kc-lease", ns, sizeof(ns)), 0);
    candidate a = {ns, "replica-a", false, 0}, b = {ns, "replica-b", false, 0};
    pthread_t ta, tb;
    pthread_create(&ta, NULL, campaign, &a);
    pthread_create(&tb, NULL, campaign, &b);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    ck_assert_int_eq(a.rc, 0);
    ck_assert_int_eq(b.rc, 0);
    ck_assert_msg(a.leader != b.leader, "exactly one leader (a %d, b %d)", a.leader, b.leader);
    candidate *winner = a.leader ? &a : &b, *loser = a.leader ? &b : &a;
    char fetch[160];
    snprintf(fetch, sizeof(fetch), "coord.read_namespaced_lease('%s', '%s')", NS_KUBE_LEASE_NAME, ns);
    char *py = python_read(fetch, "o.spec.holder_identity");
    ck_assert_str_eq(py, winner->identity);
    free(py);
    /* the winner renews; the loser cannot take it before it expires, and takes it after */
    ns_kube_client *c = kc_admin();
    bool leader = false;
    ck_assert_int_eq(ns_kube_lease_try(c, ns, NS_KUBE_LEASE_NAME, winner->identity, 2, &leader), 0);
    ck_assert(leader);
    ck_assert_int_eq(ns_kube_lease_try(c, ns, NS_KUBE_LEASE_NAME, loser->identity, 2, &leader), 0);
    ck_assert(!leader);
    sleep(3);
    ck_assert_int_eq(ns_kube_lease_try(c, ns, NS_KUBE_LEASE_NAME, loser->identity, 2, &leader), 0);
    ck_assert(leader);
    ns_kube_lease lease;
    ck_assert_int_eq(ns_kube_lease_read(c, ns, NS_KUBE_LEASE_NAME, &lease), 0);
    ck_assert_str_eq(lease.holder, loser->identity);
    ck_assert_int_eq(lease.transitions, 1);
    char *k = kc_kubectl("-n", ns, "get", "lease", NS_KUBE_LEASE_NAME, "-o", "jsonpath={.spec.holderIdentity}", NULL);
    ck_assert_str_eq(k, loser->identity);
    free(k);
    ck_assert_int_eq(ns_kube_lease_release(c, ns, NS_KUBE_LEASE_NAME, loser->identity), 0);
    ck_assert_int_eq(ns_kube_lease_read(c, ns, NS_KUBE_LEASE_NAME, &lease), 0);
    ck_assert_str_eq(lease.holder, "");
    ns_kube_client_free(c);
}
END_TEST

int main(void)
{
    kube_bed bed;
    if (kube_bed_start(&bed) < 0)
        return 1;
    Suite *s = suite_create("kube-client-writes");
    TCase *t = tcase_create("writes");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, generate_name_and_stale_precondition);
    tcase_add_test(t, concurrent_writers_reread_on_conflict);
    tcase_add_test(t, node_finalizer_status_and_delete);
    tcase_add_test(t, eviction_refused_by_real_pdbs);
    tcase_add_test(t, events_are_deduplicated);
    tcase_add_test(t, leases_raced_by_two_candidates);
    suite_add_tcase(s, t);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    kube_bed_stop(&bed);
    return failed ? 1 : 0;
}
