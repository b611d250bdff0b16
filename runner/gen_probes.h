/* gen_probes.h - the generator of the generative phase: from a seed, the
 * requests that probe NewCategory's string fields alike (empty,
 * whitespace-only, whitespace around, lengths into the thousands, every
 * Unicode plane, escaped control characters, the JSON escape forms of the
 * same text), its members (other cases, unknown ones, repeated, nested,
 * number forms, insignificant whitespace), the Content-Type and the
 * Authorization field (the key in other cases, extra tokens, whitespace,
 * other schemes carrying it, a repeated field), each with the clause that
 * decides its answer (runner/gen_case.h).
 *
 * A run's cases are a pure function of the seed and the tag: the first
 * ps_gen_probe_count() cases are every form of every probe once (the
 * coverage pass, the checks in turn), the rest drawn at random, so a seed
 * reproduces a run's requests byte for byte. */
#ifndef PS_RUNNER_GEN_PROBES_H
#define PS_RUNNER_GEN_PROBES_H

#include <stddef.h>
#include <stdint.h>

#include "runner/gen_case.h"

/* splitmix64: small, seedable, the same on every platform. */
typedef struct ps_gen_rng {
    uint64_t state;
} ps_gen_rng;

void ps_gen_rng_seed(ps_gen_rng *r, uint64_t seed);
uint64_t ps_gen_rng_next(ps_gen_rng *r);
/* Uniform in [0, n); n > 0. */
uint32_t ps_gen_rng_below(ps_gen_rng *r, uint32_t n);

/* Which probes apply: key_cases has bit 0, 1, 2 set when the main key
 * upper-cased, lower-cased, case-swapped differs from it. */
typedef struct ps_gen_context {
    const char *tag; /* in every name the phase creates: "c<run token> g" */
    unsigned key_cases;
} ps_gen_context;

/* How many cases the coverage pass holds. */
size_t ps_gen_probe_count(void);

/* Case number i of a run into out (initialised here). r is the run's rng:
 * each case draws from it in turn. */
void ps_gen_make(ps_gen_rng *r, size_t i, const ps_gen_context *ctx, ps_gen_case *out);

#endif
