/* Windows nodes (an extension: the reference port has no Windows), created as AKS creates them: the VM boots with the
 * node's PowerShell setup script as customData (azure_bootstrap.c), which Windows stores as
 * C:\AzureData\CustomData.bin without running it; AKS then runs it through the Custom Script Extension (publisher
 * Microsoft.Compute, type CustomScriptExtension 1.10, the command in protectedSettings), copying it to a .ps1 file and
 * checking the result file the script writes. The extension is named as the reference port names its Windows one. */
#include <openssl/evp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "azure_arm.h"
#include "azure_windows.h"

#define CSE_NAME "windows-cse-agent-karpenter"

/* Windows' own runner of customData: AKS's sequence (copy, run with the result file, fail unless it says 0). */
static const char CSE_COMMAND[] =
    "powershell.exe -ExecutionPolicy Unrestricted -command \""
    "$inputFile = '%SYSTEMDRIVE%\\AzureData\\CustomData.bin'; "
    "$outputFile = '%SYSTEMDRIVE%\\AzureData\\CustomDataSetupScript.ps1'; "
    "if (!(Test-Path $inputFile)) { throw 'ExitCode: |49|, Output: |WINDOWS_CSE_ERROR_NO_CUSTOM_DATA_BIN|, Error: "
    "|$inputFile does not exist.|' }; "
    "Copy-Item $inputFile $outputFile -Force; "
    "PowerShell -File $outputFile -CSEResultFilePath %SYSTEMDRIVE%\\AzureData\\provision.complete "
    ">> %SYSTEMDRIVE%\\AzureData\\CustomDataSetupScript.log 2>&1; "
    "if (!(Test-Path %SYSTEMDRIVE%\\AzureData\\provision.complete)) { throw 'ExitCode: |50|, Output: "
    "|WINDOWS_CSE_ERROR_NO_CSE_RESULT_LOG|, Error: |provision.complete is not generated.|' }; "
    "$result = (Get-Content %SYSTEMDRIVE%\\AzureData\\provision.complete); "
    "if ($result -ne '0') { throw $result }\"";

void az_windows_computer_name(const char *vm_name, char out[16])
{
    /* At most 15 characters, not all digits: "aks" and 12 hex digits of the VM name's SHA-256, the same for every
     * retry of one claim's launch (the node registers under this name). */
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    EVP_Digest(vm_name, strlen(vm_name), digest, &n, EVP_sha256(), NULL);
    snprintf(out, 16, "aks%02x%02x%02x%02x%02x%02x", digest[0], digest[1], digest[2], digest[3], digest[4],
             digest[5]);
}

/* Adds item to container (freed when that fails); the container, or NULL once anything failed. */
static ns_json *add(const ns_host *h, bool *failed, ns_json *container, const char *key, ns_json *item)
{
    if (!*failed && item && h->json_add(container, key, item) == NS_OK)
        return item;
    h->json_free(item);
    *failed = true;
    return NULL;
}

static char *cse_body(az_state *s)
{
    const ns_host *h = s->host;
    bool failed = false;
    ns_json *doc = h->json_new_object();
    if (!doc)
        return NULL;
    add(h, &failed, doc, "location", h->json_new_string(s->location));
    ns_json *tags = add(h, &failed, doc, "tags", h->json_new_object());
    add(h, &failed, tags, AZ_TAG_CLUSTER, h->json_new_string(s->cluster));
    ns_json *props = add(h, &failed, doc, "properties", h->json_new_object());
    add(h, &failed, props, "publisher", h->json_new_string("Microsoft.Compute"));
    add(h, &failed, props, "type", h->json_new_string("CustomScriptExtension"));
    add(h, &failed, props, "typeHandlerVersion", h->json_new_string("1.10"));
    add(h, &failed, props, "autoUpgradeMinorVersion", h->json_new_bool(true));
    add(h, &failed, props, "settings", h->json_new_object());
    ns_json *protected_settings = add(h, &failed, props, "protectedSettings", h->json_new_object());
    add(h, &failed, protected_settings, "commandToExecute", h->json_new_string(CSE_COMMAND));
    char *text = failed ? NULL : h->json_print(doc);
    h->json_free(doc);
    return text;
}

int az_windows_run_bootstrap(az_state *s, const char *vm_name)
{
    char path[700], what[200], base[600];
    az_resource_path(s, "Compute", "virtualMachines", vm_name, base, sizeof(base));
    snprintf(path, sizeof(path), "%s/extensions/" CSE_NAME, base);
    snprintf(what, sizeof(what), "PUT extension " CSE_NAME " of VM %s", vm_name);
    char *body = cse_body(s);
    if (!body)
        return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "out of memory building the bootstrap extension of %s",
                        vm_name);
    az_arm_result r;
    int rc = az_arm_call(s, "PUT", path, AZ_API_COMPUTE, body, what, &r, NULL);
    s->host->free(body);
    /* The extension runs the whole Windows bootstrap (minutes): the launch does not wait for it. A failed bootstrap
     * is a node that never registers, which the core's registration timeout replaces. */
    if (rc == NS_OK)
        az_arm_result_clear(s, &r);
    return rc;
}
