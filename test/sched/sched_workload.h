/*
 * Karpenter's scheduling-benchmark workload (pkg/controllers/provisioning/scheduling scheduling_benchmark_test.go),
 * shared by bench/sched_bench and the decision-stability test: 400 instance types where type i has i vCPU, 2i GiB
 * and 10i pods, each offered as spot in two zones and on-demand in three; pods in equal fifths generic / zonal
 * topology spread / hostname topology spread / zonal self-affinity / hostname anti-affinity, cpu from
 * {100, 250, 500, 1000, 1500}m and memory from {100, 256, 512, 1024, 2048, 4096}Mi, drawn from a seeded generator.
 */
#ifndef SCHED_WORKLOAD_H
#define SCHED_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "sched_fixture.h"

/* Appends the 400 synthetic types to set. */
void wl_types(ns_itype_set *set);
/* A cluster with one NodePool "default" and n_pods pods drawn with `seed`; the same seed gives the same pods.
 * Free with ns_cluster_free. */
ns_cluster *wl_cluster(size_t n_pods, uint64_t seed);
/* As wl_cluster with only the fifths whose bit is set in `kinds` (bit 0 generic ... bit 4 hostname anti-affinity);
 * the pods of the other fifths are left out. */
ns_cluster *wl_cluster_kinds(size_t n_pods, uint64_t seed, unsigned kinds);

#endif
