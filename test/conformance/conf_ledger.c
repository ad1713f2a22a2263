/*
 * The ledger: every provider ID the suite launched, in memory shared by the runner and the children Check forks,
 * so the last suite can terminate what a failed test left behind (a real cloud bills for it). Slots are claimed
 * with an atomic counter and published with an atomic state, which works across processes and threads alike.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "conf.h"
#include "errors/ns_error.h"

#define CONF_LEDGER_MAX 4096

enum { SLOT_CLAIMED = 0, SLOT_LIVE = 1, SLOT_TERMINATED = 2 };

typedef struct conf_slot {
    atomic_int state;
    char provider_id[NS_PROVIDER_ID_MAX];
} conf_slot;

typedef struct conf_ledger {
    atomic_size_t n;
    atomic_uint skipped;
    atomic_uint token_seq;
    conf_slot slots[CONF_LEDGER_MAX];
} conf_ledger;

static conf_ledger *ledger;

int conf_ledger_init(void)
{
    void *mem = mmap(NULL, sizeof(conf_ledger), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

    if (mem == MAP_FAILED)
        return NS_FAIL(NS_ERR_INTERNAL, "mapping the %zu-byte shared ledger failed", sizeof(conf_ledger));
    ledger = mem;
    return NS_OK;
}

static size_t ledger_used(void)
{
    size_t n = atomic_load(&ledger->n);

    return n < CONF_LEDGER_MAX ? n : CONF_LEDGER_MAX;
}

size_t conf_ledger_mark(void)
{
    return ledger_used();
}

int conf_ledger_record(const char *provider_id, size_t since)
{
    size_t i;

    /* Concurrent launches with one token legitimately return one ID many times: record it once per test. (Only
     * within the test: a provider reloaded for each test, like the sim, may hand out an earlier test's IDs again.) */
    for (i = since; i < ledger_used(); i++)
        if (atomic_load(&ledger->slots[i].state) == SLOT_LIVE &&
            strcmp(ledger->slots[i].provider_id, provider_id) == 0)
            return NS_OK;
    i = atomic_fetch_add(&ledger->n, 1);
    if (i >= CONF_LEDGER_MAX)
        return NS_FAIL(NS_ERR_INTERNAL, "ledger full: the suite launched more than %d instances", CONF_LEDGER_MAX);
    snprintf(ledger->slots[i].provider_id, sizeof(ledger->slots[i].provider_id), "%s", provider_id);
    atomic_store(&ledger->slots[i].state, SLOT_LIVE);
    return NS_OK;
}

void conf_ledger_mark_terminated(const char *provider_id)
{
    for (size_t i = 0; i < ledger_used(); i++) {
        int live = SLOT_LIVE;

        /* A slot's ID is written before it is published as live, so only published IDs are read. */
        if (atomic_load(&ledger->slots[i].state) == SLOT_LIVE && strcmp(ledger->slots[i].provider_id, provider_id) == 0)
            atomic_compare_exchange_strong(&ledger->slots[i].state, &live, SLOT_TERMINATED);
    }
}

/* Collects slots [from, used) in the given state (-1: any published state). */
static int ledger_collect(size_t from, int state, conf_ids *out)
{
    memset(out, 0, sizeof(*out));
    for (size_t i = from; i < ledger_used(); i++) {
        int s = atomic_load(&ledger->slots[i].state);
        int rc;

        if (s == SLOT_CLAIMED || (state >= 0 && s != state) || conf_ids_contains(out, ledger->slots[i].provider_id))
            continue;
        rc = conf_ids_add(out, ledger->slots[i].provider_id);
        if (rc != NS_OK) {
            conf_ids_free(out);
            return rc;
        }
    }
    return NS_OK;
}

int conf_ledger_live(conf_ids *out)
{
    return ledger_collect(0, SLOT_LIVE, out);
}

int conf_ledger_live_since(size_t mark, conf_ids *out)
{
    return ledger_collect(mark, SLOT_LIVE, out);
}

int conf_ledger_all_since(size_t mark, conf_ids *out)
{
    return ledger_collect(mark, -1, out);
}

void conf_skip_count(void)
{
    atomic_fetch_add(&ledger->skipped, 1);
}

unsigned conf_skipped_count(void)
{
    return atomic_load(&ledger->skipped);
}

void conf_token(char *buf, size_t len)
{
    snprintf(buf, len, "nsconf-%08x-%ld-%u", conf_cfg.run_nonce, (long)getpid(),
             atomic_fetch_add(&ledger->token_seq, 1));
}

void conf_ids_free(conf_ids *ids)
{
    if (!ids)
        return;
    for (size_t i = 0; i < ids->n; i++)
        free(ids->ids[i]);
    free(ids->ids);
    ids->ids = NULL;
    ids->n = 0;
}

size_t conf_ids_count(const conf_ids *ids, const char *id)
{
    size_t n = 0;

    for (size_t i = 0; i < ids->n; i++)
        n += strcmp(ids->ids[i], id) == 0;
    return n;
}

bool conf_ids_contains(const conf_ids *ids, const char *id)
{
    return conf_ids_count(ids, id) > 0;
}

int conf_ids_add(conf_ids *ids, const char *id)
{
    char **grown = realloc(ids->ids, (ids->n + 1) * sizeof(*grown));
    char *copy = strdup(id);

    if (!grown || !copy) {
        free(copy);
        if (grown)
            ids->ids = grown;
        return NS_FAIL(NS_ERR_INTERNAL, "recording provider ID %s: out of memory", id);
    }
    ids->ids = grown;
    ids->ids[ids->n++] = copy;
    return NS_OK;
}
