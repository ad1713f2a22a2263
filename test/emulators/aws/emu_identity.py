"""STS (AssumeRoleWithWebIdentity, GetCallerIdentity) and the IMDSv2 metadata paths of the emulator."""
import datetime
import json
import secrets
import time
from xml.sax.saxutils import escape

STS_NS = "https://sts.amazonaws.com/doc/2011-06-15/"


def iso(epoch):
    return datetime.datetime.utcfromtimestamp(epoch).strftime("%Y-%m-%dT%H:%M:%SZ")


class StsError(Exception):
    def __init__(self, code, message, status=400):
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status


def sts_error_xml(code, message):
    return (f'<ErrorResponse xmlns="{STS_NS}"><Error><Type>Sender</Type><Code>{escape(code)}</Code>'
            f"<Message>{escape(message)}</Message></Error><RequestId>{secrets.token_hex(8)}-emu</RequestId>"
            f"</ErrorResponse>")


def assume_role_with_web_identity(state, params):
    role = params.get("RoleArn", "")
    token = params.get("WebIdentityToken", "")
    session = params.get("RoleSessionName", "")
    if not role.startswith("arn:aws:iam::") or ":role/" not in role:
        raise StsError("ValidationError", f"{role!r} is not a valid role ARN")
    if not token or not session:
        raise StsError("ValidationError", "WebIdentityToken and RoleSessionName are required")
    if state.take_fault("AssumeRoleWithWebIdentity", ("sts_reject",)):
        raise StsError("InvalidIdentityToken", "Couldn't retrieve verification key from your identity provider")
    akid, secret, session_token, expires = state.issue_credentials()
    return (f'<AssumeRoleWithWebIdentityResponse xmlns="{STS_NS}"><AssumeRoleWithWebIdentityResult>'
            f"<SubjectFromWebIdentityToken>system:serviceaccount:kube-system:nodesmith</SubjectFromWebIdentityToken>"
            f"<Audience>sts.amazonaws.com</Audience><AssumedRoleUser><Arn>{escape(role)}/{escape(session)}</Arn>"
            f"<AssumedRoleId>AROAEMULATOR:{escape(session)}</AssumedRoleId></AssumedRoleUser><Credentials>"
            f"<SessionToken>{session_token}</SessionToken><SecretAccessKey>{secret}</SecretAccessKey>"
            f"<Expiration>{iso(expires)}</Expiration><AccessKeyId>{akid}</AccessKeyId></Credentials>"
            f"</AssumeRoleWithWebIdentityResult><ResponseMetadata><RequestId>{secrets.token_hex(8)}-emu</RequestId>"
            f"</ResponseMetadata></AssumeRoleWithWebIdentityResponse>")


def get_caller_identity(akid):
    return (f'<GetCallerIdentityResponse xmlns="{STS_NS}"><GetCallerIdentityResult>'
            f"<Arn>arn:aws:sts::111122223333:assumed-role/nodesmith/{akid}</Arn><UserId>{akid}</UserId>"
            f"<Account>111122223333</Account></GetCallerIdentityResult></GetCallerIdentityResponse>")


def imds(state, method, path, headers):
    """Answers an IMDS request: returns (status, content type, body)."""
    if path == "/latest/api/token":
        if method != "PUT":
            return 405, "text/plain", ""
        ttl = headers.get("x-aws-ec2-metadata-token-ttl-seconds")
        if not ttl or not ttl.isdigit() or not 1 <= int(ttl) <= 21600:
            return 400, "text/plain", ""
        token = secrets.token_urlsafe(32)
        with state.lock:
            state.imds_tokens[token] = time.time() + int(ttl)
        return 200, "text/plain", token
    if method != "GET":
        return 405, "text/plain", ""
    token = headers.get("x-aws-ec2-metadata-token")
    with state.lock:
        expiry = state.imds_tokens.get(token or "")
    if not expiry or expiry < time.time():
        return 401, "text/plain", ""  # IMDSv2 only: no token, no answer
    prefix = "/latest/meta-data/"
    if not path.startswith(prefix):
        return 404, "text/plain", ""
    leaf = path[len(prefix):]
    if leaf == "iam/security-credentials/":
        return 200, "text/plain", state.imds_role
    if leaf == f"iam/security-credentials/{state.imds_role}":
        akid, secret, session_token, expires = state.issue_credentials()
        return 200, "application/json", json.dumps({
            "Code": "Success", "LastUpdated": iso(time.time()), "Type": "AWS-HMAC", "AccessKeyId": akid,
            "SecretAccessKey": secret, "Token": session_token, "Expiration": iso(expires)})
    simple = {"placement/region": state.region, "placement/availability-zone": state.zones[0][0],
              "instance-id": "i-0e0000000000c0de0"}
    if leaf in simple:
        return 200, "text/plain", simple[leaf]
    return 404, "text/plain", ""


def sso_role_credentials(state, query, headers):
    """The SSO portal's GetRoleCredentials (GET /federation/credentials?account_id=&role_name=, bearer token in
    x-amz-sso_bearer_token): (status, body). The token must be the one `aws sso login` would have cached, as set with
    POST /_emulator/sso."""
    with state.lock:
        expected = state.sso_token
    if headers.get("x-amz-sso_bearer_token") != expected:
        return 401, json.dumps({"message": "Session token not found or invalid"})
    if not query.get("account_id") or not query.get("role_name"):
        return 400, json.dumps({"message": "account_id and role_name are required"})
    akid, secret, session_token, expires = state.issue_credentials()
    return 200, json.dumps({"roleCredentials": {"accessKeyId": akid, "secretAccessKey": secret,
                                                "sessionToken": session_token, "expiration": int(expires * 1000)}})


def container_credentials(state, headers):
    """The container credentials endpoint (EKS Pod Identity agent, ECS): GET with the Authorization token the pod was
    given (POST /_emulator/container sets it): (status, body)."""
    with state.lock:
        expected = state.container_token
    if headers.get("authorization") != expected:
        return 401, json.dumps({"Code": "AccessDenied", "Message": "invalid authorization token"})
    akid, secret, session_token, expires = state.issue_credentials()
    return 200, json.dumps({"AccessKeyId": akid, "SecretAccessKey": secret, "Token": session_token,
                            "AccountId": "111122223333", "Expiration": iso(expires)})
