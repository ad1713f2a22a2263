/* The AWS emulator (test/emulators/aws/aws_emulator.py) for C tests; driven and stopped with emulator_process.h. */
#ifndef NS_TEST_AWS_EMULATOR_H
#define NS_TEST_AWS_EMULATOR_H

#include "emulator_process.h"

/* Starts the emulator with /usr/bin/python3: the script is found from AWS_TEST_DATA (test/aws), the catalog from
 * AWS_SHARED_DATA. 0, or -1 with a message on stderr. */
int emulator_start(emulator *e);

/* The same, serving HTTPS with cert/key (PEM files); emulator_control trusts ca_file. */
int emulator_start_tls(emulator *e, const char *cert, const char *key, const char *ca_file);

/* Points this process's AWS environment at e, for a provider loaded in it: AWS_ENDPOINT_URL, the emulator's key pair,
 * region us-east-1, IMDS off, and no AWS_SESSION_TOKEN or AWS_ROLE_ARN inherited from the caller. */
void emulator_export_env(const emulator *e);

#endif
