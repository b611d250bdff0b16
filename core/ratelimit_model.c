/* ratelimit_model.c - the shared rate-limit model (see ratelimit_model.h). */
#include "core/ratelimit_model.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const algo_names[PS_RLM_ALGOS] = {"fixed", "sliding-log", "sliding-counter",
                                                     "token-bucket"};

const char *ps_rlm_algo_name(ps_rlm_algo a)
{
    return (unsigned)a < PS_RLM_ALGOS ? algo_names[a] : NULL;
}

int ps_rlm_algo_parse(const char *name, ps_rlm_algo *out, ps_error *err)
{
    for (int i = 0; i < PS_RLM_ALGOS; i++) {
        if (strcmp(name, algo_names[i]) == 0) {
            *out = (ps_rlm_algo)i;
            return 0;
        }
    }
    return ps_error_set(
        err, "unknown limiter '%s' (fixed, sliding-log, sliding-counter or token-bucket)", name);
}

const char *ps_rlm_label_name(ps_rlm_label l)
{
    switch (l) {
    case PS_RLM_LABEL_UNKNOWN:
        return "unknown";
    case PS_RLM_LABEL_WINDOW:
        return "window";
    case PS_RLM_LABEL_FIXED_WINDOW:
        return "fixed-window";
    case PS_RLM_LABEL_SLIDING_WINDOW:
        return "sliding-window";
    case PS_RLM_LABEL_SLIDING_LOG:
        return "sliding-log";
    case PS_RLM_LABEL_SLIDING_COUNTER:
        return "sliding-counter";
    case PS_RLM_LABEL_TOKEN_BUCKET:
        return "token-bucket";
    case PS_RLM_LABEL_MOVING_WINDOW:
        return "moving-window";
    }
    return "unknown";
}

ps_rlm_label ps_rlm_label_of(ps_rlm_algo a)
{
    switch (a) {
    case PS_RLM_FIXED:
        return PS_RLM_LABEL_FIXED_WINDOW;
    case PS_RLM_SLIDING_LOG:
        return PS_RLM_LABEL_SLIDING_LOG;
    case PS_RLM_SLIDING_COUNTER:
        return PS_RLM_LABEL_SLIDING_COUNTER;
    case PS_RLM_TOKEN_BUCKET:
        return PS_RLM_LABEL_TOKEN_BUCKET;
    case PS_RLM_ALGOS:
        break;
    }
    return PS_RLM_LABEL_UNKNOWN;
}

bool ps_rlm_shape_refill(const ps_rlm_shape *s)
{
    return s->dense || (s->window_ns >= 4 * PS_RLM_RESET_ROUNDING_NS && s->full_ahead_ns > 0 &&
                        s->full_ahead_ns < s->window_ns / 2);
}

bool ps_rlm_shape_not_bucket(const ps_rlm_shape *s)
{
    if (s->lead_unbounded) return true;
    return s->max_period_falls >= 2 &&
           s->max_lead_per_used >= 1.0 / (double)(s->max_period_falls - 1);
}

ps_rlm_label ps_rlm_classify(const ps_rlm_shape *s)
{
    if (s->moved_ahead)
        return ps_rlm_shape_refill(s) ? PS_RLM_LABEL_TOKEN_BUCKET : PS_RLM_LABEL_MOVING_WINDOW;
    bool bucket_out = ps_rlm_shape_not_bucket(s);
    bool fixed = s->whole_returns && bucket_out, log = s->log_returns > 0,
         counter = s->counter_rises && bucket_out;
    if (fixed + log + counter == 1)
        return fixed ? PS_RLM_LABEL_FIXED_WINDOW
               : log ? PS_RLM_LABEL_SLIDING_LOG
                     : PS_RLM_LABEL_SLIDING_COUNTER;
    if (s->part_returns || s->rises) return PS_RLM_LABEL_SLIDING_WINDOW;
    if (s->held || s->whole_returns) return PS_RLM_LABEL_WINDOW;
    return PS_RLM_LABEL_UNKNOWN;
}

const char *ps_rlm_label_evidence(const ps_rlm_shape *s)
{
    switch (ps_rlm_classify(s)) {
    case PS_RLM_LABEL_TOKEN_BUCKET:
        return "X-RateLimit-Reset moved ahead with requests (when the bucket is full again), and "
               "a refill showed: token bucket or GCRA";
    case PS_RLM_LABEL_MOVING_WINDOW:
        return "X-RateLimit-Reset moved ahead with requests, but no refill showed: a moving "
               "window (a log whose Reset follows its newest request) or a token bucket, not told "
               "apart by what was seen";
    case PS_RLM_LABEL_FIXED_WINDOW:
        return "Reset held while Remaining fell, and the whole limit came back at Reset sooner "
               "than a sliding log or counter gives it back, with Reset further ahead than a "
               "token bucket's: fixed window";
    case PS_RLM_LABEL_SLIDING_LOG:
        return "Reset held while Remaining fell, and after Reset only part of the limit came "
               "back, with a Reset sooner than a counter's next window: sliding log";
    case PS_RLM_LABEL_SLIDING_COUNTER:
        return "Reset held while Remaining fell, and Remaining rose before any counted request "
               "could leave a log, with Reset further ahead than a token bucket's: sliding window "
               "counter";
    case PS_RLM_LABEL_SLIDING_WINDOW:
        return "room came back before Reset, or only part of the limit at Reset: a sliding log "
               "or sliding window counter, not told apart by what was seen";
    case PS_RLM_LABEL_WINDOW:
        if (ps_rlm_shape_not_bucket(s))
            return "Reset held while Remaining fell: fixed window, sliding log or sliding window "
                   "counter, not told apart by what was seen";
        return "Reset held while Remaining fell: fixed window, sliding log or sliding window "
               "counter, or a token bucket whose Reset moved less than a second per request; not "
               "told apart by what was seen";
    case PS_RLM_LABEL_UNKNOWN:
        break;
    }
    return "too few consecutive responses in one window to tell";
}

/* ---- plan windows --------------------------------------------------------- */

const char *ps_rlm_window_name(ps_rlm_window w)
{
    return w == PS_RLM_WINDOW_MINUTE ? "minute" : w == PS_RLM_WINDOW_DAY ? "day" : "unknown";
}

int64_t ps_rlm_window_seconds(ps_rlm_window w)
{
    return w == PS_RLM_WINDOW_MINUTE ? 60 : w == PS_RLM_WINDOW_DAY ? 86400 : 0;
}

ps_rlm_window ps_rlm_window_of_limit(const ps_plan *plan, int64_t limit)
{
    if (plan->per_minute > 0 && limit == plan->per_minute) return PS_RLM_WINDOW_MINUTE;
    if (plan->per_day > 0 && limit == plan->per_day) return PS_RLM_WINDOW_DAY;
    return PS_RLM_WINDOW_UNKNOWN;
}

bool ps_rlm_figures_known(const ps_plan *plan)
{
    return plan->per_minute > 0 && plan->per_day > 0;
}

ps_rlm_window ps_rlm_window_governing(const ps_plan *plan, int64_t limit, int64_t ahead_s)
{
    ps_rlm_window w = ps_rlm_window_of_limit(plan, limit);
    if (w != PS_RLM_WINDOW_UNKNOWN) return w;
    if (ahead_s != INT64_MAX) return ahead_s <= 60 ? PS_RLM_WINDOW_MINUTE : PS_RLM_WINDOW_DAY;
    return limit < plan->per_day ? PS_RLM_WINDOW_MINUTE : PS_RLM_WINDOW_DAY;
}

int64_t ps_rlm_plan_figure(const ps_plan *plan, ps_rlm_window w)
{
    return w == PS_RLM_WINDOW_MINUTE ? plan->per_minute
           : w == PS_RLM_WINDOW_DAY  ? plan->per_day
                                     : 0;
}

/* ---- Reset values ----------------------------------------------------------- */

ps_rlm_reset_form ps_rlm_reset_form_of(int64_t reset)
{
    if (reset < 1000000000LL) return PS_RLM_RESET_SECONDS_LEFT;
    if (reset > 100000000000LL) return PS_RLM_RESET_MILLIS;
    return PS_RLM_RESET_UNIX;
}

int64_t ps_rlm_reset_unix(int64_t reset, int64_t sent_s)
{
    switch (ps_rlm_reset_form_of(reset)) {
    case PS_RLM_RESET_SECONDS_LEFT:
        return reset + sent_s;
    case PS_RLM_RESET_MILLIS:
        return reset / 1000;
    case PS_RLM_RESET_UNIX:
        break;
    }
    return reset;
}

bool ps_rlm_reset_lenient(const char *raw, int64_t *out)
{
    if (!raw) return false;
    char *end;
    double v = strtod(raw, &end);
    while (*end == ' ' || *end == '\t')
        end++;
    if (end == raw || *end || !isfinite(v) || v < 0 || v > 9e15) return false;
    *out = (int64_t)ceil(v);
    return true;
}

bool ps_rlm_reset_time(const ps_rl_info *rl, int64_t sent_s, int64_t *out)
{
    int64_t v = rl->reset;
    if (rl->reset_state != PS_RL_OK && !ps_rlm_reset_lenient(rl->reset_raw, &v)) return false;
    *out = ps_rlm_reset_unix(v, sent_s);
    return true;
}

/* ---- the admission bound --------------------------------------------------- */

int64_t ps_rlm_allowed(ps_rlm_bound b, int64_t limit, int64_t window_ns, int64_t span_ns)
{
    if (b != PS_RLM_BOUND_TOKEN || window_ns <= 0) return limit;
    return limit +
           (int64_t)((double)(span_ns + PS_RLM_JITTER_NS) * (double)limit / (double)window_ns);
}

void ps_rlm_bucket_refill(int64_t limit, int64_t remaining, int64_t reset, int64_t sent_ns,
                          int64_t done_ns, double *lo, double *hi)
{
    double used = (double)(limit - remaining);
    double full_lo = (double)(reset - PS_RLM_RESET_SLACK_S) - (double)done_ns / 1e9;
    double full_hi = (double)(reset + PS_RLM_RESET_SLACK_S) - (double)sent_ns / 1e9;
    *lo = full_lo > 0 ? full_lo / (used + 1) : 0;
    *hi = used > 1 ? full_hi / (used - 1) : INFINITY;
}

int64_t ps_rlm_longest_span(int64_t window_ns)
{
    return window_ns > 0 ? window_ns / 10 * 9 : 0;
}

bool ps_rlm_window_reached(int64_t counted, int64_t refused, int64_t allowed)
{
    return refused > 0 || (allowed > 0 && counted >= allowed);
}

/* ---- which answers count ----------------------------------------------------- */

const char *ps_rlm_counted_name(ps_rlm_counted s)
{
    return s == PS_RLM_COUNTED ? "counted" : s == PS_RLM_NOT_COUNTED ? "not_counted" : "not_seen";
}

const char *ps_rlm_counted_words(ps_rlm_counted s)
{
    return s == PS_RLM_COUNTED ? "counted" : s == PS_RLM_NOT_COUNTED ? "not counted" : "not seen";
}

static const char *const op_word[PS_RLM_OPS] = {"list", "create"};

/* Appends to c->reason (truncated, never overflowing). */
static void say(ps_rlm_counting *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(ps_rlm_counting *c, const char *fmt, ...)
{
    size_t len = strlen(c->reason);
    if (len + 1 >= sizeof c->reason) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->reason + len, sizeof c->reason - len, fmt, ap);
    va_end(ap);
}

static bool op_given(ps_rlm_ops_rule r, int o)
{
    return r == PS_RLM_OPS_ALL || (r == PS_RLM_OPS_LIST && o == PS_RLM_OP_LIST) ||
           (r == PS_RLM_OPS_CREATE && o == PS_RLM_OP_CREATE);
}

/* One operation under the automatic rule. The 2xx admissions tell best:
 * 4xx ones may be taken back. */
static ps_rlm_counted op_inferred(const ps_rlm_evidence *e, int o, ps_rlm_counting *c)
{
    const char *sep = c->reason[0] ? "; " : "";
    const ps_rlm_tally *t =
        e->by[o][PS_RLM_2XX].admitted ? &e->by[o][PS_RLM_2XX] : &e->by[o][PS_RLM_4XX];
    if (e->refused[o] > 0) {
        say(c, "%s%s: counted (%lld refused with 429)", sep, op_word[o], (long long)e->refused[o]);
        return PS_RLM_COUNTED;
    }
    if (e->bursts_counted[o] > 0) {
        say(c, "%s%s: counted (a concurrent burst's admissions each took the next Remaining)", sep,
            op_word[o]);
        return PS_RLM_COUNTED;
    }
    if (t->admitted == 0) {
        say(c, "%s%s: none admitted", sep, op_word[o]);
        return PS_RLM_NOT_SEEN;
    }
    /* answers one at a time: no other request can make this one's
     * Remaining fall; concurrent ones blur it, so most must fall */
    bool fell = e->ordered ? t->fell > 0 : t->fell * 2 > t->admitted;
    if (fell || (e->refill && t->fell > 0)) {
        say(c, "%s%s: counted (never refused, but Remaining fell on %lld of %lld)", sep, op_word[o],
            (long long)t->fell, (long long)t->admitted);
        return PS_RLM_COUNTED;
    }
    if (e->refill || (e->ordered && t->held < 2)) {
        say(c, "%s%s: not told (Remaining fell on none of %lld%s)", sep, op_word[o],
            (long long)t->admitted,
            e->refill ? "; a refilling bucket holds it whatever is counted" : "");
        return PS_RLM_NOT_SEEN;
    }
    say(c, "%s%s: not counted (never refused, Remaining fell on only %lld of %lld)", sep,
        op_word[o], (long long)t->fell, (long long)t->admitted);
    return PS_RLM_NOT_COUNTED;
}

/* The refused windows' arithmetic for 4xx answers of the counted
 * operations: windows refused once their 2xx answers reached the limit (or
 * never refused although their 4xx answers took them past it) against
 * windows refused short of it with 4xx answers making it up. A token
 * bucket's Reset-keyed windows hold a few answers each: refused short of
 * the limit whatever is counted, they never make it up, so do not vote. */
static void windows_vote(const ps_rlm_evidence *e, const ps_rlm_counting *c, int64_t *full,
                         int64_t *short_of)
{
    *full = *short_of = 0;
    for (size_t i = 0; i < e->nwindows; i++) {
        const ps_rlm_window_tally *w = &e->windows[i];
        int64_t ok = 0, errs = 0;
        for (int o = 0; o < PS_RLM_OPS; o++) {
            if (c->ops[o] != PS_RLM_COUNTED) continue;
            ok += w->admitted[o][PS_RLM_2XX];
            errs += w->admitted[o][PS_RLM_4XX];
        }
        if (!errs || w->limit <= 0) continue;
        if (w->refused > 0 ? ok == w->limit : ok <= w->limit && ok + errs > w->limit)
            (*full)++;
        else if (w->refused > 0 && ok < w->limit && ok + errs >= w->limit)
            (*short_of)++;
    }
}

static ps_rlm_counted errors_inferred(const ps_rlm_evidence *e, ps_rlm_counting *c)
{
    int64_t ea = 0, ef = 0, full, short_of;
    for (int o = 0; o < PS_RLM_OPS; o++)
        if (c->ops[o] == PS_RLM_COUNTED) {
            ea += e->by[o][PS_RLM_4XX].admitted;
            ef += e->by[o][PS_RLM_4XX].fell;
        }
    if (ea == 0) {
        say(c, "; 4xx answers: none admitted on a counted operation");
        return PS_RLM_NOT_SEEN;
    }
    /* answers one at a time: a fall is the 4xx answer's own, and most
     * falling shows them counted whatever the Reset-keyed windows say (a
     * sliding limiter's refuse short of the limit) */
    if (e->ordered && ef * 2 > ea) {
        say(c, "; 4xx answers: counted (Remaining fell on %lld of %lld, one at a time)",
            (long long)ef, (long long)ea);
        return PS_RLM_COUNTED;
    }
    windows_vote(e, c, &full, &short_of);
    if (!e->ordered && full != short_of) {
        bool counted = short_of > full;
        say(c,
            "; 4xx answers: %s (of the windows with 4xx answers %lld were refused once the 2xx "
            "answers reached the limit or took the 4xx answers past it unrefused, %lld refused "
            "before, the 4xx answers making it up)",
            counted ? "counted" : "not counted", (long long)full, (long long)short_of);
        return counted ? PS_RLM_COUNTED : PS_RLM_NOT_COUNTED;
    }
    say(c, "; 4xx answers: not counted (Remaining fell on %lld of %lld%s)", (long long)ef,
        (long long)ea,
        e->ordered ? ""
                   : "; under concurrency a 4xx answer telling the state shows falls others made, "
                     "and no refused window told");
    return PS_RLM_NOT_COUNTED;
}

void ps_rlm_decide(const ps_rlm_evidence *e, ps_rlm_counting *c)
{
    memset(c, 0, sizeof *c);
    c->inferred = e->ops_rule == PS_RLM_OPS_AUTO || e->errors_rule == PS_RLM_ERRORS_AUTO;
    for (int o = 0; o < PS_RLM_OPS; o++) {
        if (e->ops_rule == PS_RLM_OPS_AUTO) {
            c->ops[o] = op_inferred(e, o, c);
            continue;
        }
        bool on = op_given(e->ops_rule, o);
        c->ops[o] = on ? PS_RLM_COUNTED : PS_RLM_NOT_COUNTED;
        say(c, "%s%s: %s (--limited-ops)", c->reason[0] ? "; " : "", op_word[o],
            on ? "counted" : "not counted");
    }
    /* Concurrent answers, none shown counted, yet Remaining went below the
     * limit: the service counted something and the blurred falls do not
     * tell what it left out, so every operation seen counts. Only Remaining
     * held at the limit shows a service counting none of them. (Ordered
     * answers tell each operation by its own falls.) */
    if (e->ops_rule == PS_RLM_OPS_AUTO && c->ops[0] != PS_RLM_COUNTED &&
        c->ops[1] != PS_RLM_COUNTED && e->below_limit && !e->ordered) {
        for (int o = 0; o < PS_RLM_OPS; o++)
            if (e->by[o][PS_RLM_2XX].admitted + e->by[o][PS_RLM_4XX].admitted > 0)
                c->ops[o] = PS_RLM_COUNTED;
        say(c, "; no operation was refused or made Remaining fall steadily, but Remaining went "
               "below the limit: all counted");
    }
    if (e->errors_rule != PS_RLM_ERRORS_AUTO) {
        c->errors = e->errors_rule == PS_RLM_ERRORS_YES ? PS_RLM_COUNTED : PS_RLM_NOT_COUNTED;
        say(c, "; 4xx answers: %s (--limited-errors)",
            c->errors == PS_RLM_COUNTED ? "counted" : "not counted");
    } else {
        c->errors = errors_inferred(e, c);
    }
    for (int o = 0; o < PS_RLM_OPS; o++) {
        if (c->ops[o] != PS_RLM_COUNTED) continue;
        c->mask |= PS_RLM_KIND_BIT(o, PS_RLM_2XX);
        if (c->errors == PS_RLM_COUNTED) c->mask |= PS_RLM_KIND_BIT(o, PS_RLM_4XX);
    }
}

const char *ps_rlm_counted_label(const ps_rlm_counting *c, char *buf, size_t size)
{
    bool list = c->ops[PS_RLM_OP_LIST] == PS_RLM_COUNTED,
         create = c->ops[PS_RLM_OP_CREATE] == PS_RLM_COUNTED;
    snprintf(buf, size, "%s%s",
             list && create ? "lists and creates"
             : list         ? "lists"
             : create       ? "creates"
                            : "nothing",
             c->errors == PS_RLM_NOT_COUNTED ? ", 4xx answers not" : "");
    return buf;
}
