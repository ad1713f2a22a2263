#include "model/intern.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "model/hash.h"

/* Open addressing, kept at most half full. */
static struct {
    pthread_mutex_t lock;
    char **slots;
    size_t cap, n;
} table = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0};

static char **slot_for(char **slots, size_t cap, const char *s)
{
    size_t at = (size_t)ns_hash_str(NS_HASH_SEED, s) & (cap - 1);
    while (slots[at] && strcmp(slots[at], s) != 0)
        at = (at + 1) & (cap - 1);
    return &slots[at];
}

static int grow(void)
{
    size_t cap = table.cap ? table.cap * 2 : 64;
    char **slots = calloc(cap, sizeof(*slots));
    if (!slots)
        return -1;
    for (size_t i = 0; i < table.cap; i++)
        if (table.slots[i])
            *slot_for(slots, cap, table.slots[i]) = table.slots[i];
    free(table.slots);
    table.slots = slots;
    table.cap = cap;
    return 0;
}

const char *ns_intern(const char *s)
{
    if (!s)
        return NULL;
    const char *out = NULL;
    pthread_mutex_lock(&table.lock);
    if (2 * (table.n + 1) > table.cap && grow() < 0)
        goto unlock;
    char **slot = slot_for(table.slots, table.cap, s);
    if (!*slot && (*slot = strdup(s)) != NULL)
        table.n++;
    out = *slot;
unlock:
    pthread_mutex_unlock(&table.lock);
    if (!out)
        NS_FAIL(NS_ERR_INTERNAL, "out of memory interning \"%.64s\"", s);
    return out;
}
