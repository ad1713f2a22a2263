#include "aws_errors.h"

#include <stddef.h>
#include <string.h>

typedef struct code_entry {
    const char *code;
    ns_err category;
    aws_retry_kind retry;
    bool bad_credentials;
} code_entry;

/* EC2, STS, SQS, SSM, Pricing and EKS codes the provider can meet. The throttling and transient sets are botocore's
 * standard-mode lists (botocore/retries/standard.py). */
static const code_entry CODES[] = {
    /* capacity */
    {"InsufficientInstanceCapacity", NS_ERR_INSUFFICIENT_CAPACITY, AWS_RETRY_NO, false},
    {"InsufficientCapacity", NS_ERR_INSUFFICIENT_CAPACITY, AWS_RETRY_NO, false},
    {"InsufficientHostCapacity", NS_ERR_INSUFFICIENT_CAPACITY, AWS_RETRY_NO, false},
    {"InsufficientReservedInstanceCapacity", NS_ERR_INSUFFICIENT_CAPACITY, AWS_RETRY_NO, false},
    {"InsufficientFreeAddressesInSubnet", NS_ERR_INSUFFICIENT_CAPACITY, AWS_RETRY_NO, false},
    {"UnfulfillableCapacity", NS_ERR_INSUFFICIENT_CAPACITY, AWS_RETRY_NO, false},
    {"MaxSpotInstanceCountExceeded", NS_ERR_INSUFFICIENT_CAPACITY, AWS_RETRY_NO, false},
    {"VcpuLimitExceeded", NS_ERR_INSUFFICIENT_CAPACITY, AWS_RETRY_NO, false},
    {"ReservationCapacityExceeded", NS_ERR_INSUFFICIENT_CAPACITY, AWS_RETRY_NO, false},
    {"SpotMaxPriceTooLow", NS_ERR_INSUFFICIENT_CAPACITY, AWS_RETRY_NO, false},
    /* throttling */
    {"RequestLimitExceeded", NS_ERR_THROTTLED, AWS_RETRY_THROTTLING, false},
    {"Throttling", NS_ERR_THROTTLED, AWS_RETRY_THROTTLING, false},
    {"ThrottlingException", NS_ERR_THROTTLED, AWS_RETRY_THROTTLING, false},
    {"ThrottledException", NS_ERR_THROTTLED, AWS_RETRY_THROTTLING, false},
    {"RequestThrottledException", NS_ERR_THROTTLED, AWS_RETRY_THROTTLING, false},
    {"TooManyRequestsException", NS_ERR_THROTTLED, AWS_RETRY_THROTTLING, false},
    {"ProvisionedThroughputExceededException", NS_ERR_THROTTLED, AWS_RETRY_THROTTLING, false},
    {"TransactionInProgressException", NS_ERR_THROTTLED, AWS_RETRY_THROTTLING, false},
    {"BandwidthLimitExceeded", NS_ERR_THROTTLED, AWS_RETRY_THROTTLING, false},
    {"LimitExceededException", NS_ERR_THROTTLED, AWS_RETRY_THROTTLING, false},
    {"RequestThrottled", NS_ERR_THROTTLED, AWS_RETRY_THROTTLING, false},
    {"SlowDown", NS_ERR_THROTTLED, AWS_RETRY_THROTTLING, false},
    {"PriorRequestNotComplete", NS_ERR_THROTTLED, AWS_RETRY_THROTTLING, false},
    {"AWS.SimpleQueueService.RequestThrottled", NS_ERR_THROTTLED, AWS_RETRY_THROTTLING, false},
    /* transient */
    {"RequestTimeout", NS_ERR_THROTTLED, AWS_RETRY_TRANSIENT, false},
    {"RequestTimeoutException", NS_ERR_THROTTLED, AWS_RETRY_TRANSIENT, false},
    {"InternalError", NS_ERR_THROTTLED, AWS_RETRY_TRANSIENT, false},
    {"InternalFailure", NS_ERR_THROTTLED, AWS_RETRY_TRANSIENT, false},
    {"InternalServerError", NS_ERR_THROTTLED, AWS_RETRY_TRANSIENT, false},
    {"ServiceUnavailable", NS_ERR_THROTTLED, AWS_RETRY_TRANSIENT, false},
    {"ServiceUnavailableException", NS_ERR_THROTTLED, AWS_RETRY_TRANSIENT, false},
    {"Unavailable", NS_ERR_THROTTLED, AWS_RETRY_TRANSIENT, false},
    {"IDPCommunicationError", NS_ERR_THROTTLED, AWS_RETRY_TRANSIENT, false},
    /* authentication and authorisation */
    {"UnauthorizedOperation", NS_ERR_UNAUTHORIZED, AWS_RETRY_NO, false},
    {"AccessDenied", NS_ERR_UNAUTHORIZED, AWS_RETRY_NO, false},
    {"AccessDeniedException", NS_ERR_UNAUTHORIZED, AWS_RETRY_NO, false},
    {"OptInRequired", NS_ERR_UNAUTHORIZED, AWS_RETRY_NO, false},
    {"Blocked", NS_ERR_UNAUTHORIZED, AWS_RETRY_NO, false},
    {"AuthFailure", NS_ERR_UNAUTHORIZED, AWS_RETRY_NO, true},
    {"InvalidClientTokenId", NS_ERR_UNAUTHORIZED, AWS_RETRY_NO, true},
    {"UnrecognizedClientException", NS_ERR_UNAUTHORIZED, AWS_RETRY_NO, true},
    {"SignatureDoesNotMatch", NS_ERR_UNAUTHORIZED, AWS_RETRY_NO, true},
    {"IncompleteSignature", NS_ERR_UNAUTHORIZED, AWS_RETRY_NO, false},
    {"InvalidSignatureException", NS_ERR_UNAUTHORIZED, AWS_RETRY_NO, true},
    {"MissingAuthenticationToken", NS_ERR_UNAUTHORIZED, AWS_RETRY_NO, true},
    {"ExpiredToken", NS_ERR_UNAUTHORIZED, AWS_RETRY_NO, true},
    {"ExpiredTokenException", NS_ERR_UNAUTHORIZED, AWS_RETRY_NO, true},
    {"RequestExpired", NS_ERR_UNAUTHORIZED, AWS_RETRY_NO, false},
    {"InvalidIdentityToken", NS_ERR_UNAUTHORIZED, AWS_RETRY_NO, false},
    /* not found */
    {"InvalidInstanceID.NotFound", NS_ERR_NOT_FOUND, AWS_RETRY_NO, false},
    {"InvalidLaunchTemplateId.NotFound", NS_ERR_NOT_FOUND, AWS_RETRY_NO, false},
    {"InvalidLaunchTemplateName.NotFoundException", NS_ERR_NOT_FOUND, AWS_RETRY_NO, false},
    {"InvalidLaunchTemplateId.VersionNotFound", NS_ERR_NOT_FOUND, AWS_RETRY_NO, false},
    {"InvalidFleetId.NotFound", NS_ERR_NOT_FOUND, AWS_RETRY_NO, false},
    {"InvalidAMIID.NotFound", NS_ERR_NOT_FOUND, AWS_RETRY_NO, false},
    {"InvalidSubnetID.NotFound", NS_ERR_NOT_FOUND, AWS_RETRY_NO, false},
    {"InvalidGroup.NotFound", NS_ERR_NOT_FOUND, AWS_RETRY_NO, false},
    {"InvalidCapacityReservationId.NotFound", NS_ERR_NOT_FOUND, AWS_RETRY_NO, false},
    {"ParameterNotFound", NS_ERR_NOT_FOUND, AWS_RETRY_NO, false},
    {"QueueDoesNotExist", NS_ERR_NOT_FOUND, AWS_RETRY_NO, false},
    {"AWS.SimpleQueueService.NonExistentQueue", NS_ERR_NOT_FOUND, AWS_RETRY_NO, false},
    {"ResourceNotFoundException", NS_ERR_NOT_FOUND, AWS_RETRY_NO, false},
    /* the node class or the options are wrong */
    {"InvalidParameterValue", NS_ERR_INVALID_CONFIG, AWS_RETRY_NO, false},
    {"InvalidParameterCombination", NS_ERR_INVALID_CONFIG, AWS_RETRY_NO, false},
    {"InvalidAMIID.Malformed", NS_ERR_INVALID_CONFIG, AWS_RETRY_NO, false},
    {"InvalidSubnetID.Malformed", NS_ERR_INVALID_CONFIG, AWS_RETRY_NO, false},
    {"InvalidGroupId.Malformed", NS_ERR_INVALID_CONFIG, AWS_RETRY_NO, false},
    {"InvalidBlockDeviceMapping", NS_ERR_INVALID_CONFIG, AWS_RETRY_NO, false},
    {"InvalidUserData.Malformed", NS_ERR_INVALID_CONFIG, AWS_RETRY_NO, false},
    {"InvalidIAMInstanceProfile.NotFound", NS_ERR_INVALID_CONFIG, AWS_RETRY_NO, false},
    {"InvalidLaunchTemplateName.AlreadyExistsException", NS_ERR_INVALID_CONFIG, AWS_RETRY_NO, false},
    {"Unsupported", NS_ERR_UNSUPPORTED, AWS_RETRY_NO, false},
    {"UnsupportedOperation", NS_ERR_UNSUPPORTED, AWS_RETRY_NO, false},
    /* the provider built a bad request */
    {"IdempotentParameterMismatch", NS_ERR_INVALID_ARGUMENT, AWS_RETRY_NO, false},
    {"InvalidInstanceID.Malformed", NS_ERR_INVALID_ARGUMENT, AWS_RETRY_NO, false},
    {"InvalidParameter", NS_ERR_INTERNAL, AWS_RETRY_NO, false},
    {"MissingParameter", NS_ERR_INTERNAL, AWS_RETRY_NO, false},
    {"InvalidAction", NS_ERR_INTERNAL, AWS_RETRY_NO, false},
    {"InvalidQueryParameter", NS_ERR_INTERNAL, AWS_RETRY_NO, false},
    {"MalformedQueryString", NS_ERR_INTERNAL, AWS_RETRY_NO, false},
    {"ValidationError", NS_ERR_INTERNAL, AWS_RETRY_NO, false},
    {"ValidationException", NS_ERR_INTERNAL, AWS_RETRY_NO, false},
};

aws_error_class aws_classify_error(const char *code, long http_status)
{
    if (code && *code)
        for (size_t i = 0; i < sizeof(CODES) / sizeof(CODES[0]); i++)
            if (strcmp(CODES[i].code, code) == 0)
                return (aws_error_class){CODES[i].category, CODES[i].retry, CODES[i].bad_credentials};
    if (http_status == 429)
        return (aws_error_class){NS_ERR_THROTTLED, AWS_RETRY_THROTTLING, false};
    if (http_status >= 500 && http_status <= 599)
        return (aws_error_class){NS_ERR_THROTTLED, AWS_RETRY_TRANSIENT, false};
    if (http_status == 401 || http_status == 403)
        return (aws_error_class){NS_ERR_UNAUTHORIZED, AWS_RETRY_NO, false};
    if (http_status == 404)
        return (aws_error_class){NS_ERR_NOT_FOUND, AWS_RETRY_NO, false};
    return (aws_error_class){NS_ERR_INTERNAL, AWS_RETRY_NO, false};
}

bool aws_fleet_error_unfulfillable(const char *code)
{
    static const char *const UNFULFILLABLE[] = {
        "InsufficientInstanceCapacity", "MaxSpotInstanceCountExceeded", "VcpuLimitExceeded",
        "UnfulfillableCapacity",        "Unsupported",                  "InsufficientFreeAddressesInSubnet",
        "ReservationCapacityExceeded",  "SpotMaxPriceTooLow",           "InsufficientCapacity",
    };
    if (!code)
        return false;
    for (size_t i = 0; i < sizeof(UNFULFILLABLE) / sizeof(UNFULFILLABLE[0]); i++)
        if (strcmp(UNFULFILLABLE[i], code) == 0)
            return true;
    return false;
}

const char *aws_retry_kind_name(aws_retry_kind kind)
{
    switch (kind) {
    case AWS_RETRY_TRANSIENT:
        return "transient";
    case AWS_RETRY_THROTTLING:
        return "throttling";
    case AWS_RETRY_TIMEOUT:
        return "timeout";
    case AWS_RETRY_NO:
        break;
    }
    return "none";
}
