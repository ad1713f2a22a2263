/* Reading and validating EC2NodeClass (v1, v1beta1) and AWSNodeTemplate (v1alpha1) specs: the normalised view of
 * valid ones, and for each mistake the message naming the field. */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws_nodeclass_spec.h"
#include "fake_host.h"

static fake_host host;
static char err[512];
static cJSON *doc;

#define SUBNETS "\"subnetSelectorTerms\":[{\"tags\":{\"karpenter.sh/discovery\":\"demo\"}}]"
#define GROUPS "\"securityGroupSelectorTerms\":[{\"tags\":{\"karpenter.sh/discovery\":\"demo\"}}]"
#define BASE SUBNETS "," GROUPS ",\"role\":\"KarpenterNodeRole-demo\""

static int parse(const char *api, const char *kind, const char *spec, aws_nodeclass_spec *out)
{
    cJSON_Delete(doc);
    doc = cJSON_Parse(spec);
    ck_assert_msg(doc != NULL, "bad test JSON: %s", spec);
    ns_nodeclass nc = {sizeof(nc), api, kind, "default", (const ns_json *)doc};
    err[0] = '\0';
    return aws_nodeclass_spec_parse(&host.table, &nc, out, err, sizeof(err));
}

static void setup(void)
{
    fake_host_init(&host);
    doc = NULL;
}

static void teardown(void)
{
    cJSON_Delete(doc);
    doc = NULL;
}

START_TEST(test_v1_alias)
{
    aws_nodeclass_spec s;
    ck_assert_int_eq(parse("karpenter.k8s.aws/v1", "EC2NodeClass", "{" BASE ",\"amiSelectorTerms\":[{\"alias\":"
                                                                   "\"al2023@latest\"}]}", &s), NS_OK);
    ck_assert_int_eq(s.family, AWS_FAMILY_AL2023);
    ck_assert_str_eq(s.alias_version, "latest");
    ck_assert_uint_eq(s.n_amis, 0);
    ck_assert_uint_eq(s.n_subnets, 1);
    ck_assert_str_eq(s.subnets[0].tags[0].key, "karpenter.sh/discovery");
    ck_assert_str_eq(s.role, "KarpenterNodeRole-demo");
    ck_assert_str_eq(s.http_tokens, "required");
    ck_assert_int_eq(s.http_put_response_hop_limit, 1);
    ck_assert_str_eq(s.http_endpoint, "enabled");
    ck_assert_uint_eq(s.n_block_devices, 0);

    ck_assert_int_eq(parse("karpenter.k8s.aws/v1", "EC2NodeClass", "{" BASE ",\"amiSelectorTerms\":[{\"alias\":"
                                                                   "\"bottlerocket@v1.20.3\"}]}", &s), NS_OK);
    ck_assert_int_eq(s.family, AWS_FAMILY_BOTTLEROCKET);
    ck_assert_str_eq(s.alias_version, "v1.20.3");
    ck_assert_int_eq(parse("karpenter.k8s.aws/v1", "EC2NodeClass", "{" BASE ",\"amiFamily\":\"Windows2022\","
                                                                   "\"amiSelectorTerms\":[{\"alias\":"
                                                                   "\"windows2022@latest\"}]}", &s), NS_OK);
    ck_assert(aws_ami_family_windows(s.family));
    ck_assert_str_eq(aws_ami_family_windows_build(s.family), "10.0.20348");
}
END_TEST

START_TEST(test_v1_selectors_and_launch_fields)
{
    aws_nodeclass_spec s;
    const char *spec =
        "{\"subnetSelectorTerms\":[{\"id\":\"subnet-1\"},{\"tags\":{\"Name\":\"*\",\"tier\":\"private\"}}],"
        "\"securityGroupSelectorTerms\":[{\"name\":\"nodes\"},{\"id\":\"sg-1\"}],"
        "\"amiFamily\":\"AL2\",\"amiSelectorTerms\":[{\"id\":\"ami-1\"},{\"name\":\"my-ami-*\",\"owner\":\"self\"}],"
        "\"instanceProfile\":\"Profile\",\"userData\":\"#!/bin/bash\\n\",\"tags\":{\"team\":\"web\"},"
        "\"metadataOptions\":{\"httpTokens\":\"optional\",\"httpPutResponseHopLimit\":2,\"httpProtocolIPv6\":"
        "\"enabled\"},\"blockDeviceMappings\":[{\"deviceName\":\"/dev/xvda\",\"rootVolume\":true,\"ebs\":{"
        "\"volumeSize\":\"100Gi\",\"volumeType\":\"gp3\",\"iops\":3000,\"throughput\":125,\"encrypted\":true,"
        "\"kmsKeyID\":\"arn:aws:kms:us-east-1:1:key/x\",\"deleteOnTermination\":true}},{\"deviceName\":\"/dev/xvdb\","
        "\"ebs\":{\"volumeSize\":\"1T\",\"snapshotID\":\"snap-1\"}}],"
        "\"kubelet\":{\"maxPods\":58,\"clusterDNS\":[\"10.100.0.10\"],\"evictionHard\":{\"memory.available\":\"5%\"}},"
        "\"detailedMonitoring\":true,\"associatePublicIPAddress\":false,\"instanceStorePolicy\":\"RAID0\","
        "\"context\":\"ctx\",\"capacityReservationSelectorTerms\":[]}";
    ck_assert_msg(parse("karpenter.k8s.aws/v1", "EC2NodeClass", spec, &s) == NS_OK, "%s", err);
    ck_assert_int_eq(s.family, AWS_FAMILY_AL2);
    ck_assert_ptr_null(s.alias_version);
    ck_assert_uint_eq(s.n_subnets, 2);
    ck_assert_str_eq(s.subnets[0].id, "subnet-1");
    ck_assert_uint_eq(s.subnets[1].n_tags, 2);
    ck_assert_str_eq(s.security_groups[0].name, "nodes");
    ck_assert_uint_eq(s.n_amis, 2);
    ck_assert_str_eq(s.amis[1].owner, "self");
    ck_assert_str_eq(s.instance_profile, "Profile");
    ck_assert_ptr_null(s.role);
    ck_assert_str_eq(s.http_tokens, "optional");
    ck_assert_str_eq(s.http_protocol_ipv6, "enabled");
    ck_assert_int_eq(s.http_put_response_hop_limit, 2);
    ck_assert_uint_eq(s.n_block_devices, 2);
    ck_assert(s.block_devices[0].root_volume);
    ck_assert_int_eq(s.block_devices[0].volume_size_gib, 100);
    ck_assert_int_eq(s.block_devices[0].encrypted, 1);
    ck_assert_int_eq(s.block_devices[1].volume_size_gib, 932); /* 10^12 bytes, rounded up to GiB */
    ck_assert_int_eq(s.block_devices[1].encrypted, -1);
    ck_assert_int_eq(s.max_pods, 58);
    ck_assert_str_eq(s.cluster_dns, "10.100.0.10");
    ck_assert_uint_eq(s.n_tags, 1);
    ck_assert_int_eq(s.detailed_monitoring, 1);
    ck_assert_int_eq(s.associate_public_ip, 0);
}
END_TEST

START_TEST(test_v1beta1_and_legacy)
{
    aws_nodeclass_spec s;
    ck_assert_msg(parse("karpenter.k8s.aws/v1beta1", "EC2NodeClass",
                        "{" BASE ",\"amiFamily\":\"Bottlerocket\"}", &s) == NS_OK, "%s", err);
    ck_assert_int_eq(s.family, AWS_FAMILY_BOTTLEROCKET);
    ck_assert_str_eq(s.alias_version, "latest");
    ck_assert_int_eq(s.http_put_response_hop_limit, 2);

    const char *legacy = "{\"subnetSelector\":{\"aws-ids\":\"subnet-1, subnet-2,subnet-3\"},"
                         "\"securityGroupSelector\":{\"karpenter.sh/discovery\":\"demo\",\"tier\":\"*\"},"
                         "\"amiSelector\":{\"aws::name\":\"eks-*\",\"aws::owners\":\"self,602401143452\","
                         "\"team\":\"web\"},\"instanceProfile\":\"Profile\",\"userData\":\"x\"}";
    ck_assert_msg(parse("karpenter.k8s.aws/v1alpha1", "AWSNodeTemplate", legacy, &s) == NS_OK, "%s", err);
    ck_assert(s.legacy);
    ck_assert_int_eq(s.family, AWS_FAMILY_AL2);
    ck_assert_uint_eq(s.n_subnets, 3);
    ck_assert_str_eq(s.subnets[1].id, "subnet-2");
    ck_assert_str_eq(s.subnets[2].id, "subnet-3");
    ck_assert_uint_eq(s.n_security_groups, 1);
    ck_assert_uint_eq(s.security_groups[0].n_tags, 2);
    ck_assert_uint_eq(s.n_amis, 2);
    ck_assert_str_eq(s.amis[0].owner, "self");
    ck_assert_str_eq(s.amis[1].owner, "602401143452");
    ck_assert_str_eq(s.amis[1].name, "eks-*");
    ck_assert_str_eq(s.amis[1].tags[0].value, "web");
    ck_assert_ptr_null(s.alias_version);
    ck_assert_msg(parse("karpenter.k8s.aws/v1alpha1", "AWSNodeTemplate",
                        "{\"subnetSelector\":{\"a\":\"b\"},\"securityGroupSelector\":{\"a\":\"b\"},\"amiFamily\":"
                        "\"Windows2019\",\"instanceProfile\":\"P\"}", &s) == NS_OK, "%s", err);
    ck_assert_int_eq(s.family, AWS_FAMILY_WINDOWS2019);
    ck_assert_str_eq(s.alias_version, "latest");
}
END_TEST

typedef struct bad_case {
    const char *api, *kind, *spec, *message;
} bad_case;

#define V1 "karpenter.k8s.aws/v1", "EC2NodeClass"
#define ALIAS ",\"amiSelectorTerms\":[{\"alias\":\"al2023@latest\"}]"
#define LEGACY "karpenter.k8s.aws/v1alpha1", "AWSNodeTemplate"
static const bad_case BAD[] = {
    {V1, "{" BASE ALIAS ",\"bogus\":1}", "EC2NodeClass default: spec.bogus: unknown field"},
    {V1, "{\"subnetSelectorTerms\":[{\"name\":\"x\"}]," GROUPS ",\"role\":\"r\"" ALIAS "}",
     "spec.subnetSelectorTerms[0].name: unknown field"},
    {V1, "{" GROUPS ",\"role\":\"r\"" ALIAS "}", "spec.subnetSelectorTerms must be a non-empty array"},
    {V1, "{\"subnetSelectorTerms\":[]," GROUPS ",\"role\":\"r\"" ALIAS "}", "spec.subnetSelectorTerms must be a non-empty array"},
    {V1, "{\"subnetSelectorTerms\":[{\"id\":\"s\",\"tags\":{\"a\":\"b\"}}]," GROUPS ",\"role\":\"r\"" ALIAS "}",
     "spec.subnetSelectorTerms[0]: 'id' is mutually exclusive"},
    {V1, "{\"subnetSelectorTerms\":[{}]," GROUPS ",\"role\":\"r\"" ALIAS "}", "expected at least one of tags, id"},
    {V1, "{\"subnetSelectorTerms\":[{\"tags\":{\"a\":\"\"}}]," GROUPS ",\"role\":\"r\"" ALIAS "}",
     "empty tag keys or values aren't supported"},
    {V1, "{" BASE ",\"amiSelectorTerms\":[{\"alias\":\"al2023@latest\"},{\"id\":\"ami-1\"}]}",
     "'alias' is mutually exclusive"},
    {V1, "{" BASE ",\"amiSelectorTerms\":[{\"alias\":\"al2023@latest\",\"id\":\"ami-1\"}]}",
     "spec.amiSelectorTerms[0]: 'id' is mutually exclusive"},
    {V1, "{" BASE ",\"amiSelectorTerms\":[{\"alias\":\"al2024@latest\"}]}", "want FAMILY@VERSION"},
    {V1, "{" BASE ",\"amiSelectorTerms\":[{\"alias\":\"al2023\"}]}", "want FAMILY@VERSION"},
    {V1, "{" BASE ",\"amiSelectorTerms\":[{\"alias\":\"windows2019@v2024\"}]}", "may only specify version 'latest'"},
    {V1, "{" BASE ",\"amiSelectorTerms\":[{\"id\":\"ami-1\"}]}", "must specify amiFamily if amiSelectorTerms does not"},
    {V1, "{" BASE ",\"amiFamily\":\"Bottlerocket\"" ALIAS "}", "spec.amiFamily Bottlerocket does not match"},
    {V1, "{" BASE ",\"amiFamily\":\"AL3\",\"amiSelectorTerms\":[{\"id\":\"ami-1\"}]}", "spec.amiFamily: \"AL3\" is not one of"},
    {V1, "{" BASE "}", "spec.amiSelectorTerms must be a non-empty array"},
    {V1, "{" BASE ",\"amiSelectorTerms\":[{\"owner\":\"self\"}]}", "'owner' needs 'name' or 'tags'"},
    {V1, "{" SUBNETS "," GROUPS ALIAS "}", "must specify exactly one of ['role', 'instanceProfile']"},
    {V1, "{" BASE ",\"instanceProfile\":\"p\"" ALIAS "}", "must specify exactly one of ['role', 'instanceProfile']"},
    {V1, "{" BASE ALIAS ",\"metadataOptions\":{\"httpTokens\":\"maybe\"}}",
     "spec.metadataOptions.httpTokens: \"maybe\" is not one of required, optional"},
    {V1, "{" BASE ALIAS ",\"metadataOptions\":{\"httpPutResponseHopLimit\":0}}",
     "spec.metadataOptions.httpPutResponseHopLimit must be a whole number from 1 to 64"},
    {V1, "{" BASE ALIAS ",\"metadataOptions\":{\"httpTokenz\":\"required\"}}",
     "spec.metadataOptions.httpTokenz: unknown field"},
    {V1, "{" BASE ALIAS ",\"blockDeviceMappings\":[{\"deviceName\":\"/dev/a\",\"rootVolume\":true},"
         "{\"deviceName\":\"/dev/b\",\"rootVolume\":true}]}", "must have only one blockDeviceMappings with rootVolume"},
    {V1, "{" BASE ALIAS ",\"blockDeviceMappings\":[{\"deviceName\":\"/dev/a\",\"ebs\":{\"volumeSize\":\"20Qi\"}}]}",
     "spec.blockDeviceMappings[0].ebs.volumeSize: \"20Qi\" is not a quantity"},
    {V1, "{" BASE ALIAS ",\"blockDeviceMappings\":[{\"deviceName\":\"/dev/a\",\"ebs\":{\"volumeType\":\"gp9\"}}]}",
     "volumeType: \"gp9\" is not one of"},
    {V1, "{" BASE ALIAS ",\"blockDeviceMappings\":[{\"deviceName\":\"/dev/a\",\"ebs\":{\"size\":1}}]}",
     "spec.blockDeviceMappings[0].ebs.size: unknown field"},
    {V1, "{" BASE ALIAS ",\"blockDeviceMappings\":[{\"ebs\":{}}]}", "spec.blockDeviceMappings[0].deviceName is required"},
    {V1, "{" BASE ALIAS ",\"tags\":{\"kubernetes.io/cluster/demo\":\"owned\"}}",
     "spec.tags.kubernetes.io/cluster/demo: the tag is restricted"},
    {V1, "{" BASE ALIAS ",\"tags\":{\"karpenter.sh/nodepool\":\"x\"}}", "the tag is restricted"},
    {V1, "{" BASE ALIAS ",\"kubelet\":{\"maxPod\":3}}", "spec.kubelet.maxPod: unknown field"},
    {V1, "{" BASE ALIAS ",\"kubelet\":{\"maxPods\":1.5}}", "spec.kubelet.maxPods must be a whole number"},
    {V1, "{" BASE ALIAS ",\"userData\":3}", "spec.userData must be a non-empty string"},
    {V1, "{" BASE ALIAS ",\"detailedMonitoring\":\"yes\"}", "spec.detailedMonitoring must be true or false"},
    {V1, "{" BASE ALIAS ",\"instanceStorePolicy\":\"RAID5\"}", "spec.instanceStorePolicy: \"RAID5\" is not one of RAID0"},
    {"karpenter.k8s.aws/v1beta1", "EC2NodeClass", "{" BASE ",\"amiFamily\":\"AL2\",\"kubelet\":{}}",
     "spec.kubelet: unknown field"},
    {"karpenter.k8s.aws/v1beta1", "EC2NodeClass", "{" BASE "}", "must specify amiFamily"},
    {"karpenter.k8s.aws/v1beta1", "EC2NodeClass", "{" BASE ALIAS ",\"amiFamily\":\"AL2023\"}",
     "spec.amiSelectorTerms[0].alias: unknown field"},
    {"nodesmith.io/v1", "SimNodeClass", "{}", "SimNodeClass default: nodesmith.io/v1 is not an AWS node class"},
    {"nodesmith.io/v1", "SimNodeClass", "{}", "is not an AWS node class"},
    {"karpenter.k8s.aws/v2", "EC2NodeClass", "{}", "is not an AWS node class"},
    {LEGACY, "{\"subnetSelector\":{\"a\":\"b\"},\"securityGroupSelector\":{\"a\":\"b\"},\"instanceProfile\":\"p\","
             "\"role\":\"r\"}", "AWSNodeTemplate default: spec.role: unknown field"},
    {LEGACY, "{\"subnetSelector\":{\"a\":\"b\"},\"securityGroupSelector\":{\"a\":\"b\"},\"instanceProfile\":\"p\","
             "\"launchTemplate\":\"lt\"}", "spec.launchTemplate: launching from a launch template"},
    {LEGACY, "{\"subnetSelector\":{\"a\":\"b\"},\"securityGroupSelector\":{\"a\":\"b\"},\"instanceProfile\":\"p\","
             "\"amiFamily\":\"Ubuntu\"}", "Ubuntu is not supported"},
    {LEGACY, "{\"subnetSelector\":{\"a\":\"b\"},\"securityGroupSelector\":{\"a\":\"b\"}}",
     "spec.instanceProfile is required"},
    {LEGACY, "{\"securityGroupSelector\":{\"a\":\"b\"},\"instanceProfile\":\"p\"}", "spec.subnetSelector is required"},
    {LEGACY, "{\"subnetSelector\":{\"aws::bogus\":\"b\"},\"securityGroupSelector\":{\"a\":\"b\"},\"instanceProfile\":"
             "\"p\"}", "spec.subnetSelector.aws::bogus: unknown selector key"},
    {LEGACY, "{\"subnetSelector\":{\"a\":\"b\"},\"securityGroupSelector\":{\"a\":\"b\"},\"instanceProfile\":\"p\","
             "\"amiFamily\":\"Custom\"}", "amiFamily Custom needs an amiSelector"},
    {LEGACY, "{\"subnetSelector\":{\"a\":\"b\"},\"securityGroupSelector\":{\"a\":\"b\"},\"instanceProfile\":\"p\","
             "\"amiSelector\":{\"aws::owners\":\"self\"}}", "aws::owners needs aws::name or tags"},
};

START_TEST(test_refusals)
{
    for (size_t i = 0; i < sizeof(BAD) / sizeof(BAD[0]); i++) {
        aws_nodeclass_spec s;
        int rc = parse(BAD[i].api, BAD[i].kind, BAD[i].spec, &s);
        ck_assert_msg(rc == NS_ERR_INVALID_CONFIG, "case %zu was accepted: %s", i, BAD[i].spec);
        ck_assert_msg(strstr(err, BAD[i].message) != NULL, "case %zu: want \"%s\" in \"%s\"", i, BAD[i].message, err);
    }
}
END_TEST

/* capacityReservationSelectorTerms: the terms as read, and Karpenter's CRD refusals */
#define CR(terms) "{" BASE ALIAS ",\"capacityReservationSelectorTerms\":" terms "}"
START_TEST(test_capacity_reservation_terms)
{
    aws_nodeclass_spec s;
    ck_assert_int_eq(parse(V1, CR("[{\"id\":\"cr-0e12ab\"},{\"tags\":{\"team\":\"ml\",\"env\":\"*\"},"
                                  "\"ownerID\":\"444455556666\"},{\"instanceMatchCriteria\":\"open\"}]"), &s),
                     NS_OK);
    ck_assert_uint_eq(s.n_reservations, 3);
    ck_assert_str_eq(s.reservations[0].id, "cr-0e12ab");
    ck_assert_uint_eq(s.reservations[0].n_tags, 0);
    ck_assert_ptr_null(s.reservations[1].id);
    ck_assert_str_eq(s.reservations[1].owner_id, "444455556666");
    ck_assert_uint_eq(s.reservations[1].n_tags, 2);
    ck_assert_str_eq(s.reservations[1].tags[1].value, "*");
    ck_assert_str_eq(s.reservations[2].match_criteria, "open");
    ck_assert_int_eq(parse(V1, "{" BASE ALIAS "}", &s), NS_OK);
    ck_assert_uint_eq(s.n_reservations, 0);
    static const struct {
        const char *terms, *message;
    } bad[] = {
        {"{}", "spec.capacityReservationSelectorTerms must be a list"},
        {"[{}]", "spec.capacityReservationSelectorTerms[0]: expected at least one, got none"},
        {"[{\"ownerID\":\"444455556666\"}]", "expected at least one, got none, ['tags', 'id'"},
        {"[{\"id\":\"cr-1\",\"ownerID\":\"444455556666\"}]", "'id' is mutually exclusive"},
        {"[{\"id\":\"cr-1\",\"tags\":{\"a\":\"b\"}}]", "'id' is mutually exclusive"},
        {"[{\"id\":\"r-123\"}]", "spec.capacityReservationSelectorTerms[0].id: \"r-123\" does not match"},
        {"[{\"id\":\"cr-ABC\"}]", "does not match ^cr-[0-9a-z]+$"},
        {"[{\"tags\":{\"a\":\"b\"},\"ownerID\":\"12345\"}]", "ownerID: \"12345\" is not a 12-digit"},
        {"[{\"tags\":{\"a\":\"\"}}]", "[0].tags: empty tag keys or values aren't supported"},
        {"[{\"instanceMatchCriteria\":\"any\"}]", "instanceMatchCriteria: \"any\" is not one of open, targeted"},
        {"[{\"tags\":{\"a\":\"b\"}},{\"name\":\"x\"}]", "spec.capacityReservationSelectorTerms[1].name: unknown field"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char spec[512];
        snprintf(spec, sizeof(spec), CR("%s"), bad[i].terms);
        ck_assert_msg(parse(V1, spec, &s) == NS_ERR_INVALID_CONFIG, "case %zu was accepted: %s", i, spec);
        ck_assert_msg(strstr(err, bad[i].message) != NULL, "case %zu: want \"%s\" in \"%s\"", i, bad[i].message, err);
    }
    /* EC2NodeClass v1beta1 has no such field */
    ck_assert_int_eq(parse("karpenter.k8s.aws/v1beta1", "EC2NodeClass",
                           "{" BASE ",\"amiFamily\":\"AL2023\",\"capacityReservationSelectorTerms\":[{\"id\":\"cr-1\"}]}",
                           &s), NS_ERR_INVALID_CONFIG);
    ck_assert_ptr_nonnull(strstr(err, "spec.capacityReservationSelectorTerms: unknown field"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("aws_nodeclass_spec");
    TCase *tc = tcase_create("spec");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_v1_alias);
    tcase_add_test(tc, test_v1_selectors_and_launch_fields);
    tcase_add_test(tc, test_v1beta1_and_legacy);
    tcase_add_test(tc, test_refusals);
    tcase_add_test(tc, test_capacity_reservation_terms);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
