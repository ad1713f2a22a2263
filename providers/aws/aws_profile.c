#include "aws_profile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodesmith/provider.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>

#define LINE_MAX_LEN 8192

static void wipe_free(char *s)
{
    if (s)
        OPENSSL_cleanse(s, strlen(s));
    free(s);
}

void aws_profile_clear(aws_profile *p)
{
    free(p->name);
    wipe_free(p->access_key_id);
    wipe_free(p->secret_access_key);
    wipe_free(p->session_token);
    free(p->credential_process);
    free(p->role_arn);
    free(p->sso_start_url);
    free(p->sso_region);
    free(p->sso_session);
    free(p->sso_account_id);
    free(p->sso_role_name);
    free(p->ca_bundle);
    memset(p, 0, sizeof(*p));
}

bool aws_profile_has_sso(const aws_profile *p)
{
    return (p->sso_start_url || p->sso_session) && p->sso_account_id && p->sso_role_name;
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
        s[--n] = '\0';
    return s;
}

/* Where a key of the profile goes; NULL for keys the chain does not use. */
static char **slot(aws_profile *p, const char *key)
{
    static const struct {
        const char *key;
        size_t offset;
    } KEYS[] = {
        {"aws_access_key_id", offsetof(aws_profile, access_key_id)},
        {"aws_secret_access_key", offsetof(aws_profile, secret_access_key)},
        {"aws_session_token", offsetof(aws_profile, session_token)},
        {"credential_process", offsetof(aws_profile, credential_process)},
        {"role_arn", offsetof(aws_profile, role_arn)},
        {"sso_start_url", offsetof(aws_profile, sso_start_url)},
        {"sso_region", offsetof(aws_profile, sso_region)},
        {"sso_session", offsetof(aws_profile, sso_session)},
        {"sso_account_id", offsetof(aws_profile, sso_account_id)},
        {"sso_role_name", offsetof(aws_profile, sso_role_name)},
        {"ca_bundle", offsetof(aws_profile, ca_bundle)},
    };
    for (size_t i = 0; i < sizeof(KEYS) / sizeof(KEYS[0]); i++)
        if (strcmp(KEYS[i].key, key) == 0)
            return (char **)((char *)p + KEYS[i].offset);
    return NULL;
}

typedef struct file_read {
    const char *path;
    const char *section; /* the header wanted, without brackets: "default", "profile x", "sso-session y" */
    bool overwrite;      /* the credentials file wins over the config file */
    bool found;
} file_read;

/* Reads `section` of one file into p. A missing file is not an error. */
static int read_section(file_read *f, aws_profile *p, char *err, size_t errlen)
{
    FILE *in = fopen(f->path, "r");
    if (!in && (errno == ENOENT || errno == ENOTDIR))
        return NS_OK;
    if (!in) {
        snprintf(err, errlen, "%s: %s", f->path, strerror(errno));
        return NS_ERR_INVALID_CONFIG;
    }
    char line[LINE_MAX_LEN];
    int number = 0, rc = NS_OK;
    bool inside = false;
    while (rc == NS_OK && fgets(line, sizeof(line), in)) {
        number++;
        if (line[0] == ' ' || line[0] == '\t')
            continue; /* a sub-section's line, or a continuation */
        char *s = trim(line);
        if (!*s || *s == '#' || *s == ';')
            continue;
        if (*s == '[') {
            char *close = strchr(s, ']');
            if (!close) {
                snprintf(err, errlen, "%s line %d: a section header without ']'", f->path, number);
                rc = NS_ERR_INVALID_CONFIG;
                break;
            }
            *close = '\0';
            inside = strcmp(trim(s + 1), f->section) == 0;
            f->found |= inside;
            continue;
        }
        char *eq = strchr(s, '=');
        if (!eq) {
            snprintf(err, errlen, "%s line %d: expected \"key = value\"", f->path, number);
            rc = NS_ERR_INVALID_CONFIG;
            break;
        }
        if (!inside)
            continue;
        *eq = '\0';
        char *key = trim(s), *value = trim(eq + 1);
        char *hash = strstr(value, " #");
        if (hash) { /* an inline comment after white space */
            *hash = '\0';
            value = trim(value);
        }
        char **dst = slot(p, key);
        if (!dst || !*value || (*dst && !f->overwrite))
            continue;
        char *copy = strdup(value);
        if (!copy) {
            rc = NS_ERR_INTERNAL;
            break;
        }
        wipe_free(*dst);
        *dst = copy;
    }
    OPENSSL_cleanse(line, sizeof(line));
    fclose(in);
    return rc;
}

static int file_path(const aws_env *env, const char *var, const char *leaf, char *path, size_t len)
{
    const char *set = aws_env_get(env, var);
    const char *home = aws_env_get(env, "HOME");
    int n = set ? snprintf(path, len, "%s", set) : home ? snprintf(path, len, "%s/.aws/%s", home, leaf) : -1;
    return n >= 0 && (size_t)n < len ? NS_OK : NS_ERR_NOT_FOUND;
}

int aws_profile_load(const aws_env *env, aws_profile *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    if (errlen)
        err[0] = '\0';
    const char *name = aws_env_get(env, "AWS_PROFILE");
    if (!(out->name = strdup(name ? name : "default")))
        return NS_ERR_INTERNAL;
    char config[1024], credentials[1024], section[300];
    bool have_config = file_path(env, "AWS_CONFIG_FILE", "config", config, sizeof(config)) == NS_OK;
    bool have_credentials =
        file_path(env, "AWS_SHARED_CREDENTIALS_FILE", "credentials", credentials, sizeof(credentials)) == NS_OK;
    int rc = NS_OK;
    bool found = false;
    if (have_credentials) {
        file_read f = {credentials, out->name, true, false};
        rc = read_section(&f, out, err, errlen);
        found |= f.found;
    }
    if (rc == NS_OK && have_config) {
        snprintf(section, sizeof(section), strcmp(out->name, "default") == 0 ? "%s" : "profile %s", out->name);
        file_read f = {config, section, false, false};
        rc = read_section(&f, out, err, errlen);
        found |= f.found;
        if (rc == NS_OK && found && out->sso_session) {
            snprintf(section, sizeof(section), "sso-session %s", out->sso_session);
            file_read session = {config, section, false, false};
            rc = read_section(&session, out, err, errlen);
            if (rc == NS_OK && !session.found) {
                snprintf(err, errlen, "%s: profile %s names sso_session %s, which has no [sso-session %s] section",
                         config, out->name, out->sso_session, out->sso_session);
                rc = NS_ERR_INVALID_CONFIG;
            }
        }
    }
    if (rc == NS_OK && !found) {
        snprintf(err, errlen, "profile %s is in neither %s nor %s", out->name, have_credentials ? credentials : "(no file)",
                 have_config ? config : "(no file)");
        rc = NS_ERR_NOT_FOUND;
    }
    if (rc != NS_OK && rc != NS_ERR_NOT_FOUND)
        aws_profile_clear(out);
    return rc;
}

int aws_profile_sso_cache_path(const aws_env *env, const aws_profile *p, char *path, size_t len)
{
    const char *key = p->sso_session ? p->sso_session : p->sso_start_url;
    const char *home = aws_env_get(env, "HOME");
    if (!key || !home)
        return NS_ERR_INVALID_CONFIG;
    unsigned char digest[SHA_DIGEST_LENGTH];
    SHA1((const unsigned char *)key, strlen(key), digest);
    char hex[2 * SHA_DIGEST_LENGTH + 1];
    for (size_t i = 0; i < SHA_DIGEST_LENGTH; i++)
        snprintf(hex + 2 * i, 3, "%02x", digest[i]);
    int n = snprintf(path, len, "%s/.aws/sso/cache/%s.json", home, hex);
    return n >= 0 && (size_t)n < len ? NS_OK : NS_ERR_INVALID_CONFIG;
}
