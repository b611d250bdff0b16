/* auth.h - API keys and the bearer credential (spec section 5, RFC 9110
 * 11.6.2, RFC 6750): the keyring the server checks tokens against, the keys
 * file parser, and the parser of the Authorization header.
 *
 * Ownership: the keyring owns copies of its keys; ps_keyring_find returns a
 * borrowed entry valid until ps_keyring_destroy. A keyring is filled before
 * the server starts and only read afterwards, so lookups need no lock. */
#ifndef PS_AUTH_H
#define PS_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/plan.h"
#include "reference-server/faults.h"

typedef struct ps_keyring ps_keyring;

typedef struct ps_key_entry {
    const char *key; /* NUL-terminated */
    size_t key_len;
    ps_plan plan; /* per_minute/per_day always > 0 */
} ps_key_entry;

ps_keyring *ps_keyring_create(void);
void ps_keyring_destroy(ps_keyring *r);
size_t ps_keyring_count(const ps_keyring *r);

/* True when key is a valid bearer token (RFC 6750 b64token: letters, digits,
 * - . _ ~ + / then optional trailing '='). */
bool ps_token_syntax_ok(const char *key, size_t len);

/* Adds a key; plan must carry limits (enterprise needs its figures).
 * Returns 0, or -1 (bad token syntax, duplicate key, plan without limits). */
int ps_keyring_add(ps_keyring *r, const char *key, const ps_plan *plan, ps_error *err);

/* Parses one --key value: "KEY:PLAN" or "KEY:enterprise:PER_MINUTE:PER_DAY". */
int ps_keyring_add_flag(ps_keyring *r, const char *flag_value, ps_error *err);

/* Loads a keys file (core/keys_file.h, docs/keys-file.md): one key per line,
 * "KEY PLAN" or "KEY enterprise PER_MINUTE PER_DAY" (a rate is ignored here).
 * Errors name the file, the line and the field. */
int ps_keyring_load_file(ps_keyring *r, const char *path, ps_error *err);

/* Finds the entry whose key equals token. The hash picks the candidates;
 * the final comparison runs in time independent of where the bytes differ.
 * NULL when unknown. */
const ps_key_entry *ps_keyring_find(const ps_keyring *r, const char *token, size_t len);
/* Fault prefix-key-match only: a key that token nearly is (token is the key
 * less its last character, or the key plus one character); NULL if none. */
const ps_key_entry *ps_keyring_find_near(const ps_keyring *r, const char *token, size_t len);

/* Constant-time equality of two byte strings (time depends only on the
 * lengths). */
bool ps_ct_equal(const char *a, size_t alen, const char *b, size_t blen);

typedef enum ps_credential {
    PS_CRED_NONE,         /* no Authorization header: challenge without error code */
    PS_CRED_OTHER_SCHEME, /* a credential of another scheme (e.g. Basic): no bearer token was sent
                           */
    PS_CRED_MALFORMED,    /* Bearer scheme without a valid b64token, or a repeated header */
    PS_CRED_TOKEN,        /* a syntactically valid bearer token in *token */
} ps_credential;

/* Classifies the Authorization header value (NULL when absent, count = how
 * many Authorization fields the request had). The scheme name is matched
 * case-insensitively unless case_sensitive (the bearer-case-sensitive fault).
 * On PS_CRED_TOKEN, token and token_len give the token inside value. */
ps_credential ps_auth_parse(const char *value, size_t value_len, int count, bool case_sensitive,
                            const char **token, size_t *token_len);

/* ps_auth_parse as the faults of the credential bend it: bearer-case-sensitive,
 * bearer-extra-tokens (the token ends at the first white space),
 * other-scheme-key (a scheme ending in "bearer" is taken for Bearer; the
 * value rewritten into bent, which the token may then point into: the
 * caller frees bent after using the token), repeated-auth-last-wins (two
 * fields are one: the caller kept the last). */
ps_credential ps_auth_parse_faulty(const char *value, size_t value_len, int count,
                                   ps_fault_set faults, ps_buf *bent, const char **token,
                                   size_t *token_len);
/* Fault key-case-insensitive only: the entry whose key equals token in any case. */
const ps_key_entry *ps_keyring_find_nocase(const ps_keyring *r, const char *token, size_t len);

#endif
