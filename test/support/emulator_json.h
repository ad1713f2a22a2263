/* The cloud emulators' control endpoint read as JSON, for check-based tests (test/aws, test/alibaba). */
#ifndef NS_TEST_EMULATOR_JSON_H
#define NS_TEST_EMULATOR_JSON_H

#include <cjson/cJSON.h>

#include "emulator_process.h"

/* GETs PATH ("/_emulator/state", ...) of E's control endpoint; fails the running check test unless the answer is
 * 200 with a JSON body. The document is the caller's (cJSON_Delete). */
cJSON *emulator_get_json(const emulator *e, const char *path);

#endif
