"""SigV4 verification of received requests, with botocore's signer as the reference.

The emulator rebuilds the request from what arrived on the wire (method, Host, path and query, the headers named in
SignedHeaders, the body), recomputes the signature with botocore.auth.SigV4Auth for the key named in the Credential
scope and the time in X-Amz-Date, and compares. Failures carry the code and message AWS uses.
"""
import datetime
import hmac
import re

import botocore.auth
import botocore.credentials
from botocore.awsrequest import AWSRequest

MAX_SKEW = datetime.timedelta(minutes=5)
AUTH_RE = re.compile(
    r"^AWS4-HMAC-SHA256 Credential=(?P<akid>[^/]+)/(?P<date>\d{8})/(?P<region>[^/]+)/(?P<service>[^/]+)/aws4_request,"
    r"\s*SignedHeaders=(?P<signed>[a-z0-9;._-]+),\s*Signature=(?P<sig>[0-9a-f]{64})$")


class SignatureError(Exception):
    """A request AWS would refuse: `code` and `message` as AWS words them, `status` the HTTP status."""

    def __init__(self, code, message, status=403):
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status


def verify(method, path_and_query, headers, body, lookup_secret, now=None):
    """Checks a request's signature. `headers` maps lower-case names to values; `lookup_secret(akid)` returns
    (secret, session_token or None) or None for an unknown key. Returns (akid, region, service)."""
    auth = headers.get("authorization")
    if not auth:
        raise SignatureError("MissingAuthenticationToken", "Request is missing Authentication Token", 403)
    m = AUTH_RE.match(auth)
    if not m:
        raise SignatureError("IncompleteSignature", f"Authorization header is not a SigV4 header: {auth[:60]}", 403)
    amz_date = headers.get("x-amz-date", "")
    try:
        when = datetime.datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ")
    except ValueError:
        raise SignatureError("IncompleteSignature", "X-Amz-Date is missing or malformed", 403) from None
    now = now or datetime.datetime.utcnow()
    if abs(now - when) > MAX_SKEW:
        raise SignatureError(
            "RequestExpired",
            f"Request has expired. Signature expired: {amz_date} is now earlier than "
            f"{(now - MAX_SKEW).strftime('%Y%m%dT%H%M%SZ')} or later than "
            f"{(now + MAX_SKEW).strftime('%Y%m%dT%H%M%SZ')}", 400)
    if m.group("date") != amz_date[:8]:
        raise SignatureError("SignatureDoesNotMatch", "Credential scope date does not match X-Amz-Date", 403)
    found = lookup_secret(m.group("akid"))
    if found is None:
        raise SignatureError("AuthFailure", "AWS was not able to validate the provided access credentials", 401)
    secret, token = found
    if token is not None and headers.get("x-amz-security-token") != token:
        raise SignatureError("AuthFailure", "The security token included in the request is invalid", 401)
    signed = m.group("signed").split(";")
    if "host" not in signed:
        raise SignatureError("SignatureDoesNotMatch", "The host header must be signed", 403)
    for name in signed:
        if name not in headers:
            raise SignatureError("SignatureDoesNotMatch", f"Signed header {name} is missing from the request", 403)

    request = AWSRequest(method=method, url="http://" + headers["host"] + path_and_query, data=body)
    for name in signed:
        request.headers[name] = headers[name]
    request.context["timestamp"] = amz_date
    signer = botocore.auth.SigV4Auth(botocore.credentials.Credentials(m.group("akid"), secret, token),
                                     m.group("service"), m.group("region"))
    canonical = signer.canonical_request(request)
    expected = signer.signature(signer.string_to_sign(request, canonical), request)
    if not hmac.compare_digest(expected, m.group("sig")):
        raise SignatureError(
            "SignatureDoesNotMatch",
            "The request signature we calculated does not match the signature you provided. Check your AWS Secret "
            "Access Key and signing method.", 403)
    return m.group("akid"), m.group("region"), m.group("service")
