/*
 * ABI 5, event_from_node_condition, with real shared objects: the plugin built against the released ABI-4 header loads
 * and says it cannot read node conditions; the ABI-5 plugin's answers come back checked, each broken rule refused
 * with the provider, the node and the condition named.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "log/ns_log.h"
#include "plugin/plugin_loader.h"

#define ck_assert_error_has(needle)                                                                                    \
    ck_assert_msg(strstr(ns_error_message(), (needle)) != NULL, "error '%s' lacks '%s'", ns_error_message(), (needle))

static ns_plugin *load(const char *name)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s.so", TP_DIR, name);
    ns_plugin *p = NULL;
    ck_assert_msg(ns_plugin_load_file(path, NULL, &p) == NS_OK, "%s: %s", name, ns_error_message());
    return p;
}

static ns_node_condition melt(const char *reason, const char *message)
{
    return (ns_node_condition){.struct_size = sizeof(ns_node_condition), .node_name = "tin-1",
                               .provider_id = "tp:///zone-a/i-1", .type = "TinMeltScheduled", .status = "True",
                               .reason = reason, .message = message, .last_transition_ms = 1000};
}

START_TEST(released_abi_4_loads_without_node_conditions)
{
    ns_plugin *p = load("abi4");
    ck_assert_uint_eq(ns_plugin_abi_version(p), 4);
    ck_assert_ptr_nonnull(ns_plugin_table(p)->nodeclass_status);
    ck_assert_ptr_null(ns_plugin_table(p)->event_from_node_condition);
    ns_node_condition c = melt("Melting", "5000");
    ns_event ev;
    bool is_event = true;
    ck_assert_int_eq(ns_plugin_event_from_node_condition(p, &c, &ev, &is_event), NS_ERR_UNSUPPORTED);
    ck_assert(!is_event);
    ck_assert_error_has("provider abi4 (ABI 4) does not support event_from_node_condition");
    ns_plugin_unload(p);
}
END_TEST

START_TEST(condition_becomes_an_event)
{
    ns_plugin *p = load("good");
    ck_assert_uint_ge(ns_plugin_abi_version(p), 5);
    ns_node_condition c = melt("Melting", "5000");
    ns_event ev;
    bool is_event = false;
    ck_assert_msg(ns_plugin_event_from_node_condition(p, &c, &ev, &is_event) == NS_OK, "%s", ns_error_message());
    ck_assert(is_event);
    ck_assert_int_eq(ev.kind, NS_EVENT_SPOT_INTERRUPTION);
    ck_assert_int_eq(ev.deadline_ms, 5000);
    ck_assert_int_eq(ev.time_ms, 1000);
    ck_assert_str_eq(ev.id, "melt/1");
    ck_assert_str_eq(ev.provider_id, "tp:///zone-a/i-1");
    ck_assert_uint_eq(ev.struct_size, sizeof(ns_event));

    /* A condition the provider does not know is no event and no error. */
    c.type = "KernelDeadlock";
    is_event = true;
    ck_assert_int_eq(ns_plugin_event_from_node_condition(p, &c, &ev, &is_event), NS_OK);
    ck_assert(!is_event);
    ns_plugin_unload(p);
}
END_TEST

START_TEST(broken_answers_are_refused)
{
    ns_plugin *p = load("good");
    static const struct {
        const char *reason;
        const char *error;
    } bugs[] = {
        {"BugProviderID", "provider good: event_from_node_condition tin-1 condition TinMeltScheduled: the event names "
                          "instance tp:///zone-a/i-other, not the node's tp:///zone-a/i-1"},
        {"BugNoID", "provider good: event_from_node_condition tin-1 condition TinMeltScheduled: the event has no id"},
        {"BugFails", "provider good: event_from_node_condition tin-1 condition TinMeltScheduled: the melt gauge is "
                     "unreadable"},
    };
    for (size_t i = 0; i < sizeof(bugs) / sizeof(bugs[0]); i++) {
        ns_node_condition c = melt(bugs[i].reason, "5000");
        ns_event ev = {.kind = NS_EVENT_INSTANCE_TERMINATED};
        bool is_event = true;
        ck_assert_int_eq(ns_plugin_event_from_node_condition(p, &c, &ev, &is_event), NS_ERR_INTERNAL);
        ck_assert(!is_event);
        ck_assert_int_eq(ev.kind, NS_EVENT_INSTANCE_TERMINATED); /* the caller's event is left alone */
        ck_assert_error_has(bugs[i].error);
    }
    /* The core's own caller must give a whole condition. */
    ns_node_condition c = melt("Melting", NULL);
    ns_event ev;
    bool is_event;
    ck_assert_int_eq(ns_plugin_event_from_node_condition(p, &c, &ev, &is_event), NS_ERR_INVALID_ARGUMENT);
    ns_plugin_unload(p);
}
END_TEST

int main(void)
{
    ns_log_set_level(NS_LOG_ERROR);
    Suite *s = suite_create("abi-node-conditions");
    TCase *tc = tcase_create("abi-node-conditions");
    tcase_add_test(tc, released_abi_4_loads_without_node_conditions);
    tcase_add_test(tc, condition_becomes_an_event);
    tcase_add_test(tc, broken_answers_are_refused);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
