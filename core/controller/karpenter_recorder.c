/* Karpenter's de-duplication and nomination rate limit (karpenter_recorder.h). */
#include "controller/karpenter_recorder.h"

#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "model/hash.h"
#include "model/model_util.h"

#define NOMINATION_QPS 5.0
#define NOMINATION_BURST 10.0

typedef struct seen {
    uint64_t key;
    int64_t expires_ms;
} seen;

struct ns_kev_filter {
    seen *items;
    size_t n, cap;
    double tokens;
    int64_t tokens_ms; /* when tokens was last refilled; 0 before the first event */
};

ns_kev_filter *ns_kev_filter_new(void)
{
    ns_kev_filter *f = calloc(1, sizeof(*f));
    if (!f)
        NS_FAIL(NS_ERR_INTERNAL, "out of memory creating the event filter");
    return f;
}

void ns_kev_filter_free(ns_kev_filter *f)
{
    if (!f)
        return;
    free(f->items);
    free(f);
}

static uint64_t key_of(const ns_kev *ev, const char *uid)
{
    uint64_t h = NS_HASH_FNV_BASIS;
    const char *parts[] = {ev->reason, ns_kev_kind(ev->object), ev->namespace_, ev->name, uid, ev->dedupe};
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
        h = ns_hash_field(h, parts[i]);
    return h;
}

/* Forgets what expired; true when key is still remembered. */
static bool remembered(ns_kev_filter *f, uint64_t key, int64_t now)
{
    bool found = false;
    size_t k = 0;
    for (size_t i = 0; i < f->n; i++) {
        if (f->items[i].expires_ms <= now)
            continue;
        found = found || f->items[i].key == key;
        f->items[k++] = f->items[i];
    }
    f->n = k;
    return found;
}

static bool take_token(ns_kev_filter *f, int64_t now)
{
    if (f->tokens_ms == 0)
        f->tokens = NOMINATION_BURST;
    else if (now > f->tokens_ms)
        f->tokens += (double)(now - f->tokens_ms) * NOMINATION_QPS / 1000.0;
    if (f->tokens > NOMINATION_BURST)
        f->tokens = NOMINATION_BURST;
    f->tokens_ms = now;
    if (f->tokens < 1.0)
        return false;
    f->tokens -= 1.0;
    return true;
}

int ns_kev_filter_admit(ns_kev_filter *f, const ns_kev *ev, const char *uid, int64_t now_ms)
{
    uint64_t key = key_of(ev, uid);
    if (remembered(f, key, now_ms))
        return 0;
    if (ns_grow((void **)&f->items, &f->cap, f->n + 1, sizeof(*f->items)) < 0)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory remembering event %s about %s %s", ev->reason,
                       ns_kev_kind(ev->object), ev->name);
    f->items[f->n++] = (seen){key, now_ms + ev->dedupe_ms};
    /* Karpenter checks the rate limit after the de-duplication cache: a dropped nomination stays remembered. */
    return !ev->rate_limited || take_token(f, now_ms);
}
