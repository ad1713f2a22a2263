/*
 * Lower-case hex of bytes and of their SHA-256, for the providers' request signing (AWS SigV4, Alibaba ACS3) and
 * nonces. Built into each provider that uses it (provider_digest_sources); needs OpenSSL's libcrypto.
 */
#ifndef NS_PROV_DIGEST_H
#define NS_PROV_DIGEST_H

#include <stddef.h>

/* Writes the 2n lower-case hex digits of bytes[0..n) and a NUL into out (2n + 1 bytes, caller's). */
void prov_hex(const unsigned char *bytes, size_t n, char *out);

/* Writes the lower-case hex SHA-256 of data[0..len) (data may be NULL when len is 0) into hex (65 bytes with the
 * NUL). NS_OK or NS_ERR_INTERNAL when OpenSSL fails. */
int prov_sha256_hex(const void *data, size_t len, char hex[65]);

#endif
