/* reset_past.c - ratelimit.reset-not-past, judged on every response: a
 * request counted against a window (X-RateLimit-Remaining fell under one
 * X-RateLimit-Reset since the key's previous response) must not have been
 * sent after that Reset (spec 8 rule 1: Reset is the time at which the limit
 * resets, so once it has passed requests count against a new window).
 * Judged in the service's clock (core/service_clock.h), with the model's
 * slack: a conservative Reset (later than the window really ends) and a clock
 * a few seconds off never fail; a static Reset with a Remaining that never
 * falls (a mock's example) gives nothing to judge. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/ratelimit_headers.h"
#include "core/ratelimit_model.h"
#include "core/service_clock.h"
#include "runner/suites/ratelimit_judge.h"
#include "runner/suites/suites.h"

/* Without a Date the service's clock is not known: a clock that many
 * seconds off is still "a few seconds" (ratelimit.service-clock's bound). */
#define NO_DATE_SLACK_S 10
/* A Unix time within a day of the request either way: a Reset that names
 * one (seconds left and milliseconds are ratelimit.reset-unix-seconds'). */
#define DAY_S 86400

typedef struct last_response {
    bool have;
    int64_t limit, remaining, reset;
} last_response;

typedef struct reset_past_state {
    last_response main, limit;
    unsigned judged; /* counted requests whose Reset was judged */
} reset_past_state;

_Static_assert(sizeof(reset_past_state) <= PS_RESET_PAST_STATE_SIZE,
               "PS_RESET_PAST_STATE_SIZE too small");

/* The slack, in seconds, a Reset is given: whole-second rounding on both
 * sides and the Date's resolution (the model's), more without a Date. */
static int64_t slack_s(const ps_conform *c)
{
    return PS_RLM_RESET_SLACK_S + 1 + (ps_conform_clock(c)->samples ? 0 : NO_DATE_SLACK_S);
}

void ps_reset_past_observe(ps_conform *c, void *state, const ps_observation *o)
{
    reset_past_state *st = state;
    const ps_exchange *ex = o->ex;
    /* A mangled credential the service accepted may have been counted on the main key. */
    if (o->role == PS_KEY_MANGLED_MAIN && ex->status != 401) st->main.have = false;
    if (o->role != PS_KEY_MAIN && o->role != PS_KEY_LIMIT) return;
    if (ex->status == 401) return; /* not about the key: its sequence goes on */
    last_response *last =
        o->role == PS_KEY_LIMIT && ps_conform_cfg(c)->limit_key_given ? &st->limit : &st->main;
    /* a burst's replies come in no order: the sequence starts afresh after it */
    if (ps_ratelimit_judge_in_burst(c)) {
        last->have = false;
        return;
    }
    int64_t sent_ns = ps_conform_service_ns(c, ex->sent_wall_ns);
    int64_t sent_s = sent_ns / 1000000000;
    ps_rl_info rl;
    ps_rl_read(&ex->resp_headers, sent_s, &rl);
    last_response now = {rl.limit_state == PS_RL_OK && rl.remaining_state == PS_RL_OK, rl.limit,
                         rl.remaining, rl.reset};
    if (rl.reset_state != PS_RL_OK && !ps_ratelimit_reset_lenient(rl.reset_raw, &now.reset))
        now.have = false;
    if (now.have && (now.reset < sent_s - DAY_S || now.reset > sent_s + 2 * DAY_S))
        now.have = false;
    const last_response a = *last;
    *last = now;
    /* counted under the Reset the previous response named: Remaining fell, same window */
    if (!a.have || !now.have || ex->status == 429 || now.limit != a.limit || now.reset != a.reset ||
        now.remaining >= a.remaining)
        return;
    st->judged++;
    int64_t past_ns = sent_ns - now.reset * 1000000000;
    if (past_ns <= slack_s(c) * 1000000000) {
        ps_conform_pass(c, PS_CK_RATELIMIT_RESET_NOT_PAST);
        return;
    }
    char exp[120];
    snprintf(exp, sizeof exp,
             "a request sent after X-RateLimit-Reset %" PRId64
             " counted in a new window (its own Reset ahead)",
             now.reset);
    ps_conform_fail(c, PS_CK_RATELIMIT_RESET_NOT_PAST, ex, exp,
                    "a %ld response was counted against a window whose X-RateLimit-Reset %" PRId64
                    " had passed %.1f s before the request was sent (%s clock): Remaining fell "
                    "from %" PRId64 " to %" PRId64 " under that Reset",
                    ex->status, now.reset, (double)past_ns / 1e9,
                    ps_conform_clock(c)->samples ? "the service's (Date's)" : "the client's",
                    a.remaining, now.remaining);
}

void ps_suite_reset_past_finish(ps_conform *c)
{
    const reset_past_state *st = ps_conform_observer_state(c, ps_reset_past_observe);
    if (st && st->judged) return;
    ps_conform_not_applicable(c, PS_CK_RATELIMIT_RESET_NOT_PAST,
                              "no two consecutive responses on one key showed "
                              "X-RateLimit-Remaining falling under one X-RateLimit-Reset that "
                              "names a Unix time: no request was seen counted against a window");
}
