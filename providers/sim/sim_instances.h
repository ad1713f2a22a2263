/*
 * The sim's instances. Instance i-<n> lives at items[n - 1] for the provider's lifetime; terminated instances stay
 * (so terminate stays idempotent and client tokens keep answering) but are hidden from list and get.
 */
#ifndef SIM_INSTANCES_H
#define SIM_INSTANCES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nodesmith/provider.h"

typedef struct sim_state sim_state;

/* An instance's allocatable, kept small (a simulated cloud holds many instances): the sim's types have at most one
 * extended resource, their GPUs. */
typedef struct sim_allocatable {
    int64_t cpu_milli, memory_bytes, pods, ephemeral_storage_bytes;
    char gpu_resource[16]; /* "nvidia.com/gpu" or "amd.com/gpu"; empty without GPUs */
    int64_t gpus;
} sim_allocatable;

/* The strings of an instance, one after the other in sim_instance.names. */
typedef enum sim_instance_name {
    SIM_NAME_PROVIDER_ID = 0,
    SIM_NAME_ZONE,
    SIM_NAME_IMAGE,
    SIM_NAME_NODECLAIM,
    SIM_NAME_NODEPOOL,
    SIM_NAME_NODECLASS,
    SIM_NAME_COUNT,
} sim_instance_name;

/* About 130 bytes and its names, not an ns_instance of fixed buffers (992 bytes): a simulation holds one per node. */
typedef struct sim_instance {
    uint64_t id;
    char *names;               /* owned: SIM_NAME_COUNT NUL-terminated strings in sim_instance_name order */
    const char *instance_type; /* the catalog's name (the catalog is immutable) */
    const char *capacity_type; /* NS_CAPACITY_SPOT, _ON_DEMAND or _RESERVED, static */
    ns_instance_state state;
    int64_t launch_time_ms;
    sim_allocatable allocatable;
    char *client_token; /* owned; NULL when the launch had none */
} sim_instance;

/* The strings packed one after the other for sim_instance.names; NULL when out of memory. */
char *sim_instance_pack_names(const char *const names[SIM_NAME_COUNT]);
/* One of the instance's strings. */
const char *sim_instance_get(const sim_instance *inst, sim_instance_name which);
/* The instance as the ABI reports it (a full ns_instance). */
void sim_instance_info(const sim_instance *inst, ns_instance *out);

/* Guarded by sim_state.lock. */
typedef struct sim_instance_store {
    sim_instance *items;
    size_t n;
    size_t cap;
    size_t *token_slots; /* open addressing: items index + 1, 0 = empty */
    size_t n_token_slots;
    size_t n_tokens;
} sim_instance_store;

void sim_instances_free(sim_instance_store *store); /* accepts NULL */
/* Indexes items[index] by its client token, growing the table to keep it at most half full. Caller holds the lock.
 * false on allocation failure. */
bool sim_token_index(sim_instance_store *st, size_t index);

/* NULL when unknown. Caller holds the lock; the pointer is valid until the lock is released. */
sim_instance *sim_instances_by_id(sim_instance_store *store, uint64_t id);
sim_instance *sim_instances_by_provider_id(sim_instance_store *store, const char *provider_id);

/* Takes the lock and applies the event changes that are due, so every reader sees the same world. Returns the
 * host clock's time it used. */
int64_t sim_world_lock(sim_state *s);
void sim_world_unlock(sim_state *s);

/* ABI methods. */
int sim_launch(void *state, const ns_launch_request *req, ns_launch_result *result);
int sim_terminate(void *state, const char *provider_id, bool *already_gone);
int sim_list_instances(void *state, ns_instance_cb cb, void *cb_ctx);
int sim_get_instance(void *state, const char *provider_id, ns_instance *out);

#endif
