/*
 * The threads provider calls run on (plugin_watchdog.h). A thread per call was the simple way, but creating and
 * ending one costs more than most calls (several times more under the sanitizers, which set up and clear each
 * thread's shadow stack): an engine makes thousands of calls. So finished workers wait for the next call, up to a
 * few idle ones; a worker stuck in a call the watchdog abandoned is simply not idle, and a new one is started when
 * no idle one is left, so a call never waits for another's.
 */
#ifndef NS_PLUGIN_WORKERS_H
#define NS_PLUGIN_WORKERS_H

/* Runs job(arg) on an idle worker, else on a new detached one. 0, or the errno of pthread_create (job not run). A
 * process forked while workers exist starts with none (they are not in the child). */
int ns_workers_submit(void (*job)(void *arg), void *arg);

#endif
