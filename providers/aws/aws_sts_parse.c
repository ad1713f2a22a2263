#include "aws_sts_parse.h"

#include <stdio.h>

#include <nodesmith/provider.h>

#include "aws_parse_util.h"

int aws_sts_parse_web_identity(const char *xml, size_t len, aws_creds *out, char *err, size_t errlen)
{
    aws_xml_node *doc = NULL;
    int rc = aws_parse_open(xml, len, "AssumeRoleWithWebIdentityResponse", &doc, err, errlen);
    if (rc != NS_OK)
        return rc;
    const aws_xml_node *c = aws_xml_path(doc, "AssumeRoleWithWebIdentityResult/Credentials");
    const char *akid = aws_xml_text(c, "AccessKeyId");
    const char *secret = aws_xml_text(c, "SecretAccessKey");
    const char *token = aws_xml_text(c, "SessionToken");
    int64_t expiration = 0;
    if (!akid || !*akid || !secret || !*secret || !token || !*token) {
        snprintf(err, errlen, "AssumeRoleWithWebIdentityResult/Credentials lacks AccessKeyId, SecretAccessKey or "
                              "SessionToken");
        rc = NS_ERR_INVALID_ARGUMENT;
    } else if (!aws_parse_iso8601_ms(aws_xml_text(c, "Expiration"), &expiration)) {
        snprintf(err, errlen, "AssumeRoleWithWebIdentityResult/Credentials/Expiration is missing or not an ISO 8601 "
                              "time");
        rc = NS_ERR_INVALID_ARGUMENT;
    } else {
        rc = aws_creds_set(out, akid, secret, token, expiration);
        if (rc != NS_OK)
            snprintf(err, errlen, "out of memory copying the web-identity credentials");
    }
    aws_xml_free(doc);
    return rc;
}
