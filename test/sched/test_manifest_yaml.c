/* YAML reading: scalar typing as sigs.k8s.io/yaml (go-yaml v2) does it, anchors, aliases, merge keys, line numbers,
 * and how typed scalars reach string, integer and quantity fields. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "errors/ns_error.h"
#include "manifest/loader.h"
#include "manifest/yaml_doc.h"
#include "test_kinds.h"

static ns_ydoc *doc;

static const ns_ynode *parse(const char *text)
{
    ns_yreader *r;
    ck_assert_int_eq(ns_yreader_open_string("t.yaml", text, strlen(text), &r), 0);
    ck_assert_int_eq(ns_yreader_next(r, &doc), 0);
    ns_yreader_close(r);
    ck_assert_ptr_nonnull(doc);
    return ns_ydoc_root(doc);
}

static void done(void)
{
    ns_ydoc_free(doc);
    doc = NULL;
}

static void typed(const char *text, ns_yscalar_type type, const char *str)
{
    char buf[128];
    snprintf(buf, sizeof(buf), "v: %s\n", text);
    const ns_ynode *root = parse(buf);
    const ns_ynode *v = ns_ymap_value(root, 0);
    ck_assert_msg(v->type == type, "%s typed %d, want %d", text, v->type, type);
    if (str)
        ck_assert_str_eq(v->str, str);
    done();
}

START_TEST(test_scalar_typing)
{
    typed("yes", NS_YS_BOOL, "true");
    typed("Y", NS_YS_BOOL, "true");
    typed("on", NS_YS_BOOL, "true");
    typed("OFF", NS_YS_BOOL, "false");
    typed("n", NS_YS_BOOL, "false");
    typed("True", NS_YS_BOOL, "true");
    typed("'yes'", NS_YS_STRING, "yes");
    typed("\"8\"", NS_YS_STRING, "8");
    typed("!!str 8", NS_YS_STRING, "8");
    typed("8", NS_YS_INT, "8");
    typed("-12", NS_YS_INT, "-12");
    typed("0x1F", NS_YS_INT, "31");
    typed("0o17", NS_YS_INT, "15");
    typed("017", NS_YS_INT, "15");
    typed("0b101", NS_YS_INT, "5");
    typed("1_000", NS_YS_INT, "1000");
    typed("08", NS_YS_FLOAT, "8"); /* not octal: go-yaml falls back to a float */
    typed("1.5", NS_YS_FLOAT, "1.5");
    typed(".5", NS_YS_FLOAT, "0.5");
    typed("1e3", NS_YS_FLOAT, "1000");
    typed("1e6", NS_YS_FLOAT, "1e+06");
    typed("0.0001", NS_YS_FLOAT, "0.0001");
    typed("0.00001", NS_YS_FLOAT, "1e-05");
    typed("123456.5", NS_YS_FLOAT, "123456.5");
    typed("n", NS_YS_BOOL, "false"); /* YAML 1.1: an unquoted n is a boolean */
    typed(".inf", NS_YS_FLOAT, "+Inf");
    typed("~", NS_YS_NULL, NULL);
    typed("null", NS_YS_NULL, NULL);
    typed("", NS_YS_NULL, NULL);
    typed("1.2.3", NS_YS_STRING, "1.2.3");
    typed("500m", NS_YS_STRING, "500m");
    typed("1e", NS_YS_STRING, "1e");
}
END_TEST

START_TEST(test_anchors_merge_and_lines)
{
    const ns_ynode *root = parse("base: &b\n  a: 1\n  b: 2\nderived:\n  <<: *b\n  b: 3\n  c: 4\nlist: [*b, *b]\n");
    const ns_ynode *derived = ns_ymap_get(root, "derived");
    ck_assert_uint_eq(derived->n, 3);
    ck_assert_int_eq(ns_ymap_get(derived, "a")->i, 1); /* merged */
    ck_assert_int_eq(ns_ymap_get(derived, "b")->i, 3); /* explicit keys win */
    ck_assert_int_eq(ns_ymap_get(derived, "c")->i, 4);
    ck_assert_int_eq(derived->line, 5);
    ck_assert_int_eq(ns_ymap_get(derived, "c")->line, 7);
    const ns_ynode *list = ns_ymap_get(root, "list");
    ck_assert_ptr_eq(list->items[0], ns_ymap_get(root, "base")); /* aliases share the anchored node */
    ck_assert_uint_eq(ns_ynode_hash(root, 1), ns_ynode_hash(root, 1));
    ck_assert_uint_ne(ns_ynode_hash(root, 1), ns_ynode_hash(derived, 1));
    done();
}
END_TEST

START_TEST(test_multi_document_stream)
{
    const char *text = "a: 1\n---\n---\nb: 2\n...\n";
    ns_yreader *r;
    ck_assert_int_eq(ns_yreader_open_string("m.yaml", text, strlen(text), &r), 0);
    int docs = 0, nulls = 0;
    for (;;) {
        ns_ydoc *d = NULL;
        ck_assert_int_eq(ns_yreader_next(r, &d), 0);
        if (!d)
            break;
        docs++;
        nulls += ns_ynode_is_null(ns_ydoc_root(d));
        ns_ydoc_free(d);
    }
    ns_yreader_close(r);
    ck_assert_int_eq(docs, 3);
    ck_assert_int_eq(nulls, 1);
}
END_TEST

START_TEST(test_typed_values_in_manifests)
{
    const char *text = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: typed\n  labels:\n    version: 2\n"
                       "    enabled: yes\n    ratio: 1.50\nspec:\n  containers:\n    - name: c\n      resources:\n"
                       "        requests: {cpu: 0.5, memory: 0x400}\n";
    ns_cluster *c = test_cluster_new();
    ck_assert_msg(ns_manifest_load_string(c, "typed.yaml", text, strlen(text)) == 0, "%s", ns_error_message());
    const ns_pod *p = c->pods[0];
    ck_assert_str_eq(ns_labels_get(&p->meta.labels, "version"), "2");
    ck_assert_str_eq(ns_labels_get(&p->meta.labels, "enabled"), "true");
    ck_assert_str_eq(ns_labels_get(&p->meta.labels, "ratio"), "1.5");
    ck_assert_int_eq(p->requests.cpu_milli, 500);
    ck_assert_int_eq(p->requests.memory_bytes, 1024);
    ns_cluster_free(c);

    c = test_cluster_new();
    ck_assert_msg(ns_manifest_load_file(c, FIXTURE_DIR "/pod.json") == 0, "%s", ns_error_message());
    ck_assert_str_eq(c->pods[0]->meta.name, "from-json");
    ck_assert_int_eq(c->pods[0]->requests.cpu_milli, 250);
    ck_assert_int_eq(c->pods[0]->requests.memory_bytes, INT64_C(1073741824));
    ns_cluster_free(c);

    const char *bool_field = "apiVersion: v1\nkind: Node\nmetadata: {name: node1}\nspec:\n  unschedulable: \"true\"\n";
    c = test_cluster_new();
    ck_assert_int_eq(ns_manifest_load_string(c, "b.yaml", bool_field, strlen(bool_field)), NS_ERR_INVALID_CONFIG);
    ck_assert_str_eq(ns_error_message(), "b.yaml:5: Node node1: spec.unschedulable: expected a boolean, got the string \"true\"");
    ns_cluster_free(c);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("manifest-yaml");
    TCase *tc = tcase_create("yaml");
    tcase_add_test(tc, test_scalar_typing);
    tcase_add_test(tc, test_anchors_merge_and_lines);
    tcase_add_test(tc, test_multi_document_stream);
    tcase_add_test(tc, test_typed_values_in_manifests);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
