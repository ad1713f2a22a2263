/*
 * Catalog rules: every instance type and offering list_instance_types reports is well formed. One walk over the
 * catalog records, per rule, how many entries break it and the first one; each test then asserts one rule, so a
 * failure names exactly what is wrong.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "conf.h"
#include "errors/ns_error.h"
#include "plugin/plugin_status.h"

typedef enum rule {
    RULE_TYPE_NAMES,
    RULE_REQUIRED_LABELS,
    RULE_CAPACITY,
    RULE_RESERVATIONS,
    RULE_OFFERING_FIELDS,
    RULE_OFFERING_PRICE,
    RULE_OFFERING_UNIQUE,
    RULE_COUNT,
} rule;

typedef struct finding {
    unsigned count;
    char first[512];
} finding;

typedef struct walk {
    finding found[RULE_COUNT];
    conf_ids names;
    size_t n_types;
} walk;

NS_PRINTF(3, 4) static void report(walk *w, rule r, const char *fmt, ...)
{
    va_list ap;

    if (w->found[r].count++ > 0)
        return;
    va_start(ap, fmt);
    vsnprintf(w->found[r].first, sizeof(w->found[r].first), fmt, ap);
    va_end(ap);
}

static const char *label_value(const ns_instance_type *t, const char *key)
{
    for (size_t i = 0; i < t->n_labels; i++)
        if (t->labels[i].key && strcmp(t->labels[i].key, key) == 0)
            return t->labels[i].value;
    return NULL;
}

static void check_labels(walk *w, const ns_instance_type *t)
{
    static const char *const required[] = {"kubernetes.io/arch", "kubernetes.io/os", "node.kubernetes.io/instance-type"};

    if (t->n_labels > 0 && !t->labels) {
        report(w, RULE_REQUIRED_LABELS, "instance type %s: %zu labels but no label array", t->name, t->n_labels);
        return;
    }
    for (size_t i = 0; i < t->n_labels; i++) {
        if (!t->labels[i].key || !t->labels[i].key[0] || !t->labels[i].value)
            report(w, RULE_REQUIRED_LABELS, "instance type %s: label %zu has an empty key or a NULL value", t->name,
                   i);
        for (size_t j = 0; j < i && t->labels[i].key; j++)
            if (t->labels[j].key && strcmp(t->labels[i].key, t->labels[j].key) == 0)
                report(w, RULE_REQUIRED_LABELS, "instance type %s: label %s appears twice", t->name,
                       t->labels[i].key);
    }
    for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
        const char *v = label_value(t, required[i]);

        if (!v || !v[0])
            report(w, RULE_REQUIRED_LABELS, "instance type %s lacks label %s", t->name, required[i]);
    }
    if (label_value(t, "node.kubernetes.io/instance-type") &&
        strcmp(label_value(t, "node.kubernetes.io/instance-type"), t->name) != 0)
        report(w, RULE_REQUIRED_LABELS, "instance type %s has label node.kubernetes.io/instance-type=%s", t->name,
               label_value(t, "node.kubernetes.io/instance-type"));
}

static bool resources_non_negative(const ns_resources *r)
{
    if (r->cpu_milli < 0 || r->memory_bytes < 0 || r->pods < 0 || r->ephemeral_storage_bytes < 0 ||
        r->n_extended > NS_MAX_EXTENDED_RESOURCES)
        return false;
    for (uint32_t i = 0; i < r->n_extended; i++)
        if (r->extended[i].value < 0)
            return false;
    return true;
}

static void check_resources(walk *w, const ns_instance_type *t)
{
    const ns_resources *c = &t->capacity;
    const ns_resources *reserved[] = {&t->kube_reserved, &t->system_reserved, &t->eviction_threshold};
    const char *const reserved_names[] = {"kube_reserved", "system_reserved", "eviction_threshold"};
    int64_t cpu = 0, memory = 0;

    if (c->cpu_milli <= 0 || c->memory_bytes <= 0 || c->pods <= 0 || !resources_non_negative(c))
        report(w, RULE_CAPACITY, "instance type %s: capacity cpu %lldm, memory %lld B, pods %lld (all must be "
               "positive; storage and extended resources non-negative, at most %d extended)", t->name,
               (long long)c->cpu_milli, (long long)c->memory_bytes, (long long)c->pods, NS_MAX_EXTENDED_RESOURCES);
    for (uint32_t i = 0; i < c->n_extended && i < NS_MAX_EXTENDED_RESOURCES; i++)
        if (!c->extended[i].name[0] || !memchr(c->extended[i].name, '\0', sizeof(c->extended[i].name)))
            report(w, RULE_CAPACITY, "instance type %s: extended resource %u has no name", t->name, i);
    for (size_t i = 0; i < 3; i++) {
        if (!resources_non_negative(reserved[i]))
            report(w, RULE_RESERVATIONS, "instance type %s: %s has a negative amount", t->name, reserved_names[i]);
        cpu += reserved[i]->cpu_milli;
        memory += reserved[i]->memory_bytes;
    }
    if (cpu >= c->cpu_milli || memory >= c->memory_bytes)
        report(w, RULE_RESERVATIONS,
               "instance type %s: reservations (cpu %lldm, memory %lld B) leave nothing of the capacity (cpu %lldm, "
               "memory %lld B)", t->name, (long long)cpu, (long long)memory, (long long)c->cpu_milli,
               (long long)c->memory_bytes);
}

static bool is_capacity_type(const char *ct)
{
    return strcmp(ct, NS_CAPACITY_SPOT) == 0 || strcmp(ct, NS_CAPACITY_ON_DEMAND) == 0 ||
           strcmp(ct, NS_CAPACITY_RESERVED) == 0;
}

static bool same_string(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static void check_offerings(walk *w, const ns_instance_type *t)
{
    if (t->n_offerings == 0 || !t->offerings) {
        report(w, RULE_OFFERING_FIELDS, "instance type %s has no offerings", t->name);
        return;
    }
    /* The array's stride is its first element's struct_size: anything smaller than ABI 1's offering is unreadable. */
    if (t->offerings[0].struct_size < offsetof(ns_offering, available) + sizeof(bool)) {
        report(w, RULE_OFFERING_FIELDS, "instance type %s: offerings have struct_size %u (set it to "
               "sizeof(ns_offering))", t->name, t->offerings[0].struct_size);
        return;
    }
    for (size_t i = 0; i < t->n_offerings; i++) {
        const ns_offering *o = NS_AT(t->offerings, i);
        const char *zone = o->zone ? o->zone : "(null)";
        const char *ct = o->capacity_type ? o->capacity_type : "(null)";
        const char *reservation = NS_HAS_FIELD(o, ns_offering, reservation_id) ? o->reservation_id : NULL;

        if (!o->zone || !o->zone[0] || !o->capacity_type || !is_capacity_type(o->capacity_type))
            report(w, RULE_OFFERING_FIELDS, "instance type %s: offering in zone \"%s\" has capacity type \"%s\" "
                   "(zones must be named; capacity types are spot, on-demand or reserved)", t->name, zone, ct);
        else if (strcmp(o->capacity_type, NS_CAPACITY_RESERVED) == 0 && (!reservation || !reservation[0]))
            report(w, RULE_OFFERING_FIELDS, "instance type %s: reserved offering in %s names no reservation", t->name,
                   zone);
        if (!isfinite(o->price_per_hour) || o->price_per_hour < 0)
            report(w, RULE_OFFERING_PRICE, "instance type %s: %s offering in %s costs %g per hour", t->name, ct, zone,
                   o->price_per_hour);
        for (size_t j = 0; j < i; j++) {
            const ns_offering *p = NS_AT(t->offerings, j);
            const char *p_reservation = NS_HAS_FIELD(p, ns_offering, reservation_id) ? p->reservation_id : NULL;

            if (same_string(o->zone, p->zone) && same_string(o->capacity_type, p->capacity_type) &&
                same_string(reservation, p_reservation))
                report(w, RULE_OFFERING_UNIQUE, "instance type %s lists the %s offering in %s twice", t->name, ct,
                       zone);
        }
    }
}

static int on_type(void *ctx, const ns_instance_type *t)
{
    walk *w = ctx;

    w->n_types++;
    if (!t->name || !t->name[0]) {
        report(w, RULE_TYPE_NAMES, "instance type %zu has no name", w->n_types);
        return 0;
    }
    if (conf_ids_contains(&w->names, t->name))
        report(w, RULE_TYPE_NAMES, "instance type %s is listed twice", t->name);
    else if (conf_ids_add(&w->names, t->name) != NS_OK)
        return NS_ERR_INTERNAL;
    check_labels(w, t);
    check_resources(w, t);
    check_offerings(w, t);
    return 0;
}

static void walk_catalog(walk *w)
{
    int rc;

    memset(w, 0, sizeof(*w));
    rc = ns_plugin_list_instance_types(conf_plugin, &conf_cfg.nodeclass, on_type, w);
    conf_ids_free(&w->names);
    CONF_CHECK("list-instance-types", rc == NS_OK, "list_instance_types for node class %s failed: %s",
               conf_cfg.nodeclass.name, conf_last_error());
    CONF_CHECK("list-instance-types", w->n_types > 0, "list_instance_types for node class %s returned no types",
               conf_cfg.nodeclass.name);
}

#define ASSERT_RULE(tag, r)                                                                                            \
    do {                                                                                                               \
        walk w_;                                                                                                       \
        walk_catalog(&w_);                                                                                             \
        CONF_CHECK(tag, w_.found[r].count == 0, "%u violations in %zu instance types; first: %s", w_.found[r].count, \
                   w_.n_types, w_.found[r].first);                                                                     \
    } while (0)

START_TEST(test_type_names)
{
    ASSERT_RULE("type-names", RULE_TYPE_NAMES);
}
END_TEST

START_TEST(test_required_labels)
{
    ASSERT_RULE("required-labels", RULE_REQUIRED_LABELS);
}
END_TEST

START_TEST(test_capacity)
{
    ASSERT_RULE("capacity", RULE_CAPACITY);
}
END_TEST

START_TEST(test_reservations)
{
    ASSERT_RULE("reservations", RULE_RESERVATIONS);
}
END_TEST

START_TEST(test_offering_fields)
{
    ASSERT_RULE("offering-fields", RULE_OFFERING_FIELDS);
}
END_TEST

START_TEST(test_offering_price)
{
    ASSERT_RULE("offering-price", RULE_OFFERING_PRICE);
}
END_TEST

START_TEST(test_offering_unique)
{
    ASSERT_RULE("offering-unique", RULE_OFFERING_UNIQUE);
}
END_TEST

/* The core's own copy must agree with what the provider reported (the copy is what the scheduler uses). */
START_TEST(test_catalog_copy)
{
    walk w;

    walk_catalog(&w);
    CONF_CHECK("list-instance-types", conf_catalog()->n == w.n_types,
               "two calls of list_instance_types disagree: %zu types, then %zu", w.n_types, conf_catalog()->n);
}
END_TEST

/* The condition types and statuses of a status, "Ready=True ImagesReady=True ...", for comparing two answers. */
static void condition_summary(const cJSON *status, char *buf, size_t len)
{
    size_t used = 0;
    const cJSON *c;
    buf[0] = '\0';
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(status, "conditions"))
    {
        if (used >= len)
            break;
        used += (size_t)snprintf(buf + used, len - used, "%s=%s ",
                                 cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "type")),
                                 cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "status")));
    }
}

/* ABI 4, when the provider has nodeclass_status: the node class under test (which its validate_nodeclass accepted)
 * gets a status that keeps provider.h's rules (the core's checks, ns_plugin_nodeclass_status), and asking twice gives
 * the same conditions. */
START_TEST(test_nodeclass_status)
{
    if (!ns_plugin_table(conf_plugin)->nodeclass_status)
        return; /* optional: NULL is "unsupported" */
    cJSON *first = NULL, *second = NULL;
    int rc = ns_plugin_nodeclass_status(conf_plugin, &conf_cfg.nodeclass, &first);
    CONF_CHECK("nodeclass-status", rc == NS_OK, "nodeclass_status of %s %s failed (%s): %s", conf_cfg.nodeclass.kind,
               conf_cfg.nodeclass.name, ns_err_name(rc), conf_last_error());
    rc = ns_plugin_nodeclass_status(conf_plugin, &conf_cfg.nodeclass, &second);
    CONF_CHECK("nodeclass-status", rc == NS_OK, "nodeclass_status failed the second time (%s): %s", ns_err_name(rc),
               conf_last_error());
    char a[1024], b[1024];
    condition_summary(first, a, sizeof(a));
    condition_summary(second, b, sizeof(b));
    cJSON_Delete(first);
    cJSON_Delete(second);
    CONF_CHECK("nodeclass-status", strcmp(a, b) == 0, "two calls for one node class disagree: %s, then %s", a, b);
}
END_TEST

Suite *conf_suite_offerings(void)
{
    Suite *s = suite_create("offerings");
    TCase *tc = tcase_create("catalog");

    tcase_add_checked_fixture(tc, conf_setup, conf_teardown);
    tcase_set_timeout(tc, conf_cfg.timeout_s);
    tcase_add_test(tc, test_type_names);
    tcase_add_test(tc, test_required_labels);
    tcase_add_test(tc, test_capacity);
    tcase_add_test(tc, test_reservations);
    tcase_add_test(tc, test_offering_fields);
    tcase_add_test(tc, test_offering_price);
    tcase_add_test(tc, test_offering_unique);
    tcase_add_test(tc, test_catalog_copy);
    tcase_add_test(tc, test_nodeclass_status);
    suite_add_tcase(s, tc);
    return s;
}
