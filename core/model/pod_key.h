/*
 * A canonical text of a pod's scheduling fields: two pods whose fields write the same text are interchangeable
 * there. The scheduler keys its pod groups with it (sched_signature.c); packed pods share equal affinity and spread
 * constraints by it (pod_share.c).
 */
#ifndef NS_POD_KEY_H
#define NS_POD_KEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/pod.h"

/* A reusable growable buffer, NUL-terminated; failed once out of memory (then nothing more is written). Free buf
 * with free(). */
typedef struct ns_key {
    char *buf;
    size_t len, cap;
    bool failed;
} ns_key;

/* Each appends one field; a NULL string writes differently from "". */
void ns_key_str(ns_key *b, const char *s);
void ns_key_int(ns_key *b, int64_t v);
void ns_key_labels(ns_key *b, const ns_labels *l);
void ns_key_affinity(ns_key *b, const ns_affinity *a);
void ns_key_spread(ns_key *b, const ns_topology_spread *s, size_t n);

uint64_t ns_key_hash(const ns_key *b); /* FNV-1a of the text */

#endif
