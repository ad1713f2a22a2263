/* The Kubernetes client's figures:
 *   1. pods decoded per second (JSON text -> cJSON -> the model's ns_pod, through the manifest decoders);
 *   2. informer cache bytes per pod (heap in use per cached pod: entry, identity strings, indexes, the ns_pod);
 *   3. with a control plane (argument "--apiserver", under `kubebed.py run --`): time to list and cache N pods
 *      (default 50000, NS_KUBE_BENCH_PODS) created beforehand by a parallel bulk creator, and the cache's bytes per
 *      pod then. The pods name a scheduler nobody runs, so they stay pending and unbound (a pod bound to a Node that
 *      does not exist would be garbage-collected before the list).
 * It prints the figures; it asserts nothing. Memory is read with mallinfo2 (glibc), so it counts every allocation. */
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "errors/ns_error.h"
#include "kube/kube_config.h"
#include "kube/kube_decode.h"
#include "kube/kube_informer.h"
#include "kube/kube_writes.h"
#include "log/ns_log.h"

#define DECODE_PODS 20000
#define CREATORS 16

/* A pod as the API server returns it from a Deployment: defaulted fields, managedFields, status. */
static const char *const pod_template =
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"creationTimestamp\":\"2026-11-23T19:00:00Z\","
    "\"generateName\":\"web-5d8f7c9b4-\",\"labels\":{\"app\":\"web-%d\",\"pod-template-hash\":\"5d8f7c9b4\"},"
    "\"name\":\"web-5d8f7c9b4-%05d\",\"namespace\":\"shop\",\"ownerReferences\":[{\"apiVersion\":\"apps/v1\","
    "\"blockOwnerDeletion\":true,\"controller\":true,\"kind\":\"ReplicaSet\",\"name\":\"web-5d8f7c9b4\","
    "\"uid\":\"0f4a4c57-6b4e-4d7c-9a55-1a5b2f0e7c11\"}],\"resourceVersion\":\"%d\","
    "\"uid\":\"5b0e7d5e-6f8a-4a43-9d8b-%012d\",\"managedFields\":[{\"apiVersion\":\"v1\",\"fieldsType\":\"FieldsV1\","
    "\"fieldsV1\":{\"f:metadata\":{\"f:generateName\":{}}},\"manager\":\"kube-controller-manager\","
    "\"operation\":\"Update\",\"time\":\"2026-11-23T19:00:00Z\"}]},"
    "\"spec\":{\"containers\":[{\"image\":\"nginx:1.27\",\"imagePullPolicy\":\"IfNotPresent\",\"name\":\"web\","
    "\"ports\":[{\"containerPort\":80,\"protocol\":\"TCP\"}],\"resources\":{\"limits\":{\"memory\":\"256Mi\"},"
    "\"requests\":{\"cpu\":\"250m\",\"memory\":\"128Mi\"}},\"terminationMessagePath\":\"/dev/termination-log\","
    "\"terminationMessagePolicy\":\"File\"}],\"dnsPolicy\":\"ClusterFirst\",\"enableServiceLinks\":true,"
    "\"nodeName\":\"node-%d\",\"preemptionPolicy\":\"PreemptLowerPriority\",\"priority\":0,"
    "\"restartPolicy\":\"Always\",\"schedulerName\":\"default-scheduler\",\"securityContext\":{},"
    "\"serviceAccount\":\"default\",\"serviceAccountName\":\"default\",\"terminationGracePeriodSeconds\":30,"
    "\"tolerations\":[{\"effect\":\"NoExecute\",\"key\":\"node.kubernetes.io/not-ready\",\"operator\":\"Exists\","
    "\"tolerationSeconds\":300},{\"effect\":\"NoExecute\",\"key\":\"node.kubernetes.io/unreachable\","
    "\"operator\":\"Exists\",\"tolerationSeconds\":300}]},"
    "\"status\":{\"phase\":\"Running\",\"qosClass\":\"Burstable\",\"podIP\":\"10.244.1.7\"}}";

static size_t heap_in_use(void)
{
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

static int offline_figures(void)
{
    char **texts = calloc(DECODE_PODS, sizeof(char *));
    for (int i = 0; i < DECODE_PODS; i++) {
        if (asprintf(&texts[i], pod_template, i % 50, i, 1000 + i, i, i % 100) < 0)
            return 1;
    }
    ns_kube_store *store = ns_kube_store_new(NS_KUBE_DECODE_POD_PACKED.free);
    size_t before = heap_in_use();
    int64_t start = ns_clock_now_ms();
    for (int i = 0; i < DECODE_PODS; i++) {
        cJSON *j = cJSON_Parse(texts[i]);
        void *typed = NULL;
        if (!j || NS_KUBE_DECODE_POD_PACKED.decode(j, "Pod", NULL, &typed) < 0) {
            fprintf(stderr, "kube_bench: decode failed: %s\n", ns_error_message());
            return 1;
        }
        /* the entry as an informer builds it: names borrowed from the packed pod */
        const cJSON *meta = cJSON_GetObjectItemCaseSensitive(j, "metadata");
        const char *pns, *pname, *pnode;
        NS_KUBE_DECODE_POD_PACKED.names(typed, &pns, &pname, &pnode);
        ns_kube_obj *o = ns_kube_obj_new_typed(cJSON_GetObjectItemCaseSensitive(meta, "uid")->valuestring,
                                               cJSON_GetObjectItemCaseSensitive(meta, "resourceVersion")->valuestring,
                                               NULL, typed, pns, pname, pnode);
        ns_kube_store_put(store, o, NULL);
        cJSON_Delete(j);
    }
    int64_t took = ns_clock_now_ms() - start;
    size_t after = heap_in_use();
    printf("kube decode: %d pods (API server JSON, parse + decode + cache) in %lld ms: %.0f objects/s\n", DECODE_PODS,
           (long long)took, took > 0 ? DECODE_PODS * 1000.0 / (double)took : 0.0);
    printf("kube cache: %.0f bytes per pod (target <= 1024)\n", (double)(after - before) / DECODE_PODS);
    ns_kube_store_free(store);
    for (int i = 0; i < DECODE_PODS; i++)
        free(texts[i]);
    free(texts);
    return 0;
}

typedef struct creator {
    ns_kube_client *c;
    const char *ns;
    atomic_int *next;
    int total;
    int failures;
} creator;

static void *create_pods(void *arg)
{
    creator *cr = arg;
    char text[1024];
    for (int i; (i = atomic_fetch_add(cr->next, 1)) < cr->total;) {
        snprintf(text, sizeof(text),
                 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"bench-%06d\",\"labels\":"
                 "{\"app\":\"bench-%d\"}},\"spec\":{\"schedulerName\":\"nodesmith-bench\",\"containers\":"
                 "[{\"name\":\"c\",\"image\":\"nginx\",\"resources\":{\"requests\":{\"cpu\":\"100m\","
                 "\"memory\":\"64Mi\"}}}]}}",
                 i, i % 50);
        cJSON *pod = cJSON_Parse(text);
        long status = 0;
        if (ns_kube_create(cr->c, &NS_KUBE_PODS, cr->ns, pod, &status, NULL) < 0 && status != 409)
            cr->failures++;
        cJSON_Delete(pod);
    }
    return NULL;
}

static int apiserver_figures(void)
{
    const char *env = getenv("NS_KUBE_BENCH_PODS");
    int total = env ? atoi(env) : 50000;
    const char *ns = "kube-bench";
    ns_kube_config *cfg = NULL;
    ns_kube_client *c = NULL;
    ns_kube_client_options opts = {.qps = 100000, .burst = 100000};
    if (ns_kube_config_from_kubeconfig(getenv("NS_TEST_KUBECONFIG"), NULL, &cfg) < 0 ||
        ns_kube_client_new(cfg, &opts, &c) < 0) {
        fprintf(stderr, "kube_bench: %s\n", ns_error_message());
        return 1;
    }
    cJSON *nsobj = cJSON_Parse("{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"kube-bench\"}}");
    ns_kube_create(c, &NS_KUBE_NAMESPACES, NULL, nsobj, NULL, NULL);
    cJSON_Delete(nsobj);
    ns_error_clear();
    atomic_int next = 0;
    creator cr[CREATORS];
    pthread_t t[CREATORS];
    int64_t start = ns_clock_now_ms();
    for (int i = 0; i < CREATORS; i++) {
        cr[i] = (creator){c, ns, &next, total, 0};
        pthread_create(&t[i], NULL, create_pods, &cr[i]);
    }
    int failures = 0;
    for (int i = 0; i < CREATORS; i++) {
        pthread_join(t[i], NULL);
        failures += cr[i].failures;
    }
    int64_t created_ms = ns_clock_now_ms() - start;
    printf("kube bulk create: %d pods in %lld ms (%.0f/s, %d failures, %d writers)\n", total, (long long)created_ms,
           created_ms ? total * 1000.0 / (double)created_ms : 0.0, failures, CREATORS);
    ns_kube_informer_options o = {.resource = &NS_KUBE_PODS, .namespace_ = ns, .page_size = 500,
                                  .decoder = &NS_KUBE_DECODE_POD_PACKED};
    ns_kube_informer *inf = NULL;
    if (ns_kube_informer_new(c, &o, &inf) < 0)
        return 1;
    size_t before = heap_in_use();
    start = ns_clock_now_ms();
    if (ns_kube_informer_list_once(inf) < 0) {
        fprintf(stderr, "kube_bench: list failed: %s\n", ns_error_message());
        return 1;
    }
    int64_t list_ms = ns_clock_now_ms() - start;
    size_t after = heap_in_use();
    ns_kube_informer_rdlock(inf);
    size_t n = ns_kube_store_len(ns_kube_informer_store(inf));
    ns_kube_informer_unlock(inf);
    ns_kube_informer_stats st;
    ns_kube_informer_get_stats(inf, &st);
    printf("kube list and cache: %zu pods in %lld ms (%llu pages of 500, %llu decode errors)\n", n,
           (long long)list_ms, (unsigned long long)st.pages, (unsigned long long)st.decode_errors);
    printf("kube cache after the list: %.0f bytes per pod (target <= 1024)\n", n ? (double)(after - before) / n : 0.0);
    ns_kube_informer_free(inf);
    ns_kube_client_free(c);
    return 0;
}

int main(int argc, char **argv)
{
    ns_log_set_level(NS_LOG_ERROR);
    if (argc > 1 && strcmp(argv[1], "--apiserver") == 0)
        return apiserver_figures();
    return offline_figures();
}
