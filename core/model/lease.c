#include "model/lease.h"

#include <stdlib.h>

void ns_lease_free(ns_lease *l)
{
    if (!l)
        return;
    ns_meta_free(&l->meta);
    free(l->holder);
    free(l);
}
