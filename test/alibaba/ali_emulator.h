/* Starting, driving and stopping the Alibaba Cloud emulator (test/emulators/alibaba) from C tests. */
#ifndef NS_ALI_TEST_EMULATOR_H
#define NS_ALI_TEST_EMULATOR_H

#include <sys/types.h>

#define ALI_TEST_ACCESS_KEY "LTAIemulatorKey0001"
#define ALI_TEST_SECRET "emulator/Secret+Key=0001"

typedef struct ali_emulator {
    pid_t pid;
    char url[64]; /* "http://127.0.0.1:PORT" */
} ali_emulator;

/* Starts node on the emulator (found from ALIBABA_TEST_DIR, the catalog from ALIBABA_SHARED_DATA, the SDK packages
 * from the npm cache) and waits for its "PORT n" line. 0, or -1 with a message on stderr. */
int ali_emulator_start(ali_emulator *e);
void ali_emulator_stop(ali_emulator *e);
/* POST json (GET when NULL) to a control path ("/_emulator/faults"); the HTTP status; *answer (may be NULL) gets the
 * body, freed by the caller. */
long ali_emulator_control(const ali_emulator *e, const char *path, const char *json, char **answer);
/* The directory holding the SDK's node_modules (for NODE_PATH). */
const char *ali_node_modules(void);

#endif
