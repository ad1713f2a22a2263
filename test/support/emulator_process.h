/* Starting, driving and stopping a cloud emulator (test/emulators/<cloud>) from C tests: a child process that
 * prints "PORT n" on its first line and serves the cloud's API and a control endpoint (/_emulator/...) there. */
#ifndef NS_TEST_EMULATOR_PROCESS_H
#define NS_TEST_EMULATOR_PROCESS_H

#include <stdbool.h>
#include <sys/types.h>

typedef struct emulator {
    pid_t pid;
    int port;
    char url[64]; /* "http://127.0.0.1:PORT" ("https://" when it serves TLS) */
    char ca_file[512]; /* the CA emulator_control trusts when the emulator serves HTTPS */
} emulator;

/* Runs ARGV (argv[0] looked up in PATH) with the NULL-terminated name/value pairs of ENV added to its environment
 * and waits for its "PORT n" line. WHAT names the emulator in messages, HINT (may be NULL) says what to check when it
 * does not start. With TLS the URL is https and emulator_control trusts CA_FILE. 0, or -1 with a message on stderr. */
int emulator_spawn(emulator *e, const char *what, const char *const argv[], const char *const env[], bool tls,
                   const char *ca_file, const char *hint);

/* Stops it (SIGTERM, then waits); accepts one never started or already stopped. */
void emulator_stop(emulator *e);

/* Calls the emulator's control endpoint ("/_emulator/faults", ...) with a JSON body (NULL for GET). Returns the
 * HTTP status; *answer (may be NULL) receives the body, freed by the caller. */
long emulator_control(const emulator *e, const char *path, const char *json, char **answer);

#endif
