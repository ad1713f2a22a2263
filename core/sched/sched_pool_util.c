#include "sched/sched_pool_util.h"

#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "model/labels.h"

static bool has_key(const sched_pool *p, const char *key)
{
    for (size_t i = 0; i < p->n_keys; i++)
        if (strcmp(p->keys[i], key) == 0)
            return true;
    return false;
}

int sched_pool_keys(sched_pool *p, const ns_itype_set *set)
{
    size_t cap = 0;
    for (size_t i = 0; set && i < set->n; i++) {
        const ns_itype *t = &set->items[i];
        for (size_t j = 0; j < t->n_labels; j++) {
            if (has_key(p, t->labels[j].key))
                continue;
            if (p->n_keys == cap) {
                size_t ncap = cap ? cap * 2 : 16;
                const char **nk = realloc(p->keys, ncap * sizeof(*nk));
                if (!nk)
                    return NS_FAIL(NS_ERR_INTERNAL, "NodePool %s: out of memory listing label keys",
                                   p->np->meta.name);
                p->keys = nk;
                cap = ncap;
            }
            p->keys[p->n_keys++] = t->labels[j].key;
        }
    }
    return NS_OK;
}

bool sched_type_satisfies(const sched_pool *p, const ns_itype *t, const ns_requirements *reqs)
{
    for (size_t i = 0; i < reqs->n; i++) {
        const ns_requirement *r = &reqs->items[i];
        if (strcmp(r->key, NS_LABEL_ZONE) == 0 || strcmp(r->key, NS_LABEL_CAPACITY_TYPE) == 0)
            continue;
        const char *v = ns_label_find(t->labels, t->n_labels, r->key);
        if (v) {
            if (!ns_requirement_has(r, v))
                return false;
            continue;
        }
        ns_req_op op = ns_requirement_operator(r);
        if (has_key(p, r->key) && ((op != NS_OP_NOT_IN && op != NS_OP_DOES_NOT_EXIST) || r->has_gte || r->has_lte))
            return false;
    }
    return true;
}
