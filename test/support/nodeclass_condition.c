#include "nodeclass_condition.h"

#include <check.h>
#include <string.h>

#include "plugin/plugin_status.h"

void assert_condition(const cJSON *status, const char *type, const char *want_status, const char *want_reason,
                      const char *message_part)
{
    const char *reason = NULL, *message = NULL;
    const char *got = ns_nodeclass_status_condition(status, type, &reason, &message);
    ck_assert_msg(got && strcmp(got, want_status) == 0, "%s is %s, not %s", type, got ? got : "absent", want_status);
    ck_assert_str_eq(reason, want_reason);
    ck_assert_msg(strstr(message, message_part), "%s's message '%s' does not say '%s'", type, message, message_part);
}
