/* limits_verdict.c - the verdict of --verify-limits on the windows a run
 * counted (limits_view.h): each key and limit held to the bound its
 * responses call for (core/ratelimit_model.h), the header rules per key,
 * and the label of each limiter seen. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/ratelimit_model.h"
#include "loadgen/limits.h"
#include "loadgen/limits_view.h"

#define NS 1000000000LL

static void min_known(int64_t *dst, int64_t v)
{
    if (v && (!*dst || v < *dst)) *dst = v;
}

static void max_into(int64_t *dst, int64_t v)
{
    if (v > *dst) *dst = v;
}

static ps_lg_violation *push(ps_lg_violation **arr, size_t *n, size_t *cap)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 8;
        *arr = realloc(*arr, *cap * sizeof **arr);
        if (!*arr) abort();
    }
    ps_lg_violation *v = &(*arr)[(*n)++];
    memset(v, 0, sizeof *v);
    return v;
}

static int by_key_reset(const void *a, const void *b)
{
    const ps_lg_violation *x = a, *y = b;
    if (x->fails != y->fails) return x->fails ? -1 : 1;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return (x->reset > y->reset) - (x->reset < y->reset);
}

/* The bound the verdict holds the windows ws[a..b) (one key and limit, by
 * Reset) to, never a label (infer_label names the algorithm). A fixed
 * window's successor starts only after it ended: a Reset that moves ahead
 * while the previous one is more than a second (its rounding) off is a
 * token bucket's. An admission under a Reset that had already refused (50 ms
 * later, past any reordering of concurrent answers) means room came back
 * before Reset: a sliding limiter. */
static ps_rlm_bound infer_bound(const ps_lg_window *const *ws, size_t a, size_t b)
{
    bool sliding = false;
    for (size_t j = a; j < b; j++) {
        const ps_lg_window *w = ws[j];
        if (j > a && w->first_ns && w->first_ns < ws[j - 1]->reset * NS - NS - PS_RLM_JITTER_NS)
            return PS_RLM_BOUND_TOKEN;
        if (w->first_limited_ns && w->last_admit_ns > w->first_limited_ns + PS_RLM_REORDER_NS)
            sliding = true;
    }
    return sliding ? PS_RLM_BOUND_SLIDING : PS_RLM_BOUND_WINDOW;
}

/* The window length the headers imply: the most Reset - arrival seen on an
 * admission, less the second Reset's rounding up may add; 0 when unknown. */
static int64_t implied_window_ns(const ps_lg_window *const *ws, size_t a, size_t b)
{
    int64_t hi = 0;
    for (size_t j = a; j < b; j++)
        if (ws[j]->max_ahead_ns > hi) hi = ws[j]->max_ahead_ns;
    return hi > PS_RLM_RESET_ROUNDING_NS ? hi - PS_RLM_RESET_ROUNDING_NS : 0;
}

static int by_time(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Most admissions of the kinds in mask of ws[a..b) arriving within any
 * span of span_ns. */
static int64_t densest(const ps_lg_window *const *ws, size_t a, size_t b, int64_t span_ns,
                       unsigned mask, int64_t *first_ns, int64_t *last_ns)
{
    size_t n = 0;
    for (size_t j = a; j < b; j++)
        n += ws[j]->nadmit_ns;
    int64_t *t = malloc((n ? n : 1) * sizeof *t);
    if (!t) abort();
    n = 0;
    for (size_t j = a; j < b; j++)
        for (uint32_t k = 0; k < ws[j]->nadmit_ns; k++)
            if (mask & (1u << (ws[j]->admit_ns[k] & 3))) t[n++] = ws[j]->admit_ns[k] & ~(int64_t)3;
    qsort(t, n, sizeof *t, by_time);
    int64_t best = 0;
    for (size_t lo = 0, hi = 0; hi < n; hi++) {
        while (t[hi] - t[lo] >= span_ns)
            lo++;
        if ((int64_t)(hi - lo + 1) > best) {
            best = (int64_t)(hi - lo + 1);
            if (first_ns) *first_ns = t[lo];
            if (last_ns) *last_ns = t[hi];
        }
    }
    free(t);
    return best;
}

/* A window's first admission of the kinds in mask (0: none timed). */
static int64_t first_admit_ns(const ps_lg_window *w, unsigned mask)
{
    int64_t first = 0;
    for (int k = 0; k < PS_LG_KINDS; k++)
        if (mask & (1u << k)) min_known(&first, w->first_admit_ns_by[k]);
    return first;
}

/* A window's admissions whose Remaining fell (every kind: the model's
 * signs are the headers', whatever counts). */
static int64_t falls_of(const ps_lg_window *w)
{
    int64_t n = 0;
    for (int k = 0; k < PS_LG_KINDS; k++)
        n += w->fell_by[k];
    return n;
}

/* The Reset of one window against its arrival times: how far ahead its
 * Reset was at the most, and what that says of a bucket (its lead per
 * request used) and of a refill (Reset near while 3/4 of the limit was
 * left), into s. */
static void note_window_lead(ps_rlm_shape *s, const ps_lg_window *w, int64_t limit)
{
    int64_t ahead = 0;
    for (int k = 0; k < PS_LG_KINDS; k++)
        max_into(&ahead, w->max_ahead_ns_by[k]);
    if (ahead > 0 && w->max_remaining >= 0 && 4 * w->max_remaining >= 3 * limit &&
        (!s->full_ahead_ns || ahead < s->full_ahead_ns))
        s->full_ahead_ns = ahead;
    int64_t falls = falls_of(w);
    if (falls > 1) s->held++;
    if ((unsigned)falls > s->max_period_falls) s->max_period_falls = (unsigned)falls;
    double lead = (double)(w->max_ahead_ns - NS) / 1e9;
    int64_t used = limit - w->max_remaining;
    if (w->max_remaining < 0 || !w->max_ahead_ns || lead <= 0) return;
    if (used <= 0)
        s->lead_unbounded = true;
    else if (lead / (double)used > s->max_lead_per_used)
        s->max_lead_per_used = lead / (double)used;
}

/* What came back when window w began once p's Reset came (p must have
 * held something, w must show it), into s. */
static void note_return(ps_rlm_shape *s, const ps_lg_window *p, const ps_lg_window *w,
                        int64_t limit, unsigned mask)
{
    int64_t f = first_admit_ns(w, mask), pf = first_admit_ns(p, mask);
    if (!f || w->max_remaining < 0 || p->admitted == 0) return;
    if (w->max_remaining < limit - 1) {
        /* part back: a counter's next window ends W after the last, a log's
         * Reset is its next oldest entry's */
        s->part_returns++;
        double w_lo = (double)p->reset - 1.0 - (double)pf / 1e9;
        if (pf && w_lo > 0 && (double)(w->reset - p->reset) <= w_lo - 1.0) s->log_returns++;
    } else if (p->last_admit_ns && p->max_ahead_ns > NS &&
               f < p->last_admit_ns + p->max_ahead_ns - NS - PS_RLM_REORDER_NS) {
        /* all back while p's latest admission was younger than a window
         * (p's implied one: never longer than the true one): a sliding log
         * would still have counted it */
        s->whole_returns++;
    }
}

/* The signs of ws[a..b) (one key and limit, by Reset; mask: the kinds
 * counted) for the shared model's label (ps_rlm_classify). Every model's
 * Reset lies at most a window and a rounding second after an admission, so
 * the implied window (most Reset - arrival, less that second) never
 * exceeds the true one: the bounds below hold whatever the algorithm. */
static void shape_of(const ps_lg_window *const *ws, size_t a, size_t b, unsigned mask,
                     ps_rlm_shape *s)
{
    int64_t limit = ws[a]->limit;
    memset(s, 0, sizeof *s);
    s->window_ns = implied_window_ns(ws, a, b);
    for (size_t j = a; j < b; j++) {
        const ps_lg_window *w = ws[j];
        /* room back under a Reset that had refused (50 ms: reordering) */
        if (w->first_limited_ns && w->last_admit_ns > w->first_limited_ns + PS_RLM_REORDER_NS)
            s->rises++;
        s->counter_rises += (unsigned)w->rises;
        note_window_lead(s, w, limit);
        if (j == a) continue;
        const ps_lg_window *p = ws[j - 1];
        if (w->first_ns && w->first_ns < p->reset * NS - NS - PS_RLM_JITTER_NS)
            s->moved_ahead++;
        else
            note_return(s, p, w, limit, mask);
    }
    s->rises += s->counter_rises;
    /* no sliding log admits more than its limit in under a window */
    if (s->moved_ahead && !ps_rlm_shape_refill(s) && ps_rlm_longest_span(s->window_ns) > 0)
        s->dense = densest(ws, a, b, ps_rlm_longest_span(s->window_ns), mask, NULL, NULL) > limit;
}

static ps_rlm_label infer_label(const ps_lg_window *const *ws, size_t a, size_t b, unsigned mask)
{
    ps_rlm_shape s;
    shape_of(ws, a, b, mask, &s);
    return ps_rlm_classify(&s);
}

/* The verdict in progress: the view it judges and the violations found. */
typedef struct verdict {
    const ps_lg_limits *l;
    const ps_lg_config *cfg;
    const ps_lg_view *v;
    ps_lg_violation *out;
    size_t n, cap, failing;
} verdict;

static ps_lg_violation *add(verdict *vd, ps_lg_violation_kind kind, bool fails, size_t key)
{
    ps_lg_violation *v = push(&vd->out, &vd->n, &vd->cap);
    v->kind = kind;
    v->fails = fails;
    v->key = key;
    v->window = "unknown";
    if (fails) vd->failing++;
    return v;
}

/* "2026-11-25T15:01:00Z" (UTC) into buf (>= 24 bytes). */
static const char *utc(int64_t unix_s, char *buf, size_t size)
{
    time_t t = (time_t)unix_s;
    struct tm tm;
    if (!gmtime_r(&t, &tm) || !strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm))
        snprintf(buf, size, "%lld", (long long)unix_s);
    return buf;
}

/* "2026-11-25T15:01:00.123Z" (UTC, ms) into buf (>= 32 bytes). */
static const char *utc_ms(int64_t unix_ns, char *buf, size_t size)
{
    char s[24];
    utc(unix_ns / NS, s, sizeof s);
    size_t len = strlen(s);
    if (len && s[len - 1] == 'Z') s[len - 1] = '\0';
    snprintf(buf, size, "%s.%03lldZ", s, (long long)(unix_ns % NS / 1000000));
    return buf;
}

/* The window's extent as the responses show it: from Reset less the window
 * the headers imply (or its first answer, when none is implied) to Reset. */
static void extent(const ps_lg_window *w, int64_t implied_ns, char *buf, size_t size)
{
    char a[32], b[32];
    int64_t start_s = implied_ns > 0    ? w->reset - (implied_ns + NS - 1) / NS
                      : w->first_ns > 0 ? w->first_ns / NS
                                        : 0;
    if (start_s > 0)
        snprintf(buf, size, "from %s to %s", utc(start_s, a, sizeof a), utc(w->reset, b, sizeof b));
    else
        snprintf(buf, size, "ending %s", utc(w->reset, b, sizeof b));
}

/* A Limit that is not one of the plan's figures: once per key and limit. */
static void plan_mismatch(verdict *vd, size_t a, size_t b, int64_t allowed, ps_rlm_window win)
{
    const ps_lg_window *w = vd->v->ws[a];
    const ps_lg_key *key = &vd->cfg->keys[w->key];
    const char *red = key->label;
    int64_t responses = 0;
    for (size_t j = a; j < b; j++)
        responses += vd->v->ws[j]->admitted + vd->v->ws[j]->limited;
    ps_lg_violation *v = add(vd, PS_LG_V_BAD_HEADERS, true, w->key);
    v->window = ps_rlm_window_name(win);
    v->reset = w->reset;
    v->limit = allowed;
    v->count = responses;
    snprintf(v->message, sizeof v->message,
             "key %s (%s): %lld responses said X-RateLimit-Limit: %lld, which is not one of the "
             "plan's figures (%lld per minute, %lld per day); counted against the %s figure %lld",
             red, ps_plan_name(key->plan.id), (long long)responses, (long long)w->limit,
             (long long)key->plan.per_minute, (long long)key->plan.per_day, v->window,
             (long long)allowed);
}

/* A moving limiter (its announced windows are not its windows), held to
 * its bound over spans of ws[a..b): the most admissions within any span
 * against what the bound allows there. A token bucket is looked at from
 * 25 ms up (the burst a full bucket lets through shows in the shortest). */
static void check_moving(verdict *vd, size_t a, size_t b, ps_rlm_bound bound, int64_t allowed)
{
    const ps_lg_window *w = vd->v->ws[a];
    const ps_lg_counting *cnt = &vd->v->counting[w->key];
    int64_t wn = implied_window_ns(vd->v->ws, a, b), longest = ps_rlm_longest_span(wn);
    if (longest <= 0) return;
    int64_t most = 0, allow = 0, span = 0, from_ns = 0, to_ns = 0;
    for (int64_t s = bound == PS_RLM_BOUND_TOKEN ? PS_RLM_FIRST_SPAN_NS : longest;; s *= 2) {
        if (s > longest) s = longest;
        int64_t f = 0, t = 0;
        int64_t m = densest(vd->v->ws, a, b, s, cnt->counting.mask, &f, &t);
        int64_t al = ps_rlm_allowed(bound, allowed, wn, s);
        if (m - al > most - allow) {
            most = m;
            allow = al;
            span = s;
            from_ns = f;
            to_ns = t;
        }
        if (s == longest) break;
    }
    if (most <= allow) return;
    const ps_lg_key *key = &vd->cfg->keys[w->key];
    char lab[48];
    const char *red = key->label;
    ps_lg_violation *v = add(vd, PS_LG_V_OVER_ADMISSION, true, w->key);
    v->window = ps_rlm_window_name(ps_rlm_window_of_limit(&key->plan, allowed));
    v->bound = bound;
    v->admitted = most;
    v->limit = allow;
    v->count = most - allow;
    /* the bound applied, not a claim of the algorithm (limits.models[]
     * says what the responses showed) */
    char from[40], to[40];
    snprintf(
        v->message, sizeof v->message,
        "key %s (%s): %lld admissions (%s counted) arrived in a span of %lld ms (from %s to %s), "
        "over the %lld allowed there by limit %lld (X-RateLimit-Limit: %lld) held to %s "
        "(window %lld ms, as X-RateLimit-Reset implies)",
        red, ps_plan_name(key->plan.id), (long long)most,
        ps_rlm_counted_label(&cnt->counting, lab, sizeof lab), (long long)(span / 1000000),
        utc_ms(from_ns, from, sizeof from), utc_ms(to_ns, to, sizeof to), (long long)allow,
        (long long)allowed, (long long)w->limit,
        bound == PS_RLM_BOUND_TOKEN
            ? "a token bucket's bound (Reset moved ahead before the previous one passed)"
            : "a sliding window's bound (room came back under a Reset that had refused)",
        (long long)(wn / 1000000));
}

/* One announced window held to its allowance: over it fails; refused short
 * of it, when the run watched the window from its start, knew its limit
 * and saw every answer of the key carry the headers, is a warning. */
static void check_window(verdict *vd, size_t i, size_t a, size_t b, int64_t allowed, bool follows)
{
    const ps_lg_window *w = vd->v->ws[i];
    const ps_lg_key *key = &vd->cfg->keys[w->key];
    const ps_lg_key_checks *kc = &vd->l->keys[w->key];
    const ps_lg_counting *cnt = &vd->v->counting[w->key];
    ps_rlm_window win = ps_rlm_figures_known(&key->plan)
                            ? ps_rlm_window_governing(&key->plan, w->limit, w->min_ahead_s)
                            : ps_rlm_window_of_limit(&key->plan, w->limit);
    bool watched_from_start = follows || w->max_remaining == w->limit - 1;
    bool known = allowed > 0 && kc->missing_headers == 0 && kc->bad_headers == 0;
    char lab[48], ext[80];
    const char *red = key->label;
    ps_rlm_counted_label(&cnt->counting, lab, sizeof lab);
    extent(w, implied_window_ns(vd->v->ws, a, b), ext, sizeof ext);
    ps_lg_violation *v;
    if (w->admitted > allowed) {
        v = add(vd, PS_LG_V_OVER_ADMISSION, true, w->key);
        snprintf(v->message, sizeof v->message,
                 "key %s (%s): the %s window %s (X-RateLimit-Reset: %lld, X-RateLimit-Limit: "
                 "%lld) admitted %lld requests (%s counted), over its bound of %lld (%s)",
                 red, ps_plan_name(key->plan.id), ps_rlm_window_name(win), ext, (long long)w->reset,
                 (long long)w->limit, (long long)w->admitted, lab, (long long)allowed,
                 allowed != w->limit ? "the plan's figure" : "its X-RateLimit-Limit");
        v->count = w->admitted - allowed;
    } else if (w->limited > 0 && w->admitted < allowed && watched_from_start && known &&
               kc->failures == 0) {
        v = add(vd, PS_LG_V_UNDER_ADMISSION, false, w->key);
        snprintf(v->message, sizeof v->message,
                 "key %s (%s): the %s window %s (X-RateLimit-Reset: %lld) refused %lld requests "
                 "with 429 after admitting only %lld of %lld (%s counted; warning: other clients "
                 "of this key would explain it too)",
                 red, ps_plan_name(key->plan.id), ps_rlm_window_name(win), ext, (long long)w->reset,
                 (long long)w->limited, (long long)w->admitted, (long long)allowed, lab);
        v->count = allowed - w->admitted;
    } else {
        return;
    }
    v->window = ps_rlm_window_name(win);
    v->reset = w->reset;
    v->admitted = w->admitted;
    v->limit = allowed;
    v->bound = PS_RLM_BOUND_WINDOW;
}

/* The windows ws[a..b) of one key and limit, in Reset order: each window
 * knows whether an earlier one was seen (then it began while the run was
 * watching). When every announced window kept its allowance, that is the
 * verdict whatever the limiter (a token bucket or sliding counter keeps it
 * too); a fixed window over it over-admitted; a moving limiter is held to
 * its bound over spans instead. */
static void judge_limit(verdict *vd, size_t a, size_t b)
{
    const ps_lg_window *first = vd->v->ws[a];
    const ps_lg_key *key = &vd->cfg->keys[first->key];
    ps_rlm_bound bound = infer_bound(vd->v->ws, a, b);
    int64_t run_allowed = 0;
    bool fits = true;
    if (ps_rlm_figures_known(&key->plan) &&
        ps_rlm_window_of_limit(&key->plan, first->limit) == PS_RLM_WINDOW_UNKNOWN) {
        ps_rlm_window win = ps_rlm_window_governing(&key->plan, first->limit, first->min_ahead_s);
        plan_mismatch(vd, a, b, ps_rlm_plan_figure(&key->plan, win), win);
    }
    for (size_t i = a; i < b; i++) {
        int64_t allowed = ps_lg_view_allowed(key, vd->v->ws[i]);
        if (allowed > run_allowed) run_allowed = allowed;
        if (vd->v->ws[i]->admitted > allowed) fits = false;
        if (bound == PS_RLM_BOUND_WINDOW) check_window(vd, i, a, b, allowed, i > a);
    }
    /* A sliding counter may pass its limit in a span (it estimates): a
     * sliding bound is applied only once an announced window was over; a
     * token bucket's always, as no announced window holds its burst. */
    if (bound == PS_RLM_BOUND_TOKEN || (bound == PS_RLM_BOUND_SLIDING && !fits))
        check_moving(vd, a, b, bound, run_allowed);
}

/* The header rules of each key: counted per response by the collector. */
static void key_checks(verdict *vd)
{
    for (size_t k = 0; k < vd->l->nkeys && k < vd->cfg->nkeys; k++) {
        const ps_lg_key_checks *c = &vd->l->keys[k];
        const char *red = vd->cfg->keys[k].label;
        struct {
            ps_lg_violation_kind kind;
            int64_t count;
            const char *what, *sample;
        } checks[] = {
            {PS_LG_V_MISSING_HEADERS, c->missing_headers,
             "lacked one of X-RateLimit-Limit, -Remaining, -Reset", c->missing_sample},
            {PS_LG_V_BAD_HEADERS, c->bad_headers,
             "had a malformed X-RateLimit-* header (or one repeated with another value, or a "
             "Reset that is no Unix time)",
             c->bad_sample},
            {PS_LG_V_MISSING_RETRY_AFTER, c->missing_retry_after + c->bad_retry_after,
             "were 429 without a valid Retry-After", c->retry_sample},
        };
        for (size_t j = 0; j < sizeof checks / sizeof checks[0]; j++) {
            if (checks[j].count == 0) continue;
            ps_lg_violation *v = add(vd, checks[j].kind, true, k);
            v->count = checks[j].count;
            snprintf(v->message, sizeof v->message, "key %s (%s): %lld of %lld responses %s%s%s",
                     red, ps_plan_name(vd->cfg->keys[k].plan.id), (long long)checks[j].count,
                     (long long)c->responses, checks[j].what, checks[j].sample[0] ? "; e.g. " : "",
                     checks[j].sample);
        }
    }
}

size_t ps_lg_limits_verify(const ps_lg_limits *l, const ps_lg_config *cfg, ps_lg_violation **out,
                           size_t *n)
{
    ps_lg_view view;
    ps_lg_view_build(&view, l, cfg);
    verdict vd = {.l = l, .cfg = cfg, .v = &view};
    for (size_t a = 0, b; a < view.nw; a = b) {
        for (b = a; b < view.nw && view.ws[b]->key == view.ws[a]->key &&
                    view.ws[b]->limit == view.ws[a]->limit;
             b++)
            ;
        judge_limit(&vd, a, b);
    }
    ps_lg_view_free(&view);
    key_checks(&vd);
    if (vd.n > 1) qsort(vd.out, vd.n, sizeof *vd.out, by_key_reset);
    *out = vd.out;
    *n = vd.n;
    return vd.failing;
}

void ps_lg_limits_models(const ps_lg_limits *l, const ps_lg_config *cfg, ps_lg_key_model **out,
                         size_t *n)
{
    ps_lg_view view;
    ps_lg_view_build(&view, l, cfg);
    *out = calloc(view.nw + 1, sizeof **out);
    if (!*out) abort();
    *n = 0;
    for (size_t a = 0, b; a < view.nw; a = b) {
        const ps_lg_window *w = view.ws[a];
        for (b = a; b < view.nw && view.ws[b]->key == w->key && view.ws[b]->limit == w->limit; b++)
            ;
        ps_lg_key_model *m = &(*out)[(*n)++];
        m->key = w->key;
        m->limit = w->limit;
        m->model = infer_label(view.ws, a, b, view.counting[w->key].counting.mask);
        m->window_ms = implied_window_ns(view.ws, a, b) / 1000000;
    }
    ps_lg_view_free(&view);
}
