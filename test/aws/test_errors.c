/* Table-driven checks of the AWS error-code mapping. */
#include <check.h>
#include <stdlib.h>

#include "aws_errors.h"

typedef struct expectation {
    const char *code;
    long status;
    ns_err category;
    aws_retry_kind retry;
    bool bad_credentials;
} expectation;

static const expectation CASES[] = {
    {"InsufficientInstanceCapacity", 500, NS_ERR_INSUFFICIENT_CAPACITY, AWS_RETRY_NO, false},
    {"InsufficientCapacity", 400, NS_ERR_INSUFFICIENT_CAPACITY, AWS_RETRY_NO, false},
    {"InsufficientFreeAddressesInSubnet", 400, NS_ERR_INSUFFICIENT_CAPACITY, AWS_RETRY_NO, false},
    {"MaxSpotInstanceCountExceeded", 400, NS_ERR_INSUFFICIENT_CAPACITY, AWS_RETRY_NO, false},
    {"VcpuLimitExceeded", 400, NS_ERR_INSUFFICIENT_CAPACITY, AWS_RETRY_NO, false},
    {"UnfulfillableCapacity", 400, NS_ERR_INSUFFICIENT_CAPACITY, AWS_RETRY_NO, false},
    {"ReservationCapacityExceeded", 400, NS_ERR_INSUFFICIENT_CAPACITY, AWS_RETRY_NO, false},
    {"Unsupported", 400, NS_ERR_UNSUPPORTED, AWS_RETRY_NO, false},
    {"InvalidParameterValue", 400, NS_ERR_INVALID_CONFIG, AWS_RETRY_NO, false},
    {"InvalidParameterCombination", 400, NS_ERR_INVALID_CONFIG, AWS_RETRY_NO, false},
    {"InvalidIAMInstanceProfile.NotFound", 400, NS_ERR_INVALID_CONFIG, AWS_RETRY_NO, false},
    {"RequestLimitExceeded", 503, NS_ERR_THROTTLED, AWS_RETRY_THROTTLING, false},
    {"Throttling", 400, NS_ERR_THROTTLED, AWS_RETRY_THROTTLING, false},
    {"ThrottlingException", 400, NS_ERR_THROTTLED, AWS_RETRY_THROTTLING, false},
    {"AWS.SimpleQueueService.RequestThrottled", 403, NS_ERR_THROTTLED, AWS_RETRY_THROTTLING, false},
    {"InternalError", 500, NS_ERR_THROTTLED, AWS_RETRY_TRANSIENT, false},
    {"ServiceUnavailable", 503, NS_ERR_THROTTLED, AWS_RETRY_TRANSIENT, false},
    {"RequestTimeout", 400, NS_ERR_THROTTLED, AWS_RETRY_TRANSIENT, false},
    {"UnauthorizedOperation", 403, NS_ERR_UNAUTHORIZED, AWS_RETRY_NO, false},
    {"AuthFailure", 401, NS_ERR_UNAUTHORIZED, AWS_RETRY_NO, true},
    {"SignatureDoesNotMatch", 403, NS_ERR_UNAUTHORIZED, AWS_RETRY_NO, true},
    {"ExpiredToken", 400, NS_ERR_UNAUTHORIZED, AWS_RETRY_NO, true},
    {"InvalidClientTokenId", 403, NS_ERR_UNAUTHORIZED, AWS_RETRY_NO, true},
    {"RequestExpired", 400, NS_ERR_UNAUTHORIZED, AWS_RETRY_NO, false},
    {"InvalidIdentityToken", 400, NS_ERR_UNAUTHORIZED, AWS_RETRY_NO, false},
    {"InvalidInstanceID.NotFound", 400, NS_ERR_NOT_FOUND, AWS_RETRY_NO, false},
    {"InvalidLaunchTemplateId.NotFound", 400, NS_ERR_NOT_FOUND, AWS_RETRY_NO, false},
    {"InvalidLaunchTemplateName.NotFoundException", 400, NS_ERR_NOT_FOUND, AWS_RETRY_NO, false},
    {"ParameterNotFound", 400, NS_ERR_NOT_FOUND, AWS_RETRY_NO, false},
    {"AWS.SimpleQueueService.NonExistentQueue", 400, NS_ERR_NOT_FOUND, AWS_RETRY_NO, false},
    {"ResourceNotFoundException", 404, NS_ERR_NOT_FOUND, AWS_RETRY_NO, false},
    {"InvalidAMIID.NotFound", 400, NS_ERR_NOT_FOUND, AWS_RETRY_NO, false},
    {"UnsupportedOperation", 400, NS_ERR_UNSUPPORTED, AWS_RETRY_NO, false},
    {"InvalidAction", 400, NS_ERR_INTERNAL, AWS_RETRY_NO, false},
    {"AccessDeniedException", 400, NS_ERR_UNAUTHORIZED, AWS_RETRY_NO, false},
    {"IdempotentParameterMismatch", 400, NS_ERR_INVALID_ARGUMENT, AWS_RETRY_NO, false},
    {"MissingParameter", 400, NS_ERR_INTERNAL, AWS_RETRY_NO, false},
    /* unknown codes and no code: the HTTP status decides */
    {"SomethingNew", 500, NS_ERR_THROTTLED, AWS_RETRY_TRANSIENT, false},
    {"SomethingNew", 502, NS_ERR_THROTTLED, AWS_RETRY_TRANSIENT, false},
    {NULL, 503, NS_ERR_THROTTLED, AWS_RETRY_TRANSIENT, false},
    {"", 504, NS_ERR_THROTTLED, AWS_RETRY_TRANSIENT, false},
    {NULL, 429, NS_ERR_THROTTLED, AWS_RETRY_THROTTLING, false},
    {NULL, 403, NS_ERR_UNAUTHORIZED, AWS_RETRY_NO, false},
    {NULL, 401, NS_ERR_UNAUTHORIZED, AWS_RETRY_NO, false},
    {NULL, 404, NS_ERR_NOT_FOUND, AWS_RETRY_NO, false},
    {"SomethingNew", 400, NS_ERR_INTERNAL, AWS_RETRY_NO, false},
    {NULL, 301, NS_ERR_INTERNAL, AWS_RETRY_NO, false},
};

START_TEST(test_classification)
{
    const expectation *e = &CASES[_i];
    aws_error_class c = aws_classify_error(e->code, e->status);
    ck_assert_msg(c.category == e->category, "%s/%ld: category %d, expected %d", e->code ? e->code : "(none)",
                  e->status, c.category, e->category);
    ck_assert_msg(c.retry == e->retry, "%s/%ld: retry %s, expected %s", e->code ? e->code : "(none)", e->status,
                  aws_retry_kind_name(c.retry), aws_retry_kind_name(e->retry));
    ck_assert_int_eq(c.bad_credentials, e->bad_credentials);
}
END_TEST

START_TEST(test_fleet_unfulfillable)
{
    const char *yes[] = {"InsufficientInstanceCapacity", "MaxSpotInstanceCountExceeded", "VcpuLimitExceeded",
                         "UnfulfillableCapacity", "Unsupported", "InsufficientFreeAddressesInSubnet",
                         "ReservationCapacityExceeded"};
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
        ck_assert_msg(aws_fleet_error_unfulfillable(yes[i]), "%s", yes[i]);
    const char *no[] = {"InvalidParameterValue", "RequestLimitExceeded", "UnauthorizedOperation", "", "x"};
    for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
        ck_assert_msg(!aws_fleet_error_unfulfillable(no[i]), "%s", no[i]);
    ck_assert(!aws_fleet_error_unfulfillable(NULL));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("aws_errors");
    TCase *tc = tcase_create("mapping");
    tcase_add_loop_test(tc, test_classification, 0, (int)(sizeof(CASES) / sizeof(CASES[0])));
    tcase_add_test(tc, test_fleet_unfulfillable);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
