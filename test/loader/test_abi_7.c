/*
 * ABI 7 with real shared objects: the test plugin built against the released ABI-6 header still loads and reads as a
 * provider that neither counts its reservations nor knows the new event kinds; built against this header its
 * reservation count reaches the core's instance types, its two new event kinds reach the caller, an event of a kind
 * no ABI has is dropped with a warning instead of being acted on, and its log_typed line carries typed values.
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloud/instance_types.h"
#include "errors/ns_error.h"
#include "log/ns_log.h"
#include "plugin/plugin_loader.h"

#define ck_assert_error_has(needle)                                                                                    \
    ck_assert_msg(strstr(ns_error_message(), (needle)) != NULL, "error '%s' lacks '%s'", ns_error_message(), (needle))

static const ns_nodeclass nc = {.struct_size = sizeof(nc), .api_version = "tin.example.com/v1",
                                .kind = "TinNodeClass", .name = "tin"};

static ns_plugin *load(const char *name)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s.so", TP_DIR, name);
    ns_plugin *p = NULL;
    ck_assert_msg(ns_plugin_load_file(path, NULL, &p) == NS_OK, "%s: %s", name, ns_error_message());
    return p;
}

static const ns_itype_offering *reserved_offering(const ns_itype_set *set)
{
    ck_assert_uint_eq(set->n, 1);
    ck_assert_uint_eq(set->items[0].n_offerings, 2);
    const ns_itype_offering *o = &set->items[0].offerings[1];
    ck_assert_str_eq(o->capacity_type, "reserved");
    ck_assert_str_eq(o->reservation_id, "tr-1");
    return o;
}

/* A 64-byte ABI-6 offering has no count: unknown, never "full" (0), also through the fault layer's full-size copy. */
START_TEST(abi_6_offerings_have_an_unknown_reservation_capacity)
{
    ns_plugin *p = load("abi6");
    ck_assert_uint_eq(ns_plugin_abi_version(p), 6);
    ns_itype_set set;
    ck_assert_msg(ns_itype_set_load(p, &nc, &set) == NS_OK, "%s", ns_error_message());
    ck_assert_int_eq(reserved_offering(&set)->reservation_capacity, NS_RESERVATION_CAPACITY_UNKNOWN);
    ck_assert_int_eq(set.items[0].offerings[0].reservation_capacity, NS_RESERVATION_CAPACITY_UNKNOWN);
    ns_itype_set_free(&set);
    ns_fault f = {.struct_size = sizeof(f), .kind = NS_FAULT_INSUFFICIENT_CAPACITY, .instance_type = "tp.small",
                  .zone = "zone-a", .capacity_type = "on-demand"};
    ck_assert_int_eq(ns_plugin_inject_fault(p, &f), NS_OK);
    ck_assert_msg(ns_itype_set_load(p, &nc, &set) == NS_OK, "%s", ns_error_message());
    ck_assert(!set.items[0].offerings[0].available);
    ck_assert_int_eq(reserved_offering(&set)->reservation_capacity, NS_RESERVATION_CAPACITY_UNKNOWN);
    ns_itype_set_free(&set);
    ns_plugin_unload(p);
}
END_TEST

START_TEST(abi_7_reservation_capacity_is_copied)
{
    ns_plugin *p = load("good");
    ck_assert_uint_eq(ns_plugin_abi_version(p), 7);
    ns_itype_set set;
    ck_assert_msg(ns_itype_set_load(p, &nc, &set) == NS_OK, "%s", ns_error_message());
    ck_assert_int_eq(reserved_offering(&set)->reservation_capacity, 3);
    /* The field means nothing for on-demand, whatever a zeroed struct holds there. */
    ck_assert_int_eq(set.items[0].offerings[0].reservation_capacity, NS_RESERVATION_CAPACITY_UNKNOWN);
    ns_itype_set_free(&set);
    /* An injected capacity fault empties the reservation too. */
    ns_fault f = {.struct_size = sizeof(f), .kind = NS_FAULT_INSUFFICIENT_CAPACITY, .instance_type = "tp.small",
                  .zone = "zone-a", .capacity_type = "reserved"};
    ck_assert_int_eq(ns_plugin_inject_fault(p, &f), NS_OK);
    ck_assert_msg(ns_itype_set_load(p, &nc, &set) == NS_OK, "%s", ns_error_message());
    ck_assert(!reserved_offering(&set)->available);
    ck_assert_int_eq(reserved_offering(&set)->reservation_capacity, 0);
    ns_itype_set_free(&set);
    ns_plugin_unload(p);
}
END_TEST

START_TEST(a_negative_reservation_capacity_is_refused)
{
    ns_plugin *p = load("bad_reservation");
    ns_itype_set set;
    ck_assert_int_eq(ns_itype_set_load(p, &nc, &set), NS_ERR_INTERNAL);
    ck_assert_error_has("instance type tp.small: offering 1 (zone-a reserved): reservation_capacity is -5");
    ck_assert_uint_eq(set.n, 0);
    ns_plugin_unload(p);
}
END_TEST

typedef struct seen {
    ns_event items[8];
    size_t n;
} seen;

static int collect(void *ctx, const ns_event *ev)
{
    seen *s = ctx;
    ck_assert_uint_lt(s->n, 8);
    s->items[s->n++] = *ev;
    return 0;
}

/* The whole log a poll of good.so writes, one line per element of the returned array. */
static cJSON *poll_logged(ns_plugin *p, seen *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    ns_log_set_output(mem);
    ns_log_set_level(NS_LOG_INFO);
    ck_assert_msg(ns_plugin_poll_events(p, collect, s) == NS_OK, "%s", ns_error_message());
    ns_log_set_output(NULL);
    fclose(mem);
    cJSON *lines = cJSON_CreateArray();
    for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
        cJSON *j = cJSON_Parse(line);
        ck_assert_msg(j != NULL, "not a JSON line: %s", line);
        cJSON_AddItemToArray(lines, j);
    }
    free(buf);
    return lines;
}

START_TEST(new_kinds_reach_the_caller_and_unknown_kinds_are_dropped)
{
    ns_plugin *p = load("good");
    seen s = {0};
    cJSON *lines = poll_logged(p, &s);
    ck_assert_uint_eq(s.n, 2);
    ck_assert_int_eq(s.items[0].kind, NS_EVENT_INSTANCE_UNHEALTHY);
    ck_assert_str_eq(s.items[0].provider_id, "tp:///zone-a/i-1");
    ck_assert_int_eq(s.items[1].kind, NS_EVENT_CAPACITY_RESERVATION_INTERRUPTION);
    ck_assert_str_eq(s.items[1].provider_id, "tp:///zone-a/i-2");
    ck_assert_int_eq(cJSON_GetArraySize(lines), 2);
    /* The provider's typed line: numbers and booleans as JSON's own. */
    const cJSON *typed = cJSON_GetArrayItem(lines, 0);
    ck_assert_str_eq(cJSON_GetObjectItem(typed, "message")->valuestring, "polled events");
    ck_assert_str_eq(cJSON_GetObjectItem(typed, "logger")->valuestring, "provider.good");
    ck_assert(cJSON_IsNumber(cJSON_GetObjectItem(typed, "events")));
    ck_assert_int_eq(cJSON_GetObjectItem(typed, "events")->valueint, 3);
    ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(typed, "long-poll")));
    /* The core's warning for the third event, naming its kind and instance. */
    const cJSON *warn = cJSON_GetArrayItem(lines, 1);
    ck_assert_str_eq(cJSON_GetObjectItem(warn, "level")->valuestring, "WARN");
    ck_assert_str_eq(cJSON_GetObjectItem(warn, "kind")->valuestring, "99");
    ck_assert_str_eq(cJSON_GetObjectItem(warn, "provider-id")->valuestring, "tp:///zone-a/i-3");
    cJSON_Delete(lines);
    ns_plugin_unload(p);
}
END_TEST

/* A plugin of an older ABI delivers no ABI-7 kind: the ABI-6 build polls nothing. */
START_TEST(abi_6_plugin_polls_no_new_kinds)
{
    ns_plugin *p = load("abi6");
    seen s = {0};
    cJSON *lines = poll_logged(p, &s);
    ck_assert_uint_eq(s.n, 0);
    ck_assert_int_eq(cJSON_GetArraySize(lines), 0);
    cJSON_Delete(lines);
    ns_plugin_unload(p);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("abi-7");
    TCase *tc = tcase_create("abi-7");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, abi_6_offerings_have_an_unknown_reservation_capacity);
    tcase_add_test(tc, abi_7_reservation_capacity_is_copied);
    tcase_add_test(tc, a_negative_reservation_capacity_is_refused);
    tcase_add_test(tc, new_kinds_reach_the_caller_and_unknown_kinds_are_dropped);
    tcase_add_test(tc, abi_6_plugin_polls_no_new_kinds);
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
