/* ARM error codes -> categories. Capacity codes follow the reference port's offerings handling (see
 * docs/providers/azure.md for the table). */
#include "azure_errors.h"

#include <string.h>
#include <strings.h>

static const char *const CAPACITY[] = {
    "SkuNotAvailable",        "AllocationFailed",         "ZonalAllocationFailed",
    "OverconstrainedAllocationRequest", "OverconstrainedZonalAllocationRequest", "QuotaExceeded",
    "SubscriptionQuotaReached", "SkuNotSupportedForSpot", NULL,
};

static const struct {
    const char *code;
    ns_err category;
} CODES[] = {
    {"AuthenticationFailed", NS_ERR_UNAUTHORIZED},
    {"AuthorizationFailed", NS_ERR_UNAUTHORIZED},
    {"LinkedAuthorizationFailed", NS_ERR_UNAUTHORIZED},
    {"InvalidAuthenticationToken", NS_ERR_UNAUTHORIZED},
    {"ExpiredAuthenticationToken", NS_ERR_UNAUTHORIZED},
    {"InvalidAuthenticationTokenTenant", NS_ERR_UNAUTHORIZED},
    {"NotFound", NS_ERR_NOT_FOUND},
    {"ResourceNotFound", NS_ERR_NOT_FOUND},
    {"ResourceGroupNotFound", NS_ERR_NOT_FOUND},
    {"SubscriptionNotFound", NS_ERR_NOT_FOUND},
    {"InvalidParameter", NS_ERR_INVALID_CONFIG},
    {"InvalidResourceReference", NS_ERR_INVALID_CONFIG},
    {"InvalidResourceName", NS_ERR_INVALID_CONFIG},
    {"InvalidTag", NS_ERR_INVALID_CONFIG},
    {"InvalidLocation", NS_ERR_INVALID_CONFIG},
    {"LocationRequired", NS_ERR_INVALID_CONFIG},
    {"PropertyChangeNotAllowed", NS_ERR_INVALID_ARGUMENT},
    {"InvalidRequestContent", NS_ERR_INTERNAL},
    {"InvalidApiVersionParameter", NS_ERR_INTERNAL},
    {"MissingApiVersionParameter", NS_ERR_INTERNAL},
    {"NotSupported", NS_ERR_UNSUPPORTED},
    {"OperationNotSupported", NS_ERR_UNSUPPORTED},
    {"TooManyRequests", NS_ERR_THROTTLED},
    {"InternalServerError", NS_ERR_THROTTLED},
    {"ServiceUnavailable", NS_ERR_THROTTLED},
    {"RetryableError", NS_ERR_THROTTLED},
    {"OperationPreempted", NS_ERR_THROTTLED},
    {"GatewayTimeout", NS_ERR_THROTTLED},
};

static bool quota_text(const char *message)
{
    return message && (strcasestr(message, "quota") || strstr(message, "LowPriorityCores"));
}

bool az_error_is_capacity(const char *code, const char *message)
{
    if (!code)
        return false;
    for (size_t i = 0; CAPACITY[i]; i++)
        if (strcmp(code, CAPACITY[i]) == 0)
            return true;
    return strcmp(code, "OperationNotAllowed") == 0 && quota_text(message);
}

ns_err az_error_category(const char *code, long status, const char *message)
{
    if (az_error_is_capacity(code, message))
        return NS_ERR_INSUFFICIENT_CAPACITY;
    for (size_t i = 0; code && i < sizeof(CODES) / sizeof(CODES[0]); i++)
        if (strcmp(code, CODES[i].code) == 0)
            return CODES[i].category;
    if (status == 429 || status >= 500)
        return NS_ERR_THROTTLED;
    if (status == 401 || status == 403)
        return NS_ERR_UNAUTHORIZED;
    if (status == 404)
        return NS_ERR_NOT_FOUND;
    return NS_ERR_INTERNAL;
}
