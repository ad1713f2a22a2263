#include "sched/sched_skip.h"

#include <stdlib.h>

#include "errors/ns_error.h"

int sched_skip_reserve(sched_skip *k, size_t n)
{
    if (n <= k->cap && k->next)
        return NS_OK;
    size_t cap = k->cap ? k->cap : 64;
    while (cap < n)
        cap *= 2;
    if (cap >= UINT32_MAX)
        return NS_FAIL(NS_ERR_INTERNAL, "scheduling: %zu node claims is more than the claim index holds", n);
    uint32_t *next = realloc(k->next, (cap + 1) * sizeof(*next));
    if (!next)
        return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory indexing %zu node claims", cap);
    for (size_t i = k->next ? k->cap : 0; i <= cap; i++)
        next[i] = (uint32_t)i;
    k->next = next;
    k->cap = cap;
    return NS_OK;
}

void sched_skip_block(sched_skip *k, size_t c)
{
    if (c < k->cap && k->next[c] == c)
        k->next[c] = (uint32_t)(c + 1);
}

size_t sched_skip_find(sched_skip *k, size_t c)
{
    if (!k->next)
        return c;
    while (c < k->cap && k->next[c] != c) {
        k->next[c] = k->next[k->next[c]];
        c = k->next[c];
    }
    return c;
}

void sched_skip_free(sched_skip *k)
{
    if (!k)
        return;
    free(k->next);
    k->next = NULL;
    k->cap = 0;
}
