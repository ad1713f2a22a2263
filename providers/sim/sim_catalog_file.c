/*
 * Catalog and price files (options `catalog` and `prices`), read with the host's JSON upcalls.
 *
 * Catalog: a JSON array in the format of aws-instance-types.json (name, vcpu, memory_mib, arch required; family,
 * category, generation, size, hypervisor, cpu_manufacturer, gpu_*, max_pods_or_enis or max_enis/ipv4_per_eni
 * optional; offerings and labels as sim_catalog_offers.c reads them). Prices: a JSON object {"instance-type": on-demand
 * price per hour}.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "sim_catalog.h"
#include "sim_state.h"
#include "prov_log.h"

#define SIM_MAX_FILE_BYTES (64L * 1024 * 1024)
/* Kubelet's default when a type's network limits are unknown. */
#define SIM_DEFAULT_MAX_PODS 110

/* Where a text the host's parser refused stops being JSON, as a 1-based line and column (in bytes). The host's
 * json_parse says only that the text is not JSON; cJSON's parse end says where it stopped reading. */
static void sim_json_error_position(const char *text, size_t len, size_t *line, size_t *column)
{
    const char *end = NULL;
    cJSON_Delete(cJSON_ParseWithLengthOpts(text, len, &end, false));
    size_t offset = end && end >= text && end <= text + len ? (size_t)(end - text) : len;
    *line = 1;
    *column = 1;
    for (size_t i = 0; i < offset; i++) {
        if (text[i] == '\n') {
            (*line)++;
            *column = 1;
        } else {
            (*column)++;
        }
    }
}

/* The 1-based line on which each element of the top-level array of a JSON text starts (0 past the end), so an
 * entry's error can name its line; *lines is the caller's (free). Strings are skipped with their escapes. */
static size_t *sim_entry_lines(const char *text, size_t n)
{
    size_t *lines = calloc(n ? n : 1, sizeof(*lines));
    size_t line = 1, found = 0;
    int depth = 0;
    bool in_string = false, want_value = false;
    for (const char *p = text; lines && *p && found < n; p++) {
        if (in_string) {
            if (*p == '\\' && p[1])
                p++;
            else if (*p == '"')
                in_string = false;
            continue;
        }
        if (*p == '\n')
            line++;
        if (strchr(" \t\r\n", *p))
            continue;
        if (depth == 1 && want_value && *p != ']') {
            lines[found++] = line;
            want_value = false;
        }
        if (*p == '"')
            in_string = true;
        else if (*p == '[' || *p == '{')
            want_value = ++depth == 1;
        else if (*p == ']' || *p == '}')
            depth--;
        else if (*p == ',' && depth == 1)
            want_value = true;
    }
    return lines;
}

/* Parses a whole file; *out is the caller's (host->json_free), and with entry_lines, the line of each top-level array
 * element (sim_entry_lines). `what` names the option for messages. */
static int sim_read_json(sim_state *s, const char *what, const char *path, ns_json **out, size_t **entry_lines)
{
    *out = NULL;
    char *text = NULL;
    int rc = NS_OK;
    FILE *f = fopen(path, "rb");
    if (!f)
        return SIM_FAIL(s, NS_ERR_INVALID_CONFIG, "%s file %s: cannot open: %s", what, path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        rc = SIM_FAIL(s, NS_ERR_INVALID_CONFIG, "%s file %s: is a directory, not a file", what, path);
        goto done;
    }
    long size = -1;
    if (fseek(f, 0, SEEK_END) == 0)
        size = ftell(f);
    if (size < 0 || fseek(f, 0, SEEK_SET) != 0) {
        rc = SIM_FAIL(s, NS_ERR_INVALID_CONFIG, "%s file %s: cannot read: %s", what, path, strerror(errno));
        goto done;
    }
    if (size > SIM_MAX_FILE_BYTES) {
        rc = SIM_FAIL(s, NS_ERR_INVALID_CONFIG, "%s file %s: %ld bytes is more than the %ld allowed", what, path,
                      size, SIM_MAX_FILE_BYTES);
        goto done;
    }
    text = malloc((size_t)size + 1);
    if (!text) {
        rc = SIM_FAIL(s, NS_ERR_INTERNAL, "%s file %s: out of memory for %ld bytes", what, path, size);
        goto done;
    }
    if (fread(text, 1, (size_t)size, f) != (size_t)size) {
        rc = SIM_FAIL(s, NS_ERR_INVALID_CONFIG, "%s file %s: short read", what, path);
        goto done;
    }
    text[size] = '\0';
    *out = s->host->json_parse(text, (size_t)size);
    if (!*out) {
        size_t line, column;
        sim_json_error_position(text, (size_t)size, &line, &column);
        rc = SIM_FAIL(s, NS_ERR_INVALID_CONFIG, "%s file %s: not valid JSON: syntax error at line %zu, column %zu", what,
                      path, line, column);
    } else if (entry_lines && !(*entry_lines = sim_entry_lines(text, s->host->json_size(*out)))) {
        rc = SIM_FAIL(s, NS_ERR_INTERNAL, "%s file %s: out of memory", what, path);
    }
done:
    free(text);
    fclose(f);
    return rc;
}

/* Where a catalog entry's error is reported. */
typedef struct sim_entry_ctx {
    sim_state *s;
    const char *path;
    size_t index, line;
    const ns_json *entry;
    const char *name;
} sim_entry_ctx;

#define SIM_ENTRY_FAIL(e, fmt, ...)                                                                                    \
    SIM_FAIL((e)->s, NS_ERR_INVALID_CONFIG, "catalog file %s: line %zu: entry %zu (%s): " fmt, (e)->path, (e)->line, \
             (e)->index, (e)->name ? (e)->name : "unnamed", __VA_ARGS__)

/* A string field into buf; absent or null leaves buf as given unless required. */
static int sim_entry_string(const sim_entry_ctx *e, const char *key, bool required, char *buf, size_t len)
{
    const ns_host *h = e->s->host;
    const ns_json *v = h->json_get(e->entry, key);
    ns_json_type type = v ? h->json_type(v) : NS_JSON_NULL;
    if (type == NS_JSON_NULL && !required)
        return NS_OK;
    if (type != NS_JSON_STRING)
        return SIM_ENTRY_FAIL(e, "field %s must be a string", key);
    if (!sim_copy_str(buf, len, h->json_string(v)))
        return SIM_ENTRY_FAIL(e, "field %s is longer than %zu characters", key, len - 1);
    return NS_OK;
}

/* A whole number >= min; absent or null leaves *out unless required. */
static int sim_entry_int(const sim_entry_ctx *e, const char *key, bool required, int64_t min, int64_t *out)
{
    const ns_host *h = e->s->host;
    const ns_json *v = h->json_get(e->entry, key);
    ns_json_type type = v ? h->json_type(v) : NS_JSON_NULL;
    if (type == NS_JSON_NULL && !required)
        return NS_OK;
    double d = type == NS_JSON_NUMBER ? h->json_number(v) : -1.0;
    if (type != NS_JSON_NUMBER || d < (double)min || d > 1e15 || d != (double)(int64_t)d)
        return SIM_ENTRY_FAIL(e, "field %s must be a whole number of at least %lld", key, (long long)min);
    *out = (int64_t)d;
    return NS_OK;
}

/* Fields the file may omit, derived from the name the way EC2 spells it: "m7g.xlarge" is family m7g, category m,
 * generation 7, size xlarge. */
static void sim_entry_defaults(sim_itype *t)
{
    const char *dot = strchr(t->name, '.');
    size_t family_len = dot ? (size_t)(dot - t->name) : strlen(t->name);
    snprintf(t->family, sizeof(t->family), "%.*s", (int)(family_len < sizeof(t->family) ? family_len : 0),
             t->name);
    snprintf(t->size, sizeof(t->size), "%s", dot && strlen(dot + 1) < sizeof(t->size) ? dot + 1 : "");
    size_t letters = strcspn(t->family, "0123456789");
    snprintf(t->category, sizeof(t->category), "%.*s", (int)letters, t->family);
    t->generation = strtol(t->family + letters, NULL, 10);
    snprintf(t->hypervisor, sizeof(t->hypervisor), "nitro");
    t->max_pods = SIM_DEFAULT_MAX_PODS;
}

static int sim_entry_parse(sim_entry_ctx *e, sim_itype *t)
{
    const ns_host *h = e->s->host;
    memset(t, 0, sizeof(*t));
    t->od_price = -1;
    if (h->json_type(e->entry) != NS_JSON_OBJECT)
        return SIM_ENTRY_FAIL(e, "%s", "must be an object");
    int rc = sim_entry_string(e, "name", true, t->name, sizeof(t->name));
    if (rc != NS_OK)
        return rc;
    e->name = t->name;
    sim_entry_defaults(t);

    int64_t enis = 0, ips = 0;
    if ((rc = sim_entry_int(e, "vcpu", true, 1, &t->vcpu)) != NS_OK ||
        (rc = sim_entry_int(e, "memory_mib", true, 1, &t->memory_mib)) != NS_OK ||
        (rc = sim_entry_string(e, "arch", true, t->arch, sizeof(t->arch))) != NS_OK ||
        (rc = sim_entry_string(e, "family", false, t->family, sizeof(t->family))) != NS_OK ||
        (rc = sim_entry_string(e, "category", false, t->category, sizeof(t->category))) != NS_OK ||
        (rc = sim_entry_int(e, "generation", false, 0, &t->generation)) != NS_OK ||
        (rc = sim_entry_string(e, "size", false, t->size, sizeof(t->size))) != NS_OK ||
        (rc = sim_entry_string(e, "hypervisor", false, t->hypervisor, sizeof(t->hypervisor))) != NS_OK ||
        (rc = sim_entry_string(e, "cpu_manufacturer", false, t->cpu_manufacturer, sizeof(t->cpu_manufacturer))) !=
            NS_OK ||
        (rc = sim_entry_int(e, "gpu_count", false, 0, &t->gpu_count)) != NS_OK ||
        (rc = sim_entry_string(e, "gpu_name", false, t->gpu_name, sizeof(t->gpu_name))) != NS_OK ||
        (rc = sim_entry_string(e, "gpu_manufacturer", false, t->gpu_manufacturer, sizeof(t->gpu_manufacturer))) !=
            NS_OK ||
        (rc = sim_entry_int(e, "gpu_memory_mib", false, 0, &t->gpu_memory_mib)) != NS_OK ||
        (rc = sim_entry_int(e, "max_enis", false, 1, &enis)) != NS_OK ||
        (rc = sim_entry_int(e, "ipv4_per_eni", false, 1, &ips)) != NS_OK)
        return rc;
    if (enis > 0 && ips > 0)
        t->max_pods = sim_eni_max_pods(enis, ips);
    if ((rc = sim_entry_int(e, "max_pods_or_enis", false, 1, &t->max_pods)) != NS_OK)
        return rc;
    if (strcmp(t->arch, "amd64") != 0 && strcmp(t->arch, "arm64") != 0)
        return SIM_ENTRY_FAIL(e, "field arch is \"%s\"; expected amd64 or arm64", t->arch);
    if (t->gpu_count > 0 && (!t->gpu_name[0] || !t->gpu_manufacturer[0]))
        return SIM_ENTRY_FAIL(e, "gpu_count is %lld but gpu_name or gpu_manufacturer is missing",
                              (long long)t->gpu_count);
    /* EC2 runs Windows on its x86 types. */
    t->windows_capable = strcmp(t->arch, "amd64") == 0;
    return sim_entry_extras(e->s, e->path, e->line, e->index, e->entry, t);
}

int sim_catalog_load_file(sim_state *s, const char *path, sim_catalog *out)
{
    memset(out, 0, sizeof(*out));
    ns_json *root = NULL;
    size_t *lines = NULL;
    int rc = sim_read_json(s, "catalog", path, &root, &lines);
    if (rc != NS_OK)
        return rc;
    const ns_host *h = s->host;
    sim_catalog cat = {NULL, 0};
    size_t n = h->json_size(root);
    if (h->json_type(root) != NS_JSON_ARRAY) {
        rc = SIM_FAIL(s, NS_ERR_INVALID_CONFIG, "catalog file %s: the top level must be an array of instance types",
                      path);
        goto done;
    }
    cat.types = calloc(n ? n : 1, sizeof(sim_itype));
    if (!cat.types) {
        rc = SIM_FAIL(s, NS_ERR_INTERNAL, "catalog file %s: out of memory for %zu types", path, n);
        goto done;
    }
    for (size_t i = 0; i < n && rc == NS_OK; i++) {
        sim_entry_ctx e = {s, path, i, lines[i], h->json_at(root, i), NULL};
        rc = sim_entry_parse(&e, &cat.types[cat.n]);
        if (rc == NS_OK)
            cat.n++;
    }
    if (rc == NS_OK) {
        char source[300];
        snprintf(source, sizeof(source), "catalog file %s", path);
        rc = sim_catalog_finish(s, &cat, source);
    }
done:
    h->json_free(root);
    free(lines);
    if (rc != NS_OK)
        sim_catalog_free(&cat);
    else
        *out = cat;
    return rc;
}

int sim_catalog_apply_prices(sim_state *s, const char *path, sim_catalog *cat)
{
    ns_json *root = NULL;
    int rc = sim_read_json(s, "prices", path, &root, NULL);
    if (rc != NS_OK)
        return rc;
    const ns_host *h = s->host;
    if (h->json_type(root) != NS_JSON_OBJECT)
        rc = SIM_FAIL(s, NS_ERR_INVALID_CONFIG, "prices file %s: the top level must be an object of "
                      "\"instance-type\": price", path);
    for (size_t i = 0; rc == NS_OK && i < h->json_size(root); i++) {
        const ns_json *member = h->json_at(root, i);
        if (h->json_type(member) != NS_JSON_NUMBER || h->json_number(member) < 0)
            rc = SIM_FAIL(s, NS_ERR_INVALID_CONFIG, "prices file %s: the price of %s must be a non-negative number",
                          path, h->json_key(member));
    }
    for (size_t i = 0; rc == NS_OK && i < cat->n; i++) {
        const ns_json *price = h->json_get(root, cat->types[i].name);
        if (price)
            cat->types[i].od_price = h->json_number(price);
    }
    h->json_free(root);
    return rc;
}

int sim_catalog_fill_missing_prices(sim_state *s, sim_catalog *cat, const char *path)
{
    sim_catalog builtin;
    int rc = sim_catalog_load_builtin(s, &builtin);
    if (rc != NS_OK)
        return rc;
    size_t kept = 0, dropped = 0;
    for (size_t i = 0; i < cat->n; i++) {
        sim_itype *t = &cat->types[i];
        const sim_itype *known = t->od_price < 0 ? sim_catalog_find(&builtin, t->name) : NULL;
        if (known)
            t->od_price = known->od_price;
        /* A type whose offerings are declared has their prices and needs no other. */
        if (t->od_price < 0 && !(t->file && t->file->n_offers)) {
            free(t->file);
            dropped++;
            continue;
        }
        cat->types[kept++] = *t;
    }
    cat->n = kept;
    sim_catalog_free(&builtin);
    if (dropped > 0) {
        ns_log_field fields[] = {prov_log_str("catalog", path), prov_log_int("count", (int64_t)dropped)};
        prov_log(s->host, s->ctx, NS_LOG_WARN, "dropped instance types without an on-demand price", fields, 2);
    }
    if (kept == 0)
        return SIM_FAIL(s, NS_ERR_INVALID_CONFIG, "catalog file %s: no instance type of the catalog file has a price "
                        "(in option prices or the built-in catalog)", path);
    return NS_OK;
}
