/*
 * alibaba.so through the core's loader against the emulator, one scenario per test (each test forks and loads the
 * provider afresh): catalog labels, prices and allocatable; launch tags, ACK bootstrap and custom-mode user data;
 * listing by the cluster's tag; drift; events with deadlines; no-stock answers; vSwitch selection; the node class
 * status. The credential chain is in test_credentials.c.
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ali_provider_fixture.h"
#include "errors/ns_error.h"
#include "json/host_json.h"
#include "log/ns_log.h"
#include "nodeclass_condition.h"

/* ------------------------------------------------------------------------------------------------------------ */

typedef struct found_type {
    const char *want;
    bool seen;
    int zone_ids; /* offerings whose one label is topology.k8s.alibabacloud/zone-id = their zone; -1: one is not */
    ns_instance_type copy;
    ns_label labels[32];
    char keys[32][128], values[32][128];
    double od, spot;
    bool od_available, spot_available; /* in cn-hangzhou-h */
} found_type;

static int find_type(void *ctx, const ns_instance_type *t)
{
    found_type *f = ctx;
    if (strcmp(t->name, f->want) != 0)
        return 0;
    f->seen = true;
    f->copy = *t;
    for (size_t i = 0; i < t->n_labels && i < 32; i++) {
        snprintf(f->keys[i], 128, "%s", t->labels[i].key);
        snprintf(f->values[i], 128, "%s", t->labels[i].value);
    }
    f->copy.n_labels = t->n_labels < 32 ? t->n_labels : 32;
    f->od = f->spot = -1;
    for (size_t i = 0; i < t->n_offerings; i++) {
        const ns_offering *o = NS_AT(t->offerings, i);
        bool zone_id = NS_HAS_FIELD(o, ns_offering, n_labels) && o->n_labels == 1 &&
                       strcmp(o->labels[0].key, "topology.k8s.alibabacloud/zone-id") == 0 &&
                       strcmp(o->labels[0].value, o->zone) == 0;
        f->zone_ids = f->zone_ids < 0 || !zone_id ? -1 : f->zone_ids + 1;
        if (strcmp(o->zone, "cn-hangzhou-h") != 0)
            continue;
        if (strcmp(o->capacity_type, NS_CAPACITY_ON_DEMAND) == 0) {
            f->od = o->price_per_hour;
            f->od_available = o->available;
        } else {
            f->spot = o->price_per_hour;
            f->spot_available = o->available;
        }
    }
    return 0;
}

static const char *label(const found_type *f, const char *key)
{
    for (size_t i = 0; i < f->copy.n_labels; i++)
        if (strcmp(f->keys[i], key) == 0)
            return f->values[i];
    return NULL;
}

START_TEST(test_catalog_labels_prices_allocatable)
{
    alf_env_static_keys();
    ns_plugin *p = alf_load();
    alf_nodeclass_doc d;
    alf_nodeclass_of(&d, "catalog", "{" SPEC_DEMO "}");
    found_type f = {.want = "ecs.g7.large"};
    ck_assert_int_eq(ns_plugin_list_instance_types(p, &d.nc, find_type, &f), NS_OK);
    ck_assert(f.seen);
    /* the zone ID is a label of each offering, as in the reference port */
    ck_assert_int_eq(f.zone_ids, (int)f.copy.n_offerings);
    ck_assert_int_gt(f.zone_ids, 0);
    ck_assert_str_eq(label(&f, "karpenter.k8s.alibabacloud/instance-family"), "g7");
    ck_assert_str_eq(label(&f, "karpenter.k8s.alibabacloud/instance-category"), "g");
    ck_assert_str_eq(label(&f, "karpenter.k8s.alibabacloud/instance-generation"), "7");
    ck_assert_str_eq(label(&f, "karpenter.k8s.alibabacloud/instance-size"), "large");
    ck_assert_str_eq(label(&f, "karpenter.k8s.alibabacloud/instance-cpu"), "2");
    ck_assert_str_eq(label(&f, "karpenter.k8s.alibabacloud/instance-memory"), "8192");
    ck_assert_str_eq(label(&f, "kubernetes.io/arch"), "amd64");
    /* the price DescribePrice quotes for the instance alone (the emulator's table), spot below it */
    ck_assert_msg(f.od > 0.3 && f.od < 1.0, "on-demand %f", f.od);
    ck_assert_msg(f.spot > 0 && f.spot < f.od * 0.5, "spot %f against on-demand %f", f.spot, f.od);
    /* 8 GiB less 6.5% kept by the hypervisor (533 MiB); terway (the emulated cluster's CNI) gives
     * (ENIs - 1) x IPs per ENI + 3 pods; ACK reserves 70m of 2 CPUs and min(11 x pods + 255 MiB, 25%) */
    ck_assert_int_eq(f.copy.capacity.memory_bytes, (8192LL - 533) << 20);
    ck_assert_int_eq(f.copy.capacity.pods, (3 - 1) * 8 + 3);
    ck_assert_int_eq(f.copy.kube_reserved.cpu_milli, 70);
    ck_assert_int_eq(f.copy.kube_reserved.memory_bytes, (11LL * 19 + 255) << 20);
    ck_assert_int_eq(f.copy.eviction_threshold.memory_bytes, 100LL << 20);
    ck_assert_int_eq(f.copy.capacity.ephemeral_storage_bytes, 40LL << 30);
    /* an ARM type is there, with arm64 */
    found_type arm = {.want = "ecs.g8y.large"};
    ck_assert_int_eq(ns_plugin_list_instance_types(p, &d.nc, find_type, &arm), NS_OK);
    ck_assert(arm.seen);
    ck_assert_str_eq(label(&arm, "kubernetes.io/arch"), "arm64");
    ns_host_json_free(d.spec);
    ns_plugin_unload(p);
}
END_TEST

START_TEST(test_builtin_prices_when_describe_price_fails)
{
    alf_env_static_keys();
    ck_assert_int_eq(emulator_control(&alf_emu, "/_emulator/faults", "{\"kind\":\"error\",\"count\":1,\"code\":"
                                          "\"Forbidden.RAM\",\"status\":403,\"actions\":[\"DescribePrice\"]}",
                                          NULL),
                     200);
    alf_start_logging();
    ns_plugin *p = alf_load();
    alf_nodeclass_doc d;
    alf_nodeclass_of(&d, "catalog", "{" SPEC_DEMO "}");
    found_type f = {.want = "ecs.g7.large"};
    int before = alf_count("DescribePrice");
    ck_assert_int_eq(ns_plugin_list_instance_types(p, &d.nc, find_type, &f), NS_OK);
    ck_assert_int_eq(alf_count("DescribePrice"), before + 1); /* one failure: no more asking for this catalog */
    ck_assert_msg(f.od > 0.2 && f.od < 2.0, "built-in on-demand %f", f.od);
    char *text = alf_logged();
    ck_assert(strstr(text, "DescribePrice failed, using built-in on-demand prices"));
    free(text);
    ns_host_json_free(d.spec);
    ns_plugin_unload(p);
}
END_TEST

static void launch_one(ns_plugin *p, const ns_nodeclass *nc, const char *claim, const char *type,
                       const char *capacity_type, ns_launch_result *r)
{
    ns_launch_option opt = {sizeof(opt), type, "cn-hangzhou-h", capacity_type, 0.1};
    ns_label labels[] = {{"karpenter.sh/nodepool", "web"}, {"team", "blue"}};
    ns_taint taints[] = {{"dedicated", "web", "NoSchedule"}};
    ns_label tags[] = {{"cost-center", "42"}};
    ns_launch_request req = {.struct_size = sizeof(req), .cluster_name = "c-demo", .nodeclaim_name = claim,
                             .nodepool_name = "web", .client_token = claim, .nodeclass = nc, .options = &opt,
                             .n_options = 1, .labels = labels, .n_labels = 2, .taints = taints, .n_taints = 1,
                             .tags = tags, .n_tags = 1};
    *r = (ns_launch_result){.struct_size = sizeof(*r)};
    ck_assert_msg(ns_plugin_launch(p, &req, r) == NS_OK, "launch %s: %s", claim, ns_error_message());
}

static cJSON *instance_state(const char *provider_id)
{
    cJSON *st = alf_state();
    const char *id = strchr(provider_id, '.') + 1;
    cJSON *inst, *out = NULL;
    cJSON_ArrayForEach(inst, cJSON_GetObjectItemCaseSensitive(st, "instances"))
        if (strcmp(cJSON_GetObjectItemCaseSensitive(inst, "InstanceId")->valuestring, id) == 0)
            out = cJSON_Duplicate(inst, 1);
    cJSON_Delete(st);
    ck_assert_msg(out != NULL, "%s is not in the emulator", provider_id);
    return out;
}

static const char *str_at(const cJSON *o, const char *a, const char *b)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, a);
    if (b)
        v = cJSON_GetObjectItemCaseSensitive(v, b);
    return cJSON_IsString(v) ? v->valuestring : "";
}

START_TEST(test_launch_tags_and_ack_bootstrap)
{
    alf_env_static_keys();
    ns_plugin *p = alf_load();
    alf_nodeclass_doc d;
    alf_nodeclass_of(&d, "web", "{" SPEC_DEMO ",\"userData\":\"#!/bin/bash\\necho custom-step\\n\",\"tags\":{\"app\":"
                            "\"shop\"},\"kubeletConfiguration\":{\"maxPods\":30}}");
    ns_launch_result r;
    launch_one(p, &d.nc, "web-abc12", "ecs.g7.large", NS_CAPACITY_SPOT, &r);
    ck_assert_msg(strncmp(r.provider_id, "cn-hangzhou.i-", 14) == 0, "%s", r.provider_id);
    ck_assert_str_eq(r.capacity_type, "spot");
    ck_assert_str_eq(r.image_id, "aliyun_3_x64_20G_alibase_20250117.vhd");
    ck_assert_int_eq(r.allocatable.pods, 30);
    cJSON *inst = instance_state(r.provider_id);
    ck_assert_str_eq(str_at(inst, "Tags", "kubernetes.io/cluster/c-demo"), "owned");
    ck_assert_str_eq(str_at(inst, "Tags", "karpenter.sh/nodepool"), "web");
    ck_assert_str_eq(str_at(inst, "Tags", "karpenter.sh/nodeclaim"), "web-abc12");
    ck_assert_str_eq(str_at(inst, "Tags", "karpenter.k8s.alibabacloud/ecsnodeclass"), "web");
    ck_assert_str_eq(str_at(inst, "Tags", "karpenter.sh/managed-by"), "c-demo");
    ck_assert_str_eq(str_at(inst, "Tags", "app"), "shop");
    ck_assert_str_eq(str_at(inst, "Tags", "cost-center"), "42");
    ck_assert_str_eq(str_at(inst, "SpotStrategy", NULL), "SpotAsPriceGo");
    const char *ud = str_at(inst, "UserData", NULL);
    ck_assert_msg(strstr(ud, "echo custom-step") && strstr(ud, "attach_node.sh") &&
                      strstr(ud, "--labels 'k8s.aliyun.com=true,ack.aliyun.com=c-demo,karpenter.sh/nodepool=web,"
                                 "team=blue'") &&
                      strstr(ud, "--taints 'karpenter.sh/unregistered:NoExecute,dedicated=web:NoSchedule'") &&
                      strstr(ud, "--node-config") && strstr(ud, "boundary=\"//\""),
                  "user data: %s", ud);
    ck_assert(strstr(ud, "echo custom-step") < strstr(ud, "attach_node.sh"));
    cJSON_Delete(inst);
    /* the same claim again: the same instance */
    ns_launch_result again;
    launch_one(p, &d.nc, "web-abc12", "ecs.g7.large", NS_CAPACITY_SPOT, &again);
    ck_assert_str_eq(again.provider_id, r.provider_id);
    ns_instance got;
    ck_assert_int_eq(ns_plugin_get_instance(p, r.provider_id, &got), NS_OK);
    ck_assert_str_eq(got.nodeclaim_name, "web-abc12");
    ck_assert_str_eq(got.capacity_type, "spot");
    bool gone = true;
    ck_assert_int_eq(ns_plugin_terminate(p, r.provider_id, &gone), NS_OK);
    ck_assert(!gone);
    ck_assert_int_eq(ns_plugin_terminate(p, r.provider_id, &gone), NS_OK);
    ck_assert(gone);
    ck_assert_int_eq(ns_plugin_get_instance(p, r.provider_id, &got), NS_ERR_NOT_FOUND);
    ns_host_json_free(d.spec);
    ns_plugin_unload(p);
}
END_TEST

START_TEST(test_custom_mode_user_data_alone)
{
    alf_env_static_keys();
    const char *const extra[] = {"cluster_mode", "custom", NULL};
    ns_plugin *p = alf_load_with(extra, NULL);
    alf_nodeclass_doc d;
    alf_nodeclass_of(&d, "plain", "{" SPEC_DEMO "}");
    ck_assert_int_eq(ns_plugin_validate_nodeclass(p, &d.nc), NS_ERR_INVALID_CONFIG);
    ck_assert(strstr(ns_error_message(), "spec.userData is required in cluster_mode custom"));
    ns_host_json_free(d.spec);
    alf_nodeclass_of(&d, "custom", "{" SPEC_DEMO ",\"userData\":\"#!/bin/bash\\nkubeadm join 10.0.0.1:6443 --taint "
                               "karpenter.sh/unregistered:NoExecute\\n\"}");
    ck_assert_int_eq(ns_plugin_validate_nodeclass(p, &d.nc), NS_OK);
    int attach_before = alf_count("DescribeClusterAttachScripts");
    ns_launch_result r;
    launch_one(p, &d.nc, "custom-x1", "ecs.c7.large", NS_CAPACITY_ON_DEMAND, &r);
    ck_assert_int_eq(alf_count("DescribeClusterAttachScripts"), attach_before);
    cJSON *inst = instance_state(r.provider_id);
    ck_assert_str_eq(str_at(inst, "UserData", NULL),
                     "#!/bin/bash\nkubeadm join 10.0.0.1:6443 --taint karpenter.sh/unregistered:NoExecute\n");
    ck_assert_str_eq(str_at(inst, "SpotStrategy", NULL), "NoSpot");
    ck_assert_str_eq(str_at(inst, "Tags", "ack.aliyun.com"), "");
    cJSON_Delete(inst);
    ck_assert_int_eq(ns_plugin_terminate(p, r.provider_id, NULL), NS_OK);
    ns_host_json_free(d.spec);
    ns_plugin_unload(p);
}
END_TEST

typedef struct ids {
    char list[64][NS_PROVIDER_ID_MAX];
    int n;
} ids;

static int collect_ids(void *ctx, const ns_instance *inst)
{
    ids *l = ctx;
    if (l->n < 64)
        snprintf(l->list[l->n++], NS_PROVIDER_ID_MAX, "%s", inst->provider_id);
    return 0;
}

static bool has_id(const ids *l, const char *id)
{
    for (int i = 0; i < l->n; i++)
        if (strcmp(l->list[i], id) == 0)
            return true;
    return false;
}

START_TEST(test_list_by_cluster_tag)
{
    alf_env_static_keys();
    ns_plugin *demo = alf_load();
    const char *const other_cluster[] = {"cluster_id", "c-other", "cluster_mode", "custom", NULL};
    ns_plugin *other = alf_load_with(other_cluster, NULL);
    alf_nodeclass_doc d;
    alf_nodeclass_of(&d, "list", "{" SPEC_DEMO ",\"userData\":\"#!/bin/bash\\n\"}");
    ns_launch_result mine, theirs;
    launch_one(demo, &d.nc, "list-mine", "ecs.c7.large", NS_CAPACITY_ON_DEMAND, &mine);
    launch_one(other, &d.nc, "list-theirs", "ecs.c7.large", NS_CAPACITY_ON_DEMAND, &theirs);
    ids l = {.n = 0};
    ck_assert_int_eq(ns_plugin_list_instances(demo, collect_ids, &l), NS_OK);
    ck_assert(has_id(&l, mine.provider_id));
    ck_assert(!has_id(&l, theirs.provider_id));
    ck_assert_int_eq(ns_plugin_terminate(demo, mine.provider_id, NULL), NS_OK);
    ck_assert_int_eq(ns_plugin_terminate(other, theirs.provider_id, NULL), NS_OK);
    l.n = 0;
    ck_assert_int_eq(ns_plugin_list_instances(demo, collect_ids, &l), NS_OK);
    ck_assert(!has_id(&l, mine.provider_id));
    ns_host_json_free(d.spec);
    ns_plugin_unload(other);
    ns_plugin_unload(demo);
}
END_TEST

static void drift_of(ns_plugin *p, const ns_launch_result *r, const ns_nodeclass *nc, const char *want)
{
    ns_instance inst;
    ck_assert_int_eq(ns_plugin_get_instance(p, r->provider_id, &inst), NS_OK);
    bool drifted = true;
    char reason[64] = "";
    ck_assert_msg(ns_plugin_check_drift(p, &inst, nc, &drifted, reason, sizeof(reason)) == NS_OK, "check_drift: %s",
                  ns_error_message());
    if (!want)
        ck_assert_msg(!drifted, "drifted: %s", reason);
    else
        ck_assert_msg(drifted && strcmp(reason, want) == 0, "want %s, got %s (%d)", want, reason, drifted);
}

START_TEST(test_drift_image_vswitch_security_group)
{
    alf_env_static_keys();
    ns_plugin *p = alf_load();
    alf_nodeclass_doc d;
    alf_nodeclass_of(&d, "drift", "{" SPEC_DEMO "}");
    ns_launch_result r;
    launch_one(p, &d.nc, "drift-1", "ecs.g7.large", NS_CAPACITY_ON_DEMAND, &r);
    drift_of(p, &r, &d.nc, NULL);
    alf_nodeclass_doc vsw, sg, pinned;
    alf_nodeclass_of(&vsw, "drift", "{\"vSwitchSelectorTerms\":[{\"id\":\"vsw-other\"}],\"securityGroupSelectorTerms\":"
                                "[{\"tags\":{\"karpenter.sh/discovery\":\"demo\"}}],\"imageSelectorTerms\":"
                                "[{\"alias\":\"AlibabaCloudLinux3@latest\"}]}");
    drift_of(p, &r, &vsw.nc, "VSwitchDrift");
    alf_nodeclass_of(&sg, "drift", "{\"vSwitchSelectorTerms\":[{\"tags\":{\"karpenter.sh/discovery\":\"demo\"}}],"
                               "\"securityGroupSelectorTerms\":[{\"name\":\"other-nodes\"}],\"imageSelectorTerms\":"
                               "[{\"alias\":\"AlibabaCloudLinux3@latest\"}]}");
    drift_of(p, &r, &sg.nc, "SecurityGroupDrift");
    alf_nodeclass_of(&pinned, "drift", "{\"vSwitchSelectorTerms\":[{\"tags\":{\"karpenter.sh/discovery\":\"demo\"}}],"
                                   "\"securityGroupSelectorTerms\":[{\"id\":\"sg-demo\"}],\"imageSelectorTerms\":"
                                   "[{\"id\":\"m-golden123\"}]}");
    drift_of(p, &r, &pinned.nc, "ImageDrift");
    /* ACK releases a newer image for the alias: the instance has drifted */
    ck_assert_int_eq(emulator_control(&alf_emu, "/_emulator/ack_images",
                                          "{\"image_id\":\"aliyun_3_x64_20G_alibase_20251201.vhd\",\"image_name\":"
                                          "\"Alibaba Cloud Linux 3\",\"image_type\":\"AliyunLinux3\","
                                          "\"architecture\":\"x86_64\"}",
                                          NULL),
                     200);
    drift_of(p, &r, &d.nc, "ImageDrift");
    ck_assert_int_eq(ns_plugin_terminate(p, r.provider_id, NULL), NS_OK);
    ns_host_json_free(d.spec);
    ns_host_json_free(vsw.spec);
    ns_host_json_free(sg.spec);
    ns_host_json_free(pinned.spec);
    ns_plugin_unload(p);
}
END_TEST

typedef struct events {
    ns_event list[32];
    int n;
} events;

static int on_event(void *ctx, const ns_event *ev)
{
    events *e = ctx;
    if (e->n < 32)
        e->list[e->n++] = *ev;
    return 0;
}

static const ns_event *poll_for(ns_plugin *p, events *e, const char *provider_id, ns_event_kind kind)
{
    for (int tries = 0; tries < 10; tries++) {
        for (int i = 0; i < e->n; i++)
            if (e->list[i].kind == kind && strcmp(e->list[i].provider_id, provider_id) == 0)
                return &e->list[i];
        ck_assert_msg(ns_plugin_poll_events(p, on_event, e) == NS_OK, "poll_events: %s", ns_error_message());
    }
    return NULL;
}

START_TEST(test_events_with_deadlines)
{
    alf_env_static_keys();
    const char *const extra[] = {"interruption_queue", "nodesmith-events", "operation_lock_interval", "1s", NULL};
    ns_plugin *p = alf_load_with(extra, NULL);
    alf_nodeclass_doc d;
    alf_nodeclass_of(&d, "events", "{" SPEC_DEMO "}");
    ns_launch_result a, b, c;
    launch_one(p, &d.nc, "events-a", "ecs.g7.large", NS_CAPACITY_SPOT, &a);
    launch_one(p, &d.nc, "events-b", "ecs.g7.large", NS_CAPACITY_SPOT, &b);
    launch_one(p, &d.nc, "events-c", "ecs.g7.large", NS_CAPACITY_ON_DEMAND, &c);
    char body[256];
    int64_t before = (int64_t)time(NULL) * 1000;
    snprintf(body, sizeof(body), "{\"kind\":\"preemptible-interruption\",\"instance_id\":\"%s\"}",
             strchr(a.provider_id, '.') + 1);
    ck_assert_int_eq(emulator_control(&alf_emu, "/_emulator/events", body, NULL), 200);
    events e = {.n = 0};
    const ns_event *ev = poll_for(p, &e, a.provider_id, NS_EVENT_SPOT_INTERRUPTION);
    ck_assert_ptr_nonnull(ev);
    ck_assert_msg(ev->deadline_ms - ev->time_ms == 5 * 60 * 1000 && ev->time_ms >= before - 2000,
                  "spot notice at %lld, deadline %lld", (long long)ev->time_ms, (long long)ev->deadline_ms);
    /* the operation lock of a preemptible instance being reclaimed */
    snprintf(body, sizeof(body), "{\"instance_id\":\"%s\",\"reason\":\"Recycling\"}", strchr(b.provider_id, '.') + 1);
    int64_t locked = (int64_t)time(NULL) * 1000;
    ck_assert_int_eq(emulator_control(&alf_emu, "/_emulator/locks", body, NULL), 200);
    sleep(1);
    ev = poll_for(p, &e, b.provider_id, NS_EVENT_SPOT_INTERRUPTION);
    ck_assert_ptr_nonnull(ev);
    ck_assert_msg(ev->deadline_ms - ev->time_ms == 5 * 60 * 1000 && ev->time_ms >= locked - 1000 &&
                      ev->time_ms <= (int64_t)time(NULL) * 1000 + 1000,
                  "lock seen at %lld (locked at %lld), deadline %lld", (long long)ev->time_ms, (long long)locked,
                  (long long)ev->deadline_ms);
    /* the lock stays while ECS reclaims the instance: reported once, not at every look */
    int reported = e.n;
    sleep(1);
    ck_assert_int_eq(ns_plugin_poll_events(p, on_event, &e), NS_OK);
    ck_assert_int_eq(e.n, reported);
    /* scheduled maintenance carries notBefore as its deadline */
    snprintf(body, sizeof(body), "{\"kind\":\"maintenance-scheduled\",\"instance_id\":\"%s\",\"deadline_ms\":"
             "1893456000000}", strchr(c.provider_id, '.') + 1);
    ck_assert_int_eq(emulator_control(&alf_emu, "/_emulator/events", body, NULL), 200);
    ev = poll_for(p, &e, c.provider_id, NS_EVENT_SCHEDULED_MAINTENANCE);
    ck_assert_ptr_nonnull(ev);
    ck_assert_int_eq(ev->deadline_ms, 1893456000000LL);
    /* a message that is not an instance event is consumed and ignored */
    ck_assert_int_eq(emulator_control(&alf_emu, "/_emulator/raw_event", "{\"body\":\"{\\\"hello\\\":1}\"}", NULL),
                     200);
    int n = e.n;
    ck_assert_int_eq(ns_plugin_poll_events(p, on_event, &e), NS_OK);
    ck_assert_int_eq(e.n, n);
    cJSON *st = alf_state();
    ck_assert_int_eq(cJSON_GetObjectItemCaseSensitive(st, "queue_length")->valueint, 0);
    cJSON_Delete(st);
    ck_assert_int_eq(ns_plugin_terminate(p, a.provider_id, NULL), NS_OK);
    ck_assert_int_eq(ns_plugin_terminate(p, b.provider_id, NULL), NS_OK);
    ck_assert_int_eq(ns_plugin_terminate(p, c.provider_id, NULL), NS_OK);
    ns_host_json_free(d.spec);
    ns_plugin_unload(p);
}
END_TEST

START_TEST(test_no_stock_marks_exactly_the_refused_offering)
{
    alf_env_static_keys();
    ns_plugin *p = alf_load();
    alf_nodeclass_doc d;
    alf_nodeclass_of(&d, "stock", "{" SPEC_DEMO "}");
    ck_assert_int_eq(emulator_control(&alf_emu, "/_emulator/faults", "{\"kind\":\"nostock\",\"instance_type\":"
                                          "\"ecs.c7.large\",\"zone\":\"cn-hangzhou-h\",\"capacity_type\":\"spot\"}",
                                          NULL),
                     200);
    ns_launch_option opts[] = {{sizeof(ns_launch_option), "ecs.c7.large", "cn-hangzhou-h", NS_CAPACITY_SPOT, 0.05},
                               {sizeof(ns_launch_option), "ecs.g7.large", "cn-hangzhou-h", NS_CAPACITY_SPOT, 0.07}};
    ns_launch_request req = {.struct_size = sizeof(req), .cluster_name = "c-demo", .nodeclaim_name = "stock-1",
                             .nodepool_name = "stock", .client_token = "stock-1", .nodeclass = &d.nc,
                             .options = opts, .n_options = 2};
    ns_launch_result r = {.struct_size = sizeof(r)};
    ck_assert_msg(ns_plugin_launch(p, &req, &r) == NS_OK, "%s", ns_error_message());
    ck_assert_str_eq(r.instance_type, "ecs.g7.large");
    /* the launch succeeded on the neighbour and still named exactly the refused offering, for the core's cache */
    const ns_error_record *e = ns_error_last();
    ck_assert_int_eq(e->code, NS_OK);
    ck_assert_int_eq(e->n_unavailable, 1);
    ck_assert_str_eq(e->unavailable[0].instance_type, "ecs.c7.large");
    ck_assert_str_eq(e->unavailable[0].zone, "cn-hangzhou-h");
    ck_assert_str_eq(e->unavailable[0].capacity_type, "spot");
    ns_launch_result launched = r;
    /* the provider keeps no cache of its own (the core's owns them); its listing follows ECS's stock
     * (DescribeAvailableResource SoldOut): the sold-out offering is offered but unavailable, its neighbours not */
    found_type f = {.want = "ecs.c7.large"};
    ck_assert_int_eq(ns_plugin_list_instance_types(p, &d.nc, find_type, &f), NS_OK);
    ck_assert(f.seen && f.spot >= 0 && !f.spot_available && f.od_available);
    found_type g = {.want = "ecs.g7.large"};
    ck_assert_int_eq(ns_plugin_list_instance_types(p, &d.nc, find_type, &g), NS_OK);
    ck_assert(g.seen && g.spot_available);
    /* a launch offering the refused offering and an on-demand one: on-demand launches, the spot one is named */
    ns_launch_option fallback[] = {opts[0], {sizeof(ns_launch_option), "ecs.c7.large", "cn-hangzhou-h",
                                             NS_CAPACITY_ON_DEMAND, 0.2}};
    ns_launch_request od = req;
    od.nodeclaim_name = od.client_token = "stock-3";
    od.options = fallback;
    r = (ns_launch_result){.struct_size = sizeof(r)};
    ck_assert_msg(ns_plugin_launch(p, &od, &r) == NS_OK, "%s", ns_error_message());
    ck_assert_str_eq(r.capacity_type, "on-demand");
    ck_assert_int_eq(ns_error_last()->n_unavailable, 1);
    ck_assert_str_eq(ns_error_last()->unavailable[0].capacity_type, "spot");
    ns_launch_result on_demand = r;
    /* a launch offering only the refused offering fails for capacity, naming it and nothing else */
    ns_launch_request only = req;
    only.nodeclaim_name = only.client_token = "stock-2";
    only.n_options = 1;
    r = (ns_launch_result){.struct_size = sizeof(r)};
    ck_assert_int_eq(ns_plugin_launch(p, &only, &r), NS_ERR_INSUFFICIENT_CAPACITY);
    e = ns_error_last();
    ck_assert_int_eq(e->n_unavailable, 1);
    ck_assert_str_eq(e->unavailable[0].instance_type, "ecs.c7.large");
    ck_assert_str_eq(e->unavailable[0].capacity_type, "spot");
    ck_assert_int_eq(ns_plugin_terminate(p, on_demand.provider_id, NULL), NS_OK);
    ck_assert_int_eq(ns_plugin_terminate(p, launched.provider_id, NULL), NS_OK);
    ck_assert_int_eq(emulator_control(&alf_emu, "/_emulator/clear", "{}", NULL), 200);
    ns_host_json_free(d.spec);
    ns_plugin_unload(p);
}
END_TEST

/* nodeclass_status: the reference port's ECSNodeClass status, each part resolved on its own, conditions checked by
 * the core (which adds Ready); nothing launched or changed. */
static const cJSON *field(const cJSON *o, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(o, key);
}

static const char *str(const cJSON *o, const char *key)
{
    const cJSON *v = field(o, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

START_TEST(test_nodeclass_status)
{
    alf_env_static_keys();
    ns_plugin *p = alf_load();
    cJSON *st = alf_state();
    int launched_before = cJSON_GetArraySize(field(st, "history"));
    cJSON_Delete(st);

    alf_nodeclass_doc d;
    alf_nodeclass_of(&d, "default", "{" SPEC_DEMO "}");
    cJSON *status = NULL;
    ck_assert_msg(ns_plugin_nodeclass_status(p, &d.nc, &status) == NS_OK, "%s", ns_error_message());
    /* vSwitches: most free addresses first (vsw-demo2 300, vsw-demo1 250, vsw-demo0 200), with their zones */
    const cJSON *vsw = field(status, "vSwitches");
    ck_assert_int_eq(cJSON_GetArraySize(vsw), 3);
    ck_assert_str_eq(str(cJSON_GetArrayItem(vsw, 0), "id"), "vsw-demo2");
    ck_assert_str_eq(str(cJSON_GetArrayItem(vsw, 0), "zoneID"), REGION "-j");
    ck_assert_str_eq(str(cJSON_GetArrayItem(vsw, 2), "id"), "vsw-demo0");
    ck_assert_str_eq(str(cJSON_GetArrayItem(vsw, 2), "zoneID"), REGION "-h");
    const cJSON *sg = field(status, "securityGroups");
    ck_assert_int_eq(cJSON_GetArraySize(sg), 1);
    ck_assert_str_eq(str(cJSON_GetArrayItem(sg, 0), "id"), "sg-demo");
    ck_assert_str_eq(str(cJSON_GetArrayItem(sg, 0), "name"), "demo-nodes");
    /* images: ACK's for the alias, one per architecture, with the arch requirement */
    const cJSON *images = field(status, "images");
    ck_assert_int_eq(cJSON_GetArraySize(images), 2);
    bool amd64 = false, arm64 = false;
    const cJSON *im;
    cJSON_ArrayForEach(im, images) {
        const cJSON *req = cJSON_GetArrayItem(field(im, "requirements"), 0);
        ck_assert_str_eq(str(req, "key"), "kubernetes.io/arch");
        ck_assert_str_eq(str(req, "operator"), "In");
        const char *arch = cJSON_GetArrayItem(field(req, "values"), 0)->valuestring;
        if (strcmp(arch, "amd64") == 0) {
            /* the newest ACK release (the drift test may have published one) */
            amd64 = true;
            ck_assert_msg(strncmp(str(im, "id"), "aliyun_3_x64_20G_alibase_", 25) == 0, "%s", str(im, "id"));
            ck_assert_msg(strncmp(str(im, "name"), "Alibaba Cloud Linux 3", 21) == 0, "%s", str(im, "name"));
        } else {
            arm64 = strcmp(arch, "arm64") == 0;
            ck_assert_str_eq(str(im, "id"), "aliyun_3_arm64_20G_alibase_20250117.vhd");
            ck_assert_str_eq(str(im, "name"), "Alibaba Cloud Linux 3.2104 LTS 64 bit ARM");
        }
    }
    ck_assert(amd64 && arm64);
    assert_condition(status, "VSwitchesReady", "True", "VSwitchesReady", "");
    assert_condition(status, "SecurityGroupsReady", "True", "SecurityGroupsReady", "");
    assert_condition(status, "ImagesReady", "True", "ImagesReady", "");
    assert_condition(status, "Ready", "True", "Ready", "");
    cJSON_Delete(status);
    ns_host_json_free(d.spec);

    /* a vSwitch selector that selects nothing: that condition False naming the selector, the other parts resolved */
    alf_nodeclass_of(&d, "novsw", "{\"vSwitchSelectorTerms\":[{\"tags\":{\"karpenter.sh/discovery\":\"nowhere\"}}],"
                              "\"securityGroupSelectorTerms\":[{\"id\":\"sg-other\"}],"
                              "\"imageSelectorTerms\":[{\"id\":\"m-golden123\"}]}");
    ck_assert_msg(ns_plugin_nodeclass_status(p, &d.nc, &status) == NS_OK, "%s", ns_error_message());
    ck_assert_ptr_null(field(status, "vSwitches"));
    ck_assert_str_eq(str(cJSON_GetArrayItem(field(status, "securityGroups"), 0), "name"), "other-nodes");
    ck_assert_str_eq(str(cJSON_GetArrayItem(field(status, "images"), 0), "id"), "m-golden123");
    ck_assert_str_eq(str(cJSON_GetArrayItem(field(status, "images"), 0), "name"), "golden");
    assert_condition(status, "VSwitchesReady", "False", "vSwitchesNotFound",
                     "spec.vSwitchSelectorTerms select no available vSwitch");
    assert_condition(status, "SecurityGroupsReady", "True", "SecurityGroupsReady", "");
    assert_condition(status, "ImagesReady", "True", "ImagesReady", "");
    assert_condition(status, "Ready", "False", "UnhealthyDependents", "VSwitchesReady=False");
    cJSON_Delete(status);
    ns_host_json_free(d.spec);

    /* an image that does not exist and a security group name nobody has */
    alf_nodeclass_of(&d, "noimage", "{\"vSwitchSelectorTerms\":[{\"id\":\"vsw-demo1\"}],"
                                "\"securityGroupSelectorTerms\":[{\"name\":\"nobody\"}],"
                                "\"imageSelectorTerms\":[{\"id\":\"m-missing\"}]}");
    ck_assert_msg(ns_plugin_nodeclass_status(p, &d.nc, &status) == NS_OK, "%s", ns_error_message());
    ck_assert_int_eq(cJSON_GetArraySize(field(status, "vSwitches")), 1);
    ck_assert_ptr_null(field(status, "securityGroups"));
    ck_assert_ptr_null(field(status, "images"));
    assert_condition(status, "SecurityGroupsReady", "False", "SecurityGroupsNotFound",
                     "spec.securityGroupSelectorTerms select no security group");
    assert_condition(status, "ImagesReady", "False", "ImagesNotFound", "spec.imageSelectorTerms select no available image");
    cJSON_Delete(status);
    ns_host_json_free(d.spec);

    /* an invalid node class: every condition False with the refusal, which names the field */
    alf_nodeclass_of(&d, "invalid", "{" SPEC_DEMO ",\"systemDisk\":{\"volumeSize\":\"10Gi\"}}");
    ck_assert_msg(ns_plugin_nodeclass_status(p, &d.nc, &status) == NS_OK, "%s", ns_error_message());
    assert_condition(status, "VSwitchesReady", "False", "NodeClassInvalid", "spec.systemDisk.volumeSize '10Gi'");
    assert_condition(status, "ImagesReady", "False", "NodeClassInvalid", "ECSNodeClass invalid:");
    ck_assert_ptr_null(field(status, "vSwitches"));
    cJSON_Delete(status);
    ns_host_json_free(d.spec);

    /* when the cloud cannot be asked, an error and no status */
    alf_nodeclass_of(&d, "default", "{" SPEC_DEMO "}");
    ck_assert_int_eq(emulator_control(&alf_emu, "/_emulator/faults", "{\"kind\":\"throttle\",\"count\":10,"
                                          "\"actions\":[\"DescribeVSwitches\"]}", NULL),
                     200);
    status = NULL;
    ck_assert_int_eq(ns_plugin_nodeclass_status(p, &d.nc, &status), NS_ERR_THROTTLED);
    ck_assert_ptr_null(status);
    ck_assert_int_eq(emulator_control(&alf_emu, "/_emulator/clear", "{}", NULL), 200);
    ns_host_json_free(d.spec);

    st = alf_state();
    ck_assert_int_eq(cJSON_GetArraySize(field(st, "history")), launched_before);
    cJSON_Delete(st);
    ns_plugin_unload(p);
}
END_TEST

/* cheapest: every launch takes the cheapest zone ECS sees; balanced: the zones are drawn at random */
static int zones_used(ns_plugin *p, const ns_nodeclass *nc, const char *prefix)
{
    ns_launch_option opts[] = {{sizeof(ns_launch_option), "ecs.c7.large", "cn-hangzhou-h", NS_CAPACITY_SPOT, 0.1},
                               {sizeof(ns_launch_option), "ecs.c7.large", "cn-hangzhou-i", NS_CAPACITY_SPOT, 0.1},
                               {sizeof(ns_launch_option), "ecs.c7.large", "cn-hangzhou-j", NS_CAPACITY_SPOT, 0.1}};
    bool used[3] = {false, false, false};
    for (int i = 0; i < 10; i++) {
        char claim[64];
        snprintf(claim, sizeof(claim), "%s-%d", prefix, i);
        ns_launch_request req = {.struct_size = sizeof(req), .cluster_name = "c-demo", .nodeclaim_name = claim,
                                 .nodepool_name = "zones", .client_token = claim, .nodeclass = nc, .options = opts,
                                 .n_options = 3};
        ns_launch_result r = {.struct_size = sizeof(r)};
        ck_assert_msg(ns_plugin_launch(p, &req, &r) == NS_OK, "%s", ns_error_message());
        for (int z = 0; z < 3; z++)
            used[z] |= strcmp(r.zone, opts[z].zone) == 0;
        ck_assert_int_eq(ns_plugin_terminate(p, r.provider_id, NULL), NS_OK);
    }
    return used[0] + used[1] + used[2];
}

START_TEST(test_vswitch_selection_policy)
{
    alf_env_static_keys();
    ns_plugin *p = alf_load();
    alf_nodeclass_doc cheapest, balanced;
    alf_nodeclass_of(&cheapest, "cheapest", "{" SPEC_DEMO "}");
    alf_nodeclass_of(&balanced, "balanced", "{" SPEC_DEMO ",\"vSwitchSelectionPolicy\":\"balanced\"}");
    ck_assert_int_eq(zones_used(p, &cheapest.nc, "cheapest"), 1);
    ck_assert_int_ge(zones_used(p, &balanced.nc, "balanced"), 2);
    ns_host_json_free(cheapest.spec);
    ns_host_json_free(balanced.spec);
    ns_plugin_unload(p);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("alibaba_provider");
    TCase *cloud = tcase_create("cloud");
    tcase_set_timeout(cloud, 120);
    tcase_add_test(cloud, test_catalog_labels_prices_allocatable);
    tcase_add_test(cloud, test_builtin_prices_when_describe_price_fails);
    tcase_add_test(cloud, test_launch_tags_and_ack_bootstrap);
    tcase_add_test(cloud, test_custom_mode_user_data_alone);
    tcase_add_test(cloud, test_list_by_cluster_tag);
    tcase_add_test(cloud, test_drift_image_vswitch_security_group);
    tcase_add_test(cloud, test_events_with_deadlines);
    tcase_add_test(cloud, test_no_stock_marks_exactly_the_refused_offering);
    tcase_add_test(cloud, test_vswitch_selection_policy);
    tcase_add_test(cloud, test_nodeclass_status);
    suite_add_tcase(s, cloud);
    return alf_run(s);
}
