/* EC2's and STS's XML answers: the generic reader and the DescribeInstanceTypes, DescribeInstanceTypeOfferings,
 * DescribeSpotPriceHistory, AssumeRoleWithWebIdentity and DescribeInstanceStatus parsers. The first byte picks the
 * parser. */
#include "aws_ec2_parse.h"
#include "aws_instance_status_parse.h"
#include "aws_sts_parse.h"
#include "aws_xml.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const char *xml = (const char *)data + 1;
    size_t len = size - 1;
    char err[512];
    switch (data[0] % 6) {
    case 0: {
        aws_xml_node *root = NULL;
        if (aws_xml_parse(xml, len, &root, err, sizeof(err)) == 0)
            aws_xml_text(root, "reservationSet/item/instancesSet/item/instanceId");
        aws_xml_free(root);
        break;
    }
    case 1: {
        aws_ec2_instance_type_page page = {0};
        aws_ec2_parse_instance_types(xml, len, &page, err, sizeof(err));
        aws_ec2_instance_type_page_free(&page);
        break;
    }
    case 2: {
        aws_ec2_offering_page page = {0};
        aws_ec2_parse_offerings(xml, len, &page, err, sizeof(err));
        aws_ec2_offering_page_free(&page);
        break;
    }
    case 3: {
        aws_ec2_spot_price_page page = {0};
        aws_ec2_parse_spot_prices(xml, len, &page, err, sizeof(err));
        aws_ec2_spot_price_page_free(&page);
        break;
    }
    case 5: {
        aws_instance_status_page page = {0};
        aws_ec2_parse_instance_status(xml, len, &page, err, sizeof(err));
        aws_instance_status_page_free(&page);
        break;
    }
    default: {
        aws_creds creds = {0};
        aws_sts_parse_web_identity(xml, len, &creds, err, sizeof(err));
        aws_creds_clear(&creds);
        break;
    }
    }
    return 0;
}
