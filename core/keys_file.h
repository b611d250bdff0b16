/* keys_file.h - the keys file read by both petstore-server (--keys-file) and
 * petstore-load (--keys): API keys with their plans, one per line. The one
 * grammar is documented in docs/keys-file.md:
 *
 *     KEY PLAN [PER_MINUTE PER_DAY] [RATE | rate=RATE] [group=NAME]   # comment
 *
 * PLAN is free, pro, business, enterprise or enterprise:PER_MINUTE:PER_DAY;
 * the two bare figures follow only a bare "enterprise". RATE (requests per
 * second for petstore-load; the server ignores it) is a bare number after the
 * plan (the loadgen's older form) or a rate= attribute. group=NAME puts the
 * key in a group petstore-load reports on (and labels its metrics with);
 * the server ignores it.
 *
 * Ownership: a ps_keys_list owns its entries and their key strings; free it
 * with ps_keys_list_free. On failure the list is left empty. */
#ifndef PS_KEYS_FILE_H
#define PS_KEYS_FILE_H

#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"
#include "core/plan.h"

#define PS_KEYS_MAX_KEY_LEN 512
#define PS_KEYS_MAX_GROUP_LEN 64

typedef struct ps_keys_entry {
    char *key;    /* 1-512 printable ASCII bytes, no space; NUL-terminated */
    ps_plan plan; /* bare "enterprise": per_minute = per_day = 0 (not known) */
    double rate;  /* requests/s (petstore-load's own schedule); 0 when not given */
    char *group;  /* group=NAME, owned; NULL when not given */
    int line;     /* 1-based line of the file */
} ps_keys_entry;

typedef struct ps_keys_list {
    ps_keys_entry *items;
    size_t count;
} ps_keys_list;

/* Parses len bytes of keys-file text; name (the path) only goes into error
 * messages: "keys file 'NAME' line N: what is wrong". Blank and comment-only
 * lines are skipped, so an empty list is a success (callers that need a key
 * say so). A key listed twice is an error naming both lines. Returns 0, or
 * -1 with err set and *out empty. */
int ps_keys_file_parse(const char *text, size_t len, const char *name, ps_keys_list *out,
                       ps_error *err);
/* Reads path and parses it as ps_keys_file_parse does. */
int ps_keys_file_load(const char *path, ps_keys_list *out, ps_error *err);
void ps_keys_list_free(ps_keys_list *list);

/* True when s is a group name: 1-64 letters, digits, '_', '.' or '-' (it
 * goes into reports and metric labels as it is). */
bool ps_keys_group_name_ok(const char *s);

/* True when len bytes at s are 1-512 printable ASCII bytes without space: a
 * key goes into an HTTP header verbatim, so nothing that would break the
 * request (or smuggle another header). The server asks more (a bearer token,
 * ps_token_syntax_ok). */
bool ps_keys_key_text_ok(const char *s, size_t len);

#endif
