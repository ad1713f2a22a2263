/*
 * aws.so's launches against the emulator, read back from the emulator's records: the launch template of each AMI
 * family (image, user data merged with the bootstrap, metadata options, block devices, instance profile), the
 * CreateFleet request (allocation strategy, one override per type x subnet, client token, tags), capacity errors
 * marking exactly the failed offerings, the spot-to-on-demand fallback, drift, and legacy AWSNodeTemplates.
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "provider_fixture.h"

#define OPT(type, zone, cap, price) {sizeof(ns_launch_option), type, zone, cap, price}

static const char *param(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The value of tag `key` in CreateFleet's TagSpecification.<spec>, or NULL. */
static const char *fleet_tag(const cJSON *fleet, int spec, const char *key)
{
    for (int i = 1; i <= 60; i++) {
        char k[64], v[64];
        snprintf(k, sizeof(k), "TagSpecification.%d.Tag.%d.Key", spec, i);
        snprintf(v, sizeof(v), "TagSpecification.%d.Tag.%d.Value", spec, i);
        if (param(fleet, k) && strcmp(param(fleet, k), key) == 0)
            return param(fleet, v);
    }
    return NULL;
}

/* Launches and returns the launch template the instance came from (inside *all; the caller frees it). */
static const cJSON *launch_and_template(const ns_nodeclass *nc, const ns_launch_option *options, size_t n,
                                        ns_launch_request *req, ns_launch_result *r, cJSON **all)
{
    ck_assert_msg(pf_provider->launch(pf_state, req, r) == NS_OK, "launch: %s", pf_host.last_error_message);
    cJSON *state = NULL;
    const cJSON *inst = pf_instance(&state, r->provider_id);
    ck_assert_ptr_nonnull(inst);
    const cJSON *t = pf_template(all, param(inst, "template"));
    ck_assert_ptr_nonnull(t);
    /* the template is tagged with the cluster and node class, and carries the node class's tags */
    const cJSON *tags = cJSON_GetObjectItemCaseSensitive(t, "tags");
    ck_assert_str_eq(param(tags, "karpenter.k8s.aws/cluster"), "demo");
    ck_assert_str_eq(param(tags, "karpenter.k8s.aws/ec2nodeclass"), nc->name);
    const cJSON *own = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(
        (const cJSON *)nc->spec, "tags"), "team");
    if (own)
        ck_assert_str_eq(param(tags, "team"), own->valuestring);
    ck_assert_str_eq(param(cJSON_GetObjectItemCaseSensitive(t, "data"), "ImageId"), r->image_id);
    cJSON_Delete(state);
    return cJSON_GetObjectItemCaseSensitive(t, "data");
}

START_TEST(test_al2023_template_fleet_and_tags)
{
    cJSON *spec;
    ns_nodeclass nc = pf_nodeclass(&spec, "EC2NodeClass", "default",
                                   "{" PF_SPEC_BASE ",\"amiSelectorTerms\":[{\"alias\":\"al2023@latest\"}],"
                                   "\"role\":\"KarpenterNodeRole-demo\",\"tags\":{\"team\":\"web\"},"
                                   "\"userData\":\"#!/bin/bash\\necho custom\\n\","
                                   "\"metadataOptions\":{\"httpPutResponseHopLimit\":3},"
                                   "\"blockDeviceMappings\":[{\"deviceName\":\"/dev/xvda\",\"rootVolume\":true,"
                                   "\"ebs\":{\"volumeSize\":\"80Gi\",\"volumeType\":\"gp3\",\"iops\":4000,"
                                   "\"encrypted\":true}}],\"kubelet\":{\"maxPods\":58}}");
    ns_launch_option options[] = {OPT("m5.large", "us-east-1a", NS_CAPACITY_SPOT, 0.04),
                                  OPT("m5.large", "us-east-1b", NS_CAPACITY_SPOT, 0.041),
                                  OPT("m6g.large", "us-east-1a", NS_CAPACITY_SPOT, 0.042),
                                  OPT("c5.large", "us-east-1a", NS_CAPACITY_ON_DEMAND, 0.085)};
    char token[64];
    pf_token(token, sizeof(token), "al2023");
    ns_label labels[] = {{"karpenter.sh/nodepool", "default"}, {"team", "web"}, {"kubernetes.io/arch", "amd64"}};
    ns_taint taints[] = {{"dedicated", "web", "NoSchedule"}};
    ns_launch_request req = pf_request(&nc, options, 4, token);
    req.labels = labels;
    req.n_labels = 3;
    req.startup_taints = taints;
    req.n_startup_taints = 1;
    ns_launch_result r = {.struct_size = sizeof(r)};
    cJSON *templates;
    const cJSON *data = launch_and_template(&nc, options, 4, &req, &r, &templates);
    ck_assert_str_eq(r.capacity_type, "spot");

    /* the CreateFleet request */
    cJSON *fleets;
    const cJSON *fleet = pf_last_fleet(&fleets);
    ck_assert_str_eq(param(fleet, "Type"), "instant");
    ck_assert_str_eq(param(fleet, "ClientToken"), token);
    ck_assert_str_eq(param(fleet, "SpotOptions.AllocationStrategy"), "price-capacity-optimized");
    ck_assert_str_eq(param(fleet, "TargetCapacitySpecification.DefaultTargetCapacityType"), "spot");
    ck_assert_ptr_null(param(fleet, "OnDemandOptions.AllocationStrategy"));
    /* two images (amd64, arm64): two templates; one override per type x subnet of the spot options */
    ck_assert_ptr_nonnull(param(fleet, "LaunchTemplateConfigs.2.LaunchTemplateSpecification.LaunchTemplateId"));
    ck_assert_ptr_null(param(fleet, "LaunchTemplateConfigs.3.LaunchTemplateSpecification.LaunchTemplateId"));
    int overrides = 0;
    for (int k = 1; k <= 2; k++)
        for (int m = 1; m <= 4; m++) {
            char key[96];
            snprintf(key, sizeof(key), "LaunchTemplateConfigs.%d.Overrides.%d.InstanceType", k, m);
            if (!param(fleet, key))
                continue;
            overrides++;
            snprintf(key, sizeof(key), "LaunchTemplateConfigs.%d.Overrides.%d.SubnetId", k, m);
            ck_assert_ptr_nonnull(param(fleet, key));
            snprintf(key, sizeof(key), "LaunchTemplateConfigs.%d.Overrides.%d.Priority", k, m);
            ck_assert_ptr_null(param(fleet, key));
        }
    ck_assert_int_eq(overrides, 3);
    ck_assert_str_eq(param(fleet, "LaunchTemplateConfigs.1.Overrides.1.SubnetId"), "subnet-0e000000000000000");
    ck_assert_str_eq(param(fleet, "LaunchTemplateConfigs.1.Overrides.2.SubnetId"), "subnet-0e000000000000001");
    ck_assert_str_eq(param(fleet, "TagSpecification.1.ResourceType"), "instance");
    ck_assert_str_eq(param(fleet, "TagSpecification.2.ResourceType"), "volume");
    for (int spec_n = 1; spec_n <= 2; spec_n++) {
        ck_assert_str_eq(fleet_tag(fleet, spec_n, "kubernetes.io/cluster/demo"), "owned");
        ck_assert_str_eq(fleet_tag(fleet, spec_n, "eks:eks-cluster-name"), "demo");
        ck_assert_str_eq(fleet_tag(fleet, spec_n, "karpenter.sh/nodepool"), "default");
        ck_assert_str_eq(fleet_tag(fleet, spec_n, "karpenter.sh/nodeclaim"), token);
        ck_assert_str_eq(fleet_tag(fleet, spec_n, "karpenter.k8s.aws/ec2nodeclass"), "default");
        ck_assert_str_eq(fleet_tag(fleet, spec_n, "team"), "web");
    }
    cJSON_Delete(fleets);

    /* the launch template */
    ck_assert_str_eq(param(data, "ImageId"), strcmp(r.instance_type, "m6g.large") ? "ami-0e000000000000a64"
                                                                                    : "ami-0e000000000000a32");
    ck_assert_str_eq(param(data, "SecurityGroupId.1"), "sg-0e000000000000001");
    ck_assert_str_eq(param(data, "IamInstanceProfile.Name"), "KarpenterNodeRole-demo");
    ck_assert_str_eq(param(data, "MetadataOptions.HttpTokens"), "required");
    ck_assert_str_eq(param(data, "MetadataOptions.HttpEndpoint"), "enabled");
    ck_assert_str_eq(param(data, "MetadataOptions.HttpPutResponseHopLimit"), "3");
    ck_assert_str_eq(param(data, "BlockDeviceMapping.1.DeviceName"), "/dev/xvda");
    ck_assert_str_eq(param(data, "BlockDeviceMapping.1.Ebs.VolumeSize"), "80");
    ck_assert_str_eq(param(data, "BlockDeviceMapping.1.Ebs.Iops"), "4000");
    ck_assert_str_eq(param(data, "BlockDeviceMapping.1.Ebs.Encrypted"), "true");
    const char *ud = param(data, "UserData");
    ck_assert_ptr_nonnull(ud);
    const char *nodeconfig = strstr(ud, "Content-Type: application/node.eks.aws");
    const char *custom = strstr(ud, "echo custom");
    ck_assert(nodeconfig && custom && nodeconfig < custom); /* nodeadm's NodeConfig first */
    ck_assert_ptr_nonnull(strstr(ud, "apiServerEndpoint: 'https://")); /* from eks:DescribeCluster */
    ck_assert_ptr_nonnull(strstr(ud, ".gr7.us-east-1.eks.amazonaws.com'"));
    ck_assert_ptr_nonnull(strstr(ud, "cidr: '10.100.0.0/16'"));
    ck_assert_ptr_nonnull(strstr(ud, "maxPods: 58"));
    ck_assert_ptr_nonnull(strstr(ud, "--node-labels=\"karpenter.sh/nodepool=default,team=web\""));
    ck_assert_ptr_nonnull(strstr(ud, "key: 'dedicated'"));
    cJSON_Delete(templates);

    /* the instance carries the template's security groups; a second launch with the token finds the same one */
    cJSON *state;
    const cJSON *inst = pf_instance(&state, r.provider_id);
    ck_assert_str_eq(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(inst, "groups"), 0)->valuestring,
                     "sg-0e000000000000001");
    cJSON_Delete(state);
    ns_launch_result again = {.struct_size = sizeof(again)};
    ck_assert_int_eq(pf_provider->launch(pf_state, &req, &again), NS_OK);
    ck_assert_str_eq(again.provider_id, r.provider_id);
    cJSON_Delete(spec);
}
END_TEST

START_TEST(test_deleted_template_is_created_again)
{
    cJSON *spec;
    ns_nodeclass nc = pf_nodeclass(&spec, "EC2NodeClass", "default", PF_SPEC_AL2023);
    ns_launch_option options[] = {OPT("m5.large", "us-east-1a", NS_CAPACITY_ON_DEMAND, 0.096)};
    char token[64];
    pf_token(token, sizeof(token), "lt");
    ns_launch_request req = pf_request(&nc, options, 1, token);
    ns_launch_result r = {.struct_size = sizeof(r)};
    ck_assert_int_eq(pf_provider->launch(pf_state, &req, &r), NS_OK);
    cJSON *state;
    const cJSON *inst = pf_instance(&state, r.provider_id);
    char body[128];
    snprintf(body, sizeof(body), "{\"id\":\"%s\"}", param(inst, "template"));
    cJSON_Delete(state);
    pf_control("/_emulator/launch_templates/delete", body);
    /* the provider still knows the template: EC2 refuses it once, then the provider looks again and recreates it */
    pf_token(token, sizeof(token), "lt");
    req = pf_request(&nc, options, 1, token);
    ck_assert_int_eq(pf_provider->launch(pf_state, &req, &r), NS_ERR_NOT_FOUND);
    ck_assert_ptr_nonnull(strstr(pf_host.last_error_message, "InvalidLaunchTemplateId.NotFound"));
    pf_token(token, sizeof(token), "lt");
    req = pf_request(&nc, options, 1, token);
    ck_assert_int_eq(pf_provider->launch(pf_state, &req, &r), NS_OK);
    cJSON_Delete(spec);
}
END_TEST

static int ignore_instance(void *ctx, const ns_instance *inst)
{
    (void)ctx;
    (void)inst;
    return 0;
}

/* How far the emulator's clock was moved since pf_setup set it to the real time. */
static int64_t clock_offset_s;

/* Moves the host's clock and the emulator's together, so signatures stay within EC2's allowed skew. */
static void advance(int64_t seconds)
{
    clock_offset_s += seconds;
    pf_host.clock_ms += seconds * 1000;
    char body[64];
    snprintf(body, sizeof(body), "{\"offset_s\":%lld}", (long long)clock_offset_s);
    pf_control("/_emulator/clock", body);
}

/* Launches one m5.large for the node class and returns the ID of the launch template it came from. */
static void launch_template_id(const ns_nodeclass *nc, char *id, size_t len)
{
    ns_launch_option options[] = {OPT("m5.large", "us-east-1a", NS_CAPACITY_ON_DEMAND, 0.096)};
    char token[64];
    pf_token(token, sizeof(token), "gc");
    ns_launch_request req = pf_request(nc, options, 1, token);
    ns_launch_result r = {.struct_size = sizeof(r)};
    ck_assert_msg(pf_provider->launch(pf_state, &req, &r) == NS_OK, "launch: %s", pf_host.last_error_message);
    cJSON *state;
    const cJSON *inst = pf_instance(&state, r.provider_id);
    ck_assert_ptr_nonnull(inst);
    snprintf(id, len, "%s", param(inst, "template"));
    cJSON_Delete(state);
}

static bool template_exists(const char *id)
{
    cJSON *all = NULL;
    bool found = pf_template(&all, id) != NULL;
    cJSON_Delete(all);
    return found;
}

static void sweep(void)
{
    ck_assert_msg(pf_provider->list_instances(pf_state, ignore_instance, NULL) == NS_OK, "list_instances: %s",
                  pf_host.last_error_message);
}

/* A node class that changes leaves its old launch template unused: a minute after its last launch the sweep that
 * runs with list_instances deletes it (DeleteLaunchTemplate), as Karpenter's launch-template cache eviction does,
 * and keeps the template launches still use. A restarted provider gives the templates it finds a full minute from
 * its first sweep, then deletes the ones nobody launched with (those of a deleted node class). */
START_TEST(test_unused_templates_are_deleted)
{
    clock_offset_s = 0;
    cJSON *spec_old, *spec_new;
    ns_nodeclass old = pf_nodeclass(&spec_old, "EC2NodeClass", "sweep", PF_SPEC_AL2023);
    ns_nodeclass changed = pf_nodeclass(&spec_new, "EC2NodeClass", "sweep",
                                        "{" PF_SPEC_BASE ",\"amiSelectorTerms\":[{\"alias\":\"al2023@latest\"}],"
                                        "\"role\":\"KarpenterNodeRole-demo\",\"detailedMonitoring\":true}");
    char before[64], after[64], again[64];
    launch_template_id(&old, before, sizeof(before));
    advance(30);
    launch_template_id(&changed, after, sizeof(after));
    ck_assert_str_ne(before, after);
    /* 30 s after its last launch the old template is kept */
    sweep();
    ck_assert(template_exists(before) && template_exists(after));
    /* 95 s after: deleted; the changed node class's template, used just now, is kept */
    advance(65);
    launch_template_id(&changed, again, sizeof(again));
    ck_assert_str_eq(again, after);
    sweep();
    ck_assert_msg(!template_exists(before), "the unused template %s is still there", before);
    ck_assert_msg(template_exists(after), "the template in use %s was deleted", after);
    ck_assert_ptr_nonnull(strstr(pf_host.log, "aws launch template deleted: no launch used it"));
    ck_assert_ptr_nonnull(strstr(pf_host.log, before));
    /* a sweep runs at most once a minute: nothing happens 10 s later */
    advance(10);
    sweep();
    ck_assert(template_exists(after));
    /* restarted (the node class deleted meanwhile): the first sweep only notes the template, the one a minute later
     * deletes it */
    pf_reinit();
    sweep();
    ck_assert(template_exists(after));
    advance(61);
    sweep();
    ck_assert_msg(!template_exists(after), "the template %s of the deleted node class is still there", after);
    cJSON_Delete(spec_old);
    cJSON_Delete(spec_new);
}
END_TEST

/* Ephemeral storage offered for two types, one with instance stores (m5d.large) and one without (m5.large). */
typedef struct storage_pair {
    int64_t m5d, m5;
} storage_pair;

static int note_storage(void *ctx, const ns_instance_type *t)
{
    storage_pair *p = ctx;
    if (strcmp(t->name, "m5d.large") == 0)
        p->m5d = t->capacity.ephemeral_storage_bytes;
    else if (strcmp(t->name, "m5.large") == 0)
        p->m5 = t->capacity.ephemeral_storage_bytes;
    return 0;
}

/* instanceStorePolicy RAID0: the launch template's user data has nodeadm make one RAID0 array of the instance stores
 * (AL2023's NodeConfig, as Karpenter writes it), and the instance stores' total (EC2's totalSizeInGB, 75 GB for
 * m5d.large) is the ephemeral storage offered and launched, as Karpenter's ephemeralStorage counts it; a type without
 * instance stores keeps the 20 GiB root volume, and a node class without the policy offers the root volume. */
START_TEST(test_instance_store_raid0)
{
    const int64_t gib = 1024 * 1024 * 1024;
    cJSON *spec_raid, *spec_plain;
    ns_nodeclass raid = pf_nodeclass(&spec_raid, "EC2NodeClass", "raid",
                                     "{" PF_SPEC_BASE ",\"amiSelectorTerms\":[{\"alias\":\"al2023@latest\"}],"
                                     "\"role\":\"KarpenterNodeRole-demo\",\"instanceStorePolicy\":\"RAID0\"}");
    ns_nodeclass plain = pf_nodeclass(&spec_plain, "EC2NodeClass", "plain", PF_SPEC_AL2023);
    storage_pair offered = {0, 0};
    ck_assert_int_eq(pf_provider->list_instance_types(pf_state, &raid, note_storage, &offered), NS_OK);
    ck_assert_int_eq(offered.m5d, 75LL * 1000 * 1000 * 1000);
    ck_assert_int_eq(offered.m5, 20 * gib);
    storage_pair without = {0, 0};
    ck_assert_int_eq(pf_provider->list_instance_types(pf_state, &plain, note_storage, &without), NS_OK);
    ck_assert_int_eq(without.m5d, 20 * gib);

    ns_launch_option options[] = {OPT("m5d.large", "us-east-1a", NS_CAPACITY_ON_DEMAND, 0.113)};
    char token[64];
    pf_token(token, sizeof(token), "raid");
    ns_launch_request req = pf_request(&raid, options, 1, token);
    ns_launch_result r = {.struct_size = sizeof(r)};
    cJSON *templates;
    const cJSON *data = launch_and_template(&raid, options, 1, &req, &r, &templates);
    ck_assert_ptr_nonnull(strstr(param(data, "UserData"), "    name: 'demo'\n  instance:\n    localStorage:\n"
                                                            "      strategy: RAID0\n"));
    /* allocatable: 75 GB less 1 GiB kube-reserved and the 10 % eviction threshold */
    ck_assert_int_eq(r.allocatable.ephemeral_storage_bytes, 75000000000LL - gib - 7500000000LL);
    cJSON_Delete(templates);
    cJSON_Delete(spec_raid);
    cJSON_Delete(spec_plain);
}
END_TEST

START_TEST(test_on_demand_lowest_price)
{
    cJSON *spec;
    ns_nodeclass nc = pf_nodeclass(&spec, "EC2NodeClass", "default", PF_SPEC_AL2023);
    ns_launch_option options[] = {OPT("m5.large", "us-east-1a", NS_CAPACITY_ON_DEMAND, 0.096),
                                  OPT("c5.large", "us-east-1b", NS_CAPACITY_ON_DEMAND, 0.085)};
    char token[64];
    pf_token(token, sizeof(token), "od");
    ns_launch_request req = pf_request(&nc, options, 2, token);
    ns_launch_result r = {.struct_size = sizeof(r)};
    ck_assert_int_eq(pf_provider->launch(pf_state, &req, &r), NS_OK);
    ck_assert_str_eq(r.instance_type, "c5.large");
    ck_assert_str_eq(r.zone, "us-east-1b");
    cJSON *fleets;
    const cJSON *fleet = pf_last_fleet(&fleets);
    ck_assert_str_eq(param(fleet, "OnDemandOptions.AllocationStrategy"), "lowest-price");
    ck_assert_ptr_null(param(fleet, "SpotOptions.AllocationStrategy"));
    cJSON_Delete(fleets);
    cJSON_Delete(spec);
}
END_TEST

typedef struct family_case {
    const char *spec;
    const char *image;
    const char *user_data[3]; /* substrings, in order */
    const char *root_device;
    const char *root_size;
} family_case;

static const family_case FAMILIES[] = {
    {"{" PF_SPEC_BASE ",\"amiSelectorTerms\":[{\"alias\":\"al2@latest\"}],\"role\":\"KarpenterNodeRole-demo\","
     "\"userData\":\"#!/bin/bash\\necho al2-custom\\n\"}",
     "ami-0e00000000000264",
     {"Content-Type: text/x-shellscript", "echo al2-custom", "/etc/eks/bootstrap.sh 'demo' --apiserver-endpoint"},
     "/dev/xvda", "20"},
    {"{" PF_SPEC_BASE ",\"amiSelectorTerms\":[{\"alias\":\"bottlerocket@latest\"}],\"role\":\"KarpenterNodeRole-demo\","
     "\"userData\":\"[settings.host-containers.admin]\\nenabled = true\\n\"}",
     "ami-0e00000000000b64",
     {"[settings.host-containers.admin]\nenabled = true", "[settings.kubernetes]\ncluster-name = \"demo\"",
      "api-server = \"https://"},
     "/dev/xvda", "4"},
    {"{" PF_SPEC_BASE ",\"amiSelectorTerms\":[{\"alias\":\"windows2019@latest\"}],\"role\":\"KarpenterNodeRole-demo\","
     "\"userData\":\"Write-Host custom\"}",
     "ami-0e0000000000w219", {"<powershell>\nWrite-Host custom", "Start-EKSBootstrap.ps1", "-EKSClusterName 'demo'"},
     "/dev/sda1", "50"},
    {"{" PF_SPEC_BASE ",\"amiFamily\":\"Custom\",\"amiSelectorTerms\":[{\"name\":\"team-golden-*\",\"owner\":\"self\"}],"
     "\"role\":\"KarpenterNodeRole-demo\",\"userData\":\"#!/bin/sh\\nmy own bootstrap\\n\"}",
     "ami-0e00000000000c64", {"#!/bin/sh\nmy own bootstrap\n", NULL, NULL}, NULL, NULL},
};

START_TEST(test_family_templates)
{
    const family_case *f = &FAMILIES[_i];
    cJSON *spec;
    ns_nodeclass nc = pf_nodeclass(&spec, "EC2NodeClass", "family", f->spec);
    ns_launch_option options[] = {OPT("m5.large", "us-east-1a", NS_CAPACITY_ON_DEMAND, 0.096)};
    char token[64];
    pf_token(token, sizeof(token), "family");
    ns_launch_request req = pf_request(&nc, options, 1, token);
    ns_launch_result r = {.struct_size = sizeof(r)};
    cJSON *templates;
    const cJSON *data = launch_and_template(&nc, options, 1, &req, &r, &templates);
    ck_assert_str_eq(param(data, "ImageId"), f->image);
    const char *ud = param(data, "UserData"), *at = ud;
    ck_assert_ptr_nonnull(ud);
    for (int i = 0; i < 3 && f->user_data[i]; i++) {
        const char *found = strstr(at, f->user_data[i]);
        ck_assert_msg(found != NULL, "case %d: \"%s\" missing (or out of order) in:\n%s", _i, f->user_data[i], ud);
        at = found;
    }
    if (f->root_device) {
        ck_assert_str_eq(param(data, "BlockDeviceMapping.1.DeviceName"), f->root_device);
        ck_assert_str_eq(param(data, "BlockDeviceMapping.1.Ebs.VolumeSize"), f->root_size);
    } else {
        ck_assert_str_eq(ud, f->user_data[0]); /* Custom: the user's data unchanged */
        ck_assert_ptr_null(param(data, "BlockDeviceMapping.1.DeviceName"));
    }
    cJSON_Delete(templates);
    cJSON_Delete(spec);
}
END_TEST

typedef struct unavailable {
    char items[32][96];
    int n;
} unavailable;

static int collect_unavailable(void *ctx, const ns_instance_type *t)
{
    unavailable *u = ctx;
    for (size_t i = 0; i < t->n_offerings; i++) {
        const ns_offering *o = NS_AT(t->offerings, i);
        if (!o->available && u->n < 32)
            snprintf(u->items[u->n++], sizeof(u->items[0]), "%s/%s/%s", t->name, o->zone, o->capacity_type);
    }
    return 0;
}

START_TEST(test_capacity_errors_mark_exactly_the_failed_offerings)
{
    cJSON *spec;
    ns_nodeclass nc = pf_nodeclass(&spec, "EC2NodeClass", "default", PF_SPEC_AL2023);
    pf_control("/_emulator/faults", "{\"kind\":\"ice\",\"instance_type\":\"m5.large\",\"zone\":\"us-east-1a\","
                                    "\"capacity_type\":\"spot\"}");
    pf_control("/_emulator/faults", "{\"kind\":\"ice\",\"instance_type\":\"m5.large\",\"zone\":\"us-east-1b\","
                                    "\"capacity_type\":\"spot\"}");
    pf_control("/_emulator/faults", "{\"kind\":\"ice\",\"instance_type\":\"c5.large\",\"zone\":\"us-east-1a\","
                                    "\"capacity_type\":\"on-demand\"}");
    /* Spot has no capacity anywhere: the same call falls back to on-demand, where the first (same-price) offering
     * has none either and the second launches. */
    ns_launch_option options[] = {OPT("m5.large", "us-east-1a", NS_CAPACITY_SPOT, 0.04),
                                  OPT("m5.large", "us-east-1b", NS_CAPACITY_SPOT, 0.041),
                                  OPT("c5.large", "us-east-1a", NS_CAPACITY_ON_DEMAND, 0.085),
                                  OPT("c5.large", "us-east-1b", NS_CAPACITY_ON_DEMAND, 0.085)};
    char token[64];
    pf_token(token, sizeof(token), "fallback");
    ns_launch_request req = pf_request(&nc, options, 4, token);
    ns_launch_result r = {.struct_size = sizeof(r)};
    fake_host_clear_error(&pf_host);
    ck_assert_msg(pf_provider->launch(pf_state, &req, &r) == NS_OK, "%s", pf_host.last_error_message);
    /* the launch succeeded and still named exactly the three offerings EC2 refused, for the core's cache */
    ck_assert_int_eq(pf_host.n_unavailable, 3);
    ck_assert_str_eq(pf_host.unavailable[0][0], "m5.large");
    ck_assert_str_eq(pf_host.unavailable[2][0], "c5.large");
    ck_assert_str_eq(pf_host.unavailable[2][1], "us-east-1a");
    ck_assert_str_eq(pf_host.unavailable[2][2], "on-demand");
    ck_assert_str_eq(r.capacity_type, "on-demand");
    ck_assert_str_eq(r.instance_type, "c5.large");
    ck_assert_str_eq(r.zone, "us-east-1b");
    cJSON *state;
    const cJSON *inst = pf_instance(&state, r.provider_id);
    char od_token[72];
    snprintf(od_token, sizeof(od_token), "%s-od", token);
    ck_assert_str_eq(param(inst, "token"), od_token);
    cJSON_Delete(state);
    /* the retry of this launch finds the same instance */
    ns_launch_result again = {.struct_size = sizeof(again)};
    ck_assert_int_eq(pf_provider->launch(pf_state, &req, &again), NS_OK);
    ck_assert_str_eq(again.provider_id, r.provider_id);

    /* the provider keeps no cache of its own: every offering still lists as available */
    unavailable u = {.n = 0};
    ck_assert_int_eq(pf_provider->list_instance_types(pf_state, &nc, collect_unavailable, &u), NS_OK);
    ck_assert_int_eq(u.n, 0);

    /* a launch that gets nothing names exactly the offerings EC2 refused, in the error the core reads */
    ns_launch_option refused[] = {OPT("m5.large", "us-east-1a", NS_CAPACITY_SPOT, 0.04),
                                  OPT("c5.large", "us-east-1a", NS_CAPACITY_ON_DEMAND, 0.085)};
    pf_token(token, sizeof(token), "refused");
    req = pf_request(&nc, refused, 2, token);
    fake_host_clear_error(&pf_host);
    ck_assert_int_eq(pf_provider->launch(pf_state, &req, &r), NS_ERR_INSUFFICIENT_CAPACITY);
    ck_assert_int_eq(pf_host.n_unavailable, 2);
    ck_assert_str_eq(pf_host.unavailable[0][0], "m5.large");
    ck_assert_str_eq(pf_host.unavailable[0][2], "spot");
    ck_assert_str_eq(pf_host.unavailable[1][0], "c5.large");
    ck_assert_str_eq(pf_host.unavailable[1][1], "us-east-1a");
    ck_assert_str_eq(pf_host.unavailable[1][2], "on-demand");
    cJSON_Delete(spec);
}
END_TEST

START_TEST(test_drift)
{
    cJSON *spec;
    ns_nodeclass nc = pf_nodeclass(&spec, "EC2NodeClass", "default", PF_SPEC_AL2023);
    ns_launch_option options[] = {OPT("m5.large", "us-east-1a", NS_CAPACITY_ON_DEMAND, 0.096)};
    char token[64];
    pf_token(token, sizeof(token), "drift");
    ns_launch_request req = pf_request(&nc, options, 1, token);
    ns_launch_result r = {.struct_size = sizeof(r)};
    ck_assert_int_eq(pf_provider->launch(pf_state, &req, &r), NS_OK);
    ns_instance inst = {.struct_size = sizeof(inst)};
    ck_assert_int_eq(pf_provider->get_instance(pf_state, r.provider_id, &inst), NS_OK);
    bool drifted = true;
    char reason[64] = "x";
    ck_assert_int_eq(pf_provider->check_drift(pf_state, &inst, &nc, &drifted, reason, sizeof(reason)), NS_OK);
    ck_assert(!drifted);
    ck_assert_str_eq(reason, "");

    /* a new AMI is published for the alias: the instance's image has drifted */
    const char *param_name = "/aws/service/eks/optimized-ami/1.30/amazon-linux-2023/x86_64/standard/recommended/image_id";
    char body[256];
    snprintf(body, sizeof(body), "{\"name\":\"%s\",\"value\":\"ami-0e0000000000a64b\"}", param_name);
    pf_control("/_emulator/ssm", body);
    ck_assert_int_eq(pf_provider->check_drift(pf_state, &inst, &nc, &drifted, reason, sizeof(reason)), NS_OK);
    ck_assert(drifted);
    ck_assert_str_eq(reason, "AMIDrift");
    snprintf(body, sizeof(body), "{\"name\":\"%s\",\"value\":\"ami-0e000000000000a64\"}", param_name);
    pf_control("/_emulator/ssm", body);

    /* the node class now selects only another zone's subnet */
    cJSON *other;
    ns_nodeclass moved = pf_nodeclass(&other, "EC2NodeClass", "default",
                                      "{\"subnetSelectorTerms\":[{\"id\":\"subnet-0e000000000000001\"}],"
                                      "\"securityGroupSelectorTerms\":[{\"id\":\"sg-0e000000000000001\"}],"
                                      "\"amiSelectorTerms\":[{\"alias\":\"al2023@latest\"}],\"role\":\"r\"}");
    ck_assert_int_eq(pf_provider->check_drift(pf_state, &inst, &moved, &drifted, reason, sizeof(reason)), NS_OK);
    ck_assert_str_eq(reason, "SubnetDrift");
    cJSON_Delete(other);

    /* the node class now selects a second security group too */
    ns_nodeclass groups = pf_nodeclass(&other, "EC2NodeClass", "default",
                                       "{" PF_SPEC_BASE ",\"amiSelectorTerms\":[{\"alias\":\"al2023@latest\"}],"
                                       "\"role\":\"r\"}");
    cJSON_ReplaceItemInObject(other, "securityGroupSelectorTerms",
                              cJSON_Parse("[{\"tags\":{\"karpenter.sh/discovery\":\"demo\"}},"
                                          "{\"id\":\"sg-0e000000000000002\"}]"));
    ck_assert_int_eq(pf_provider->check_drift(pf_state, &inst, &groups, &drifted, reason, sizeof(reason)), NS_OK);
    ck_assert(drifted);
    ck_assert_str_eq(reason, "SecurityGroupDrift");
    cJSON_Delete(other);

    ck_assert_int_eq(pf_provider->terminate(pf_state, r.provider_id, NULL), NS_OK);
    ck_assert_int_eq(pf_provider->get_instance(pf_state, r.provider_id, &inst), NS_ERR_NOT_FOUND);
    ck_assert_int_eq(pf_provider->check_drift(pf_state, &inst, &nc, &drifted, reason, sizeof(reason)),
                     NS_ERR_NOT_FOUND);
    cJSON_Delete(spec);
}
END_TEST

START_TEST(test_instance_profile_and_legacy_template)
{
    cJSON *spec;
    ns_nodeclass nc = pf_nodeclass(&spec, "EC2NodeClass", "default",
                                   "{" PF_SPEC_BASE ",\"amiSelectorTerms\":[{\"alias\":\"al2023@latest\"}],"
                                   "\"role\":\"NoSuchRole\"}");
    ns_launch_option options[] = {OPT("m5.large", "us-east-1a", NS_CAPACITY_ON_DEMAND, 0.096)};
    char token[64];
    pf_token(token, sizeof(token), "profile");
    ns_launch_request req = pf_request(&nc, options, 1, token);
    ns_launch_result r = {.struct_size = sizeof(r)};
    ck_assert_int_eq(pf_provider->launch(pf_state, &req, &r), NS_ERR_INVALID_CONFIG);
    ck_assert_ptr_nonnull(strstr(pf_host.last_error_message, "Invalid IAM Instance Profile name"));
    cJSON_Delete(spec);

    /* an AWSNodeTemplate: selector maps, AL2 by default, an instance profile */
    nc = pf_nodeclass(&spec, "AWSNodeTemplate", "legacy",
                      "{\"subnetSelector\":{\"aws-ids\":\"subnet-0e000000000000000,subnet-0e000000000000001\"},"
                      "\"securityGroupSelector\":{\"karpenter.sh/discovery\":\"demo\"},"
                      "\"instanceProfile\":\"KarpenterNodeInstanceProfile-demo\",\"tags\":{\"env\":\"test\"}}");
    pf_token(token, sizeof(token), "legacy");
    req = pf_request(&nc, options, 1, token);
    cJSON *templates;
    const cJSON *data = launch_and_template(&nc, options, 1, &req, &r, &templates);
    ck_assert_str_eq(param(data, "ImageId"), "ami-0e00000000000264");
    ck_assert_str_eq(param(data, "IamInstanceProfile.Name"), "KarpenterNodeInstanceProfile-demo");
    ck_assert_str_eq(param(data, "MetadataOptions.HttpPutResponseHopLimit"), "2");
    ck_assert_ptr_nonnull(strstr(param(data, "UserData"), "/etc/eks/bootstrap.sh 'demo'"));
    cJSON_Delete(templates);
    cJSON *fleets;
    const cJSON *fleet = pf_last_fleet(&fleets);
    ck_assert_str_eq(fleet_tag(fleet, 1, "env"), "test");
    ck_assert_str_eq(fleet_tag(fleet, 1, "karpenter.k8s.aws/ec2nodeclass"), "legacy");
    cJSON_Delete(fleets);
    cJSON_Delete(spec);
}
END_TEST

static int request_count(const char *action)
{
    cJSON *st = pf_control_get("/_emulator/state");
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(st, "requests"), action);
    int count = cJSON_IsNumber(n) ? n->valueint : 0;
    cJSON_Delete(st);
    return count;
}

START_TEST(test_cluster_from_options_or_eks)
{
    cJSON *spec;
    ns_nodeclass nc = pf_nodeclass(&spec, "EC2NodeClass", "default", PF_SPEC_AL2023);
    ns_launch_option options[] = {OPT("m5.large", "us-east-1a", NS_CAPACITY_ON_DEMAND, 0.096)};
    char token[64];
    ns_launch_result r = {.struct_size = sizeof(r)};

    pf_option("cluster_endpoint", "https://api.demo.example");
    pf_option("cluster_ca_bundle", "Q0FCVU5ETEU=");
    pf_reinit();
    int asked = request_count("DescribeCluster");
    pf_token(token, sizeof(token), "endpoint");
    ns_launch_request req = pf_request(&nc, options, 1, token);
    cJSON *templates;
    const cJSON *data = launch_and_template(&nc, options, 1, &req, &r, &templates);
    ck_assert_ptr_nonnull(strstr(param(data, "UserData"), "apiServerEndpoint: 'https://api.demo.example'"));
    ck_assert_ptr_nonnull(strstr(param(data, "UserData"), "certificateAuthority: 'Q0FCVU5ETEU='"));
    ck_assert_int_eq(request_count("DescribeCluster"), asked);
    cJSON_Delete(templates);

    /* no endpoint option and a cluster EKS does not know: the launch says so */
    pf_option("cluster_endpoint", NULL);
    pf_option("cluster_ca_bundle", NULL);
    pf_option("cluster_name", "nowhere");
    pf_reinit();
    pf_token(token, sizeof(token), "nowhere");
    req = pf_request(&nc, options, 1, token);
    ck_assert_int_eq(pf_provider->launch(pf_state, &req, &r), NS_ERR_NOT_FOUND);
    ck_assert_ptr_nonnull(strstr(pf_host.last_error_message, "ResourceNotFoundException"));
    cJSON_Delete(spec);
}
END_TEST

int main(void)
{
    if (pf_start() != 0)
        return EXIT_FAILURE;
    Suite *s = suite_create("aws_provider_launch");
    TCase *tc = tcase_create("launch");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, pf_setup, pf_teardown);
    tcase_add_test(tc, test_al2023_template_fleet_and_tags);
    tcase_add_test(tc, test_on_demand_lowest_price);
    tcase_add_test(tc, test_deleted_template_is_created_again);
    tcase_add_test(tc, test_unused_templates_are_deleted);
    tcase_add_test(tc, test_instance_store_raid0);
    tcase_add_loop_test(tc, test_family_templates, 0, (int)(sizeof(FAMILIES) / sizeof(FAMILIES[0])));
    tcase_add_test(tc, test_capacity_errors_mark_exactly_the_failed_offerings);
    tcase_add_test(tc, test_drift);
    tcase_add_test(tc, test_instance_profile_and_legacy_template);
    tcase_add_test(tc, test_cluster_from_options_or_eks);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    pf_stop();
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
