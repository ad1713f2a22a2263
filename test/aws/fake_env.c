#include "fake_env.h"

#include <string.h>

const char *fake_env_get(void *ctx, const char *name)
{
    fake_env *e = ctx;
    for (int i = 0; i < 16 && e->vars[i][0]; i++)
        if (strcmp(e->vars[i][0], name) == 0)
            return e->vars[i][1];
    return NULL;
}

void fake_env_set(fake_env *e, const char *name, const char *value)
{
    for (int i = 0; i < 16; i++)
        if (!e->vars[i][0] || strcmp(e->vars[i][0], name) == 0) {
            e->vars[i][0] = name;
            e->vars[i][1] = value;
            return;
        }
}
