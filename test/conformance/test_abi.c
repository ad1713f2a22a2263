/*
 * ABI rules: what the provider's table says about itself. The loader already refuses the worst breaks; these tests
 * state each rule on its own, read the table as the provider exported it (not only the loader's copy), and check
 * what the loader does not: the name matching the file, the entry point being stable, the option table's entries.
 */
#include <ctype.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "conf.h"
#include "config/scalar_parse.h"
#include "errors/ns_error.h"
#include "model/nodeclass_kinds.h"
#include "model/req_defaults.h"

/* The provider's own table, copied into a zeroed full-size struct as far as its struct_size reaches. */
static void raw_table(ns_provider *out)
{
    void *handle = dlopen(conf_cfg.so_path, RTLD_NOW | RTLD_NOLOAD);
    void *sym;
    ns_provider_entry_fn entry;
    const ns_provider *first, *second;

    ck_assert_msg(handle != NULL, "conformance: the loaded module %s is not mapped: %s", conf_cfg.so_path, dlerror());
    sym = dlsym(handle, NS_PROVIDER_ENTRY);
    ck_assert_msg(sym != NULL, "[abi-entry] %s exports no %s", conf_cfg.so_path, NS_PROVIDER_ENTRY);
    memcpy(&entry, &sym, sizeof(entry));
    first = entry();
    second = entry();
    CONF_CHECK("abi-entry", first != NULL, "%s() returned NULL", NS_PROVIDER_ENTRY);
    CONF_CHECK("abi-entry", first == second, "%s() returned a different table on its second call (it must return "
               "one static table)", NS_PROVIDER_ENTRY);
    memset(out, 0, sizeof(*out));
    memcpy(out, first, first->struct_size < sizeof(*out) ? first->struct_size : sizeof(*out));
}

START_TEST(test_abi_version)
{
    ns_provider t;

    raw_table(&t);
    CONF_CHECK("abi-version", t.abi_version >= NS_PROVIDER_ABI_MIN && t.abi_version <= NS_PROVIDER_ABI_VERSION,
               "abi_version %u is outside the supported range %d..%d", t.abi_version, NS_PROVIDER_ABI_MIN,
               NS_PROVIDER_ABI_VERSION);
    CONF_CHECK("abi-version", ns_plugin_abi_version(conf_plugin) == t.abi_version,
               "the loader reports ABI %u, the table says %u", ns_plugin_abi_version(conf_plugin), t.abi_version);
}
END_TEST

START_TEST(test_abi_struct_size)
{
    ns_provider t;

    raw_table(&t);
    CONF_CHECK("abi-struct-size", t.struct_size >= ns_plugin_min_table_size(t.abi_version),
               "struct_size %u is too small for ABI %u, which needs %zu bytes", t.struct_size, t.abi_version,
               ns_plugin_min_table_size(t.abi_version));
}
END_TEST

START_TEST(test_abi_identity)
{
    ns_provider t;
    const char *base = strrchr(conf_cfg.so_path, '/');
    size_t len;

    raw_table(&t);
    base = base ? base + 1 : conf_cfg.so_path;
    len = strlen(base);
    CONF_CHECK("abi-identity", t.name && t.name[0], "the table has no name");
    CONF_CHECK("abi-identity", t.version && t.version[0], "provider %s has no version", t.name);
    CONF_CHECK("abi-identity", len > 3 && strcmp(base + len - 3, ".so") == 0 && strlen(t.name) == len - 3 &&
                                   strncmp(base, t.name, len - 3) == 0,
               "provider name \"%s\" does not match its file %s (provider NAME must be NAME.so)", t.name, base);
}
END_TEST

START_TEST(test_abi_required_methods)
{
    ns_provider t;

    raw_table(&t);
    const struct {
        const char *name;
        bool present;
        uint32_t since;
    } methods[] = {
        {"init", t.init != NULL, 1},
        {"destroy", t.destroy != NULL, 1},
        {"list_instance_types", t.list_instance_types != NULL, 1},
        {"launch", t.launch != NULL, 1},
        {"terminate", t.terminate != NULL, 1},
        {"list_instances", t.list_instances != NULL, 1},
        {"poll_events", t.poll_events != NULL, 1},
        {"get_instance", t.get_instance != NULL, 2},
    };
    for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
        CONF_CHECK("abi-required-methods", methods[i].present || t.abi_version < methods[i].since,
                   "required method %s (ABI %u) is NULL in a provider claiming ABI %u", methods[i].name,
                   methods[i].since, t.abi_version);
}
END_TEST

/* Keys are written as YAML keys and as --set key=value, so they cannot hold what either syntax splits on. */
static bool key_is_plain(const char *key)
{
    for (const char *c = key; *c; c++)
        if (isspace((unsigned char)*c) || *c == ':' || *c == '=' || *c == '#' || !isprint((unsigned char)*c))
            return false;
    return key[0] != '\0';
}

static bool default_parses(const ns_option *o)
{
    int64_t i;
    bool b;

    switch (o->type) {
    case NS_OPT_STRING: return true;
    case NS_OPT_INT: return ns_parse_int64(o->default_value, &i) == 0;
    case NS_OPT_BOOL: return ns_parse_bool(o->default_value, &b) == 0;
    case NS_OPT_DURATION: return ns_parse_duration_ms(o->default_value, &i) == 0;
    default: return false;
    }
}

#define CONF_MAX_OPTIONS 256

START_TEST(test_abi_options)
{
    ns_provider t;
    size_t n = 0;

    raw_table(&t);
    for (; t.options && n < CONF_MAX_OPTIONS && t.options[n].key; n++) {
        const ns_option *o = &t.options[n];

        CONF_CHECK("abi-options", key_is_plain(o->key),
                   "option %zu: key \"%s\" must be non-empty, printable, without spaces, ':', '=' or '#'", n, o->key);
        CONF_CHECK("abi-options", o->type >= NS_OPT_STRING && o->type <= NS_OPT_DURATION,
                   "option %s: type %d is not an ns_option_type", o->key, (int)o->type);
        CONF_CHECK("abi-options", o->description && o->description[0], "option %s has no description", o->key);
        CONF_CHECK("abi-options", !o->default_value || default_parses(o),
                   "option %s: default \"%s\" is not a valid value of its type", o->key, o->default_value);
        for (size_t j = 0; j < n; j++)
            CONF_CHECK("abi-options", strcmp(t.options[j].key, o->key) != 0, "option %s is declared twice", o->key);
    }
    CONF_CHECK("abi-options", n < CONF_MAX_OPTIONS, "the option table has no {NULL} terminator within %d entries",
               CONF_MAX_OPTIONS);
}
END_TEST

typedef struct policy_ctx {
    unsigned bad;
    char first_bad[256];
} policy_ctx;

static int on_policy(void *ctx, const ns_repair_policy *p)
{
    policy_ctx *c = ctx;

    if (!p->condition_type || !p->condition_type[0] || !p->condition_status || !p->condition_status[0] ||
        p->toleration_ms < 0) {
        if (c->bad++ == 0)
            snprintf(c->first_bad, sizeof(c->first_bad), "condition \"%s\"=\"%s\" after %lld ms",
                     p->condition_type ? p->condition_type : "(null)",
                     p->condition_status ? p->condition_status : "(null)", (long long)p->toleration_ms);
    }
    return 0;
}

/* Optional method: only checked when present. */
START_TEST(test_abi_repair_policies)
{
    policy_ctx c = {0};
    int rc = ns_plugin_list_repair_policies(conf_plugin, on_policy, &c);

    if (rc == NS_ERR_UNSUPPORTED && !ns_plugin_table(conf_plugin)->list_repair_policies)
        return;
    CONF_CHECK("repair-policies", rc == NS_OK, "list_repair_policies failed: %s", conf_last_error());
    CONF_CHECK("repair-policies", c.bad == 0,
               "%u repair policies lack a condition type or status or have a negative toleration; first: %s", c.bad,
               c.first_bad);
}
END_TEST

/* Optional data: each drift_fields entry is "Kind.field" with both parts non-empty, and none repeats. */
START_TEST(test_abi_drift_fields)
{
    const char *const *fields = ns_plugin_table(conf_plugin)->drift_fields;
    for (size_t i = 0; fields && fields[i]; i++) {
        const char *dot = strchr(fields[i], '.');
        CONF_CHECK("drift-fields", dot && dot != fields[i] && dot[1] != '\0' && !strchr(dot + 1, '.'),
                   "drift_fields[%zu] is \"%s\", not \"Kind.field\"", i, fields[i]);
        for (size_t j = 0; j < i; j++)
            CONF_CHECK("drift-fields", strcmp(fields[i], fields[j]) != 0, "drift_fields lists \"%s\" twice",
                       fields[i]);
    }
    CONF_CHECK("drift-fields", !fields || ns_plugin_table(conf_plugin)->check_drift,
               "drift_fields is set but check_drift is NULL: nothing would judge those fields");
}
END_TEST

/* ABI 3: the kinds register with the core, and the node class the suite runs with is one of them. */
START_TEST(test_abi_nodeclass_kinds)
{
    ns_nodeclass_kinds *k = ns_nodeclass_kinds_new();
    const ns_nodeclass *nc = &conf_cfg.nodeclass;

    ck_assert_ptr_nonnull(k);
    CONF_CHECK("nodeclass-kinds", ns_plugin_declare_kinds(conf_plugin, k) == NS_OK, "%s", conf_last_error());
    if (ns_plugin_abi_version(conf_plugin) >= 3) {
        const ns_nodeclass_kind_info *info = ns_nodeclass_kinds_find(k, nc->api_version, nc->kind);
        char known[1024];
        CONF_CHECK("nodeclass-kinds", info && !info->any_kind,
                   "the node class under test, %s (%s), is not a kind the provider declares (%s)", nc->kind,
                   nc->api_version, ns_nodeclass_kinds_describe(k, known, sizeof(known)));
    }
    ns_nodeclass_kinds_free(k);
}
END_TEST

/* Each default the provider passes, checked again on its own and compared with the copy the loader kept. */
typedef struct defaults_ctx {
    const ns_req_defaults *kept;
    ns_req_defaults *again;
    size_t n;
    uint32_t short_size; /* the first struct_size below ABI 6's, or 0 */
} defaults_ctx;

static int on_default(void *arg, const ns_requirement_default *d)
{
    defaults_ctx *c = arg;
    char what[64];
    snprintf(what, sizeof(what), "v1alpha5_defaults[%zu]", c->n++);
    if (d->struct_size < sizeof(*d) && !c->short_size)
        c->short_size = d->struct_size;
    CONF_CHECK("v1alpha5-defaults", ns_req_defaults_add(c->again, what, d->key, d->op, d->values, d->n_values,
                                                        d->unless_keys, d->n_unless_keys) == NS_OK,
               "%s", conf_last_error());
    return 0;
}

/* ABI 6, optional: v1alpha5_defaults exists only in a table of ABI 6 or later that reaches it (an older provider
 * has none, whatever lies beyond its struct_size), its defaults are well formed, and a second call gives what the
 * loader kept after init: the answer depends on the provider's build alone. */
START_TEST(test_abi_v1alpha5_defaults)
{
    ns_provider t;
    raw_table(&t);
    defaults_ctx c = {.kept = ns_plugin_v1alpha5_defaults_of(conf_plugin), .again = ns_req_defaults_new()};
    ck_assert_ptr_nonnull(c.again);
    int rc = ns_plugin_v1alpha5_defaults(conf_plugin, on_default, &c);
    if (t.abi_version < 6 || !t.v1alpha5_defaults) {
        CONF_CHECK("v1alpha5-defaults", rc == NS_ERR_UNSUPPORTED && !c.kept,
                   "a provider of ABI %u with v1alpha5_defaults %s: the core called it (%s) or kept defaults",
                   t.abi_version, t.v1alpha5_defaults ? "set" : "NULL", ns_err_name(rc));
        ns_req_defaults_free(c.again);
        return;
    }
    CONF_CHECK("v1alpha5-defaults", t.struct_size >= offsetof(ns_provider, v1alpha5_defaults) + sizeof(void *),
               "struct_size %u does not reach v1alpha5_defaults", t.struct_size);
    CONF_CHECK("v1alpha5-defaults", rc == NS_OK, "v1alpha5_defaults failed: %s", conf_last_error());
    CONF_CHECK("v1alpha5-defaults", c.short_size == 0, "a default has struct_size %u, less than ABI 6's %zu",
               c.short_size, sizeof(ns_requirement_default));
    size_t kept = c.kept ? c.kept->n : 0;
    CONF_CHECK("v1alpha5-defaults", c.n == kept && c.again->n == kept,
               "v1alpha5_defaults gave %zu defaults now and %zu right after init", c.n, kept);
    for (size_t i = 0; i < kept; i++) {
        const ns_selector_req *a = &c.kept->items[i].req, *b = &c.again->items[i].req;
        bool same = strcmp(a->key, b->key) == 0 && a->op == b->op && a->n_values == b->n_values;
        for (size_t v = 0; same && v < a->n_values; v++)
            same = strcmp(a->values[v], b->values[v]) == 0;
        CONF_CHECK("v1alpha5-defaults", same, "v1alpha5_defaults[%zu] (%s) changed since init", i, a->key);
    }
    ns_req_defaults_free(c.again);
}
END_TEST

Suite *conf_suite_abi(void)
{
    Suite *s = suite_create("abi");
    TCase *tc = tcase_create("table");

    tcase_add_checked_fixture(tc, conf_setup, conf_teardown);
    tcase_set_timeout(tc, conf_cfg.timeout_s);
    tcase_add_test(tc, test_abi_version);
    tcase_add_test(tc, test_abi_struct_size);
    tcase_add_test(tc, test_abi_identity);
    tcase_add_test(tc, test_abi_required_methods);
    tcase_add_test(tc, test_abi_options);
    tcase_add_test(tc, test_abi_repair_policies);
    tcase_add_test(tc, test_abi_drift_fields);
    tcase_add_test(tc, test_abi_nodeclass_kinds);
    tcase_add_test(tc, test_abi_v1alpha5_defaults);
    suite_add_tcase(s, tc);
    return s;
}
