/* Launch templates: one per node class and configuration (image, security groups, instance profile, user data,
 * metadata options, block devices, monitoring, public IP), named after a hash of everything in it so that a changed
 * node class gets a new template, as Karpenter does. Templates known to exist are remembered by name, with when a
 * launch last used them: aws_template_gc.c deletes those no launch uses any more. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "aws_provider.h"
#include "aws_query.h"
#include "prov_digest.h"

#define LT "LaunchTemplateData."

static bool cached_template(aws_state *s, const char *name, char *id, size_t len)
{
    bool found = false;
    int64_t now = s->host->now_ms(s->ctx);
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < s->n_templates && !found; i++) {
        if (strcmp(s->templates[i].name, name) != 0)
            continue;
        found = aws_copy(id, len, s->templates[i].id);
        s->templates[i].used_ms = now; /* in use: the sweep keeps it */
    }
    pthread_mutex_unlock(&s->lock);
    return found;
}

/* Remembers a template this launch uses. Out of memory, it stays unknown: the next launch asks EC2 for it again. */
static void remember_template(aws_state *s, const char *name, const char *id)
{
    int64_t now = s->host->now_ms(s->ctx);
    pthread_mutex_lock(&s->lock);
    size_t i = 0;
    while (i < s->n_templates && strcmp(s->templates[i].name, name) != 0)
        i++;
    if (i == s->n_templates && s->n_templates == s->cap_templates) {
        size_t cap = s->cap_templates ? 2 * s->cap_templates : 16;
        aws_template_entry *more = realloc(s->templates, cap * sizeof(*more));
        if (more) {
            s->templates = more;
            s->cap_templates = cap;
        }
    }
    if (i < s->cap_templates) {
        if (i == s->n_templates)
            s->n_templates++;
        aws_copy(s->templates[i].name, sizeof(s->templates[i].name), name);
        aws_copy(s->templates[i].id, sizeof(s->templates[i].id), id);
        s->templates[i].used_ms = now;
    }
    pthread_mutex_unlock(&s->lock);
}

void aws_template_forget(aws_state *s)
{
    pthread_mutex_lock(&s->lock);
    s->n_templates = 0;
    pthread_mutex_unlock(&s->lock);
}

static int find_template(aws_state *s, const char *name, char *id, size_t len, bool *found)
{
    aws_query q;
    aws_query_init(&q, "DescribeLaunchTemplates", AWS_EC2_VERSION);
    aws_query_add(&q, "LaunchTemplateName.1", name);
    ns_http_response *resp = NULL;
    int rc = aws_client_query(s->client, "ec2", "DescribeLaunchTemplates", aws_query_body(&q), aws_query_len(&q),
                              &resp, NULL);
    aws_query_free(&q);
    *found = false;
    if (rc == NS_ERR_NOT_FOUND)
        return NS_OK;
    if (rc != NS_OK)
        return rc;
    aws_ec2_launch_template_page page;
    char err[256];
    rc = aws_ec2_parse_launch_templates(resp->body, resp->body_len, &page, err, sizeof(err));
    s->host->http_response_free(resp);
    if (rc == NS_OK && page.n > 0 && page.items[0].id)
        *found = aws_copy(id, len, page.items[0].id);
    aws_ec2_launch_template_page_free(&page);
    return rc == NS_OK ? NS_OK
                       : NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "ec2 DescribeLaunchTemplates: unexpected answer: %s",
                                  err);
}

typedef struct device {
    const char *name;
    int64_t size_gib;
} device;

/* The family's root volume (and Bottlerocket's data volume) when the node class names no block devices. */
static size_t default_devices(aws_ami_family f, device out[2])
{
    switch (f) {
    case AWS_FAMILY_BOTTLEROCKET:
        out[0] = (device){"/dev/xvda", 4};
        out[1] = (device){"/dev/xvdb", 20};
        return 2;
    case AWS_FAMILY_WINDOWS2019:
    case AWS_FAMILY_WINDOWS2022:
        out[0] = (device){"/dev/sda1", 50};
        return 1;
    case AWS_FAMILY_CUSTOM:
        return 0;
    default:
        out[0] = (device){"/dev/xvda", 20};
        return 1;
    }
}

/* LaunchTemplateData.BlockDeviceMapping.<k>.<field> = value */
static void add_bdm(aws_query *q, size_t k, const char *field, const char *value)
{
    aws_query_addf(q, value, LT "BlockDeviceMapping.%zu.%s", k, field);
}

static void add_bdm_int(aws_query *q, size_t k, const char *field, int64_t value)
{
    char text[24];
    snprintf(text, sizeof(text), "%lld", (long long)value);
    add_bdm(q, k, field, text);
}

static void add_block_devices(aws_query *q, const aws_nodeclass_spec *spec)
{
    if (spec->n_block_devices == 0) {
        device d[2];
        size_t n = default_devices(spec->family, d);
        for (size_t i = 0; i < n; i++) {
            add_bdm(q, i + 1, "DeviceName", d[i].name);
            add_bdm_int(q, i + 1, "Ebs.VolumeSize", d[i].size_gib);
            add_bdm(q, i + 1, "Ebs.VolumeType", "gp3");
            add_bdm(q, i + 1, "Ebs.Encrypted", "true");
            add_bdm(q, i + 1, "Ebs.DeleteOnTermination", "true");
        }
        return;
    }
    for (size_t i = 0; i < spec->n_block_devices; i++) {
        const aws_block_device *b = &spec->block_devices[i];
        size_t k = i + 1;
        add_bdm(q, k, "DeviceName", b->device_name);
        if (b->volume_size_gib)
            add_bdm_int(q, k, "Ebs.VolumeSize", b->volume_size_gib);
        if (b->volume_type)
            add_bdm(q, k, "Ebs.VolumeType", b->volume_type);
        if (b->iops)
            add_bdm_int(q, k, "Ebs.Iops", b->iops);
        if (b->throughput)
            add_bdm_int(q, k, "Ebs.Throughput", b->throughput);
        if (b->encrypted >= 0)
            add_bdm(q, k, "Ebs.Encrypted", b->encrypted ? "true" : "false");
        if (b->kms_key_id)
            add_bdm(q, k, "Ebs.KmsKeyId", b->kms_key_id);
        if (b->delete_on_termination >= 0)
            add_bdm(q, k, "Ebs.DeleteOnTermination", b->delete_on_termination ? "true" : "false");
        if (b->snapshot_id)
            add_bdm(q, k, "Ebs.SnapshotId", b->snapshot_id);
    }
}

/* Everything the template holds, as CreateLaunchTemplate parameters. */
static int template_data(aws_state *s, const aws_nodeclass_view *v, const aws_image *image, const char *user_data,
                         const char *reservation_id, aws_query *q)
{
    const aws_nodeclass_spec *spec = &v->spec;
    aws_query_add(q, LT "ImageId", image->id);
    /* As Karpenter's targeted launch mode: a reserved launch goes into its reservation only; the other launches of a
     * node class that selects reservations stay out of open reservations, which only reserved offerings use. */
    if (reservation_id) {
        aws_query_add(q, LT "CapacityReservationSpecification.CapacityReservationPreference",
                      "capacity-reservations-only");
        aws_query_add(q, LT "CapacityReservationSpecification.CapacityReservationTarget.CapacityReservationId",
                      reservation_id);
    } else if (spec->n_reservations) {
        aws_query_add(q, LT "CapacityReservationSpecification.CapacityReservationPreference", "none");
    }
    if (spec->associate_public_ip >= 0) {
        /* a public-IP choice needs an explicit network interface, which then carries the security groups */
        aws_query_add(q, LT "NetworkInterface.1.DeviceIndex", "0");
        aws_query_add(q, LT "NetworkInterface.1.AssociatePublicIpAddress", spec->associate_public_ip ? "true" : "false");
        for (size_t i = 0; i < v->n_security_groups; i++)
            aws_query_addf(q, v->security_groups[i], LT "NetworkInterface.1.SecurityGroupId.%zu", i + 1);
    } else {
        for (size_t i = 0; i < v->n_security_groups; i++)
            aws_query_addf(q, v->security_groups[i], LT "SecurityGroupId.%zu", i + 1);
    }
    if (v->instance_profile)
        aws_query_add(q, LT "IamInstanceProfile.Name", v->instance_profile);
    aws_query_add(q, LT "MetadataOptions.HttpEndpoint", spec->http_endpoint);
    aws_query_add(q, LT "MetadataOptions.HttpProtocolIpv6", spec->http_protocol_ipv6);
    char hops[24];
    snprintf(hops, sizeof(hops), "%lld", (long long)spec->http_put_response_hop_limit);
    aws_query_add(q, LT "MetadataOptions.HttpPutResponseHopLimit", hops);
    aws_query_add(q, LT "MetadataOptions.HttpTokens", spec->http_tokens);
    add_block_devices(q, spec);
    if (spec->detailed_monitoring >= 0)
        aws_query_add(q, LT "Monitoring.Enabled", spec->detailed_monitoring ? "true" : "false");
    if (user_data && *user_data) {
        size_t n = strlen(user_data);
        char *encoded = malloc(4 * ((n + 2) / 3) + 1);
        if (!encoded)
            return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "out of memory encoding user data");
        EVP_EncodeBlock((unsigned char *)encoded, (const unsigned char *)user_data, (int)n);
        aws_query_add(q, LT "UserData", encoded);
        free(encoded);
    }
    return aws_query_failed(q) ? NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "out of memory building a launch template")
                               : NS_OK;
}

/* "nodesmith/<cluster>/<nodeclass>/<hash of the data>"; EC2 allows 128 characters, so a long one is the hash alone. */
static void template_name(aws_state *s, const aws_nodeclass_view *v, const aws_query *data, char *name, size_t len)
{
    char hash[65];
    prov_sha256_hex(aws_query_body(data), aws_query_len(data), hash);
    int n = snprintf(name, len, "nodesmith/%s/%s/%.16s", s->cluster, v->spec.name, hash);
    if (n < 0 || (size_t)n >= len)
        snprintf(name, len, "nodesmith/%.40s", hash);
}

static void add_template_tags(aws_state *s, const aws_nodeclass_view *v, aws_query *q)
{
    aws_query_add(q, "TagSpecification.1.ResourceType", "launch-template");
    aws_query_add(q, "TagSpecification.1.Tag.1.Key", AWS_TAG_CLUSTER_LT);
    aws_query_add(q, "TagSpecification.1.Tag.1.Value", s->cluster);
    aws_query_add(q, "TagSpecification.1.Tag.2.Key", AWS_TAG_MANAGED_BY);
    aws_query_add(q, "TagSpecification.1.Tag.2.Value", s->cluster);
    aws_query_add(q, "TagSpecification.1.Tag.3.Key", AWS_TAG_NODECLASS);
    aws_query_add(q, "TagSpecification.1.Tag.3.Value", v->spec.name);
    for (size_t i = 0; i < v->spec.n_tags; i++) {
        aws_query_addf(q, v->spec.tags[i].key, "TagSpecification.1.Tag.%zu.Key", i + 4);
        aws_query_addf(q, v->spec.tags[i].value, "TagSpecification.1.Tag.%zu.Value", i + 4);
    }
}

static int create_template(aws_state *s, const aws_nodeclass_view *v, const aws_image *image, const char *name,
                           aws_query *q, char *id, size_t len)
{
    aws_query_add(q, "LaunchTemplateName", name);
    add_template_tags(s, v, q);
    ns_http_response *resp = NULL;
    aws_api_error e;
    int rc = aws_query_failed(q) ? NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "out of memory creating template %s",
                                            name)
                                 : aws_client_query(s->client, "ec2", "CreateLaunchTemplate", aws_query_body(q),
                                                    aws_query_len(q), &resp, &e);
    if (rc != NS_OK) {
        /* Another launch (or an earlier attempt whose answer was lost) created it first: use that one. */
        bool found = false;
        if (strcmp(e.code, "InvalidLaunchTemplateName.AlreadyExistsException") == 0 &&
            find_template(s, name, id, len, &found) == NS_OK && found)
            return NS_OK;
        return rc;
    }
    aws_ec2_launch_template_page page;
    char err[256];
    rc = aws_ec2_parse_create_launch_template(resp->body, resp->body_len, &page, err, sizeof(err));
    s->host->http_response_free(resp);
    if (rc == NS_OK && !aws_copy(id, len, page.items[0].id))
        rc = NS_ERR_INTERNAL;
    aws_ec2_launch_template_page_free(&page);
    if (rc != NS_OK)
        return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "ec2 CreateLaunchTemplate %s: unexpected answer: %s", name,
                        err);
    ns_label fields[] = {{"name", name}, {"id", id}, {"image", image->id}};
    s->host->log(s->ctx, NS_LOG_INFO, "aws launch template created", fields, 3);
    return NS_OK;
}

int aws_template_ensure(aws_state *s, const aws_nodeclass_view *v, const aws_image *image, const char *user_data,
                        const char *reservation_id, char *id, size_t len)
{
    aws_query q;
    aws_query_init(&q, "CreateLaunchTemplate", AWS_EC2_VERSION);
    int rc = template_data(s, v, image, user_data, reservation_id, &q);
    char name[129];
    if (rc == NS_OK) {
        template_name(s, v, &q, name, sizeof(name));
        if (!cached_template(s, name, id, len)) {
            bool found = false;
            rc = find_template(s, name, id, len, &found);
            if (rc == NS_OK && !found)
                rc = create_template(s, v, image, name, &q, id, len);
            if (rc == NS_OK)
                remember_template(s, name, id);
        }
    }
    aws_query_free(&q);
    return rc;
}
