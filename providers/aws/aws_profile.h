/*
 * The AWS shared config and credentials files, read as the SDKs read them: the profile is $AWS_PROFILE (else
 * "default"); the credentials file ($AWS_SHARED_CREDENTIALS_FILE, else ~/.aws/credentials) has sections "[name]", the
 * config file ($AWS_CONFIG_FILE, else ~/.aws/config) "[default]", "[profile name]" and "[sso-session name]". A key of
 * the credentials file wins over the same key in the config file. Lines are "key = value"; "#" and ";" start
 * comments; indented lines (sub-sections such as s3 settings) are skipped. Pure: no host upcalls; the environment is
 * read through aws_env (HOME included).
 */
#ifndef NS_AWS_PROFILE_H
#define NS_AWS_PROFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "aws_endpoint.h"

/* The settings of one profile the credential chain uses (each malloc'd, NULL when absent). Secrets are wiped on
 * free. */
typedef struct aws_profile {
    char *name;
    char *access_key_id;
    char *secret_access_key;
    char *session_token;
    char *credential_process;
    char *role_arn;          /* assume-role profiles: recognised only to refuse them by name */
    char *sso_start_url;     /* from the profile, or from its sso-session section */
    char *sso_region;
    char *sso_session;       /* the sso-session section's name, which also names the token cache file */
    char *sso_account_id;
    char *sso_role_name;
    char *ca_bundle;
} aws_profile;

/* Reads the profile into *out. NS_OK when either file has the profile; NS_ERR_NOT_FOUND when neither does (an error
 * only if the profile was asked for by name); NS_ERR_INVALID_CONFIG for a line that is not "key = value" or a
 * section header, with file and line in err; NS_ERR_INTERNAL on allocation failure. *out is cleared first. */
int aws_profile_load(const aws_env *env, aws_profile *out, char *err, size_t errlen);
void aws_profile_clear(aws_profile *p); /* accepts a zeroed struct */

/* True when the profile names SSO settings (a start URL or an sso-session, with account and role). */
bool aws_profile_has_sso(const aws_profile *p);

/* The path of the SSO token cache file: ~/.aws/sso/cache/<sha1 hex of the sso-session name, or of the start URL>.json.
 * NS_OK, or NS_ERR_INVALID_CONFIG when HOME is unset or the path does not fit. */
int aws_profile_sso_cache_path(const aws_env *env, const aws_profile *p, char *path, size_t len);

#endif
