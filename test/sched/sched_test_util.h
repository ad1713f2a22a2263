/* Shared set-up for the scheduler's Check suites: three sizes of one family in three zones. */
#ifndef SCHED_TEST_UTIL_H
#define SCHED_TEST_UTIL_H

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

#endif
