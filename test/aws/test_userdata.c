/*
 * User data per AMI family: each fixture in test/aws/userdata (NAME.json over common.json) is built and compared with
 * NAME.expected. AWS_REGENERATE=1 rewrites the expected files instead (review the diff before committing). Beside the
 * byte comparison, each output is read back with the same MIME and TOML readers a node's bootstrap would use, and the
 * merging rules are checked directly: part order, the user's parts kept, Karpenter's keys overwriting the user's.
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws_toml.h"
#include "aws_userdata.h"
#include "test_files.h"

static char err[512];

typedef struct fixture_case {
    cJSON *doc;
    aws_bootstrap b;
    ns_label labels[16];
    ns_taint taints[8];
    char *custom;
} fixture_case;

static const char *str(const cJSON *doc, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(doc, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void merge(cJSON *into, const cJSON *over)
{
    const cJSON *item;
    cJSON_ArrayForEach(item, over) {
        cJSON_DeleteItemFromObjectCaseSensitive(into, item->string);
        cJSON_AddItemToObject(into, item->string, cJSON_Duplicate(item, 1));
    }
}

static void load_case(const char *name, fixture_case *c)
{
    char rel[128];
    memset(c, 0, sizeof(*c));
    char *common = test_fixture("userdata/common.json");
    snprintf(rel, sizeof(rel), "userdata/%s.json", name);
    char *own = test_fixture(rel);
    c->doc = cJSON_Parse(common);
    cJSON *over = cJSON_Parse(own);
    ck_assert_ptr_nonnull(c->doc);
    ck_assert_ptr_nonnull(over);
    merge(c->doc, over);
    cJSON_Delete(over);
    free(common);
    free(own);
    const char *family = str(c->doc, "family");
    static const char *const FAMILIES[] = {"AL2023", "AL2", "Bottlerocket", "Windows2019", "Windows2022", "Custom"};
    c->b.family = (aws_ami_family)-1;
    for (int i = 0; i < 6; i++)
        if (strcmp(family, FAMILIES[i]) == 0)
            c->b.family = (aws_ami_family)i;
    ck_assert_int_ge((int)c->b.family, 0);
    c->b.cluster_name = str(c->doc, "cluster_name");
    c->b.endpoint = str(c->doc, "endpoint");
    c->b.ca_bundle = str(c->doc, "ca_bundle");
    c->b.cluster_cidr = str(c->doc, "cluster_cidr");
    c->b.cluster_dns = str(c->doc, "cluster_dns");
    const cJSON *max_pods = cJSON_GetObjectItemCaseSensitive(c->doc, "max_pods");
    c->b.max_pods = cJSON_IsNumber(max_pods) ? (int64_t)max_pods->valuedouble : 0;
    c->b.instance_store_raid0 = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c->doc, "instance_store_raid0"));
    c->b.bottlerocket_default_bind =
        cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c->doc, "bottlerocket_default_bind"));
    const cJSON *item;
    cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(c->doc, "labels"))
        c->labels[c->b.n_labels++] = (ns_label){item->string, item->valuestring};
    c->b.labels = c->labels;
    cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(c->doc, "taints"))
        c->taints[c->b.n_taints++] = (ns_taint){cJSON_GetArrayItem(item, 0)->valuestring,
                                                cJSON_GetArrayItem(item, 1)->valuestring,
                                                cJSON_GetArrayItem(item, 2)->valuestring};
    c->b.taints = c->taints;
    if (str(c->doc, "custom_file")) {
        snprintf(rel, sizeof(rel), "userdata/%s", str(c->doc, "custom_file"));
        c->custom = test_fixture(rel);
        c->b.custom = c->custom;
    }
}

static void free_case(fixture_case *c)
{
    cJSON_Delete(c->doc);
    free(c->custom);
}

/* Builds the case and compares it with its expected file (or rewrites that file under AWS_REGENERATE=1). */
static char *build_and_compare(const char *name)
{
    fixture_case c;
    load_case(name, &c);
    char *out = NULL;
    int rc = aws_userdata_build(&c.b, &out, err, sizeof(err));
    ck_assert_msg(rc == NS_OK, "%s: %s", name, err);
    char rel[128];
    snprintf(rel, sizeof(rel), "userdata/%s.expected", name);
    char *path = test_data_path(rel);
    const char *regen = getenv("AWS_REGENERATE");
    if (regen && strcmp(regen, "1") == 0) {
        FILE *f = fopen(path, "wb");
        ck_assert_ptr_nonnull(f);
        fputs(out, f);
        fclose(f);
    }
    char *expected = test_read_file(path, NULL);
    ck_assert_msg(expected != NULL, "%s is missing: run with AWS_REGENERATE=1 and review it", path);
    ck_assert_msg(strcmp(out, expected) == 0, "%s differs from %s:\n%s", name, path, out);
    free(expected);
    free(path);
    free_case(&c);
    return out;
}

static void split(const char *doc, aws_mime_parts *parts)
{
    memset(parts, 0, sizeof(*parts));
    ck_assert_msg(aws_mime_is_mime(doc), "not MIME: %s", doc);
    ck_assert_msg(aws_mime_split(doc, parts, err, sizeof(err)) == NS_OK, "%s", err);
}

START_TEST(test_al2_plain_script_becomes_first_part)
{
    char *out = build_and_compare("al2-plain");
    aws_mime_parts p;
    split(out, &p);
    ck_assert_uint_eq(p.n, 2);
    ck_assert_str_eq(p.items[0].content_type, "text/x-shellscript; charset=\"us-ascii\"");
    ck_assert_ptr_nonnull(strstr(p.items[0].body, "sysctl -w vm.max_map_count=262144"));
    ck_assert_ptr_nonnull(strstr(p.items[1].body, "/etc/eks/bootstrap.sh 'demo' --apiserver-endpoint"));
    /* the kubelet's own labels and kubernetes.io labels are not passed; taints are, with their effects */
    ck_assert_ptr_nonnull(strstr(p.items[1].body, "--node-labels=\"karpenter.sh/capacity-type=spot,"
                                                  "karpenter.sh/nodepool=default,node.kubernetes.io/exclude-from-lb="
                                                  "true,team=web\""));
    ck_assert_ptr_null(strstr(p.items[1].body, "kubernetes.io/arch"));
    ck_assert_ptr_null(strstr(p.items[1].body, "kubernetes.io/role"));
    ck_assert_ptr_nonnull(strstr(p.items[1].body, "--register-with-taints=\"dedicated=web:NoSchedule,"
                                                  "karpenter.sh/unregistered=:NoExecute\""));
    ck_assert_ptr_null(strstr(p.items[1].body, "--use-max-pods"));
    aws_mime_parts_free(&p);
    free(out);
}
END_TEST

START_TEST(test_al2_user_mime_parts_kept_in_order)
{
    char *out = build_and_compare("al2-mime");
    aws_mime_parts p;
    split(out, &p);
    ck_assert_uint_eq(p.n, 3);
    ck_assert_str_eq(p.items[0].body, "#!/bin/bash\necho first part\n");
    ck_assert_str_eq(p.items[1].content_type, "text/cloud-config; charset=\"us-ascii\"");
    ck_assert_ptr_nonnull(strstr(p.items[1].headers, "X-Extra-Header: kept"));
    ck_assert_ptr_null(strchr(out, '\r'));
    ck_assert_ptr_nonnull(strstr(p.items[2].body, "/etc/eks/bootstrap.sh"));
    aws_mime_parts_free(&p);
    free(out);
}
END_TEST

START_TEST(test_al2_kubelet_settings)
{
    char *out = build_and_compare("al2-kubelet");
    ck_assert_ptr_nonnull(strstr(out, "--dns-cluster-ip '10.100.0.10' \\\n--use-max-pods false \\\n"
                                      "--kubelet-extra-args '--max-pods=58'"));
    free(out);
}
END_TEST

START_TEST(test_al2023_nodeconfig_first)
{
    char *out = build_and_compare("al2023-shell");
    aws_mime_parts p;
    split(out, &p);
    ck_assert_uint_eq(p.n, 2);
    ck_assert_str_eq(p.items[0].content_type, "application/node.eks.aws");
    ck_assert_ptr_nonnull(strstr(p.items[0].body, "kind: NodeConfig"));
    ck_assert_ptr_nonnull(strstr(p.items[0].body, "cidr: '10.100.0.0/16'"));
    ck_assert_ptr_nonnull(strstr(p.items[0].body, "registerWithTaints:\n      - effect: 'NoSchedule'\n"
                                                  "        key: 'dedicated'\n        value: 'web'"));
    ck_assert_str_eq(p.items[1].content_type, "text/x-shellscript; charset=\"us-ascii\"");
    aws_mime_parts_free(&p);
    free(out);

    out = build_and_compare("al2023-nodeconfig");
    split(out, &p);
    ck_assert_uint_eq(p.n, 2);
    ck_assert_str_eq(p.items[1].content_type, "application/node.eks.aws");
    ck_assert_ptr_nonnull(strstr(p.items[1].body, "shutdownGracePeriod: 30s"));
    ck_assert_ptr_nonnull(strstr(p.items[0].body, "maxPods: 110"));
    aws_mime_parts_free(&p);
    free(out);

    out = build_and_compare("al2023-mime");
    split(out, &p);
    ck_assert_uint_eq(p.n, 3);
    ck_assert_str_eq(p.items[2].content_type, "text/cloud-config; charset=\"us-ascii\"");
    ck_assert_ptr_null(strstr(out, "X-Extra-Header")); /* nodeadm's archive keeps content types only */
    ck_assert_ptr_null(strstr(p.items[0].body, "kubelet:"));
    aws_mime_parts_free(&p);
    free(out);
}
END_TEST

START_TEST(test_bottlerocket_settings_merged)
{
    char *out = build_and_compare("bottlerocket-merge");
    aws_toml *doc = NULL;
    ck_assert_msg(aws_toml_parse(out, &doc, err, sizeof(err)) == NS_OK, "%s", err);
    const char *const k8s_path[] = {"settings", "kubernetes"};
    aws_toml *k8s = aws_toml_table(doc, k8s_path, 2, false);
    ck_assert_ptr_nonnull(k8s);
    ck_assert_str_eq(aws_toml_get(k8s, "cluster-name"), "\"demo\"");
    ck_assert_str_eq(aws_toml_get(k8s, "kube-api-qps"), "30");
    ck_assert_str_eq(aws_toml_get(k8s, "max-pods"), "29");
    ck_assert_str_eq(aws_toml_get(k8s, "cluster-dns-ip"), "\"10.100.0.10\"");
    const char *const labels_path[] = {"node-labels"}, *const taints_path[] = {"node-taints"},
                      *const eviction_path[] = {"eviction-hard"};
    aws_toml *labels = aws_toml_table(k8s, labels_path, 1, false);
    ck_assert_str_eq(aws_toml_get(labels, "team"), "\"web\""); /* Karpenter's value wins */
    ck_assert_str_eq(aws_toml_get(labels, "billing"), "'literal-value'");
    ck_assert_str_eq(aws_toml_get(labels, "karpenter.sh/nodepool"), "\"default\"");
    aws_toml *taints = aws_toml_table(k8s, taints_path, 1, false);
    ck_assert_ptr_null(aws_toml_get(taints, "old-taint")); /* replaced by the NodePool's taints */
    ck_assert_str_eq(aws_toml_get(taints, "dedicated"), "[\"web:NoSchedule\"]");
    ck_assert_str_eq(aws_toml_get(aws_toml_table(k8s, eviction_path, 1, false), "memory.available"), "\"15%\"");
    const char *const autoscaling_path[] = {"settings", "autoscaling"}, *const admin[] = {"settings", "host-containers",
                                                                                          "admin"};
    ck_assert_str_eq(aws_toml_get(aws_toml_table(doc, autoscaling_path, 2, false), "should-wait"), "false");
    ck_assert_str_eq(aws_toml_get(aws_toml_table(doc, admin, 3, false), "superpowered"), "true");
    aws_toml_free(doc);
    free(out);

    out = build_and_compare("bottlerocket-empty");
    ck_assert_ptr_nonnull(strstr(out, "[settings.kubernetes]\ncluster-name = \"demo\"\n"));
    ck_assert_ptr_null(strstr(out, "node-taints"));
    free(out);
}
END_TEST

/* instanceStorePolicy RAID0 as Karpenter's bootstrap writes it for each family. */
START_TEST(test_instance_store_raid0)
{
    char *out = build_and_compare("al2-raid0");
    aws_mime_parts p;
    split(out, &p);
    ck_assert_uint_eq(p.n, 1);
    ck_assert_ptr_nonnull(strstr(p.items[0].body, "/etc/eks/bootstrap.sh 'demo'"));
    ck_assert_ptr_nonnull(strstr(p.items[0].body, " \\\n--local-disks raid0"));
    aws_mime_parts_free(&p);
    free(out);

    out = build_and_compare("al2023-raid0");
    split(out, &p);
    ck_assert_str_eq(p.items[0].content_type, "application/node.eks.aws");
    /* nodeadm's NodeConfig: spec.instance.localStorage.strategy, between cluster and kubelet */
    ck_assert_ptr_nonnull(strstr(p.items[0].body, "    name: 'demo'\n  instance:\n    localStorage:\n"
                                                  "      strategy: RAID0\n  kubelet:\n"));
    aws_mime_parts_free(&p);
    free(out);

    out = build_and_compare("bottlerocket-raid0");
    aws_toml *doc = NULL;
    ck_assert_msg(aws_toml_parse(out, &doc, err, sizeof(err)) == NS_OK, "%s", err);
    const char *const mount[] = {"settings", "bootstrap-commands", "000-mount-instance-storage"},
                      *const hello[] = {"settings", "bootstrap-commands", "111-say-hello"};
    aws_toml *cmd = aws_toml_table(doc, mount, 3, false);
    ck_assert_ptr_nonnull(cmd);
    ck_assert_str_eq(aws_toml_get(cmd, "commands"),
                     "[[\"apiclient\", \"ephemeral-storage\", \"init\"], [\"apiclient\", \"ephemeral-storage\", \"bind\", "
                     "\"--dirs\", \"/var/lib/containerd\", \"/var/lib/kubelet\", \"/var/log/pods\"]]");
    ck_assert_str_eq(aws_toml_get(cmd, "mode"), "\"always\"");
    ck_assert_str_eq(aws_toml_get(cmd, "essential"), "true");
    ck_assert_str_eq(aws_toml_get(aws_toml_table(doc, hello, 3, false), "commands"), "[[\"echo\", \"hello\"]]");
    aws_toml_free(doc);
    free(out);

    fixture_case c0;
    out = build_and_compare("bottlerocket-raid0-default-bind");
    ck_assert_ptr_nonnull(strstr(out, "commands = [[\"apiclient\", \"ephemeral-storage\", \"init\"], "
                                      "[\"apiclient\", \"ephemeral-storage\", \"bind\"]]\n"));
    free(out);

    /* which Bottlerocket binds by default: 1.46.0 and later, "latest" taken as the newest */
    ck_assert(aws_bottlerocket_default_bind("latest"));
    ck_assert(aws_bottlerocket_default_bind("v1.46.0"));
    ck_assert(aws_bottlerocket_default_bind("v2.0.1"));
    ck_assert(!aws_bottlerocket_default_bind("v1.45.9"));
    ck_assert(!aws_bottlerocket_default_bind("v1.46"));
    ck_assert(!aws_bottlerocket_default_bind(NULL));

    /* a user's settings.bootstrap-commands that is not a table cannot take Karpenter's command: refused, naming it */
    load_case("bottlerocket-raid0-default-bind", &c0);
    c0.b.custom = "[settings]\nbootstrap-commands = 3\n";
    char *refused = NULL;
    ck_assert_int_eq(aws_userdata_build(&c0.b, &refused, err, sizeof(err)), NS_ERR_INVALID_CONFIG);
    ck_assert_ptr_nonnull(strstr(err, "settings.bootstrap-commands for instanceStorePolicy RAID0"));
    ck_assert_ptr_null(refused);
    free_case(&c0);

    /* Windows and Custom: nothing, as Karpenter */
    fixture_case c;
    load_case("windows2022", &c);
    char *plain = NULL, *raid0 = NULL;
    ck_assert_int_eq(aws_userdata_build(&c.b, &plain, err, sizeof(err)), NS_OK);
    c.b.instance_store_raid0 = true;
    ck_assert_int_eq(aws_userdata_build(&c.b, &raid0, err, sizeof(err)), NS_OK);
    ck_assert_str_eq(plain, raid0);
    free(plain);
    free(raid0);
    free_case(&c);
}
END_TEST

START_TEST(test_windows_powershell)
{
    char *out = build_and_compare("windows2022");
    ck_assert_int_eq(strncmp(out, "<powershell>\nWrite-Host", 23), 0);
    ck_assert_ptr_null(strstr(out + 1, "<powershell>")); /* the user's own tags are not nested */
    ck_assert_ptr_nonnull(strstr(out, "-DNSClusterIP '10.100.0.10'\n</powershell>"));
    free(out);
    out = build_and_compare("windows2019");
    ck_assert_ptr_nonnull(strstr(out, "--max-pods=20'"));
    free(out);
}
END_TEST

START_TEST(test_custom_verbatim)
{
    char *out = build_and_compare("custom");
    char *script = test_fixture("userdata/shell-script.txt");
    ck_assert_str_eq(out, script);
    free(script);
    free(out);
}
END_TEST

START_TEST(test_refusals)
{
    fixture_case c;
    char *out = (char *)1;
    load_case("al2-plain", &c);
    c.b.custom = "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"x\"\n\n--x\nContent-Type: text/plain\n\n"
                 "no closing boundary\n";
    ck_assert_int_eq(aws_userdata_build(&c.b, &out, err, sizeof(err)), NS_ERR_INVALID_CONFIG);
    ck_assert_ptr_null(out);
    ck_assert_ptr_nonnull(strstr(err, "closing boundary"));
    c.b.custom = "Content-Type: text/plain\n\nnot multipart\n";
    ck_assert_int_eq(aws_userdata_build(&c.b, &out, err, sizeof(err)), NS_ERR_INVALID_CONFIG);
    ck_assert_ptr_nonnull(strstr(err, "multipart"));
    c.b.family = AWS_FAMILY_BOTTLEROCKET;
    c.b.custom = "[settings.kubernetes\nx = 1\n";
    ck_assert_int_eq(aws_userdata_build(&c.b, &out, err, sizeof(err)), NS_ERR_INVALID_CONFIG);
    ck_assert_ptr_nonnull(strstr(err, "TOML line 1"));
    c.b.custom = "[settings]\nkubernetes = 3\n";
    ck_assert_int_eq(aws_userdata_build(&c.b, &out, err, sizeof(err)), NS_ERR_INVALID_CONFIG);
    c.b.custom = NULL;
    c.labels[0].value = "it's";
    ck_assert_int_eq(aws_userdata_build(&c.b, &out, err, sizeof(err)), NS_ERR_INVALID_CONFIG);
    ck_assert_ptr_nonnull(strstr(err, "node label"));
    c.labels[0].value = "ok";
    c.b.endpoint = NULL;
    ck_assert_int_eq(aws_userdata_build(&c.b, &out, err, sizeof(err)), NS_ERR_INVALID_CONFIG);
    ck_assert_ptr_nonnull(strstr(err, "API endpoint"));
    free_case(&c);
}
END_TEST

START_TEST(test_toml_reader)
{
    aws_toml *doc = NULL;
    const char *good = "a = 1\nb.c = \"x\" # comment\n[t]\n\"quoted key\" = [1, [2, 3]]\ninline = {x = 1, y.z = 'q'}\n"
                       "[t.sub]\ns = '''raw\nstring'''\n";
    ck_assert_msg(aws_toml_parse(good, &doc, err, sizeof(err)) == NS_OK, "%s", err);
    char *text = aws_toml_serialize(doc);
    ck_assert_str_eq(text, "a = 1\n\n[b]\nc = \"x\"\n\n[t]\n\"quoted key\" = [1, [2, 3]]\n\n[t.inline]\nx = 1\n\n"
                           "[t.inline.y]\nz = 'q'\n\n[t.sub]\ns = '''raw\nstring'''\n");
    aws_toml *again = NULL;
    ck_assert_int_eq(aws_toml_parse(text, &again, err, sizeof(err)), NS_OK);
    aws_toml_free(again);
    free(text);
    aws_toml_free(doc);
    const char *bad[] = {"[[array.of.tables]]\n", "a = 1\na = 2\n", "a = \"unterminated\n", "a = [1, 2\n", "= 3\n",
                         "a = 1 b = 2\n", "a = 1\n[a]\n"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        doc = (aws_toml *)1;
        ck_assert_msg(aws_toml_parse(bad[i], &doc, err, sizeof(err)) == NS_ERR_INVALID_ARGUMENT, "accepted: %s", bad[i]);
        ck_assert_ptr_null(doc);
    }
    /* Inline tables nested a million deep (this crashed the process on its stack): refused with the limit named;
     * at the limit they are read. */
    size_t levels = 1000000;
    char *deep = malloc(levels * 4 + 16);
    char *w = deep;
    for (size_t i = 0; i < levels; i++)
        w += sprintf(w, "a={");
    strcpy(w, "}\n");
    doc = (aws_toml *)1;
    ck_assert_int_eq(aws_toml_parse(deep, &doc, err, sizeof(err)), NS_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(doc);
    ck_assert_msg(strstr(err, "TOML line 1: inline tables nested more than 32 deep"), "%s", err);
    w = deep;
    for (int i = 0; i < AWS_TOML_MAX_NESTING; i++)
        w += sprintf(w, "a.b.c={");
    w += sprintf(w, "x=1");
    for (int i = 0; i < AWS_TOML_MAX_NESTING; i++)
        *w++ = '}';
    strcpy(w, "\n");
    ck_assert_msg(aws_toml_parse(deep, &doc, err, sizeof(err)) == NS_OK, "%s", err);
    text = aws_toml_serialize(doc);
    ck_assert_ptr_nonnull(text);
    free(text);
    aws_toml_free(doc);
    free(deep);
    char *q = aws_toml_quote("a\"b\\c\nd\x01");
    ck_assert_str_eq(q, "\"a\\\"b\\\\c\\nd\\u0001\"");
    free(q);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("aws_userdata");
    TCase *tc = tcase_create("families");
    tcase_add_test(tc, test_al2_plain_script_becomes_first_part);
    tcase_add_test(tc, test_al2_user_mime_parts_kept_in_order);
    tcase_add_test(tc, test_al2_kubelet_settings);
    tcase_add_test(tc, test_al2023_nodeconfig_first);
    tcase_add_test(tc, test_bottlerocket_settings_merged);
    tcase_add_test(tc, test_instance_store_raid0);
    tcase_add_test(tc, test_windows_powershell);
    tcase_add_test(tc, test_custom_verbatim);
    tcase_add_test(tc, test_refusals);
    tcase_add_test(tc, test_toml_reader);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
