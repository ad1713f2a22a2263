/* AWS credentials: the shared config and credentials files (profiles, sso-session sections, credential_process),
 * as the SDKs read them. The input is written to a file of this process; the first byte picks which file it is and
 * which profile is asked for. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aws_profile.h"
#include "fuzz.h"

typedef struct fuzz_env {
    char config[64], credentials[64];
    const char *profile;
} fuzz_env;

static const char *get(void *ctx, const char *name)
{
    fuzz_env *e = ctx;
    if (strcmp(name, "AWS_CONFIG_FILE") == 0)
        return e->config;
    if (strcmp(name, "AWS_SHARED_CREDENTIALS_FILE") == 0)
        return e->credentials;
    if (strcmp(name, "AWS_PROFILE") == 0)
        return e->profile;
    if (strcmp(name, "HOME") == 0)
        return "/nonexistent";
    return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    static fuzz_env e;
    snprintf(e.config, sizeof(e.config), "/tmp/nodesmith-fuzz-%ld-config", (long)getpid());
    snprintf(e.credentials, sizeof(e.credentials), "/tmp/nodesmith-fuzz-%ld-credentials", (long)getpid());
    e.profile = (data[0] & 2) ? "fuzz" : NULL;
    FILE *fp = fopen((data[0] & 1) ? e.credentials : e.config, "wb");
    if (!fp)
        return 0;
    fwrite(data + 1, 1, size - 1, fp);
    fclose(fp);
    aws_env env = {get, &e};
    aws_profile p = {0};
    char err[512];
    aws_profile_load(&env, &p, err, sizeof(err));
    aws_profile_clear(&p);
    unlink(e.config);
    unlink(e.credentials);
    return 0;
}
