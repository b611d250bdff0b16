/* limits.c - per-key, per-window admission counts and their verdict. */
#include "loadgen/limits.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ps_lg_limits_init(ps_lg_limits *l, size_t nkeys)
{
    memset(l, 0, sizeof *l);
    l->cap = 64;
    l->slots = calloc(l->cap, sizeof *l->slots);
    l->keys = calloc(nkeys ? nkeys : 1, sizeof *l->keys);
    if (!l->slots || !l->keys) abort();
    l->nkeys = nkeys;
    return 0;
}

void ps_lg_limits_free(ps_lg_limits *l)
{
    for (size_t i = 0; i < l->cap; i++)
        free(l->slots[i].admit_ns);
    free(l->slots);
    free(l->keys);
    memset(l, 0, sizeof *l);
}

static size_t slot_hash(uint32_t key, int64_t limit, int64_t reset)
{
    uint64_t h = 0x9e3779b97f4a7c15u ^ key;
    h = (h ^ (uint64_t)limit) * 0xff51afd7ed558ccdu;
    h = (h ^ (uint64_t)reset) * 0xc4ceb9fe1a85ec53u;
    return (size_t)(h ^ (h >> 29));
}

static ps_lg_window *find_or_add(ps_lg_limits *l, uint32_t key, int64_t limit, int64_t reset);

/* Windows are few (keys x windows seen), so growth is rare and off the
 * per-response path in practice. */
static void grow(ps_lg_limits *l)
{
    ps_lg_window *old = l->slots;
    size_t old_cap = l->cap;
    l->cap *= 2;
    l->slots = calloc(l->cap, sizeof *l->slots);
    if (!l->slots) abort();
    l->count = 0;
    for (size_t i = 0; i < old_cap; i++) {
        if (!old[i].used) continue;
        ps_lg_window *w = find_or_add(l, old[i].key, old[i].limit, old[i].reset);
        *w = old[i];
    }
    free(old);
}

static ps_lg_window *find_or_add(ps_lg_limits *l, uint32_t key, int64_t limit, int64_t reset)
{
    if ((l->count + 1) * 2 > l->cap) grow(l);
    size_t i = slot_hash(key, limit, reset) & (l->cap - 1);
    for (;; i = (i + 1) & (l->cap - 1)) {
        ps_lg_window *w = &l->slots[i];
        if (!w->used) {
            w->used = true;
            w->key = key;
            w->limit = limit;
            w->reset = reset;
            w->max_remaining = w->min_remaining = -1;
            w->min_ahead_s = INT64_MAX;
            l->count++;
            return w;
        }
        if (w->key == key && w->limit == limit && w->reset == reset) return w;
    }
}

static void add_admit_time(ps_lg_window *w, int64_t t)
{
    if (w->nadmit_ns == w->cap_admit_ns) {
        if (w->cap_admit_ns >= PS_LG_ADMIT_TIMES) return;
        uint32_t ncap = w->cap_admit_ns ? w->cap_admit_ns * 2 : 16;
        int64_t *n = realloc(w->admit_ns, ncap * sizeof *n);
        if (!n) abort();
        w->admit_ns = n;
        w->cap_admit_ns = ncap;
    }
    w->admit_ns[w->nadmit_ns++] = t;
}

static void min_known(int64_t *dst, int64_t v)
{
    if (v && (!*dst || v < *dst)) *dst = v;
}

void ps_lg_limits_observe(ps_lg_limits *l, size_t key, const ps_lg_resp *r)
{
    ps_lg_limits_observe_ns(l, key, r, INT64_MIN);
}

void ps_lg_limits_observe_at(ps_lg_limits *l, size_t key, const ps_lg_resp *r, int64_t now_s)
{
    ps_lg_limits_observe_ns(l, key, r, now_s == INT64_MIN ? INT64_MIN : now_s * 1000000000LL);
}

void ps_lg_limits_observe_ns(ps_lg_limits *l, size_t key, const ps_lg_resp *r, int64_t now_ns)
{
    ps_lg_limits_observe_op(l, key, PS_LG_OP_LIST, r, now_ns);
}

static void max_into(int64_t *dst, int64_t v)
{
    if (v > *dst) *dst = v;
}

void ps_lg_limits_observe_op(ps_lg_limits *l, size_t key, ps_lg_op op, const ps_lg_resp *r,
                             int64_t now_ns)
{
    int64_t now_s = now_ns == INT64_MIN ? INT64_MIN : now_ns / 1000000000LL;
    ps_lg_key_checks *k = &l->keys[key];
    const unsigned all = PS_LG_H_LIMIT | PS_LG_H_REMAINING | PS_LG_H_RESET;
    k->responses++;
    if ((r->seen & all) != all) k->missing_headers++;
    if (r->bad & all) k->bad_headers++;
    if (r->status == 429) {
        if (!(r->seen & PS_LG_H_RETRY_AFTER))
            k->missing_retry_after++;
        else if (r->bad & PS_LG_H_RETRY_AFTER)
            k->bad_retry_after++;
    }
    const unsigned id = PS_LG_H_LIMIT | PS_LG_H_RESET;
    if ((r->seen & id) != id || (r->bad & id)) return;
    if ((unsigned)op >= PS_LG_OPS) op = PS_LG_OP_LIST;
    ps_lg_window *w = find_or_add(l, (uint32_t)key, r->limit, r->reset);
    if (now_s != INT64_MIN && r->reset - now_s < w->min_ahead_s) w->min_ahead_s = r->reset - now_s;
    bool timed = now_ns != INT64_MIN && now_ns > 0;
    if (timed) min_known(&w->first_ns, now_ns);
    if (r->status == 429) {
        w->limited++;
        w->limited_by[op]++;
        if (timed) min_known(&w->first_limited_ns, now_ns);
        return;
    }
    ps_lg_kind kind = ps_lg_kind_of(op, r->status);
    w->admitted++;
    w->admitted_by[kind]++;
    if (timed) {
        int64_t ahead = r->reset * 1000000000LL - now_ns;
        max_into(&w->last_admit_ns, now_ns);
        max_into(&w->max_ahead_ns, ahead);
        min_known(&w->first_admit_ns_by[kind], now_ns);
        max_into(&w->last_admit_ns_by[kind], now_ns);
        max_into(&w->max_ahead_ns_by[kind], ahead);
        add_admit_time(w, (now_ns & ~(int64_t)3) | (int64_t)kind);
    }
    if ((r->seen & PS_LG_H_REMAINING) && !(r->bad & PS_LG_H_REMAINING)) {
        /* below what was shown before (a window's first answer: below the
         * key's last, else the limit, as a fresh state says Remaining L) */
        int64_t before = w->min_remaining >= 0 ? w->min_remaining
                         : k->last_remaining_1 ? k->last_remaining_1 - 1
                                               : w->limit;
        if (r->remaining < before) w->fell_by[kind]++;
        k->last_remaining_1 = r->remaining + 1;
        if (r->remaining > w->max_remaining) w->max_remaining = r->remaining;
        if (w->min_remaining < 0 || r->remaining < w->min_remaining)
            w->min_remaining = r->remaining;
    }
}

void ps_lg_limits_failure(ps_lg_limits *l, size_t key)
{
    l->keys[key].failures++;
}

void ps_lg_limits_merge(ps_lg_limits *dst, const ps_lg_limits *src)
{
    for (size_t i = 0; i < src->cap; i++) {
        const ps_lg_window *s = &src->slots[i];
        if (!s->used) continue;
        ps_lg_window *d = find_or_add(dst, s->key, s->limit, s->reset);
        d->admitted += s->admitted;
        d->limited += s->limited;
        if (s->max_remaining > d->max_remaining) d->max_remaining = s->max_remaining;
        if (s->min_remaining >= 0 && (d->min_remaining < 0 || s->min_remaining < d->min_remaining))
            d->min_remaining = s->min_remaining;
        if (s->min_ahead_s < d->min_ahead_s) d->min_ahead_s = s->min_ahead_s;
        min_known(&d->first_ns, s->first_ns);
        min_known(&d->first_limited_ns, s->first_limited_ns);
        if (s->last_admit_ns > d->last_admit_ns) d->last_admit_ns = s->last_admit_ns;
        if (s->max_ahead_ns > d->max_ahead_ns) d->max_ahead_ns = s->max_ahead_ns;
        for (int k = 0; k < PS_LG_KINDS; k++) {
            d->admitted_by[k] += s->admitted_by[k];
            d->fell_by[k] += s->fell_by[k];
            min_known(&d->first_admit_ns_by[k], s->first_admit_ns_by[k]);
            max_into(&d->last_admit_ns_by[k], s->last_admit_ns_by[k]);
            max_into(&d->max_ahead_ns_by[k], s->max_ahead_ns_by[k]);
        }
        for (int o = 0; o < PS_LG_OPS; o++)
            d->limited_by[o] += s->limited_by[o];
        for (uint32_t t = 0; t < s->nadmit_ns; t++)
            add_admit_time(d, s->admit_ns[t]);
    }
    for (size_t k = 0; k < dst->nkeys && k < src->nkeys; k++) {
        ps_lg_key_checks *d = &dst->keys[k];
        const ps_lg_key_checks *s = &src->keys[k];
        d->responses += s->responses;
        d->missing_headers += s->missing_headers;
        d->bad_headers += s->bad_headers;
        d->missing_retry_after += s->missing_retry_after;
        d->bad_retry_after += s->bad_retry_after;
        d->failures += s->failures;
    }
}

void ps_lg_limits_add_window(ps_lg_limits *l, const ps_lg_window *w)
{
    ps_lg_window slot = *w;
    slot.used = true;
    int64_t by = 0, lby = 0;
    for (int k = 0; k < PS_LG_KINDS; k++)
        by += slot.admitted_by[k];
    for (int o = 0; o < PS_LG_OPS; o++)
        lby += slot.limited_by[o];
    /* counts without kinds (a report from before they were kept): lists
     * whose Remaining fell, i.e. counted as every answer used to be */
    if (by == 0 && slot.admitted > 0)
        slot.admitted_by[PS_LG_KIND_LIST] = slot.fell_by[PS_LG_KIND_LIST] = slot.admitted;
    if (lby == 0) slot.limited_by[PS_LG_OP_LIST] = slot.limited;
    ps_lg_limits one = {.slots = &slot, .cap = 1, .count = 1};
    ps_lg_limits_merge(l, &one);
}

const char *ps_lg_violation_kind_name(ps_lg_violation_kind k)
{
    switch (k) {
    case PS_LG_V_OVER_ADMISSION:
        return "over_admission";
    case PS_LG_V_UNDER_ADMISSION:
        return "under_admission";
    case PS_LG_V_MISSING_RETRY_AFTER:
        return "missing_retry_after";
    case PS_LG_V_MISSING_HEADERS:
        return "missing_headers";
    case PS_LG_V_BAD_HEADERS:
        return "bad_headers";
    }
    return "unknown";
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

static const char *window_name(const ps_plan *plan, int64_t limit)
{
    if (plan->per_minute > 0 && limit == plan->per_minute) return "minute";
    if (plan->per_day > 0 && limit == plan->per_day) return "day";
    return "unknown";
}

static bool figures_known(const ps_plan *plan)
{
    return plan->per_minute > 0 && plan->per_day > 0;
}

/* With the plan's figures known: which of them governs window w (by its L,
 * else by how far ahead its Reset was: a minute window ends within 60 s). */
static bool is_minute_window(const ps_plan *plan, const ps_lg_window *w)
{
    if (w->limit == plan->per_minute) return true;
    if (w->limit == plan->per_day) return false;
    if (w->min_ahead_s != INT64_MAX) return w->min_ahead_s <= 60;
    return w->limit < plan->per_day;
}

static int by_window(const void *a, const void *b)
{
    const ps_lg_window *x = *(const ps_lg_window *const *)a, *y = *(const ps_lg_window *const *)b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    if (x->limit != y->limit) return x->limit < y->limit ? -1 : 1;
    return (x->reset > y->reset) - (x->reset < y->reset);
}

static int by_key_reset(const void *a, const void *b)
{
    const ps_lg_violation *x = a, *y = b;
    if (x->fails != y->fails) return x->fails ? -1 : 1;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return (x->reset > y->reset) - (x->reset < y->reset);
}

const char *ps_lg_model_name(ps_lg_model m)
{
    switch (m) {
    case PS_LG_MODEL_FIXED:
        return "fixed-window";
    case PS_LG_MODEL_SLIDING:
        return "sliding-window";
    case PS_LG_MODEL_TOKEN:
        return "token-bucket";
    case PS_LG_MODEL_MOVING:
        return "moving-window";
    case PS_LG_MODEL_WINDOW:
        return "window";
    }
    return "unknown";
}

#define NS 1000000000LL

/* The bound the verdict holds the windows ws[a..b) (one key and limit, by
 * Reset) to, never a label (infer_label names the algorithm). A fixed
 * window's successor starts only after it ended: a Reset that moves ahead
 * while the previous one is more than a second (its rounding) off is a
 * token bucket's. An admission under a Reset that had already refused (50 ms
 * later, past any reordering of concurrent answers) means room came back
 * before Reset: a sliding limiter. */
static ps_lg_model infer_model(const ps_lg_window *const *ws, size_t a, size_t b)
{
    bool sliding = false;
    for (size_t j = a; j < b; j++) {
        const ps_lg_window *w = ws[j];
        if (j > a && w->first_ns && w->first_ns < ws[j - 1]->reset * NS - NS - NS / 10)
            return PS_LG_MODEL_TOKEN;
        if (w->first_limited_ns && w->last_admit_ns > w->first_limited_ns + NS / 20) sliding = true;
    }
    return sliding ? PS_LG_MODEL_SLIDING : PS_LG_MODEL_FIXED;
}

/* The window length the headers imply: the most Reset - arrival seen on an
 * admission, less the second Reset's rounding up may add; 0 when unknown. */
static int64_t implied_window_ns(const ps_lg_window *const *ws, size_t a, size_t b)
{
    int64_t hi = 0;
    for (size_t j = a; j < b; j++)
        if (ws[j]->max_ahead_ns > hi) hi = ws[j]->max_ahead_ns;
    return hi > NS ? hi - NS : 0;
}

static int by_time(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Most admissions of the kinds in mask of ws[a..b) arriving within any
 * span of span_ns. */
static int64_t densest(const ps_lg_window *const *ws, size_t a, size_t b, int64_t span_ns,
                       unsigned mask)
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
        if ((int64_t)(hi - lo + 1) > best) best = (int64_t)(hi - lo + 1);
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

/* The label ps_lg_limits_models reports for ws[a..b) (one key and limit, by
 * Reset; mask: the kinds counted). Every model's Reset lies at most a
 * window and a rounding second after an admission, so the implied window
 * (most Reset - arrival, less that second) never exceeds the true one: the
 * bounds below hold whatever the algorithm. */
static ps_lg_model infer_label(const ps_lg_window *const *ws, size_t a, size_t b, unsigned mask)
{
    int64_t wn = implied_window_ns(ws, a, b), limit = ws[a]->limit;
    bool moved_early = false, refill = false, rose = false, partial = false, whole = false;
    for (size_t j = a; j < b; j++) {
        const ps_lg_window *w = ws[j];
        /* room back under a Reset that had refused (50 ms: reordering) */
        if (w->first_limited_ns && w->last_admit_ns > w->first_limited_ns + NS / 20) rose = true;
        /* A bucket's Reset (when it is full again) is near while it is
         * nearly full; a window's, sliding or not, is a window off then. In
         * one window Reset is one, so its earliest admission (of any kind,
         * as max_remaining covers all) is the farthest from it. */
        int64_t ahead = 0;
        for (int k = 0; k < PS_LG_KINDS; k++)
            max_into(&ahead, w->max_ahead_ns_by[k]);
        if (wn >= 4 * NS && ahead > 0 && ahead < wn / 2 && w->max_remaining >= 0 &&
            4 * w->max_remaining >= 3 * limit)
            refill = true;
        if (j == a) continue;
        const ps_lg_window *p = ws[j - 1];
        if (w->first_ns && w->first_ns < p->reset * NS - NS - NS / 10) {
            moved_early = true;
            continue;
        }
        /* w began once p's Reset came: what came back (p must have held
         * something, w must show it) */
        int64_t f = first_admit_ns(w, mask);
        if (!f || w->max_remaining < 0 || p->admitted == 0) continue;
        if (w->max_remaining < limit - 1) partial = true;
        /* all back while p's latest admission was younger than a window
         * (p's implied one: never longer than the true one): a sliding log
         * would still have counted it */
        else if (p->last_admit_ns && p->max_ahead_ns > NS &&
                 f < p->last_admit_ns + p->max_ahead_ns - NS - NS / 20)
            whole = true;
    }
    if (moved_early) {
        /* no sliding log admits more than its limit in under a window */
        if (!refill && wn / 10 * 9 > 0) refill = densest(ws, a, b, wn / 10 * 9, mask) > limit;
        return refill ? PS_LG_MODEL_TOKEN : PS_LG_MODEL_MOVING;
    }
    if (rose || partial) return PS_LG_MODEL_SLIDING;
    return whole ? PS_LG_MODEL_FIXED : PS_LG_MODEL_WINDOW;
}

const char *ps_lg_count_state_name(ps_lg_count_state s)
{
    switch (s) {
    case PS_LG_COUNTED:
        return "counted";
    case PS_LG_NOT_COUNTED:
        return "not_counted";
    case PS_LG_NOT_SEEN:
        return "not_seen";
    }
    return "unknown";
}

/* One key's evidence, summed over its windows. */
typedef struct evidence {
    bool seen;
    bool below_limit; /* some admission said Remaining below the limit */
    int64_t admitted[PS_LG_KINDS], fell[PS_LG_KINDS], limited[PS_LG_OPS];
} evidence;

static const char *const op_word[PS_LG_OPS] = {"list", "create"};

/* Appends to c->reason (truncated, never overflowing). */
static void say(ps_lg_counting *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(ps_lg_counting *c, const char *fmt, ...)
{
    size_t len = strlen(c->reason);
    if (len + 1 >= sizeof c->reason) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->reason + len, sizeof c->reason - len, fmt, ap);
    va_end(ap);
}

/* The counting rule for one key: the flags when given, else the evidence.
 * A refusal proves an operation counts; Remaining falling on most of its
 * admissions shows it too. An operation that was never refused and left
 * Remaining where it was is not counted: this is what lets a service that
 * counts only lists (or does not count 4xx answers) pass, while an
 * over-admission of what it does count still fails. */
static void decide(const evidence *e, const ps_lg_config *cfg, size_t key, ps_lg_counting *c)
{
    memset(c, 0, sizeof *c);
    c->key = key;
    c->inferred =
        cfg->limited_ops == PS_LG_LIMITED_AUTO || cfg->limited_errors == PS_LG_ERRORS_AUTO;
    for (int o = 0; o < PS_LG_OPS; o++) {
        int ok = o * 2, err = o * 2 + 1;
        int64_t adm = e->admitted[ok] + e->admitted[err];
        if (cfg->limited_ops != PS_LG_LIMITED_AUTO) {
            bool on = cfg->limited_ops == PS_LG_LIMITED_ALL ||
                      (cfg->limited_ops == PS_LG_LIMITED_LIST && o == PS_LG_OP_LIST) ||
                      (cfg->limited_ops == PS_LG_LIMITED_CREATE && o == PS_LG_OP_CREATE);
            c->ops[o] = on ? PS_LG_COUNTED : PS_LG_NOT_COUNTED;
            say(c, "%s%s: %s (--limited-ops)", c->reason[0] ? "; " : "", op_word[o],
                on ? "counted" : "not counted");
            continue;
        }
        /* the 2xx admissions tell best: 4xx ones may be taken back */
        int64_t a = e->admitted[ok] ? e->admitted[ok] : e->admitted[err];
        int64_t f = e->admitted[ok] ? e->fell[ok] : e->fell[err];
        const char *sep = c->reason[0] ? "; " : "";
        if (e->limited[o] > 0) {
            c->ops[o] = PS_LG_COUNTED;
            say(c, "%s%s: counted (%lld refused with 429)", sep, op_word[o],
                (long long)e->limited[o]);
        } else if (adm == 0) {
            c->ops[o] = PS_LG_NOT_SEEN;
            say(c, "%s%s: none admitted", sep, op_word[o]);
        } else if (f * 2 > a) {
            c->ops[o] = PS_LG_COUNTED;
            say(c, "%s%s: counted (never refused, but Remaining fell on %lld of %lld)", sep,
                op_word[o], (long long)f, (long long)a);
        } else {
            c->ops[o] = PS_LG_NOT_COUNTED;
            say(c, "%s%s: not counted (never refused, Remaining fell on only %lld of %lld)", sep,
                op_word[o], (long long)f, (long long)a);
        }
    }
    /* No operation shown counted, yet Remaining went below the limit: the
     * service counted something, and nothing tells what was not counted:
     * every operation seen counts (the server's default). Only Remaining
     * held at the limit shows a service counting none of them. */
    if (cfg->limited_ops == PS_LG_LIMITED_AUTO && c->ops[0] != PS_LG_COUNTED &&
        c->ops[1] != PS_LG_COUNTED && e->below_limit) {
        for (int o = 0; o < PS_LG_OPS; o++)
            if (c->ops[o] == PS_LG_NOT_COUNTED) c->ops[o] = PS_LG_COUNTED;
        say(c, "; no operation was refused or made Remaining fall steadily, but Remaining went "
               "below the limit: all counted");
    }
    int64_t ea = 0, ef = 0;
    for (int o = 0; o < PS_LG_OPS; o++)
        if (c->ops[o] == PS_LG_COUNTED) {
            ea += e->admitted[o * 2 + 1];
            ef += e->fell[o * 2 + 1];
        }
    if (cfg->limited_errors != PS_LG_ERRORS_AUTO) {
        c->errors = cfg->limited_errors == PS_LG_ERRORS_YES ? PS_LG_COUNTED : PS_LG_NOT_COUNTED;
        say(c, "; 4xx answers: %s (--limited-errors)",
            c->errors == PS_LG_COUNTED ? "counted" : "not counted");
    } else if (ea == 0) {
        c->errors = PS_LG_NOT_SEEN;
        say(c, "; 4xx answers: none admitted on a counted operation");
    } else if (ef * 2 > ea && ef >= 2) { /* one may be answers reordered */
        c->errors = PS_LG_COUNTED;
        say(c, "; 4xx answers: counted (Remaining fell on %lld of %lld)", (long long)ef,
            (long long)ea);
    } else {
        c->errors = PS_LG_NOT_COUNTED;
        say(c,
            "; 4xx answers: not counted (Remaining fell on only %lld of %lld, not most or under 2)",
            (long long)ef, (long long)ea);
    }
    for (int o = 0; o < PS_LG_OPS; o++) {
        if (c->ops[o] == PS_LG_NOT_COUNTED) continue;
        c->mask |= 1u << (o * 2);
        if (c->errors != PS_LG_NOT_COUNTED) c->mask |= 1u << (o * 2 + 1);
    }
}

/* 4xx answers that Remaining showed counted, told apart again by the key's
 * refused windows, which concurrency cannot blur as it does the order of
 * Remaining values (an uncounted answer telling the state shows a fall made
 * by a counted request answered later): a fixed window refused once its
 * counted operations' 2xx answers reached the limit is what a service not
 * counting 4xx answers shows; one refused with fewer 2xx answers, 4xx
 * answers beside them making up the limit, is what one counting them shows
 * (a token bucket's Reset-keyed windows hold a few answers each: they are
 * refused short of the limit whatever it counts, and never make it up).
 * The majority of such windows decides. */
static void errors_by_refused_windows(const ps_lg_limits *l, const ps_lg_config *cfg, size_t key,
                                      ps_lg_counting *c)
{
    if (cfg->limited_errors != PS_LG_ERRORS_AUTO || c->errors == PS_LG_NOT_SEEN) return;
    int64_t full = 0, short_of = 0;
    for (size_t i = 0; i < l->cap; i++) {
        const ps_lg_window *w = &l->slots[i];
        if (!w->used || w->key != key || w->limited == 0) continue;
        int64_t ok = 0, errs = 0;
        for (int o = 0; o < PS_LG_OPS; o++) {
            if (c->ops[o] == PS_LG_NOT_COUNTED) continue;
            ok += w->admitted_by[o * 2];
            errs += w->admitted_by[o * 2 + 1];
        }
        if (!errs) continue;
        if (ok == w->limit)
            full++;
        else if (ok < w->limit && ok + errs >= w->limit)
            short_of++;
    }
    ps_lg_count_state told = full > short_of   ? PS_LG_NOT_COUNTED
                             : short_of > full ? PS_LG_COUNTED
                                               : c->errors;
    if (told == c->errors) return;
    c->errors = told;
    say(c,
        "; but of the refused windows with 4xx answers %lld were refused once the 2xx answers "
        "reached the limit, %lld before, the 4xx answers making it up: 4xx answers %s",
        (long long)full, (long long)short_of, told == PS_LG_COUNTED ? "counted" : "not counted");
    c->mask = 0;
    for (int o = 0; o < PS_LG_OPS; o++) {
        if (c->ops[o] == PS_LG_NOT_COUNTED) continue;
        c->mask |= 1u << (o * 2);
        if (c->errors != PS_LG_NOT_COUNTED) c->mask |= 1u << (o * 2 + 1);
    }
}

/* The counting rule of every key of cfg (cfg->nkeys entries; keys without a
 * window have seen = false in ev, when ev is wanted). */
static ps_lg_counting *counting_table(const ps_lg_limits *l, const ps_lg_config *cfg,
                                      bool *seen_out)
{
    evidence *ev = calloc(cfg->nkeys + 1, sizeof *ev);
    ps_lg_counting *c = calloc(cfg->nkeys + 1, sizeof *c);
    if (!ev || !c) abort();
    for (size_t i = 0; i < l->cap; i++) {
        const ps_lg_window *w = &l->slots[i];
        if (!w->used || w->key >= cfg->nkeys) continue;
        evidence *e = &ev[w->key];
        e->seen = true;
        if (w->min_remaining >= 0 && w->min_remaining < w->limit) e->below_limit = true;
        for (int k = 0; k < PS_LG_KINDS; k++) {
            e->admitted[k] += w->admitted_by[k];
            e->fell[k] += w->fell_by[k];
        }
        /* a window that admitted nothing may be a ban's (every request
         * refused, counted or not): its refusals prove nothing */
        if (w->admitted > 0)
            for (int o = 0; o < PS_LG_OPS; o++)
                e->limited[o] += w->limited_by[o];
    }
    for (size_t k = 0; k < cfg->nkeys; k++) {
        decide(&ev[k], cfg, k, &c[k]);
        errors_by_refused_windows(l, cfg, k, &c[k]);
        if (seen_out) seen_out[k] = ev[k].seen;
    }
    free(ev);
    return c;
}

void ps_lg_limits_counting(const ps_lg_limits *l, const ps_lg_config *cfg, ps_lg_counting **out,
                           size_t *n)
{
    bool *seen = calloc(cfg->nkeys + 1, sizeof *seen);
    if (!seen) abort();
    ps_lg_counting *c = counting_table(l, cfg, seen);
    *n = 0;
    for (size_t k = 0; k < cfg->nkeys; k++)
        if (seen[k]) c[(*n)++] = c[k];
    free(seen);
    *out = c;
}

/* The windows as the counting rule sees them: copies (sharing admit_ns)
 * whose admissions and times cover only counted kinds; a window left with no
 * counted admission and no 429 (an uncounted answer telling a state) is left
 * out. Returns the copies in *store (the caller frees it) and pointers to
 * them in (key, limit, reset) order. */
static const ps_lg_window **counted_view(const ps_lg_limits *l, const ps_lg_config *cfg,
                                         const ps_lg_counting *cnt, ps_lg_window **store,
                                         size_t *nw)
{
    *store = calloc(l->count + 1, sizeof **store);
    const ps_lg_window **ws = calloc(l->count + 1, sizeof *ws);
    if (!*store || !ws) abort();
    *nw = 0;
    for (size_t i = 0; i < l->cap; i++) {
        const ps_lg_window *w = &l->slots[i];
        if (!w->used || w->key >= cfg->nkeys) continue;
        unsigned mask = cnt[w->key].mask;
        /* 4xx answers inferred counted (Remaining fell on most of them)
         * may only have looked so: under concurrency an uncounted answer
         * telling the state can show a fall made by a counted request
         * answered later. A window judged on its 2xx answers alone
         * is within the limit, and refused (if at all) only once they
         * reached it, is what a service not counting 4xx answers shows:
         * judge it so (a counted 4xx over-admission shows in the other
         * windows: there the 4xx answers took slots the 2xx ones lack). */
        if (cfg->limited_errors == PS_LG_ERRORS_AUTO && cnt[w->key].errors == PS_LG_COUNTED) {
            int64_t ok = 0, errs = 0;
            for (int o = 0; o < PS_LG_OPS; o++) {
                if (mask & (1u << (o * 2))) ok += w->admitted_by[o * 2];
                if (mask & (1u << (o * 2 + 1))) errs += w->admitted_by[o * 2 + 1];
            }
            if (errs && ok + errs > w->limit && ok <= w->limit &&
                (w->limited == 0 || ok == w->limit))
                for (int o = 0; o < PS_LG_OPS; o++)
                    mask &= ~(1u << (o * 2 + 1));
        }
        ps_lg_window v = *w;
        v.admitted = 0;
        v.first_ns = w->first_limited_ns;
        v.last_admit_ns = v.max_ahead_ns = 0;
        for (int k = 0; k < PS_LG_KINDS; k++) {
            if (!(mask & (1u << k))) continue;
            v.admitted += w->admitted_by[k];
            min_known(&v.first_ns, w->first_admit_ns_by[k]);
            max_into(&v.last_admit_ns, w->last_admit_ns_by[k]);
            max_into(&v.max_ahead_ns, w->max_ahead_ns_by[k]);
        }
        if (v.admitted == 0 && v.limited == 0) continue;
        (*store)[*nw] = v;
        ws[*nw] = &(*store)[*nw];
        (*nw)++;
    }
    qsort(ws, *nw, sizeof *ws, by_window);
    return ws;
}

/* "lists and creates", "lists", ..., with ", 4xx answers not" when those
 * are left out: what a verdict's count covered. */
static const char *counted_label(const ps_lg_counting *c, char *buf, size_t size)
{
    bool list = c->ops[PS_LG_OP_LIST] == PS_LG_COUNTED,
         create = c->ops[PS_LG_OP_CREATE] == PS_LG_COUNTED;
    snprintf(buf, size, "%s%s",
             list && create ? "lists and creates"
             : list         ? "lists"
             : create       ? "creates"
                            : "nothing",
             c->errors == PS_LG_NOT_COUNTED ? ", 4xx answers not" : "");
    return buf;
}

size_t ps_lg_limits_counted_windows(const ps_lg_limits *l, const ps_lg_config *cfg)
{
    ps_lg_counting *cnt = counting_table(l, cfg, NULL);
    ps_lg_window *store;
    size_t nw;
    const ps_lg_window **ws = counted_view(l, cfg, cnt, &store, &nw);
    free(ws);
    free(store);
    free(cnt);
    return nw;
}

size_t ps_lg_limits_verify(const ps_lg_limits *l, const ps_lg_config *cfg, ps_lg_violation **out,
                           size_t *n)
{
    size_t cap = 0, failing = 0;
    *out = NULL;
    *n = 0;
    /* In (key, limit, reset) order, so each window knows whether an earlier
     * window of the same key and limit was seen: then it began while this
     * run was watching. */
    ps_lg_counting *cnt = counting_table(l, cfg, NULL);
    ps_lg_window *store;
    size_t nw;
    const ps_lg_window **ws = counted_view(l, cfg, cnt, &store, &nw);
    ps_lg_model model = PS_LG_MODEL_FIXED;
    bool run_fits = true; /* every window of this key and limit within its allowance */
    int64_t run_allowed = 0;
    size_t run_start = 0;
    for (size_t i = 0; i < nw; i++) {
        const ps_lg_window *w = ws[i];
        if (i == 0 || ws[i - 1]->key != w->key || ws[i - 1]->limit != w->limit) {
            run_start = i;
            size_t end = i;
            while (end < nw && ws[end]->key == w->key && ws[end]->limit == w->limit)
                end++;
            model = infer_model(ws, i, end);
            run_fits = true;
            run_allowed = 0;
        }
        bool run_ends = i + 1 == nw || ws[i + 1]->key != w->key || ws[i + 1]->limit != w->limit;
        bool follows = i > 0 && ws[i - 1]->key == w->key && ws[i - 1]->limit == w->limit;
        bool watched_from_start = follows || w->max_remaining == w->limit - 1;
        const ps_lg_key *key = &cfg->keys[w->key];
        char red[8];
        ps_lg_redact(key->key, red);
        const char *wname = window_name(&key->plan, w->limit);
        /* The declared plan, not the server's header, says what a window
         * may admit: a server handing a free key pro limits (and saying so
         * in X-RateLimit-Limit) over-admits. */
        int64_t allowed = w->limit;
        if (figures_known(&key->plan)) {
            bool minute = is_minute_window(&key->plan, w);
            allowed = minute ? key->plan.per_minute : key->plan.per_day;
            if (strcmp(wname, "unknown") == 0) {
                wname = minute ? "minute" : "day";
                if (!follows) {
                    int64_t responses = 0;
                    for (size_t j = i; j < nw && ws[j]->key == w->key && ws[j]->limit == w->limit;
                         j++)
                        responses += ws[j]->admitted + ws[j]->limited;
                    ps_lg_violation *v = push(out, n, &cap);
                    v->kind = PS_LG_V_BAD_HEADERS;
                    v->fails = true;
                    v->key = w->key;
                    v->window = wname;
                    v->reset = w->reset;
                    v->limit = allowed;
                    v->count = responses;
                    snprintf(
                        v->message, sizeof v->message,
                        "key %s (%s): %lld responses said X-RateLimit-Limit %lld, which is not "
                        "one of the plan's figures (%lld per minute, %lld per day); counted "
                        "against the %s figure %lld",
                        red, ps_plan_name(key->plan.id), (long long)responses, (long long)w->limit,
                        (long long)key->plan.per_minute, (long long)key->plan.per_day, wname,
                        (long long)allowed);
                    failing++;
                }
            }
        }
        if (allowed > run_allowed) run_allowed = allowed;
        if (w->admitted > allowed) run_fits = false;
        if (model != PS_LG_MODEL_FIXED) {
            /* a moving limiter: its announced windows are not its windows;
             * held to its model over intervals once the key's last is seen */
            bool token = model == PS_LG_MODEL_TOKEN;
            int64_t wn = run_ends ? implied_window_ns(ws, run_start, i + 1) : 0;
            /* A sliding counter may pass its limit in an interval (it
             * estimates), so a sliding model is held to intervals only once
             * an announced window was over; a token bucket always is, since
             * its Reset moves with each request and no announced window
             * holds its burst. */
            if (wn / 10 * 9 > 0 && (token || !run_fits)) {
                int64_t most = 0, allow = 0, span = 0;
                /* token: spans from 25 ms up (the burst a full bucket lets
                 * through shows in the shortest), each allowed the bucket
                 * plus what refills in it and in 100 ms more (arrival jitter) */
                for (int64_t s = token ? NS / 40 : wn / 10 * 9;; s *= 2) {
                    if (s > wn / 10 * 9) s = wn / 10 * 9;
                    /* 4xx answers only inferred counted (Remaining falls, which
                     * concurrency blurs; a bucket has no refused window to
                     * tell it) are left out of the spans: never a false
                     * over-admission made of answers the service took back */
                    unsigned span_mask = cnt[w->key].mask;
                    if (cfg->limited_errors == PS_LG_ERRORS_AUTO)
                        span_mask &= ~((1u << PS_LG_KIND_LIST_4XX) | (1u << PS_LG_KIND_CREATE_4XX));
                    int64_t m = densest(ws, run_start, i + 1, s, span_mask);
                    int64_t a = run_allowed;
                    if (token)
                        a += (int64_t)((double)(s + NS / 10) * (double)run_allowed / (double)wn);
                    if (m - a > most - allow) {
                        most = m;
                        allow = a;
                        span = s;
                    }
                    if (s == wn / 10 * 9) break;
                }
                if (most > allow) {
                    ps_lg_violation *v = push(out, n, &cap);
                    v->kind = PS_LG_V_OVER_ADMISSION;
                    v->fails = true;
                    v->key = w->key;
                    v->window = wname;
                    v->model = model;
                    v->admitted = most;
                    v->limit = allow;
                    v->count = most - allow;
                    char lab[48];
                    /* the bound applied, not a claim of the algorithm
                     * (limits.models[] says what the responses showed) */
                    snprintf(v->message, sizeof v->message,
                             "key %s (%s): %lld admissions (%s counted) arrived within %lld ms, "
                             "over the %lld allowed there by limit %lld held to %s (window %lld "
                             "ms, as Reset implies)",
                             red, ps_plan_name(key->plan.id), (long long)most,
                             counted_label(&cnt[w->key], lab, sizeof lab),
                             (long long)(span / 1000000), (long long)allow, (long long)run_allowed,
                             token ? "a token bucket's bound (Reset moved ahead before the "
                                     "previous one passed)"
                                   : "a sliding window's bound (room came back under a Reset "
                                     "that had refused)",
                             (long long)(wn / 1000000));
                    failing++;
                }
            }
            continue;
        }
        if (w->admitted > allowed) {
            ps_lg_violation *v = push(out, n, &cap);
            v->kind = PS_LG_V_OVER_ADMISSION;
            v->fails = true;
            char lab[48];
            counted_label(&cnt[w->key], lab, sizeof lab);
            if (allowed != w->limit)
                snprintf(v->message, sizeof v->message,
                         "key %s (%s): the %s window ending at %lld admitted %lld requests (%s "
                         "counted), over the plan's %lld (the server's X-RateLimit-Limit said "
                         "%lld)",
                         red, ps_plan_name(key->plan.id), wname, (long long)w->reset,
                         (long long)w->admitted, lab, (long long)allowed, (long long)w->limit);
            else
                snprintf(v->message, sizeof v->message,
                         "key %s (%s): the %s window ending at %lld admitted %lld requests (%s "
                         "counted), over its limit of %lld",
                         red, ps_plan_name(key->plan.id), wname, (long long)w->reset,
                         (long long)w->admitted, lab, (long long)w->limit);
        } else if (w->limited > 0 && w->admitted < allowed && watched_from_start &&
                   l->keys[w->key].failures == 0) {
            ps_lg_violation *v = push(out, n, &cap);
            v->kind = PS_LG_V_UNDER_ADMISSION;
            snprintf(v->message, sizeof v->message,
                     "key %s (%s): the %s window ending at %lld refused %lld requests with 429 "
                     "after admitting only %lld of %lld (warning: other clients of this key "
                     "would explain it too)",
                     red, ps_plan_name(key->plan.id), wname, (long long)w->reset,
                     (long long)w->limited, (long long)w->admitted, (long long)allowed);
        } else {
            continue;
        }
        ps_lg_violation *v = &(*out)[*n - 1];
        v->key = w->key;
        v->window = wname;
        v->reset = w->reset;
        v->admitted = w->admitted;
        v->limit = allowed;
        v->count =
            v->kind == PS_LG_V_OVER_ADMISSION ? w->admitted - allowed : allowed - w->admitted;
        if (v->fails) failing++;
    }
    free(ws);
    free(store);
    free(cnt);
    for (size_t k = 0; k < l->nkeys && k < cfg->nkeys; k++) {
        const ps_lg_key_checks *c = &l->keys[k];
        char red[8];
        ps_lg_redact(cfg->keys[k].key, red);
        struct {
            ps_lg_violation_kind kind;
            int64_t count;
            const char *what;
        } checks[] = {
            {PS_LG_V_MISSING_HEADERS, c->missing_headers,
             "lacked one of X-RateLimit-Limit, -Remaining, -Reset"},
            {PS_LG_V_BAD_HEADERS, c->bad_headers,
             "had a malformed (or repeated, disagreeing) X-RateLimit-* header"},
            {PS_LG_V_MISSING_RETRY_AFTER, c->missing_retry_after + c->bad_retry_after,
             "were 429 without a valid Retry-After"},
        };
        for (size_t j = 0; j < sizeof checks / sizeof checks[0]; j++) {
            if (checks[j].count == 0) continue;
            ps_lg_violation *v = push(out, n, &cap);
            v->kind = checks[j].kind;
            v->key = k;
            v->window = "unknown";
            v->count = checks[j].count;
            v->fails = true;
            snprintf(v->message, sizeof v->message, "key %s (%s): %lld of %lld responses %s", red,
                     ps_plan_name(cfg->keys[k].plan.id), (long long)checks[j].count,
                     (long long)c->responses, checks[j].what);
            failing++;
        }
    }
    if (*n > 1) qsort(*out, *n, sizeof **out, by_key_reset);
    return failing;
}

void ps_lg_limits_models(const ps_lg_limits *l, const ps_lg_config *cfg, ps_lg_key_model **out,
                         size_t *n)
{
    ps_lg_counting *cnt = counting_table(l, cfg, NULL);
    ps_lg_window *store;
    size_t nw;
    const ps_lg_window **ws = counted_view(l, cfg, cnt, &store, &nw);
    *out = calloc(l->count + 1, sizeof **out);
    if (!*out) abort();
    *n = 0;
    for (size_t i = 0; i < nw;) {
        size_t end = i;
        while (end < nw && ws[end]->key == ws[i]->key && ws[end]->limit == ws[i]->limit)
            end++;
        ps_lg_key_model *m = &(*out)[(*n)++];
        m->key = ws[i]->key;
        m->limit = ws[i]->limit;
        m->model = infer_label(ws, i, end, cnt[ws[i]->key].mask);
        m->window_ms = implied_window_ns(ws, i, end) / 1000000;
        i = end;
    }
    free(ws);
    free(store);
    free(cnt);
}
