/* Karpenter's metric families and their exposition text. */
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/metrics.h"
#include "errors/ns_error.h"

typedef enum family_type { COUNTER, GAUGE } family_type;

typedef struct family {
    const char *name;
    family_type type;
    const char *help;
} family;

/* Karpenter's names and help texts (core:pkg/metrics, the controllers' metrics.go files). */
static const family families[] = {
    {"karpenter_build_info", GAUGE, "A metric with a constant '1' value labeled by version from which karpenter was built."},
    {"karpenter_nodeclaims_created_total", COUNTER, "Number of nodeclaims created in total by Karpenter. Labeled by reason the nodeclaim was created and the owning nodepool."},
    {"karpenter_nodeclaims_terminated_total", COUNTER, "Number of nodeclaims terminated in total by Karpenter. Labeled by the owning nodepool."},
    {"karpenter_nodeclaims_disrupted_total", COUNTER, "Number of nodeclaims disrupted in total by Karpenter. Labeled by reason the nodeclaim was disrupted and the owning nodepool."},
    {"karpenter_nodes_created_total", COUNTER, "Number of nodes created in total by Karpenter. Labeled by owning nodepool."},
    {"karpenter_nodes_terminated_total", COUNTER, "Number of nodes terminated in total by Karpenter. Labeled by owning nodepool."},
    {"karpenter_pods_eviction_requests_total", COUNTER, "The number of pod eviction requests sent by Karpenter, labeled by the HTTP status code of the response."},
    {"karpenter_nodepools_usage", GAUGE, "The amount of resources that have been provisioned for a nodepool. Labeled by nodepool name and resource type."},
    {"karpenter_nodepools_limit", GAUGE, "Limits specified on the nodepool that restrict the quantity of resources provisioned. Labeled by nodepool name and resource type."},
    {"karpenter_nodepools_allowed_disruptions", GAUGE, "The number of nodes for a given NodePool that can be concurrently disrupting at a point in time. Labeled by NodePool. Note that allowed disruptions can change very rapidly, as new nodes may be created and others may be deleted at any point."},
    {"karpenter_cluster_state_node_count", GAUGE, "Current count of nodes in cluster state"},
    /* nodesmith's own: commitments (docs/cost.md), labeled by commitment name and kind */
    {"nodesmith_commitment_amount", GAUGE, "What a commitment covers: instances (kind instances) or dollars per hour (kind spend)."},
    {"nodesmith_commitment_used", GAUGE, "What of a commitment the running nodes use, in the unit of its amount."},
    {"nodesmith_commitment_utilisation", GAUGE, "Used over amount of a commitment, from 0 to 1."},
    {"nodesmith_commitment_nodes", GAUGE, "Nodes a commitment covers."},
    {"nodesmith_commitment_spilled_nodes", GAUGE, "Nodes of a commitment's scope that found it used up and run on-demand."},
    {"nodesmith_commitment_spilled_per_hour", GAUGE, "On-demand dollars per hour of a commitment's scope beyond what it covers."},
    {"karpenter_cluster_state_synced", GAUGE, "Returns 1 if cluster state is synced and 0 otherwise. Synced checks that nodeclaims and nodes that are stored in the APIServer have the same representation as Karpenter's cluster state"},
};
#define N_FAMILIES (sizeof(families) / sizeof(families[0]))

typedef struct sample {
    char *labels;
    double value;
} sample;

typedef struct series {
    sample *s;
    size_t n, cap;
} series;

struct ns_metrics {
    pthread_mutex_t mu;
    series f[N_FAMILIES];
};

ns_metrics *ns_metrics_new(void)
{
    ns_metrics *m = calloc(1, sizeof(*m));
    if (!m) {
        NS_FAIL(NS_ERR_INTERNAL, "out of memory building the metrics registry");
        return NULL;
    }
    pthread_mutex_init(&m->mu, NULL);
    return m;
}

void ns_metrics_free(ns_metrics *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < N_FAMILIES; i++)
        ns_metrics_reset(m, families[i].name);
    for (size_t i = 0; i < N_FAMILIES; i++)
        free(m->f[i].s);
    pthread_mutex_destroy(&m->mu);
    free(m);
}

static int family_of(const char *name, family_type type)
{
    for (size_t i = 0; i < N_FAMILIES; i++)
        if (strcmp(families[i].name, name) == 0)
            return families[i].type == type ? (int)i : -1;
    return -1;
}

static int update(ns_metrics *m, const char *name, family_type type, const char *labels, double v, bool add)
{
    int f = family_of(name, type);
    if (f < 0)
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "metrics: %s is not a known %s", name,
                       type == COUNTER ? "counter" : "gauge");
    int rc = 0;
    pthread_mutex_lock(&m->mu);
    series *s = &m->f[f];
    size_t i = 0;
    while (i < s->n && strcmp(s->s[i].labels, labels) != 0)
        i++;
    if (i == s->n) {
        char *copy = strdup(labels);
        if (s->n == s->cap) {
            size_t cap = s->cap ? 2 * s->cap : 8;
            sample *grown = copy ? realloc(s->s, cap * sizeof(*grown)) : NULL;
            if (grown) {
                s->s = grown;
                s->cap = cap;
            }
        }
        if (!copy || s->n == s->cap) {
            free(copy);
            rc = NS_FAIL(NS_ERR_INTERNAL, "out of memory recording metric %s", name);
        } else
            s->s[s->n++] = (sample){copy, 0};
    }
    if (rc == 0)
        s->s[i].value = add ? s->s[i].value + v : v;
    pthread_mutex_unlock(&m->mu);
    return rc;
}

int ns_metrics_add(ns_metrics *m, const char *name, const char *labels, double delta)
{
    return update(m, name, COUNTER, labels, delta, true);
}

int ns_metrics_set(ns_metrics *m, const char *name, const char *labels, double value)
{
    return update(m, name, GAUGE, labels, value, false);
}

void ns_metrics_reset(ns_metrics *m, const char *name)
{
    pthread_mutex_lock(&m->mu);
    for (size_t i = 0; i < N_FAMILIES; i++) {
        if (strcmp(families[i].name, name) != 0)
            continue;
        for (size_t k = 0; k < m->f[i].n; k++)
            free(m->f[i].s[k].labels);
        m->f[i].n = 0;
    }
    pthread_mutex_unlock(&m->mu);
}

char *ns_metrics_labels(char *buf, size_t len, size_t n, const char *const *kv)
{
    size_t off = 0;
    if (len)
        buf[0] = '\0';
    for (size_t i = 0; i < n && off + 1 < len; i++) {
        off += (size_t)snprintf(buf + off, len - off, "%s%s=\"", i ? "," : "", kv[2 * i]);
        for (const char *p = kv[2 * i + 1] ? kv[2 * i + 1] : ""; *p && off + 3 < len; p++) {
            if (*p == '\\' || *p == '"' || *p == '\n') {
                buf[off++] = '\\';
                buf[off++] = *p == '\n' ? 'n' : *p;
            } else
                buf[off++] = *p;
        }
        if (off + 1 < len)
            buf[off++] = '"';
        buf[off < len ? off : len - 1] = '\0';
    }
    return buf;
}

typedef struct text {
    char *p;
    size_t n, cap;
    bool failed;
} text;

static void put(text *t, const char *fmt, ...) NS_PRINTF(2, 3);

static void put(text *t, const char *fmt, ...)
{
    for (int tries = 0; tries < 2 && !t->failed; tries++) {
        va_list ap;
        va_start(ap, fmt);
        int w = vsnprintf(t->p + t->n, t->cap - t->n, fmt, ap);
        va_end(ap);
        if (w < 0) {
            t->failed = true;
            return;
        }
        if ((size_t)w < t->cap - t->n) {
            t->n += (size_t)w;
            return;
        }
        size_t cap = 2 * t->cap + (size_t)w + 1;
        char *grown = realloc(t->p, cap);
        if (!grown)
            t->failed = true;
        else {
            t->p = grown;
            t->cap = cap;
        }
    }
}

char *ns_metrics_render(ns_metrics *m)
{
    text t = {malloc(4096), 0, 4096, false};
    if (!t.p)
        return NULL;
    t.p[0] = '\0';
    pthread_mutex_lock(&m->mu);
    for (size_t i = 0; i < N_FAMILIES; i++) {
        if (!m->f[i].n)
            continue;
        put(&t, "# HELP %s %s\n# TYPE %s %s\n", families[i].name, families[i].help, families[i].name,
            families[i].type == COUNTER ? "counter" : "gauge");
        for (size_t k = 0; k < m->f[i].n; k++)
            put(&t, "%s%s%s%s %.17g\n", families[i].name, *m->f[i].s[k].labels ? "{" : "", m->f[i].s[k].labels,
                *m->f[i].s[k].labels ? "}" : "", m->f[i].s[k].value);
    }
    pthread_mutex_unlock(&m->mu);
    if (t.failed) {
        free(t.p);
        return NULL;
    }
    return t.p;
}
