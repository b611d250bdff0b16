/* test_json_writer.c - the JSON writer places commas, colons and nesting
 * itself, escapes every control and non-UTF-8 byte, and what it writes parses
 * back with core/json.h's strict parser. */
#include <math.h>
#include <string.h>

#include "core/buf.h"
#include "core/json.h"
#include "core/json_writer.h"
#include "harness.h"

/* Parses text strictly; NULL (and a failed check) when it is not valid JSON. */
static ps_json *parse_back(const ps_buf *b)
{
    ps_json_failure why = PS_JSON_OK;
    ps_json *v = ps_json_parse(b->data, b->len, &why, NULL);
    CHECK(v != NULL);
    if (!v) fprintf(stderr, "  did not parse (%s): %s\n", ps_json_failure_name(why), b->data);
    return v;
}

static void nesting_and_commas_compact(void)
{
    ps_buf b = PS_BUF_INIT;
    ps_jw w;
    ps_jw_init(&w, &b, false);
    ps_jw_object_open(&w);
    ps_jw_kint(&w, "a", 1);
    ps_jw_key(&w, "list");
    ps_jw_array_open(&w);
    ps_jw_int(&w, -2);
    ps_jw_uint(&w, UINT64_MAX);
    ps_jw_object_open(&w);
    ps_jw_object_close(&w);
    ps_jw_array_open(&w);
    ps_jw_array_close(&w);
    ps_jw_null(&w);
    ps_jw_array_close(&w);
    ps_jw_kbool(&w, "t", true);
    ps_jw_kbool(&w, "f", false);
    ps_jw_knull(&w, "z");
    ps_jw_kstring(&w, "s", "x");
    ps_jw_kstring(&w, "none", NULL);
    ps_jw_object_close(&w);
    CHECK(ps_jw_ok(&w));
    CHECK_STR(b.data, "{\"a\":1,\"list\":[-2,18446744073709551615,{},[],null],\"t\":true,"
                      "\"f\":false,\"z\":null,\"s\":\"x\",\"none\":null}");
    ps_json *v = parse_back(&b);
    CHECK_INT(ps_json_get_int(v, "a", 0), 1);
    const ps_json *list = ps_json_get(v, "list");
    CHECK(list && list->type == PS_JSON_ARRAY && list->count == 5);
    CHECK(ps_json_get(v, "none") && ps_json_get(v, "none")->type == PS_JSON_NULL);
    ps_json_free(v);
    ps_buf_free(&b);
}

static void pretty_indents_two_spaces(void)
{
    ps_buf b = PS_BUF_INIT;
    ps_jw w;
    ps_jw_init(&w, &b, true);
    ps_jw_object_open(&w);
    ps_jw_kint(&w, "a", 1);
    ps_jw_key(&w, "b");
    ps_jw_array_open(&w);
    ps_jw_int(&w, 2);
    ps_jw_int(&w, 3);
    ps_jw_array_close(&w);
    ps_jw_key(&w, "e");
    ps_jw_object_open(&w);
    ps_jw_object_close(&w);
    ps_jw_object_close(&w);
    CHECK(ps_jw_ok(&w));
    CHECK_STR(b.data, "{\n  \"a\": 1,\n  \"b\": [\n    2,\n    3\n  ],\n  \"e\": {}\n}");
    ps_json *v = parse_back(&b);
    ps_json_free(v);
    ps_buf_free(&b);
}

static void escapes_controls_and_bad_utf8(void)
{
    /* C0 (NUL, \x01, \n), DEL, a C1 control (U+0085), U+2028, U+2029, a
     * lone continuation byte, a truncated sequence, an overlong '/', a
     * surrogate, and text that must stay: e-acute and a cat. */
    const char raw[] = "a\0\x01\n\x7f\xc2\x85\xe2\x80\xa8\xe2\x80\xa9\x80\xe2\x80"
                       "\xc0\xaf\xed\xa0\x80\"\\<\xc3\xa9\xf0\x9f\x90\x88";
    ps_buf b = PS_BUF_INIT;
    ps_jw w;
    ps_jw_init(&w, &b, false);
    ps_jw_string_len(&w, raw, sizeof raw - 1);
    CHECK(ps_jw_ok(&w));
    CHECK_STR(b.data,
              "\"a\\u0000\\u0001\\n\\u007f\\u0085\\u2028\\u2029\\ufffd\\ufffd\\ufffd"
              "\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\\"\\\\\\u003c\xc3\xa9\xf0\x9f\x90\x88\"");
    ps_json *v = parse_back(&b);
    CHECK(v && v->type == PS_JSON_STRING && v->len > 0 && v->str[0] == 'a' && v->str[1] == '\0');
    ps_json_free(v);
    ps_buf_free(&b);
}

static void keys_are_escaped_too(void)
{
    ps_buf b = PS_BUF_INIT;
    ps_jw w;
    ps_jw_init(&w, &b, false);
    ps_jw_object_open(&w);
    ps_jw_kint(&w, "q\"\xff", 1);
    ps_jw_object_close(&w);
    CHECK_STR(b.data, "{\"q\\\"\\ufffd\":1}");
    ps_json_free(parse_back(&b));
    ps_buf_free(&b);
}

static void doubles_fixed_shortest_and_non_finite(void)
{
    ps_buf b = PS_BUF_INIT;
    ps_jw w;
    ps_jw_init(&w, &b, false);
    ps_jw_array_open(&w);
    ps_jw_double(&w, 1.23456, 2);
    ps_jw_double(&w, 0.1, -1);
    ps_jw_double(&w, 1.0 / 3.0, -1);
    ps_jw_double(&w, 1e300, -1);
    ps_jw_double(&w, NAN, 3);
    ps_jw_double(&w, INFINITY, -1);
    ps_jw_double(&w, -2.5, 0);
    ps_jw_array_close(&w);
    CHECK(ps_jw_ok(&w));
    CHECK_STR(b.data, "[1.23,0.1,0.3333333333333333,1e+300,null,null,-2]");
    ps_json *v = parse_back(&b);
    CHECK(v && v->count == 7 && v->items[2]->d == 1.0 / 3.0 && v->items[3]->d == 1e300);
    ps_json_free(v);
    ps_buf_free(&b);
}

static void raw_values_are_copied(void)
{
    ps_buf b = PS_BUF_INIT;
    ps_jw w;
    ps_jw_init(&w, &b, false);
    ps_jw_object_open(&w);
    ps_jw_kraw(&w, "evidence", "{\"status\":200,\"h\":[1,2]}");
    ps_jw_kraw(&w, "nothing", NULL);
    ps_jw_key(&w, "list");
    ps_jw_array_open(&w);
    ps_jw_raw(&w, "true");
    ps_jw_raw(&w, "\"s\"");
    ps_jw_array_close(&w);
    ps_jw_object_close(&w);
    CHECK(ps_jw_ok(&w));
    CHECK_STR(b.data, "{\"evidence\":{\"status\":200,\"h\":[1,2]},\"nothing\":null,"
                      "\"list\":[true,\"s\"]}");
    ps_json *v = parse_back(&b);
    CHECK_INT(ps_json_get_int(ps_json_get(v, "evidence"), "status", 0), 200);
    ps_json_free(v);
    ps_buf_free(&b);
}

static void misuse_is_reported(void)
{
    ps_buf b = PS_BUF_INIT;
    ps_jw w;
    ps_jw_init(&w, &b, false);
    ps_jw_object_open(&w);
    ps_jw_int(&w, 1); /* a value without a key */
    ps_jw_object_close(&w);
    CHECK(!ps_jw_ok(&w));

    ps_buf_reset(&b);
    ps_jw_init(&w, &b, false);
    ps_jw_array_open(&w);
    ps_jw_object_close(&w); /* mismatched close */
    CHECK(!ps_jw_ok(&w));

    ps_buf_reset(&b);
    ps_jw_init(&w, &b, false);
    ps_jw_object_open(&w); /* never closed */
    CHECK(!ps_jw_ok(&w));

    ps_buf_reset(&b);
    ps_jw_init(&w, &b, false);
    ps_jw_object_open(&w);
    ps_jw_key(&w, "dangling");
    ps_jw_object_close(&w); /* the key gets null, so the text still parses */
    CHECK(!ps_jw_ok(&w));
    CHECK_STR(b.data, "{\"dangling\":null}");

    ps_buf_reset(&b);
    ps_jw_init(&w, &b, false);
    for (int i = 0; i < PS_JW_MAX_DEPTH + 2; i++)
        ps_jw_array_open(&w);
    for (int i = 0; i < PS_JW_MAX_DEPTH + 2; i++)
        ps_jw_array_close(&w);
    CHECK(!ps_jw_ok(&w)); /* too deep: flagged, and never out of bounds */
    ps_buf_free(&b);
}

int main(void)
{
    RUN(nesting_and_commas_compact);
    RUN(pretty_indents_two_spaces);
    RUN(escapes_controls_and_bad_utf8);
    RUN(keys_are_escaped_too);
    RUN(doubles_fixed_shortest_and_non_finite);
    RUN(raw_values_are_copied);
    RUN(misuse_is_reported);
    return TEST_EXIT();
}
