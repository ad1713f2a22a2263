/*
 * A simulated cloud shared by processes (option state_file): the instances live in a file that every sim.so naming it
 * reads when it takes the world lock and writes back when it releases it, under an exclusive flock, so two controller
 * replicas (a leader and the standby that takes over), or a controller and its restart, see one cloud: an instance
 * launched by one is listed, found and terminated by the other, and a client token launches once across them.
 * Injected faults and queued events stay per process.
 */
#ifndef SIM_SHARED_H
#define SIM_SHARED_H

typedef struct sim_state sim_state;

/* Opens (creating, mode 0600) the state file. NS_ERR_INVALID_CONFIG naming the option and path on failure. */
int sim_shared_open(sim_state *s, const char *path);
void sim_shared_close(sim_state *s);
/* With the world mutex held: take the file lock and load the instances (replacing the store). */
void sim_shared_enter(sim_state *s);
/* With the world mutex held: write the instances back and drop the file lock. */
void sim_shared_leave(sim_state *s);

#endif
