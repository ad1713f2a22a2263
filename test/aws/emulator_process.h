/* Starting, driving and stopping the AWS emulator (test/emulators/aws/aws_emulator.py) from C tests. */
#ifndef NS_AWS_EMULATOR_PROCESS_H
#define NS_AWS_EMULATOR_PROCESS_H

#include <sys/types.h>

typedef struct emulator {
    pid_t pid;
    int port;
    char url[64]; /* "http://127.0.0.1:PORT" ("https://" when started with TLS) */
    char ca_file[512]; /* the CA emulator_control trusts when the emulator serves HTTPS */
} emulator;

/* Starts the emulator with /usr/bin/python3 and waits for its "PORT n" line. The script is found from
 * AWS_TEST_DATA (test/aws) and the catalog from AWS_SHARED_DATA. Returns 0, or -1 with a message on stderr. */
int emulator_start(emulator *e);

/* The same, serving HTTPS with cert/key (PEM files); emulator_control trusts ca_file. */
int emulator_start_tls(emulator *e, const char *cert, const char *key, const char *ca_file);

/* Stops it (SIGTERM, then waits). */
void emulator_stop(emulator *e);

/* Calls the emulator's control endpoint ("/_emulator/faults", ...) with a JSON body (NULL for GET). Returns the
 * HTTP status; *answer (may be NULL) receives the body, freed by the caller. */
long emulator_control(const emulator *e, const char *path, const char *json, char **answer);

#endif
