/* ratelimit_judge.h - the rate-limit judge: every response's X-RateLimit-*
 * headers and each key's sequence of them, held to what the headers
 * themselves claim and to the plan, whatever limiter the service uses.
 *
 * It infers the model the headers follow (a Reset that holds while
 * Remaining falls: fixed window, sliding log or sliding window counter; a
 * Reset that moves later with each counted request: token bucket / GCRA)
 * and which operations and responses are counted, and reports both as
 * information; it fails only what no model allows (docs/conformance-checks.md,
 * "The rate-limit judge"). Responses of a concurrent burst are judged one
 * by one but never as a sequence. */
#ifndef PS_RUNNER_RATELIMIT_JUDGE_H
#define PS_RUNNER_RATELIMIT_JUDGE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/json_writer.h"
#include "core/ratelimit_headers.h"
#include "core/ratelimit_model.h"
#include "runner/conform.h"

/* The observer (an entry of ps_suite_observers): its function and the
 * size of its per-run state (an upper bound, checked where it is defined). */
#define PS_RATELIMIT_JUDGE_STATE_SIZE 2048
void ps_ratelimit_judge_observe(ps_conform *c, void *state, const ps_observation *o);

/* What the judge learned about one key so far: the label of the limiter
 * its headers follow (unknown, window: Reset held while Remaining fell,
 * token-bucket: Reset moved later with counted requests) and what the
 * shared model (core/ratelimit_model.h) decided counts. */
typedef struct ps_rl_key_view {
    ps_rlm_label model;
    ps_rlm_counted list_counted, create_counted, errors_counted;
} ps_rl_key_view;

/* The view of the key a role uses (the limit key is the main key without
 * --limit-key). False before the run's first response. */
bool ps_ratelimit_judge_view(const ps_conform *c, ps_key_role role, ps_rl_key_view *out);

/* Between begin and end, responses handed to the observers came from a
 * concurrent burst: judged each on its own, never as a sequence, and the
 * key's sequence starts afresh after it. */
void ps_ratelimit_judge_concurrent(const ps_conform *c, bool on);
/* A request of role was answered by something in front of the service
 * (runner/suites/front.h): whether the service counted it is unknown, so
 * the key's sequence starts afresh after it. */
void ps_ratelimit_judge_gap(const ps_conform *c, ps_key_role role);
/* Whether the responses handed over now come from a concurrent burst. */
bool ps_ratelimit_judge_in_burst(const ps_conform *c);

/* The window length the plan gives a Limit value (60 s for the plan's
 * minute figure, 86400 s for its day figure, 0 when neither). */
int64_t ps_ratelimit_judge_window_s(const ps_conform *c, ps_key_role role, int64_t limit);

/* The Reset forms are the shared model's (core/ratelimit_model.h):
 * ps_rlm_reset_lenient, ps_rlm_reset_time. */
static inline bool ps_ratelimit_reset_lenient(const char *raw, int64_t *out)
{
    return ps_rlm_reset_lenient(raw, out);
}

static inline bool ps_ratelimit_reset_time(const ps_rl_info *rl, int64_t sent_s, int64_t *out)
{
    return ps_rlm_reset_time(rl, sent_s, out);
}

/* Ends the run's judgement (checks that need the whole run: Remaining
 * never fell); idempotent. ps_ratelimit_judge_report then writes the
 * report's "ratelimit" array (per key: the model, its evidence, what was
 * counted) and is the judge's last call for the run. Both are safe when
 * nothing was observed. */
void ps_ratelimit_judge_finish(const ps_conform *c);
void ps_ratelimit_judge_report(const ps_conform *c, ps_jw *w);

#endif
