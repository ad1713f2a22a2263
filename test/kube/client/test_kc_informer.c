/* Informers against the real API server: a paginated list then a watch, the cache and its indexes (namespace,
 * spec.nodeName, providerID), typed pods, a watch dropped mid-stream (resumed from the last resourceVersion, no
 * relist), a 410 after an etcd compaction (relist) on configmaps and on pods (no change lost while the server was out
 * of reach), bookmarks, and an object that does not decode (skipped, the rest cached). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errors/ns_error.h"
#include "kc_util.h"
#include "kube/kube_decode.h"
#include "kube/kube_informer.h"
#include "kube/kube_writes.h"
#include "kube_bed.h"
#include "model/lease.h"
#include "model/nodepool.h"
#include "model/pod.h"
#include "model/storage.h"
#include "model/workload.h"

static const ns_kube_resource CONFIGMAPS = {"", "v1", "configmaps", "ConfigMap", true};

static void create_pod(ns_kube_client *c, const char *ns, const char *name, const char *node)
{
    char text[1024];
    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"labels\":{\"app\":\"kc\"}},"
             "\"spec\":{\"nodeName\":\"%s\",\"containers\":[{\"name\":\"c\",\"image\":\"nginx\","
             "\"resources\":{\"requests\":{\"cpu\":\"100m\",\"memory\":\"64Mi\"}}}]}}",
             name, node);
    cJSON *pod = kc_json(text);
    ck_assert_msg(ns_kube_create(c, &NS_KUBE_PODS, ns, pod, NULL, NULL) == 0, "%s", ns_error_message());
    cJSON_Delete(pod);
}

static void create_configmap(ns_kube_client *c, const char *ns, const char *name, const char *label)
{
    char text[512];
    snprintf(text, sizeof(text), "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"%s\"%s%s%s}}",
             name, label ? ",\"labels\":{\"" : "", label ? label : "", label ? "\":\"1\"}" : "");
    cJSON *cm = kc_json(text);
    ck_assert_msg(ns_kube_create(c, &CONFIGMAPS, ns, cm, NULL, NULL) == 0, "%s", ns_error_message());
    cJSON_Delete(cm);
}

typedef struct lookup {
    ns_kube_informer *inf;
    const char *ns, *name;
    bool want_present;
} lookup;

static bool cached(void *ud)
{
    lookup *l = ud;
    ns_kube_informer_rdlock(l->inf);
    bool present = ns_kube_store_get(ns_kube_informer_store(l->inf), l->ns, l->name) != NULL;
    ns_kube_informer_unlock(l->inf);
    return present == l->want_present;
}

static bool count_obj(void *ud, const ns_kube_obj *o)
{
    (*(int *)ud)++;
    return true;
}

static ns_kube_informer *informer(ns_kube_client *c, const ns_kube_resource *r, const char *ns, const char *labels,
                                  int page)
{
    ns_kube_informer_options o = {.resource = r, .namespace_ = ns, .label_selector = labels, .page_size = page,
                                  .decoder = ns_kube_decoder_for(r)};
    ns_kube_informer *inf = NULL;
    ck_assert_int_eq(ns_kube_informer_new(c, &o, &inf), 0);
    ck_assert_int_eq(ns_kube_informer_start(inf), 0);
    ck_assert_msg(ns_kube_informer_wait_synced(inf, 30000), "%s", ns_error_message());
    return inf;
}

START_TEST(pods_list_pages_watch_and_indexes)
{
    char ns[64], node[96];
    ns_kube_client *c = kc_admin();
    ck_assert_int_eq(kube_bed_namespace("kc-inf", ns, sizeof(ns)), 0);
    snprintf(node, sizeof(node), "%s-node", ns);
    ck_assert_int_eq(kube_bed_ready_node(node, NULL, NULL), 0);
    for (int i = 0; i < 5; i++) {
        char name[32];
        snprintf(name, sizeof(name), "p%d", i);
        create_pod(c, ns, name, node);
    }
    ns_kube_informer *inf = informer(c, &NS_KUBE_PODS, ns, NULL, 2);
    ns_kube_informer_stats st;
    ns_kube_informer_get_stats(inf, &st);
    ck_assert_uint_eq(st.lists, 1);
    ck_assert_uint_ge(st.pages, 3); /* 5 pods, 2 a page */
    ns_kube_informer_rdlock(inf);
    const ns_kube_store *s = ns_kube_informer_store(inf);
    ck_assert_uint_eq(ns_kube_store_len(s), 5);
    int n = 0;
    ck_assert_uint_eq(ns_kube_store_each(s, NS_KUBE_BY_NODE_NAME, node, count_obj, &n), 5);
    n = 0;
    ck_assert_uint_eq(ns_kube_store_each(s, NS_KUBE_BY_NAMESPACE, ns, count_obj, &n), 5);
    const ns_kube_obj *p0 = ns_kube_store_get(s, ns, "p0");
    ck_assert_ptr_nonnull(p0);
    const ns_pod *pod = p0->typed;
    ck_assert_ptr_nonnull(pod);
    ck_assert_str_eq(pod->node_name, node);
    ck_assert_str_eq(pod->meta.labels.items[0].value, "kc");
    ns_kube_informer_unlock(inf);
    /* the watch: a new pod appears, a deleted one goes */
    create_pod(c, ns, "late", node);
    lookup l = {inf, ns, "late", true};
    ck_assert(kc_wait(cached, &l, 10000));
    ns_kube_delete_opts del = {.grace_period_s = 0};
    ck_assert_int_eq(ns_kube_delete(c, &NS_KUBE_PODS, ns, "p1", &del, NULL), 0);
    l = (lookup){inf, ns, "p1", false};
    ck_assert(kc_wait(cached, &l, 10000));
    ns_kube_informer_get_stats(inf, &st);
    ck_assert_uint_eq(st.lists, 1);
    ck_assert_uint_eq(st.decode_errors, 0);
    /* the same through the command line */
    char cmd[512], line[256], all[4096] = "";
    snprintf(cmd, sizeof(cmd), "%s kube get pods -n %s --kubeconfig %s", NS_TEST_NODESMITH, ns,
             getenv("NS_TEST_KUBECONFIG"));
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    while (fgets(line, sizeof(line), p))
        strncat(all, line, sizeof(all) - strlen(all) - 1);
    ck_assert_int_eq(pclose(p), 0);
    ck_assert_msg(strstr(all, "p0") && strstr(all, "late") && !strstr(all, "p1 "), "%s", all);
    ns_kube_informer_free(inf);
    ns_kube_client_free(c);
}
END_TEST

static ns_kube_client *client_via(const char *server)
{
    char cfg[4096], user[512];
    snprintf(user, sizeof(user), "    token: %s", getenv("NS_TEST_KUBE_TOKEN"));
    kc_kubeconfig(cfg, sizeof(cfg), server, user);
    ns_kube_client *c = NULL;
    ck_assert_msg(kc_from_kubeconfig_text(cfg, NULL, &c) == 0, "%s", ns_error_message());
    return c;
}

START_TEST(dropped_watch_resumes_without_relist)
{
    char ns[64];
    kube_bed_proxy proxy;
    ck_assert_int_eq(kube_bed_proxy_start(&proxy), 0);
    ns_kube_client *direct = kc_admin(), *c = client_via(proxy.url);
    ck_assert_int_eq(kube_bed_namespace("kc-drop", ns, sizeof(ns)), 0);
    create_configmap(direct, ns, "before", NULL);
    ns_kube_informer *inf = informer(c, &CONFIGMAPS, ns, NULL, 0);
    /* the watch is live once an object created after the list arrives through it */
    create_configmap(direct, ns, "probe", NULL);
    lookup l = {inf, ns, "probe", true};
    ck_assert(kc_wait(cached, &l, 15000));
    ck_assert_int_eq(kube_bed_proxy_cut(&proxy), 0);
    usleep(300000);
    create_configmap(direct, ns, "after-cut", NULL);
    l = (lookup){inf, ns, "after-cut", true};
    ck_assert(kc_wait(cached, &l, 15000));
    ns_kube_informer_stats st;
    ns_kube_informer_get_stats(inf, &st);
    ck_assert_uint_eq(st.lists, 1);
    ck_assert_uint_ge(st.watches, 2);
    ck_assert_uint_ge(st.watch_resumes, 1);
    ns_kube_informer_free(inf);
    ns_kube_client_free(c);
    ns_kube_client_free(direct);
    kube_bed_proxy_stop(&proxy);
}
END_TEST

START_TEST(gone_after_compaction_relists)
{
    char ns[64];
    kube_bed_proxy proxy;
    ck_assert_int_eq(kube_bed_proxy_start(&proxy), 0);
    ns_kube_client *direct = kc_admin(), *c = client_via(proxy.url);
    ck_assert_int_eq(kube_bed_namespace("kc-gone", ns, sizeof(ns)), 0);
    create_configmap(direct, ns, "keep-1", "keep");
    /* configmaps are watched from etcd (no watch cache, no bookmarks): the informer's resourceVersion stays where the
     * list left it while other objects move the store on */
    ns_kube_informer *inf = informer(c, &CONFIGMAPS, ns, "keep=1", 0);
    create_configmap(direct, ns, "keep-probe", "keep");
    lookup l = {inf, ns, "keep-probe", true};
    ck_assert(kc_wait(cached, &l, 15000));
    for (int i = 0; i < 3; i++) {
        char name[32];
        snprintf(name, sizeof(name), "other-%d", i);
        create_configmap(direct, ns, name, NULL);
    }
    const char *compact[] = {"compact", NULL};
    ck_assert_int_eq(kube_bed_cmd(NULL, compact), 0);
    ck_assert_int_eq(kube_bed_proxy_cut(&proxy), 0);
    usleep(500000);
    create_configmap(direct, ns, "keep-2", "keep");
    l = (lookup){inf, ns, "keep-2", true};
    ck_assert(kc_wait(cached, &l, 15000));
    ns_kube_informer_stats st;
    ns_kube_informer_get_stats(inf, &st);
    ck_assert_uint_ge(st.relists_gone, 1);
    ck_assert_uint_ge(st.lists, 2);
    ns_kube_informer_rdlock(inf);
    ck_assert_uint_eq(ns_kube_store_len(ns_kube_informer_store(inf)), 3);
    ns_kube_informer_unlock(inf);
    ns_kube_informer_free(inf);
    ns_kube_client_free(c);
    ns_kube_client_free(direct);
    kube_bed_proxy_stop(&proxy);
}
END_TEST

typedef struct tally {
    int added, modified, deleted;
    char deleted_name[64];
} tally;

static void count_event(void *ud, ns_kube_event ev, const ns_kube_obj *o)
{
    tally *t = ud; /* called with the informer's write lock held; read under the read lock */
    if (ev == NS_KUBE_ADDED)
        t->added++;
    else if (ev == NS_KUBE_MODIFIED)
        t->modified++;
    else {
        t->deleted++;
        snprintf(t->deleted_name, sizeof(t->deleted_name), "%s", o->name);
    }
}

typedef struct relisted {
    ns_kube_informer *inf;
    const char *ns;
} relisted;

/* The cache holds exactly keep-0, keep-2 (relabelled) and keep-new, the state the server ended in. */
static bool caught_up(void *ud)
{
    relisted *r = ud;
    ns_kube_informer_rdlock(r->inf);
    const ns_kube_store *s = ns_kube_informer_store(r->inf);
    const ns_kube_obj *p2 = ns_kube_store_get(s, r->ns, "keep-2");
    const ns_pod *pod2 = p2 ? p2->typed : NULL;
    bool ok = ns_kube_store_len(s) == 3 && ns_kube_store_get(s, r->ns, "keep-0") &&
              ns_kube_store_get(s, r->ns, "keep-new") && !ns_kube_store_get(s, r->ns, "keep-1") && pod2 &&
              ns_labels_get(&pod2->meta.labels, "tier") && strcmp(ns_labels_get(&pod2->meta.labels, "tier"), "b") == 0;
    ns_kube_informer_unlock(r->inf);
    return ok;
}

/* Pods, like configmaps, are watched from etcd on the bed (no watch cache): while the server is unreachable a pod is
 * created, one deleted and one changed, etcd is compacted; the informer's resumed watch gets 410, it relists, and
 * the cache and the events it delivered account for every change (nothing lost, nothing stale). */
START_TEST(pods_gone_relist_without_loss)
{
    char ns[64], node[96], name[32];
    kube_bed_proxy proxy;
    ck_assert_int_eq(kube_bed_proxy_start(&proxy), 0);
    ns_kube_client *direct = kc_admin(), *c = client_via(proxy.url);
    ck_assert_int_eq(kube_bed_namespace("kc-podgone", ns, sizeof(ns)), 0);
    snprintf(node, sizeof(node), "%s-node", ns);
    ck_assert_int_eq(kube_bed_ready_node(node, NULL, NULL), 0); /* pods bound to a missing node would be collected */
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof(name), "keep-%d", i);
        create_pod(direct, ns, name, node);
    }
    tally t = {0};
    ns_kube_informer_options o = {.resource = &NS_KUBE_PODS, .namespace_ = ns, .label_selector = "app=kc",
                                  .decoder = ns_kube_decoder_for(&NS_KUBE_PODS), .on_event = count_event, .ud = &t};
    ns_kube_informer *inf = NULL;
    ck_assert_int_eq(ns_kube_informer_new(c, &o, &inf), 0);
    ck_assert_int_eq(ns_kube_informer_start(inf), 0);
    ck_assert_msg(ns_kube_informer_wait_synced(inf, 30000), "%s", ns_error_message());
    create_pod(direct, ns, "probe", node);
    lookup l = {inf, ns, "probe", true};
    ck_assert(kc_wait(cached, &l, 15000));
    ns_kube_delete_opts del = {.grace_period_s = 0};
    ck_assert_int_eq(ns_kube_delete(direct, &NS_KUBE_PODS, ns, "probe", &del, NULL), 0);
    l = (lookup){inf, ns, "probe", false};
    ck_assert(kc_wait(cached, &l, 15000));
    ns_kube_informer_stats before;
    ns_kube_informer_get_stats(inf, &before);
    ck_assert_uint_eq(before.lists, 1);
    /* the server goes out of reach; meanwhile the pods change and etcd forgets the informer's revision */
    ck_assert_int_eq(kube_bed_proxy_hold(&proxy), 0);
    usleep(500000);
    ns_kube_informer_rdlock(inf);
    tally at_hold = t;
    ns_kube_informer_unlock(inf);
    create_pod(direct, ns, "keep-new", node);
    ck_assert_int_eq(ns_kube_delete(direct, &NS_KUBE_PODS, ns, "keep-1", &del, NULL), 0);
    cJSON *patch = kc_json("{\"metadata\":{\"labels\":{\"tier\":\"b\"}}}");
    ck_assert_msg(ns_kube_patch(direct, &NS_KUBE_PODS, ns, "keep-2", NULL, NS_KUBE_MERGE_PATCH, patch, NULL, NULL,
                                NULL) == 0, "%s", ns_error_message());
    cJSON_Delete(patch);
    for (int i = 0; i < 3; i++) { /* revisions past the ones above, so the compaction covers them all */
        snprintf(name, sizeof(name), "other-%d", i);
        create_configmap(direct, ns, name, NULL);
    }
    const char *compact[] = {"compact", NULL};
    ck_assert_int_eq(kube_bed_cmd(NULL, compact), 0);
    ck_assert_int_eq(kube_bed_proxy_release(&proxy), 0);
    relisted r = {inf, ns};
    ck_assert_msg(kc_wait(caught_up, &r, 30000), "the cache did not catch up after the relist");
    ns_kube_informer_stats st;
    ns_kube_informer_get_stats(inf, &st);
    ck_assert_uint_ge(st.relists_gone, 1);
    ck_assert_uint_ge(st.lists, 2);
    ck_assert_uint_eq(st.decode_errors, 0);
    /* the relist delivered each change once: keep-new added, keep-2 modified, keep-1 deleted */
    ns_kube_informer_rdlock(inf);
    ck_assert_int_eq(t.added - at_hold.added, 1);
    ck_assert_int_eq(t.modified - at_hold.modified, 1);
    ck_assert_int_eq(t.deleted - at_hold.deleted, 1);
    ck_assert_str_eq(t.deleted_name, "keep-1");
    ns_kube_informer_unlock(inf);
    ns_kube_informer_free(inf);
    ns_kube_client_free(c);
    ns_kube_client_free(direct);
    kube_bed_proxy_stop(&proxy);
}
END_TEST

typedef struct marked {
    ns_kube_informer *inf;
    unsigned long long past;
} marked;

static bool bookmarked_past(void *ud)
{
    marked *m = ud;
    ns_kube_informer_stats st;
    ns_kube_informer_get_stats(m->inf, &st);
    return st.bookmarks >= 1 && strtoull(st.last_rv, NULL, 10) >= m->past;
}

static bool resumed(void *ud)
{
    ns_kube_informer_stats st;
    ns_kube_informer_get_stats(ud, &st);
    return st.watch_resumes >= 1 && st.watches >= 2;
}

/* A resource served from the watch cache sends bookmarks (the API server sends one 2 s before a watch's deadline):
 * with no event for the informer's objects, its resourceVersion still moves past writes to objects of its kind it
 * does not watch, so a resumed watch starts from a recent revision. */
START_TEST(bookmarks_move_the_resource_version)
{
    char ns[64], other[64];
    ns_kube_client *c = kc_admin();
    ck_assert_int_eq(kube_bed_namespace("kc-bookmark", ns, sizeof(ns)), 0);
    ck_assert_int_eq(kube_bed_namespace("kc-elsewhere", other, sizeof(other)), 0);
    ns_kube_informer_options o = {.resource = &NS_KUBE_PDBS, .namespace_ = ns, .watch_timeout_s = 5,
                                  .decoder = ns_kube_decoder_for(&NS_KUBE_PDBS)};
    ns_kube_informer *inf = NULL;
    ck_assert_int_eq(ns_kube_informer_new(c, &o, &inf), 0);
    ck_assert_int_eq(ns_kube_informer_start(inf), 0);
    ck_assert_msg(ns_kube_informer_wait_synced(inf, 30000), "%s", ns_error_message());
    ns_kube_informer_stats st;
    ns_kube_informer_get_stats(inf, &st);
    unsigned long long listed = strtoull(st.last_rv, NULL, 10);
    /* a PDB in another namespace: the watch cache processes it (the API server only bookmarks revisions of the kind
     * it has seen), the informer gets no event for it */
    cJSON *pdb = kc_json("{\"apiVersion\":\"policy/v1\",\"kind\":\"PodDisruptionBudget\",\"metadata\":"
                         "{\"name\":\"elsewhere\"},\"spec\":{\"maxUnavailable\":1,\"selector\":"
                         "{\"matchLabels\":{\"app\":\"x\"}}}}"),
          *out = NULL;
    ck_assert_msg(ns_kube_create(c, &NS_KUBE_PDBS, other, pdb, NULL, &out) == 0, "%s", ns_error_message());
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(out, "metadata");
    unsigned long long written =
        strtoull(cJSON_GetObjectItemCaseSensitive(meta, "resourceVersion")->valuestring, NULL, 10);
    ck_assert_uint_gt(written, listed);
    cJSON_Delete(pdb);
    cJSON_Delete(out);
    marked m = {inf, written};
    bool moved = kc_wait(bookmarked_past, &m, 30000);
    ns_kube_informer_get_stats(inf, &st);
    ck_assert_msg(moved,
                  "no bookmark moved the resourceVersion past %llu (listed at %llu; %llu bookmarks, %llu watches, "
                  "last resourceVersion %s)",
                  written, listed, (unsigned long long)st.bookmarks, (unsigned long long)st.watches, st.last_rv);
    /* the 5 s watch ends and the next one resumes from the bookmark's revision, no relist */
    ck_assert(kc_wait(resumed, inf, 20000));
    ns_kube_informer_get_stats(inf, &st);
    ck_assert_uint_eq(st.lists, 1);
    ck_assert_uint_eq(st.events, 0);
    ck_assert_uint_eq(st.relists_gone, 0);
    ns_kube_informer_free(inf);
    ns_kube_client_free(c);
}
END_TEST

/* A permissive stand-in for the NodePool CRD (not Karpenter's schema): the API server keeps any field, so an object
 * the decoder must refuse can exist in the cluster. */
static const char *const loose_nodepool_crd =
    "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
    "\"metadata\":{\"name\":\"nodepools.karpenter.sh\"},"
    "\"spec\":{\"group\":\"karpenter.sh\",\"scope\":\"Cluster\",\"names\":{\"plural\":\"nodepools\","
    "\"singular\":\"nodepool\",\"kind\":\"NodePool\",\"listKind\":\"NodePoolList\"},"
    "\"versions\":[{\"name\":\"v1\",\"served\":true,\"storage\":true,\"subresources\":{\"status\":{}},"
    "\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true}}}]}}";

static const char *nodepool(const char *name, const char *extra)
{
    static char text[1024];
    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"karpenter.sh/v1\",\"kind\":\"NodePool\",\"metadata\":{\"name\":\"%s\"},"
             "\"spec\":{%s\"template\":{\"spec\":{\"nodeClassRef\":{\"group\":\"nodesmith.io\","
             "\"kind\":\"SimNodeClass\",\"name\":\"default\"},\"requirements\":[]}}}}",
             name, extra);
    return text;
}

START_TEST(bad_object_skipped_others_cached)
{
    ns_kube_client *c = kc_admin();
    cJSON *crd = kc_json(loose_nodepool_crd);
    static const ns_kube_resource CRDS = {"apiextensions.k8s.io", "v1", "customresourcedefinitions",
                                          "CustomResourceDefinition", false};
    long status = 0;
    int rc = ns_kube_create(c, &CRDS, NULL, crd, &status, NULL);
    ck_assert_msg(rc == 0 || status == 409, "%s", ns_error_message());
    cJSON_Delete(crd);
    /* the new resource is served once the CRD is established */
    for (int i = 0; i < 100 && ns_kube_json(c, "GET", "/apis/karpenter.sh/v1/nodepools", NULL, NULL, "x", NULL,
                                            NULL) != 0; i++)
        usleep(100000);
    cJSON *good = kc_json(nodepool("kc-good", "\"weight\":10,"));
    cJSON *bad = kc_json(nodepool("kc-bad", "\"weight\":\"heavy\","));
    ck_assert_msg(ns_kube_create(c, &NS_KUBE_NODEPOOLS, NULL, good, NULL, NULL) == 0, "%s", ns_error_message());
    ck_assert_msg(ns_kube_create(c, &NS_KUBE_NODEPOOLS, NULL, bad, NULL, NULL) == 0, "%s", ns_error_message());
    cJSON_Delete(good);
    cJSON_Delete(bad);
    ns_kube_informer *inf = informer(c, &NS_KUBE_NODEPOOLS, NULL, NULL, 0);
    ns_kube_informer_stats st;
    ns_kube_informer_get_stats(inf, &st);
    ck_assert_uint_eq(st.decode_errors, 1);
    ck_assert_msg(strstr(st.last_decode_error, "NodePool kc-bad: spec.weight"), "%s", st.last_decode_error);
    ns_kube_informer_rdlock(inf);
    const ns_kube_obj *o = ns_kube_store_get(ns_kube_informer_store(inf), NULL, "kc-good");
    ck_assert_ptr_nonnull(o);
    ck_assert_ptr_nonnull(o->typed);
    ck_assert_int_eq(((const ns_nodepool *)o->typed)->weight, 10);
    ck_assert_ptr_null(ns_kube_store_get(ns_kube_informer_store(inf), NULL, "kc-bad"));
    ns_kube_informer_unlock(inf);
    /* the watch goes on after the bad object */
    cJSON *later = kc_json(nodepool("kc-later", ""));
    ck_assert_int_eq(ns_kube_create(c, &NS_KUBE_NODEPOOLS, NULL, later, NULL, NULL), 0);
    cJSON_Delete(later);
    lookup l = {inf, NULL, "kc-later", true};
    ck_assert(kc_wait(cached, &l, 10000));
    ns_kube_informer_free(inf);
    ns_kube_client_free(c);
}
END_TEST

static void apply(const char *ns, const char *yaml)
{
    const char *argv[] = {"-n", ns, "apply", "-f", "-", NULL};
    char *out = NULL;
    ck_assert_int_eq(kube_bed_kubectl(&out, yaml, argv), 0);
    free(out);
}

static const char *const workloads =
    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n"
    "spec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n"
    "  template:\n    metadata: {labels: {app: web}}\n"
    "    spec:\n      containers: [{name: c, image: nginx, resources: {requests: {cpu: 100m}}}]\n"
    "      topologySpreadConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone,"
    " whenUnsatisfiable: ScheduleAnyway, labelSelector: {matchLabels: {app: web}}}]\n"
    "---\napiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent}\n"
    "spec:\n  selector: {matchLabels: {app: agent}}\n"
    "  template:\n    metadata: {labels: {app: agent}}\n"
    "    spec: {containers: [{name: c, image: busybox, resources: {requests: {memory: 32Mi}}}]}\n"
    "---\napiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\n"
    "spec:\n  serviceName: db\n  replicas: 1\n  selector: {matchLabels: {app: db}}\n"
    "  template:\n    metadata: {labels: {app: db}}\n    spec: {containers: [{name: c, image: postgres}]}\n"
    "  volumeClaimTemplates: [{metadata: {name: data}, spec: {accessModes: [ReadWriteOnce],"
    " resources: {requests: {storage: 1Gi}}}}]\n"
    "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web}\n"
    "spec: {maxUnavailable: 1, selector: {matchLabels: {app: web}}}\n"
    "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: claim}\n"
    "spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n"
    "---\napiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata: {name: lease}\nspec: {holderIdentity: x}\n";

typedef struct populated {
    ns_kube_informer *inf;
    size_t want;
} populated;

static bool has_objects(void *ud)
{
    populated *p = ud;
    ns_kube_informer_rdlock(p->inf);
    size_t n = ns_kube_store_len(ns_kube_informer_store(p->inf));
    ns_kube_informer_unlock(p->inf);
    return n >= p->want;
}

static const void *typed_at(const ns_kube_store *s, const char *ns, const char *name)
{
    const ns_kube_obj *o = ns_kube_store_get(s, ns, name);
    ck_assert_msg(o && o->typed, "%s/%s: not cached or not decoded", ns ? ns : "", name);
    return o->typed;
}

/* What the model holds of the objects `workloads` and the storage manifest created. */
static void check_typed(const ns_kube_resource *r, const ns_kube_store *s, const char *ns)
{
    char name[96];
    if (r == &NS_KUBE_STORAGECLASSES) {
        snprintf(name, sizeof(name), "%s-sc", ns);
        const ns_storage_class *sc = typed_at(s, NULL, name);
        ck_assert_str_eq(sc->provisioner, "ebs.csi.aws.com");
        ck_assert(sc->wait_for_first_consumer);
    } else if (r == &NS_KUBE_PVS) {
        snprintf(name, sizeof(name), "%s-pv", ns);
        const ns_pv *pv = typed_at(s, NULL, name);
        ck_assert_int_eq(pv->capacity_bytes, 1LL << 30);
        ck_assert_uint_eq(pv->n_node_affinity, 1);
        ck_assert_str_eq(pv->node_affinity[0].exprs[0].key, "topology.kubernetes.io/zone");
    } else if (r == &NS_KUBE_PVCS) {
        const ns_pvc *pvc = typed_at(s, ns, "claim");
        ck_assert_int_eq(pvc->request_bytes, 1LL << 30);
    } else if (r == &NS_KUBE_LEASES) {
        const ns_lease *l = typed_at(s, ns, "lease");
        ck_assert_str_eq(l->holder, "x");
    } else if (r == &NS_KUBE_DEPLOYMENTS) {
        const ns_workload *w = typed_at(s, ns, "web");
        ck_assert_str_eq(w->kind, "Deployment");
        ck_assert_int_eq(w->replicas, 2);
        ck_assert_str_eq(ns_labels_get(&w->selector.match_labels, "app"), "web");
    } else if (r == &NS_KUBE_STATEFULSETS) {
        const ns_workload *w = typed_at(s, ns, "db");
        ck_assert_uint_eq(w->n_volume_claim_templates, 1);
        ck_assert_str_eq(w->volume_claim_templates[0], "data");
    }
}

START_TEST(every_watched_kind_decodes)
{
    char ns[64], node[96], yaml[1024];
    ns_kube_client *c = kc_admin();
    ck_assert_int_eq(kube_bed_namespace("kc-kinds", ns, sizeof(ns)), 0);
    snprintf(node, sizeof(node), "%s-node", ns);
    ck_assert_int_eq(kube_bed_ready_node(node, NULL, NULL), 0);
    apply(ns, workloads);
    snprintf(yaml, sizeof(yaml),
             "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: %s-sc}\n"
             "provisioner: ebs.csi.aws.com\nvolumeBindingMode: WaitForFirstConsumer\n"
             "---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: %s-pv}\n"
             "spec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce], hostPath: {path: /tmp/x},"
             " nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: [{key: topology.kubernetes.io/zone,"
             " operator: In, values: [a]}]}]}}}\n",
             ns, ns);
    apply(ns, yaml);
    const ns_kube_resource *kinds[] = {&NS_KUBE_PODS,        &NS_KUBE_NODES,        &NS_KUBE_DAEMONSETS,
                                       &NS_KUBE_PDBS,        &NS_KUBE_STORAGECLASSES, &NS_KUBE_PVS,
                                       &NS_KUBE_PVCS,        &NS_KUBE_LEASES,       &NS_KUBE_DEPLOYMENTS,
                                       &NS_KUBE_REPLICASETS, &NS_KUBE_STATEFULSETS};
    size_t want[] = {3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        const ns_kube_resource *r = kinds[i];
        ns_kube_informer *inf = informer(c, r, r->namespaced ? ns : NULL, NULL, 0);
        populated p = {inf, want[i]};
        ck_assert_msg(kc_wait(has_objects, &p, 20000), "%s: no objects cached", r->resource);
        ns_kube_informer_stats st;
        ns_kube_informer_get_stats(inf, &st);
        ck_assert_msg(st.decode_errors == 0, "%s: %s", r->resource, st.last_decode_error);
        ns_kube_informer_rdlock(inf);
        check_typed(r, ns_kube_informer_store(inf), ns);
        ns_kube_informer_unlock(inf);
        ns_kube_informer_free(inf);
    }
    ns_kube_client_free(c);
}
END_TEST

int main(void)
{
    kube_bed bed;
    if (kube_bed_start(&bed) < 0)
        return 1;
    Suite *s = suite_create("kube-client-informer");
    TCase *t = tcase_create("informer");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, pods_list_pages_watch_and_indexes);
    tcase_add_test(t, dropped_watch_resumes_without_relist);
    tcase_add_test(t, gone_after_compaction_relists);
    tcase_add_test(t, pods_gone_relist_without_loss);
    tcase_add_test(t, bookmarks_move_the_resource_version);
    tcase_add_test(t, bad_object_skipped_others_cached);
    tcase_add_test(t, every_watched_kind_decodes);
    suite_add_tcase(s, t);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    kube_bed_stop(&bed);
    return failed ? 1 : 0;
}
