/* ratelimit_judge_state.h - the rate-limit judge's per-run state, shared by
 * ratelimit_judge.c (the rules of each response, pair and run) and
 * ratelimit_judge_model.c (the limiter model inferred, and the report).
 * Internal to runner/suites: the judge's interface is ratelimit_judge.h. */
#ifndef PS_RUNNER_RATELIMIT_JUDGE_STATE_H
#define PS_RUNNER_RATELIMIT_JUDGE_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "runner/conform.h"

/* The last response of a key's sequence with usable Limit and Remaining. */
typedef struct resp_rec {
    bool have;
    int64_t limit, remaining, reset;
    bool reset_sane; /* reset is a plausible Unix time */
    long status;
    bool list; /* a GET (listCategories), else a POST */
    int64_t sent_ns, done_ns;
} resp_rec;

/* Remaining values a concurrent burst's admissions showed, to tell whether
 * its requests were counted (see burst_end). */
#define BURST_SEEN_MAX 1024

/* What tells the limiter models apart (see shape_of). Only responses
 * carrying the Limit of the first one count: a day window's headers say
 * nothing of the minute's algorithm. Times in ns of the wall clock. */
typedef struct model_clues {
    int64_t limit;
    /* the last admission of the sequence with a usable Reset: what came
     * back is measured from it, across the 429s between */
    resp_rec last_ok;
    /* the current period: responses naming one Reset, and the counted
     * requests (falls, Reset held) seen in it */
    int64_t period_reset, first_fall_done_ns, last_fall_sent_ns;
    unsigned period_falls, max_period_falls;
    /* the largest (Reset - 1 - done) / (Limit - Remaining) of a response
     * (seconds per used request); unbounded: Reset ahead with nothing used */
    double max_lead_per_used;
    bool lead_unbounded;
    /* evidence seen, each excluding the other models but perhaps a bucket */
    unsigned fixed_returns; /* the whole limit back sooner than a log or counter allow */
    unsigned part_returns;  /* part back at Reset */
    unsigned log_returns;   /* of those, sooner than a counter's next window */
    unsigned counter_rises; /* Remaining rose while no log entry could leave */
    /* a bucket's refill (ps_rlm_shape_refill): the most Reset - arrival of
     * a response; per Reset, its farthest Reset - arrival and its most
     * Remaining; the least farthest of the Resets whose Remaining stayed
     * at 3/4 of the limit or more (0: none) */
    int64_t max_ahead_ns;
    int64_t cur_reset, cur_ahead_ns, cur_max_remaining;
    int64_t full_ahead_ns;
} model_clues;

/* One concurrent burst on a key. */
typedef struct burst_clues {
    bool active, mixed, list, duplicate;
    int64_t limit;
    unsigned admitted;
    int64_t min_remaining, max_remaining;
    unsigned char seen[BURST_SEEN_MAX / 8];
} burst_clues;

/* The refill rate of a token bucket (seconds per token) that every Reset
 * seen moving later with a counted request on one Limit allows: [lo, hi].
 * The spec names no rate; one bucket has one. */
typedef struct bucket_rate {
    int64_t limit;
    unsigned seen; /* Resets that narrowed it */
    double lo, hi;
} bucket_rate;
/* Limit values followed per key (a minute's and a day's). */
#define RATE_SLOTS 2

/* One key's sequence and what it showed. */
typedef struct key_seq {
    resp_rec last;
    bool seen;                 /* any response on this key */
    bool remaining_valid_seen; /* any integer Remaining */
    unsigned held, moved_later;
    unsigned counted[2][2], uncounted[2][2]; /* [list, create][success, error] */
    unsigned falls, static_admitted_pairs, within_pairs;
    char *static_evidence; /* the last static pair, for the report */
    char static_msg[200];
    model_clues clues;
    burst_clues burst;
    unsigned burst_counted[2]; /* bursts whose admissions showed [list, create] counted */
    bucket_rate rates[RATE_SLOTS];
    /* the latest Reset the key named for Limit reset_high_limit (0: none):
     * a second below it is rounding, not a step back */
    int64_t reset_high, reset_high_limit;
    unsigned clock_steps; /* the service clock's restarts when the key was last seen */
} key_seq;

typedef struct judge {
    const ps_conform *owner;
    bool concurrent;
    bool finished;
    bool observed, any_header; /* a response was seen; one carried an X-RateLimit-* header */
    bool reset_window_judged;  /* ratelimit.reset-within-window had a response to judge */
    key_seq main, limit;
} judge;

/* The judge of a run: its observer state, which the run owns; NULL before
 * the run's first response. */
judge *judge_of(const ps_conform *c);
/* The sequence of the key a role uses (the limit key is the main key
 * without --limit-key); NULL for other roles. */
key_seq *judge_seq_for(const ps_conform *c, judge *j, ps_key_role role);

/* Adds an admitted response b, in order, to the clues that tell the
 * limiter models apart (ratelimit_judge_model.c). */
void judge_note_model(key_seq *tr, const resp_rec *b);

#endif
