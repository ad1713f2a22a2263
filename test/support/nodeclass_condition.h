/* Checks of a node class status document (what nodeclass_status returns through the core's loader), for the
 * providers' check-based tests (test/aws, test/alibaba). */
#ifndef NS_TEST_NODECLASS_CONDITION_H
#define NS_TEST_NODECLASS_CONDITION_H

#include <cjson/cJSON.h>

/* Fails the running check test unless condition TYPE of STATUS is WANT_STATUS with reason WANT_REASON and a message
 * holding MESSAGE_PART. */
void assert_condition(const cJSON *status, const char *type, const char *want_status, const char *want_reason,
                      const char *message_part);

#endif
