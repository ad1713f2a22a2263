/* The shared world's file: one line per instance, tab-separated, in id order. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "sim_instances.h"
#include "sim_shared.h"
#include "sim_state.h"

int sim_shared_open(sim_state *s, const char *path)
{
    s->shared_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (s->shared_fd < 0)
        return SIM_FAIL(s, NS_ERR_INVALID_CONFIG, "option state_file: cannot open %s: %s", path, strerror(errno));
    return NS_OK;
}

void sim_shared_close(sim_state *s)
{
    if (s->shared_fd >= 0)
        close(s->shared_fd);
    s->shared_fd = -1;
}

static char *slurp(int fd, size_t *len)
{
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    ssize_t got;
    if (!buf || lseek(fd, 0, SEEK_SET) < 0) {
        free(buf);
        return NULL;
    }
    while ((got = read(fd, buf + n, cap - n)) > 0) {
        n += (size_t)got;
        if (n == cap) {
            char *grown = realloc(buf, 2 * cap + 1);
            if (!grown) {
                free(buf);
                return NULL;
            }
            buf = grown;
            cap *= 2;
        }
    }
    buf[n] = '\0';
    *len = n;
    return got < 0 ? (free(buf), NULL) : buf;
}

/* One line into *inst; false when malformed (or naming an instance type this sim's catalog lacks). */
static bool parse_line(const sim_state *s, char *line, sim_instance *inst)
{
    char *f[18];
    size_t n = 0;
    for (char *p = line; n < 18 && p; n++)
        f[n] = strsep(&p, "\t");
    if (n != 18)
        return false;
    memset(inst, 0, sizeof(*inst));
    const sim_itype *t = sim_catalog_find(&s->catalog, f[4]);
    if (!t)
        return false;
    inst->id = strtoull(f[0], NULL, 10);
    inst->state = (ns_instance_state)atoi(f[1]);
    inst->launch_time_ms = strtoll(f[2], NULL, 10);
    inst->instance_type = t->name;
    inst->capacity_type = strcmp(f[6], NS_CAPACITY_SPOT) == 0       ? NS_CAPACITY_SPOT
                          : strcmp(f[6], NS_CAPACITY_RESERVED) == 0 ? NS_CAPACITY_RESERVED
                                                                    : NS_CAPACITY_ON_DEMAND;
    const char *names[SIM_NAME_COUNT] = {
        [SIM_NAME_PROVIDER_ID] = f[3], [SIM_NAME_ZONE] = f[5],     [SIM_NAME_IMAGE] = f[7],
        [SIM_NAME_NODECLAIM] = f[8],   [SIM_NAME_NODEPOOL] = f[9], [SIM_NAME_NODECLASS] = f[10],
    };
    for (int i = 0; i < SIM_NAME_COUNT; i++)
        if (strlen(names[i]) >= (i == SIM_NAME_PROVIDER_ID ? NS_PROVIDER_ID_MAX : NS_NAME_MAX))
            return false;
    if (!(inst->names = sim_instance_pack_names(names)))
        return false;
    inst->allocatable.cpu_milli = strtoll(f[11], NULL, 10);
    inst->allocatable.memory_bytes = strtoll(f[12], NULL, 10);
    inst->allocatable.pods = strtoll(f[13], NULL, 10);
    inst->allocatable.ephemeral_storage_bytes = strtoll(f[14], NULL, 10);
    snprintf(inst->allocatable.gpu_resource, sizeof(inst->allocatable.gpu_resource), "%s", f[15]);
    inst->allocatable.gpus = strtoll(f[16], NULL, 10);
    inst->client_token = f[17][0] ? strdup(f[17]) : NULL;
    return !f[17][0] || inst->client_token;
}

void sim_shared_enter(sim_state *s)
{
    if (s->shared_fd < 0)
        return;
    while (flock(s->shared_fd, LOCK_EX) < 0 && errno == EINTR)
        ;
    size_t len = 0;
    char *text = slurp(s->shared_fd, &len);
    if (!text) {
        sim_log(s, NS_LOG_ERROR, "cannot read the shared state file, keeping this process's instances", NULL);
        return;
    }
    sim_instance_store fresh;
    memset(&fresh, 0, sizeof(fresh));
    bool ok = true;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); ok && line; line = strtok_r(NULL, "\n", &save)) {
        if (fresh.n == fresh.cap) {
            size_t cap = fresh.cap ? 2 * fresh.cap : 64;
            sim_instance *items = realloc(fresh.items, cap * sizeof(*items));
            if (!(ok = items != NULL))
                break;
            fresh.items = items;
            fresh.cap = cap;
        }
        sim_instance *inst = &fresh.items[fresh.n];
        ok = parse_line(s, line, inst) && inst->id == fresh.n + 1;
        if (!ok) {
            free(inst->client_token);
            free(inst->names);
            break;
        }
        fresh.n++;
        ok = !inst->client_token || sim_token_index(&fresh, fresh.n - 1);
    }
    free(text);
    if (!ok) {
        sim_instances_free(&fresh);
        sim_log(s, NS_LOG_ERROR, "the shared state file is malformed, keeping this process's instances", NULL);
        return;
    }
    sim_instances_free(&s->instances);
    s->instances = fresh;
}

void sim_shared_leave(sim_state *s)
{
    if (s->shared_fd < 0)
        return;
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    for (size_t i = 0; out && i < s->instances.n; i++) {
        const sim_instance *inst = &s->instances.items[i];
        ns_instance full;
        const ns_instance *info = &full;
        sim_instance_info(inst, &full);
        fprintf(out, "%" PRIu64 "\t%d\t%" PRId64 "\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%" PRId64 "\t%" PRId64 "\t%" PRId64
                     "\t%" PRId64 "\t%s\t%" PRId64 "\t%s\n",
                inst->id, (int)info->state, info->launch_time_ms, info->provider_id, info->instance_type, info->zone,
                info->capacity_type, info->image_id, info->nodeclaim_name, info->nodepool_name, info->nodeclass_name,
                inst->allocatable.cpu_milli, inst->allocatable.memory_bytes, inst->allocatable.pods,
                inst->allocatable.ephemeral_storage_bytes, inst->allocatable.gpu_resource, inst->allocatable.gpus,
                inst->client_token ? inst->client_token : "");
    }
    bool ok = out && fclose(out) == 0;
    if (ok && (lseek(s->shared_fd, 0, SEEK_SET) < 0 || (len && write(s->shared_fd, buf, len) != (ssize_t)len) ||
               ftruncate(s->shared_fd, (off_t)len) < 0))
        ok = false;
    if (!ok)
        sim_log(s, NS_LOG_ERROR, "cannot write the shared state file", NULL);
    free(buf);
    flock(s->shared_fd, LOCK_UN);
}
