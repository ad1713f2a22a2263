#include "prov_digest.h"

#include <openssl/evp.h>

#include <nodesmith/provider.h>

void prov_hex(const unsigned char *bytes, size_t n, char *out)
{
    static const char HEX[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = HEX[bytes[i] >> 4];
        out[2 * i + 1] = HEX[bytes[i] & 15];
    }
    out[2 * n] = '\0';
}

int prov_sha256_hex(const void *data, size_t len, char hex[65])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    if (!EVP_Digest(data ? data : "", len, md, &mdlen, EVP_sha256(), NULL) || mdlen != 32)
        return NS_ERR_INTERNAL;
    prov_hex(md, 32, hex);
    return NS_OK;
}
