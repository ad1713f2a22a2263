/* Locating and reading the AWS tests' fixture files. meson sets AWS_TEST_DATA to the test/aws source folder. */
#ifndef NS_AWS_TEST_FILES_H
#define NS_AWS_TEST_FILES_H

#include <stddef.h>

/* "<AWS_TEST_DATA>/<relative>"; the caller frees it. Exits the test program when AWS_TEST_DATA is unset. */
char *test_data_path(const char *relative);

/* The whole file, NUL-terminated, or NULL when it cannot be read; *len (may be NULL) gets its size. Caller frees. */
char *test_read_file(const char *path, size_t *len);

/* test_read_file(test_data_path(relative)), failing the test when the file is missing. Caller frees. */
char *test_fixture(const char *relative);

#endif
