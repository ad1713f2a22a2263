/*
 * The libFuzzer entry point every harness in fuzz/ defines. In a `-Dfuzz=true` clang build each harness is linked
 * with libFuzzer; in every other build it is linked with replay_main.c, which feeds it the committed corpus, so the
 * crashes the fuzzers found stay fixed under gcc too.
 */
#ifndef NS_FUZZ_H
#define NS_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A NUL-terminated copy of the input (parsers of C strings); the caller frees it. Aborts when out of memory. */
char *fuzz_strndup(const uint8_t *data, size_t size);

#endif
