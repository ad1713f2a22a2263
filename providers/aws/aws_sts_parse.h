/* STS Query-protocol responses. Pure: no host upcalls. */
#ifndef NS_AWS_STS_PARSE_H
#define NS_AWS_STS_PARSE_H

#include <stddef.h>

#include "aws_creds.h"

/* Reads an AssumeRoleWithWebIdentityResponse into *out (copies; the caller clears it with aws_creds_clear). NS_OK,
 * NS_ERR_INVALID_ARGUMENT with a reason in err when the document is not such a response or lacks a credential field
 * or a valid Expiration, NS_ERR_INTERNAL on allocation failure. */
int aws_sts_parse_web_identity(const char *xml, size_t len, aws_creds *out, char *err, size_t errlen);

#endif
