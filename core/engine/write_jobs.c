/* Independent writes on a few threads; the first failure's error record comes back to the caller's thread. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "clock/ns_clock.h"
#include "context/ns_ctx.h"
#include "engine/cluster_writes.h"
#include "engine/write_jobs.h"
#include "errors/ns_error.h"

typedef struct jobs {
    ns_ctx *ctx; /* the caller's: its clock, logger and error sink serve the jobs too */
    int (*job)(void *arg, size_t i);
    void *arg;
    size_t n;
    atomic_size_t next;
    int64_t deadline_ms;
    pthread_mutex_t lock;
    bool failed;
    ns_error_record first; /* the error record is per thread: the first failure's, copied under lock */
} jobs;

static void *work(void *p)
{
    jobs *b = p;
    ns_ctx *previous = ns_ctx_enter(b->ctx);
    for (size_t i; ns_clock_now_ms() < b->deadline_ms && (i = atomic_fetch_add(&b->next, 1)) < b->n;) {
        if (b->job(b->arg, i) >= 0)
            continue;
        pthread_mutex_lock(&b->lock);
        if (!b->failed) {
            b->failed = true;
            b->first = *ns_error_last();
        }
        pthread_mutex_unlock(&b->lock);
    }
    ns_ctx_leave(previous);
    return NULL;
}

int ns_write_jobs_run(size_t n, size_t threads, int64_t deadline_ms, int (*job)(void *arg, size_t i), void *arg)
{
    jobs b = {.ctx = ns_ctx_current(), .job = job, .arg = arg, .n = n, .deadline_ms = deadline_ms};
    atomic_init(&b.next, 0);
    pthread_mutex_init(&b.lock, NULL);
    pthread_t t[NS_WRITE_JOBS_THREADS];
    size_t started = 0;
    if (threads > NS_WRITE_JOBS_THREADS)
        threads = NS_WRITE_JOBS_THREADS;
    while (started < threads && started < n && pthread_create(&t[started], NULL, work, &b) == 0)
        started++;
    if (started == 0)
        work(&b); /* no thread could start: this one runs them all */
    for (size_t i = 0; i < started; i++)
        pthread_join(t[i], NULL);
    pthread_mutex_destroy(&b.lock);
    if (!b.failed)
        return 0;
    ns_error_restore(&b.first);
    return b.first.code;
}

int ns_cluster_writes_each(const ns_cluster_writes *w, size_t n, int (*job)(void *arg, size_t i), void *arg)
{
    if (w->ops->concurrently)
        return w->ops->concurrently(w->ctx, n, job, arg);
    int first = 0;
    ns_error_record rec;
    for (size_t i = 0; i < n; i++)
        if (job(arg, i) < 0 && first == 0) {
            rec = *ns_error_last();
            first = rec.code;
        }
    if (first)
        ns_error_restore(&rec);
    return first;
}
