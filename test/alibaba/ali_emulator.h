/* The Alibaba Cloud emulator (test/emulators/alibaba) for C tests; driven and stopped with emulator_process.h. */
#ifndef NS_ALI_TEST_EMULATOR_H
#define NS_ALI_TEST_EMULATOR_H

#include "emulator_process.h"

#define ALI_TEST_ACCESS_KEY "LTAIemulatorKey0001"
#define ALI_TEST_SECRET "emulator/Secret+Key=0001"

/* Starts node on the emulator (found from ALIBABA_TEST_DIR, the catalog from ALIBABA_SHARED_DATA, the SDK packages
 * from the npm cache) and waits for its "PORT n" line. 0, or -1 with a message on stderr. */
int ali_emulator_start(emulator *e);
/* The directory holding the SDK's node_modules (for NODE_PATH). */
const char *ali_node_modules(void);

#endif
