/* fuzz_lg_merge.c - `petstore-load merge` on arbitrary shard files: the
 * input is the second shard of a real 2-shard run (the first is
 * fixtures/shards/run1-shard1.json), read, checked, merged and judged with
 * --verify-limits as the command does (merge_internal.h). A libFuzzer
 * target under -DPETSTORE_FUZZ=ON (clang; seed corpus fixtures/fuzz/merge,
 * real shard reports); in every other build main() replays the files given.
 *
 * Beyond no crash, leak or undefined behaviour: a refusal always says why,
 * and a merged report never holds a negative count (issue 21). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/json.h"
#include "loadgen/merge_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char input_path[64];

static void remove_input(void)
{
    unlink(input_path);
}

static void merged_counts_not_negative(const ps_buf *json)
{
    ps_json *doc = ps_json_parse(json->data, json->len, NULL, NULL);
    if (!doc) abort(); /* the merge wrote JSON it cannot read back */
    static const char *const counts[] = {"requests", "scheduled", "answered", "failed",
                                         "timed_out"};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        const ps_json *v = ps_json_get(doc, counts[i]);
        if (!v || v->type != PS_JSON_NUMBER || !v->is_int || v->i < 0) abort();
    }
    ps_json_free(doc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!input_path[0]) {
        snprintf(input_path, sizeof input_path, "/tmp/fuzz_lg_merge.%d.json", (int)getpid());
        atexit(remove_input);
    }
    FILE *f = fopen(input_path, "wb");
    if (!f) abort();
    if (size && fwrite(data, 1, size, f) != size) abort();
    fclose(f);
    char shard1[] = PS_FUZZ_SHARD1;
    char *files[] = {shard1, input_path};
    merge m = {.json = PS_BUF_INIT, .verify_limits = true, .quiet = true};
    m.err.message[0] = '\0';
    int code = ps_lg_merge_run(&m, files, 2);
    if (m.merged)
        merged_counts_not_negative(&m.json);
    else if (m.err.message[0] == '\0' || code == 0)
        abort(); /* every refusal says why, with an exit code */
    ps_lg_merge_free(&m);
    return 0;
}

#ifndef PS_LIBFUZZER
int main(int argc, char **argv)
{
    int runs = 0;
    for (int i = 1; i < argc; i++) {
        ps_buf b = PS_BUF_INIT;
        if (ps_buf_read_file(&b, argv[i]) != 0) {
            fprintf(stderr, "cannot read %s\n", argv[i]);
            return 1;
        }
        LLVMFuzzerTestOneInput((const uint8_t *)(b.data ? b.data : ""), b.len);
        /* and each cut short: a pod that crashed while writing */
        for (size_t cut = 1; cut < b.len; cut += b.len / 16 + 1)
            LLVMFuzzerTestOneInput((const uint8_t *)b.data, cut);
        ps_buf_free(&b);
        runs++;
    }
    fprintf(stderr, "fuzz_lg_merge: %d files replayed\n", runs);
    return runs > 0 ? 0 : 1;
}
#endif
