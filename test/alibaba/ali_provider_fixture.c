/* What the alibaba.so tests through the core's loader share: the emulator, a temporary directory, the environment
 * of each credential source, loading the provider, node classes, the emulator's state and the captured log. */
#include "ali_provider_fixture.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emulator_json.h"
#include "errors/ns_error.h"
#include "json/host_json.h"
#include "log/ns_log.h"

emulator alf_emu;
const char *alf_plugin_path;
char alf_tmpdir[256];
FILE *alf_logfile;


void alf_env_clear(void)
{
    static const char *const VARS[] = {"ALIBABA_CLOUD_ACCESS_KEY_ID", "ALIBABA_CLOUD_ACCESS_KEY_SECRET",
                                       "ALIBABA_CLOUD_SECURITY_TOKEN", "ALIBABA_CLOUD_ROLE_ARN",
                                       "ALIBABA_CLOUD_OIDC_PROVIDER_ARN", "ALIBABA_CLOUD_OIDC_TOKEN_FILE",
                                       "ALIBABA_CLOUD_PROFILE", "ALIBABA_CLOUD_CREDENTIALS_FILE",
                                       "ALIBABA_CLOUD_ECS_METADATA", "ALIBABA_CLOUD_ECS_METADATA_DISABLED",
                                       "ALIBABA_CLOUD_IMDSV1_DISABLED", "METADATA_ENDPOINT"};
    for (size_t i = 0; i < sizeof(VARS) / sizeof(VARS[0]); i++)
        unsetenv(VARS[i]);
    /* a home of its own for each test: no profile or credentials file of another test */
    static char home[300];
    snprintf(home, sizeof(home), "%s/home-%d", alf_tmpdir, (int)getpid());
    mkdir(home, 0700);
    setenv("HOME", home, 1);
    setenv("ALIBABA_CLOUD_REGION_ID", REGION, 1);
}

void alf_env_static_keys(void)
{
    alf_env_clear();
    setenv("ALIBABA_CLOUD_ACCESS_KEY_ID", ALI_TEST_ACCESS_KEY, 1);
    setenv("ALIBABA_CLOUD_ACCESS_KEY_SECRET", ALI_TEST_SECRET, 1);
}

void alf_write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

/* Loads the provider with cluster c-demo on the emulator plus `extra` settings (key, value pairs, NULL-ended). */
ns_plugin *alf_load_with(const char *const *extra, int *rc_out)
{
    ns_plugin_setting settings[16] = {{"cluster_id", "c-demo"}, {"endpoint_url", alf_emu.url}, {"request_timeout", "3s"}};
    size_t n = 3;
    for (size_t i = 0; extra && extra[i] && n < 16; i += 2)
        settings[n++] = (ns_plugin_setting){extra[i], extra[i + 1]};
    ns_plugin_load_params params = {.settings = settings, .n_settings = n};
    ns_plugin *p = NULL;
    int rc = ns_plugin_load_file(alf_plugin_path, &params, &p);
    if (rc_out)
        *rc_out = rc;
    else
        ck_assert_msg(rc == NS_OK, "loading alibaba.so: %s", ns_error_message());
    return p;
}

ns_plugin *alf_load(void)
{
    return alf_load_with(NULL, NULL);
}

void alf_nodeclass_of(alf_nodeclass_doc *d, const char *name, const char *spec)
{
    d->spec = ns_host_json_parse(spec, strlen(spec));
    ck_assert_ptr_nonnull(d->spec);
    d->nc = (ns_nodeclass){sizeof(d->nc), "karpenter.k8s.alibabacloud/v1alpha1", "ECSNodeClass", name, d->spec};
}

cJSON *alf_state(void)
{
    return emulator_get_json(&alf_emu, "/_emulator/state");
}

int alf_count(const char *action)
{
    cJSON *st = alf_state();
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(st, "counts"), action);
    int n = cJSON_IsNumber(v) ? v->valueint : 0;
    cJSON_Delete(st);
    return n;
}

int alf_collect_none(void *ctx, const ns_instance *inst)
{
    (void)inst;
    ++*(int *)ctx;
    return 0;
}

/* One API call that needs credentials. */
void alf_call_api(ns_plugin *p)
{
    int n = 0;
    int rc = ns_plugin_list_instances(p, alf_collect_none, &n);
    ck_assert_msg(rc == NS_OK, "list_instances: %s", ns_error_message());
}

/* Everything the core logged, for the secret checks. */
char *alf_logged(void)
{
    fflush(alf_logfile);
    long len = ftell(alf_logfile);
    char *text = calloc(1, (size_t)len + 1);
    rewind(alf_logfile);
    ck_assert_int_eq(fread(text, 1, (size_t)len, alf_logfile), (size_t)len);
    return text;
}

void alf_start_logging(void)
{
    alf_logfile = tmpfile();
    ck_assert_ptr_nonnull(alf_logfile);
    ns_log_set_output(alf_logfile);
    ns_log_set_level(NS_LOG_DEBUG);
}

void alf_assert_no_secret(const char *text, const char *secret)
{
    ck_assert_msg(!strstr(text, secret), "a secret (%.6s...) appears in the logs", secret);
}

int alf_run(Suite *s)
{
    alf_plugin_path = getenv("ALIBABA_PLUGIN");
    if (!alf_plugin_path || ali_emulator_start(&alf_emu) != 0)
        return EXIT_FAILURE;
    snprintf(alf_tmpdir, sizeof(alf_tmpdir), "/tmp/nodesmith-alibaba-XXXXXX");
    if (!mkdtemp(alf_tmpdir))
        return EXIT_FAILURE;
    ns_log_set_level(NS_LOG_ERROR);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    emulator_stop(&alf_emu);
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", alf_tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", alf_tmpdir);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
