/* ratelimit_judge.c - the rate-limit judge (see ratelimit_judge.h): the
 * header rules of every response (ratelimit.headers-*, -bounds,
 * -limit-matches-plan, -reset-unix-seconds) and the rules of each key's
 * sequence (ratelimit.reset-consistent, -remaining-decrements,
 * -no-early-refusal, -headers-consistent) and those of the whole run; the
 * model it infers is ratelimit_judge_model.c's. */
#include "runner/suites/ratelimit_judge.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/ratelimit_headers.h"
#include "core/ratelimit_model.h"
#include "core/service_clock.h"
#include "runner/suites/ratelimit_judge_state.h"

/* Remaining must fall at least once on a key that showed this many
 * same-window pairs of admitted requests, or nothing the runner sends is
 * counted. */
#define STATIC_PAIRS_FAIL 3

judge *judge_of(const ps_conform *c)
{
    judge *j = ps_conform_observer_state(c, ps_ratelimit_judge_observe);
    return j && j->owner == c ? j : NULL;
}

key_seq *judge_seq_for(const ps_conform *c, judge *j, ps_key_role role)
{
    if (role == PS_KEY_MAIN) return &j->main;
    if (role == PS_KEY_LIMIT) return ps_conform_cfg(c)->limit_key_given ? &j->limit : &j->main;
    return NULL;
}

static const ps_plan *plan_of(const ps_conform *c, ps_key_role role)
{
    const ps_conform_config *cfg = ps_conform_cfg(c);
    /* --limit-plan defaults to --plan (runner/config.c) */
    return role == PS_KEY_LIMIT && cfg->limit_key_given ? &cfg->limit_plan : &cfg->plan;
}

int64_t ps_ratelimit_judge_window_s(const ps_conform *c, ps_key_role role, int64_t limit)
{
    return ps_rlm_window_seconds(ps_rlm_window_of_limit(plan_of(c, role), limit));
}

/* Remaining may legitimately be checked for sign: "-3" is an integer out of
 * bounds (ratelimit.remaining-bounds), not a malformed header. */
static bool parse_signed(const char *raw, int64_t *out)
{
    if (!raw) return false;
    while (*raw == ' ' || *raw == '\t')
        raw++;
    if (*raw != '-') return false;
    int64_t v;
    if (!ps_rl_parse_uint(raw + 1, &v)) return false;
    *out = -v;
    return true;
}

/* ---- the rules of one response ------------------------------------------ */

typedef struct fields {
    bool limit_ok, remaining_ok, reset_usable, reset_sane;
    bool any_header; /* at least one of the three was sent */
    int64_t limit, remaining, reset;
} fields;

static void judge_reset_window(ps_conform *c, ps_key_role role, const ps_exchange *ex,
                               const fields *f, int64_t done_s);

static void judge_fields(ps_conform *c, key_seq *tr, ps_key_role role, const ps_exchange *ex,
                         fields *f)
{
    int64_t sent_s = ex->sent_wall_ns / 1000000000;
    int64_t done_s = ex->done_wall_ns / 1000000000;
    ps_rl_info rl;
    ps_rl_read(&ex->resp_headers, sent_s, &rl);
    memset(f, 0, sizeof *f);

    const char *missing[3];
    int nmissing = 0;
    if (rl.limit_state == PS_RL_ABSENT) missing[nmissing++] = "X-RateLimit-Limit";
    if (rl.remaining_state == PS_RL_ABSENT) missing[nmissing++] = "X-RateLimit-Remaining";
    if (rl.reset_state == PS_RL_ABSENT) missing[nmissing++] = "X-RateLimit-Reset";
    if (nmissing) {
        ps_conform_fail(c, PS_CK_RATELIMIT_HEADERS_PRESENT, ex,
                        "X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset",
                        "a %ld response lacks %s%s%s%s%s", ex->status, missing[0],
                        nmissing > 1 ? ", " : "", nmissing > 1 ? missing[1] : "",
                        nmissing > 2 ? ", " : "", nmissing > 2 ? missing[2] : "");
    } else {
        ps_conform_pass(c, PS_CK_RATELIMIT_HEADERS_PRESENT);
    }
    f->any_header = nmissing < 3;

    f->limit_ok = rl.limit_state == PS_RL_OK;
    f->limit = rl.limit;
    f->remaining = rl.remaining;
    f->remaining_ok = rl.remaining_state == PS_RL_OK;
    if (!f->remaining_ok && rl.remaining_state == PS_RL_MALFORMED &&
        parse_signed(rl.remaining_raw, &f->remaining))
        f->remaining_ok = true;
    bool reset_int = rl.reset_state == PS_RL_OK;
    /* a Reset that names a time, only not in whole seconds: reset-unix-seconds' finding */
    bool reset_time = reset_int || ps_ratelimit_reset_lenient(rl.reset_raw, &f->reset);
    struct {
        ps_rl_field_state st;
        const char *name, *raw;
        bool ok;
    } fl[3] = {{rl.limit_state, "X-RateLimit-Limit", rl.limit_raw, f->limit_ok},
               {rl.remaining_state, "X-RateLimit-Remaining", rl.remaining_raw, f->remaining_ok},
               {rl.reset_state, "X-RateLimit-Reset", rl.reset_raw, reset_time}};
    bool all_int = true;
    for (int i = 0; i < 3; i++) {
        if (fl[i].st == PS_RL_ABSENT || fl[i].ok) continue;
        all_int = false;
        ps_conform_fail(
            c, PS_CK_RATELIMIT_HEADERS_INTEGERS, ex, "a plain decimal integer, sent once",
            "%s is '%s' on a %ld response: not a plain integer (or repeated with different values)",
            fl[i].name, fl[i].raw ? fl[i].raw : "", ex->status);
    }
    if (all_int && nmissing < 3) ps_conform_pass(c, PS_CK_RATELIMIT_HEADERS_INTEGERS);
    if (f->remaining_ok && tr) tr->remaining_valid_seen = true;

    /* bounds: Limit and Remaining, whatever Reset is */
    if (f->limit_ok && f->remaining_ok) {
        if (f->remaining < 0 || f->remaining > f->limit) {
            ps_conform_fail(c, PS_CK_RATELIMIT_REMAINING_BOUNDS, ex, "0 <= Remaining <= Limit",
                            "X-RateLimit-Remaining is %" PRId64 " with X-RateLimit-Limit %" PRId64
                            " on a %ld response",
                            f->remaining, f->limit, ex->status);
        } else {
            ps_conform_pass(c, PS_CK_RATELIMIT_REMAINING_BOUNDS);
        }
    } else if (rl.limit_state == PS_RL_MALFORMED || rl.remaining_state == PS_RL_MALFORMED) {
        ps_conform_not_applicable(
            c, PS_CK_RATELIMIT_REMAINING_BOUNDS,
            "X-RateLimit-Limit or -Remaining is not an integer (ratelimit.headers-integers)");
    }

    /* the plan's figures: Limit alone */
    if (tr && ex->status != 401 && f->limit_ok) {
        const ps_plan *plan = plan_of(c, role);
        if (plan->per_minute > 0 || plan->per_day > 0) {
            if (f->limit == plan->per_minute || f->limit == plan->per_day) {
                ps_conform_pass(c, PS_CK_RATELIMIT_LIMIT_MATCHES_PLAN);
            } else {
                char exp[96];
                snprintf(exp, sizeof exp, "%" PRId64 " (per minute) or %" PRId64 " (per day)",
                         plan->per_minute, plan->per_day);
                ps_conform_fail(c, PS_CK_RATELIMIT_LIMIT_MATCHES_PLAN, ex, exp,
                                "X-RateLimit-Limit is %" PRId64 " for a key of plan %s (%s)",
                                f->limit, ps_plan_name(plan->id), exp);
            }
        } else {
            ps_conform_not_applicable(
                c, PS_CK_RATELIMIT_LIMIT_MATCHES_PLAN,
                plan->id == PS_PLAN_ENTERPRISE
                    ? "enterprise plan without figures: give --plan enterprise:PER_MIN:PER_DAY"
                    : "the key's plan is not known: give --plan (and --limit-plan)");
        }
    }

    /* Reset: a Unix time in seconds, within a day either way (one already past while its
     * window counts is ratelimit.reset-not-past's, reset_past.c) */
    if (reset_int) f->reset = rl.reset;
    f->reset_usable = reset_time;
    if (!f->reset_usable) {
        if (rl.reset_state == PS_RL_MALFORMED)
            ps_conform_not_applicable(
                c, PS_CK_RATELIMIT_RESET_UNIX_SECONDS,
                "X-RateLimit-Reset is not a number (ratelimit.headers-integers)");
        return;
    }
    f->reset_sane = f->reset >= sent_s - PS_RLM_RESET_SLACK_S &&
                    f->reset <= done_s + 86400 + PS_RLM_RESET_SLACK_S;
    bool unix_time =
        f->reset >= sent_s - 86400 && f->reset <= done_s + 86400 + PS_RLM_RESET_SLACK_S;
    if (unix_time && reset_int) {
        ps_conform_pass(c, PS_CK_RATELIMIT_RESET_UNIX_SECONDS);
    } else {
        const char *hint = unix_time                   ? ""
                           : f->reset > 100000000000LL ? " (that looks like milliseconds)"
                           : f->reset < 1000000000LL
                               ? " (that looks like seconds left, not a Unix time)"
                               : "";
        char exp[112];
        snprintf(exp, sizeof exp, "a Unix time in whole seconds between %" PRId64 " and %" PRId64,
                 sent_s - 86400, done_s + 86400 + PS_RLM_RESET_SLACK_S);
        ps_conform_fail(c, PS_CK_RATELIMIT_RESET_UNIX_SECONDS, ex, exp,
                        "X-RateLimit-Reset is %s at %s time %" PRId64 "%s%s", rl.reset_raw,
                        ps_conform_clock_offset_ns(c) ? "the service's (Date's)" : "client", sent_s,
                        reset_int ? "" : ": not a whole number of seconds", hint);
    }
    /* ... and within the window of its Limit (a 429 may carry a ban's end) */
    if (tr && unix_time && reset_int && f->limit_ok && ex->status != 429 && ex->status != 401)
        judge_reset_window(c, role, ex, f, done_s);
}

/* A window limit resets within its window: N per minute is back a minute
 * after the first of them was counted at the latest, whatever the algorithm
 * (a fixed window's end, a log's oldest entry leaving, a counter's next
 * window, a bucket full again). Once the judge accepted a Reset up to a day
 * ahead, so a Reset hours late passed (issue 29). A ban (spec 8 rule 3) may
 * name a later end, but a ban's answers are 429s, which are not judged. */
static void judge_reset_window(ps_conform *c, ps_key_role role, const ps_exchange *ex,
                               const fields *f, int64_t done_s)
{
    const ps_plan *plan = plan_of(c, role);
    int64_t w = ps_ratelimit_judge_window_s(c, role, f->limit);
    if (plan->per_minute > 0 && plan->per_minute == plan->per_day) w = 86400; /* either */
    /* a Limit that is none of the plan's figures (or no plan given): any
     * plan's longest window, a day (limit-matches-plan judges the figure) */
    bool known = w != 0;
    if (!w) w = 86400;
    judge *j = judge_of(c);
    if (j) j->reset_window_judged = true;
    int64_t latest = done_s + w + PS_RLM_RESET_SLACK_S;
    if (f->reset <= latest) {
        ps_conform_pass(c, PS_CK_RATELIMIT_RESET_WITHIN_WINDOW);
        return;
    }
    char exp[128];
    snprintf(exp, sizeof exp, "X-RateLimit-Reset at most %" PRId64 " (the %s window, +%d s)",
             latest, w == 60 ? "minute's" : "day's", PS_RLM_RESET_SLACK_S);
    ps_conform_fail(
        c, PS_CK_RATELIMIT_RESET_WITHIN_WINDOW, ex, exp,
        "a %ld response says X-RateLimit-Limit %" PRId64 " (%s) and X-RateLimit-Reset %" PRId64
        ", %" PRId64 " s after the service's time %" PRId64
        "%s: a limit per %s resets within %" PRId64
        " s of any moment; only a ban, answered 429, may name a later end",
        ex->status, f->limit,
        !known    ? "no figure of the plan known: a day, any plan's longest window"
        : w == 60 ? "the plan's figure per minute"
                  : "the plan's figure per day",
        f->reset, f->reset - done_s, done_s, ps_conform_clock_offset_ns(c) ? " (by its Date)" : "",
        w == 60 ? "minute" : "day", w);
}

/* ---- the rules of a pair: a (earlier) and b (this response) ------------- */

/* The rate followed for a Limit value: its slot, else a fresh one (the
 * least informed is given up). */
static bucket_rate *rate_slot(key_seq *tr, int64_t limit)
{
    bucket_rate *free_slot = &tr->rates[0];
    for (int i = 0; i < RATE_SLOTS; i++) {
        if (tr->rates[i].seen && tr->rates[i].limit == limit) return &tr->rates[i];
        if (tr->rates[i].seen < free_slot->seen) free_slot = &tr->rates[i];
    }
    memset(free_slot, 0, sizeof *free_slot);
    free_slot->limit = limit;
    return free_slot;
}

/* "1.2-3.4 s" (or "at least 1.2 s") for a message. */
static const char *rate_text(char *out, size_t size, double lo, double hi)
{
    if (isinf(hi))
        snprintf(out, size, "at least %.2f s", lo);
    else
        snprintf(out, size, "%.2f-%.2f s", lo, hi);
    return out;
}

static void judge_pair(ps_conform *c, key_seq *tr, const resp_rec *a, const resp_rec *b,
                       const ps_exchange *ex)
{
    bool a429 = a->status == 429, b429 = b->status == 429;
    int64_t d = a->remaining - b->remaining;
    int64_t b_sent_s = b->sent_ns / 1000000000;
    /* a's window was still running when b was sent: its Reset (rounded to
     * whole seconds either way) had not come */
    bool within =
        a->reset_sane ? b->sent_ns < (a->reset - 1) * 1000000000LL : b->remaining <= a->remaining;

    /* a 429 right after "Remaining >= 1" (sequential, one request later) */
    if (!a429 && a->remaining >= 1) {
        if (b429) {
            char exp[96];
            snprintf(exp, sizeof exp, "an admission: the previous response said %" PRId64 " remain",
                     a->remaining);
            ps_conform_fail(
                c, PS_CK_RATELIMIT_NO_EARLY_REFUSAL, ex, exp,
                "a 429 came right after a %ld response on this key that said X-RateLimit-Remaining "
                "%" PRId64 " (Limit %" PRId64
                "), one request earlier: is Remaining computed before the request is "
                "counted, or does another limiter refuse? (or another client uses this key)",
                a->status, a->remaining, a->limit);
        } else {
            ps_conform_pass(c, PS_CK_RATELIMIT_NO_EARLY_REFUSAL);
        }
    }

    /* Limit, Remaining and Reset true together: one request costs at most
     * one (a new window or a refill only gives back) */
    if (d > 1) {
        char exp[128];
        snprintf(exp, sizeof exp,
                 "X-RateLimit-Remaining >= %" PRId64 " (one request after %" PRId64 ")",
                 a->remaining - 1, a->remaining);
        ps_conform_fail(
            c, PS_CK_RATELIMIT_HEADERS_CONSISTENT, ex, exp,
            "a %ld response said Limit %" PRId64 ", Remaining %" PRId64 ", Reset %" PRId64
            "; one request later a %ld says Limit %" PRId64 ", Remaining %" PRId64
            ", Reset %" PRId64
            ": both cannot be true (two limiters writing the same headers?; or another client "
            "uses this key)",
            a->status, a->limit, a->remaining, a->reset, b->status, b->limit, b->remaining,
            b->reset);
    } else {
        ps_conform_pass(c, PS_CK_RATELIMIT_HEADERS_CONSISTENT);
    }

    if (a->limit != b->limit || a429 || b429) return;
    int op = b->list ? 0 : 1, cls = b->status >= 200 && b->status < 300 ? 0 : 1;
    if (d >= 1) { /* a fall is a counted request, in any window */
        tr->counted[op][cls]++;
        tr->falls++;
        ps_conform_pass(c, PS_CK_RATELIMIT_REMAINING_DECREMENTS);
    }
    if (!within) return; /* a new window (what came back: note_pair) */
    tr->within_pairs++;
    if (d == 0) {
        tr->uncounted[op][cls]++;
        if (cls == 0 && !tr->falls && ++tr->static_admitted_pairs >= STATIC_PAIRS_FAIL) {
            free(tr->static_evidence);
            char exp[96];
            snprintf(exp, sizeof exp,
                     "X-RateLimit-Remaining below %" PRId64 " after a counted request",
                     a->remaining);
            tr->static_evidence = ps_conform_evidence(c, ex, exp);
            snprintf(tr->static_msg, sizeof tr->static_msg,
                     "Remaining %" PRId64 " of %" PRId64 " (Reset %" PRId64 ")", b->remaining,
                     b->limit, b->reset);
        }
    }

    /* Reset: only what some model allows */
    if (!a->reset_sane || !b->reset_sane) return;
    /* A whole-second Unix time names its instant only to the second: a
     * service computing it from a clock and a whole-second TTL (Flask-Limiter
     * on redis) names R and R - 1 by turns for one window's end. Within a
     * second of the latest Reset named it is the same time; further back
     * it is not, and only beyond it has Reset moved later. */
    if (tr->reset_high_limit != a->limit || a->reset > tr->reset_high) {
        tr->reset_high = a->reset;
        tr->reset_high_limit = a->limit;
    }
    int64_t peak = tr->reset_high;
    if (b->reset == peak || b->reset == peak - 1) {
        if (d >= 1) tr->held++;
        ps_conform_pass(c, PS_CK_RATELIMIT_RESET_CONSISTENT);
    } else if (b->reset < peak) {
        char exp[96];
        snprintf(exp, sizeof exp, "X-RateLimit-Reset %" PRId64 " or later (a second of rounding)",
                 peak - 1);
        ps_conform_fail(c, PS_CK_RATELIMIT_RESET_CONSISTENT, ex, exp,
                        "X-RateLimit-Reset went back from %" PRId64 " to %" PRId64 " at %" PRId64
                        ", before %" PRId64 " had come, while Remaining went from %" PRId64
                        " to %" PRId64 ": no limiter moves its reset earlier (a fixed window, "
                        "sliding log or counter holds it, a token bucket only moves it later; "
                        "a second either way is rounding)",
                        peak, b->reset, b_sent_s, peak, a->remaining, b->remaining);
    } else if (d >= 1 && b->remaining >= 0 && b->remaining < b->limit) {
        /* moved later while Remaining fell: a token bucket, if one refill
         * rate explains this Reset and every earlier one that moved (a
         * Remaining out of bounds is ratelimit.remaining-bounds' finding) */
        double lo, hi;
        ps_rlm_bucket_refill(b->limit, b->remaining, b->reset, b->sent_ns, b->done_ns, &lo, &hi);
        bucket_rate *br = rate_slot(tr, b->limit);
        if (!br->seen || (lo <= br->hi && hi >= br->lo)) {
            if (!br->seen || lo > br->lo) br->lo = lo;
            if (!br->seen || hi < br->hi) br->hi = hi;
            br->seen++;
            tr->moved_later++;
            ps_conform_pass(c, PS_CK_RATELIMIT_RESET_CONSISTENT);
        } else {
            char exp[160], got[40], had[40];
            snprintf(exp, sizeof exp,
                     "X-RateLimit-Reset %" PRId64
                     " (a window holds its reset) or a full-again time at one refill rate "
                     "(%s per token)",
                     a->reset, rate_text(had, sizeof had, br->lo, br->hi));
            ps_conform_fail(c, PS_CK_RATELIMIT_RESET_CONSISTENT, ex, exp,
                            "X-RateLimit-Reset moved from %" PRId64 " to %" PRId64
                            " while Remaining fell from %" PRId64 " to %" PRId64
                            " (same window): a fixed window holds its Reset, and a token bucket "
                            "full again %" PRId64 " s ahead with %" PRId64
                            " tokens used refills one per %s, but the earlier moves of Reset on "
                            "this key (%u) mean one per %s: no single refill rate explains both",
                            a->reset, b->reset, a->remaining, b->remaining, b->reset - b_sent_s,
                            b->limit - b->remaining, rate_text(got, sizeof got, lo, hi), br->seen,
                            had);
        }
    } else if (d < 0 && a->limit - a->remaining >= 2 && b->remaining >= b->limit - 1 &&
               b->reset >= a->reset + 2 &&
               b->sent_ns < (a->reset - PS_RLM_RESET_SLACK_S) * 1000000000LL) {
        /* The whole limit back, in a window of its own, before the Reset a
         * named: no model restores it sooner (a fixed window at its end, a
         * log's entries only after the oldest left at Reset, a bucket is
         * full at Reset; a counter's Reset is its counting window's end,
         * where b would name a's Reset still). Issue 29: a service naming
         * Resets late while its windows end in time passed. */
        char exp[128];
        snprintf(exp, sizeof exp,
                 "no limit restored before X-RateLimit-Reset %" PRId64 " (a second of rounding)",
                 a->reset);
        ps_conform_fail(c, PS_CK_RATELIMIT_RESET_CONSISTENT, ex, exp,
                        "a %ld response said Remaining %" PRId64 " of %" PRId64
                        ", X-RateLimit-Reset %" PRId64 "; at %" PRId64 ", %" PRId64
                        " s before that, a %ld says Remaining %" PRId64
                        " with X-RateLimit-Reset %" PRId64
                        ": the whole limit came back in a new window long before the Reset "
                        "named, so that Reset was not the time the limit resets",
                        a->status, a->remaining, a->limit, a->reset, b_sent_s, a->reset - b_sent_s,
                        b->status, b->remaining, b->reset);
    } else if (d < 1) {
        ps_conform_pass(c, PS_CK_RATELIMIT_RESET_CONSISTENT);
    }
}

/* A concurrent burst's admissions: one of n pairwise different Remaining
 * values each, together a run of consecutive values, says its requests were
 * counted (uncounted ones all tell the state as it stands; only releases
 * timed between every two answers could fake it). */
static void burst_note(key_seq *tr, const ps_exchange *ex, const fields *f)
{
    burst_clues *bc = &tr->burst;
    bool list = ex->method && ex->method[0] == 'G';
    if (!bc->active) {
        memset(bc, 0, sizeof *bc);
        bc->active = true;
        bc->list = list;
        bc->min_remaining = INT64_MAX;
        bc->max_remaining = -1;
    }
    if (list != bc->list) bc->mixed = true;
    if (ex->status < 200 || ex->status >= 300 || !f->limit_ok || !f->remaining_ok) return;
    if (!bc->admitted) bc->limit = f->limit;
    if (f->limit != bc->limit || f->remaining < 0 || f->remaining >= BURST_SEEN_MAX) {
        bc->mixed = true;
        return;
    }
    unsigned char bit = (unsigned char)(1u << (f->remaining % 8));
    if (bc->seen[f->remaining / 8] & bit) bc->duplicate = true;
    bc->seen[f->remaining / 8] |= bit;
    bc->admitted++;
    if (f->remaining < bc->min_remaining) bc->min_remaining = f->remaining;
    if (f->remaining > bc->max_remaining) bc->max_remaining = f->remaining;
}

static void burst_end(key_seq *tr)
{
    burst_clues *bc = &tr->burst;
    if (bc->active && !bc->mixed && !bc->duplicate && bc->admitted >= 3 &&
        bc->max_remaining - bc->min_remaining + 1 == (int64_t)bc->admitted)
        tr->burst_counted[bc->list ? 0 : 1]++;
    bc->active = false;
}

_Static_assert(sizeof(judge) <= PS_RATELIMIT_JUDGE_STATE_SIZE,
               "PS_RATELIMIT_JUDGE_STATE_SIZE too small");

void ps_ratelimit_judge_observe(ps_conform *c, void *state, const ps_observation *o)
{
    judge *j = state;
    j->owner = c;
    /* every time is judged in the service's clock (Reset is written in it):
     * the exchange's times shifted by the offset its Date showed */
    ps_exchange in_service = *o->ex;
    int64_t offset = ps_conform_clock_offset_ns(c);
    in_service.sent_wall_ns += offset;
    in_service.done_wall_ns += offset;
    const ps_exchange *ex = &in_service;
    /* A mangled credential the server nevertheless accepted may have been
     * counted against the main key: its sequence starts afresh. */
    if (o->role == PS_KEY_MANGLED_MAIN && ex->status != 401)
        j->main.last.have = j->main.clues.last_ok.have = false;
    key_seq *tr = judge_seq_for(c, j, o->role);
    fields f;
    judge_fields(c, tr, o->role, ex, &f);
    j->observed = true;
    if (f.any_header) j->any_header = true;
    if (!tr || ex->status == 401) return; /* a 401 is not about our key: its sequence goes on */
    tr->seen = true;
    /* A pair across a step of the service's clock (its Dates contradict the
     * earlier ones) says nothing of the limiter: a token bucket counted in
     * wall time loses its refill with a step back, and a failure of
     * headers-consistent or reset-consistent then blamed the limiter. The
     * step is named in the report (transport.clock_steps); the key's
     * sequence starts afresh in the new clock. */
    unsigned steps = ps_conform_clock(c)->restarts;
    if (tr->clock_steps != steps) {
        tr->clock_steps = steps;
        tr->last.have = tr->clues.last_ok.have = false;
        tr->reset_high = 0;
    }
    if (j->concurrent) burst_note(tr, ex, &f);
    if (j->concurrent || !f.limit_ok || !f.remaining_ok) {
        tr->last.have = tr->clues.last_ok.have = false;
        return;
    }
    if (!f.reset_usable || !f.reset_sane) {
        /* the fact that decided it, not a check: reset-unix-seconds may pass on other answers */
        const char *raw = ps_headers_get(&ex->resp_headers, "X-RateLimit-Reset");
        ps_conform_not_applicable(c, PS_CK_RATELIMIT_RESET_CONSISTENT,
                                  "a %ld response's X-RateLimit-Reset is %s%.40s%s: no Unix time "
                                  "near the request to follow a window by",
                                  ex->status, raw ? "'" : "", raw ? raw : "missing",
                                  raw ? "'" : "");
    }
    resp_rec b = {true,
                  f.limit,
                  f.remaining,
                  f.reset,
                  f.reset_usable && f.reset_sane,
                  ex->status,
                  ex->method && ex->method[0] == 'G',
                  ex->sent_wall_ns,
                  ex->done_wall_ns};
    if (tr->last.have) judge_pair(c, tr, &tr->last, &b, ex);
    judge_note_model(tr, &b);
    tr->last = b;
}

void ps_ratelimit_judge_gap(const ps_conform *c, ps_key_role role)
{
    judge *j = judge_of(c);
    key_seq *tr = j ? judge_seq_for(c, j, role) : NULL;
    if (tr) tr->last.have = tr->clues.last_ok.have = false;
}

void ps_ratelimit_judge_concurrent(const ps_conform *c, bool on)
{
    judge *j = judge_of(c);
    if (!j) return;
    if (j->concurrent && !on) {
        burst_end(&j->main);
        burst_end(&j->limit);
    }
    j->concurrent = on;
}

bool ps_ratelimit_judge_in_burst(const ps_conform *c)
{
    judge *j = judge_of(c);
    return j && j->concurrent;
}

/* ---- the rules of the whole run ----------------------------------------- */

/* Whole-run rules of one key; any_fall: Remaining fell on some key (the
 * service counts something the runner sends). */
static void finish_key(const ps_conform *c, key_seq *k, bool any_fall)
{
    ps_conform *mc = (ps_conform *)c;
    if (!k->seen) return;
    if (!k->remaining_valid_seen) {
        ps_conform_not_applicable(
            mc, PS_CK_RATELIMIT_REMAINING_DECREMENTS,
            "X-RateLimit-Remaining was never an integer (ratelimit.headers-integers)");
        return;
    }
    if (!k->within_pairs)
        ps_conform_not_applicable(
            mc, PS_CK_RATELIMIT_RESET_CONSISTENT,
            "no two responses on one key came more than a second before the Reset the first "
            "named, so no window could be followed");
    if (!any_fall && k->static_admitted_pairs >= STATIC_PAIRS_FAIL && k->static_evidence) {
        ps_check_fail(
            ps_conform_checks(c), PS_CK_RATELIMIT_REMAINING_DECREMENTS, k->static_evidence,
            "X-RateLimit-Remaining never fell over %u consecutive admitted requests in one window "
            "(listCategories and createCategory, successes and errors; last: %s): nothing the "
            "runner "
            "sent was counted",
            k->static_admitted_pairs + k->uncounted[0][1] + k->uncounted[1][1], k->static_msg);
    }
}

void ps_ratelimit_judge_finish(const ps_conform *c)
{
    judge *j = judge_of(c);
    if (!j || j->finished) return;
    j->finished = true;
    if (j->observed && !j->any_header) {
        /* Nothing to judge them on: not applicable, as the rule they build
         * on failed (the run is not incomplete for them). */
        static const ps_check_id on_headers[] = {
            PS_CK_RATELIMIT_HEADERS_INTEGERS,   PS_CK_RATELIMIT_REMAINING_BOUNDS,
            PS_CK_RATELIMIT_LIMIT_MATCHES_PLAN, PS_CK_RATELIMIT_RESET_UNIX_SECONDS,
            PS_CK_RATELIMIT_RESET_CONSISTENT,   PS_CK_RATELIMIT_REMAINING_DECREMENTS,
            PS_CK_RATELIMIT_NO_EARLY_REFUSAL,   PS_CK_RATELIMIT_HEADERS_CONSISTENT};
        for (size_t i = 0; i < sizeof on_headers / sizeof on_headers[0]; i++)
            ps_conform_not_applicable((ps_conform *)c, on_headers[i],
                                      "no response carried X-RateLimit-Limit, -Remaining or -Reset "
                                      "(ratelimit.headers-present failed)");
    }
    if (!j->reset_window_judged)
        ps_conform_not_applicable((ps_conform *)c, PS_CK_RATELIMIT_RESET_WITHIN_WINDOW,
                                  "no response but 429s carried an integer X-RateLimit-Limit with "
                                  "a Unix-time X-RateLimit-Reset");
    bool any_fall = j->main.falls || j->limit.falls;
    finish_key(c, &j->main, any_fall);
    if (ps_conform_cfg(c)->limit_key_given) finish_key(c, &j->limit, any_fall);
}
