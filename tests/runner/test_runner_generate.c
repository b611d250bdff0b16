/* test_runner_generate.c - the generative phase's parts without a server: a
 * seed gives the same cases byte for byte, the coverage pass judges every
 * check in its first four cases, the oracle follows the clauses (a trimmed
 * name fails, a refusal the spec leaves open passes, a 5xx never does), and
 * a replay file holds templates, never the key, and reads back. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/json.h"
#include "harness.h"
#include "runner/gen_case.h"
#include "runner/gen_judge.h"
#include "runner/gen_ledger.h"
#include "runner/gen_probes.h"

static const ps_gen_context ctx = {"cfeedbeef g", 7};

static void cases_text(uint64_t seed, size_t n, ps_buf *out)
{
    ps_gen_rng r;
    ps_gen_rng_seed(&r, seed);
    ps_buf body = PS_BUF_INIT;
    for (size_t i = 0; i < n; i++) {
        ps_gen_case gc;
        ps_gen_make(&r, i, &ctx, &gc);
        ps_gen_case_body(&gc, &body);
        ps_buf_printf(out, "%s|%s|%s|%s|%s|", gc.method, gc.auth[0] ? gc.auth[0] : "-",
                      gc.auth[1] ? gc.auth[1] : "-", gc.content_type ? gc.content_type : "-",
                      gc.probe);
        ps_buf_append(out, body.data ? body.data : "", body.len);
        ps_buf_putc(out, '\n');
        ps_gen_case_free(&gc);
    }
    ps_buf_free(&body);
}

static void a_seed_gives_the_same_cases(void)
{
    ps_buf a = PS_BUF_INIT, b = PS_BUF_INIT, c = PS_BUF_INIT;
    cases_text(42, 300, &a);
    cases_text(42, 300, &b);
    cases_text(43, 300, &c);
    CHECK(a.len > 10000 && a.len == b.len && memcmp(a.data, b.data, a.len) == 0);
    CHECK(a.len != c.len || memcmp(a.data, c.data, a.len) != 0);
    ps_buf_free(&a);
    ps_buf_free(&b);
    ps_buf_free(&c);
}

static void every_body_of_a_created_case_is_json(void)
{
    ps_gen_rng r;
    ps_gen_rng_seed(&r, 7);
    ps_buf body = PS_BUF_INIT;
    bool seen[PS_CK_COUNT] = {false};
    for (size_t i = 0; i < 400; i++) {
        ps_gen_case gc;
        ps_gen_make(&r, i, &ctx, &gc);
        if (i < 4) {
            CHECK(!seen[gc.ck]); /* the first four: one per check */
            seen[gc.ck] = true;
        }
        ps_gen_case_body(&gc, &body);
        if (gc.has_body && gc.expect == PS_GEN_CREATED) {
            /* read as the oracle reads it: a lone surrogate escape as U+FFFD */
            ps_json *v = ps_ledger_parse_text(body.data, body.len);
            CHECK(v != NULL);
            /* a create is tagged (decoded: the escape forms spell the tag in escapes):
             * the name, or for a blank one the description */
            const char *name = ps_json_get_string(v, "name", "");
            const char *desc = ps_json_get_string(v, "description", "");
            CHECK(strstr(name, "cfeedbeef") != NULL || strstr(desc, "cfeedbeef") != NULL);
            ps_json_free(v);
        }
        ps_gen_case_free(&gc);
    }
    CHECK(seen[PS_CK_GENERATE_STRING_FIELDS] && seen[PS_CK_GENERATE_MEMBERS] &&
          seen[PS_CK_GENERATE_CONTENT_TYPE] && seen[PS_CK_GENERATE_CREDENTIALS]);
    ps_buf_free(&body);
}

/* An exchange answered with status and body. */
static void answer(ps_exchange *ex, long status, const char *body)
{
    memset(ex, 0, sizeof *ex);
    ex->responded = true;
    ex->status = status;
    ex->body_cap = 1 << 20;
    ps_buf_puts(&ex->body, body);
}

static ps_gen_outcome judge(ps_gen_expect e, const char *sent, long status, const char *reply)
{
    ps_gen_case gc;
    ps_gen_case_init(&gc);
    gc.expect = e;
    gc.ck = PS_CK_GENERATE_STRING_FIELDS;
    snprintf(gc.probe, sizeof gc.probe, "name: white space around the value");
    ps_exchange ex;
    answer(&ex, status, reply);
    ps_gen_verdict v;
    ps_gen_judge(&gc, sent, strlen(sent), &ex, &v);
    if (v.outcome == PS_GEN_FAIL) CHECK(strstr(v.message, "white space around") != NULL);
    ps_exchange_free(&ex);
    ps_gen_case_free(&gc);
    return v.outcome;
}

static void the_oracle_follows_the_clauses(void)
{
    const char *sent = "{\"name\":\" a\\u0041 \"}";
    CHECK_INT(judge(PS_GEN_CREATED, sent, 201, "{\"id\":3,\"name\":\" aA \"}"), PS_GEN_PASS);
    CHECK_INT(judge(PS_GEN_CREATED, sent, 201, "{\"id\":3,\"name\":\"aA\"}"), PS_GEN_FAIL);
    CHECK_INT(judge(PS_GEN_CREATED, sent, 400, "{}"), PS_GEN_PASS); /* limits not shown */
    CHECK_INT(judge(PS_GEN_CREATED, sent, 409, "{}"), PS_GEN_PASS); /* uniqueness not shown */
    CHECK_INT(judge(PS_GEN_CREATED, sent, 500, "{}"), PS_GEN_FAIL);
    CHECK_INT(judge(PS_GEN_CREATED, sent, 200, "{\"id\":3,\"name\":\" aA \"}"), PS_GEN_FAIL);
    CHECK_INT(judge(PS_GEN_CREATED_ONLY, sent, 400, "{}"), PS_GEN_FAIL);
    CHECK_INT(judge(PS_GEN_CREATED, sent, 429, "{}"), PS_GEN_UNJUDGED);
    const char *twice = "{\"name\":\"a\",\"name\":\"b\"}";
    CHECK_INT(judge(PS_GEN_CREATED, twice, 201, "{\"id\":1,\"name\":\"b\"}"), PS_GEN_PASS);
    CHECK_INT(judge(PS_GEN_CREATED, twice, 201, "{\"id\":1,\"name\":\"c\"}"), PS_GEN_FAIL);
    CHECK_INT(judge(PS_GEN_400, "{\"NAME\":\"x\"}", 201, "{\"id\":1,\"name\":\"x\"}"), PS_GEN_FAIL);
    CHECK_INT(judge(PS_GEN_400, "{\"NAME\":\"x\"}", 400, "{}"), PS_GEN_PASS);
    CHECK_INT(judge(PS_GEN_401, "", 401, "{}"), PS_GEN_PASS);
    CHECK_INT(judge(PS_GEN_401, "", 400, "{}"), PS_GEN_FAIL);
    CHECK_INT(judge(PS_GEN_REFUSED, "", 400, "{}"), PS_GEN_PASS);
    CHECK_INT(judge(PS_GEN_REFUSED, "", 200, "[]"), PS_GEN_FAIL);
    CHECK_INT(judge(PS_GEN_NO_5XX, sent, 415, "{}"), PS_GEN_PASS);
    CHECK_INT(judge(PS_GEN_NO_5XX, sent, 502, "{}"), PS_GEN_FAIL);
    CHECK_INT(judge(PS_GEN_ACCEPTED, "", 200, "[]"), PS_GEN_PASS);
    CHECK_INT(judge(PS_GEN_ACCEPTED, "", 401, "{}"), PS_GEN_FAIL);
    /* bytes that are not UTF-8: 400, or 201 with any Category; a reply that is not UTF-8 is not
     * JSON (RFC 8259 8.1); a lone surrogate escape in a reply reads as U+FFFD */
    const char *bad = "{\"name\":\"a\xff\"}";
    CHECK_INT(judge(PS_GEN_BYTES, bad, 400, "{}"), PS_GEN_PASS);
    CHECK_INT(judge(PS_GEN_BYTES, bad, 201, "{\"id\":1,\"name\":\"a\xef\xbf\xbd\"}"), PS_GEN_PASS);
    CHECK_INT(judge(PS_GEN_BYTES, bad, 201, "{\"id\":1,\"name\":\"a\\ud800\"}"), PS_GEN_PASS);
    CHECK_INT(judge(PS_GEN_BYTES, bad, 201, "{\"id\":1,\"name\":\"a\xff\"}"), PS_GEN_FAIL);
    CHECK_INT(judge(PS_GEN_BYTES, bad, 500, "{}"), PS_GEN_FAIL);
    CHECK_INT(judge(PS_GEN_BYTES, bad, 422, "{}"), PS_GEN_FAIL);
}

/* Messages show what differs: control characters, a no-break space and bytes
 * that are not UTF-8 escaped, other text as is, cut with "...". */
static void messages_escape_what_would_hide(void)
{
    ps_buf b = PS_BUF_INIT;
    ps_ledger_escape(&b, "a\x1f", 2, 100);
    CHECK_STR(b.data, "a\\u001f");
    ps_buf_reset(&b);
    ps_ledger_escape(&b, "\"\\\n\xc2\xa0\xe7\x8c\xab\xff\xe2\x80\xa8", 12, 100);
    CHECK_STR(b.data, "\\\"\\\\\\n\\u00a0\xe7\x8c\xab\\xff\\u2028");
    ps_buf_reset(&b);
    ps_ledger_escape(&b, "abcdef", 6, 3);
    CHECK_STR(b.data, "abc...");
    ps_buf_free(&b);
    /* a list holding a lone surrogate escape is read, the escape as U+FFFD; a pair is kept */
    ps_exchange ex;
    answer(&ex, 200, "[{\"id\":1,\"name\":\"x\\udc00\\ud83d\\udc08\\ud800\"}]");
    ps_json *v = ps_ledger_parse_body(&ex, NULL, 0);
    CHECK(v != NULL && v->type == PS_JSON_ARRAY && v->count == 1);
    if (v && v->count == 1)
        CHECK_STR(ps_json_get_string(v->items[0], "name", ""),
                  "x\xef\xbf\xbd\xf0\x9f\x90\x88\xef\xbf\xbd");
    ps_json_free(v);
    ps_exchange_free(&ex);
    answer(&ex, 200, "[\"\\u12\"]"); /* still not JSON: no escape to rewrite */
    CHECK(ps_ledger_parse_body(&ex, NULL, 0) == NULL);
    ps_exchange_free(&ex);
}

static void credentials_expand_and_replay_files_hold_no_key(void)
{
    ps_buf b = PS_BUF_INIT;
    ps_gen_expand_auth("Bearer {key^^} {key,,} {key~~} {unknown}", "aB-1", "u", &b);
    CHECK_STR(b.data, "Bearer AB-1 ab-1 Ab-1 u");
    ps_buf_free(&b);

    ps_gen_case gc;
    ps_gen_case_init(&gc);
    gc.ck = PS_CK_GENERATE_CREDENTIALS;
    gc.expect = PS_GEN_401;
    gc.has_body = true;
    snprintf(gc.probe, sizeof gc.probe, "the key in another case");
    ps_gen_case_set_auth(&gc, 0, "Bearer {key^^}");
    ps_gen_case_set_auth(&gc, 1, "Bearer {key}");
    ps_gen_case_set_content_type(&gc, "application/json");
    ps_buf_puts(&gc.head, "{\"name\":\"it's\"}");
    char path[] = "/tmp/test_runner_generate_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    ps_error err;
    CHECK_INT(ps_gen_replay_write(path, &gc, "http://127.0.0.1:1/v1", "unk", 99, "why", &err), 0);
    FILE *f = fopen(path, "r");
    char text[4096] = "";
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    text[n] = '\0';
    if (f) fclose(f);
    CHECK(strstr(text, "${PETSTORE_API_KEY^^}") != NULL);
    CHECK(strstr(text, "'\\\\''") != NULL || strstr(text, "'\\''") != NULL); /* quote escaped */
    ps_gen_case back;
    char *url = NULL, *unknown = NULL;
    CHECK_INT(ps_gen_replay_read(path, &back, &url, &unknown, &err), 0);
    CHECK_STR(url, "http://127.0.0.1:1/v1");
    CHECK_STR(unknown, "unk");
    CHECK_STR(back.auth[0], "Bearer {key^^}");
    CHECK_STR(back.auth[1], "Bearer {key}");
    CHECK_INT(back.ck, PS_CK_GENERATE_CREDENTIALS);
    CHECK_INT(back.expect, PS_GEN_401);
    ps_buf body = PS_BUF_INIT;
    ps_gen_case_body(&back, &body);
    CHECK_STR(body.data, "{\"name\":\"it's\"}");
    ps_buf_free(&body);
    ps_gen_case_free(&back);
    free(url);
    free(unknown);
    /* a file that is not one is refused with a reason */
    f = fopen(path, "w");
    if (f) fputs("{\"format\":\"other\"}", f), fclose(f);
    CHECK_INT(ps_gen_replay_read(path, &back, &url, &unknown, &err), -1);
    CHECK(strstr(err.message, "format") != NULL);
    unlink(path);
    ps_gen_case_free(&gc);
}

int main(void)
{
    RUN(a_seed_gives_the_same_cases);
    RUN(every_body_of_a_created_case_is_json);
    RUN(the_oracle_follows_the_clauses);
    RUN(credentials_expand_and_replay_files_hold_no_key);
    RUN(messages_escape_what_would_hide);
    return TEST_EXIT();
}
