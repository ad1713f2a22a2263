/* Karpenter's real CRDs on the real API server: the karpenter.sh NodePool and NodeClaim CRDs of sigs.k8s.io/karpenter
 * and the EC2NodeClass CRD of github.com/aws/karpenter-provider-aws, at a release (fetched through the Go module proxy
 * into the cache by test/kube/fetch-crds.sh, never copied into the tree), applied to the test plane; objects the
 * API server has validated and defaulted with their schemas and CEL rules (status written through the status
 * subresource as Karpenter's controllers write it) are listed and watched by informers, and nodesmith decodes every
 * one: NodePools and NodeClaims into the model, EC2NodeClasses with the kinds aws.so declares (its
 * validate_nodeclass runs on each), a claim found by its providerID. Azure's and Alibaba's provider modules are not
 * on the module proxy this project can reach, so their node classes are not tested here. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errors/ns_error.h"
#include "kc_util.h"
#include "kube/kube_decode.h"
#include "kube/kube_informer.h"
#include "kube_bed.h"
#include "log/ns_log.h"
#include "model/node.h"
#include "model/nodeclass.h"
#include "model/nodeclass_kinds.h"
#include "model/nodepool.h"
#include "plugin/plugin_loader.h"

#define KARPENTER "sigs.k8s.io/karpenter v1.14.0"
#define AWS "github.com/aws/karpenter-provider-aws v1.14.0"

/* The directory of a module's CRDs (fetch-crds.sh MODULE VERSION). */
static void crd_dir(const char *module_version, char *out, size_t len)
{
    char cmd[1024];
    snprintf(cmd, sizeof(cmd), "bash %s %s", NS_FETCH_CRDS, module_version);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    ck_assert_ptr_nonnull(fgets(out, (int)len, p));
    ck_assert_int_eq(pclose(p), 0);
    out[strcspn(out, "\n")] = '\0';
}

static void kubectl_ok(const char *stdin_text, const char **argv)
{
    char *out = NULL;
    int rc = kube_bed_kubectl(&out, stdin_text, argv);
    ck_assert_msg(rc == 0, "kubectl %s %s: %s", argv[0], argv[1] ? argv[1] : "", out ? out : "");
    free(out);
}

static void apply_crd(const char *dir, const char *file, const char *name)
{
    char path[1024], crd[256];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    /* server-side with force: the informer tests may have left a permissive stand-in of the same CRD */
    const char *apply[] = {"apply", "--server-side", "--force-conflicts", "-f", path, NULL};
    kubectl_ok(NULL, apply);
    snprintf(crd, sizeof(crd), "crd/%s", name);
    const char *wait[] = {"wait", "--for", "condition=Established", "--timeout=60s", crd, NULL};
    kubectl_ok(NULL, wait);
}

static const char *const objects =
    "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: kc-crds, labels: {kc-crds: \"1\"}}\n"
    "spec:\n  role: KarpenterNodeRole-demo\n  amiSelectorTerms: [{alias: al2023@latest}]\n"
    "  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]\n"
    "  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]\n"
    "  tags: {team: a}\n"
    "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: kc-crds, labels: {kc-crds: \"1\"}}\n"
    "spec:\n  weight: 10\n  limits: {cpu: \"1000\"}\n"
    "  disruption: {consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 1m, budgets: [{nodes: \"20%\"}]}\n"
    "  template:\n    metadata: {labels: {team: a}}\n    spec:\n"
    "      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: kc-crds}\n"
    "      expireAfter: 720h\n"
    "      taints: [{key: dedicated, value: a, effect: NoSchedule}]\n"
    "      requirements:\n"
    "      - {key: karpenter.sh/capacity-type, operator: In, values: [spot, on-demand]}\n"
    "      - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m, r], minValues: 2}\n"
    "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\n"
    "metadata: {name: kc-crds-x7k2p, labels: {kc-crds: \"1\", karpenter.sh/nodepool: kc-crds}}\n"
    "spec:\n  nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: kc-crds}\n"
    "  expireAfter: 720h\n"
    "  requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [m5.large]}]\n"
    "  resources: {requests: {cpu: \"1\", memory: 1Gi}}\n";

/* As Karpenter's lifecycle controller writes it after a launch. */
static const char *const claim_status =
    "{\"status\":{\"providerID\":\"aws:///us-west-2a/i-0123456789abcdef0\",\"imageID\":\"ami-0123456789abcdef0\","
    "\"capacity\":{\"cpu\":\"2\",\"memory\":\"8Gi\",\"pods\":\"29\"},"
    "\"allocatable\":{\"cpu\":\"1930m\",\"memory\":\"7Gi\",\"pods\":\"29\"},"
    "\"conditions\":[{\"type\":\"Launched\",\"status\":\"True\",\"reason\":\"Launched\",\"message\":\"\","
    "\"lastTransitionTime\":\"2026-11-23T22:00:00Z\",\"observedGeneration\":1}]}}";

static ns_kube_informer *informer(ns_kube_client *c, const ns_kube_resource *r, const ns_kube_decoder *dec,
                                  const void *ctx)
{
    ns_kube_informer_options o = {.resource = r, .label_selector = "kc-crds=1", .decoder = dec, .decoder_ctx = ctx};
    ns_kube_informer *inf = NULL;
    ck_assert_int_eq(ns_kube_informer_new(c, &o, &inf), 0);
    ck_assert_int_eq(ns_kube_informer_start(inf), 0);
    ck_assert_msg(ns_kube_informer_wait_synced(inf, 30000), "%s: %s", r->resource, ns_error_message());
    ns_kube_informer_stats st;
    ns_kube_informer_get_stats(inf, &st);
    ck_assert_msg(st.decode_errors == 0, "%s: %s", r->resource, st.last_decode_error);
    return inf;
}

static const void *typed_of(ns_kube_informer *inf, const char *name)
{
    const ns_kube_obj *o = ns_kube_store_get(ns_kube_informer_store(inf), NULL, name);
    ck_assert_msg(o != NULL, "%s is not cached", name);
    ck_assert_ptr_nonnull(o->typed);
    return o->typed;
}

static bool first(void *ud, const ns_kube_obj *o)
{
    *(const ns_kube_obj **)ud = o;
    return false;
}

static bool claim_launched(void *ud)
{
    ns_kube_informer *inf = ud;
    ns_kube_informer_rdlock(inf);
    const ns_kube_obj *o = ns_kube_store_get(ns_kube_informer_store(inf), NULL, "kc-crds-x7k2p");
    bool ok = o && o->typed && ((const ns_nodeclaim *)o->typed)->provider_id;
    ns_kube_informer_unlock(inf);
    return ok;
}

START_TEST(real_karpenter_and_aws_crds_decode)
{
    char karpenter[512], aws[512];
    crd_dir(KARPENTER, karpenter, sizeof(karpenter));
    crd_dir(AWS, aws, sizeof(aws));
    apply_crd(karpenter, "karpenter.sh_nodepools.yaml", "nodepools.karpenter.sh");
    apply_crd(karpenter, "karpenter.sh_nodeclaims.yaml", "nodeclaims.karpenter.sh");
    apply_crd(aws, "karpenter.k8s.aws_ec2nodeclasses.yaml", "ec2nodeclasses.karpenter.k8s.aws");
    const char *apply[] = {"apply", "-f", "-", NULL};
    kubectl_ok(objects, apply);

    /* the node-class kinds aws.so declares, as `nodesmith controller --provider aws` loads them */
    setenv("AWS_REGION", "us-west-2", 1);
    setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "example/secret", 1);
    setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
    ns_plugin_setting settings[] = {{"cluster_name", "demo"}};
    ns_plugin_load_params params = {.settings = settings, .n_settings = 1};
    ns_plugin *plugin = NULL;
    ck_assert_msg(ns_plugin_load_file(NS_AWS_PLUGIN, &params, &plugin) == NS_OK, "%s", ns_error_message());
    ns_nodeclass_kinds *kinds = ns_nodeclass_kinds_new();
    ck_assert_int_eq(ns_plugin_declare_kinds(plugin, kinds), NS_OK);
    const ns_nodeclass_kind_info *ec2 = NULL;
    for (size_t i = 0; i < ns_nodeclass_kinds_count(kinds); i++) {
        const ns_nodeclass_kind_info *k = ns_nodeclass_kinds_at(kinds, i);
        if (k->kind && strcmp(k->kind, "EC2NodeClass") == 0 && strcmp(k->version, "v1") == 0)
            ec2 = k;
    }
    ck_assert_ptr_nonnull(ec2);
    char buf[256];
    ns_kube_resource nodeclasses;
    ck_assert_int_eq(ns_kube_resource_nodeclass(ec2->group, ec2->version, ec2->kind, buf, sizeof(buf), &nodeclasses),
                     0);

    ns_kube_client *c = kc_admin();
    ns_kube_informer *pools = informer(c, &NS_KUBE_NODEPOOLS, ns_kube_decoder_for(&NS_KUBE_NODEPOOLS), NULL);
    ns_kube_informer *claims = informer(c, &NS_KUBE_NODECLAIMS, ns_kube_decoder_for(&NS_KUBE_NODECLAIMS), NULL);
    ns_kube_informer *classes = informer(c, &nodeclasses, &NS_KUBE_DECODE_NODECLASS, kinds);

    ns_kube_informer_rdlock(pools);
    const ns_nodepool *np = typed_of(pools, "kc-crds");
    ck_assert_int_eq(np->weight, 10);
    ck_assert_str_eq(np->api_version, "karpenter.sh/v1");
    ck_assert_uint_eq(np->n_requirements, 2);
    ck_assert_int_eq(np->requirements[1].min_values, 2);
    ck_assert_uint_eq(np->n_taints, 1);
    ck_assert_str_eq(np->nodeclass_ref.kind, "EC2NodeClass");
    ck_assert_int_eq(np->expire_after_ms, 720LL * 3600 * 1000);
    ck_assert_int_eq(np->consolidate_after_ms, 60000);
    ck_assert_uint_eq(np->n_budgets, 1);
    ck_assert_str_eq(ns_labels_get(&np->labels, "team"), "a");
    ns_kube_informer_unlock(pools);

    ns_kube_informer_rdlock(claims);
    const ns_nodeclaim *nc = typed_of(claims, "kc-crds-x7k2p");
    ck_assert_int_eq(nc->requests.cpu_milli, 1000);
    ck_assert_str_eq(nc->nodeclass_ref.name, "kc-crds");
    ck_assert_ptr_null(nc->provider_id);
    ns_kube_informer_unlock(claims);

    ns_kube_informer_rdlock(classes);
    const ns_nodeclass_def *def = typed_of(classes, "kc-crds");
    ck_assert_str_eq(def->kind, "EC2NodeClass");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(def->spec, "role")->valuestring, "KarpenterNodeRole-demo");
    /* the API server defaulted fields nodesmith must accept (metadataOptions, per the CRD's schema) */
    ck_assert_ptr_nonnull(cJSON_GetObjectItemCaseSensitive(def->spec, "metadataOptions"));
    ns_kube_informer_unlock(classes);

    /* the claim is launched: its status, written through the subresource, arrives through the watch */
    const char *patch[] = {"patch", "nodeclaim", "kc-crds-x7k2p", "--subresource=status", "--type=merge", "-p",
                           claim_status, NULL};
    kubectl_ok(NULL, patch);
    ck_assert(kc_wait(claim_launched, claims, 15000));
    ns_kube_informer_rdlock(claims);
    const ns_kube_obj *by_id = NULL;
    ck_assert_uint_eq(ns_kube_store_each(ns_kube_informer_store(claims), NS_KUBE_BY_PROVIDER_ID,
                                         "aws:///us-west-2a/i-0123456789abcdef0", first, &by_id),
                      1);
    ck_assert_str_eq(by_id->name, "kc-crds-x7k2p");
    nc = by_id->typed;
    ck_assert_int_eq(nc->allocatable.cpu_milli, 1930);
    ck_assert_str_eq(nc->image_id, "ami-0123456789abcdef0");
    ns_kube_informer_unlock(claims);
    ns_kube_informer_stats st;
    ns_kube_informer_get_stats(claims, &st);
    ck_assert_msg(st.decode_errors == 0, "%s", st.last_decode_error);

    ns_kube_informer_free(classes);
    ns_kube_informer_free(claims);
    ns_kube_informer_free(pools);
    ns_kube_client_free(c);
    ns_nodeclass_kinds_free(kinds);
    ns_plugin_unload(plugin);
    const char *del[] = {"delete", "nodeclaim,nodepool,ec2nodeclass", "-l", "kc-crds=1", "--wait=false", NULL};
    kubectl_ok(NULL, del);
}
END_TEST

int main(void)
{
    kube_bed bed;
    ns_log_set_level(NS_LOG_ERROR);
    if (kube_bed_start(&bed) < 0)
        return 1;
    Suite *s = suite_create("kube-client-crds");
    TCase *t = tcase_create("crds");
    tcase_set_timeout(t, 180);
    tcase_add_test(t, real_karpenter_and_aws_crds_decode);
    suite_add_tcase(s, t);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    kube_bed_stop(&bed);
    return failed ? 1 : 0;
}
