/* json_writer.c - JSON documents written value by value (see json_writer.h). */
#include "core/json_writer.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ps_jw_init(ps_jw *w, ps_buf *out, bool pretty)
{
    memset(w, 0, sizeof *w);
    w->out = out;
    w->pretty = pretty;
}

bool ps_jw_ok(const ps_jw *w)
{
    return !w->failed && w->depth == 0 && !w->after_key;
}

static void newline_indent(ps_jw *w, int depth)
{
    ps_buf_putc(w->out, '\n');
    for (int i = 0; i < depth; i++)
        ps_buf_puts(w->out, "  ");
}

/* Everything that goes before a value: the comma and indentation inside an
 * array; nothing after a key (ps_jw_key wrote the colon). A value inside an
 * object without a key, or a second top-level value, is misuse. */
static void before_value(ps_jw *w)
{
    if (w->after_key) {
        w->after_key = false;
        return;
    }
    if (w->depth == 0) {
        if (w->count[0]++ > 0) w->failed = true;
        return;
    }
    if (w->in_object[w->depth]) w->failed = true;
    if (w->count[w->depth]++ > 0) ps_buf_putc(w->out, ',');
    if (w->pretty) newline_indent(w, w->depth);
}

static void open_container(ps_jw *w, bool object)
{
    before_value(w);
    ps_buf_putc(w->out, object ? '{' : '[');
    if (w->depth == PS_JW_MAX_DEPTH) {
        w->failed = true; /* still written, so brackets balance; not tracked */
        return;
    }
    w->depth++;
    w->in_object[w->depth] = object;
    w->count[w->depth] = 0;
}

static void close_container(ps_jw *w, bool object)
{
    if (w->depth == 0 || w->in_object[w->depth] != object || w->after_key) {
        w->failed = true;
        if (w->after_key) { /* keep the text parseable: the key gets null */
            ps_buf_puts(w->out, "null");
            w->after_key = false;
        }
        if (w->depth == 0) return;
    }
    if (w->pretty && w->count[w->depth] > 0) newline_indent(w, w->depth - 1);
    ps_buf_putc(w->out, object ? '}' : ']');
    w->depth--;
}

void ps_jw_object_open(ps_jw *w)
{
    open_container(w, true);
}

void ps_jw_object_close(ps_jw *w)
{
    close_container(w, true);
}

void ps_jw_array_open(ps_jw *w)
{
    open_container(w, false);
}

void ps_jw_array_close(ps_jw *w)
{
    close_container(w, false);
}

void ps_jw_key(ps_jw *w, const char *key)
{
    if (w->depth == 0 || !w->in_object[w->depth] || w->after_key) {
        w->failed = true;
        return;
    }
    if (w->count[w->depth]++ > 0) ps_buf_putc(w->out, ',');
    if (w->pretty) newline_indent(w, w->depth);
    ps_buf_json_string(w->out, key, strlen(key));
    ps_buf_puts(w->out, w->pretty ? ": " : ":");
    w->after_key = true;
}

void ps_jw_string_len(ps_jw *w, const char *s, size_t len)
{
    before_value(w);
    if (s)
        ps_buf_json_string(w->out, s, len);
    else
        ps_buf_puts(w->out, "null");
}

void ps_jw_string(ps_jw *w, const char *s)
{
    ps_jw_string_len(w, s, s ? strlen(s) : 0);
}

void ps_jw_int(ps_jw *w, int64_t v)
{
    before_value(w);
    ps_buf_printf(w->out, "%" PRId64, v);
}

void ps_jw_uint(ps_jw *w, uint64_t v)
{
    before_value(w);
    ps_buf_printf(w->out, "%" PRIu64, v);
}

void ps_jw_double(ps_jw *w, double v, int decimals)
{
    before_value(w);
    if (!isfinite(v)) {
        ps_buf_puts(w->out, "null");
        return;
    }
    if (decimals >= 0) {
        ps_buf_printf(w->out, "%.*f", decimals, v);
        return;
    }
    /* Shortest of %.15g..%.17g that reads back exactly (17 always does). */
    char text[40];
    for (int precision = 15; precision <= 17; precision++) {
        snprintf(text, sizeof text, "%.*g", precision, v);
        if (strtod(text, NULL) == v) break;
    }
    ps_buf_puts(w->out, text);
}

void ps_jw_bool(ps_jw *w, bool v)
{
    before_value(w);
    ps_buf_puts(w->out, v ? "true" : "false");
}

void ps_jw_null(ps_jw *w)
{
    before_value(w);
    ps_buf_puts(w->out, "null");
}

void ps_jw_raw(ps_jw *w, const char *json_text)
{
    before_value(w);
    ps_buf_puts(w->out, json_text ? json_text : "null");
}

void ps_jw_kstring(ps_jw *w, const char *k, const char *s)
{
    ps_jw_key(w, k);
    ps_jw_string(w, s);
}

void ps_jw_kstring_len(ps_jw *w, const char *k, const char *s, size_t len)
{
    ps_jw_key(w, k);
    ps_jw_string_len(w, s, len);
}

void ps_jw_kint(ps_jw *w, const char *k, int64_t v)
{
    ps_jw_key(w, k);
    ps_jw_int(w, v);
}

void ps_jw_kuint(ps_jw *w, const char *k, uint64_t v)
{
    ps_jw_key(w, k);
    ps_jw_uint(w, v);
}

void ps_jw_kdouble(ps_jw *w, const char *k, double v, int decimals)
{
    ps_jw_key(w, k);
    ps_jw_double(w, v, decimals);
}

void ps_jw_kbool(ps_jw *w, const char *k, bool v)
{
    ps_jw_key(w, k);
    ps_jw_bool(w, v);
}

void ps_jw_knull(ps_jw *w, const char *k)
{
    ps_jw_key(w, k);
    ps_jw_null(w);
}

void ps_jw_kraw(ps_jw *w, const char *k, const char *json_text)
{
    ps_jw_key(w, k);
    ps_jw_raw(w, json_text);
}
