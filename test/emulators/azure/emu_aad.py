"""Microsoft Entra ID (AAD) v2 token endpoint, its OpenID metadata, and the IMDS managed-identity token endpoint.

Client credentials are checked as Entra ID checks them: the tenant in the path, client_id, a scope ending in
"/.default" for ARM, and either the client secret or a federated assertion (workload identity: the projected service
account token, client_assertion_type jwt-bearer). IMDS demands the "Metadata: true" header and a resource."""
import json
import time
from urllib.parse import parse_qs, urlparse

ARM_AUDIENCES = ("https://management.azure.com", "https://management.azure.com/",
                 "https://management.chinacloudapi.cn", "https://management.usgovcloudapi.net")
JWT_BEARER = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


def aad_error(code, description, status=400):
    return status, {"error": code, "error_description": description, "error_codes": [70000],
                    "timestamp": time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime())}


def openid_metadata(base, tenant):
    issuer = f"{base}/{tenant}/v2.0"
    return 200, {"token_endpoint": f"{base}/{tenant}/oauth2/v2.0/token", "issuer": issuer,
                 "authorization_endpoint": f"{base}/{tenant}/oauth2/v2.0/authorize",
                 "jwks_uri": f"{base}/{tenant}/discovery/v2.0/keys", "response_types_supported": ["code", "token"],
                 "subject_types_supported": ["pairwise"], "id_token_signing_alg_values_supported": ["RS256"],
                 "tenant_region_scope": "NA", "cloud_instance_name": "microsoftonline.com",
                 "end_session_endpoint": f"{base}/{tenant}/oauth2/v2.0/logout"}


def token(state, config, tenant, body):
    form = {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True).items()}
    if tenant != config["tenant"]:
        return aad_error("invalid_request", f"AADSTS90002: Tenant '{tenant}' not found.")
    if form.get("grant_type") != "client_credentials":
        return aad_error("unsupported_grant_type", "AADSTS70003: grant_type must be client_credentials")
    if form.get("client_id") != config["client_id"]:
        return aad_error("unauthorized_client", f"AADSTS700016: Application '{form.get('client_id')}' not found",
                         400)
    scope = form.get("scope", "")
    if not any(scope == a.rstrip("/") + "/.default" for a in ARM_AUDIENCES):
        return aad_error("invalid_scope", f"AADSTS70011: The provided scope '{scope}' is not valid.")
    if "client_secret" in form:
        if form["client_secret"] != config["client_secret"]:
            return aad_error("invalid_client", "AADSTS7000215: Invalid client secret provided.", 401)
    elif form.get("client_assertion_type") == JWT_BEARER:
        if form.get("client_assertion") != config["federated_token"]:
            return aad_error("invalid_client", "AADSTS700211: No matching federated identity record found for "
                             "presented assertion.", 401)
    else:
        return aad_error("invalid_client", "AADSTS7000216: 'client_assertion', 'client_secret' or 'request' is "
                         "required.", 401)
    access, lifetime = state.issue_token()
    return 200, {"token_type": "Bearer", "expires_in": lifetime, "ext_expires_in": lifetime, "access_token": access}


def imds_token(state, config, path_and_query, headers):
    url = urlparse(path_and_query)
    q = {k: v[0] for k, v in parse_qs(url.query).items()}
    if headers.get("metadata", "").lower() != "true":
        return 400, {"error": "invalid_request", "error_description": "Required metadata header not specified"}
    if not q.get("api-version"):
        return 400, {"error": "invalid_request", "error_description": "Required query variable 'api-version' is "
                     "missing"}
    if q.get("resource", "").rstrip("/") + "/" not in [a.rstrip("/") + "/" for a in ARM_AUDIENCES]:
        return 400, {"error": "invalid_resource", "error_description": "AADSTS500011: resource not found"}
    if q.get("client_id") and q["client_id"] != config["client_id"]:
        return 400, {"error": "invalid_request", "error_description": "Identity not found"}
    access, lifetime = state.issue_token()
    now = int(time.time())
    return 200, {"access_token": access, "client_id": config["client_id"], "expires_in": str(lifetime),
                 "expires_on": str(now + lifetime), "ext_expires_in": str(lifetime), "not_before": str(now),
                 "resource": q["resource"], "token_type": "Bearer"}


def dumps(obj):
    return json.dumps(obj).encode()
