/* API objects as the API server sends them (with managedFields, status, defaulted fields) decode into the engine's
 * model through the manifest decoders; bad or unexpected fields are errors naming the object and the field. The
 * informer-level behaviour (a bad object skipped, the others cached) is tested against the real API server. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "kube/kube_decode.h"
#include "kube/kube_resource.h"
#include "model/node.h"
#include "model/nodeclass.h"
#include "model/nodeclass_kinds.h"
#include "model/buffer.h"
#include "model/intern.h"
#include "model/lease.h"
#include "model/storage.h"
#include "model/workload.h"
#include "model/pod.h"
#include "kube/kube_store.h"

static cJSON *load(const char *name)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", NS_TEST_DATA, name);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    static char buf[65536];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    cJSON *j = cJSON_Parse(buf);
    ck_assert_ptr_nonnull(j);
    return j;
}

START_TEST(pod_from_api_server_decodes)
{
    cJSON *j = load("pod.json");
    void *typed = NULL;
    ck_assert_msg(NS_KUBE_DECODE_POD.decode(j, "Pod shop/web", NULL, &typed) == 0, "%s", ns_error_message());
    ns_pod *pod = typed;
    ck_assert_str_eq(pod->meta.name, "web-5d8f7c9b4-x2x7q");
    ck_assert_str_eq(pod->meta.namespace_, "shop");
    ck_assert_str_eq(pod->meta.owner_kind, "ReplicaSet");
    ck_assert_str_eq(pod->node_name, "node-a");
    ck_assert_str_eq(pod->phase, "Running");
    ck_assert_uint_eq(pod->n_containers, 1);
    ck_assert_uint_eq(pod->n_tolerations, 2);
    ck_assert_int_eq(pod->termination_grace_period_s, 30);
    NS_KUBE_DECODE_POD.free(pod);
    cJSON_Delete(j);
}
END_TEST

START_TEST(node_from_api_server_decodes)
{
    cJSON *j = load("node.json");
    void *typed = NULL;
    ck_assert_msg(NS_KUBE_DECODE_NODE.decode(j, "Node node-a", NULL, &typed) == 0, "%s", ns_error_message());
    ns_node *node = typed;
    ck_assert_str_eq(node->provider_id, "aws:///eu-west-1a/i-0123456789abcdef0");
    ck_assert_uint_eq(node->n_taints, 1);
    ck_assert(node->ready);
    ck_assert_uint_eq(node->meta.n_finalizers, 1);
    NS_KUBE_DECODE_NODE.free(node);
    cJSON_Delete(j);
}
END_TEST

static void expect_error(const char *file, const ns_kube_decoder *dec, const char *path, const char *value_json,
                         const char *needle)
{
    cJSON *j = load(file);
    /* path: "spec.containers.0.resources.requests.cpu"-like dotted walk; the last segment is set to value */
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", path);
    cJSON *at = j;
    char *save = NULL, *seg = strtok_r(buf, ".", &save), *next;
    for (; (next = strtok_r(NULL, ".", &save)); seg = next)
        at = cJSON_IsArray(at) ? cJSON_GetArrayItem(at, atoi(seg)) : cJSON_GetObjectItemCaseSensitive(at, seg);
    ck_assert_ptr_nonnull(at);
    cJSON_DeleteItemFromObjectCaseSensitive(at, seg);
    cJSON_AddItemToObject(at, seg, cJSON_Parse(value_json));
    void *typed = NULL;
    ck_assert_int_eq(dec->decode(j, "x", NULL, &typed), NS_ERR_INVALID_CONFIG);
    ck_assert_ptr_null(typed);
    ck_assert_msg(strstr(ns_error_message(), needle), "\"%s\" lacks \"%s\"", ns_error_message(), needle);
    cJSON_Delete(j);
}

START_TEST(bad_fields_name_object_and_field)
{
    expect_error("pod.json", &NS_KUBE_DECODE_POD, "spec.containers.0.resources.requests.cpu", "\"lots\"",
                 "API server: Pod shop/web-5d8f7c9b4-x2x7q: spec.containers[0].resources.requests.cpu");
    expect_error("pod.json", &NS_KUBE_DECODE_POD, "spec.bogusField", "1",
                 "API server: Pod shop/web-5d8f7c9b4-x2x7q: unknown field \"spec.bogusField\"");
    expect_error("pod.json", &NS_KUBE_DECODE_POD, "spec.terminationGracePeriodSeconds", "\"thirty\"",
                 "spec.terminationGracePeriodSeconds: expected an integer");
    expect_error("node.json", &NS_KUBE_DECODE_NODE, "spec.taints.0.effect", "\"Sometimes\"",
                 "API server: Node node-a: spec.taints[0]: effect \"Sometimes\"");
}
END_TEST

START_TEST(nodeclass_decoded_with_the_providers_kinds)
{
    ns_nodeclass_kinds *kinds = ns_nodeclass_kinds_new();
    ns_nodeclass_kind decl = {sizeof(decl), "example.cloud.io", "v1", "ExampleNodeClass", 0};
    ck_assert_int_eq(ns_nodeclass_kinds_add(kinds, "example", &decl, NULL, NULL), 0);
    cJSON *j = cJSON_Parse("{\"apiVersion\":\"example.cloud.io/v1\",\"kind\":\"ExampleNodeClass\","
                           "\"metadata\":{\"name\":\"default\",\"resourceVersion\":\"7\"},"
                           "\"spec\":{\"image\":\"img-1\"},\"status\":{\"conditions\":[]}}");
    void *typed = NULL;
    ck_assert_msg(NS_KUBE_DECODE_NODECLASS.decode(j, "ExampleNodeClass default", kinds, &typed) == 0, "%s",
                  ns_error_message());
    ns_nodeclass_def *def = typed;
    ck_assert_str_eq(def->kind, "ExampleNodeClass");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(def->spec, "image")->valuestring, "img-1");
    NS_KUBE_DECODE_NODECLASS.free(def);
    /* a kind no loaded provider declares does not decode */
    ck_assert_int_eq(NS_KUBE_DECODE_NODECLASS.decode(j, "ExampleNodeClass default", NULL, &typed),
                     NS_ERR_INVALID_CONFIG);
    cJSON_Delete(j);
    ns_nodeclass_kinds_free(kinds);
}
END_TEST

/* Everything a scheduler or the engine reads, equal in a decoded pod and its packed form. */
static void assert_same_pod(const ns_pod *a, const ns_pod *b)
{
    ck_assert_str_eq(a->meta.name, b->meta.name);
    ck_assert_str_eq(a->meta.namespace_, b->meta.namespace_);
    ck_assert_pstr_eq(a->meta.owner_kind, b->meta.owner_kind);
    ck_assert_pstr_eq(a->meta.owner_name, b->meta.owner_name);
    ck_assert_int_eq(a->meta.creation_ms, b->meta.creation_ms);
    ck_assert_int_eq(a->meta.deletion_ms, b->meta.deletion_ms);
    ck_assert_uint_eq(a->meta.labels.n, b->meta.labels.n);
    for (size_t i = 0; i < a->meta.labels.n; i++) {
        ck_assert_str_eq(a->meta.labels.items[i].key, b->meta.labels.items[i].key);
        ck_assert_str_eq(a->meta.labels.items[i].value, b->meta.labels.items[i].value);
    }
    ck_assert_uint_eq(a->meta.annotations.n, b->meta.annotations.n);
    for (size_t i = 0; i < a->meta.annotations.n; i++)
        ck_assert_str_eq(a->meta.annotations.items[i].value, b->meta.annotations.items[i].value);
    ck_assert_uint_eq(a->meta.n_finalizers, b->meta.n_finalizers);
    for (size_t i = 0; i < a->meta.n_finalizers; i++)
        ck_assert_str_eq(a->meta.finalizers[i], b->meta.finalizers[i]);
    ck_assert_uint_eq(a->n_containers, b->n_containers);
    ck_assert_uint_eq(a->n_init_containers, b->n_init_containers);
    for (size_t i = 0; i < a->n_containers; i++) {
        ck_assert_str_eq(a->containers[i].name, b->containers[i].name);
        ck_assert(ns_res_equal(&a->containers[i].requests, &b->containers[i].requests));
        ck_assert(ns_res_equal(&a->containers[i].limits, &b->containers[i].limits));
    }
    for (size_t i = 0; i < a->n_init_containers; i++)
        ck_assert_int_eq(a->init_containers[i].sidecar, b->init_containers[i].sidecar);
    ck_assert(ns_res_equal(&a->requests, &b->requests));
    ck_assert(ns_res_equal(&a->limits, &b->limits));
    ck_assert_uint_eq(a->node_selector.n, b->node_selector.n);
    for (size_t i = 0; i < a->node_selector.n; i++)
        ck_assert_str_eq(a->node_selector.items[i].value, b->node_selector.items[i].value);
    ck_assert_uint_eq(a->n_tolerations, b->n_tolerations);
    for (size_t i = 0; i < a->n_tolerations; i++) {
        ck_assert_pstr_eq(a->tolerations[i].key, b->tolerations[i].key);
        ck_assert_pstr_eq(a->tolerations[i].value, b->tolerations[i].value);
        ck_assert_pstr_eq(a->tolerations[i].effect, b->tolerations[i].effect);
        ck_assert_int_eq(a->tolerations[i].exists, b->tolerations[i].exists);
        ck_assert_int_eq(a->tolerations[i].toleration_seconds, b->tolerations[i].toleration_seconds);
    }
    ck_assert_uint_eq(a->affinity.n_node_required, b->affinity.n_node_required);
    ck_assert_uint_eq(a->affinity.n_anti_required, b->affinity.n_anti_required);
    ck_assert_uint_eq(a->n_spread, b->n_spread);
    ck_assert_uint_eq(a->n_host_ports, b->n_host_ports);
    ck_assert_int_eq(a->spec_resources != NULL, b->spec_resources != NULL);
    ck_assert_pstr_eq(a->node_name, b->node_name);
    ck_assert_pstr_eq(a->phase, b->phase);
    ck_assert_pstr_eq(a->scheduler_name, b->scheduler_name);
    ck_assert_pstr_eq(a->preemption_policy, b->preemption_policy);
    ck_assert_pstr_eq(a->priority_class_name, b->priority_class_name);
    ck_assert_int_eq(a->priority, b->priority);
    ck_assert_int_eq(a->termination_grace_period_s, b->termination_grace_period_s);
    ck_assert_int_eq(a->do_not_disrupt_ms, b->do_not_disrupt_ms);
    ck_assert_int_eq(a->start_ms, b->start_ms);
}

static const char *const rich_pod =
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"rich\",\"namespace\":\"shop\","
    "\"labels\":{\"app\":\"rich\"},\"annotations\":{\"karpenter.sh/do-not-disrupt\":\"true\",\"note\":\"x\"},"
    "\"finalizers\":[\"example.com/keep\"],\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\","
    "\"name\":\"db\",\"uid\":\"u\",\"controller\":true}]},"
    "\"spec\":{\"nodeName\":\"node-b\",\"priority\":1000,\"overhead\":{\"cpu\":\"50m\"},"
    "\"resources\":{\"requests\":{\"cpu\":\"2\"}},"
    "\"initContainers\":[{\"name\":\"side\",\"restartPolicy\":\"Always\",\"resources\":{\"requests\":"
    "{\"memory\":\"64Mi\",\"nvidia.com/gpu\":\"1\"},\"limits\":{\"nvidia.com/gpu\":\"1\"}}}],"
    "\"containers\":[{\"name\":\"a\",\"resources\":{\"requests\":{\"cpu\":\"500m\",\"memory\":\"1Gi\"}}},"
    "{\"name\":\"b\",\"ports\":[{\"containerPort\":80,\"hostPort\":8080}]}],"
    "\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":"
    "[{\"matchExpressions\":[{\"key\":\"topology.kubernetes.io/zone\",\"operator\":\"In\",\"values\":[\"a\"]}]}]}},"
    "\"podAntiAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":[{\"topologyKey\":"
    "\"kubernetes.io/hostname\",\"labelSelector\":{\"matchLabels\":{\"app\":\"rich\"}}}]}},"
    "\"topologySpreadConstraints\":[{\"maxSkew\":1,\"topologyKey\":\"topology.kubernetes.io/zone\","
    "\"whenUnsatisfiable\":\"DoNotSchedule\",\"labelSelector\":{\"matchLabels\":{\"app\":\"rich\"}}}],"
    "\"tolerations\":[{\"key\":\"gpu\",\"operator\":\"Equal\",\"value\":\"yes\",\"effect\":\"NoSchedule\"}]},"
    "\"status\":{\"phase\":\"Pending\"}}";

START_TEST(packed_pods_read_as_decoded_ones)
{
    const char *texts[] = {NULL, rich_pod};
    for (size_t t = 0; t < 2; t++) {
        cJSON *j = t == 0 ? load("pod.json") : cJSON_Parse(texts[t]);
        ck_assert_ptr_nonnull(j);
        void *plain = NULL, *packed = NULL;
        ck_assert_msg(NS_KUBE_DECODE_POD.decode(j, "Pod", NULL, &plain) == 0, "%s", ns_error_message());
        ck_assert_msg(NS_KUBE_DECODE_POD_PACKED.decode(j, "Pod", NULL, &packed) == 0, "%s", ns_error_message());
        const ns_pod *a = plain, *b = packed;
        ck_assert(!a->packed);
        ck_assert(b->packed);
        assert_same_pod(a, b);
        /* names from bounded sets are the interned copies, shared by every pod */
        ck_assert_ptr_eq(b->meta.namespace_, ns_intern("shop"));
        ck_assert_ptr_eq(b->tolerations[0].key, ns_intern(a->tolerations[0].key));
        const char *ns, *name, *node;
        NS_KUBE_DECODE_POD_PACKED.names(b, &ns, &name, &node);
        ck_assert_ptr_eq(name, b->meta.name);
        ck_assert_ptr_eq(node, b->node_name);
        /* a copy of a packed pod is an ordinary one: it can be changed and freed member by member */
        ns_pod *copy = ns_pod_copy(b);
        ck_assert_ptr_nonnull(copy);
        ck_assert(!copy->packed);
        assert_same_pod(a, copy);
        ck_assert_int_eq(ns_labels_set(&copy->meta.labels, "more", "1"), 0);
        ck_assert_int_eq(ns_pod_compute_requests(copy), 0);
        ck_assert(ns_res_equal(&copy->requests, &a->requests));
        if (t == 1) {
            /* max(init: sidecar 64Mi + gpu, containers 500m + 1Gi + sidecar) with pod-level cpu 2, + 50m overhead */
            ck_assert_int_eq(b->requests.cpu_milli, 2050);
            ck_assert_int_eq(ns_res_get(&b->requests, "nvidia.com/gpu"), 1);
            ck_assert_int_eq(b->do_not_disrupt_ms, NS_DO_NOT_DISRUPT_ALWAYS);
            ck_assert_uint_eq(b->n_host_ports, 1);
        }
        ns_pod_free(copy);
        NS_KUBE_DECODE_POD.free(plain);
        NS_KUBE_DECODE_POD_PACKED.free(packed);
        cJSON_Delete(j);
    }
}
END_TEST

typedef struct seen {
    int n;
    const char *names[8];
} seen;

static bool collect(void *ud, const ns_kube_obj *o)
{
    seen *s = ud;
    if (s->n < 8)
        s->names[s->n] = o->name;
    s->n++;
    return true;
}

/* The cache's tables (entries chained through themselves): replace, take, indexes, relist, many entries. */
START_TEST(store_indexes_follow_replacements_and_relists)
{
    ns_kube_store *s = ns_kube_store_new(NULL);
    ck_assert_ptr_nonnull(s);
    char name[32], node[32];
    for (int i = 0; i < 1000; i++) {
        snprintf(name, sizeof(name), "p-%d", i);
        snprintf(node, sizeof(node), "node-%d", i % 10);
        ck_assert_int_eq(ns_kube_store_put(s, ns_kube_obj_new(i % 2 ? "odd" : "even", name, "u", "1", node, NULL,
                                                              NULL), NULL), 0);
    }
    ck_assert_uint_eq(ns_kube_store_len(s), 1000);
    seen v = {0};
    ck_assert_uint_eq(ns_kube_store_each(s, NS_KUBE_BY_NODE_NAME, "node-3", collect, &v), 100);
    v = (seen){0};
    ck_assert_uint_eq(ns_kube_store_each(s, NS_KUBE_BY_NAMESPACE, "odd", collect, &v), 500);
    /* p-3 moves from node-3 to node-x: the old entry leaves every index */
    ns_kube_obj *old = NULL;
    ck_assert_int_eq(ns_kube_store_put(s, ns_kube_obj_new("odd", "p-3", "u", "2", "node-x", "aws:///i-1", NULL), &old),
                     0);
    ck_assert_ptr_nonnull(old);
    ck_assert_str_eq(old->resource_version, "1");
    ns_kube_obj_free(s, old);
    ck_assert_uint_eq(ns_kube_store_len(s), 1000);
    v = (seen){0};
    ck_assert_uint_eq(ns_kube_store_each(s, NS_KUBE_BY_NODE_NAME, "node-3", collect, &v), 99);
    v = (seen){0};
    ck_assert_uint_eq(ns_kube_store_each(s, NS_KUBE_BY_NODE_NAME, "node-x", collect, &v), 1);
    ck_assert_str_eq(v.names[0], "p-3");
    v = (seen){0};
    ck_assert_uint_eq(ns_kube_store_each(s, NS_KUBE_BY_PROVIDER_ID, "aws:///i-1", collect, &v), 1);
    ck_assert_str_eq(ns_kube_store_get(s, "odd", "p-3")->resource_version, "2");
    ck_assert_ptr_null(ns_kube_store_get(s, "even", "p-3"));
    /* a relist that sees only the even pods takes the odd ones out */
    ns_kube_store_begin_relist(s);
    for (int i = 0; i < 1000; i += 2) {
        snprintf(name, sizeof(name), "p-%d", i);
        ns_kube_store_mark_seen(s, (ns_kube_obj *)ns_kube_store_get(s, "even", name));
    }
    int taken = 0;
    for (ns_kube_obj *o; (o = ns_kube_store_take_unseen(s)) != NULL; taken++) {
        ck_assert_str_eq(o->namespace_, "odd");
        ns_kube_obj_free(s, o);
    }
    ck_assert_int_eq(taken, 500);
    ck_assert_uint_eq(ns_kube_store_len(s), 500);
    v = (seen){0};
    ck_assert_uint_eq(ns_kube_store_each(s, NS_KUBE_BY_NAMESPACE, "odd", collect, &v), 0);
    v = (seen){0};
    ck_assert_uint_eq(ns_kube_store_each(s, NS_KUBE_BY_NODE_NAME, "node-4", collect, &v), 100);
    ns_kube_obj *t = ns_kube_store_take(s, "even", "p-4");
    ck_assert_ptr_nonnull(t);
    ns_kube_obj_free(s, t);
    v = (seen){0};
    ck_assert_uint_eq(ns_kube_store_each(s, NS_KUBE_BY_NODE_NAME, "node-4", collect, &v), 99);
    v = (seen){0};
    ck_assert_uint_eq(ns_kube_store_each(s, NS_KUBE_N_INDEXES, NULL, collect, &v), 499);
    ns_kube_store_free(s);
}
END_TEST

static void *decode_text(const ns_kube_decoder *dec, const char *text)
{
    cJSON *j = cJSON_Parse(text);
    ck_assert_ptr_nonnull(j);
    void *typed = NULL;
    ck_assert_msg(dec->decode(j, "object", NULL, &typed) == 0, "%s", ns_error_message());
    cJSON_Delete(j);
    return typed;
}

static void expect_kind_error(const ns_kube_decoder *dec, const char *text, const char *want)
{
    cJSON *j = cJSON_Parse(text);
    void *typed = NULL;
    ck_assert_int_eq(dec->decode(j, "object", NULL, &typed), NS_ERR_INVALID_CONFIG);
    ck_assert_ptr_null(typed);
    ck_assert_msg(strstr(ns_error_message(), want), "got: %s", ns_error_message());
    cJSON_Delete(j);
}

/* StorageClasses, PVs, PVCs, Leases and workload owners as the API server returns them. */
START_TEST(storage_leases_and_workloads_decode)
{
    ns_storage_class *sc = decode_text(&NS_KUBE_DECODE_STORAGECLASS,
        "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"StorageClass\",\"metadata\":{\"name\":\"gp3\","
        "\"annotations\":{\"storageclass.kubernetes.io/is-default-class\":\"true\"}},\"provisioner\":\"ebs.csi.aws.com\","
        "\"parameters\":{\"type\":\"gp3\"},\"reclaimPolicy\":\"Delete\",\"volumeBindingMode\":\"WaitForFirstConsumer\","
        "\"allowVolumeExpansion\":true,\"allowedTopologies\":[{\"matchLabelExpressions\":[{\"key\":"
        "\"topology.ebs.csi.aws.com/zone\",\"values\":[\"us-west-2a\",\"us-west-2b\"]}]}]}");
    ck_assert(sc->wait_for_first_consumer);
    ck_assert(sc->is_default);
    ck_assert_uint_eq(sc->n_allowed_topologies, 1);
    ck_assert_int_eq(sc->allowed_topologies[0].exprs[0].op, NS_OP_IN);
    ck_assert_uint_eq(sc->allowed_topologies[0].exprs[0].n_values, 2);
    NS_KUBE_DECODE_STORAGECLASS.free(sc);

    ns_pv *pv = decode_text(&NS_KUBE_DECODE_PV,
        "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\",\"metadata\":{\"name\":\"pv-1\"},"
        "\"spec\":{\"capacity\":{\"storage\":\"20Gi\"},\"accessModes\":[\"ReadWriteOnce\"],"
        "\"storageClassName\":\"gp3\",\"csi\":{\"driver\":\"ebs.csi.aws.com\",\"volumeHandle\":\"vol-1\"},"
        "\"claimRef\":{\"kind\":\"PersistentVolumeClaim\",\"namespace\":\"shop\",\"name\":\"data-db-0\"},"
        "\"nodeAffinity\":{\"required\":{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":"
        "\"topology.ebs.csi.aws.com/zone\",\"operator\":\"In\",\"values\":[\"us-west-2a\"]}]}]}}},"
        "\"status\":{\"phase\":\"Bound\"}}");
    ck_assert_int_eq(pv->capacity_bytes, 20LL << 30);
    ck_assert_str_eq(pv->csi_driver, "ebs.csi.aws.com");
    ck_assert_str_eq(pv->claim_name, "data-db-0");
    ck_assert_str_eq(pv->node_affinity[0].exprs[0].values[0], "us-west-2a");
    ck_assert_str_eq(pv->phase, "Bound");
    NS_KUBE_DECODE_PV.free(pv);

    ns_pvc *pvc = decode_text(&NS_KUBE_DECODE_PVC,
        "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\",\"metadata\":{\"name\":\"data-db-0\","
        "\"namespace\":\"shop\"},\"spec\":{\"accessModes\":[\"ReadWriteOnce\"],\"resources\":{\"requests\":"
        "{\"storage\":\"20Gi\"}},\"storageClassName\":\"gp3\",\"volumeName\":\"pv-1\"},\"status\":{\"phase\":\"Bound\"}}");
    ck_assert_int_eq(pvc->request_bytes, 20LL << 30);
    ck_assert_str_eq(pvc->volume_name, "pv-1");
    NS_KUBE_DECODE_PVC.free(pvc);

    /* a VolumeAttachment as the attach-detach controller writes it (fields newer than nodesmith's list accepted) */
    ns_volume_attachment *va = decode_text(&NS_KUBE_DECODE_VOLUMEATTACHMENT,
        "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"VolumeAttachment\",\"metadata\":{\"name\":"
        "\"csi-0b1c\"},\"spec\":{\"attacher\":\"ebs.csi.aws.com\",\"nodeName\":\"ip-10-0-1-5\",\"source\":"
        "{\"persistentVolumeName\":\"pv-1\"}},\"status\":{\"attached\":true,\"attachmentMetadata\":"
        "{\"devicePath\":\"/dev/xvdaa\"},\"futureField\":1}}");
    ck_assert_str_eq(va->node_name, "ip-10-0-1-5");
    ck_assert_str_eq(va->pv_name, "pv-1");
    ck_assert_str_eq(va->attacher, "ebs.csi.aws.com");
    ck_assert(va->attached);
    NS_KUBE_DECODE_VOLUMEATTACHMENT.free(va);

    ns_lease *l = decode_text(&NS_KUBE_DECODE_LEASE,
        "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\",\"metadata\":{\"name\":"
        "\"karpenter-leader-election\",\"namespace\":\"kube-system\"},\"spec\":{\"holderIdentity\":\"a_1\","
        "\"leaseDurationSeconds\":15,\"acquireTime\":\"2026-11-23T19:00:00.000000Z\","
        "\"renewTime\":\"2026-11-23T19:00:10.500000Z\",\"leaseTransitions\":3}}");
    ck_assert_str_eq(l->holder, "a_1");
    ck_assert_int_eq(l->renew_ms - l->acquire_ms, 10500);
    ck_assert_int_eq(l->transitions, 3);
    NS_KUBE_DECODE_LEASE.free(l);

    ns_workload *w = decode_text(&NS_KUBE_DECODE_REPLICASET,
        "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"web-5d8f7c9b4\","
        "\"namespace\":\"shop\",\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\","
        "\"name\":\"web\",\"uid\":\"u\",\"controller\":true}]},\"spec\":{\"replicas\":3,\"selector\":"
        "{\"matchLabels\":{\"app\":\"web\"}},\"template\":{\"metadata\":{\"labels\":{\"app\":\"web\"}},"
        "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"nginx\"}]}}},"
        "\"status\":{\"replicas\":3,\"readyReplicas\":2,\"availableReplicas\":2,\"observedGeneration\":4}}");
    ck_assert_str_eq(w->kind, "ReplicaSet");
    ck_assert_int_eq(w->replicas, 3);
    ck_assert_int_eq(w->ready_replicas, 2);
    ck_assert_int_eq(w->observed_generation, 4);
    ck_assert_str_eq(w->meta.owner_kind, "Deployment");
    ck_assert_str_eq(w->meta.owner_name, "web");
    NS_KUBE_DECODE_REPLICASET.free(w);

    /* bad fields name the object and the field */
    expect_kind_error(&NS_KUBE_DECODE_LEASE,
        "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\",\"metadata\":{\"name\":\"l\","
        "\"namespace\":\"n\"},\"spec\":{\"leaseDurationSeconds\":\"long\"}}",
        "API server: Lease n/l: spec.leaseDurationSeconds");
    expect_kind_error(&NS_KUBE_DECODE_VOLUMEATTACHMENT,
        "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"VolumeAttachment\",\"metadata\":{\"name\":\"va\"},"
        "\"spec\":{\"attacher\":\"d\",\"nodeName\":\"n\",\"source\":{}}}",
        "API server: VolumeAttachment va: spec.source: must specify exactly one of inlineVolumeSpec and persistentVolumeName");
    expect_kind_error(&NS_KUBE_DECODE_PVC,
        "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\",\"metadata\":{\"name\":\"c\","
        "\"namespace\":\"n\"},\"spec\":{\"resources\":{\"requests\":{\"storage\":\"lots\"}}}}",
        "spec.resources.requests.storage");
    expect_kind_error(&NS_KUBE_DECODE_STATEFULSET,
        "{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"metadata\":{\"name\":\"db\","
        "\"namespace\":\"n\"},\"spec\":{\"volumeClaimTemplates\":[{\"spec\":{}}]}}",
        "spec.volumeClaimTemplates[0]");
    expect_kind_error(&NS_KUBE_DECODE_STORAGECLASS,
        "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"StorageClass\",\"metadata\":{\"name\":\"x\"}}",
        "provisioner");
}
END_TEST

START_TEST(decoders_by_resource)
{
    ck_assert_ptr_eq(ns_kube_decoder_for(&NS_KUBE_PODS), &NS_KUBE_DECODE_POD_PACKED);
    ck_assert_ptr_eq(ns_kube_decoder_for(&NS_KUBE_NODECLAIMS), &NS_KUBE_DECODE_NODECLAIM);
    ck_assert_ptr_eq(ns_kube_decoder_for(&NS_KUBE_LEASES), &NS_KUBE_DECODE_LEASE);
    ck_assert_ptr_eq(ns_kube_decoder_for(&NS_KUBE_STATEFULSETS), &NS_KUBE_DECODE_STATEFULSET);
    ck_assert_ptr_null(ns_kube_decoder_for(&NS_KUBE_EVENTS));
    char buf[256];
    ns_kube_resource r;
    ck_assert_int_eq(ns_kube_resource_nodeclass("karpenter.k8s.aws", "v1", "EC2NodeClass", buf, sizeof(buf), &r), 0);
    ck_assert_str_eq(r.resource, "ec2nodeclasses");
    ck_assert_ptr_null(ns_kube_decoder_for(&r));
    ck_assert_int_eq(ns_kube_resource_nodeclass("x.io", "v1", "Policy", buf, sizeof(buf), &r), 0);
    ck_assert_str_eq(r.resource, "policies");
    char path[256];
    ck_assert_int_eq(ns_kube_path(path, sizeof(path), &NS_KUBE_PODS, "a b", "n/1", "eviction", NULL), 0);
    ck_assert_str_eq(path, "/api/v1/namespaces/a%20b/pods/n%2F1/eviction");
    ck_assert_int_eq(ns_kube_path(path, sizeof(path), &NS_KUBE_NODECLAIMS, "ignored", NULL, NULL, "limit=5"), 0);
    ck_assert_str_eq(path, "/apis/karpenter.sh/v1/nodeclaims?limit=5");
}
END_TEST

/* A CapacityBuffer and a PodTemplate (a Deployment, for a scalableRef) as the API server returns them (server-set
 * metadata, status, a defaulted pod spec) through the manifests' decoders: the same fields, and the same refusals
 * naming the field. */
START_TEST(buffers_and_templates_from_api_server)
{
    ns_buffer *b = decode_text(&NS_KUBE_DECODE_CAPACITYBUFFER,
        "{\"apiVersion\":\"autoscaling.x-k8s.io/v1beta1\",\"kind\":\"CapacityBuffer\",\"metadata\":{\"name\":\"warm\","
        "\"namespace\":\"web\",\"uid\":\"u1\",\"resourceVersion\":\"42\",\"generation\":2,\"managedFields\":[]},"
        "\"spec\":{\"provisioningStrategy\":\"buffer.x-k8s.io/active-capacity\",\"podTemplateRef\":{\"name\":\"chunk\"},"
        "\"replicas\":5,\"limits\":{\"cpu\":\"4\"}},\"status\":{\"replicas\":4,\"conditions\":[{\"type\":"
        "\"ReadyForProvisioning\",\"status\":\"True\",\"reason\":\"Resolved\",\"message\":\"\","
        "\"lastTransitionTime\":\"2026-11-28T20:00:00Z\"}]}}");
    ck_assert_str_eq(b->meta.namespace_, "web");
    ck_assert_str_eq(b->meta.name, "warm");
    ck_assert_int_eq(b->meta.generation, 2); /* the conditions' observedGeneration */
    ck_assert_str_eq(b->pod_template, "chunk");
    ck_assert(b->has_replicas && b->replicas == 5);
    ck_assert(b->has_limits && b->limits_set == NS_BUFFER_LIMIT_CPU && b->limits.cpu_milli == 4000);
    ns_pod_template *t = decode_text(&NS_KUBE_DECODE_PODTEMPLATE,
        "{\"apiVersion\":\"v1\",\"kind\":\"PodTemplate\",\"metadata\":{\"name\":\"chunk\",\"namespace\":\"web\","
        "\"uid\":\"u2\",\"resourceVersion\":\"7\",\"generation\":3},\"template\":{\"metadata\":{\"labels\":{\"app\":\"chunk\"}},"
        "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"pause\",\"resources\":{\"requests\":{\"cpu\":\"1\","
        "\"memory\":\"1Gi\"}},\"terminationMessagePath\":\"/dev/termination-log\",\"terminationMessagePolicy\":"
        "\"File\",\"imagePullPolicy\":\"IfNotPresent\"}],\"restartPolicy\":\"Always\",\"terminationGracePeriodSeconds\":"
        "30,\"dnsPolicy\":\"ClusterFirst\",\"securityContext\":{},\"schedulerName\":\"default-scheduler\"}}}");
    ck_assert_str_eq(t->meta.name, "chunk");
    ck_assert_int_eq(t->meta.generation, 3); /* status.podTemplateGeneration */
    ck_assert_int_eq(t->pod->requests.cpu_milli, 1000);
    ck_assert_int_eq(t->pod->requests.memory_bytes, 1024LL * 1024 * 1024);
    ck_assert_str_eq(ns_labels_get(&t->pod->meta.labels, "app"), "chunk");
    ck_assert_int_eq(ns_buffer_chunks(b, t->pod, 0), 4); /* replicas 5, limits.cpu 4 over 1 cpu each */
    ns_pod_template_free(t);
    ns_buffer_free(b);
    /* a scalableRef: the Deployment's template is the chunk, a percentage of its replicas the count */
    b = decode_text(&NS_KUBE_DECODE_CAPACITYBUFFER,
        "{\"apiVersion\":\"autoscaling.x-k8s.io/v1beta1\",\"kind\":\"CapacityBuffer\",\"metadata\":{\"name\":\"s\","
        "\"namespace\":\"web\"},\"spec\":{\"provisioningStrategy\":\"buffer.x-k8s.io/active-capacity\","
        "\"scalableRef\":{\"apiGroup\":\"apps\",\"kind\":\"Deployment\",\"name\":\"d\"},\"percentage\":30}}");
    ck_assert_ptr_null(b->pod_template);
    ck_assert_str_eq(b->scalable_kind, "Deployment");
    ck_assert_str_eq(b->scalable_name, "d");
    ck_assert(b->has_percentage && b->percentage == 30 && !b->has_replicas);
    ns_workload *d = decode_text(&NS_KUBE_DECODE_DEPLOYMENT,
        "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"d\",\"namespace\":\"web\","
        "\"generation\":1},\"spec\":{\"replicas\":5,\"selector\":{\"matchLabels\":{\"app\":\"d\"}},\"template\":"
        "{\"metadata\":{\"creationTimestamp\":null,\"labels\":{\"app\":\"d\"}},\"spec\":{\"containers\":[{\"name\":"
        "\"c\",\"image\":\"pause\",\"resources\":{\"requests\":{\"cpu\":\"2\"}},\"terminationMessagePath\":"
        "\"/dev/termination-log\",\"terminationMessagePolicy\":\"File\",\"imagePullPolicy\":\"IfNotPresent\"}],"
        "\"restartPolicy\":\"Always\",\"dnsPolicy\":\"ClusterFirst\",\"schedulerName\":\"default-scheduler\"}},"
        "\"strategy\":{\"type\":\"RollingUpdate\"}},\"status\":{\"replicas\":5}}");
    ck_assert_str_eq(d->kind, "Deployment");
    ck_assert_int_eq(d->replicas, 5);
    ck_assert_ptr_nonnull(d->template_pod);
    ck_assert_int_eq(d->template_pod->requests.cpu_milli, 2000);
    ck_assert_ptr_null(d->template_pod->meta.owner_kind);
    ck_assert_int_eq(ns_buffer_chunks(b, d->template_pod, d->replicas), 2); /* ceil(30% of 5) */
    NS_KUBE_DECODE_DEPLOYMENT.free(d);
    ns_buffer_free(b);
    expect_kind_error(&NS_KUBE_DECODE_DEPLOYMENT,
        "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"d\",\"namespace\":\"web\"},"
        "\"spec\":{\"selector\":{},\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\","
        "\"resources\":{\"requests\":{\"cpu\":\"lots\"}}}]}}}}",
        "API server: Deployment web/d: spec.template.spec.containers[0].resources.requests.cpu");
    /* a kind Karpenter does not resolve: decoded, with its resolver's error for the ResolutionFailed status */
    b = decode_text(&NS_KUBE_DECODE_CAPACITYBUFFER,
        "{\"apiVersion\":\"autoscaling.x-k8s.io/v1beta1\",\"kind\":\"CapacityBuffer\",\"metadata\":{\"name\":\"s\","
        "\"namespace\":\"web\"},\"spec\":{\"scalableRef\":{\"apiGroup\":\"apps\",\"kind\":\"DaemonSet\",\"name\":"
        "\"d\"},\"replicas\":1}}");
    ck_assert_ptr_null(b->scalable_kind);
    ck_assert_str_eq(b->resolution_failed, "unsupported kind \"DaemonSet\"");
    ns_buffer_free(b);
    expect_kind_error(&NS_KUBE_DECODE_CAPACITYBUFFER,
        "{\"apiVersion\":\"autoscaling.x-k8s.io/v1beta1\",\"kind\":\"CapacityBuffer\",\"metadata\":{\"name\":\"n\","
        "\"namespace\":\"web\"},\"spec\":{\"podTemplateRef\":{\"name\":\"chunk\"},\"replicas\":-1}}", "spec.replicas");
    ck_assert_ptr_eq(ns_kube_decoder_for(&NS_KUBE_CAPACITYBUFFERS), &NS_KUBE_DECODE_CAPACITYBUFFER);
    ck_assert_ptr_eq(ns_kube_decoder_for(&NS_KUBE_PODTEMPLATES), &NS_KUBE_DECODE_PODTEMPLATE);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kube-decode");
    TCase *t = tcase_create("decode");
    tcase_add_test(t, pod_from_api_server_decodes);
    tcase_add_test(t, node_from_api_server_decodes);
    tcase_add_test(t, bad_fields_name_object_and_field);
    tcase_add_test(t, nodeclass_decoded_with_the_providers_kinds);
    tcase_add_test(t, decoders_by_resource);
    tcase_add_test(t, buffers_and_templates_from_api_server);
    tcase_add_test(t, storage_leases_and_workloads_decode);
    tcase_add_test(t, packed_pods_read_as_decoded_ones);
    tcase_add_test(t, store_indexes_follow_replacements_and_relists);
    suite_add_tcase(s, t);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
