/* Windows nodes as AKS creates them: a short computer name and the Custom Script Extension that runs the node's
 * setup script (customData). */
#ifndef NS_AZURE_WINDOWS_H
#define NS_AZURE_WINDOWS_H

#include "azure_provider.h"

/* The computer name (the node's name) of a Windows VM: at most 15 characters, derived from the VM name. */
void az_windows_computer_name(const char *vm_name, char out[16]);

/* PUTs the bootstrap extension on the VM (idempotent: the same body again is no change). Does not wait for the
 * bootstrap itself. NS_OK or the ARM error. */
int az_windows_run_bootstrap(az_state *s, const char *vm_name);

#endif
