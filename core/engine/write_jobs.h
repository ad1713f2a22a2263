/*
 * Writes run on a few threads at once: each write to the API server waits a round trip, so independent writes (one
 * per pod or per Node, as a kubelet per node makes them) go out in parallel instead of queueing behind each other.
 * One runner for every such batch: the simulated kubelet's pod status writes (controller/sim_kubelet_pods.c) and the
 * Node writes the Kubernetes store runs concurrently (cluster_writes.h, op concurrently).
 */
#ifndef NS_WRITE_JOBS_H
#define NS_WRITE_JOBS_H

#include <stddef.h>
#include <stdint.h>

/* Threads a batch uses at most (a kubelet per node would write in parallel; the API server's client limits apply). */
#define NS_WRITE_JOBS_THREADS 8

/* job(arg, i) for i < n, on up to `threads` threads (this thread runs them all when none can start); no job starts
 * after deadline_ms on the clock (INT64_MAX: none), so a job may not run: the job records for itself that it ran.
 * Jobs run concurrently: each must touch only its own data, or lock. Returns 0 once every started job returned, or
 * the first failed job's code with its error record carried to the calling thread. */
int ns_write_jobs_run(size_t n, size_t threads, int64_t deadline_ms, int (*job)(void *arg, size_t i), void *arg);

#endif
