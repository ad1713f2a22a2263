/* The `launchError` action: the next launches fail, as a provider's create call fails for reasons other than
 * capacity (an outage, missing permissions, a rejected request, throttling); and `launchTimeout`: the next launches
 * hang until the provider call's deadline. */
#include <string.h>
#include <stdlib.h>

#include "simulation/timeline_launch_error.h"
#include "errors/ns_error.h"

#define MAX_COUNT 100000

static const struct {
    const char *name;
    ns_err error;
} errors[] = {
    {"Internal", NS_ERR_INTERNAL},         {"Unauthorized", NS_ERR_UNAUTHORIZED},
    {"InvalidConfig", NS_ERR_INVALID_CONFIG}, {"Throttled", NS_ERR_THROTTLED},
    {"Unsupported", NS_ERR_UNSUPPORTED},
};
#define N_ERRORS (sizeof(errors) / sizeof(errors[0]))

const char *tl_launch_error_name(int error)
{
    for (size_t i = 0; i < N_ERRORS; i++)
        if ((int)errors[i].error == error)
            return errors[i].name;
    return "unknown";
}

static const char *const launch_error_fields[] = {"error", "count", NULL};

int tl_decode_launch_error(tl_ctx *c, const ns_ynode *v, const char *path, ns_tl_step *s)
{
    int rc;
    char *name = NULL;
    bool has_count = false;
    if ((rc = ns_dec_fields(&c->dec, v, path, launch_error_fields)) < 0 ||
        (rc = ns_dec_string_required(&c->dec, v, path, "error", &name)) < 0 ||
        (rc = ns_dec_int32(&c->dec, v, path, "count", 1, MAX_COUNT, &s->count, &has_count)) < 0)
        goto done;
    if (!has_count)
        s->count = 1;
    size_t i = 0;
    while (i < N_ERRORS && strcmp(errors[i].name, name) != 0)
        i++;
    if (i == N_ERRORS) {
        char p[NS_PATH_MAX];
        ns_path_key(p, sizeof(p), path, "error");
        rc = ns_dec_fail(&c->dec, ns_ymap_get(v, "error"), p, "\"%s\" is not one of Internal, Unauthorized, "
                         "InvalidConfig, Throttled, Unsupported (for no capacity, use launchFailure)", name);
        goto done;
    }
    s->launch_error = errors[i].error;
done:
    free(name);
    return rc;
}

static const char *const launch_timeout_fields[] = {"count", NULL};

int tl_decode_launch_timeout(tl_ctx *c, const ns_ynode *v, const char *path, ns_tl_step *s)
{
    int rc;
    bool has_count = false;
    if ((rc = ns_dec_fields(&c->dec, v, path, launch_timeout_fields)) < 0 ||
        (rc = ns_dec_int32(&c->dec, v, path, "count", 1, MAX_COUNT, &s->count, &has_count)) < 0)
        return rc;
    if (!has_count)
        s->count = 1;
    return 0;
}
