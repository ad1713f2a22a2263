/*
 * The per-test fixture and the helpers tests use to drive the provider. Everything goes through the core's plugin
 * wrappers (ns_plugin_*), so the provider is exercised exactly as the controller will exercise it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "errors/ns_error.h"

conf_config conf_cfg;
ns_plugin *conf_plugin;

/* Where the ledger stood when the current test started. */
static size_t test_mark;

/* The catalog and its launch choices, loaded once per test on first use and freed by the teardown, which also runs
 * after a failed test when Check does not fork. */
static ns_itype_set catalog;
static bool catalog_loaded;
static conf_choice *choice_buf;
static size_t n_choices;
static bool choices_built;

const char *conf_last_error(void)
{
    static _Thread_local char buf[1100];
    const ns_error_record *e = ns_error_last();

    snprintf(buf, sizeof(buf), "%s: %s", ns_err_name(e->code), e->message[0] ? e->message : "(no message)");
    return buf;
}

void conf_setup(void)
{
    ns_plugin *p = NULL;
    int rc = ns_plugin_load_file(conf_cfg.so_path, &conf_cfg.params, &p);

    ck_assert_msg(rc == NS_OK, "[load] loading %s through the core loader: %s", conf_cfg.so_path, conf_last_error());
    conf_plugin = p;
    test_mark = conf_ledger_mark();
}

/* Runs after a test body, also after a failed one when Check does not fork: terminate what the test left, without
 * asserting (the test has already passed or failed), and say so when an instance may be left behind. */
void conf_teardown(void)
{
    conf_ids live = {0};

    if (!conf_plugin)
        return;
    if (conf_ledger_live_since(test_mark, &live) == NS_OK) {
        for (size_t i = 0; i < live.n; i++)
            if (conf_terminate(live.ids[i], NULL) != NS_OK)
                fprintf(stderr, "conformance: teardown could not terminate %s: %s\n", live.ids[i], conf_last_error());
    }
    conf_ids_free(&live);
    free(choice_buf);
    choice_buf = NULL;
    n_choices = 0;
    choices_built = false;
    ns_itype_set_free(&catalog);
    catalog_loaded = false;
    ns_plugin_unload(conf_plugin);
    conf_plugin = NULL;
}

static int by_price(const void *a, const void *b)
{
    double pa = ((const conf_choice *)a)->price, pb = ((const conf_choice *)b)->price;

    return (pa > pb) - (pa < pb);
}

int conf_launch(const conf_choice *choices, size_t n, const char *token, ns_launch_result *result)
{
    conf_choice *sorted = calloc(n ? n : 1, sizeof(*sorted));
    ns_launch_option *options = calloc(n ? n : 1, sizeof(*options));
    ns_launch_request req = {0};
    int rc;

    if (!sorted || !options) {
        rc = NS_FAIL(NS_ERR_INTERNAL, "building a launch request of %zu options: out of memory", n);
        goto out;
    }
    memcpy(sorted, choices, n * sizeof(*sorted));
    qsort(sorted, n, sizeof(*sorted), by_price);
    for (size_t i = 0; i < n; i++) {
        options[i].struct_size = sizeof(options[i]);
        options[i].instance_type = sorted[i].instance_type;
        options[i].zone = sorted[i].zone;
        options[i].capacity_type = sorted[i].capacity_type;
        options[i].price_per_hour = sorted[i].price;
    }
    req.struct_size = sizeof(req);
    req.cluster_name = "nodesmith-conformance";
    req.nodeclaim_name = token;
    req.nodepool_name = "conformance";
    req.client_token = token;
    req.nodeclass = &conf_cfg.nodeclass;
    req.options = options;
    req.n_options = n;
    rc = ns_plugin_launch(conf_plugin, &req, result);
    if (rc == NS_OK)
        rc = conf_ledger_record(result->provider_id, test_mark);
out:
    free(sorted);
    free(options);
    return rc;
}

void conf_launch_one(ns_launch_result *result)
{
    size_t n;
    const conf_choice *all = conf_choices(&n);
    char token[NS_NAME_MAX];
    int rc;

    conf_token(token, sizeof(token));
    rc = conf_launch(&all[0], 1, token, result);
    CONF_CHECK("launch", rc == NS_OK, "launching %s in %s as %s: %s", all[0].instance_type, all[0].zone,
               all[0].capacity_type, conf_last_error());
}

int conf_terminate(const char *provider_id, bool *already_gone)
{
    int rc = ns_plugin_terminate(conf_plugin, provider_id, already_gone);

    if (rc == NS_OK)
        conf_ledger_mark_terminated(provider_id);
    return rc;
}

typedef struct list_ctx {
    conf_ids *ids;
    unsigned bad;
    char first_bad[1024];
    int alloc_rc;
} list_ctx;

static int on_listed(void *ctx, const ns_instance *inst)
{
    list_ctx *l = ctx;

    if (!inst->provider_id[0] || inst->state < NS_INSTANCE_PENDING || inst->state > NS_INSTANCE_TERMINATED ||
        !inst->instance_type[0] || !inst->zone[0] || !inst->capacity_type[0]) {
        if (l->bad++ == 0)
            snprintf(l->first_bad, sizeof(l->first_bad),
                     "instance \"%s\" (type \"%s\", zone \"%s\", capacity type \"%s\", state %d)", inst->provider_id,
                     inst->instance_type, inst->zone, inst->capacity_type, (int)inst->state);
        return 0;
    }
    l->alloc_rc = conf_ids_add(l->ids, inst->provider_id);
    return l->alloc_rc;
}

void conf_list(conf_ids *out)
{
    list_ctx l = {.ids = out};
    int rc;

    memset(out, 0, sizeof(*out));
    rc = ns_plugin_list_instances(conf_plugin, on_listed, &l);
    ck_assert_msg(l.alloc_rc == NS_OK, "conformance: %s", conf_last_error());
    CONF_CHECK("list-instances", rc == NS_OK, "list_instances failed: %s", conf_last_error());
    CONF_CHECK("list-instances", l.bad == 0,
               "list_instances returned %u malformed instances (an empty provider ID, type, zone or capacity type, "
               "or a state outside 1..6); first: %s",
               l.bad, l.first_bad);
}

void conf_release_all(void)
{
    conf_ids live = {0}, all = {0}, listed = {0};
    int rc = conf_ledger_live_since(test_mark, &live);

    ck_assert_msg(rc == NS_OK, "conformance: %s", conf_last_error());
    for (size_t i = 0; i < live.n; i++) {
        rc = conf_terminate(live.ids[i], NULL);
        CONF_CHECK("cleanup", rc == NS_OK, "terminating %s at the end of the test failed: %s", live.ids[i],
                   conf_last_error());
    }
    rc = conf_ledger_all_since(test_mark, &all);
    ck_assert_msg(rc == NS_OK, "conformance: %s", conf_last_error());
    conf_list(&listed);
    for (size_t i = 0; i < all.n; i++)
        CONF_CHECK("cleanup", !conf_ids_contains(&listed, all.ids[i]),
                   "instance %s was terminated but list_instances still shows it", all.ids[i]);
    conf_ids_free(&live);
    conf_ids_free(&all);
    conf_ids_free(&listed);
}

const ns_itype_set *conf_catalog(void)
{
    int rc;

    if (catalog_loaded)
        return &catalog;
    rc = ns_itype_set_load(conf_plugin, &conf_cfg.nodeclass, &catalog);
    CONF_CHECK("list-instance-types", rc == NS_OK, "list_instance_types for node class %s failed: %s",
               conf_cfg.nodeclass.name, conf_last_error());
    catalog_loaded = true;
    CONF_CHECK("list-instance-types", catalog.n > 0, "list_instance_types for node class %s returned no types",
               conf_cfg.nodeclass.name);
    return &catalog;
}

const conf_choice *conf_choices(size_t *n_out)
{
    const ns_itype_set *set = conf_catalog();
    size_t cap = 0;

    for (size_t i = 0; !choices_built && i < set->n; i++) {
        const ns_itype *t = &set->items[i];

        for (size_t j = 0; j < t->n_offerings; j++) {
            const ns_itype_offering *o = &t->offerings[j];

            /* Reserved capacity is launched against a reservation the suite cannot own, so it is not a choice. */
            if (!o->available || o->reservation_id)
                continue;
            if (n_choices == cap) {
                conf_choice *grown = realloc(choice_buf, (cap ? cap * 2 : 64) * sizeof(*grown));

                ck_assert_msg(grown != NULL, "conformance: out of memory collecting launch choices");
                choice_buf = grown;
                cap = cap ? cap * 2 : 64;
            }
            choice_buf[n_choices++] = (conf_choice){t->name, o->zone, o->capacity_type, o->price_per_hour};
        }
    }
    choices_built = true;
    CONF_CHECK("list-instance-types", n_choices > 0, "no instance type has an available offering to launch");
    *n_out = n_choices;
    return choice_buf;
}

bool conf_inject_or_skip(const char *test, const ns_fault *fault)
{
    int rc = ns_plugin_test_inject_fault(conf_plugin, fault);

    if (rc == NS_OK)
        return true;
    ck_assert_msg(rc == NS_ERR_UNSUPPORTED, "[test-hooks] %s: test_inject_fault failed: %s", test, conf_last_error());
    ck_assert_msg(!conf_cfg.require_hooks, "[test-hooks] %s: --require-hooks was given but the provider has none: %s",
                  test, conf_last_error());
    printf("conformance: SKIPPED %s: provider has no test hooks (%s)\n", test, conf_last_error());
    fflush(stdout);
    conf_skip_count();
    return false;
}
