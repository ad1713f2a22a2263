/*
 * Capacity reservations (aws_reservations.c): the On-Demand Capacity Reservations an EC2NodeClass's
 * capacityReservationSelectorTerms select, as Karpenter's capacityreservation provider finds them: one
 * DescribeCapacityReservations per term (state active; by ID, or by tags, owner and instance match criteria),
 * duplicates and expired ones left out.
 *
 * No availability cache of its own: each call asks EC2 again, so availableInstanceCount is EC2's count at that moment,
 * and a reservation EC2 refuses at launch reaches the core's unavailable-offerings cache (the ABI's one cache of
 * offerings without capacity), as offering (type, zone, "reserved").
 */
#ifndef NS_AWS_RESERVATIONS_H
#define NS_AWS_RESERVATIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nodesmith/provider.h>

#include "aws_nodeclass_spec.h"

/* The karpenter.k8s.aws labels of a reserved node (Karpenter's v1.LabelCapacityReservationID and ...Type). */
#define AWS_LABEL_RESERVATION_ID "karpenter.k8s.aws/capacity-reservation-id"
#define AWS_LABEL_RESERVATION_TYPE "karpenter.k8s.aws/capacity-reservation-type"

typedef struct aws_reservation {
    char id[64];
    char owner_id[16];
    char instance_type[64];
    char zone[NS_ZONE_MAX];
    char match_criteria[16]; /* "open" or "targeted" */
    char reservation_type[16]; /* "default" or "capacity-block" */
    char state[16];            /* "active" (the only state asked for) */
    int64_t available, total;
    int64_t end_ms; /* 0: no end date */
    bool interruptible;
} aws_reservation;

typedef struct aws_reservation_set {
    aws_reservation *items; /* sorted by ID */
    size_t n;
} aws_reservation_set;

struct aws_state;

/* Resolves spec's terms into *out (zeroed first; empty when the spec has none). NS_OK, or the EC2 error, reported. */
int aws_reservations_resolve(struct aws_state *s, const aws_nodeclass_spec *spec, aws_reservation_set *out);
void aws_reservation_set_free(aws_reservation_set *set); /* accepts NULL */

/* The reservation a launch of `type` in `zone` goes into: the one with the most available instances (Karpenter's
 * reserved-offering filter), or NULL when none has any. */
const aws_reservation *aws_reservation_for(const aws_reservation_set *set, const char *type, const char *zone);

/* The price of a reserved offering: the type's on-demand price divided by 10,000,000, as Karpenter prices it, so a
 * reservation is chosen before anything else while reservations of different types keep their order; 0 when no
 * on-demand price is known. */
double aws_reservation_price(double on_demand);

#endif
