/* Shared set-up for the scheduler's Check suites: three sizes of one family in three zones. */
#ifndef SCHED_TEST_UTIL_H
#define SCHED_TEST_UTIL_H

#include <check.h>
#include <stdbool.h>
#include <string.h>

#include "sched_fixture.h"

/* small 2 cpu 4Gi, medium 4 cpu 8Gi, large 8 cpu 16Gi; 20 pods each; zone z-a is cheapest, then z-b, z-c; spot is
 * a third of on-demand. */
static inline void std_types(ns_itype_set *set)
{
    static const struct {
        const char *name;
        int64_t cpu, gib;
        double price;
    } t[] = {{"small", 2000, 4, 0.1}, {"medium", 4000, 8, 0.2}, {"large", 8000, 16, 0.4}};
    for (size_t i = 0; i < 3; i++) {
        char offers[256], labels[128];
        double p = t[i].price;
        snprintf(offers, sizeof(offers),
                 "z-a:spot:%.4f,z-a:on-demand:%.4f,z-b:spot:%.4f,z-b:on-demand:%.4f,z-c:spot:%.4f,z-c:on-demand:%.4f",
                 p / 3, p, p / 3 * 1.01, p * 1.01, p / 3 * 1.02, p * 1.02);
        snprintf(labels, sizeof(labels), "kubernetes.io/arch=amd64,kubernetes.io/os=linux,family=m");
        fx_type(set, t[i].name, t[i].cpu, t[i].gib * FX_GI, 20, labels, offers);
    }
}

/* One scheduling round's inputs and result: a cluster, the instance types its pools use, and what the scheduler
 * decided. */
typedef struct sched_env {
    ns_cluster *c;
    ns_itype_set set;
    ns_sched_result r;
} sched_env;

/* An empty cluster; with standard_types, std_types() as the pools' instance types. */
static inline void sched_env_init(sched_env *e, bool standard_types)
{
    memset(e, 0, sizeof(*e));
    e->c = ns_cluster_new();
    ck_assert_ptr_nonnull(e->c);
    if (standard_types)
        std_types(&e->set);
}

/* Runs the scheduler over the cluster with every pool using e->set. */
static inline void sched_env_run(sched_env *e)
{
    fx_run(e->c, &e->set, NULL, &e->r);
}

static inline void sched_env_free(sched_env *e)
{
    ns_sched_result_free(&e->r);
    ns_itype_set_free(&e->set);
    ns_cluster_free(e->c);
}

#endif
