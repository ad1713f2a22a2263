/* Replays inputs through a harness without libFuzzer: each argument is a file, or a directory whose files are
 * replayed in name order. Exits non-zero when an input cannot be read; a crash is the harness's own failure. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int replay_file(const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        fprintf(stderr, "cannot open %s\n", path);
        return 1;
    }
    size_t cap = 4096, n = 0, got;
    uint8_t *buf = malloc(cap);
    while (buf && (got = fread(buf + n, 1, cap - n, fp)) > 0) {
        n += got;
        if (n == cap) {
            uint8_t *grown = realloc(buf, cap *= 2);
            if (!grown)
                free(buf);
            buf = grown;
        }
    }
    fclose(fp);
    if (!buf) {
        fprintf(stderr, "out of memory reading %s\n", path);
        return 1;
    }
    LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

int main(int argc, char **argv)
{
    int failed = 0, replayed = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) < 0) {
            fprintf(stderr, "cannot read %s\n", argv[i]);
            failed = 1;
            continue;
        }
        if (!S_ISDIR(st.st_mode)) {
            failed |= replay_file(argv[i]);
            replayed++;
            continue;
        }
        struct dirent **names = NULL;
        int n = scandir(argv[i], &names, NULL, by_name);
        for (int j = 0; j < n; j++) {
            char path[4096];
            if (names[j]->d_name[0] != '.' &&
                snprintf(path, sizeof(path), "%s/%s", argv[i], names[j]->d_name) < (int)sizeof(path)) {
                fprintf(stderr, "replaying %s\n", path);
                failed |= replay_file(path);
                replayed++;
            }
            free(names[j]);
        }
        free(names);
    }
    printf("%d input(s) replayed\n", replayed);
    return failed;
}
