/* User data: a node class's custom userData merged into what aws.so builds, for each AMI family (MIME multipart for
 * AL2 and AL2023, TOML for Bottlerocket, PowerShell for Windows). The first byte picks the family (low six bits),
 * instanceStorePolicy RAID0 (0x40) and Bottlerocket's default bind (0x80). */
#include <stdlib.h>

#include "aws_toml.h"
#include "aws_userdata.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    char *custom = fuzz_strndup(data + 1, size - 1);
    char err[512], *out = NULL;
    aws_bootstrap b = {
        .family = (aws_ami_family)((data[0] & 0x3f) % (AWS_FAMILY_CUSTOM + 1)),
        .cluster_name = "fuzz",
        .endpoint = "https://fuzz.example.com",
        .ca_bundle = "Q0E=",
        .cluster_cidr = "10.100.0.0/16",
        .custom = custom,
        .instance_store_raid0 = (data[0] & 0x40) != 0,
        .bottlerocket_default_bind = (data[0] & 0x80) != 0,
    };
    aws_userdata_build(&b, &out, err, sizeof(err));
    free(out);
    aws_toml *t = NULL;
    if (aws_toml_parse(custom, &t, err, sizeof(err)) == 0)
        free(aws_toml_serialize(t));
    aws_toml_free(t);
    free(custom);
    return 0;
}
