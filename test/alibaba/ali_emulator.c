#include "ali_emulator.h"

#include <stdio.h>
#include <stdlib.h>

const char *ali_node_modules(void)
{
    static char path[1024];
    const char *cache = getenv("NODESMITH_CACHE");
    if (cache && *cache)
        snprintf(path, sizeof(path), "%s/npm-alibaba/node_modules", cache);
    else
        snprintf(path, sizeof(path), "%s/.cache/nodesmith/npm-alibaba/node_modules", getenv("HOME") ? getenv("HOME") : "");
    return path;
}

int ali_emulator_start(emulator *e)
{
    const char *dir = getenv("ALIBABA_TEST_DIR"), *data = getenv("ALIBABA_SHARED_DATA");
    if (!dir || !data) {
        fprintf(stderr, "ALIBABA_TEST_DIR and ALIBABA_SHARED_DATA are not set; run the tests through meson test\n");
        return -1;
    }
    char script[1024], hint[1200];
    snprintf(script, sizeof(script), "%s/../emulators/alibaba/alibaba_emulator.js", dir);
    snprintf(hint, sizeof(hint), "are the npm packages in %s (scripts/install-deps.sh)?", ali_node_modules());
    const char *argv[] = {"node", script, "--data-dir", data, "--access-key", ALI_TEST_ACCESS_KEY, "--secret-key",
                          ALI_TEST_SECRET, NULL};
    const char *env[] = {"NODE_PATH", ali_node_modules(), NULL};
    return emulator_spawn(e, "Alibaba Cloud emulator", argv, env, false, NULL, hint);
}
