/* poll_events: what the controller can see of a VM's coming interruption without reaching the node.
 *   - the VM instance view (VMs listed with $expand=instanceView): maintenanceRedeployStatus announces scheduled
 *     maintenance with its window (the deadline is the window's start); a deallocating or stopping power state is
 *     an instance stopping; provisioning state Deleting is an instance terminating;
 *   - Resource Health availability statuses of the node resource group: VirtualMachinePreempted (a spot eviction:
 *     Azure evicts at most 30 s after the notice, so the deadline is the occurrence plus 30 s) and
 *     VirtualMachinePossiblyDegradedDueToHardwareFailure (elevated risk: a rebalance recommendation).
 * The Scheduled Events a node sees through IMDS reach the core as node conditions (PreemptionScheduled and
 * VMEventScheduled, set by AKS's node problem detector), read by event_from_node_condition (azure_node_events.c).
 * Each event is delivered once: IDs the core took are kept. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "azure_arm.h"
#include "azure_provider.h"

#define SPOT_NOTICE_MS 30000

typedef struct poll_ctx {
    az_state *s;
    ns_event_cb cb;
    void *cb_ctx;
    int stopped; /* the callback's non-zero value */
} poll_ctx;

static int64_t iso_ms(const char *iso)
{
    struct tm tm = {0};
    if (!iso || !strptime(iso, "%Y-%m-%dT%H:%M:%S", &tm))
        return 0;
    return (int64_t)timegm(&tm) * 1000;
}

static bool delivered(az_state *s, const char *id)
{
    bool found = false;
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < s->n_delivered && !found; i++)
        found = strcmp(s->delivered[i], id) == 0;
    pthread_mutex_unlock(&s->lock);
    return found;
}

static void remember(az_state *s, const char *id)
{
    pthread_mutex_lock(&s->lock);
    snprintf(s->delivered[s->next_delivered], NS_NAME_MAX, "%s", id);
    s->next_delivered = (s->next_delivered + 1) % AZ_MAX_DELIVERED;
    if (s->n_delivered < AZ_MAX_DELIVERED)
        s->n_delivered++;
    pthread_mutex_unlock(&s->lock);
}

static int emit(poll_ctx *p, ns_event_kind kind, const char *vm_id, const char *tag, int64_t time_ms,
                int64_t deadline_ms, const char *detail)
{
    if (p->stopped)
        return p->stopped;
    ns_event ev = {.struct_size = sizeof(ev), .kind = kind, .time_ms = time_ms, .deadline_ms = deadline_ms};
    const char *name = strrchr(vm_id, '/') ? strrchr(vm_id, '/') + 1 : vm_id;
    snprintf(ev.id, sizeof(ev.id), "%s/%s/%lld", tag, name, (long long)time_ms);
    if (delivered(p->s, ev.id))
        return 0;
    snprintf(ev.provider_id, sizeof(ev.provider_id), "azure://%s", vm_id);
    snprintf(ev.detail, sizeof(ev.detail), "%s", detail);
    int rc = p->cb(p->cb_ctx, &ev);
    if (rc != 0) {
        p->stopped = rc;
        return rc;
    }
    remember(p->s, ev.id);
    return 0;
}

static int on_vm(void *ctx, const ns_json *vm)
{
    poll_ctx *p = ctx;
    const ns_host *h = p->s->host;
    const char *cluster = h->json_string(h->json_get(h->json_get(vm, "tags"), AZ_TAG_CLUSTER));
    const char *id = h->json_string(h->json_get(vm, "id"));
    if (!cluster || strcmp(cluster, p->s->cluster) != 0 || !id)
        return 0;
    const ns_json *props = h->json_get(vm, "properties");
    const ns_json *view = h->json_get(props, "instanceView");
    const ns_json *maint = h->json_get(view, "maintenanceRedeployStatus");
    int64_t now = h->now_ms(p->s->ctx);
    if (maint) {
        int64_t start = iso_ms(h->json_string(h->json_get(maint, "maintenanceWindowStartTime")));
        int64_t announced = iso_ms(h->json_string(h->json_get(maint, "preMaintenanceWindowStartTime")));
        if (start > 0 && emit(p, NS_EVENT_SCHEDULED_MAINTENANCE, id, "maintenance", announced ? announced : now, start,
                              "Azure scheduled maintenance (maintenanceRedeployStatus)") != 0)
            return p->stopped;
    }
    const char *state = h->json_string(h->json_get(props, "provisioningState"));
    if (state && strcmp(state, "Deleting") == 0 &&
        emit(p, NS_EVENT_INSTANCE_TERMINATED, id, "deleting", 0, 0, "the VM is being deleted") != 0)
        return p->stopped;
    /* A VM whose creation failed (a capacity refusal being cleaned up) never ran: its power state is no event. */
    const ns_json *statuses = state && strcmp(state, "Failed") == 0 ? NULL : h->json_get(view, "statuses");
    for (size_t i = 0; i < h->json_size(statuses); i++) {
        const char *code = h->json_string(h->json_get(h->json_at(statuses, i), "code"));
        if (code && (strcmp(code, "PowerState/deallocating") == 0 || strcmp(code, "PowerState/stopping") == 0 ||
                     strcmp(code, "PowerState/deallocated") == 0 || strcmp(code, "PowerState/stopped") == 0) &&
            !(state && strcmp(state, "Deleting") == 0) &&
            emit(p, NS_EVENT_INSTANCE_STOPPING, id, "stopping", 0, 0, code) != 0)
            return p->stopped;
    }
    return 0;
}

static int on_health(void *ctx, const ns_json *rec)
{
    poll_ctx *p = ctx;
    const ns_host *h = p->s->host;
    const char *id = h->json_string(h->json_get(rec, "id"));
    const ns_json *props = h->json_get(rec, "properties");
    const char *event = h->json_string(h->json_get(props, "healthEventType"));
    if (!event)
        event = h->json_string(h->json_get(props, "title"));
    const char *marker = id ? strstr(id, "/providers/Microsoft.ResourceHealth/") : NULL;
    if (!event || !marker || !strstr(id, "/virtualMachines/"))
        return 0;
    char vm_id[512];
    snprintf(vm_id, sizeof(vm_id), "%.*s", (int)(marker - id), id);
    int64_t at = iso_ms(h->json_string(h->json_get(props, "occuredTime")));
    if (strcmp(event, "VirtualMachinePreempted") == 0)
        return emit(p, NS_EVENT_SPOT_INTERRUPTION, vm_id, "preempted", at, at + SPOT_NOTICE_MS,
                    "Resource Health: VirtualMachinePreempted (spot eviction)");
    if (strcmp(event, "VirtualMachinePossiblyDegradedDueToHardwareFailure") == 0)
        return emit(p, NS_EVENT_REBALANCE_RECOMMENDATION, vm_id, "degraded", at, 0,
                    "Resource Health: VirtualMachinePossiblyDegradedDueToHardwareFailure");
    return 0;
}

int az_poll_events(void *state, ns_event_cb cb, void *cb_ctx)
{
    az_state *s = state;
    poll_ctx p = {s, cb, cb_ctx, 0};
    char path[600];
    snprintf(path, sizeof(path), "/subscriptions/%s/resourceGroups/%s/providers/Microsoft.Compute/virtualMachines"
             "?$expand=instanceView", s->subscription, s->node_rg);
    int rc = az_arm_list(s, path, AZ_API_COMPUTE, "list VMs with instance views", on_vm, &p);
    if (rc != 0)
        return rc;
    snprintf(path, sizeof(path), "/subscriptions/%s/resourceGroups/%s/providers/Microsoft.ResourceHealth/"
             "availabilityStatuses", s->subscription, s->node_rg);
    return az_arm_list(s, path, AZ_API_HEALTH, "list Resource Health availability statuses", on_health, &p);
}
