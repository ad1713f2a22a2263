#include "test_files.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

char *test_data_path(const char *relative)
{
    const char *root = getenv("AWS_TEST_DATA");
    if (!root) {
        fprintf(stderr, "AWS_TEST_DATA is not set; run the tests through meson test\n");
        exit(2);
    }
    size_t n = (size_t)snprintf(NULL, 0, "%s/%s", root, relative) + 1;
    char *path = malloc(n);
    if (!path)
        abort();
    snprintf(path, n, "%s/%s", root, relative);
    return path;
}

char *test_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *data = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n + 4096 + 1 > cap) {
            cap = cap ? cap * 2 : 8192;
            char *p = realloc(data, cap);
            if (!p) {
                free(data);
                fclose(f);
                return NULL;
            }
            data = p;
        }
        size_t got = fread(data + n, 1, 4096, f);
        n += got;
        if (got < 4096)
            break;
    }
    fclose(f);
    data[n] = '\0';
    if (len)
        *len = n;
    return data;
}

char *test_fixture(const char *relative)
{
    char *path = test_data_path(relative);
    char *text = test_read_file(path, NULL);
    ck_assert_msg(text != NULL, "cannot read fixture %s", path);
    free(path);
    return text;
}
