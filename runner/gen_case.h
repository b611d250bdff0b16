/* gen_case.h - one request of the generative phase (runner/suites/generate.c)
 * and what the spec says its answer must be: the case the generator
 * (gen_probes.c) builds, the shrinker edits, the judge (gen_judge.c) reads
 * and a replay file stores (petstore-conform replay FILE).
 *
 * A body is head + units + tail, where the units are the probed string's
 * pieces (one character or one escape each, as JSON text): shrinking a
 * failure removes units only, never the fixed ones (the run's tag).
 * Credentials are templates, expanded only when sent, so a case and its
 * replay file never hold a key: {key} the main key, {key^^} {key,,} {key~~}
 * it upper-cased, lower-cased, case-swapped (bash spells them so), {unknown}
 * a key the service cannot know.
 *
 * Ownership: a ps_gen_case owns its strings and buffers; ps_gen_case_free
 * releases them (safe on an initialised or zeroed case). */
#ifndef PS_RUNNER_GEN_CASE_H
#define PS_RUNNER_GEN_CASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/error.h"
#include "runner/checks.h"
#include "runner/client.h"

/* What the spec lets the service answer. */
typedef enum ps_gen_expect {
    /* A valid NewCategory: 201 with the Category exactly as sent, or a
     * refusal the spec leaves open (400, 409 for a taken name, 413 for a
     * size; spec 2 rule 3, spec 8 rule 4). Never 5xx. */
    PS_GEN_CREATED,
    /* A valid NewCategory in a short plain body: 201 and exact, nothing else
     * (what is varied is the request's framing, not its content). */
    PS_GEN_CREATED_ONLY,
    PS_GEN_400,      /* an invalid body: 400 with an Error */
    PS_GEN_401,      /* an invalid credential: 401 */
    PS_GEN_REFUSED,  /* no valid credential, or a malformed one: 400 or 401, never 2xx */
    PS_GEN_ACCEPTED, /* the configured key, validly framed: 2xx */
    PS_GEN_NO_5XX,   /* either way is legal: 4xx, or 201 exactly as sent; never 5xx */
    /* Bytes that are not UTF-8, or a lone surrogate escape: 400 (RFC 8259
     * 8.1, 8.2), or 201 with a Category in UTF-8 JSON, whatever it reads
     * the bytes as (what is listed must then be what the 201 said:
     * runner/gen_ledger.h). Never 5xx. */
    PS_GEN_BYTES,
    PS_GEN_EXPECT_COUNT
} ps_gen_expect;

/* "created", "created-only", "400", ... (replay files); -1 when unknown. */
const char *ps_gen_expect_name(ps_gen_expect e);
int ps_gen_expect_parse(const char *name);

typedef struct ps_gen_unit {
    char *text; /* JSON text of one character or escape */
    size_t len;
    bool fixed; /* never removed by shrinking */
} ps_gen_unit;

typedef struct ps_gen_case {
    char probe[160];  /* what is probed: "description: whitespace around the value" */
    char clause[200]; /* the clause that decides the answer */
    ps_check_id ck;
    ps_gen_expect expect;
    char method[8];     /* "GET" or "POST" */
    char *auth[2];      /* Authorization templates; NULL = absent; [1] a repeated field */
    char *content_type; /* NULL = no Content-Type */
    bool has_body;
    ps_buf head, tail;
    ps_gen_unit *units;
    size_t nunits, cap;
} ps_gen_case;

void ps_gen_case_init(ps_gen_case *gc);
void ps_gen_case_free(ps_gen_case *gc);
/* dst (initialised or freed) becomes a deep copy of src. */
void ps_gen_case_copy(ps_gen_case *dst, const ps_gen_case *src);
void ps_gen_case_set_auth(ps_gen_case *gc, int i, const char *tmpl);
void ps_gen_case_set_content_type(ps_gen_case *gc, const char *ct);
void ps_gen_case_add_unit(ps_gen_case *gc, const char *text, size_t len, bool fixed);
/* Keeps only the units for which keep[i] is true. */
void ps_gen_case_keep_units(ps_gen_case *gc, const bool *keep);
/* The body as sent: head + units + tail, replacing out's content. */
void ps_gen_case_body(const ps_gen_case *gc, ps_buf *out);

/* What a template expands to. key is the main key, unknown a key the
 * service cannot know. */
void ps_gen_expand_auth(const char *tmpl, const char *key, const char *unknown, ps_buf *out);
/* The key in another case: mode '^' upper, ',' lower, '~' swapped. */
void ps_gen_key_case(const char *key, char mode, ps_buf *out);
/* Hands each of the key's other cases that differs from it to add_secret
 * with the variable a curl line names it by ("PETSTORE_API_KEY^^", as bash
 * expands it), so every output redacts them. Returns a mask: bit 0, 1, 2
 * for upper, lower, swapped differing from the key. */
unsigned ps_gen_key_cases(const char *key,
                          void (*add_secret)(void *ctx, const char *secret, const char *env),
                          void *ctx);

/* A case as it goes on the wire: credentials expanded, the body whole.
 * req (and auth2, the repeated Authorization field or NULL) point into
 * the wire's buffers and the case; ps_gen_wire_free releases the buffers. */
typedef struct ps_gen_wire {
    ps_buf auth[2], body;
    ps_client_request req;
    const char *auth2;
} ps_gen_wire;
void ps_gen_wire_build(const ps_gen_case *gc, const char *key, const char *unknown, ps_gen_wire *w);
void ps_gen_wire_free(ps_gen_wire *w);
/* Whether the case carries the main key as the spec shows it (a rate-limit
 * sequence of the main key), rather than a form the service should refuse. */
bool ps_gen_case_proper_key(const ps_gen_case *gc);

/* The replay file of a case: JSON naming the check, clause, probe, expected
 * answer, seed and the request (templates, never a key), the message of the
 * failure and a curl line (keys as ${PETSTORE_API_KEY}, bash). Returns 0, or
 * -1 with err. */
int ps_gen_replay_write(const char *path, const ps_gen_case *gc, const char *base_url,
                        const char *unknown_key, uint64_t seed, const char *message, ps_error *err);
/* The most a replay file may hold. Parsing holds about 150 bytes per JSON
 * value, so a file of one big array costs at most ~80 MB (a 60 MB one took
 * 4 GB); the files --replay-dir writes are a few KiB, and the largest it
 * could write about 150 KiB (5,000 units of a 12-byte escape, in the body
 * and again in the curl line). */
#define PS_GEN_REPLAY_MAX_BYTES (1 << 20)
/* Reads a replay file into gc (the body whole in head), with the base URL
 * and the unknown key it names (caller frees both). Refuses a file over
 * PS_GEN_REPLAY_MAX_BYTES, and templates (authorization, content_type,
 * unknown_key) holding a byte a header field value may not (CR, LF, NUL,
 * other controls). Returns 0, or -1 with err saying what is wrong. */
int ps_gen_replay_read(const char *path, ps_gen_case *gc, char **base_url, char **unknown_key,
                       ps_error *err);
/* The curl line of a case (bash; keys named by their variable). */
void ps_gen_curl_line(const ps_gen_case *gc, const char *base_url, const char *unknown_key,
                      ps_buf *out);

#endif
