#include "aws_emulator.h"

#include <stdio.h>
#include <stdlib.h>

#include "test_files.h"

int emulator_start(emulator *e)
{
    return emulator_start_tls(e, NULL, NULL, NULL);
}

void emulator_export_env(const emulator *e)
{
    setenv("AWS_ENDPOINT_URL", e->url, 1);
    setenv("AWS_ACCESS_KEY_ID", "AKIDEMULATOR", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "emulator/secret/key+EXAMPLE", 1);
    setenv("AWS_REGION", "us-east-1", 1);
    setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
    unsetenv("AWS_SESSION_TOKEN");
    unsetenv("AWS_ROLE_ARN");
}

int emulator_start_tls(emulator *e, const char *cert, const char *key, const char *ca_file)
{
    const char *data = getenv("AWS_SHARED_DATA");
    if (!data) {
        fprintf(stderr, "AWS_SHARED_DATA is not set; run the tests through meson test\n");
        return -1;
    }
    char *script = test_data_path("../emulators/aws/aws_emulator.py");
    const char *plain[] = {"/usr/bin/python3", script, "--data-dir", data, NULL};
    const char *tls[] = {"/usr/bin/python3", script, "--data-dir", data, "--tls-cert", cert, "--tls-key", key, NULL};
    int rc = emulator_spawn(e, "AWS emulator", cert ? tls : plain, NULL, cert != NULL, ca_file, NULL);
    free(script);
    return rc;
}
