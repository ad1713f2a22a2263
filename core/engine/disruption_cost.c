/* Karpenter's disruption cost (see disruption_cost.h). */
#include "engine/disruption_cost.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

double ns_disruption_eviction_cost(const ns_pod *pod)
{
    double cost = 1.0;
    const char *s = ns_labels_get(&pod->meta.annotations, NS_ANNOTATION_POD_DELETION_COST);
    if (s && *s) {
        char *end = NULL;
        errno = 0;
        double v = strtod(s, &end);
        if (errno == 0 && end && *end == '\0' && isfinite(v))
            cost += v / 134217728.0; /* 2^27: the extreme deletion costs weigh about 15 pods */
    }
    if (pod->has_priority)
        cost += (double)pod->priority / 33554432.0; /* 2^25: a priority of 1e9 makes a pod weigh ~32 */
    if (cost < -10.0)
        cost = -10.0;
    if (cost > 10.0)
        cost = 10.0;
    return cost;
}

double ns_disruption_rescheduling_cost(const ns_pod *const *pods, size_t n)
{
    double cost = 0.0;
    for (size_t i = 0; i < n; i++)
        cost += ns_disruption_eviction_cost(pods[i]);
    return cost;
}

double ns_disruption_lifetime_remaining(int64_t now_ms, int64_t created_ms, int64_t expire_after_ms)
{
    if (expire_after_ms <= 0)
        return 1.0;
    double remaining = (double)(expire_after_ms - (now_ms - created_ms)) / (double)expire_after_ms;
    return remaining < 0.0 ? 0.0 : remaining > 1.0 ? 1.0 : remaining;
}

static int rank_cmp(const void *a, const void *b)
{
    const ns_disruption_rank *x = a, *y = b;
    if (x->cost != y->cost)
        return x->cost < y->cost ? -1 : 1;
    int c = strcmp(x->name ? x->name : "", y->name ? y->name : "");
    if (c)
        return c;
    return x->index < y->index ? -1 : x->index > y->index;
}

void ns_disruption_rank_sort(ns_disruption_rank *ranks, size_t n)
{
    if (n > 1)
        qsort(ranks, n, sizeof(*ranks), rank_cmp);
}
