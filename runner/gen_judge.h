/* gen_judge.h - the oracle of the generative phase: what the spec lets a
 * service answer to a generated case (runner/gen_case.h), judged from the
 * exchange alone, so the phase, its shrinker and `petstore-conform replay`
 * give one verdict on one request. */
#ifndef PS_RUNNER_GEN_JUDGE_H
#define PS_RUNNER_GEN_JUDGE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/buf.h"
#include "runner/client.h"
#include "runner/gen_case.h"

typedef enum ps_gen_outcome {
    PS_GEN_PASS,
    PS_GEN_FAIL,
    PS_GEN_UNJUDGED, /* a 429 (or no reply): the case says nothing */
} ps_gen_outcome;

typedef struct ps_gen_verdict {
    ps_gen_outcome outcome;
    bool created;       /* the reply is a 2xx Category with an id */
    int64_t id;         /* its id */
    char message[700];  /* why it failed, naming the probe and clause */
    char expected[200]; /* what was expected, for the evidence */
} ps_gen_verdict;

/* Judges ex, the answer to gc sent with body (as sent). */
void ps_gen_judge(const ps_gen_case *gc, const char *body, size_t body_len, const ps_exchange *ex,
                  ps_gen_verdict *v);

/* Appends the Authorization fields gc sends, as messages name them:
 * "Bearer KEY" (the key as KEY, KEY^^ upper-cased and so on, an unknown key
 * as UNKNOWN, control characters escaped), a second field after " then ". */
void ps_gen_auth_forms(const ps_gen_case *gc, ps_buf *out);

#endif
