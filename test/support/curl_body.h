/* A libcurl write callback that gathers a response body, for the tests that talk to emulators and fake hosts. */
#ifndef TEST_CURL_BODY_H
#define TEST_CURL_BODY_H

#include <stddef.h>

typedef struct curl_body {
    char *data; /* NUL-terminated; owned by the caller, free() it */
    size_t len;
} curl_body;

/* CURLOPT_WRITEFUNCTION with CURLOPT_WRITEDATA a curl_body *: appends, returns 0 (abort) when out of memory. */
size_t curl_body_collect(char *ptr, size_t size, size_t n, void *body);

#endif
