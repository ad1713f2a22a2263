/* Node classes: an EC2NodeClass (v1, v1beta1) or AWSNodeTemplate spec as JSON, checked field by field by aws.so's
 * reader. The first byte picks the kind. */
#include <cjson/cJSON.h>
#include <stdlib.h>

#include "aws_nodeclass_spec.h"
#include "fake_host.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const kinds[][2] = {{"karpenter.k8s.aws/v1", "EC2NodeClass"},
                                           {"karpenter.k8s.aws/v1beta1", "EC2NodeClass"},
                                           {"karpenter.k8s.aws/v1alpha1", "AWSNodeTemplate"}};
    if (size < 1)
        return 0;
    static fake_host host;
    fake_host_init(&host);
    char *text = fuzz_strndup(data + 1, size - 1);
    cJSON *spec = cJSON_Parse(text);
    if (spec) {
        const char *const *k = kinds[data[0] % 3];
        ns_nodeclass nc = {sizeof(nc), k[0], k[1], "fuzz", (const ns_json *)spec};
        aws_nodeclass_spec out;
        char err[512];
        aws_nodeclass_spec_parse(&host.table, &nc, &out, err, sizeof(err));
        cJSON_Delete(spec);
    }
    free(text);
    return 0;
}
