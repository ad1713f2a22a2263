#include "aws_creds.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include <nodesmith/provider.h>

static void wipe_free(char *s)
{
    if (!s)
        return;
    OPENSSL_cleanse(s, strlen(s));
    free(s);
}

int aws_creds_set(aws_creds *c, const char *access_key_id, const char *secret_access_key, const char *session_token,
                  int64_t expiration_ms)
{
    if (!access_key_id || !*access_key_id || !secret_access_key || !*secret_access_key)
        return NS_ERR_INVALID_ARGUMENT;
    aws_creds fresh = {strdup(access_key_id), strdup(secret_access_key),
                       session_token && *session_token ? strdup(session_token) : NULL, expiration_ms};
    if (!fresh.access_key_id || !fresh.secret_access_key || (session_token && *session_token && !fresh.session_token)) {
        aws_creds_clear(&fresh);
        aws_creds_clear(c);
        return NS_ERR_INTERNAL;
    }
    aws_creds_clear(c);
    *c = fresh;
    return NS_OK;
}

int aws_creds_copy(aws_creds *dst, const aws_creds *src)
{
    return aws_creds_set(dst, src->access_key_id, src->secret_access_key, src->session_token, src->expiration_ms);
}

void aws_creds_clear(aws_creds *c)
{
    if (!c)
        return;
    wipe_free(c->access_key_id);
    wipe_free(c->secret_access_key);
    wipe_free(c->session_token);
    memset(c, 0, sizeof(*c));
}

int aws_creds_present(const aws_creds *c)
{
    return c && c->access_key_id && c->secret_access_key;
}
