/* test_server_logic.c - the server's socket-free modules: keys and the
 * Authorization header, body validation codes, the fault catalogue, Error
 * bodies and the rate-limit header values each fault bends, and flag
 * parsing with its error messages. */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "harness.h"
#include "reference-server/auth.h"
#include "reference-server/faults.h"
#include "reference-server/responses.h"
#include "reference-server/server_config.h"
#include "reference-server/validate.h"

static const char *write_temp(const char *text)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/ps-test-keys-XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0) return NULL;
    size_t n = strlen(text);
    if (write(fd, text, n) != (ssize_t)n) n = 0;
    close(fd);
    return path;
}

static void keyring_finds_keys_with_their_plans(void)
{
    ps_keyring *r = ps_keyring_create();
    ps_error err;
    CHECK_INT(ps_keyring_add_flag(r, "k-free:free", &err), 0);
    CHECK_INT(ps_keyring_add_flag(r, "k-ent:enterprise:500:9000", &err), 0);
    CHECK_INT(ps_keyring_add_flag(r, "k-free:pro", &err), -1); /* duplicate */
    CHECK(strstr(err.message, "twice") != NULL);
    CHECK_INT(ps_keyring_add_flag(r, "k2:enterprise", &err), -1); /* enterprise without figures */
    CHECK(strstr(err.message, "limits") != NULL);
    CHECK_INT(ps_keyring_add_flag(r, "k3:gold", &err), -1);
    CHECK(strstr(err.message, "unknown plan") != NULL);
    CHECK_INT(ps_keyring_add_flag(r, "nocolon", &err), -1);
    CHECK_INT(ps_keyring_add_flag(r, "bad key:free", &err), -1);
    for (int i = 0; i < 200; i++) { /* enough to grow the table */
        char flag[64];
        snprintf(flag, sizeof flag, "bulk-%d:pro", i);
        CHECK_INT(ps_keyring_add_flag(r, flag, &err), 0);
    }
    const ps_key_entry *e = ps_keyring_find(r, "k-ent", 5);
    CHECK(e != NULL);
    if (e) {
        CHECK_INT(e->plan.per_minute, 500);
        CHECK_INT(e->plan.per_day, 9000);
    }
    e = ps_keyring_find(r, "bulk-137", 8);
    CHECK(e != NULL && e->plan.per_minute == 300);
    CHECK(ps_keyring_find(r, "k-fre", 5) == NULL);
    CHECK(ps_keyring_find(r, "k-freee", 7) == NULL);
    CHECK(ps_keyring_find(r, "K-FREE", 6) == NULL); /* keys are case-sensitive */
    CHECK_INT(ps_keyring_count(r), 202);
    ps_keyring_destroy(r);
}

static void keys_file_errors_name_line_and_field(void)
{
    ps_error err;
    ps_keyring *r = ps_keyring_create();
    const char *p =
        write_temp("# comment\n\nalpha free   # trailing comment\nbeta enterprise 10 20\n");
    CHECK_INT(ps_keyring_load_file(r, p, &err), 0);
    CHECK_INT(ps_keyring_count(r), 2);
    const ps_key_entry *e = ps_keyring_find(r, "beta", 4);
    CHECK(e && e->plan.per_minute == 10 && e->plan.per_day == 20);
    unlink(p);
    ps_keyring_destroy(r);

    r = ps_keyring_create();
    p = write_temp("alpha free\nbeta platinum\n");
    CHECK_INT(ps_keyring_load_file(r, p, &err), -1);
    CHECK(strstr(err.message, "line 2") != NULL && strstr(err.message, "platinum") != NULL);
    unlink(p);
    ps_keyring_destroy(r);

    r = ps_keyring_create();
    p = write_temp("alpha\n");
    CHECK_INT(ps_keyring_load_file(r, p, &err), -1);
    CHECK(strstr(err.message, "line 1") != NULL && strstr(err.message, "no plan") != NULL);
    unlink(p);
    ps_keyring_destroy(r);

    r = ps_keyring_create();
    p = write_temp("a free\nb enterprise 10 x\n");
    CHECK_INT(ps_keyring_load_file(r, p, &err), -1);
    CHECK(strstr(err.message, "line 2") != NULL && strstr(err.message, "per-day") != NULL);
    unlink(p);
    ps_keyring_destroy(r);

    r = ps_keyring_create();
    CHECK_INT(ps_keyring_load_file(r, "/nonexistent/keys.txt", &err), -1);
    CHECK(strstr(err.message, "/nonexistent/keys.txt") != NULL);
    ps_keyring_destroy(r);
}

static ps_credential parse(const char *v, int count, bool cs, char *tok, size_t cap)
{
    const char *t = NULL;
    size_t tl = 0;
    ps_credential c = ps_auth_parse(v, v ? strlen(v) : 0, count, cs, &t, &tl);
    tok[0] = '\0';
    if (c == PS_CRED_TOKEN && tl < cap) {
        memcpy(tok, t, tl);
        tok[tl] = '\0';
    }
    return c;
}

static void authorization_header_is_classified(void)
{
    char tok[128];
    CHECK_INT(parse(NULL, 0, false, tok, sizeof tok), PS_CRED_NONE);
    CHECK_INT(parse("Bearer abc", 1, false, tok, sizeof tok), PS_CRED_TOKEN);
    CHECK_STR(tok, "abc");
    CHECK_INT(parse("bearer abc", 1, false, tok, sizeof tok),
              PS_CRED_TOKEN); /* RFC 9110: case-insensitive */
    CHECK_INT(parse("BEARER a.b-c_d~e+f/g==", 1, false, tok, sizeof tok), PS_CRED_TOKEN);
    CHECK_STR(tok, "a.b-c_d~e+f/g==");
    CHECK_INT(parse("Bearer   abc  ", 1, false, tok, sizeof tok), PS_CRED_TOKEN);
    CHECK_STR(tok, "abc");
    CHECK_INT(parse("bearer abc", 1, true, tok, sizeof tok), PS_CRED_OTHER_SCHEME); /* the fault */
    CHECK_INT(parse("Basic dXNlcjpwYXNz", 1, false, tok, sizeof tok), PS_CRED_OTHER_SCHEME);
    CHECK_INT(parse("Bearer", 1, false, tok, sizeof tok), PS_CRED_MALFORMED);
    CHECK_INT(parse("Bearer ", 1, false, tok, sizeof tok), PS_CRED_MALFORMED);
    CHECK_INT(parse("Bearer a b", 1, false, tok, sizeof tok), PS_CRED_MALFORMED);
    CHECK_INT(parse("Bearer a=b", 1, false, tok, sizeof tok), PS_CRED_MALFORMED);
    CHECK_INT(parse("Bearer abc", 2, false, tok, sizeof tok), PS_CRED_MALFORMED);
    CHECK_INT(parse("", 1, false, tok, sizeof tok), PS_CRED_MALFORMED);
    CHECK_INT(parse("Bearerabc", 1, false, tok, sizeof tok), PS_CRED_OTHER_SCHEME);
}

static void constant_time_compare_is_exact(void)
{
    CHECK(ps_ct_equal("abc", 3, "abc", 3));
    CHECK(!ps_ct_equal("abc", 3, "abd", 3));
    CHECK(!ps_ct_equal("abc", 3, "abc\0", 4));
    CHECK(!ps_ct_equal("", 0, "a", 1));
    CHECK(ps_ct_equal("", 0, "", 0));
}

static const char *code_of(const char *body, size_t len, ps_fault_set faults)
{
    static char code[64];
    ps_new_category nc;
    int rc = ps_validate_new_category(body, len, faults, &nc);
    snprintf(code, sizeof code, "%s", rc == 0 ? "ok" : nc.code);
    ps_new_category_free(&nc);
    return code;
}
#define CODE(lit) code_of(lit, sizeof(lit) - 1, 0)

static void every_invalid_body_has_its_code(void)
{
    CHECK_STR(CODE("{\"name\":\"dog\"}"), "ok");
    CHECK_STR(CODE("{\"name\":\"dog\",\"description\":\"d\",\"extra\":[1,{}]}"),
              "ok"); /* unknown members ignored */
    CHECK_STR(CODE(""), "empty_body");
    CHECK_STR(CODE("  \n"), "empty_body");
    CHECK_STR(CODE("{\"name\":"), "malformed_json");
    CHECK_STR(CODE("{name:\"x\"}"), "malformed_json");
    CHECK_STR(CODE("{\"name\":\"x\"} junk"), "trailing_data");
    CHECK_STR(CODE("{\"name\":\"\xff\"}"), "invalid_utf8");
    CHECK_STR(CODE("[1]"), "not_object");
    CHECK_STR(CODE("\"dog\""), "not_object");
    CHECK_STR(CODE("null"), "not_object");
    CHECK_STR(CODE("{}"), "missing_name");
    CHECK_STR(CODE("{\"description\":\"d\"}"), "missing_name");
    CHECK_STR(CODE("{\"name\":1}"), "name_not_string");
    CHECK_STR(CODE("{\"name\":null}"), "name_not_string");
    CHECK_STR(CODE("{\"name\":true}"), "name_not_string");
    CHECK_STR(CODE("{\"name\":[\"a\"]}"), "name_not_string");
    CHECK_STR(CODE("{\"name\":{}}"), "name_not_string");
    CHECK_STR(CODE("{\"name\":\"x\",\"description\":5}"), "description_not_string");
    CHECK_STR(CODE("{\"name\":\"x\",\"description\":null}"), "description_not_string");
    CHECK_STR(CODE("{\"name\":\"x\",\"name\":\"y\"}"), "duplicate_member");
    CHECK_STR(CODE("{\"name\":\"\\udc1f\"}"), "invalid_unicode_escape");
    CHECK_STR(CODE("{\"name\":\"x\",\"description\":\"\\ud75d\\udc1f\"}"),
              "invalid_unicode_escape");
    CHECK_STR(CODE("{\"name\":\"\\ud83d\\udc1f\"}"), "ok"); /* a proper pair */
    ps_buf deep = PS_BUF_INIT;
    for (int i = 0; i < 200; i++)
        ps_buf_putc(&deep, '[');
    for (int i = 0; i < 200; i++)
        ps_buf_putc(&deep, ']');
    CHECK_STR(code_of(deep.data, deep.len, 0), "too_deep");
    ps_buf_free(&deep);
    ps_buf wide = PS_BUF_INIT; /* issue 11: {"":0,...} cost O(n^2) CPU */
    ps_buf_putc(&wide, '{');
    for (int i = 0; i <= PS_JSON_MAX_MEMBERS; i++)
        ps_buf_append(&wide, i ? ",\"\":0" : "\"\":0", i ? 5 : 4);
    ps_buf_putc(&wide, '}');
    CHECK_STR(code_of(wide.data, wide.len, 0), "too_many_members");
    ps_buf_free(&wide);
}

static void validation_keeps_strings_exact(void)
{
    const char body[] = "{\"name\":\"a\\u0000b\\\"\\u00e9\xf0\x9f\x90\x9f\",\"description\":\"\"}";
    ps_new_category nc;
    CHECK_INT(ps_validate_new_category(body, sizeof body - 1, 0, &nc), 0);
    CHECK_INT(nc.name_len, 10);
    CHECK(memcmp(nc.name, "a\0b\"\xc3\xa9\xf0\x9f\x90\x9f", 10) == 0);
    CHECK(nc.has_description);
    CHECK_INT(nc.description_len, 0);
    ps_new_category_free(&nc);
}

static void validation_faults_accept_what_they_name(void)
{
    ps_fault_set missing = (ps_fault_set)1 << PS_FAULT_MISSING_NAME_ACCEPTED,
                 wrong = (ps_fault_set)1 << PS_FAULT_WRONG_TYPE_ACCEPTED;
    CHECK_STR(code_of("{}", 2, missing), "ok");
    CHECK_STR(code_of("{\"name\":42}", 11, missing), "name_not_string");
    CHECK_STR(code_of("{\"name\":42}", 11, wrong), "ok");
    CHECK_STR(code_of("{\"name\":false}", 14, wrong), "ok");
    CHECK_STR(code_of("{\"name\":null}", 13, wrong), "name_not_string");
    ps_new_category nc;
    ps_validate_new_category("{\"name\":4.50}", 13, wrong, &nc);
    CHECK_INT(nc.name_len, 4);
    CHECK(nc.name && memcmp(nc.name, "4.50", 4) == 0);
    ps_new_category_free(&nc);
}

static void fault_catalogue_is_complete(void)
{
    ps_fault_set set = 0;
    ps_error err;
    for (int i = 0; i < PS_FAULT_COUNT; i++) {
        CHECK(ps_fault_name((ps_fault)i) != NULL);
        CHECK(ps_fault_description((ps_fault)i) != NULL);
        CHECK(ps_fault_caught_by((ps_fault)i) != NULL);
        CHECK_INT(ps_fault_enable(&set, ps_fault_name((ps_fault)i), &err), 0);
    }
    CHECK_INT(__builtin_popcountll(set), PS_FAULT_COUNT);
    CHECK(PS_FAULT_COUNT >= 15);
    CHECK_INT(ps_fault_enable(&set, "no-such-fault", &err), -1);
    CHECK(strstr(err.message, "no-such-fault") != NULL);
}

/* Finds the fault called name (len bytes); PS_FAULT_COUNT when there is none. */
static ps_fault fault_named(const char *name, size_t len)
{
    for (int i = 0; i < PS_FAULT_COUNT; i++) {
        const char *n = ps_fault_name((ps_fault)i);
        if (strlen(n) == len && memcmp(n, name, len) == 0) return (ps_fault)i;
    }
    return PS_FAULT_COUNT;
}

/* docs/faults.md's table rows "| `name` | deviation | caught by |" and
 * faults.def: every fault documented once, no row without a fault, and the
 * same "caught by" (tests/runner builds its fault tests from that column). */
static void fault_catalogue_matches_docs(void)
{
    ps_buf doc = PS_BUF_INIT;
    CHECK_INT(ps_buf_read_file(&doc, PS_SOURCE_DIR "/docs/faults.md"), 0);
    int documented[PS_FAULT_COUNT] = {0};
    for (const char *q = doc.data; q && (q = strstr(q, "\n| `")) != NULL; q++) {
        const char *name = q + 4, *name_end = strchr(name, '`');
        const char *eol = strchr(name, '\n');
        if (!eol) eol = name + strlen(name);
        CHECK(name_end && name_end < eol);
        if (!name_end || name_end >= eol) continue;
        ps_fault f = fault_named(name, (size_t)(name_end - name));
        if (f == PS_FAULT_COUNT) {
            fprintf(stderr, "docs/faults.md documents '%.*s', which faults.def lacks\n",
                    (int)(name_end - name), name);
            CHECK(0);
            continue;
        }
        documented[f]++;
        /* the last cell: between the last two '|' of the row */
        const char *last = eol;
        while (last > name && last[-1] != '|')
            last--; /* last: after the closing '|' */
        const char *cell_end = last - 1, *cell = cell_end;
        while (cell > name && cell[-1] != '|')
            cell--;
        while (cell < cell_end && *cell == ' ')
            cell++;
        while (cell_end > cell && cell_end[-1] == ' ')
            cell_end--;
        const char *want = ps_fault_caught_by(f);
        if (strlen(want) != (size_t)(cell_end - cell) || memcmp(want, cell, strlen(want)) != 0) {
            fprintf(stderr, "docs/faults.md: %s caught by '%.*s', faults.def says '%s'\n",
                    ps_fault_name(f), (int)(cell_end - cell), cell, want);
            CHECK(0);
        }
    }
    for (int i = 0; i < PS_FAULT_COUNT; i++) {
        if (documented[i] != 1)
            fprintf(stderr, "docs/faults.md has %d rows for %s\n", documented[i],
                    ps_fault_name((ps_fault)i));
        CHECK_INT(documented[i], 1);
    }
    ps_buf_free(&doc);
}

static void error_bodies_and_their_faults(void)
{
    ps_buf b = PS_BUF_INIT;
    ps_render_error(&b, 404, "not_found", "no \"such\" thing", 0);
    CHECK_STR(b.data,
              "{\"code\":\"not_found\",\"message\":\"no \\\"such\\\" thing\",\"status\":404}");
    ps_buf_reset(&b);
    ps_render_error(&b, 401, "invalid_key", "m", (ps_fault_set)1 << PS_FAULT_ERROR_STATUS_MISMATCH);
    CHECK_STR(b.data, "{\"code\":\"invalid_key\",\"message\":\"m\",\"status\":400}");
    ps_buf_reset(&b);
    ps_render_error(&b, 401, "invalid_key", "m", (ps_fault_set)1 << PS_FAULT_ERROR_MISSING_CODE);
    CHECK_STR(b.data, "{\"message\":\"m\",\"status\":401}");
    ps_buf_reset(&b);
    ps_render_category(&b, 7, "a\0b", 3, NULL, 0, false);
    CHECK_STR(b.data, "{\"id\":7,\"name\":\"a\\u0000b\"}");
    ps_buf_reset(&b);
    ps_render_category(&b, 8, "x", 1, "", 0, true);
    CHECK_STR(b.data, "{\"id\":8,\"name\":\"x\",\"description\":\"\"}");
    ps_buf_reset(&b);
    ps_mangle_unicode(&b, "caf\xc3\xa9 \xf0\x9f\x90\x9f!", 11);
    CHECK_STR(b.data, "caf? ?!");
    ps_buf_free(&b);
}

static ps_rate_headers rh(int status, ps_admission v, ps_fault_set faults, uint64_t seq)
{
    ps_limit_decision d = {
        v, 60, v == PS_ADMITTED ? 10 : 0, 1000060, v == PS_ADMITTED ? 0 : 40, "minute"};
    ps_rate_headers h;
    ps_rate_headers_compute(&d, status, 1000020, 60, seq, faults, &h);
    return h;
}
#define F(x) ((ps_fault_set)1 << (x))

static void rate_headers_follow_the_decision_and_faults(void)
{
    ps_rate_headers h = rh(200, PS_ADMITTED, 0, 0);
    CHECK(h.present && !h.retry_after_present);
    CHECK_INT(h.limit, 60);
    CHECK_INT(h.remaining, 10);
    CHECK_INT(h.reset, 1000060);
    h = rh(429, PS_LIMITED, 0, 0);
    CHECK(h.retry_after_present);
    CHECK_INT(h.retry_after, 40); /* = reset - now */
    CHECK_INT(h.remaining, 0);
    h = rh(404, PS_ADMITTED, F(PS_FAULT_NO_RATELIMIT_HEADERS_ON_ERRORS), 0);
    CHECK(!h.present);
    h = rh(200, PS_ADMITTED, F(PS_FAULT_NO_RATELIMIT_HEADERS_ON_ERRORS), 0);
    CHECK(h.present);
    CHECK_INT(rh(200, PS_ADMITTED, F(PS_FAULT_RESET_MILLISECONDS), 0).reset, 1000060000);
    CHECK_INT(rh(200, PS_ADMITTED, F(PS_FAULT_RESET_RELATIVE), 0).reset, 40);
    CHECK(rh(200, PS_ADMITTED, F(PS_FAULT_RESET_UNSTABLE), 0).reset !=
          rh(200, PS_ADMITTED, F(PS_FAULT_RESET_UNSTABLE), 1).reset);
    CHECK_INT(rh(200, PS_ADMITTED, F(PS_FAULT_RESET_CLOCK_BEHIND), 0).reset, 1000030);
    CHECK_INT(rh(429, PS_LIMITED, F(PS_FAULT_RESET_CLOCK_BEHIND), 0).retry_after, 40);
    CHECK_INT(rh(200, PS_ADMITTED, F(PS_FAULT_REMAINING_STATIC), 0).remaining, 60);
    CHECK_INT(rh(429, PS_LIMITED, F(PS_FAULT_REMAINING_NEGATIVE), 0).remaining, -1);
    CHECK_INT(rh(200, PS_ADMITTED, F(PS_FAULT_REMAINING_NEGATIVE), 0).remaining, 10);
    CHECK_INT(rh(200, PS_ADMITTED, F(PS_FAULT_LIMIT_WRONG_PLAN), 0).limit, 100);
    CHECK(!rh(429, PS_LIMITED, F(PS_FAULT_NO_RETRY_AFTER), 0).retry_after_present);
    CHECK_INT(rh(429, PS_LIMITED, F(PS_FAULT_RETRY_AFTER_MISMATCH), 0).retry_after, 3600);
    ps_buf b = PS_BUF_INIT;
    h = rh(429, PS_LIMITED, 0, 0);
    ps_rate_headers_render(&b, &h);
    CHECK_STR(b.data,
              "X-RateLimit-Limit: 60\r\nX-RateLimit-Remaining: 0\r\nX-RateLimit-Reset: 1000060\r\n"
              "Retry-After: 40\r\n");
    /* the integers are formatted without printf: negatives and the extremes as %lld gives them */
    ps_buf_reset(&b);
    h = rh(429, PS_LIMITED, F(PS_FAULT_REMAINING_NEGATIVE) | F(PS_FAULT_RESET_MILLISECONDS), 0);
    ps_rate_headers_render(&b, &h);
    CHECK_STR(
        b.data,
        "X-RateLimit-Limit: 60\r\nX-RateLimit-Remaining: -1\r\nX-RateLimit-Reset: 1000060000\r\n"
        "Retry-After: 40\r\n");
    ps_buf_reset(&b);
    ps_buf_put_int(&b, 0);
    ps_buf_putc(&b, ' ');
    ps_buf_put_int(&b, LLONG_MIN);
    ps_buf_putc(&b, ' ');
    ps_buf_put_int(&b, LLONG_MAX);
    CHECK_STR(b.data, "0 -9223372036854775808 9223372036854775807");
    ps_buf_free(&b);
}

static int parse_args(ps_server_config *cfg, ps_error *err, ...)
{
    char *argv[32] = {"petstore-server"};
    int argc = 1;
    va_list ap;
    va_start(ap, err);
    for (char *a; (a = va_arg(ap, char *)) != NULL && argc < 31;)
        argv[argc++] = a;
    va_end(ap);
    FILE *devnull = fopen("/dev/null", "w");
    int rc = ps_server_config_parse(argc, argv, cfg, devnull, err);
    fclose(devnull);
    return rc;
}

static void flags_parse_and_errors_name_the_flag(void)
{
    ps_server_config cfg;
    ps_error err;
    CHECK_INT(parse_args(&cfg, &err, "--key", "a:pro", "--port", "0", "--threads=3", "--max-body",
                         "1K", "--delay", "0.25:50ms", "--stall", "2s:1s", "--fault", "no-auth",
                         "--time-scale", "60", "--base-path", "/api/v1", "--no-seed", NULL),
              0);
    CHECK_INT(cfg.port, 0);
    CHECK_INT(cfg.threads, 3);
    CHECK_INT(cfg.max_body, 1024);
    CHECK(cfg.delay_share == 0.25);
    CHECK_INT(cfg.delay_ns, 50000000);
    CHECK_INT(cfg.stall_at_ns, 2000000000);
    CHECK_INT(cfg.stall_len_ns, 1000000000);
    CHECK(ps_fault_on(cfg.faults, PS_FAULT_NO_AUTH));
    CHECK(cfg.time_scale == 60);
    CHECK_STR(cfg.base_path, "/api/v1");
    CHECK(cfg.seed_path == NULL);
    CHECK_INT(ps_keyring_count(cfg.keys), 1);
    ps_server_config_free(&cfg);

    struct {
        const char *flag, *value, *expect;
    } bad[] = {
        {"--port", "70000", "--port"},
        {"--threads", "0", "--threads"},
        {"--max-body", "lots", "--max-body"},
        {"--delay", "2:5ms", "--delay"},
        {"--delay", "0.5", "--delay"},
        {"--stall", "x:1s", "--stall"},
        {"--fault", "nope", "nope"},
        {"--time-scale", "0.5", "--time-scale"},
        {"--base-path", "v1/", "--base-path"},
        {"--key", "k", "--key"},
        {"--keys-file", "/nonexistent", "/nonexistent"},
        {"--frobnicate", "1", "--frobnicate"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = parse_args(&cfg, &err, "--key", "a:pro", bad[i].flag, bad[i].value, NULL);
        CHECK_INT(rc, 2);
        if (!strstr(err.message, bad[i].expect)) {
            fprintf(stderr, "message for %s %s lacks '%s': %s\n", bad[i].flag, bad[i].value,
                    bad[i].expect, err.message);
            CHECK(0);
        }
        ps_server_config_free(&cfg);
    }
    CHECK_INT(parse_args(&cfg, &err, "--key", "a:pro", "--port", NULL), 2);
    CHECK(strstr(err.message, "--port: needs a value") != NULL);
    ps_server_config_free(&cfg);
    CHECK_INT(parse_args(&cfg, &err, "--help", NULL), 1);
    ps_server_config_free(&cfg);
    CHECK_INT(parse_args(&cfg, &err, "--list-faults", NULL), 1);
    ps_server_config_free(&cfg);
}

int main(void)
{
    RUN(keyring_finds_keys_with_their_plans);
    RUN(keys_file_errors_name_line_and_field);
    RUN(authorization_header_is_classified);
    RUN(constant_time_compare_is_exact);
    RUN(every_invalid_body_has_its_code);
    RUN(validation_keeps_strings_exact);
    RUN(validation_faults_accept_what_they_name);
    RUN(fault_catalogue_is_complete);
    RUN(fault_catalogue_matches_docs);
    RUN(error_bodies_and_their_faults);
    RUN(rate_headers_follow_the_decision_and_faults);
    RUN(flags_parse_and_errors_name_the_flag);
    return TEST_EXIT();
}
