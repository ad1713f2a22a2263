/*
 * Capacity reservations in aws.so against the emulator (which follows EC2's DescribeCapacityReservations and
 * targeted launches, checked with botocore): the reservations an EC2NodeClass's capacityReservationSelectorTerms
 * select become reserved offerings priced below everything else; a launch on a reserved offering goes into the
 * reservation through a launch template that targets it; a full reservation is reported as an unavailable reserved
 * offering and the launch falls back to spot or on-demand in the same call.
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "provider_fixture.h"

#define OPT(type, zone, cap, price) {sizeof(ns_launch_option), type, zone, cap, price}
#define RESERVED_SPEC(terms) "{" PF_SPEC_BASE ",\"amiSelectorTerms\":[{\"alias\":\"al2023@latest\"}]," \
                             "\"role\":\"KarpenterNodeRole-demo\",\"capacityReservationSelectorTerms\":" terms "}"

static const char *param(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The offerings list_instance_types gives for one type, copied. */
typedef struct seen_offering {
    char zone[32], capacity_type[16], reservation[64];
    double price;
    bool available;
} seen_offering;

typedef struct type_offerings {
    const char *type;
    seen_offering items[128];
    int n;
} type_offerings;

static int collect(void *ctx, const ns_instance_type *t)
{
    type_offerings *out = ctx;
    if (strcmp(t->name, out->type) != 0)
        return 0;
    for (size_t i = 0; i < t->n_offerings && out->n < 128; i++) {
        const ns_offering *o = NS_AT(t->offerings, i);
        seen_offering *s = &out->items[out->n++];
        snprintf(s->zone, sizeof(s->zone), "%s", o->zone);
        snprintf(s->capacity_type, sizeof(s->capacity_type), "%s", o->capacity_type);
        snprintf(s->reservation, sizeof(s->reservation), "%s", o->reservation_id ? o->reservation_id : "");
        s->price = o->price_per_hour;
        s->available = o->available;
    }
    return 0;
}

static void offerings_of(const ns_nodeclass *nc, const char *type, type_offerings *out)
{
    memset(out, 0, sizeof(*out));
    out->type = type;
    ck_assert_msg(pf_provider->list_instance_types(pf_state, nc, collect, out) == NS_OK, "list_instance_types: %s",
                  pf_host.last_error_message);
}

static const seen_offering *reserved_in(const type_offerings *t, const char *reservation)
{
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->items[i].capacity_type, NS_CAPACITY_RESERVED) == 0 &&
            strcmp(t->items[i].reservation, reservation) == 0)
            return &t->items[i];
    return NULL;
}

/* The emulator's count of free instances in a reservation. */
static int available_in(const char *id)
{
    cJSON *all = pf_control_get("/_emulator/capacity_reservations");
    int n = -1;
    const cJSON *r;
    cJSON_ArrayForEach(r, all)
        if (strcmp(param(r, "id"), id) == 0)
            n = cJSON_GetObjectItemCaseSensitive(r, "available")->valueint;
    cJSON_Delete(all);
    return n;
}

static bool named_unavailable(const char *type, const char *zone, const char *capacity_type)
{
    for (int i = 0; i < pf_host.n_unavailable; i++)
        if (strcmp(pf_host.unavailable[i][0], type) == 0 && strcmp(pf_host.unavailable[i][1], zone) == 0 &&
            strcmp(pf_host.unavailable[i][2], capacity_type) == 0)
            return true;
    return false;
}

START_TEST(test_launch_goes_into_the_reservation)
{
    pf_control("/_emulator/capacity_reservations", "{\"id\":\"cr-0a00000000000001\",\"instance_type\":\"m5.xlarge\","
                                                   "\"zone\":\"us-east-1a\",\"count\":2,\"tags\":{\"team\":\"ml\"}}");
    /* another account's reservation with the same tag is not selected when the term names an owner */
    pf_control("/_emulator/capacity_reservations", "{\"id\":\"cr-0a00000000000002\",\"instance_type\":\"m5.xlarge\","
                                                   "\"zone\":\"us-east-1b\",\"count\":1,\"tags\":{\"team\":\"ml\"},"
                                                   "\"owner\":\"444455556666\"}");
    cJSON *spec;
    ns_nodeclass nc = pf_nodeclass(&spec, "EC2NodeClass", "reserved",
                                   RESERVED_SPEC("[{\"tags\":{\"team\":\"ml\"},\"ownerID\":\"111122223333\"}]"));
    type_offerings t;
    offerings_of(&nc, "m5.xlarge", &t);
    const seen_offering *r = reserved_in(&t, "cr-0a00000000000001");
    ck_assert_ptr_nonnull(r);
    ck_assert_ptr_null(reserved_in(&t, "cr-0a00000000000002"));
    ck_assert_str_eq(r->zone, "us-east-1a");
    ck_assert(r->available);
    /* priced as Karpenter prices it: the on-demand price / 10^7, below every other offering */
    double on_demand = -1;
    for (int i = 0; i < t.n; i++) {
        if (strcmp(t.items[i].capacity_type, NS_CAPACITY_ON_DEMAND) == 0)
            on_demand = t.items[i].price;
        if (&t.items[i] != r)
            ck_assert_msg(t.items[i].price > r->price, "%s %s costs %g, not more than the reservation's %g",
                          t.items[i].zone, t.items[i].capacity_type, t.items[i].price, r->price);
    }
    ck_assert_msg(on_demand > 0 && r->price > 0 && r->price * 1e7 > on_demand * 0.999999 &&
                  r->price * 1e7 < on_demand * 1.000001, "reserved %g for on-demand %g", r->price, on_demand);

    ns_launch_option options[] = {OPT("m5.xlarge", "us-east-1a", NS_CAPACITY_RESERVED, r->price),
                                  OPT("m5.xlarge", "us-east-1a", NS_CAPACITY_SPOT, 0.07),
                                  OPT("m5.xlarge", "us-east-1a", NS_CAPACITY_ON_DEMAND, on_demand)};
    char token[64];
    pf_token(token, sizeof(token), "reserved");
    ns_launch_request req = pf_request(&nc, options, 3, token);
    ns_launch_result res = {.struct_size = sizeof(res)};
    ck_assert_msg(pf_provider->launch(pf_state, &req, &res) == NS_OK, "launch: %s", pf_host.last_error_message);
    ck_assert_str_eq(res.capacity_type, NS_CAPACITY_RESERVED);
    ck_assert_str_eq(res.zone, "us-east-1a");
    ck_assert_int_eq(available_in("cr-0a00000000000001"), 1);
    cJSON *state = NULL, *templates = NULL, *fleets = NULL;
    const cJSON *inst = pf_instance(&state, res.provider_id);
    ck_assert_str_eq(param(inst, "reservation"), "cr-0a00000000000001");
    /* the launch template targets the reservation, and the node registers with the reservation's labels */
    const cJSON *data = cJSON_GetObjectItemCaseSensitive(pf_template(&templates, param(inst, "template")), "data");
    ck_assert_str_eq(param(data, "CapacityReservationSpecification.CapacityReservationPreference"),
                     "capacity-reservations-only");
    ck_assert_str_eq(param(data, "CapacityReservationSpecification.CapacityReservationTarget.CapacityReservationId"),
                     "cr-0a00000000000001");
    ck_assert_ptr_nonnull(strstr(param(data, "UserData"),
                                 "karpenter.k8s.aws/capacity-reservation-id=cr-0a00000000000001"));
    ck_assert_ptr_nonnull(strstr(param(data, "UserData"), "karpenter.k8s.aws/capacity-reservation-type=default"));
    const cJSON *fleet = pf_last_fleet(&fleets);
    ck_assert_str_eq(param(fleet, "TargetCapacitySpecification.DefaultTargetCapacityType"), "on-demand");
    ck_assert_str_eq(param(fleet, "LaunchTemplateConfigs.1.Overrides.1.InstanceType"), "m5.xlarge");
    ck_assert_ptr_null(param(fleet, "LaunchTemplateConfigs.1.Overrides.2.InstanceType"));
    ck_assert_int_eq(pf_host.n_unavailable, 0);
    /* list_instances and get_instance report it as reserved */
    ns_instance got = {.struct_size = sizeof(got)};
    ck_assert_int_eq(pf_provider->get_instance(pf_state, res.provider_id, &got), NS_OK);
    ck_assert_str_eq(got.capacity_type, NS_CAPACITY_RESERVED);
    /* the same client token finds the same instance */
    ns_launch_result again = {.struct_size = sizeof(again)};
    ck_assert_int_eq(pf_provider->launch(pf_state, &req, &again), NS_OK);
    ck_assert_str_eq(again.provider_id, res.provider_id);
    ck_assert_int_eq(available_in("cr-0a00000000000001"), 1);
    /* the node class's other launches keep out of open reservations */
    ns_launch_option od[] = {OPT("m5.xlarge", "us-east-1b", NS_CAPACITY_ON_DEMAND, on_demand)};
    pf_token(token, sizeof(token), "not-reserved");
    req = pf_request(&nc, od, 1, token);
    ck_assert_int_eq(pf_provider->launch(pf_state, &req, &res), NS_OK);
    ck_assert_str_eq(res.capacity_type, NS_CAPACITY_ON_DEMAND);
    cJSON_Delete(state);
    cJSON_Delete(templates);
    inst = pf_instance(&state, res.provider_id);
    data = cJSON_GetObjectItemCaseSensitive(pf_template(&templates, param(inst, "template")), "data");
    ck_assert_str_eq(param(data, "CapacityReservationSpecification.CapacityReservationPreference"), "none");
    ck_assert_ptr_null(param(inst, "reservation"));
    cJSON_Delete(state);
    cJSON_Delete(templates);
    cJSON_Delete(fleets);
    cJSON_Delete(spec);
}
END_TEST

START_TEST(test_full_reservation_falls_back)
{
    pf_control("/_emulator/capacity_reservations", "{\"id\":\"cr-0b00000000000001\",\"instance_type\":\"c5.2xlarge\","
                                                   "\"zone\":\"us-east-1b\",\"count\":1}");
    cJSON *spec;
    ns_nodeclass nc = pf_nodeclass(&spec, "EC2NodeClass", "by-id", RESERVED_SPEC("[{\"id\":\"cr-0b00000000000001\"},"
                                                                                 "{\"id\":\"cr-0b0000000000dead\"}]"));
    type_offerings t;
    offerings_of(&nc, "c5.2xlarge", &t);
    ck_assert_ptr_nonnull(reserved_in(&t, "cr-0b00000000000001"));
    ck_assert(reserved_in(&t, "cr-0b00000000000001")->available);
    ns_launch_option options[] = {OPT("c5.2xlarge", "us-east-1b", NS_CAPACITY_RESERVED, 0.00000003),
                                  OPT("c5.2xlarge", "us-east-1b", NS_CAPACITY_ON_DEMAND, 0.34)};
    char first[64], second[64], third[64];
    pf_token(first, sizeof(first), "fill");
    ns_launch_request req = pf_request(&nc, options, 2, first);
    ns_launch_result res = {.struct_size = sizeof(res)};
    ck_assert_msg(pf_provider->launch(pf_state, &req, &res) == NS_OK, "%s", pf_host.last_error_message);
    ck_assert_str_eq(res.capacity_type, NS_CAPACITY_RESERVED);
    /* full now: listed as unavailable, as EC2 counts it */
    offerings_of(&nc, "c5.2xlarge", &t);
    ck_assert(!reserved_in(&t, "cr-0b00000000000001")->available);
    /* a launch that still asks for it (the core had not listed again) meets ReservationCapacityExceeded, names the
     * reserved offering unavailable, and launches on-demand in the same call */
    fake_host_clear_error(&pf_host);
    pf_token(second, sizeof(second), "fallback");
    req = pf_request(&nc, options, 2, second);
    ck_assert_msg(pf_provider->launch(pf_state, &req, &res) == NS_OK, "%s", pf_host.last_error_message);
    ck_assert_str_eq(res.capacity_type, NS_CAPACITY_ON_DEMAND);
    ck_assert(named_unavailable("c5.2xlarge", "us-east-1b", NS_CAPACITY_RESERVED));
    cJSON *state = NULL;
    ck_assert_ptr_null(param(pf_instance(&state, res.provider_id), "reservation"));
    cJSON_Delete(state);
    /* and to spot when the request allows spot */
    ns_launch_option spot[] = {OPT("c5.2xlarge", "us-east-1b", NS_CAPACITY_RESERVED, 0.00000003),
                               OPT("c5.2xlarge", "us-east-1b", NS_CAPACITY_SPOT, 0.12)};
    fake_host_clear_error(&pf_host);
    pf_token(third, sizeof(third), "to-spot");
    req = pf_request(&nc, spot, 2, third);
    ck_assert_msg(pf_provider->launch(pf_state, &req, &res) == NS_OK, "%s", pf_host.last_error_message);
    ck_assert_str_eq(res.capacity_type, NS_CAPACITY_SPOT);
    ck_assert(named_unavailable("c5.2xlarge", "us-east-1b", NS_CAPACITY_RESERVED));
    /* reserved alone: no capacity, naming the offering */
    fake_host_clear_error(&pf_host);
    pf_token(third, sizeof(third), "only-reserved");
    req = pf_request(&nc, options, 1, third);
    ck_assert_int_eq(pf_provider->launch(pf_state, &req, &res), NS_ERR_INSUFFICIENT_CAPACITY);
    ck_assert(named_unavailable("c5.2xlarge", "us-east-1b", NS_CAPACITY_RESERVED));
    ck_assert_ptr_nonnull(strstr(pf_host.last_error_message, "ReservationCapacityExceeded"));
    cJSON_Delete(spec);
}
END_TEST

START_TEST(test_unselected_or_expired_reservations_are_not_offered)
{
    pf_control("/_emulator/capacity_reservations", "{\"id\":\"cr-0c00000000000001\",\"instance_type\":\"r5.large\","
                                                   "\"zone\":\"us-east-1a\",\"count\":1,\"tags\":{\"team\":\"old\"},"
                                                   "\"end_date\":\"2001-01-01T00:00:00.000Z\"}");
    pf_control("/_emulator/capacity_reservations", "{\"id\":\"cr-0c00000000000002\",\"instance_type\":\"r5.large\","
                                                   "\"zone\":\"us-east-1a\",\"count\":1,\"tags\":{\"team\":\"other\"}}");
    cJSON *spec, *plain;
    ns_nodeclass nc = pf_nodeclass(&spec, "EC2NodeClass", "old", RESERVED_SPEC("[{\"tags\":{\"team\":\"old\"}}]"));
    type_offerings t;
    offerings_of(&nc, "r5.large", &t);
    ck_assert_ptr_null(reserved_in(&t, "cr-0c00000000000001"));
    ck_assert_ptr_null(reserved_in(&t, "cr-0c00000000000002"));
    /* a node class without terms has no reserved offering, and its templates say nothing about reservations */
    ns_nodeclass none = pf_nodeclass(&plain, "EC2NodeClass", "plain", PF_SPEC_AL2023);
    offerings_of(&none, "r5.large", &t);
    for (int i = 0; i < t.n; i++)
        ck_assert_str_ne(t.items[i].capacity_type, NS_CAPACITY_RESERVED);
    ns_launch_option options[] = {OPT("r5.large", "us-east-1a", NS_CAPACITY_RESERVED, 0.00000001)};
    char token[64];
    pf_token(token, sizeof(token), "unselected");
    ns_launch_request req = pf_request(&nc, options, 1, token);
    ns_launch_result res = {.struct_size = sizeof(res)};
    ck_assert_int_eq(pf_provider->launch(pf_state, &req, &res), NS_ERR_INSUFFICIENT_CAPACITY);
    ck_assert(named_unavailable("r5.large", "us-east-1a", NS_CAPACITY_RESERVED));
    ck_assert_int_eq(available_in("cr-0c00000000000002"), 1);
    cJSON_Delete(spec);
    cJSON_Delete(plain);
}
END_TEST

int main(void)
{
    if (pf_start() != 0)
        return EXIT_FAILURE;
    Suite *s = suite_create("aws_provider_reservations");
    TCase *tc = tcase_create("reservations");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, pf_setup, pf_teardown);
    tcase_add_test(tc, test_launch_goes_into_the_reservation);
    tcase_add_test(tc, test_full_reservation_falls_back);
    tcase_add_test(tc, test_unselected_or_expired_reservations_are_not_offered);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    pf_stop();
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
