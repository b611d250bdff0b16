/* test_json.c - strict JSON parsing: every failure class is told apart, and
 * strings and numbers come back exactly. */
#include <string.h>
#include <stdlib.h>
#include <time.h>

#include "core/buf.h"
#include "core/json.h"
#include "harness.h"

static ps_json_failure parse_failure(const char *text, size_t len)
{
    ps_json_failure why;
    ps_json *v = ps_json_parse(text, len, &why, NULL);
    ps_json_free(v);
    return why;
}
#define FAILURE(lit) parse_failure(lit, sizeof(lit) - 1)

static void failures_are_classified(void)
{
    CHECK_INT(FAILURE(""), PS_JSON_EMPTY);
    CHECK_INT(FAILURE("  \r\n"), PS_JSON_EMPTY);
    CHECK_INT(FAILURE("{\"name\":"), PS_JSON_MALFORMED);
    CHECK_INT(FAILURE("{name:1}"), PS_JSON_MALFORMED);
    CHECK_INT(FAILURE("{\"a\":1,}"), PS_JSON_MALFORMED);
    CHECK_INT(FAILURE("{\"a\":1} x"), PS_JSON_TRAILING);
    CHECK_INT(FAILURE("{\"a\":1}{}"), PS_JSON_TRAILING);
    CHECK_INT(FAILURE("1 2"), PS_JSON_TRAILING);
    CHECK_INT(FAILURE("{\"a\":\"\xff\"}"), PS_JSON_BAD_UTF8);
    CHECK_INT(FAILURE("{\"a\":\"\xc0\xaf\"}"), PS_JSON_BAD_UTF8);     /* overlong */
    CHECK_INT(FAILURE("{\"a\":\"\xed\xa0\x80\"}"), PS_JSON_BAD_UTF8); /* surrogate */
    CHECK_INT(FAILURE("{\"a\":\"x\0\"}"), PS_JSON_MALFORMED);         /* raw NUL */
    CHECK_INT(FAILURE("{\"a\":1}  \n"), PS_JSON_OK);
    CHECK_INT(FAILURE("{\"a\":\"\\udc1f\"}"), PS_JSON_BAD_ESCAPE);  /* lone low surrogate */
    CHECK_INT(FAILURE("{\"\\ud800\":1}"), PS_JSON_BAD_ESCAPE);      /* in a key */
    CHECK_INT(FAILURE("{\"a\":\"\\ud83d\\udc08\"}"), PS_JSON_OK);   /* a proper pair */
    CHECK_INT(FAILURE("{\"a\":\"\\ud83dx\"}"), PS_JSON_BAD_ESCAPE); /* high without low */
    CHECK_INT(FAILURE("{\"a\":\"\\\\udc1f\"}"), PS_JSON_OK); /* escaped backslash, not an escape */
    ps_buf deep = PS_BUF_INIT;
    for (int i = 0; i < PS_JSON_MAX_DEPTH + 1; i++)
        ps_buf_putc(&deep, '[');
    for (int i = 0; i < PS_JSON_MAX_DEPTH + 1; i++)
        ps_buf_putc(&deep, ']');
    CHECK_INT(parse_failure(deep.data, deep.len), PS_JSON_TOO_DEEP);
    ps_buf_free(&deep);
}

/* The parser must never read past len: the server hands it request bodies
 * that are not NUL-terminated (found by the fuzz target). */
static void escapes_at_the_end_stay_in_bounds(void)
{
    const char *cases[] = {"\"\\u",           "\"\\ud83d", "\"\\ud83d\\u",
                           "\"\\ud83d\\udc0", "\"\\u12",   "\"\\ud83d\\udc08"};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        size_t n = strlen(cases[k]);
        char *exact = malloc(n); /* no terminator: ASan flags any read past n */
        memcpy(exact, cases[k], n);
        ps_json_failure why;
        ps_json *v = ps_json_parse(exact, n, &why, NULL);
        CHECK(v == NULL && why != PS_JSON_OK);
        ps_json_free(v);
        free(exact);
    }
}

static void utf8_floor_never_splits_a_sequence(void)
{
    const char s[] = "a\xc3\xa9\xf0\x9f\x90\x88"
                     "b"; /* a, e-acute (2 bytes), cat (4 bytes), b */
    CHECK_INT(ps_utf8_floor(s, 1), 1);
    CHECK_INT(ps_utf8_floor(s, 2), 1); /* inside the e-acute */
    CHECK_INT(ps_utf8_floor(s, 3), 3);
    CHECK_INT(ps_utf8_floor(s, 6), 3); /* inside the cat */
    CHECK_INT(ps_utf8_floor(s, 7), 7);
    CHECK_INT(ps_utf8_floor("\x80\x80", 1), 0);
}

static void values_round_trip(void)
{
    const char text[] = "{\"name\":\"Chat \\u00e9\\n\\\"q\\\" \xf0\x9f\x90\x88\",\"n\":-12,"
                        "\"f\":1.5,\"e\":1e3,\"big\":9223372036854775808,\"ok\":true,\"z\":null,"
                        "\"arr\":[1,[2]],\"name\":\"dup\"}";
    ps_error err;
    ps_json *v = ps_json_parse(text, sizeof text - 1, NULL, &err);
    CHECK(v != NULL);
    if (!v) return;
    CHECK_STR(ps_json_get_string(v, "name", NULL), "Chat \xc3\xa9\n\"q\" \xf0\x9f\x90\x88");
    CHECK(v->duplicate_keys);
    const ps_json *n = ps_json_get(v, "n");
    CHECK(n && n->is_int && n->i == -12);
    CHECK(!ps_json_get(v, "f")->is_int);
    CHECK(!ps_json_get(v, "e")->is_int);
    CHECK(!ps_json_get(v, "big")->is_int); /* beyond int64 */
    CHECK_STR(ps_json_get(v, "big")->str, "9223372036854775808");
    CHECK_INT(ps_json_get(v, "arr")->count, 2);
    CHECK_INT(ps_json_get(v, "z")->type, PS_JSON_NULL);
    CHECK(ps_json_get(v, "missing") == NULL);
    ps_json_free(v);
}

static void escaped_output_parses_back(void)
{
    const char raw[] = "a\"b\\c\n\x01<tag>&\xc3\xa9";
    ps_buf b = PS_BUF_INIT;
    ps_buf_json_string(&b, raw, sizeof raw - 1);
    CHECK(strstr(b.data, "<") == NULL);
    ps_json *v = ps_json_parse(b.data, b.len, NULL, NULL);
    CHECK(v && v->type == PS_JSON_STRING && v->len == sizeof raw - 1 &&
          memcmp(v->str, raw, v->len) == 0);
    ps_json_free(v);
    ps_buf_free(&b);
}

static void paths_find_nested_members(void)
{
    const char text[] = "{\"latency_us\":{\"corrected\":{\"p99\":1234}}}";
    ps_json *v = ps_json_parse(text, sizeof text - 1, NULL, NULL);
    const ps_json *p = ps_json_path(v, "latency_us.corrected.p99");
    CHECK(p && p->is_int && p->i == 1234);
    CHECK(ps_json_path(v, "latency_us.uncorrected.p99") == NULL);
    ps_json_free(v);
}

/* Messages name where the document went wrong and are one line (yajl ends
 * its own with a newline; a document cut short is wrong at its end). */
static void messages_are_one_line_with_the_offset(void)
{
    const char *cut = "[{\"name\":\"ok\"},\n{\"nam\":\"x\"}";
    ps_error err = {{0}};
    ps_json *v = ps_json_parse(cut, strlen(cut), NULL, &err);
    CHECK(v == NULL);
    CHECK(strstr(err.message, "offset 27") != NULL);
    CHECK(strchr(err.message, '\n') == NULL);
    v = ps_json_parse("{'a':1}", 7, NULL, &err);
    CHECK(v == NULL);
    CHECK(strchr(err.message, '\n') == NULL);
}

/* Members named k0, k1, ...; with repeat >= 0 the last one is named k<repeat> again. */
static ps_json *object_of(size_t members, long repeat, ps_json_failure *why, ps_error *err)
{
    ps_buf b = PS_BUF_INIT;
    ps_buf_putc(&b, '{');
    for (size_t i = 0; i < members; i++) {
        size_t name = repeat >= 0 && i == members - 1 ? (size_t)repeat : i;
        ps_buf_printf(&b, "%s\"k%zu\":%zu", i ? "," : "", name, i);
    }
    ps_buf_putc(&b, '}');
    ps_json *v = ps_json_parse(b.data, b.len, why, err);
    ps_buf_free(&b);
    return v;
}

/* Past a few members the repeated-name check uses a hash set: it must still
 * see every repeat, and only within one object. */
static void repeated_names_are_found_in_large_objects(void)
{
    ps_json_failure why;
    ps_error err = {{0}};
    size_t sizes[] = {2, 7, 8, 9, 33, 500, PS_JSON_MAX_MEMBERS};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        ps_json *v = object_of(sizes[k], -1, &why, &err);
        CHECK(v && !v->duplicate_keys && v->count == sizes[k]);
        ps_json_free(v);
        long firsts[] = {0, ((long)sizes[k] - 1) / 2, (long)sizes[k] - 2};
        for (size_t f = 0; f < 3; f++) {
            v = object_of(sizes[k], firsts[f], &why, &err);
            CHECK(v && v->duplicate_keys);
            ps_json_free(v);
        }
    }
    /* Siblings and children have names of their own; the parent's set
     * survives its child. */
    ps_buf b = PS_BUF_INIT;
    ps_buf_putc(&b, '[');
    for (int o = 0; o < 3; o++) {
        ps_buf_printf(&b, "%s{", o ? "," : "");
        for (int i = 0; i < 40; i++)
            ps_buf_printf(&b, "%s\"n%d\":{\"n%d\":1}", i ? "," : "", i, i);
        ps_buf_putc(&b, '}');
    }
    ps_buf_putc(&b, ']');
    ps_json *v = ps_json_parse(b.data, b.len, NULL, NULL);
    CHECK(v && v->count == 3);
    for (size_t o = 0; v && o < v->count; o++)
        CHECK(!v->items[o]->duplicate_keys && v->items[o]->count == 40);
    ps_json_free(v);
    b.len = b.len - 2; /* drop "}]", then repeat the first object's first name after a child */
    ps_buf_append(&b, ",\"n0\":2}]", strlen(",\"n0\":2}]"));
    v = ps_json_parse(b.data, b.len, NULL, NULL);
    CHECK(v && v->items[2]->duplicate_keys && !v->items[0]->duplicate_keys);
    ps_json_free(v);
    ps_buf_free(&b);
}

static void objects_have_at_most_max_members(void)
{
    ps_json_failure why;
    ps_error err = {{0}};
    ps_json *v = object_of(PS_JSON_MAX_MEMBERS + 1, -1, &why, &err);
    CHECK(v == NULL);
    CHECK_INT(why, PS_JSON_TOO_MANY_MEMBERS);
    CHECK_STR(ps_json_failure_name(why), "too_many_members");
    CHECK(strstr(err.message, "more than 1024 members") != NULL);
    /* arrays are not objects: as many elements as the text holds */
    ps_buf b = PS_BUF_INIT;
    ps_buf_putc(&b, '[');
    for (int i = 0; i < 3 * PS_JSON_MAX_MEMBERS; i++)
        ps_buf_printf(&b, "%s{}", i ? "," : "");
    ps_buf_putc(&b, ']');
    v = ps_json_parse(b.data, b.len, &why, &err);
    CHECK(v && v->count == 3 * PS_JSON_MAX_MEMBERS);
    ps_json_free(v);
    ps_buf_free(&b);
}

static double cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void put_member(ps_buf *b, size_t i, bool first, bool distinct)
{
    if (!first) ps_buf_putc(b, ',');
    if (distinct)
        ps_buf_printf(b, "\"%zx\":0", i);
    else
        ps_buf_append(b, "\"\":0", 4);
}

/* Fills b with at least size bytes: one object of members all named "" or
 * all named apart, inside depth objects; or (fan) an array of objects with
 * PS_JSON_MAX_MEMBERS members each, the most an object may have. */
static void hostile_body(ps_buf *b, size_t size, bool distinct, int depth, bool fan)
{
    b->len = 0;
    for (int d = 0; d < depth; d++)
        ps_buf_append(b, "{\"a\":", 5);
    if (fan) {
        ps_buf_putc(b, '[');
        for (size_t o = 0; b->len < size; o++) {
            ps_buf_append(b, o ? ",{" : "{", o ? 2 : 1);
            for (size_t i = 0; i < PS_JSON_MAX_MEMBERS; i++)
                put_member(b, i, i == 0, distinct);
            ps_buf_putc(b, '}');
        }
        ps_buf_putc(b, ']');
    } else {
        ps_buf_putc(b, '{');
        for (size_t i = 0; b->len < size; i++)
            put_member(b, i, i == 0, distinct);
        ps_buf_putc(b, '}');
    }
    for (int d = 0; d < depth; d++)
        ps_buf_putc(b, '}');
}

/* Issue 11: 13,100 members named "" (64 KB) cost 0.24 s of CPU and 1 MB
 * about ten minutes, because each name was compared with every earlier one.
 * The member cap stops a flat object early and the hash set keeps objects
 * under the cap linear; the bounds are far above what a fixed parser takes
 * (about 10 ms, 0.15 s for the 1 MB fan) even under ASan. */
static void worst_case_bodies_cost_little_cpu(void)
{
    ps_buf b = PS_BUF_INIT;
    size_t sizes[] = {64 * 1024, 1024 * 1024};
    for (size_t s = 0; s < 2; s++)
        for (int shape = 0; shape < 6; shape++) {
            bool distinct = shape & 1, fan = shape >= 4;
            int depth = shape >= 2 && shape < 4 ? PS_JSON_MAX_DEPTH - 1 : 0;
            hostile_body(&b, sizes[s], distinct, depth, fan);
            ps_json_failure why;
            double t0 = cpu_seconds();
            ps_json *v = ps_json_parse(b.data, b.len, &why, NULL);
            double spent = cpu_seconds() - t0;
            ps_json_free(v);
            double bound = fan ? 1.0 : 0.2;
            fprintf(stderr, "  %7zu bytes, %s, %s: %.3f s of CPU (bound %.1f s)\n", b.len,
                    fan     ? "objects at the cap"
                    : depth ? "nested"
                            : "flat",
                    distinct ? "distinct names" : "names \"\"", spent, bound);
            CHECK(spent < bound);
            CHECK_INT(why, fan ? PS_JSON_OK : PS_JSON_TOO_MANY_MEMBERS);
        }
    ps_buf_free(&b);
}

/* The least CPU of three parses of b (less noise than one). */
static double parse_cpu(const ps_buf *b)
{
    double best = 1e9;
    for (int k = 0; k < 3; k++) {
        double t0 = cpu_seconds();
        ps_json *v = ps_json_parse(b->data, b->len, NULL, NULL);
        double spent = cpu_seconds() - t0;
        ps_json_free(v);
        if (spent < best) best = spent;
    }
    return best;
}

/* Objects at the member cap whose names all repeat cost about what arrays
 * with as many elements cost: the repeated-name check adds a constant per
 * member, not one comparison per earlier member (the old scan made such a
 * body several times dearer than the arrays). */
static void repeated_names_cost_a_constant_per_member(void)
{
    ps_buf objects = PS_BUF_INIT, arrays = PS_BUF_INIT;
    ps_buf_putc(&objects, '[');
    ps_buf_putc(&arrays, '[');
    for (int o = 0; o < 64; o++) {
        ps_buf_append(&objects, o ? ",{" : "{", o ? 2 : 1);
        ps_buf_append(&arrays, o ? ",[" : "[", o ? 2 : 1);
        for (int i = 0; i < PS_JSON_MAX_MEMBERS; i++) {
            ps_buf_append(&objects, i ? ",\"\":0" : "\"\":0", i ? 5 : 4);
            ps_buf_append(&arrays, i ? ",0" : "0", i ? 2 : 1);
        }
        ps_buf_putc(&objects, '}');
        ps_buf_putc(&arrays, ']');
    }
    ps_buf_putc(&objects, ']');
    ps_buf_putc(&arrays, ']');
    double with_names = parse_cpu(&objects), without = parse_cpu(&arrays);
    fprintf(stderr, "  64 x %d members named \"\": %.4f s; as many array elements: %.4f s\n",
            PS_JSON_MAX_MEMBERS, with_names, without);
    CHECK(with_names < 3 * without + 0.005);
    ps_buf_free(&objects);
    ps_buf_free(&arrays);
}

int main(void)
{
    RUN(failures_are_classified);
    RUN(messages_are_one_line_with_the_offset);
    RUN(escapes_at_the_end_stay_in_bounds);
    RUN(utf8_floor_never_splits_a_sequence);
    RUN(values_round_trip);
    RUN(escaped_output_parses_back);
    RUN(paths_find_nested_members);
    RUN(repeated_names_are_found_in_large_objects);
    RUN(objects_have_at_most_max_members);
    RUN(worst_case_bodies_cost_little_cpu);
    RUN(repeated_names_cost_a_constant_per_member);
    return TEST_EXIT();
}
