/*
 * Parses EC2-shaped XML answers of about 1.2 MB with the AWS provider's expat tree builder (aws_xml.c) and prints the
 * time per parse and the throughput. Two shapes: one set holding 20000 short items (a parent with many children,
 * the case that was quadratic when each child re-copied its parent's text), and DescribeInstances-like items of
 * about 600 bytes each, and one set of 19000 empty items each on an indented line (1.2 MB of white space in one
 * element's text).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "prov_buf.h"
#include "aws_xml.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void many_children(prov_buf *b, size_t target)
{
    prov_buf_puts(b, "<DescribeSpotPriceHistoryResponse xmlns=\"http://ec2.amazonaws.com/doc/2016-11-15/\">\n"
                    "  <spotPriceHistorySet>\n");
    for (int i = 0; b->len < target; i++)
        prov_buf_printf(b, "    <item><instanceType>m5.large</instanceType><spotPrice>0.%06d</spotPrice></item>\n",
                       i);
    prov_buf_puts(b, "  </spotPriceHistorySet>\n</DescribeSpotPriceHistoryResponse>\n");
}

/* Pretty-printed with deep indentation: the parent's text (white space between children) grows with every child. */
static void indented_children(prov_buf *b, size_t target)
{
    prov_buf_puts(b, "<DescribeSubnetsResponse><subnetSet>");
    while (b->len < target)
        prov_buf_puts(b, "\n                                                        <item/>");
    prov_buf_puts(b, "\n</subnetSet></DescribeSubnetsResponse>\n");
}

static void instances(prov_buf *b, size_t target)
{
    prov_buf_puts(b, "<DescribeInstancesResponse xmlns=\"http://ec2.amazonaws.com/doc/2016-11-15/\">\n"
                    "  <reservationSet>\n");
    for (int i = 0; b->len < target; i++)
        prov_buf_printf(b,
                       "    <item>\n      <reservationId>r-%017d</reservationId>\n      <instancesSet>\n"
                       "        <item>\n          <instanceId>i-%017d</instanceId>\n"
                       "          <imageId>ami-0123456789abcdef0</imageId>\n"
                       "          <instanceState><code>16</code><name>running</name></instanceState>\n"
                       "          <instanceType>m5.large</instanceType>\n"
                       "          <placement><availabilityZone>us-east-1a</availabilityZone></placement>\n"
                       "          <launchTime>2024-05-01T08:21:37.000Z</launchTime>\n"
                       "          <tagSet>\n            <item><key>karpenter.sh/nodepool</key><value>default</value>"
                       "</item>\n            <item><key>karpenter.sh/nodeclaim</key><value>default-%d</value>"
                       "</item>\n          </tagSet>\n        </item>\n      </instancesSet>\n    </item>\n",
                       i, i, i);
    prov_buf_puts(b, "  </reservationSet>\n</DescribeInstancesResponse>\n");
}

static int run(const char *shape, void (*build)(prov_buf *, size_t))
{
    prov_buf doc = PROV_BUF_INIT;
    build(&doc, 1200 * 1000);
    if (prov_buf_failed(&doc))
        return -1;
    const int rounds = 10;
    double best = 1e9;
    for (int r = 0; r < rounds; r++) {
        aws_xml_node *root = NULL;
        char err[256];
        double t0 = now_s();
        int rc = aws_xml_parse(doc.data, doc.len, &root, err, sizeof(err));
        double dt = now_s() - t0;
        if (rc != NS_OK) {
            fprintf(stderr, "%s: parse failed: %s\n", shape, err);
            prov_buf_free(&doc);
            return -1;
        }
        aws_xml_free(root);
        if (dt < best)
            best = dt;
    }
    printf("aws_xml %-15s %8.2f MB  best of %d: %8.2f ms  %8.1f MB/s\n", shape, (double)doc.len / 1e6, rounds,
           best * 1e3, (double)doc.len / 1e6 / best);
    prov_buf_free(&doc);
    return 0;
}

int main(void)
{
    if (run("many-children", many_children) != 0 || run("indented", indented_children) != 0 ||
        run("instances", instances) != 0)
        return EXIT_FAILURE;
    return EXIT_SUCCESS;
}
