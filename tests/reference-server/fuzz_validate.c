/* fuzz_validate.c - fuzz target over the createCategory body validator.
 *
 * Built with -DPETSTORE_FUZZ=ON (clang) it is a libFuzzer target; in every
 * other build main() replays the seed corpus (fixtures/fuzz/validate/) so
 * the same invariants run in each ctest. Invariants, checked with abort():
 * a rejected body has a code and a message; an accepted body's name and
 * description are valid UTF-8, and rendering them as a Category and
 * validating that again gives back exactly the same bytes (round-trip). */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/buf.h"
#include "core/json.h"
#include "reference-server/responses.h"
#include "reference-server/validate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(bool ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_validate: invariant broken: %s\n", what);
        abort();
    }
}

static void one(const char *body, size_t len, ps_fault_set faults)
{
    ps_new_category nc;
    int rc = ps_validate_new_category(body, len, faults, &nc);
    if (rc != 0) {
        check(nc.code != NULL && nc.code[0] != '\0', "a rejected body has a code");
        check(nc.message[0] != '\0', "a rejected body has a message");
        ps_new_category_free(&nc);
        return;
    }
    check(nc.code == NULL, "an accepted body has no code");
    check(nc.name != NULL, "an accepted body has a name");
    check(ps_utf8_valid(nc.name, nc.name_len), "the name is UTF-8");
    if (nc.has_description)
        check(ps_utf8_valid(nc.description, nc.description_len), "the description is UTF-8");
    ps_buf out = PS_BUF_INIT;
    ps_render_category(&out, 1, nc.name, nc.name_len, nc.description, nc.description_len,
                       nc.has_description);
    ps_new_category again;
    check(ps_validate_new_category(out.data, out.len, 0, &again) == 0, "the rendering validates");
    check(again.name_len == nc.name_len && memcmp(again.name, nc.name, nc.name_len) == 0,
          "the name round-trips");
    check(again.has_description == nc.has_description, "description presence round-trips");
    if (nc.has_description)
        check(again.description_len == nc.description_len &&
                  memcmp(again.description, nc.description, nc.description_len) == 0,
              "the description round-trips");
    ps_new_category_free(&again);
    ps_buf_free(&out);
    ps_new_category_free(&nc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const ps_fault_set lenient = /* the fault paths too */
        (ps_fault_set)1 << PS_FAULT_MISSING_NAME_ACCEPTED | (ps_fault_set)1
                                                                << PS_FAULT_WRONG_TYPE_ACCEPTED;
    one((const char *)data, size, 0);
    one((const char *)data, size, lenient);
    return 0;
}

#ifndef PS_LIBFUZZER
static int replay_file(const char *path)
{
    ps_buf b = PS_BUF_INIT;
    if (ps_buf_read_file(&b, path) != 0) {
        fprintf(stderr, "fuzz_validate: cannot read %s\n", path);
        return -1;
    }
    LLVMFuzzerTestOneInput((const uint8_t *)b.data, b.len);
    ps_buf_free(&b);
    return 0;
}

/* Replays every file named on the command line (directories: their files). */
int main(int argc, char **argv)
{
    int files = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "fuzz_validate: %s does not exist\n", argv[i]);
            return 1;
        }
        if (!S_ISDIR(st.st_mode)) {
            if (replay_file(argv[i]) != 0) return 1;
            files++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        if (!d) return 1;
        for (struct dirent *e; (e = readdir(d)) != NULL;) {
            if (e->d_name[0] == '.') continue;
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
            if (replay_file(path) != 0) {
                closedir(d);
                return 1;
            }
            files++;
        }
        closedir(d);
    }
    fprintf(stderr, "fuzz_validate: %d inputs replayed, all invariants hold\n", files);
    return files > 0 ? 0 : 1; /* an empty corpus proves nothing */
}
#endif
