/* fuzz_replies.c - fuzz target over everything the runner does with a
 * server's reply: the observers of every response (content type, Error shape,
 * rate-limit headers and per-key sequences), the list checks, evidence with
 * the raw bytes quoted, the JSON report document and the TAP, JUnit and
 * console writers.
 *
 * Built with -DPETSTORE_FUZZ=ON (clang) it is a libFuzzer target; in every
 * other build main() replays the seed corpus (fixtures/fuzz/conform-replies/)
 * so the invariants run in each ctest. Invariants, checked with abort(): the
 * report document always parses as JSON and every writer renders it.
 *
 * Input: replies separated by "\n~~\n"; each is "STATUS\r\nName: value\r\n
 * ...\r\n\r\nbody" (status 0 stands for a transport failure). */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/buf.h"
#include "core/json.h"
#include "reports/report_console.h"
#include "reports/report_junit.h"
#include "reports/report_tap.h"
#include "runner/conform.h"
#include "runner/run.h"
#include "runner/suites/suites.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_REPLIES 16

static void check(bool ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_replies: invariant broken: %s\n", what);
        abort();
    }
}

static const char *find(const char *hay, size_t len, const char *needle)
{
    size_t n = strlen(needle);
    for (size_t i = 0; i + n <= len; i++)
        if (memcmp(hay + i, needle, n) == 0) return hay + i;
    return NULL;
}

/* Builds an exchange as ps_client_perform would have recorded it. */
static void make_exchange(const char *r, size_t len, int i, ps_exchange *ex)
{
    memset(ex, 0, sizeof *ex);
    ex->method = strdup(i % 2 ? "POST" : "GET");
    ex->url = strdup("http://127.0.0.1:1/v1/categories");
    ex->curl = strdup("curl -i 'http://127.0.0.1:1/v1/categories'");
    ps_headers_add(&ex->req_headers, "Authorization", 13, "Bearer ***", 10);
    ex->body_cap = 4096;
    ex->sent_wall_ns = (1795000000LL + i) * 1000000000LL;
    ex->done_wall_ns = ex->sent_wall_ns + 1000000;
    ex->elapsed_ms = 1.0;
    long status = 0;
    size_t p = 0;
    while (p < len && p < 3 && r[p] >= '0' && r[p] <= '9')
        status = status * 10 + (r[p++] - '0');
    if (status == 0) { /* a transport failure, its message from the input */
        snprintf(ex->error, sizeof ex->error, "%.*s", (int)(len < 100 ? len : 100), r);
        return;
    }
    ex->responded = true;
    ex->status = status;
    const char *end_head = find(r, len, "\r\n\r\n");
    size_t head_len = end_head ? (size_t)(end_head - r) : len;
    for (size_t s = 0; s < head_len;) {
        const char *eol = find(r + s, head_len - s, "\r\n");
        size_t n = eol ? (size_t)(eol - (r + s)) : head_len - s;
        ps_headers_add_raw_line(&ex->resp_headers, r + s, n);
        s += n + 2;
    }
    if (end_head) {
        const char *body = end_head + 4;
        size_t blen = len - (size_t)(body - r);
        ex->body_total = blen;
        ps_buf_append(&ex->body, body, blen < ex->body_cap ? blen : ex->body_cap);
        ex->truncated = blen > ex->body_cap;
    }
}

static void render_all(const ps_json *doc)
{
    FILE *null = fopen("/dev/null", "w");
    check(null != NULL, "/dev/null opens");
    ps_error err;
    ps_console_options o = {true, true};
    check(ps_report_console_conform(doc, null, &o, &err) == 0,
          "the console writer renders the document");
    check(ps_report_tap_conform(doc, null, &err) == 0, "the TAP writer renders the document");
    check(ps_report_junit_conform(doc, null, &err) == 0, "the JUnit writer renders the document");
    fclose(null);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ps_conform_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.base_url = "http://127.0.0.1:1/v1";
    cfg.api_key = "fuzz-main-key";
    cfg.limit_key = "fuzz-limit-key";
    cfg.limit_key_given = true;
    cfg.plan.id = PS_PLAN_FREE, cfg.plan.per_minute = 60, cfg.plan.per_day = 1000;
    cfg.limit_plan = cfg.plan;
    cfg.timeout_ns = 1000000000LL;
    cfg.max_wait_ns = 1000000000LL;
    cfg.max_body = 4096;
    ps_checks *checks = ps_checks_create();
    ps_error err;
    ps_conform *c =
        ps_conform_create(&cfg, checks, ps_suite_observers, ps_suite_observer_count, &err);
    check(c != NULL, "a run context can be created");

    const char *in = (const char *)data;
    size_t left = size;
    for (int i = 0; i < MAX_REPLIES && left > 0; i++) {
        const char *sep = find(in, left, "\n~~\n");
        size_t n = sep ? (size_t)(sep - in) : left;
        ps_exchange ex;
        make_exchange(in, n, i, &ex);
        static const ps_key_role roles[] = {PS_KEY_MAIN, PS_KEY_LIMIT, PS_KEY_NONE,
                                            PS_KEY_MANGLED_MAIN};
        if (ex.responded) {
            ps_conform_observe(c, &ex, roles[i % 4]);
            ps_suite_check_list_body(c, &ex);
            /* a message quoting raw reply bytes, as several checks do */
            ps_conform_fail(c, PS_CK_CREATE_STATUS_201, &ex, "201", "answered %ld: %.*s", ex.status,
                            (int)(ex.body.len < 60 ? ex.body.len : 60),
                            ex.body.data ? ex.body.data : "");
        } else {
            ps_conform_no_response(c, PS_CK_LIST_STATUS_200, PS_SEND_FAILED, &ex);
        }
        ps_exchange_free(&ex);
        if (!sep) break;
        left -= n + 4;
        in = sep + 4;
    }

    ps_buf doc = PS_BUF_INIT;
    ps_conform_report_doc(c, 1, &doc);
    ps_json *tree = ps_json_parse(doc.data, doc.len, NULL, &err);
    if (!tree) fprintf(stderr, "fuzz_replies: %s\n", err.message);
    check(tree != NULL, "the report document parses");
    render_all(tree);
    ps_json_free(tree);
    ps_buf_free(&doc);
    ps_conform_destroy(c);
    ps_checks_destroy(checks);
    return 0;
}

#ifndef PS_LIBFUZZER
/* Replays every file of the given corpus directories (or files). */
static int replay(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "fuzz_replies: cannot stat %s\n", path);
        return 1;
    }
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        if (!d) return 1;
        int rc = 0, n = 0;
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.') continue;
            char sub[4096];
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
            rc |= replay(sub);
            n++;
        }
        closedir(d);
        if (n == 0) {
            fprintf(stderr, "fuzz_replies: empty corpus %s\n", path);
            return 1;
        }
        return rc;
    }
    ps_buf b = PS_BUF_INIT;
    if (ps_buf_read_file(&b, path) != 0) {
        fprintf(stderr, "fuzz_replies: cannot read %s\n", path);
        return 1;
    }
    LLVMFuzzerTestOneInput((const uint8_t *)(b.data ? b.data : ""), b.len);
    ps_buf_free(&b);
    return 0;
}

int main(int argc, char **argv)
{
    int rc = 0;
    for (int i = 1; i < argc; i++)
        rc |= replay(argv[i]);
    if (argc < 2)
        fprintf(stderr, "usage: fuzz_replies CORPUS_DIR...\n");
    else if (!rc)
        fprintf(stderr, "fuzz_replies: corpus replayed, invariants hold\n");
    return argc < 2 ? 2 : rc;
}
#endif
