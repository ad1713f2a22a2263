/*
 * Unit tests of alibaba.so's pure modules: the ACS3-HMAC-SHA256 signature against the official published vector, the
 * RPC V1 (HMAC-SHA1) classic vector, percent-encoding, the node class reader (every field's rule, each refusal naming
 * the field), quantities, the attach-script bootstrap and the MIME merge, MNS answers, the API error categories.
 */
#include <check.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ali_client.h"
#include "ali_mns.h"
#include "ali_nodeclass_spec.h"
#include "ali_provider.h"
#include "ali_sign.h"
#include "prov_digest.h"
#include "json/host_json.h"

static char last_error[1024];

static int fake_error(ns_host_ctx *ctx, int code, const char *file, int line, const char *fmt, ...)
{
    (void)ctx;
    (void)file;
    (void)line;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof(last_error), fmt, ap);
    va_end(ap);
    return code;
}

static ns_host host = {
    .abi_version = NS_PROVIDER_ABI_VERSION,
    .struct_size = sizeof(ns_host),
    .error = fake_error,
    .json_parse = ns_host_json_parse,
    .json_free = ns_host_json_free,
    .json_type = ns_host_json_type,
    .json_get = ns_host_json_get,
    .json_size = ns_host_json_size,
    .json_at = ns_host_json_at,
    .json_key = ns_host_json_key,
    .json_string = ns_host_json_string,
    .json_number = ns_host_json_number,
    .json_bool = ns_host_json_bool,
};

START_TEST(test_acs3_official_vector)
{
    ali_params q = {0}, h = {0};
    ali_params_add(&q, "RegionId", "cn-shanghai");
    ali_params_add(&q, "ImageId", "win2019_1809_x64_dtc_zh-cn_40G_alibase_20230811.vhd");
    char sha[65];
    ck_assert_int_eq(prov_sha256_hex("", 0, sha), NS_OK);
    ck_assert_str_eq(sha, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    ali_params_add(&h, "host", "ecs.cn-shanghai.aliyuncs.com");
    ali_params_add(&h, "x-acs-action", "RunInstances");
    ali_params_add(&h, "x-acs-version", "2014-05-26");
    ali_params_add(&h, "x-acs-date", "2023-10-26T10:22:32Z");
    ali_params_add(&h, "x-acs-signature-nonce", "3156853299f313e23d1673dc12e1703d");
    ali_params_add(&h, "x-acs-content-sha256", sha);
    ali_params_add(&h, "Accept", "application/json"); /* not signed: neither host, content-type nor x-acs-* */
    prov_buf auth = PROV_BUF_INIT;
    char hashed[65];
    ali_acs3_input in = {"POST", "/", &q, &h, sha, "YourAccessKeyId", "YourAccessKeySecret"};
    ck_assert_int_eq(ali_acs3_sign(&in, &auth, hashed), NS_OK);
    ck_assert_str_eq(hashed, "7ea06492da5221eba5297e897ce16e55f964061054b7695beedaac1145b1e259");
    ck_assert_str_eq(prov_buf_str(&auth),
                     "ACS3-HMAC-SHA256 Credential=YourAccessKeyId,SignedHeaders=host;x-acs-action;x-acs-content-sha256;"
                     "x-acs-date;x-acs-signature-nonce;x-acs-version,"
                     "Signature=06563a9e1b43f5dfe96b81484da74bceab24a1d853912eee15083a6f0f3283c0");
    prov_buf_free(&auth);
    ali_params_free(&q);
    ali_params_free(&h);
}
END_TEST

START_TEST(test_rpc_v1_classic_vector)
{
    ali_params p = {0};
    ali_params_add(&p, "Format", "XML");
    ali_params_add(&p, "AccessKeyId", "testid");
    ali_params_add(&p, "Action", "DescribeRegions");
    ali_params_add(&p, "SignatureMethod", "HMAC-SHA1");
    ali_params_add(&p, "SignatureNonce", "3ee8c1b8-83d3-44af-a94f-4e0ad82fd6cf");
    ali_params_add(&p, "SignatureVersion", "1.0");
    ali_params_add(&p, "Timestamp", "2016-02-23T12:46:24Z");
    ali_params_add(&p, "Version", "2014-05-26");
    char sig[64];
    ck_assert_int_eq(ali_rpc_v1_sign("GET", &p, "testsecret", sig, sizeof(sig)), NS_OK);
    ck_assert_str_eq(sig, "OLeaidS1JvxuMvnyHOwuJ+uX5qY=");
    ali_params_free(&p);
}
END_TEST

START_TEST(test_percent_encode_and_query)
{
    prov_buf b = PROV_BUF_INIT;
    const char *raw = "a b*c~d/e+f!'()=&é";
    prov_buf_percent_encode(&b, raw, strlen(raw), false);
    ck_assert_str_eq(prov_buf_str(&b), "a%20b%2Ac~d%2Fe%2Bf%21%27%28%29%3D%26%C3%A9");
    prov_buf_free(&b);
    ali_params p = {0};
    ali_params_add(&p, "LaunchTemplateConfig.1.InstanceType", "ecs.g7.large");
    ali_params_add(&p, "LaunchConfiguration.Tag.1.Key", "karpenter.sh/nodepool");
    ali_params_add(&p, "Empty", "");
    ali_query_string(&b, &p);
    ck_assert_str_eq(prov_buf_str(&b), "Empty=&LaunchConfiguration.Tag.1.Key=karpenter.sh%2Fnodepool&"
                                      "LaunchTemplateConfig.1.InstanceType=ecs.g7.large");
    prov_buf_free(&b);
    ali_params_free(&p);
    char date[30];
    ali_http_date(1700000000, date);
    ck_assert_str_eq(date, "Tue, 14 Nov 2023 22:13:20 GMT");
    ck_assert_int_eq(ali_parse_iso8601_ms("2023-10-26T10:22:32Z"), 1698315752000LL);
    ck_assert_int_eq(ali_parse_iso8601_ms("2017-12-10T04:04Z"), 1512878640000LL);
    ck_assert_int_eq(ali_parse_iso8601_ms("yesterday"), -1);
}
END_TEST

START_TEST(test_quantities)
{
    ck_assert_int_eq(ali_quantity("100m", true), 100);
    ck_assert_int_eq(ali_quantity("2", true), 2000);
    ck_assert_int_eq(ali_quantity("1Gi", false), 1073741824LL);
    ck_assert_int_eq(ali_quantity("1.5Mi", false), 1572864LL);
    ck_assert_int_eq(ali_quantity("20G", false), 20000000000LL);
    ck_assert_int_eq(ali_quantity("-1", false), -1);
    ck_assert_int_eq(ali_quantity("12Qi", false), -1);
    ck_assert_int_eq(ali_quantity("", false), -1);
}
END_TEST

static int parse(const char *spec_json, ali_nodeclass_spec *out)
{
    ns_json *spec = ns_host_json_parse(spec_json, strlen(spec_json));
    ck_assert_ptr_nonnull(spec);
    ns_nodeclass nc = {sizeof(nc), ALI_API_VERSION, ALI_KIND, "test", spec};
    memset(out, 0, sizeof(*out));
    last_error[0] = '\0';
    int rc = ali_nodeclass_spec_parse(&host, NULL, &nc, out);
    ns_host_json_free(spec);
    return rc;
}

#define BASE "\"vSwitchSelectorTerms\":[{\"tags\":{\"karpenter.sh/discovery\":\"demo\"}}]," \
             "\"securityGroupSelectorTerms\":[{\"id\":\"sg-abc1\"}]," \
             "\"imageSelectorTerms\":[{\"alias\":\"AlibabaCloudLinux3@latest\"}]"

START_TEST(test_nodeclass_full_spec)
{
    static ali_nodeclass_spec s;
    ck_assert_int_eq(parse("{" BASE ",\"vSwitchSelectionPolicy\":\"balanced\",\"kubeletConfiguration\":{"
                           "\"clusterDNS\":[\"172.16.0.10\"],\"maxPods\":64,\"podsPerCore\":8,"
                           "\"systemReserved\":{\"cpu\":\"100m\",\"memory\":\"200Mi\"},"
                           "\"kubeReserved\":{\"cpu\":\"200m\",\"memory\":\"1Gi\",\"ephemeral-storage\":\"1Gi\"},"
                           "\"evictionHard\":{\"memory.available\":\"5%\"},\"evictionSoft\":{\"nodefs.available\":"
                           "\"15%\"},\"evictionSoftGracePeriod\":{\"nodefs.available\":\"1m30s\"},"
                           "\"evictionMaxPodGracePeriod\":60,\"imageGCHighThresholdPercent\":85,"
                           "\"imageGCLowThresholdPercent\":80,\"cpuCFSQuota\":true},"
                           "\"systemDisk\":{\"categories\":[\"cloud_essd\"],\"volumeSize\":\"60Gi\","
                           "\"performanceLevel\":\"PL1\"},\"dataDisks\":[{\"volumeSize\":\"100Gi\",\"device\":"
                           "\"/dev/xvdb\"}],\"dataDiskCategories\":[\"cloud_essd\"],\"formatDataDisk\":true,"
                           "\"tags\":{\"team\":\"a\"},\"resourceGroupId\":\"rg-abc123\",\"userData\":\"echo hi\","
                           "\"keyPairName\":\"my-key\"}",
                           &s),
                     NS_OK);
    ck_assert(s.balanced);
    ck_assert_int_eq(s.kubelet.max_pods, 64);
    ck_assert_int_eq(s.kubelet.kube_reserved.memory_bytes, 1LL << 30);
    ck_assert_int_eq(s.kubelet.system_reserved.cpu_milli, 100);
    ck_assert_int_eq(s.system_disk_gib, 60);
    ck_assert_str_eq(s.performance_level, "PL1");
    ck_assert_int_eq(s.n_disk_categories, 1);
    ck_assert_int_eq(s.n_data_disks, 1);
    ck_assert_int_eq(s.data_disk_gib[0], 100);
    ck_assert(s.format_data_disk);
    ck_assert_str_eq(s.resource_group_id, "rg-abc123");
    ck_assert_str_eq(s.key_pair_name, "my-key");
    ck_assert_str_eq(s.image_terms[0].family, "AlibabaCloudLinux3");
    ck_assert_str_eq(s.image_terms[0].version, "latest");
    ck_assert_int_eq(parse("{" BASE "}", &s), NS_OK);
    ck_assert_int_eq(s.n_disk_categories, 6); /* the default: every category */
    ck_assert_int_eq(s.system_disk_gib, 40);
    ck_assert_str_eq(s.performance_level, "PL0");
}
END_TEST

/* Each bad spec is refused with a message naming the field. */
START_TEST(test_nodeclass_refusals)
{
    static const struct {
        const char *spec;
        const char *field;
    } BAD[] = {
        {"{\"securityGroupSelectorTerms\":[{\"id\":\"sg-1\"}],\"imageSelectorTerms\":[{\"id\":\"m-1\"}]}",
         "spec.vSwitchSelectorTerms is required"},
        {"{\"vSwitchSelectorTerms\":[],\"securityGroupSelectorTerms\":[{\"id\":\"sg-1\"}],\"imageSelectorTerms\":"
         "[{\"id\":\"m-1\"}]}",
         "spec.vSwitchSelectorTerms cannot be empty"},
        {"{\"vSwitchSelectorTerms\":[{\"id\":\"subnet-1\"}],\"securityGroupSelectorTerms\":[{\"id\":\"sg-1\"}],"
         "\"imageSelectorTerms\":[{\"id\":\"m-1\"}]}",
         "spec.vSwitchSelectorTerms[0].id must match vsw-"},
        {"{\"vSwitchSelectorTerms\":[{\"id\":\"vsw-1\",\"tags\":{\"a\":\"b\"}}],\"securityGroupSelectorTerms\":[{\"id\":"
         "\"sg-1\"}],\"imageSelectorTerms\":[{\"id\":\"m-1\"}]}",
         "spec.vSwitchSelectorTerms[0]: 'id' is mutually exclusive"},
        {"{\"vSwitchSelectorTerms\":[{\"name\":\"x\"}],\"securityGroupSelectorTerms\":[{\"id\":\"sg-1\"}],"
         "\"imageSelectorTerms\":[{\"id\":\"m-1\"}]}",
         "spec.vSwitchSelectorTerms[0].name: unknown field"},
        {"{\"vSwitchSelectorTerms\":[{\"tags\":{\"\":\"b\"}}],\"securityGroupSelectorTerms\":[{\"id\":\"sg-1\"}],"
         "\"imageSelectorTerms\":[{\"id\":\"m-1\"}]}",
         "spec.vSwitchSelectorTerms[0].tags: empty keys"},
        {"{\"vSwitchSelectorTerms\":[{\"id\":\"vsw-1\"}],\"securityGroupSelectorTerms\":[{\"name\":\"a\",\"tags\":"
         "{\"a\":\"b\"}}],\"imageSelectorTerms\":[{\"id\":\"m-1\"}]}",
         "spec.securityGroupSelectorTerms[0]: 'name' is mutually exclusive"},
        {"{\"vSwitchSelectorTerms\":[{\"id\":\"vsw-1\"}],\"securityGroupSelectorTerms\":[{\"id\":\"sg-1\"}],"
         "\"imageSelectorTerms\":[{\"alias\":\"Ubuntu@latest\"}]}",
         "spec.imageSelectorTerms[0].alias: family 'Ubuntu' is not supported"},
        {"{\"vSwitchSelectorTerms\":[{\"id\":\"vsw-1\"}],\"securityGroupSelectorTerms\":[{\"id\":\"sg-1\"}],"
         "\"imageSelectorTerms\":[{\"alias\":\"ContainerOS@3.1\"}]}",
         "ContainerOS supports only @latest"},
        {"{\"vSwitchSelectorTerms\":[{\"id\":\"vsw-1\"}],\"securityGroupSelectorTerms\":[{\"id\":\"sg-1\"}],"
         "\"imageSelectorTerms\":[{\"alias\":\"AlibabaCloudLinux3\"}]}",
         "must match the format 'family@version'"},
        {"{\"vSwitchSelectorTerms\":[{\"id\":\"vsw-1\"}],\"securityGroupSelectorTerms\":[{\"id\":\"sg-1\"}],"
         "\"imageSelectorTerms\":[{\"alias\":\"ContainerOS@latest\"},{\"id\":\"m-1\"}]}",
         "'alias' is mutually exclusive"},
        {"{" BASE ",\"vSwitchSelectionPolicy\":\"random\"}", "spec.vSwitchSelectionPolicy"},
        {"{" BASE ",\"kubeletConfiguration\":{\"maxPods\":-1}}", "spec.kubeletConfiguration.maxPods"},
        {"{" BASE ",\"kubeletConfiguration\":{\"podsPerCore\":1.5}}", "spec.kubeletConfiguration.podsPerCore"},
        {"{" BASE ",\"kubeletConfiguration\":{\"clusterDNS\":[\"dns.local\"]}}",
         "spec.kubeletConfiguration.clusterDNS[0]"},
        {"{" BASE ",\"kubeletConfiguration\":{\"systemReserved\":{\"gpu\":\"1\"}}}",
         "spec.kubeletConfiguration.systemReserved: valid keys"},
        {"{" BASE ",\"kubeletConfiguration\":{\"kubeReserved\":{\"cpu\":\"-100m\"}}}",
         "spec.kubeletConfiguration.kubeReserved.cpu"},
        {"{" BASE ",\"kubeletConfiguration\":{\"evictionHard\":{\"memory.free\":\"1Gi\"}}}",
         "spec.kubeletConfiguration.evictionHard: valid keys"},
        {"{" BASE ",\"kubeletConfiguration\":{\"evictionHard\":{\"memory.available\":\"lots\"}}}",
         "spec.kubeletConfiguration.evictionHard.memory.available"},
        {"{" BASE ",\"kubeletConfiguration\":{\"evictionSoft\":{\"memory.available\":\"1Gi\"}}}",
         "evictionSoft.memory.available does not have a matching evictionSoftGracePeriod"},
        {"{" BASE ",\"kubeletConfiguration\":{\"evictionSoftGracePeriod\":{\"memory.available\":\"1m\"}}}",
         "evictionSoftGracePeriod.memory.available does not have a matching evictionSoft"},
        {"{" BASE ",\"kubeletConfiguration\":{\"evictionSoft\":{\"memory.available\":\"1Gi\"},"
         "\"evictionSoftGracePeriod\":{\"memory.available\":\"soon\"}}}",
         "spec.kubeletConfiguration.evictionSoftGracePeriod.memory.available"},
        {"{" BASE ",\"kubeletConfiguration\":{\"imageGCHighThresholdPercent\":50,\"imageGCLowThresholdPercent\":60}}",
         "imageGCHighThresholdPercent must be greater than imageGCLowThresholdPercent"},
        {"{" BASE ",\"kubeletConfiguration\":{\"imageGCHighThresholdPercent\":101}}",
         "spec.kubeletConfiguration.imageGCHighThresholdPercent"},
        {"{" BASE ",\"kubeletConfiguration\":{\"cpuCFSQuota\":\"yes\"}}", "spec.kubeletConfiguration.cpuCFSQuota"},
        {"{" BASE ",\"kubeletConfiguration\":{\"maxpods\":3}}", "spec.kubeletConfiguration.maxpods: unknown field"},
        {"{" BASE ",\"systemDisk\":{\"categories\":[\"ssd\"]}}", "spec.systemDisk.categories[0]"},
        {"{" BASE ",\"systemDisk\":{\"volumeSize\":\"10Gi\"}}", "spec.systemDisk.volumeSize"},
        {"{" BASE ",\"systemDisk\":{\"volumeSize\":\"100Mi\"}}", "spec.systemDisk.volumeSize"},
        {"{" BASE ",\"systemDisk\":{\"size\":10}}", "spec.systemDisk.size"},
        {"{" BASE ",\"systemDisk\":{\"performanceLevel\":\"PL4\"}}", "spec.systemDisk.performanceLevel"},
        {"{" BASE ",\"dataDisks\":[{\"volumeSize\":\"5Gi\"}]}", "spec.dataDisks[0].volumeSize"},
        {"{" BASE ",\"dataDisks\":[{\"device\":\"xvdb\"}]}", "spec.dataDisks[0].device"},
        {"{" BASE ",\"dataDiskCategories\":[\"fast\"]}", "spec.dataDiskCategories[0]"},
        {"{" BASE ",\"formatDataDisk\":\"yes\"}", "spec.formatDataDisk"},
        {"{" BASE ",\"tags\":{\"karpenter.sh/nodepool\":\"x\"}}", "spec.tags: tag contains a restricted tag"},
        {"{" BASE ",\"tags\":{\"kubernetes.io/cluster/c1\":\"owned\"}}", "spec.tags: tag contains a restricted tag"},
        {"{" BASE ",\"tags\":{\"ecs:ecs-cluster-name\":\"x\"}}", "spec.tags: tag contains a restricted tag"},
        {"{" BASE ",\"resourceGroupId\":\"group-1\"}", "spec.resourceGroupId"},
        {"{" BASE ",\"userData\":42}", "spec.userData"},
        {"{" BASE ",\"password\":\"short\"}", "spec.password"},
        {"{" BASE ",\"keyPairName\":\"1key\"}", "spec.keyPairName"},
        {"{" BASE ",\"passwordInherit\":true,\"password\":\"Secret123!\"}",
         "spec.password cannot be set when spec.passwordInherit is true"},
        {"{" BASE ",\"amiFamily\":\"AL2\"}", "spec.amiFamily: unknown field"},
    };
    static ali_nodeclass_spec s;
    for (size_t i = 0; i < sizeof(BAD) / sizeof(BAD[0]); i++) {
        int rc = parse(BAD[i].spec, &s);
        ck_assert_msg(rc == NS_ERR_INVALID_CONFIG, "case %zu (%s) was accepted", i, BAD[i].field);
        ck_assert_msg(strstr(last_error, BAD[i].field) && strstr(last_error, "ECSNodeClass test"),
                      "case %zu: the message \"%s\" does not name \"%s\"", i, last_error, BAD[i].field);
    }
    ns_json *spec = ns_host_json_parse("{}", 2);
    ns_nodeclass wrong = {sizeof(wrong), "karpenter.k8s.aws/v1", "EC2NodeClass", "x", spec};
    ck_assert_int_eq(ali_nodeclass_spec_parse(&host, NULL, &wrong, &s), NS_ERR_INVALID_CONFIG);
    ck_assert(strstr(last_error, "karpenter.k8s.alibabacloud/v1alpha1 ECSNodeClass"));
    ns_host_json_free(spec);
}
END_TEST

static char *unbase64(const char *b64)
{
    size_t n = strlen(b64);
    unsigned char *out = calloc(1, n + 1);
    int len = EVP_DecodeBlock(out, (const unsigned char *)b64, (int)n);
    ck_assert_int_ge(len, 0);
    return (char *)out;
}

START_TEST(test_attach_command)
{
    static ali_nodeclass_spec s;
    ck_assert_int_eq(parse("{" BASE ",\"kubeletConfiguration\":{\"maxPods\":42,\"kubeReserved\":{\"cpu\":\"250m\"},"
                           "\"evictionHard\":{\"memory.available\":\"200Mi\"}}}",
                           &s),
                     NS_OK);
    ns_label labels[] = {{"karpenter.sh/nodepool", "default"}, {"team", "web"}};
    ns_taint taints[] = {{"dedicated", "web", "NoSchedule"}};
    ns_taint startup[] = {{"node.cilium.io/agent-not-ready", NULL, "NoExecute"}};
    char *cmd = ali_userdata_attach_command("curl http://x/attach_node.sh | bash -s -- --openapi-token T\r\n", "c-123",
                                            labels, 2, taints, 1, startup, 1, &s.kubelet, false);
    ck_assert_ptr_nonnull(cmd);
    ck_assert_msg(strncmp(cmd, "#!/bin/bash\n", 12) == 0, "%s", cmd);
    ck_assert(strstr(cmd, "--openapi-token T --labels 'k8s.aliyun.com=true,ack.aliyun.com=c-123,"
                          "karpenter.sh/nodepool=default,team=web'"));
    ck_assert(strstr(cmd, "topology.k8s.alibabacloud/zone-id=${ZONE_ID}"));
    ck_assert(strstr(cmd, "--taints 'karpenter.sh/unregistered:NoExecute,dedicated=web:NoSchedule,"
                          "node.cilium.io/agent-not-ready:NoExecute'"));
    ck_assert(!strstr(cmd, "\r"));
    const char *cfg = strstr(cmd, "--node-config '");
    ck_assert_ptr_nonnull(cfg);
    cfg += strlen("--node-config '");
    char b64[1024];
    snprintf(b64, sizeof(b64), "%.*s", (int)strcspn(cfg, "'"), cfg);
    char *json = unbase64(b64);
    ck_assert_msg(strstr(json, "\"kubelet_config\":{\"maxPods\":42") && strstr(json, "\"kubeReserved\":{\"cpu\":"
                                                                                      "\"250m\"}") &&
                      strstr(json, "\"evictionHard\":{\"memory.available\":\"200Mi\"}"),
                  "node config %s", json);
    free(json);
    char *merged = ali_userdata_merge(cmd, "#cloud-config\npackages: [htop]\n");
    ck_assert(strstr(merged, "Content-Type: multipart/mixed; boundary=\"//\""));
    ck_assert(strstr(merged, "Content-Type: text/cloud-config"));
    char *user = strstr(merged, "packages: [htop]"), *boot = strstr(merged, "attach_node.sh");
    ck_assert(user && boot && user < boot); /* the user's part runs first */
    ck_assert(strstr(merged, "--//--\n"));
    free(merged);
    merged = ali_userdata_merge(cmd, NULL);
    ck_assert_str_eq(merged, cmd);
    free(merged);
    free(cmd);
}
END_TEST

START_TEST(test_mns_answers)
{
    static const char XML[] =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Messages xmlns=\"http://mns.aliyuncs.com/doc/v1/\">"
        "<Message><MessageId>M1</MessageId><ReceiptHandle>R1</ReceiptHandle><MessageBody>{&quot;a&quot;:1}"
        "</MessageBody></Message><Message><MessageId>M2</MessageId><ReceiptHandle>R2</ReceiptHandle>"
        "<MessageBody>e30=</MessageBody></Message></Messages>";
    ali_mns_message m[ALI_MNS_MAX_BATCH];
    size_t n;
    char code[64];
    ck_assert_int_eq(ali_mns_parse(XML, strlen(XML), m, &n, code, sizeof(code)), NS_OK);
    ck_assert_int_eq(n, 2);
    ck_assert_str_eq(m[0].id, "M1");
    ck_assert_str_eq(m[0].receipt, "R1");
    ck_assert_str_eq(m[0].body, "{\"a\":1}");
    ck_assert_str_eq(m[1].body, "e30=");
    ali_mns_messages_free(m, n);
    static const char ERR[] = "<Error xmlns=\"http://mns.aliyuncs.com/doc/v1/\"><Code>MessageNotExist</Code>"
                              "<Message>Message not exist.</Message></Error>";
    ck_assert_int_eq(ali_mns_parse(ERR, strlen(ERR), m, &n, code, sizeof(code)), NS_OK);
    ck_assert_int_eq(n, 0);
    ck_assert_str_eq(code, "MessageNotExist");
    ck_assert_int_eq(ali_mns_parse("<Messages><Message>", 19, m, &n, code, sizeof(code)), NS_ERR_INTERNAL);
}
END_TEST

START_TEST(test_error_categories)
{
    ck_assert_int_eq(ali_api_category("Throttling.User", 400), NS_ERR_THROTTLED);
    ck_assert_int_eq(ali_api_category("ServiceUnavailable", 503), NS_ERR_THROTTLED);
    ck_assert_int_eq(ali_api_category(NULL, 502), NS_ERR_THROTTLED);
    ck_assert_int_eq(ali_api_category("OperationDenied.NoStock", 403), NS_ERR_INSUFFICIENT_CAPACITY);
    ck_assert_int_eq(ali_api_category("InvalidAccessKeyId.NotFound", 404), NS_ERR_UNAUTHORIZED);
    ck_assert_int_eq(ali_api_category("SignatureDoesNotMatch", 400), NS_ERR_UNAUTHORIZED);
    ck_assert_int_eq(ali_api_category("Forbidden.RAM", 403), NS_ERR_UNAUTHORIZED);
    ck_assert_int_eq(ali_api_category("InvalidInstanceId.NotFound", 404), NS_ERR_NOT_FOUND);
    ck_assert_int_eq(ali_api_category("InvalidParameter.Foo", 400), NS_ERR_INVALID_CONFIG);
    ck_assert_int_eq(ali_api_category("IdempotentParameterMismatch", 400), NS_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(ali_api_category("UnsupportedOperation", 400), NS_ERR_UNSUPPORTED);
    ck_assert_int_eq(ali_api_category("UnknownError", 400), NS_ERR_INTERNAL);
}
END_TEST

START_TEST(test_builtin_prices)
{
    double g7 = ali_pricing_builtin("ecs.g7", 2, 8, 0);
    ck_assert_msg(g7 > 0.2 && g7 < 2.0, "ecs.g7.large estimated at %f CNY/h", g7);
    ck_assert(ali_pricing_builtin("ecs.g7", 4, 16, 0) > g7);
    double unknown = ali_pricing_builtin("ecs.zz9", 2, 8, 0);
    ck_assert(unknown > 0);
    ck_assert(ali_pricing_builtin("ecs.zz9", 2, 8, 1) > unknown);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("alibaba_unit");
    TCase *tc = tcase_create("pure");
    tcase_add_test(tc, test_acs3_official_vector);
    tcase_add_test(tc, test_rpc_v1_classic_vector);
    tcase_add_test(tc, test_percent_encode_and_query);
    tcase_add_test(tc, test_quantities);
    tcase_add_test(tc, test_nodeclass_full_spec);
    tcase_add_test(tc, test_nodeclass_refusals);
    tcase_add_test(tc, test_attach_command);
    tcase_add_test(tc, test_mns_answers);
    tcase_add_test(tc, test_error_categories);
    tcase_add_test(tc, test_builtin_prices);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
