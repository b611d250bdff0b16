/* limits.h - verification of the server's rate limiting from the responses
 * a load test saw (--verify-limits), whatever the limiter's algorithm
 * (ps_lg_limits_verify says how the model is inferred).
 *
 * Every response that names its window (X-RateLimit-Limit L and
 * X-RateLimit-Reset R) is counted under the window (key, L, R): the Reset
 * value is the window's identity, as the spec makes it the time the window
 * ends. The window's allowance is the plan's figure when the plan's figures
 * are known (free, pro, business, enterprise:PM:PD, per key in --keys): the
 * per-minute or per-day one, matched by L, or (when L is neither) by how far
 * ahead the Reset was (up to 60 s: minute); a header L that is not one of
 * the plan's figures is itself a bad_headers violation naming both. Without
 * known figures (plain enterprise, no --plan) the allowance is L. A window
 * that admitted (non-429) more than its allowance is an over-admission. A window that refused with
 * 429 although fewer than L were admitted, when this run watched the window from its start (it saw
 * the window's first admission, Remaining = L - 1, or an earlier window of the same key and limit)
 * and no request on that key failed, is an under-admission: reported as a warning, never failing
 * the run, because other clients of the same key (or a response reporting the day window instead)
 * explain it as well as a limiter bug does. Every response must carry the three X-RateLimit-*
 * headers, well formed, and every 429 a valid Retry-After; a missing or malformed one fails the
 * run.
 *
 * A ps_lg_limits belongs to one thread while the run lasts (no locks);
 * threads' tables are merged after join. It owns its memory. */
#ifndef PS_LG_LIMITS_H
#define PS_LG_LIMITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "core/ratelimit_model.h"
#include "loadgen/config.h"
#include "loadgen/response.h"

/* What an admission was, for the counting rule the spec (section 8 rule 4)
 * leaves open: its operation, and whether it was answered 4xx (an "error":
 * a service may take those back). ps_lg_kind_of makes one. */
typedef enum ps_lg_kind {
    PS_LG_KIND_LIST,
    PS_LG_KIND_LIST_4XX,
    PS_LG_KIND_CREATE,
    PS_LG_KIND_CREATE_4XX,
    PS_LG_KINDS
} ps_lg_kind;

static inline ps_lg_kind ps_lg_kind_of(ps_lg_op op, int status)
{
    return (ps_lg_kind)((op == PS_LG_OP_CREATE ? 2 : 0) + (status >= 400 && status < 500));
}

/* The responses of one key that named one (X-RateLimit-Limit, -Reset)
 * pair: under fixed windows, one window. Times are the client's wall clock
 * when the response arrived, in ns; 0 = not known. The totals (admitted,
 * first_ns, ...) cover every kind; the _by arrays let the verdict count only
 * the kinds the service counts. */
typedef struct ps_lg_window {
    int64_t limit, reset;
    int64_t admitted, limited;
    int64_t max_remaining, min_remaining; /* over admitted responses; -1 = none */
    int64_t min_ahead_s;                  /* least Reset - now seen (INT64_MAX: not known) */
    uint32_t key;
    bool used;
    /* reset is not the service's Reset but the end the run placed the
     * window at (arrival + seconds left, or milliseconds / 1000): a Reset
     * that is not a Unix time is bad_headers, never a window's identity */
    bool placed;
    int64_t first_ns;         /* first response (admitted or 429) naming this pair */
    int64_t first_limited_ns; /* first 429 naming it */
    int64_t last_admit_ns;    /* last admission naming it */
    int64_t max_ahead_ns;     /* most Reset - arrival seen on an admission (0: none) */
    /* arrival of each admission (up to PS_LG_ADMIT_TIMES), owned; the low
     * two bits hold its ps_lg_kind (a 3 ns error on the time) */
    int64_t *admit_ns;
    uint32_t nadmit_ns, cap_admit_ns;
    int64_t admitted_by[PS_LG_KINDS];
    /* admissions whose Remaining fell below every Remaining this window had
     * shown (per thread): what a counted admission does and an uncounted
     * one, which tells the state as it stands, does not */
    int64_t fell_by[PS_LG_KINDS];
    /* admissions right after a 429 on their thread: the state moved (a
     * window ended, a token or slot came back) to let them in, so whether
     * Remaining fell tells nothing of their own counting (neither fell
     * nor held) */
    int64_t untold_by[PS_LG_KINDS];
    int64_t limited_by[PS_LG_OPS]; /* 429s per operation: refused, so counted */
    /* of limited, the 429s answering --warmup requests: the window needs
     * them, the run's figures (the refusal split) leave them out */
    int64_t limited_warm;
    /* admissions whose Remaining rose above the same thread's last one
     * under this Reset, over PS_RLM_REORDER_NS later and before Reset less
     * its rounding second: room back before any log entry could leave (a
     * sliding window counter's decay, or a bucket's refill) */
    int64_t rises;
    int64_t first_admit_ns_by[PS_LG_KINDS], last_admit_ns_by[PS_LG_KINDS];
    int64_t max_ahead_ns_by[PS_LG_KINDS];
} ps_lg_window;

/* Admission times kept per window, for the interval check of moving
 * limiters (beyond it the window's count still counts, its times do not). */
#define PS_LG_ADMIT_TIMES 65536

typedef struct ps_lg_key_model {
    size_t key; /* index into the config's keys */
    int64_t limit;
    ps_rlm_label model; /* the label: what the responses showed (ps_lg_limits_models) */
    int64_t window_ms;  /* window length the headers imply (0: not known) */
} ps_lg_key_model;

/* What one key's limits were taken to count, and why: the shared model's
 * decision (ps_rlm_decide) on this run's evidence, which the verdict
 * counts by (exactly the kinds in counting.mask). */
typedef struct ps_lg_counting {
    size_t key; /* index into the config's keys */
    ps_rlm_counting counting;
} ps_lg_counting;

typedef struct ps_lg_key_checks {
    int64_t responses, missing_headers, bad_headers, missing_retry_after, bad_retry_after;
    int64_t failures; /* requests on the key that got no response */
    /* this thread's last Remaining on an admission + 1 (0: none), what a
     * window's first admission must go below to count as falling */
    int64_t last_remaining_1;
    /* this thread's last admission with a Remaining: its Limit, Reset,
     * Remaining and arrival (ns; 0: none), what a rise is measured from */
    int64_t last_limit, last_reset, last_remaining, last_admit_ns;
    bool after_429; /* this thread's last answer on the key was a 429 */
    /* 429s naming no window (no X-RateLimit-Limit/-Reset), per operation:
     * still refusals of it, what tells the counting that it counts */
    int64_t bare_limited_by[PS_LG_OPS];
    /* admissions naming no window (no X-RateLimit-Reset or -Limit):
     * arrival, low two bits its ps_lg_kind (as admit_ns), owned; placed by
     * ps_lg_limits_place in the windows the key's 429s name */
    int64_t *unplaced;
    uint32_t nunplaced, cap_unplaced;
    int64_t placed; /* of them, placed in a window */
    /* the first offending header of each check, as "X-RateLimit-Reset: 37
     * (...)", shown in the violation's message ("" when none) */
    char missing_sample[64], bad_sample[96], retry_sample[64];
} ps_lg_key_checks;

typedef struct ps_lg_limits {
    ps_lg_window *slots;
    size_t cap, count;
    ps_lg_key_checks *keys;
    size_t nkeys;
} ps_lg_limits;

typedef enum ps_lg_violation_kind {
    PS_LG_V_OVER_ADMISSION,
    PS_LG_V_UNDER_ADMISSION,
    PS_LG_V_MISSING_RETRY_AFTER,
    PS_LG_V_MISSING_HEADERS,
    PS_LG_V_BAD_HEADERS,
} ps_lg_violation_kind;

typedef struct ps_lg_violation {
    ps_lg_violation_kind kind;
    size_t key;         /* index into the config's keys */
    const char *window; /* "minute", "day" or "unknown" (static) */
    int64_t reset;      /* the window's X-RateLimit-Reset, 0 when not about a window */
    int64_t admitted, limit, count;
    bool fails;         /* false for warnings (under-admission) */
    ps_rlm_bound bound; /* the bound the verdict held the key and limit to */
    char message[512];
} ps_lg_violation;

int ps_lg_limits_init(ps_lg_limits *l, size_t nkeys);
void ps_lg_limits_free(ps_lg_limits *l);
/* Counts one response on key, received at now_ns (wall clock, Unix ns). */
void ps_lg_limits_observe_ns(ps_lg_limits *l, size_t key, const ps_lg_resp *r, int64_t now_ns);
/* The same for an answer to operation op (what the counting rule needs);
 * warm: it answered a --warmup request (its window counts it, the run's
 * refusal split does not). */
void ps_lg_limits_observe_op(ps_lg_limits *l, size_t key, ps_lg_op op, const ps_lg_resp *r,
                             int64_t now_ns, bool warm);
/* The same at now_s (Unix seconds: no interval check on these times). */
void ps_lg_limits_observe_at(ps_lg_limits *l, size_t key, const ps_lg_resp *r, int64_t now_s);
/* The same without a receive time (the window is then told by L alone). */
void ps_lg_limits_observe(ps_lg_limits *l, size_t key, const ps_lg_resp *r);
/* Counts one request on key that got no response. */
void ps_lg_limits_failure(ps_lg_limits *l, size_t key);
/* Adds src into dst (same nkeys). */
void ps_lg_limits_merge(ps_lg_limits *dst, const ps_lg_limits *src);
/* Adds one window's counts (a shard's, read back by the merge) into l. */
void ps_lg_limits_add_window(ps_lg_limits *l, const ps_lg_window *w);

/* Checks every window and key. Fills a new array the caller frees (*out,
 * *n) and returns the number of violations that fail the run.
 *
 * Only the admissions of the kinds the key's limits count
 * (ps_lg_limits_counting) are counted; windows holding none of those and no
 * 429 are left out. No limiter algorithm is assumed. Per key and limit the model is inferred
 * (ps_lg_limits_models): when every announced window admitted no more than
 * its allowance, that is the verdict, whatever the model (a token bucket or
 * sliding counter stays within it too). When one admitted more, a fixed
 * window over-admitted; but a moving limiter (its Reset moved ahead while
 * the previous was still far off, or it admitted again under a Reset that
 * had already refused) is instead held to what its model allows in any
 * interval of 0.9 x the window the headers imply (most Reset - arrival,
 * less a second of rounding): the allowance for a sliding limiter, the
 * allowance plus what refilled in that interval for a token bucket. */
size_t ps_lg_limits_verify(const ps_lg_limits *l, const ps_lg_config *cfg, ps_lg_violation **out,
                           size_t *n);
/* Places the admissions that named no window (2xx without X-RateLimit-
 * Reset) in the windows the key's 429s name: a window of the key's plan
 * whose Limit is its per-minute (60 s) or per-day figure, ending at the
 * 429s' Reset, holds every admission that arrived within it. Without a
 * 429 naming a window, or with --time-scale (the headers keep real times),
 * nothing is placed. Call once, after the threads' tables are merged and
 * before verify. */
void ps_lg_limits_place(ps_lg_limits *l, const ps_lg_config *cfg);
/* What each key with a window was taken to count (ps_lg_counting), in key
 * order: a new array the caller frees. verify and models use the same. */
void ps_lg_limits_counting(const ps_lg_limits *l, const ps_lg_config *cfg, ps_lg_counting **out,
                           size_t *n);
/* The windows verify judged: those with a counted admission or a 429. */
size_t ps_lg_limits_counted_windows(const ps_lg_limits *l, const ps_lg_config *cfg);
/* Of those, the windows that reached their limit: refused with 429, or
 * counted as many admissions as their allowance (ps_rlm_window_reached),
 * for a capacity report's "windows that reached their limit". */
size_t ps_lg_limits_reached_windows(const ps_lg_limits *l, const ps_lg_config *cfg);
/* The model label per (key, limit) seen, in key then limit order: a new
 * array the caller frees. Information only: a label names an algorithm
 * only when the responses rule the others out. token-bucket: Reset moved
 * ahead while the previous one was far off, and a bucket's refill showed
 * (more than the limit admitted within 0.9 x the implied window, which no
 * sliding log does, or Reset under half a window off while 3/4 of the limit
 * was left, which no window whose Reset follows its requests does); else
 * moving-window. With Reset held: sliding-window when room came back under
 * a Reset that had refused or only part of the limit came back after Reset;
 * fixed-window when the whole limit came back after Reset while the last
 * window's latest admission was less than a window old (a sliding log would
 * still count it); else window (fixed or sliding: not told apart). */
void ps_lg_limits_models(const ps_lg_limits *l, const ps_lg_config *cfg, ps_lg_key_model **out,
                         size_t *n);
const char *ps_lg_violation_kind_name(ps_lg_violation_kind k);

#endif
