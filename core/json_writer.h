/* json_writer.h - writes JSON documents into a ps_buf, one value at a time.
 *
 * The writer places commas, colons, nesting and (when pretty) indentation;
 * callers only say what comes next. Strings go through ps_buf_json_string, so
 * untrusted bytes (a server's reply quoted in a report) always give valid
 * JSON: controls, U+2028/U+2029 escaped, bytes that are not UTF-8 as U+FFFD.
 *
 * Ownership: the writer borrows out (caller-owned, caller frees) and owns no
 * memory itself, so there is nothing to release. Misuse (a key outside an
 * object, a value where a key is due, a close that does not match, nesting
 * deeper than PS_JW_MAX_DEPTH) never writes past the buffer: it sets a flag
 * that ps_jw_ok reports, so a test or caller can catch the bug. */
#ifndef PS_JSON_WRITER_H
#define PS_JSON_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

#define PS_JW_MAX_DEPTH 64

typedef struct ps_jw {
    ps_buf *out;
    bool pretty;                         /* newline + two spaces per level */
    bool failed;                         /* some call was misuse; see ps_jw_ok */
    bool after_key;                      /* a key was written, its value is due */
    int depth;                           /* open containers */
    bool in_object[PS_JW_MAX_DEPTH + 1]; /* [d]: level d is an object (else array) */
    size_t count[PS_JW_MAX_DEPTH + 1];   /* [d]: items written at level d so far */
} ps_jw;

/* Starts a writer appending to out (which keeps what it holds). */
void ps_jw_init(ps_jw *w, ps_buf *out, bool pretty);
/* True when every call so far was well formed and every container is closed. */
bool ps_jw_ok(const ps_jw *w);

void ps_jw_object_open(ps_jw *w);
void ps_jw_object_close(ps_jw *w);
void ps_jw_array_open(ps_jw *w);
void ps_jw_array_close(ps_jw *w);
/* Inside an object: the next value is this member's. */
void ps_jw_key(ps_jw *w, const char *key);

/* Values: each is an array item, a member's value after ps_jw_key, or the
 * whole document at the top level. */
void ps_jw_string(ps_jw *w, const char *s); /* NULL -> null */
void ps_jw_string_len(ps_jw *w, const char *s, size_t len);
void ps_jw_int(ps_jw *w, int64_t v);
void ps_jw_uint(ps_jw *w, uint64_t v);
/* decimals >= 0: fixed ("%.*f"); -1: the shortest text that reads back as
 * the same double. NaN and infinities have no JSON form: written as null. */
void ps_jw_double(ps_jw *w, double v, int decimals);
void ps_jw_bool(ps_jw *w, bool v);
void ps_jw_null(ps_jw *w);
/* An already-serialised JSON value (e.g. evidence kept as text), copied as
 * is; the caller vouches that it is one valid value. NULL -> null. */
void ps_jw_raw(ps_jw *w, const char *json_text);

/* Conveniences: ps_jw_key(w, k) followed by the value. */
void ps_jw_kstring(ps_jw *w, const char *k, const char *s);
void ps_jw_kstring_len(ps_jw *w, const char *k, const char *s, size_t len);
void ps_jw_kint(ps_jw *w, const char *k, int64_t v);
void ps_jw_kuint(ps_jw *w, const char *k, uint64_t v);
void ps_jw_kdouble(ps_jw *w, const char *k, double v, int decimals);
void ps_jw_kbool(ps_jw *w, const char *k, bool v);
void ps_jw_knull(ps_jw *w, const char *k);
void ps_jw_kraw(ps_jw *w, const char *k, const char *json_text);

#endif
