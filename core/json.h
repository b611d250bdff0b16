/* json.h - JSON documents as trees, parsed with yajl.
 *
 * Ownership: ps_json_parse returns a tree the caller owns and frees with
 * ps_json_free; every pointer reached from it (strings, keys, children) lives
 * as long as the root. Lookups return borrowed pointers, never NULL-terminated
 * copies, and never allocate.
 *
 * Parsing is strict (RFC 8259): exactly one value, valid UTF-8, no comments,
 * nesting at most PS_JSON_MAX_DEPTH, at most PS_JSON_MAX_MEMBERS members in
 * any one object. The cost is linear in the text's length whatever it holds
 * (repeated member names are found with a hash set). On failure the reason
 * says which rule was broken, so the server can answer a precise 400 and the
 * runner can explain a bad reply. */
#ifndef PS_JSON_H
#define PS_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

#define PS_JSON_MAX_DEPTH 64
/* No object the programs exchange has more than a handful of members; the
 * cap bounds what one hostile body or reply can make the parser hold. */
#define PS_JSON_MAX_MEMBERS 1024

typedef enum ps_json_type {
    PS_JSON_NULL,
    PS_JSON_BOOL,
    PS_JSON_NUMBER,
    PS_JSON_STRING,
    PS_JSON_ARRAY,
    PS_JSON_OBJECT,
} ps_json_type;

typedef struct ps_json ps_json;
struct ps_json {
    ps_json_type type;
    bool boolean; /* PS_JSON_BOOL */
    char *str;    /* STRING: value; NUMBER: the literal as written */
    size_t len;   /* length of str (strings may hold \u0000) */
    bool is_int;  /* NUMBER: integer syntax (no fraction/exponent) that fits int64 */
    int64_t i;    /* NUMBER with is_int */
    double d;     /* NUMBER: value as double (always set) */
    size_t count; /* ARRAY/OBJECT: number of items */
    char **keys;  /* OBJECT: keys[i] (NUL-terminated, key_lens[i] bytes) */
    size_t *key_lens;
    ps_json **items;     /* ARRAY/OBJECT: children */
    bool duplicate_keys; /* OBJECT: some key occurred more than once */
};

typedef enum ps_json_failure {
    PS_JSON_OK = 0,
    PS_JSON_EMPTY,            /* no bytes, or only white space */
    PS_JSON_MALFORMED,        /* syntax error */
    PS_JSON_TRAILING,         /* a complete value followed by more non-space bytes */
    PS_JSON_BAD_UTF8,         /* bytes that are not UTF-8 (anywhere in the text) */
    PS_JSON_TOO_DEEP,         /* nesting deeper than PS_JSON_MAX_DEPTH */
    PS_JSON_BAD_ESCAPE,       /* a \u escape of a lone surrogate ("\udc1f"): no UTF-8 form */
    PS_JSON_TOO_MANY_MEMBERS, /* an object with more than PS_JSON_MAX_MEMBERS members */
} ps_json_failure;

/* Parses len bytes of text. Returns the tree, or NULL with *why (if non-NULL)
 * set to the reason and err (if non-NULL) holding a message with the offset. */
ps_json *ps_json_parse(const char *text, size_t len, ps_json_failure *why, ps_error *err);
void ps_json_free(ps_json *v);

/* Object member by key (first occurrence), or NULL when absent or v is not an object. */
const ps_json *ps_json_get(const ps_json *v, const char *key);
/* Nested lookup by a dotted path ("latency_us.corrected.p99"); NULL when absent. */
const ps_json *ps_json_path(const ps_json *v, const char *dotted);
/* Convenience getters: the value when present and of the right type, else dflt. */
const char *ps_json_get_string(const ps_json *v, const char *key, const char *dflt);
double ps_json_get_number(const ps_json *v, const char *key, double dflt);
int64_t ps_json_get_int(const ps_json *v, const char *key, int64_t dflt);

const char *ps_json_type_name(ps_json_type t);
const char *ps_json_failure_name(ps_json_failure f); /* "empty_body", "malformed_json", ... */

/* True when the len bytes at s are valid UTF-8 (no overlongs, no surrogates). */
bool ps_utf8_valid(const char *s, size_t len);
/* The largest cut <= n (n < the text's length) that does not split a UTF-8
 * sequence of s: n moved back over continuation bytes. For truncating text. */
size_t ps_utf8_floor(const char *s, size_t n);

#endif
