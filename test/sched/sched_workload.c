#include "sched_workload.h"

#include <stdio.h>
#include <stdlib.h>

#include "model/labels.h"

typedef struct wl_rng {
    uint64_t state;
} wl_rng;

static uint32_t rnd(wl_rng *r, uint32_t n)
{
    r->state = r->state * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
    return (uint32_t)((r->state >> 33) % n);
}

void wl_types(ns_itype_set *set)
{
    for (int i = 1; i <= 400; i++) {
        char name[32], offers[512];
        double od = 0.04 * i + 0.01;
        snprintf(name, sizeof(name), "fake-it-%d", i);
        snprintf(offers, sizeof(offers),
                 "test-zone-1:spot:%.5f,test-zone-2:spot:%.5f,test-zone-1:on-demand:%.5f,"
                 "test-zone-2:on-demand:%.5f,test-zone-3:on-demand:%.5f",
                 od * 0.4, od * 0.41, od, od, od);
        fx_type(set, name, 1000LL * i, 2LL * i * FX_GI, 10LL * i, "kubernetes.io/arch=amd64,kubernetes.io/os=linux",
                offers);
    }
}

static const char *const label_values[] = {"a", "b", "c", "d", "e", "f", "g"};

static void random_pod(ns_cluster *c, wl_rng *r, size_t i, int kind)
{
    static const int64_t cpu[] = {100, 250, 500, 1000, 1500};
    static const int64_t mem[] = {100, 256, 512, 1024, 2048, 4096};
    char name[32], labels[64], sel[64];
    snprintf(name, sizeof(name), "pod-%zu", i);
    int64_t m = mem[rnd(r, 6)] * FX_MI, cp = cpu[rnd(r, 5)];
    if (kind == 3)
        snprintf(labels, sizeof(labels), "my-affinity=%s", label_values[rnd(r, 7)]);
    else if (kind == 4)
        snprintf(labels, sizeof(labels), "app=nginx");
    else
        snprintf(labels, sizeof(labels), "my-label=%s", label_values[rnd(r, 7)]);
    ns_pod *p = fx_pod(c, name, cp, m, labels);
    switch (kind) {
    case 1:
    case 2:
        snprintf(sel, sizeof(sel), "my-label=%s", label_values[rnd(r, 7)]);
        fx_pod_spread(p, kind == 1 ? NS_LABEL_ZONE : NS_LABEL_HOSTNAME, 1, false, sel);
        break;
    case 3:
        fx_pod_affinity(p, NS_LABEL_ZONE, labels, false, 0);
        break;
    case 4:
        fx_pod_affinity(p, NS_LABEL_HOSTNAME, "app=nginx", true, 0);
        break;
    default:
        break;
    }
}

ns_cluster *wl_cluster_kinds(size_t n_pods, uint64_t seed, unsigned kinds)
{
    ns_cluster *c = ns_cluster_new();
    if (!c)
        abort();
    wl_rng r = {seed};
    fx_pool(c, "default", 0, "");
    for (size_t i = 0; i < n_pods; i++) {
        int kind = (int)(i * 5 / n_pods);
        if ((kinds >> kind) & 1u)
            random_pod(c, &r, i, kind);
    }
    return c;
}

ns_cluster *wl_cluster(size_t n_pods, uint64_t seed)
{
    return wl_cluster_kinds(n_pods, seed, 0x1f);
}
