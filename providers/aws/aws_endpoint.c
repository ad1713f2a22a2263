#include "aws_endpoint.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <nodesmith/provider.h>

const char *aws_env_get(const aws_env *env, const char *name)
{
    const char *v = env && env->get ? env->get(env->ctx, name) : getenv(name);
    return v && *v ? v : NULL;
}

bool aws_env_true(const aws_env *env, const char *name)
{
    const char *v = aws_env_get(env, name);
    return v && strcasecmp(v, "true") == 0;
}

int aws_url_parse(const char *url, aws_url *out)
{
    memset(out, 0, sizeof(*out));
    const char *sep = url ? strstr(url, "://") : NULL;
    if (!sep)
        return NS_ERR_INVALID_CONFIG;
    size_t slen = (size_t)(sep - url);
    if (!((slen == 5 && strncasecmp(url, "https", 5) == 0) || (slen == 4 && strncasecmp(url, "http", 4) == 0)))
        return NS_ERR_INVALID_CONFIG;
    for (size_t i = 0; i < slen; i++)
        out->scheme[i] = (char)tolower((unsigned char)url[i]);
    const char *host = sep + 3;
    size_t hlen = strcspn(host, "/?#");
    if (hlen == 0 || hlen >= sizeof(out->host))
        return NS_ERR_INVALID_CONFIG;
    memcpy(out->host, host, hlen);
    /* Leave the scheme's default port out, as HTTP clients do in the Host header they send. */
    const char *default_port = strcmp(out->scheme, "https") == 0 ? ":443" : ":80";
    size_t dlen = strlen(default_port);
    if (hlen > dlen && strcmp(out->host + hlen - dlen, default_port) == 0)
        out->host[hlen - dlen] = '\0';
    const char *path = host + hlen;
    size_t plen = strcspn(path, "?#");
    while (plen && path[plen - 1] == '/')
        plen--;
    if (plen >= sizeof(out->path))
        return NS_ERR_INVALID_CONFIG;
    memcpy(out->path, path, plen);
    return NS_OK;
}

const char *aws_pricing_region(const char *region)
{
    if (region && strncmp(region, "cn-", 3) == 0)
        return "cn-northwest-1";
    if (region && strncmp(region, "ap-", 3) == 0)
        return "ap-south-1";
    if (region && (strncmp(region, "eu-", 3) == 0 || strncmp(region, "me-", 3) == 0 ||
                   strncmp(region, "af-", 3) == 0 || strncmp(region, "il-", 3) == 0))
        return "eu-central-1";
    return "us-east-1";
}

int aws_endpoint_resolve(const aws_env *env, const char *service, const char *region, char *url, size_t url_len)
{
    const char *configured = NULL;
    if (!aws_env_true(env, "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS")) {
        char var[64];
        int n = snprintf(var, sizeof(var), "AWS_ENDPOINT_URL_%s", service);
        for (int i = 17; i < n; i++)
            var[i] = (char)toupper((unsigned char)var[i]);
        configured = aws_env_get(env, var);
        if (!configured)
            configured = aws_env_get(env, "AWS_ENDPOINT_URL");
    }
    int n;
    if (configured) {
        n = snprintf(url, url_len, "%s", configured);
    } else {
        const char *suffix = region && strncmp(region, "cn-", 3) == 0 ? "amazonaws.com.cn" : "amazonaws.com";
        if (strcmp(service, "pricing") == 0)
            n = snprintf(url, url_len, "https://api.pricing.%s.%s", aws_pricing_region(region), suffix);
        else if (strcmp(service, "sso") == 0) /* the SSO portal, where GetRoleCredentials lives */
            n = snprintf(url, url_len, "https://portal.sso.%s.%s", region ? region : "us-east-1", suffix);
        else
            n = snprintf(url, url_len, "https://%s.%s.%s", service, region ? region : "us-east-1", suffix);
    }
    if (n < 0 || (size_t)n >= url_len)
        return NS_ERR_INVALID_CONFIG;
    aws_url parsed;
    return aws_url_parse(url, &parsed);
}

const char *aws_imds_endpoint(const aws_env *env, char *url, size_t url_len)
{
    if (aws_env_true(env, "AWS_EC2_METADATA_DISABLED"))
        return NULL;
    const char *configured = aws_env_get(env, "AWS_EC2_METADATA_SERVICE_ENDPOINT");
    int n = snprintf(url, url_len, "%s", configured ? configured : "http://169.254.169.254");
    if (n < 0 || (size_t)n >= url_len)
        return NULL;
    while (n > 0 && url[n - 1] == '/')
        url[--n] = '\0';
    return url;
}
