#include "emulator_json.h"

#include <check.h>
#include <stdlib.h>

cJSON *emulator_get_json(const emulator *e, const char *path)
{
    char *text = NULL;
    ck_assert_int_eq(emulator_control(e, path, NULL, &text), 200);
    cJSON *doc = cJSON_Parse(text);
    free(text);
    ck_assert_ptr_nonnull(doc);
    return doc;
}
