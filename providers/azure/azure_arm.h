/*
 * ARM calls over the host's HTTP upcall: a bearer token from azure_auth, the api-version pinned per resource type,
 * JSON bodies. Each attempt is made with the host's own retries off; this module retries transport failures, 429
 * (after its Retry-After) and 5xx with backoff, and a refused token once with a fresh one. Long-running operations
 * are followed through Azure-AsyncOperation, else Location, honouring Retry-After, and only on the ARM host.
 */
#ifndef NS_AZURE_ARM_H
#define NS_AZURE_ARM_H

#include "azure_provider.h"

typedef struct az_arm_error {
    long status;       /* 0 for transport failures */
    char code[128];    /* ARM's error code, "" when none */
    char message[512]; /* ARM's message */
} az_arm_error;

typedef struct az_arm_result {
    long status;
    ns_json *body; /* NULL when the answer had none; free with host->json_free */
    char async_url[1024];
    char location_url[1024];
} az_arm_result;

/* One call. `target` is a path below the ARM host ("/subscriptions/...") to which "?api-version=" is added, or an
 * absolute URL on the ARM host (a nextLink) used as it is. `what` names the call in messages ("PUT VM aks-x").
 * On NS_OK *res holds a 2xx answer (release with az_arm_result_clear). On failure the error is reported with
 * host->error ("ARM PUT VM aks-x failed: CODE: message (HTTP 409, 1 attempt)") and copied into *err when not NULL;
 * throttles carry their retry hint. */
int az_arm_call(az_state *s, const char *method, const char *target, const char *api_version, const char *body,
                const char *what, az_arm_result *res, az_arm_error *err);
void az_arm_result_clear(az_state *s, az_arm_result *res);
/* GET of the VM (nic false) or NIC (nic true) `name` of the node resource group (azure_instances.c), named in
 * messages "GET VM name" / "GET NIC name"; as az_arm_call otherwise. */
int az_arm_get(az_state *s, bool nic, const char *name, az_arm_result *res, az_arm_error *err);
/* DELETE of the VM (nic false; with forceDeletion=true when force) or NIC (nic true) `name` of the node resource
 * group, then az_arm_wait until it is gone; named in messages "DELETE VM name" / "DELETE NIC name". On NS_OK
 * *status (when not NULL) is the DELETE's own answer, 204 when there was nothing to delete; errors as az_arm_call
 * (NS_ERR_NOT_FOUND when ARM answers 404). */
int az_arm_delete(az_state *s, bool nic, const char *name, bool force, long *status);

/* Waits for the long-running operation a call started (res from az_arm_call; nothing to wait for when it carries no
 * operation header). A failed operation is reported like a failed call, with the operation's error code. */
int az_arm_wait(az_state *s, const az_arm_result *res, const char *what, az_arm_error *err);

/* Lists a collection, following nextLink; calls cb for every element of "value" (stop with non-zero, returned). */
typedef int (*az_arm_item_cb)(void *ctx, const ns_json *item);
int az_arm_list(az_state *s, const char *target, const char *api_version, const char *what, az_arm_item_cb cb,
                void *ctx);

#endif
