/* ratelimit_model.h - the one model of rate limiting the three programs
 * share: the limiter algorithms and the names reports give them, the
 * counted states, which plan window a Limit value is, how a Reset value
 * reads, the admission bound each algorithm allows over a span, the clock
 * and rounding slack, and the decision "which answers count"
 * (ps_rlm_decide), a pure function of plain values.
 *
 * The collectors stay with their programs: the runner's judge reasons over
 * one key's sequence (runner/suites/ratelimit_judge.c), the load generator
 * over concurrent windows that merge across threads and shards
 * (loadgen/limits.c). Both fill a ps_rlm_evidence and take the state and
 * reason ps_rlm_decide gives; what they report as counted is what their
 * verdicts used. Nothing here allocates or keeps state. */
#ifndef PS_RATELIMIT_MODEL_H
#define PS_RATELIMIT_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "core/plan.h"
#include "core/ratelimit_headers.h"

/* ---- algorithms and report names ----------------------------------------- */

/* The four legal algorithms (docs/rate-limits.md says what the headers
 * mean in each); the reference server's --limiter takes their names. */
typedef enum ps_rlm_algo {
    PS_RLM_FIXED,           /* fixed windows; Reset = the window's end, steady */
    PS_RLM_SLIDING_LOG,     /* every admission logged; Reset = when the oldest leaves the window */
    PS_RLM_SLIDING_COUNTER, /* previous window's count weighted by the overlap + current count;
                               Reset = the end of the current counting window */
    PS_RLM_TOKEN_BUCKET,    /* Limit tokens per window, refilled continuously (GCRA);
                               Reset = when the bucket is full again (moves with every request) */
    PS_RLM_ALGOS
} ps_rlm_algo;

/* "fixed", "sliding-log", "sliding-counter", "token-bucket"; NULL out of range. */
const char *ps_rlm_algo_name(ps_rlm_algo a);
/* Parses one of those names. Returns 0, or -1 with err listing them. */
int ps_rlm_algo_parse(const char *name, ps_rlm_algo *out, ps_error *err);

/* What a report calls the limiter the responses showed. A label names an
 * algorithm only when the responses rule the others out; the other labels
 * say how far they went. */
typedef enum ps_rlm_label {
    PS_RLM_LABEL_UNKNOWN,        /* too few responses to tell */
    PS_RLM_LABEL_WINDOW,         /* Reset held: fixed window or a sliding one, not told apart */
    PS_RLM_LABEL_FIXED_WINDOW,   /* the whole limit came back at Reset */
    PS_RLM_LABEL_SLIDING_WINDOW, /* room came back before or only partly at Reset: log or counter */
    PS_RLM_LABEL_SLIDING_LOG,    /* part came back at Reset, sooner than a counter allows */
    PS_RLM_LABEL_SLIDING_COUNTER, /* Remaining rose before any log entry could leave */
    PS_RLM_LABEL_TOKEN_BUCKET,    /* Reset moved ahead with requests, and a refill showed */
    PS_RLM_LABEL_MOVING_WINDOW,   /* Reset moved ahead with requests, no refill shown */
} ps_rlm_label;

/* "unknown", "window", "fixed-window", "sliding-window", "sliding-log",
 * "sliding-counter", "token-bucket", "moving-window". */
const char *ps_rlm_label_name(ps_rlm_label l);
/* The label that names algorithm a ("fixed" is "fixed-window"). */
ps_rlm_label ps_rlm_label_of(ps_rlm_algo a);

/* What a collector saw of one key and Limit that tells the algorithms
 * apart, as plain values. The runner's judge fills it from one key's
 * sequence, the load generator from its windows (one key, Limit and Reset
 * each, merged across threads and shards); ps_rlm_classify reads it. Times
 * are arrival times (the client's, or the service's clock: one of them). */
typedef struct ps_rlm_shape {
    unsigned held;        /* Reset held while Remaining fell: a window (fixed or sliding) */
    unsigned moved_ahead; /* Reset moved ahead with requests while the previous Reset was more
                             than its rounding second off: a token bucket or a moving window */
    /* what a token bucket shows, or rules it out */
    int64_t window_ns;         /* the implied window: most Reset - arrival of an admission, less
                                  the rounding second (0: not known) */
    int64_t full_ahead_ns;     /* of the Resets under which Remaining stayed at 3/4 of the limit or
                                  more, the least of their farthest Reset - arrival (0: none) */
    bool dense;                /* more than the limit admitted within ps_rlm_longest_span(window) */
    double max_lead_per_used;  /* most (Reset - 1 s - arrival) / (Limit - Remaining), seconds */
    bool lead_unbounded;       /* Reset over a second ahead of an admission with nothing used */
    unsigned max_period_falls; /* most counted requests (Remaining fell) under one Reset */
    /* what came back, and when */
    unsigned whole_returns; /* the whole limit back at Reset, sooner than a sliding log or
                               counter gives it back */
    unsigned part_returns;  /* only part of the limit back at Reset: a sliding log or counter */
    unsigned log_returns;   /* of those, under a Reset sooner than a counter's next window */
    unsigned rises;         /* room back under one Reset before it came: a sliding limiter */
    unsigned counter_rises; /* of those, before any log entry could leave: a sliding counter */
} ps_rlm_shape;

/* A bucket's refill showed: more than the limit admitted within 0.9 x the
 * implied window (no log does that), or Reset under half a window off while
 * 3/4 of the limit was left (no window whose Reset follows its requests
 * does that). */
bool ps_rlm_shape_refill(const ps_rlm_shape *s);
/* No token bucket shows this: n counted requests under one Reset mean its
 * refill period T < 1 / (n - 1) s (each moves "full again" T later), while
 * a Reset further ahead than (Limit - Remaining) x T is no bucket's. */
bool ps_rlm_shape_not_bucket(const ps_rlm_shape *s);

/* The label the shape shows (pure: one rule for both programs). Reset
 * moving ahead: token-bucket when a refill showed (ps_rlm_shape_refill),
 * else moving-window. Else
 * an algorithm is named only when one sign singles it out (fixed-window:
 * the whole limit back with a bucket excluded; sliding-log; sliding-counter:
 * a rise with a bucket excluded); sliding-window when room came back before
 * or only partly at Reset; window when Reset only held; unknown when
 * nothing showed. */
ps_rlm_label ps_rlm_classify(const ps_rlm_shape *s);
/* One sentence of the evidence behind ps_rlm_classify(s). */
const char *ps_rlm_label_evidence(const ps_rlm_shape *s);

/* ---- plan windows --------------------------------------------------------- */

typedef enum ps_rlm_window {
    PS_RLM_WINDOW_UNKNOWN,
    PS_RLM_WINDOW_MINUTE,
    PS_RLM_WINDOW_DAY,
} ps_rlm_window;

/* "unknown", "minute", "day". */
const char *ps_rlm_window_name(ps_rlm_window w);
/* 60, 86400; 0 for unknown. */
int64_t ps_rlm_window_seconds(ps_rlm_window w);
/* The plan window a Limit value names: the plan's per-minute or per-day
 * figure; unknown when it is neither or the figures are not known. */
ps_rlm_window ps_rlm_window_of_limit(const ps_plan *plan, int64_t limit);
/* Whether both of the plan's figures are known (free, pro, business,
 * enterprise:PM:PD). */
bool ps_rlm_figures_known(const ps_plan *plan);
/* With both figures known, the window that governs a Limit: by its value,
 * else by how far ahead its Reset was (ahead_s; INT64_MAX: not known; a
 * minute window ends within 60 s), else the nearer figure. */
ps_rlm_window ps_rlm_window_governing(const ps_plan *plan, int64_t limit, int64_t ahead_s);
/* The plan's figure for window w (0: unknown). */
int64_t ps_rlm_plan_figure(const ps_plan *plan, ps_rlm_window w);

/* ---- Reset values, clock and rounding slack -------------------------------- */

/* Reset is rounded up to a whole second: the time it names lies in
 * (Reset - 1 s, Reset]. */
#define PS_RLM_RESET_ROUNDING_NS 1000000000LL
#define PS_RLM_RESET_ROUNDING_S INT64_C(1)
/* Slack for comparing a Reset with a client clock: the rounding on both
 * sides plus an exchange's own duration. */
#define PS_RLM_RESET_SLACK_S 2
/* Concurrent answers arrive reordered by up to this much: an admission
 * within it of a refusal is not "room came back". */
#define PS_RLM_REORDER_NS 50000000LL
/* Arrival jitter a token bucket's refill is allowed over any span. */
#define PS_RLM_JITTER_NS 100000000LL
/* The shortest span a token bucket's burst is looked for in. */
#define PS_RLM_FIRST_SPAN_NS 25000000LL

/* How an X-RateLimit-Reset integer reads. The spec fixes a Unix time in
 * seconds; plugins also send seconds left and milliseconds. */
typedef enum ps_rlm_reset_form {
    PS_RLM_RESET_UNIX,         /* a Unix time in seconds */
    PS_RLM_RESET_SECONDS_LEFT, /* below 10^9 (before 2001: no Unix time a service sends) */
    PS_RLM_RESET_MILLIS,       /* above 10^11 (after 5138) */
} ps_rlm_reset_form;

ps_rlm_reset_form ps_rlm_reset_form_of(int64_t reset);
/* The Unix second a Reset in any of those forms names; sent_s is the
 * client's second when the request went out (for seconds left). Seconds
 * left counted from a whole second land within a second of the true end:
 * two answers of one window name ends at most PS_RLM_RESET_ROUNDING_NS
 * apart. */
int64_t ps_rlm_reset_unix(int64_t reset, int64_t sent_s);

/* The time an X-RateLimit-Reset value names when it is a number but not a
 * plain integer ("1795353910.3076": its ceiling; real plugins send it);
 * false when it is no number. The runner's ratelimit.reset-unix-seconds
 * fails the form; the rules built on the time still use it. */
bool ps_rlm_reset_lenient(const char *raw, int64_t *out);
/* The Unix second an X-RateLimit-Reset names, for deciding whether a
 * window can have ended (it ends after that second minus one, Reset being
 * rounded up): whole or fractional Unix seconds, seconds left (counted from
 * sent_s, the client's second when the request went out), milliseconds.
 * False when it names no time. */
bool ps_rlm_reset_time(const ps_rl_info *rl, int64_t sent_s, int64_t *out);

/* ---- the admission bound --------------------------------------------------- */

/* Which bound a verdict holds a key and limit to, from what its responses
 * showed (never a claim of the algorithm: the label says that). */
typedef enum ps_rlm_bound {
    PS_RLM_BOUND_WINDOW,  /* Reset steady: each announced window admits at most its limit */
    PS_RLM_BOUND_SLIDING, /* room came back under a Reset that had refused: at most the limit
                             in any span up to the window */
    PS_RLM_BOUND_TOKEN,   /* Reset moved ahead before the previous one passed: the limit plus
                             what refills in the span */
} ps_rlm_bound;

/* What bound b allows over span_ns (<= window_ns) for a limit per window:
 * the limit for a window or sliding bound, plus limit x (span + jitter) /
 * window for a token bucket. window_ns > 0. */
int64_t ps_rlm_allowed(ps_rlm_bound b, int64_t limit, int64_t window_ns, int64_t span_ns);
/* The refill rates (seconds per token, [*lo, *hi]) a token bucket may have
 * that answered Limit, Remaining and Reset to a request sent and answered
 * at sent_ns and done_ns (wall clock): its Reset is when it is full again,
 * so Limit - Remaining tokens (one more or less: Remaining rounded either
 * way) take that long to refill, Reset rounded a second either way plus
 * the clock slack. *hi is INFINITY with one token used or none. */
void ps_rlm_bucket_refill(int64_t limit, int64_t remaining, int64_t reset, int64_t sent_ns,
                          int64_t done_ns, double *lo, double *hi);
/* The longest span a moving limiter is held to: 0.9 x the window the
 * headers imply (that window is itself a rounding second short). */
int64_t ps_rlm_longest_span(int64_t window_ns);
/* Whether a window that counted `counted` admissions and refused `refused`
 * requests reached its limit: it refused, or its count came to the
 * allowance. */
bool ps_rlm_window_reached(int64_t counted, int64_t refused, int64_t allowed);

/* ---- which answers count --------------------------------------------------- */

/* The operations and the classes of an admitted answer (2xx, or 4xx that a
 * service may take back). */
enum { PS_RLM_OP_LIST, PS_RLM_OP_CREATE, PS_RLM_OPS };
enum { PS_RLM_2XX, PS_RLM_4XX, PS_RLM_CLASSES };
/* The bit of (op, class) in ps_rlm_counting.mask. */
#define PS_RLM_KIND_BIT(op, cls) (1u << ((op)*2 + (cls)))

typedef enum ps_rlm_counted {
    PS_RLM_COUNTED,
    PS_RLM_NOT_COUNTED,
    PS_RLM_NOT_SEEN, /* nothing told: no admission of that kind, or none that could show it */
} ps_rlm_counted;

/* "counted", "not_counted", "not_seen" (the load report's words). */
const char *ps_rlm_counted_name(ps_rlm_counted s);
/* "counted", "not counted", "not seen" (the conformance report's words). */
const char *ps_rlm_counted_words(ps_rlm_counted s);

/* What the user said (--limited-ops / --count-ops, --limited-errors). */
typedef enum ps_rlm_ops_rule {
    PS_RLM_OPS_AUTO,
    PS_RLM_OPS_ALL,
    PS_RLM_OPS_LIST,
    PS_RLM_OPS_CREATE,
} ps_rlm_ops_rule;
typedef enum ps_rlm_errors_rule {
    PS_RLM_ERRORS_AUTO,
    PS_RLM_ERRORS_YES,
    PS_RLM_ERRORS_NO,
} ps_rlm_errors_rule;

/* Admissions of one (operation, class): those whose Remaining fell below
 * what had been shown (a counted request's mark) and those whose Remaining
 * held within one window (an uncounted one tells the state as it stands).
 * admitted >= fell + held: some admissions show neither. */
typedef struct ps_rlm_tally {
    int64_t admitted, fell, held;
} ps_rlm_tally;

/* One window (one key, Limit and Reset) as counted: its Limit, its 429s
 * and its admissions per (operation, class). The 4xx rule reads them: a
 * window refused once its 2xx answers reached the limit is what a service
 * not counting 4xx answers shows, one refused short of it with 4xx answers
 * making it up what a service counting them shows. */
typedef struct ps_rlm_window_tally {
    int64_t limit, refused;
    int64_t admitted[PS_RLM_OPS][PS_RLM_CLASSES];
} ps_rlm_window_tally;

typedef struct ps_rlm_evidence {
    ps_rlm_ops_rule ops_rule;
    ps_rlm_errors_rule errors_rule;
    ps_rlm_tally by[PS_RLM_OPS][PS_RLM_CLASSES];
    int64_t refused[PS_RLM_OPS];        /* 429s in windows that admitted too (not a ban's) */
    int64_t bursts_counted[PS_RLM_OPS]; /* concurrent bursts whose admissions each took the next
                                           Remaining value */
    bool below_limit;                   /* some admission said Remaining below its Limit */
    bool ordered; /* answers came one at a time: a fall is the request's own */
    bool refill;  /* a token bucket refilling between answers: a held Remaining proves nothing */
    const ps_rlm_window_tally *windows; /* may be NULL */
    size_t nwindows;
} ps_rlm_evidence;

typedef struct ps_rlm_counting {
    ps_rlm_counted ops[PS_RLM_OPS];
    ps_rlm_counted errors; /* 4xx answers of counted operations */
    bool inferred;         /* false: both from the user's rules */
    unsigned mask;         /* PS_RLM_KIND_BIT per (op, class) the verdict counts */
    char reason[384];
} ps_rlm_counting;

/* Which answers count, from the evidence alone (pure: same evidence, same
 * result). Rules given by the user win. Else an operation is counted when
 * refused with 429 (in a window that also admitted), when a concurrent
 * burst's admissions took consecutive Remaining values, or when Remaining
 * fell on its admissions (any fall when the answers were ordered, most of
 * them when concurrent); not counted when Remaining held on two or more and
 * fell on no more (a refilling bucket makes a hold mean nothing: not seen);
 * when, under concurrency, none is shown counted but Remaining went below
 * the limit, every operation seen is. 4xx answers of counted operations:
 * answers one at a time count them when Remaining fell on most (their own
 * falls); else the refused windows' arithmetic decides when it tells (only
 * windows that are windows: no Reset moved ahead); concurrent falls never show them
 * counted (an uncounted answer telling the state shows a fall a concurrent
 * counted request made). The mask holds exactly the (op, class) pairs
 * whose state is counted. */
void ps_rlm_decide(const ps_rlm_evidence *e, ps_rlm_counting *out);

/* "lists and creates", "lists", "creates" or "nothing", with ", 4xx answers
 * not" when those are left out: what a count covered. Returns buf. */
const char *ps_rlm_counted_label(const ps_rlm_counting *c, char *buf, size_t size);

#endif
