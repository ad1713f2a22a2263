/*
 * Pod scheduling signatures, for grouping pods that are interchangeable to the scheduler.
 */
#ifndef NS_SCHED_SIGNATURE_H
#define NS_SCHED_SIGNATURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/pod.h"

/* A reusable growable buffer; free buf with free(). */
typedef struct sched_sb {
    char *buf;
    size_t len, cap;
    bool failed;
} sched_sb;

/* Overwrites b with the pod's signature. 0 or NS_ERR_INTERNAL. */
int sched_signature(const ns_pod *pod, sched_sb *b);
uint64_t sched_sb_hash(const sched_sb *b);

#endif
