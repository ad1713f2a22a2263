/* The XML tree builder and the typed EC2/STS response parsers, on fixture documents in test/aws/xml. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws_api_error.h"
#include "aws_ec2_parse.h"
#include "aws_instance_status_parse.h"
#include "aws_parse_util.h"
#include "aws_sts_parse.h"
#include "aws_xml.h"
#include "test_files.h"

static char err[256];

static char *fixture(const char *name)
{
    char rel[128];
    snprintf(rel, sizeof(rel), "xml/%s", name);
    return test_fixture(rel);
}

START_TEST(test_tree_basics)
{
    const char *doc = "<?xml version=\"1.0\"?>\n<a:Root xmlns:a=\"urn:x\"><x attr=\"1\">  hi &amp; bye \n</x>"
                      "<list><item>1</item><other/><item>2</item><item>3</item></list><empty/></a:Root>";
    aws_xml_node *root = NULL;
    ck_assert_int_eq(aws_xml_parse(doc, strlen(doc), &root, err, sizeof(err)), NS_OK);
    ck_assert_str_eq(root->name, "Root");
    ck_assert_str_eq(aws_xml_text(root, "x"), "hi & bye");
    ck_assert_str_eq(aws_xml_text(root, "empty"), "");
    ck_assert_ptr_null(aws_xml_text(root, "missing"));
    ck_assert_ptr_null(aws_xml_text(root, "list/item/deeper"));
    ck_assert_uint_eq(aws_xml_count(aws_xml_child(root, "list"), "item"), 3);
    ck_assert_str_eq(aws_xml_nth(aws_xml_child(root, "list"), "item", 2)->text, "3");
    ck_assert_ptr_null(aws_xml_nth(aws_xml_child(root, "list"), "item", 3));
    aws_xml_free(root);
    aws_xml_free(NULL);
}
END_TEST

START_TEST(test_tree_refusals)
{
    aws_xml_node *root = (aws_xml_node *)1;
    char *bad = fixture("malformed.xml");
    ck_assert_int_eq(aws_xml_parse(bad, strlen(bad), &root, err, sizeof(err)), NS_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(root);
    ck_assert_ptr_nonnull(strstr(err, "line 1"));
    ck_assert_ptr_nonnull(strstr(err, "mismatched tag"));
    free(bad);

    char *bomb = fixture("doctype-entities.xml");
    ck_assert_int_eq(aws_xml_parse(bomb, strlen(bomb), &root, err, sizeof(err)), NS_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(err, "document type"));
    free(bomb);

    ck_assert_int_eq(aws_xml_parse("", 0, &root, err, sizeof(err)), NS_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(aws_xml_parse("<a></a><b/>", 11, &root, err, sizeof(err)), NS_ERR_INVALID_ARGUMENT);

    /* Deeper than AWS_XML_MAX_DEPTH. */
    char deep[(AWS_XML_MAX_DEPTH + 2) * 7 + 1] = "";
    for (int i = 0; i < AWS_XML_MAX_DEPTH + 1; i++)
        strcat(deep, "<a>");
    for (int i = 0; i < AWS_XML_MAX_DEPTH + 1; i++)
        strcat(deep, "</a>");
    ck_assert_int_eq(aws_xml_parse(deep, strlen(deep), &root, err, sizeof(err)), NS_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(err, "nested too deeply"));
}
END_TEST

START_TEST(test_instance_types_pagination)
{
    char *x = fixture("describe-instance-types-page1.xml");
    aws_ec2_instance_type_page p;
    ck_assert_int_eq(aws_ec2_parse_instance_types(x, strlen(x), &p, err, sizeof(err)), NS_OK);
    ck_assert_uint_eq(p.n, 2);
    ck_assert_str_eq(p.next_token, "AAEAAWfhZy1jZXJ0LXBhZ2UtMg==");
    const aws_ec2_instance_type *m5 = &p.items[0], *g4 = &p.items[1];
    ck_assert_str_eq(m5->name, "m5.large");
    ck_assert_int_eq(m5->vcpus, 2);
    ck_assert_int_eq(m5->memory_mib, 8192);
    ck_assert_uint_eq(m5->n_architectures, 1);
    ck_assert_str_eq(m5->architectures[0], "x86_64");
    ck_assert(m5->spot && m5->on_demand && !m5->bare_metal && m5->current_generation && !m5->burstable);
    ck_assert_str_eq(m5->hypervisor, "nitro");
    ck_assert_int_eq(m5->max_enis, 3);
    ck_assert_int_eq(m5->ipv4_per_eni, 10);
    ck_assert_int_eq(m5->default_card_enis, 3); /* no networkCards: all interfaces */
    ck_assert_int_eq(m5->gpu_count, 0);
    ck_assert_double_eq_tol(m5->sustained_clock_ghz, 3.1, 1e-9);
    ck_assert_str_eq(g4->name, "g4dn.xlarge");
    ck_assert_int_eq(g4->gpu_count, 1);
    ck_assert_str_eq(g4->gpu_name, "T4");
    ck_assert_str_eq(g4->gpu_manufacturer, "NVIDIA");
    ck_assert_int_eq(g4->gpu_memory_mib, 16384);
    ck_assert_int_eq(g4->local_storage_gb, 125);
    aws_ec2_instance_type_page_free(&p);
    free(x);

    x = fixture("describe-instance-types-page2.xml");
    ck_assert_int_eq(aws_ec2_parse_instance_types(x, strlen(x), &p, err, sizeof(err)), NS_OK);
    ck_assert_uint_eq(p.n, 1);
    ck_assert_ptr_null(p.next_token);
    ck_assert_str_eq(p.items[0].architectures[0], "arm64");
    ck_assert(p.items[0].bare_metal && !p.items[0].spot && p.items[0].on_demand);
    ck_assert_ptr_null(p.items[0].hypervisor);
    ck_assert_int_eq(p.items[0].max_enis, 8);
    ck_assert_int_eq(p.items[0].default_card_enis, 6); /* the card named by defaultNetworkCardIndex */
    aws_ec2_instance_type_page_free(&p);
    aws_ec2_instance_type_page_free(NULL);
    free(x);
}
END_TEST

START_TEST(test_wrong_document_is_refused)
{
    char *x = fixture("error-throttling.xml");
    aws_ec2_instance_type_page p;
    ck_assert_int_eq(aws_ec2_parse_instance_types(x, strlen(x), &p, err, sizeof(err)), NS_ERR_INVALID_ARGUMENT);
    ck_assert_str_eq(err, "expected a DescribeInstanceTypesResponse document, got <Response>");
    ck_assert_ptr_null(p.doc);
    aws_ec2_instance_type_page_free(&p);
    free(x);
}
END_TEST

START_TEST(test_offerings_and_spot_prices)
{
    char *x = fixture("describe-instance-type-offerings.xml");
    aws_ec2_offering_page o;
    ck_assert_int_eq(aws_ec2_parse_offerings(x, strlen(x), &o, err, sizeof(err)), NS_OK);
    ck_assert_uint_eq(o.n, 3);
    ck_assert_str_eq(o.items[2].instance_type, "g4dn.xlarge");
    ck_assert_str_eq(o.items[2].location, "us-west-2b");
    ck_assert_str_eq(o.items[0].location_type, "availability-zone");
    ck_assert_str_eq(o.next_token, "offerings-page-2");
    aws_ec2_offering_page_free(&o);
    free(x);

    x = fixture("describe-spot-price-history.xml");
    aws_ec2_spot_price_page s;
    ck_assert_int_eq(aws_ec2_parse_spot_prices(x, strlen(x), &s, err, sizeof(err)), NS_OK);
    ck_assert_uint_eq(s.n, 2);
    ck_assert_ptr_null(s.next_token); /* <nextToken/> is the last page */
    ck_assert_double_eq_tol(s.items[0].price, 0.0357, 1e-12);
    ck_assert_str_eq(s.items[1].zone, "us-west-2b");
    ck_assert_str_eq(s.items[1].product_description, "Linux/UNIX");
    ck_assert_int_eq(s.items[0].timestamp_ms, 1714564800000LL);
    ck_assert_int_eq(s.items[1].timestamp_ms, 1714564510000LL);
    aws_ec2_spot_price_page_free(&s);
    free(x);
}
END_TEST

START_TEST(test_zones_subnets_groups)
{
    char *x = fixture("describe-availability-zones.xml");
    aws_ec2_zone_page z;
    ck_assert_int_eq(aws_ec2_parse_zones(x, strlen(x), &z, err, sizeof(err)), NS_OK);
    ck_assert_uint_eq(z.n, 3);
    ck_assert_str_eq(z.items[1].zone_id, "usw2-az2");
    ck_assert_str_eq(z.items[2].zone_type, "local-zone");
    ck_assert_str_eq(z.items[2].opt_in_status, "not-opted-in");
    ck_assert_str_eq(z.items[0].state, "available");
    ck_assert_str_eq(z.items[0].region, "us-west-2");
    aws_ec2_zone_page_free(&z);
    free(x);

    x = fixture("describe-subnets.xml");
    aws_ec2_subnet_page s;
    ck_assert_int_eq(aws_ec2_parse_subnets(x, strlen(x), &s, err, sizeof(err)), NS_OK);
    ck_assert_uint_eq(s.n, 2);
    ck_assert_str_eq(s.items[0].subnet_id, "subnet-0a1b2c3d4e5f60001");
    ck_assert_str_eq(s.items[0].zone_id, "usw2-az1");
    ck_assert_int_eq(s.items[0].available_ips, 8150);
    ck_assert_int_eq(s.items[1].available_ips, 12);
    ck_assert_str_eq(aws_ec2_tag(s.items[0].tags, "Name"), "demo-private-a");
    ck_assert_str_eq(aws_ec2_tag(s.items[1].tags, "karpenter.sh/discovery"), "demo");
    ck_assert_ptr_null(aws_ec2_tag(s.items[1].tags, "Name"));
    ck_assert_uint_eq(aws_ec2_tag_count(s.items[0].tags), 2);
    aws_ec2_subnet_page_free(&s);
    free(x);

    x = fixture("describe-security-groups.xml");
    aws_ec2_security_group_page g;
    ck_assert_int_eq(aws_ec2_parse_security_groups(x, strlen(x), &g, err, sizeof(err)), NS_OK);
    ck_assert_uint_eq(g.n, 1);
    ck_assert_str_eq(g.items[0].group_id, "sg-0123456789abcdef0");
    ck_assert_str_eq(g.items[0].group_name, "demo-node");
    ck_assert_str_eq(g.items[0].vpc_id, "vpc-0123456789abcdef0");
    const char *k, *v;
    ck_assert(aws_ec2_tag_at(g.items[0].tags, 0, &k, &v));
    ck_assert_str_eq(k, "karpenter.sh/discovery");
    ck_assert_str_eq(v, "demo");
    ck_assert(!aws_ec2_tag_at(g.items[0].tags, 1, &k, &v));
    aws_ec2_security_group_page_free(&g);
    free(x);
}
END_TEST

START_TEST(test_images_and_launch_templates)
{
    char *x = fixture("describe-images.xml");
    aws_ec2_image_page m;
    ck_assert_int_eq(aws_ec2_parse_images(x, strlen(x), &m, err, sizeof(err)), NS_OK);
    ck_assert_uint_eq(m.n, 2);
    ck_assert_str_eq(m.items[0].image_id, "ami-0abcdef1234567890");
    ck_assert_str_eq(m.items[0].architecture, "x86_64");
    ck_assert_str_eq(m.items[0].owner_id, "602401143452");
    ck_assert_int_eq(m.items[0].creation_ms, 1714551697000LL);
    ck_assert_int_eq(m.items[0].deprecation_ms, 1777623697000LL);
    ck_assert_int_eq(m.items[1].deprecation_ms, 0);
    ck_assert_str_eq(aws_ec2_tag(m.items[1].tags, "team"), "platform");
    aws_ec2_image_page_free(&m);
    free(x);

    x = fixture("describe-launch-templates.xml");
    aws_ec2_launch_template_page t;
    ck_assert_int_eq(aws_ec2_parse_launch_templates(x, strlen(x), &t, err, sizeof(err)), NS_OK);
    ck_assert_uint_eq(t.n, 1);
    ck_assert_str_eq(t.items[0].id, "lt-0a20c965061f64abc");
    ck_assert_str_eq(t.items[0].name, "nodesmith/demo/1234567890");
    ck_assert_int_eq(t.items[0].default_version, 1);
    ck_assert_int_eq(t.items[0].latest_version, 3);
    ck_assert_str_eq(t.next_token, "lt-page-2");
    aws_ec2_launch_template_page_free(&t);
    free(x);

    x = fixture("create-launch-template.xml");
    ck_assert_int_eq(aws_ec2_parse_create_launch_template(x, strlen(x), &t, err, sizeof(err)), NS_OK);
    ck_assert_uint_eq(t.n, 1);
    ck_assert_str_eq(t.items[0].id, "lt-0b1c2d3e4f5a6b7c8");
    ck_assert_int_eq(t.items[0].create_ms, 1714642200000LL);
    aws_ec2_launch_template_page_free(&t);
    free(x);

    const char *no_id = "<CreateLaunchTemplateResponse><launchTemplate/></CreateLaunchTemplateResponse>";
    ck_assert_int_eq(aws_ec2_parse_create_launch_template(no_id, strlen(no_id), &t, err, sizeof(err)),
                     NS_ERR_INVALID_ARGUMENT);
    aws_ec2_launch_template_page_free(&t);
}
END_TEST

START_TEST(test_create_fleet)
{
    char *x = fixture("create-fleet-partial.xml");
    aws_ec2_fleet_result f;
    ck_assert_int_eq(aws_ec2_parse_create_fleet(x, strlen(x), &f, err, sizeof(err)), NS_OK);
    ck_assert_str_eq(f.fleet_id, "fleet-12a34b55-67cd-8ef9-ba9b-9208dEXAMPLE");
    ck_assert_uint_eq(f.n_instances, 1);
    ck_assert_str_eq(f.instances[0].instance_id, "i-0123456789abcdef0");
    ck_assert_str_eq(f.instances[0].instance_type, "m5.large");
    ck_assert_str_eq(f.instances[0].zone, "us-west-2b");
    ck_assert_str_eq(f.instances[0].subnet_id, "subnet-0a1b2c3d4e5f60002");
    ck_assert_str_eq(f.instances[0].lifecycle, "spot");
    ck_assert_uint_eq(f.n_errors, 2);
    ck_assert_str_eq(f.errors[0].code, "InsufficientInstanceCapacity");
    ck_assert_str_eq(f.errors[0].instance_type, "m5.large");
    ck_assert_str_eq(f.errors[0].zone, "us-west-2a");
    ck_assert_str_eq(f.errors[0].lifecycle, "spot");
    ck_assert_ptr_nonnull(strstr(f.errors[0].message, "sufficient m5.large capacity"));
    ck_assert_str_eq(f.errors[1].code, "UnfulfillableCapacity");
    ck_assert_str_eq(f.errors[1].instance_type, "c5.large");
    aws_ec2_fleet_result_free(&f);
    free(x);

    x = fixture("create-fleet-all-failed.xml");
    ck_assert_int_eq(aws_ec2_parse_create_fleet(x, strlen(x), &f, err, sizeof(err)), NS_OK);
    ck_assert_uint_eq(f.n_instances, 0);
    ck_assert_ptr_null(f.instances);
    ck_assert_uint_eq(f.n_errors, 1);
    ck_assert_str_eq(f.errors[0].lifecycle, "on-demand");
    ck_assert_str_eq(f.errors[0].subnet_id, "subnet-0a1b2c3d4e5f60002");
    aws_ec2_fleet_result_free(&f);
    aws_ec2_fleet_result_free(NULL);
    free(x);
}
END_TEST

START_TEST(test_describe_instances)
{
    char *x = fixture("describe-instances.xml");
    aws_ec2_instance_page p;
    ck_assert_int_eq(aws_ec2_parse_instances(x, strlen(x), &p, err, sizeof(err)), NS_OK);
    ck_assert_uint_eq(p.n, 3); /* two reservations, flattened */
    ck_assert_str_eq(p.next_token, "instances-page-2");
    const aws_ec2_instance *a = &p.items[0], *b = &p.items[1], *c = &p.items[2];
    ck_assert_str_eq(a->instance_id, "i-0123456789abcdef0");
    ck_assert_str_eq(a->state_name, "running");
    ck_assert_int_eq(a->state_code, 16);
    ck_assert_str_eq(a->lifecycle, "spot");
    ck_assert_str_eq(a->zone, "us-west-2b");
    ck_assert_str_eq(a->private_ip, "10.0.1.23");
    ck_assert_int_eq(a->launch_ms, 1714564984000LL);
    ck_assert_str_eq(aws_ec2_tag(a->tags, "karpenter.sh/nodeclaim"), "default-x7k2p");
    ck_assert_str_eq(aws_ec2_tag(a->tags, "kubernetes.io/cluster/demo"), "owned");
    /* the instance's own groupSet, not the reservation's */
    ck_assert_uint_eq(aws_ec2_group_count(a->groups), 2);
    ck_assert_str_eq(aws_ec2_group_at(a->groups, 1), "sg-0fedcba9876543210");
    ck_assert_ptr_null(aws_ec2_group_at(a->groups, 2));
    ck_assert_uint_eq(aws_ec2_group_count(b->groups), 0);
    ck_assert_int_eq(b->state_code, 0);
    ck_assert_ptr_null(b->lifecycle);
    ck_assert_ptr_null(aws_ec2_tag(b->tags, "karpenter.sh/nodeclaim"));
    ck_assert_str_eq(c->state_name, "terminated");
    ck_assert_str_eq(c->capacity_reservation_id, "cr-0123456789abcdef0");
    ck_assert_str_eq(c->capacity_reservation_preference, "capacity-reservations-only");
    ck_assert_ptr_null(a->capacity_reservation_preference);
    ck_assert_int_eq(c->launch_ms, 1714521599000LL);
    ck_assert_ptr_null(c->tags);
    ck_assert_ptr_null(aws_ec2_tag(c->tags, "anything"));
    aws_ec2_instance_page_free(&p);
    free(x);

    const char *empty = "<DescribeInstancesResponse><reservationSet/></DescribeInstancesResponse>";
    ck_assert_int_eq(aws_ec2_parse_instances(empty, strlen(empty), &p, err, sizeof(err)), NS_OK);
    ck_assert_uint_eq(p.n, 0);
    ck_assert_ptr_null(p.next_token);
    aws_ec2_instance_page_free(&p);
}
END_TEST

START_TEST(test_describe_instance_status)
{
    char *x = fixture("describe-instance-status.xml");
    aws_instance_status_page p;
    ck_assert_int_eq(aws_ec2_parse_instance_status(x, strlen(x), &p, err, sizeof(err)), NS_OK);
    ck_assert_uint_eq(p.n, 2);
    ck_assert_str_eq(p.next_token, "status-page-2");
    const aws_instance_status *a = &p.items[0], *b = &p.items[1];
    ck_assert_str_eq(a->instance_id, "i-1a2b3c4d");
    ck_assert_str_eq(a->zone, "us-east-1d");
    /* instanceStatus, then systemStatus, then the event; attachedEbsStatus is not read (Karpenter ignores it) */
    ck_assert_uint_eq(a->n_details, 3);
    const aws_status_detail *inst = &p.details[a->first_detail], *sys = inst + 1, *ev = inst + 2;
    ck_assert_int_eq(inst->category, AWS_STATUS_INSTANCE);
    ck_assert(!inst->failed);
    ck_assert_int_eq(inst->impaired_since_ms, 0);
    ck_assert_int_eq(sys->category, AWS_STATUS_SYSTEM);
    ck_assert_str_eq(sys->name, "reachability");
    ck_assert(sys->failed);
    ck_assert_int_eq(sys->impaired_since_ms, 1714564800000LL);
    ck_assert_int_eq(ev->category, AWS_STATUS_EVENT);
    ck_assert_str_eq(ev->name, "instance-retirement");
    ck_assert(ev->failed);
    ck_assert_int_eq(ev->not_before_ms, 1714744800000LL);
    ck_assert_uint_eq(b->n_details, 2);
    ck_assert(p.details[b->first_detail].failed); /* a failed check with no impairedSince */
    ck_assert(!p.details[b->first_detail + 1].failed);
    aws_instance_status_page_free(&p);
    free(x);
}
END_TEST

/* A field the provider acts on that is missing or unreadable fails the page, naming the item, instance and field. */
START_TEST(test_describe_instance_status_refusals)
{
    static const struct {
        const char *xml, *says;
    } cases[] = {
        {"<DescribeInstanceStatusResponse><instanceStatusSet><item><instanceId>i-1</instanceId><availabilityZone>z"
         "</availabilityZone></item><item><instanceId>i-2</instanceId><availabilityZone>z</availabilityZone>"
         "<systemStatus><details><item><name>reachability</name><status>failed</status><impairedSince>yesterday"
         "</impairedSince></item></details></systemStatus></item></instanceStatusSet></DescribeInstanceStatusResponse>",
         "instanceStatusSet/item 2 (i-2): systemStatus/details/item 1: impairedSince 'yesterday' is not an ISO 8601 "
         "time"},
        {"<DescribeInstanceStatusResponse><instanceStatusSet><item><availabilityZone>z</availabilityZone></item>"
         "</instanceStatusSet></DescribeInstanceStatusResponse>",
         "instanceStatusSet/item 1 (no instanceId): no instanceId"},
        {"<DescribeInstanceStatusResponse><instanceStatusSet><item><instanceId>i-3</instanceId></item>"
         "</instanceStatusSet></DescribeInstanceStatusResponse>",
         "instanceStatusSet/item 1 (i-3): no availabilityZone"},
        {"<DescribeInstanceStatusResponse><instanceStatusSet><item><instanceId>i-4</instanceId><availabilityZone>z"
         "</availabilityZone><instanceStatus><details><item><name>reachability</name></item></details>"
         "</instanceStatus></item></instanceStatusSet></DescribeInstanceStatusResponse>",
         "instanceStatusSet/item 1 (i-4): instanceStatus/details/item 1: no status"},
        {"<DescribeInstanceStatusResponse><instanceStatusSet><item><instanceId>i-5</instanceId><availabilityZone>z"
         "</availabilityZone><eventsSet><item><notBefore>2024-05-03T14:00:00Z</notBefore></item></eventsSet></item>"
         "</instanceStatusSet></DescribeInstanceStatusResponse>",
         "instanceStatusSet/item 1 (i-5): eventsSet/item 1: no code"},
        {"<DescribeInstanceStatusResponse><instanceStatusSet><item><instanceId>i-6</instanceId><availabilityZone>z"
         "</availabilityZone><eventsSet><item><code>instance-stop</code><notBefore>soon</notBefore></item>"
         "</eventsSet></item></instanceStatusSet></DescribeInstanceStatusResponse>",
         "instanceStatusSet/item 1 (i-6): eventsSet/item 1: notBefore 'soon' is not an ISO 8601 time"},
        {"<DescribeInstancesResponse/>", "DescribeInstanceStatusResponse"},
        {"<DescribeInstanceStatusResponse><instanceStatusSet>", "line"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char why[512];
        aws_instance_status_page p;
        ck_assert_int_eq(aws_ec2_parse_instance_status(cases[i].xml, strlen(cases[i].xml), &p, why, sizeof(why)),
                         NS_ERR_INVALID_ARGUMENT);
        ck_assert_msg(strstr(why, cases[i].says) != NULL, "case %zu: '%s' does not say '%s'", i, why, cases[i].says);
        aws_instance_status_page_free(&p);
    }
}
END_TEST

START_TEST(test_terminate)
{
    char *x = fixture("terminate-instances.xml");
    aws_ec2_state_change_page t;
    ck_assert_int_eq(aws_ec2_parse_terminate(x, strlen(x), &t, err, sizeof(err)), NS_OK);
    ck_assert_uint_eq(t.n, 2);
    ck_assert_str_eq(t.items[0].current_state, "shutting-down");
    ck_assert_int_eq(t.items[0].current_code, 32);
    ck_assert_str_eq(t.items[0].previous_state, "running");
    ck_assert_int_eq(t.items[1].previous_code, 48);
    aws_ec2_state_change_page_free(&t);
    free(x);
}
END_TEST

START_TEST(test_error_documents)
{
    aws_api_error e;
    char *x = fixture("error-insufficient-capacity.xml");
    ck_assert(aws_api_error_parse_xml(x, strlen(x), &e));
    ck_assert_str_eq(e.code, "InsufficientInstanceCapacity");
    ck_assert_ptr_nonnull(strstr(e.message, "p4d.24xlarge"));
    ck_assert_str_eq(e.request_id, "ea966190-f9aa-478e-9ede-example");
    free(x);

    x = fixture("error-instance-not-found.xml");
    ck_assert(aws_api_error_parse_xml(x, strlen(x), &e));
    ck_assert_str_eq(e.code, "InvalidInstanceID.NotFound");
    free(x);

    x = fixture("sts-error.xml");
    ck_assert(aws_api_error_parse_xml(x, strlen(x), &e));
    ck_assert_str_eq(e.code, "InvalidIdentityToken");
    ck_assert_str_eq(e.request_id, "2c6e2e4b-1e36-4e6c-9f0e-example");
    free(x);

    x = fixture("describe-subnets.xml");
    ck_assert(!aws_api_error_parse_xml(x, strlen(x), &e));
    ck_assert_str_eq(e.code, "");
    free(x);
    ck_assert(!aws_api_error_parse_xml("<html>gateway timeout", 21, &e));

    aws_api_error_from_json(&e, "com.amazonaws.sqs#QueueDoesNotExist", "The specified queue does not exist.", NULL);
    ck_assert_str_eq(e.code, "QueueDoesNotExist");
    aws_api_error_from_json(&e, "ThrottlingException", NULL, "req-1");
    ck_assert_str_eq(e.code, "ThrottlingException");
    ck_assert_str_eq(e.request_id, "req-1");
}
END_TEST

START_TEST(test_sts_web_identity)
{
    char *x = fixture("sts-assume-role-with-web-identity.xml");
    aws_creds c = {0};
    ck_assert_int_eq(aws_sts_parse_web_identity(x, strlen(x), &c, err, sizeof(err)), NS_OK);
    ck_assert_str_eq(c.access_key_id, "ASIAIOSFODNN7EXAMPLE");
    ck_assert_str_eq(c.secret_access_key, "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY");
    ck_assert_str_eq(c.session_token, "FwoGZXIvYXdzEXAMPLEtokenFROMsts//////////");
    ck_assert_int_eq(c.expiration_ms, 1714568400000LL);
    aws_creds_clear(&c);
    ck_assert_ptr_null(c.secret_access_key);
    free(x);

    x = fixture("sts-error.xml");
    ck_assert_int_eq(aws_sts_parse_web_identity(x, strlen(x), &c, err, sizeof(err)), NS_ERR_INVALID_ARGUMENT);
    free(x);
    const char *no_exp = "<AssumeRoleWithWebIdentityResponse><AssumeRoleWithWebIdentityResult><Credentials>"
                         "<AccessKeyId>A</AccessKeyId><SecretAccessKey>S</SecretAccessKey><SessionToken>T"
                         "</SessionToken><Expiration>soon</Expiration></Credentials></AssumeRoleWithWebIdentityResult>"
                         "</AssumeRoleWithWebIdentityResponse>";
    ck_assert_int_eq(aws_sts_parse_web_identity(no_exp, strlen(no_exp), &c, err, sizeof(err)),
                     NS_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(err, "Expiration"));
    ck_assert(!aws_creds_present(&c));
}
END_TEST

START_TEST(test_iso8601_and_numbers)
{
    int64_t ms = 0;
    ck_assert(aws_parse_iso8601_ms("1970-01-01T00:00:00Z", &ms) && ms == 0);
    ck_assert(aws_parse_iso8601_ms("2024-05-01T12:00:00.5Z", &ms) && ms == 1714564800500LL);
    ck_assert(aws_parse_iso8601_ms("2024-05-01T12:00:00.123456Z", &ms) && ms == 1714564800123LL);
    ck_assert(aws_parse_iso8601_ms("2024-05-01T12:00:00+00:00", &ms) && ms == 1714564800000LL);
    ck_assert(!aws_parse_iso8601_ms("2024-05-01T12:00:00", &ms));
    ck_assert(!aws_parse_iso8601_ms("2024-05-01T12:00:00+02:00", &ms));
    ck_assert(!aws_parse_iso8601_ms("2024-13-01T12:00:00Z", &ms));
    ck_assert(!aws_parse_iso8601_ms(NULL, &ms));
    /* AWS Health's startTime */
    ck_assert(aws_parse_rfc1123_ms("Sat, 05 Jun 2021 08:00:00 GMT", &ms) && ms == 1622880000000LL);
    ck_assert(aws_parse_rfc1123_ms("Wed, 01 May 2024 12:00:00 GMT", &ms) && ms == 1714564800000LL);
    ck_assert(aws_parse_rfc1123_ms("01 May 2024 12:00:00 GMT", &ms) && ms == 1714564800000LL);
    ck_assert(!aws_parse_rfc1123_ms("Wed, 01 Foo 2024 12:00:00 GMT", &ms));
    ck_assert(!aws_parse_rfc1123_ms("Wed, 01 May 2024 12:00:00 PST", &ms));
    ck_assert(!aws_parse_rfc1123_ms("Wed, 01 May 2024 12:00:00 GMT trailing", &ms));
    ck_assert(!aws_parse_rfc1123_ms("2024-05-01T12:00:00Z", &ms));
    ck_assert(!aws_parse_rfc1123_ms(NULL, &ms));
    ck_assert_int_eq(aws_parse_i64("42", -1), 42);
    ck_assert_int_eq(aws_parse_i64("42x", -1), -1);
    ck_assert_int_eq(aws_parse_i64(NULL, 7), 7);
    ck_assert_double_eq(aws_parse_double("0.5", -1), 0.5);
    ck_assert(aws_parse_bool("true", false) && !aws_parse_bool("false", true) && aws_parse_bool("yes", true));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("aws_xml");
    TCase *tree = tcase_create("tree");
    tcase_add_test(tree, test_tree_basics);
    tcase_add_test(tree, test_tree_refusals);
    tcase_add_test(tree, test_iso8601_and_numbers);
    suite_add_tcase(s, tree);
    TCase *ec2 = tcase_create("ec2");
    tcase_add_test(ec2, test_instance_types_pagination);
    tcase_add_test(ec2, test_wrong_document_is_refused);
    tcase_add_test(ec2, test_offerings_and_spot_prices);
    tcase_add_test(ec2, test_zones_subnets_groups);
    tcase_add_test(ec2, test_images_and_launch_templates);
    tcase_add_test(ec2, test_create_fleet);
    tcase_add_test(ec2, test_describe_instances);
    tcase_add_test(ec2, test_terminate);
    tcase_add_test(ec2, test_describe_instance_status);
    tcase_add_test(ec2, test_describe_instance_status_refusals);
    suite_add_tcase(s, ec2);
    TCase *errs = tcase_create("errors");
    tcase_add_test(errs, test_error_documents);
    tcase_add_test(errs, test_sts_web_identity);
    suite_add_tcase(s, errs);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
