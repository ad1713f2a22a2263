#include "disruption_fixture.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "manifest/loader.h"
#include "model/labels.h"
#include "test_kinds.h"

efx *dfx_new(const char *yaml, const ns_engine_config *cfg, bool spot_to_spot)
{
    efx *x = efx_new(yaml, NULL, cfg);
    ns_disruption_config dc = {.spot_to_spot = spot_to_spot};
    ck_assert_msg(ns_disruption_register(x->engine, &dc) == NS_OK, "registering disruption: %s", ns_error_message());
    return x;
}

void dfx_put(efx *x, const char *yaml)
{
    ns_cluster *tmp = test_cluster_new();
    ck_assert_ptr_nonnull(tmp);
    int rc = ns_manifest_load_string(tmp, "patch.yaml", yaml, strlen(yaml));
    ck_assert_msg(rc == NS_OK, "manifest: %s", ns_error_message());
    ck_assert_uint_eq(tmp->n_pods, 0);
    /* Classes first: a pool must find its class. The engine takes each object; the scratch cluster forgets it. */
    for (size_t i = 0; i < tmp->n_nodeclasses; i++) {
        ns_nodeclass_def *def = tmp->nodeclasses[i];
        tmp->nodeclasses[i] = NULL;
        ck_assert_msg(ns_engine_put_nodeclass(x->engine, def) == NS_OK, "put node class: %s", ns_error_message());
    }
    for (size_t i = 0; i < tmp->n_nodepools; i++) {
        ns_nodepool *np = tmp->nodepools[i];
        tmp->nodepools[i] = NULL;
        ck_assert_msg(ns_engine_put_nodepool(x->engine, np) == NS_OK, "put nodepool: %s", ns_error_message());
    }
    ns_cluster_free(tmp);
}

void dfx_scale(efx *x, const char *name, size_t replicas)
{
    int rc = ns_engine_scale_workload(x->engine, NULL, "Deployment", name, replicas);
    ck_assert_msg(rc == NS_OK, "scaling %s: %s", name, ns_error_message());
}

bool dfx_settled(efx *x)
{
    if (efx_pending(x) || x->cluster->n_nodeclaims == 0)
        return false;
    for (size_t i = 0; i < x->cluster->n_nodeclaims; i++) {
        const ns_nodeclaim *c = x->cluster->nodeclaims[i];
        if (!ns_claim_initialized(c) || ns_claim_deleting(c) ||
            ns_labels_get(&c->meta.annotations, NS_ANNOTATION_DISRUPTION_METHOD))
            return false;
    }
    return true;
}

void dfx_settle(efx *x, int64_t max_ms)
{
    ck_assert_msg(efx_run_until(x, dfx_settled, max_ms), "not settled within %llds: %zu claims, %zu pending",
                  (long long)(max_ms / 1000), x->cluster->n_nodeclaims, efx_pending(x));
}

size_t dfx_count_method(efx *x, ns_decision_kind kind, const char *method)
{
    size_t n, count = 0;
    const ns_decision *d = ns_engine_decisions(x->engine, &n);
    for (size_t i = 0; i < n; i++)
        count += d[i].kind == kind && strcmp(d[i].method, method) == 0;
    return count;
}

const ns_decision *dfx_nth_method(efx *x, ns_decision_kind kind, const char *method, size_t nth)
{
    size_t n;
    const ns_decision *d = ns_engine_decisions(x->engine, &n);
    for (size_t i = 0; i < n; i++)
        if (d[i].kind == kind && strcmp(d[i].method, method) == 0 && nth-- == 0)
            return &d[i];
    ck_abort_msg("no decision %s with method %s number %zu", ns_decision_kind_message(kind), method, nth);
    return NULL;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void dfx_claim_names(efx *x, char *buf, size_t len)
{
    size_t n = x->cluster->n_nodeclaims;
    const char **names = calloc(n ? n : 1, sizeof(*names));
    ck_assert_ptr_nonnull(names);
    for (size_t i = 0; i < n; i++)
        names[i] = x->cluster->nodeclaims[i]->meta.name;
    qsort(names, n, sizeof(*names), cmp_str);
    buf[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        size_t used = strlen(buf);
        snprintf(buf + used, len - used, "%s%s", i ? "," : "", names[i]);
    }
    free(names);
}

/* Splits a comma-separated list into sorted items (in place in buf). */
static size_t split_sorted(char *buf, char **items, size_t max)
{
    size_t n = 0;
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t && n < max; t = strtok_r(NULL, ",", &save))
        items[n++] = t;
    qsort(items, n, sizeof(*items), cmp_str);
    return n;
}

bool dfx_same_names(const char *list, const char *set)
{
    char a[2048], b[2048], *ia[64], *ib[64];
    snprintf(a, sizeof(a), "%s", list);
    snprintf(b, sizeof(b), "%s", set);
    size_t na = split_sorted(a, ia, 64), nb = split_sorted(b, ib, 64);
    if (na != nb)
        return false;
    for (size_t i = 0; i < na; i++)
        if (strcmp(ia[i], ib[i]) != 0)
            return false;
    return true;
}

const char *dfx_label(const ns_nodeclaim *c, const char *key)
{
    const char *v = ns_labels_get(&c->meta.labels, key);
    ck_assert_msg(v != NULL, "nodeclaim %s has no label %s", c->meta.name, key);
    return v;
}

bool dfx_tainted(const ns_node *n)
{
    for (size_t i = 0; i < n->n_taints; i++)
        if (strcmp(n->taints[i].key, NS_TAINT_DISRUPTED_KEY) == 0 && strcmp(n->taints[i].effect, "NoSchedule") == 0)
            return true;
    return false;
}
