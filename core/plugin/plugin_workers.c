/* The pool of threads provider calls run on (plugin_workers.h). */
#include "plugin/plugin_workers.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>

/* Idle workers kept for the next calls; a worker that finishes a call with this many idle ends. */
#define IDLE_MAX 8
/* An alternate signal stack for each worker, so a provider that overflows its stack is still reported. */
#define ALT_STACK_BYTES (64 * 1024)

typedef struct job {
    void (*fn)(void *arg);
    void *arg;
    struct job *next;
} job;

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pool_cond = PTHREAD_COND_INITIALIZER;
static job *queue_head, *queue_tail;
static unsigned n_idle, n_queued; /* idle workers not yet woken for a queued job: n_idle - n_queued */
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* The pool's lock is held across fork, so the child gets it in a known state; the child has no workers (threads are
 * not forked), so it starts with an empty pool rather than wait on workers that are not there. */
static void before_fork(void)
{
    pthread_mutex_lock(&pool_lock);
}

static void after_fork_parent(void)
{
    pthread_mutex_unlock(&pool_lock);
}

static void after_fork_child(void)
{
    for (job *j = queue_head; j;) { /* jobs still queued belong to the parent's callers */
        job *next = j->next;
        free(j);
        j = next;
    }
    queue_head = queue_tail = NULL;
    n_idle = n_queued = 0;
    pthread_mutex_unlock(&pool_lock);
    pthread_cond_init(&pool_cond, NULL);
}

static void register_atfork(void)
{
    pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}

/* Gives the worker an alternate signal stack unless it has one (the sanitizers give each thread theirs). It is
 * mapped, not malloc'd: a worker stuck in a provider at exit never unmaps it, and that is no leak of the heap's.
 * Returns the mapping to remove, or NULL. */
static void *alt_stack_on(void)
{
    stack_t current;
    if (sigaltstack(NULL, &current) == 0 && !(current.ss_flags & SS_DISABLE))
        return NULL;
    void *mem = mmap(NULL, ALT_STACK_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (mem == MAP_FAILED)
        return NULL; /* calls still run; only a stack overflow in one would go unnamed */
    stack_t alt = {.ss_sp = mem, .ss_size = ALT_STACK_BYTES};
    if (sigaltstack(&alt, NULL) != 0) {
        munmap(mem, ALT_STACK_BYTES);
        return NULL;
    }
    return mem;
}

static void alt_stack_off(void *mem)
{
    if (!mem)
        return;
    stack_t off = {.ss_flags = SS_DISABLE};
    sigaltstack(&off, NULL);
    munmap(mem, ALT_STACK_BYTES);
}

/* The next queued job, waiting for one; NULL when enough workers are idle already (this one then ends). */
static job *next_job(void)
{
    pthread_mutex_lock(&pool_lock);
    if (n_idle >= IDLE_MAX) {
        pthread_mutex_unlock(&pool_lock);
        return NULL;
    }
    n_idle++;
    while (!queue_head)
        pthread_cond_wait(&pool_cond, &pool_lock);
    job *j = queue_head;
    queue_head = j->next;
    if (!queue_head)
        queue_tail = NULL;
    n_idle--;
    n_queued--;
    pthread_mutex_unlock(&pool_lock);
    return j;
}

static void *worker(void *arg)
{
    void *alt = alt_stack_on();
    for (job *j = arg; j; j = next_job()) {
        void (*fn)(void *) = j->fn;
        void *fn_arg = j->arg;
        free(j);
        fn(fn_arg);
    }
    alt_stack_off(alt);
    return NULL;
}

int ns_workers_submit(void (*fn)(void *arg), void *arg)
{
    pthread_once(&atfork_once, register_atfork);
    job *j = malloc(sizeof(*j));
    if (!j)
        return ENOMEM;
    *j = (job){.fn = fn, .arg = arg};
    pthread_mutex_lock(&pool_lock);
    if (n_idle > n_queued) {
        if (queue_tail)
            queue_tail->next = j;
        else
            queue_head = j;
        queue_tail = j;
        n_queued++;
        pthread_cond_signal(&pool_cond);
        pthread_mutex_unlock(&pool_lock);
        return 0;
    }
    pthread_mutex_unlock(&pool_lock);
    pthread_attr_t attr;
    pthread_t thread;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int err = pthread_create(&thread, &attr, worker, j);
    pthread_attr_destroy(&attr);
    if (err != 0)
        free(j);
    return err;
}
