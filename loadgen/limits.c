/* limits.c - per-key, per-window admission counts and their verdict. */
#include "loadgen/limits.h"

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
    ps_lg_window *w = find_or_add(l, (uint32_t)key, r->limit, r->reset);
    if (now_s != INT64_MIN && r->reset - now_s < w->min_ahead_s) w->min_ahead_s = r->reset - now_s;
    bool timed = now_ns != INT64_MIN && now_ns > 0;
    if (timed) min_known(&w->first_ns, now_ns);
    if (r->status == 429) {
        w->limited++;
        if (timed) min_known(&w->first_limited_ns, now_ns);
        return;
    }
    w->admitted++;
    if (timed) {
        if (now_ns > w->last_admit_ns) w->last_admit_ns = now_ns;
        if (r->reset * 1000000000LL - now_ns > w->max_ahead_ns)
            w->max_ahead_ns = r->reset * 1000000000LL - now_ns;
        add_admit_time(w, now_ns);
    }
    if ((r->seen & PS_LG_H_REMAINING) && !(r->bad & PS_LG_H_REMAINING)) {
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
    }
    return "unknown";
}

#define NS 1000000000LL

/* The model the windows ws[a..b) (one key and limit, by Reset) show. A fixed
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

/* Most admissions of ws[a..b) arriving within any span of span_ns. */
static int64_t densest(const ps_lg_window *const *ws, size_t a, size_t b, int64_t span_ns)
{
    size_t n = 0;
    for (size_t j = a; j < b; j++)
        n += ws[j]->nadmit_ns;
    int64_t *t = malloc((n ? n : 1) * sizeof *t);
    if (!t) abort();
    n = 0;
    for (size_t j = a; j < b; j++)
        for (uint32_t k = 0; k < ws[j]->nadmit_ns; k++)
            t[n++] = ws[j]->admit_ns[k];
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

size_t ps_lg_limits_verify(const ps_lg_limits *l, const ps_lg_config *cfg, ps_lg_violation **out,
                           size_t *n)
{
    size_t cap = 0, failing = 0;
    *out = NULL;
    *n = 0;
    /* In (key, limit, reset) order, so each window knows whether an earlier
     * window of the same key and limit was seen: then it began while this
     * run was watching. */
    const ps_lg_window **ws = calloc(l->count + 1, sizeof *ws);
    if (!ws) abort();
    size_t nw = 0;
    for (size_t i = 0; i < l->cap; i++)
        if (l->slots[i].used && l->slots[i].key < cfg->nkeys) ws[nw++] = &l->slots[i];
    qsort(ws, nw, sizeof *ws, by_window);
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
            if (run_ends && !run_fits) {
                int64_t wn = implied_window_ns(ws, run_start, i + 1);
                int64_t span = wn / 10 * 9;
                if (span > 0) {
                    int64_t most = densest(ws, run_start, i + 1, span);
                    int64_t allow = run_allowed;
                    if (model ==
                        PS_LG_MODEL_TOKEN) /* plus the refill: allowed per wn, rounded up */
                        allow += (int64_t)((double)span * (double)run_allowed / (double)wn) + 1;
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
                        snprintf(
                            v->message, sizeof v->message,
                            "key %s (%s): %lld admissions arrived within %lld ms, over the %lld a "
                            "%s "
                            "limiter of limit %lld allows there (window %lld ms, as Reset implies)",
                            red, ps_plan_name(key->plan.id), (long long)most,
                            (long long)(span / 1000000), (long long)allow, ps_lg_model_name(model),
                            (long long)run_allowed, (long long)(wn / 1000000));
                        failing++;
                    }
                }
            }
            continue;
        }
        if (w->admitted > allowed) {
            ps_lg_violation *v = push(out, n, &cap);
            v->kind = PS_LG_V_OVER_ADMISSION;
            v->fails = true;
            if (allowed != w->limit)
                snprintf(v->message, sizeof v->message,
                         "key %s (%s): the %s window ending at %lld admitted %lld requests, over "
                         "the plan's %lld (the server's X-RateLimit-Limit said %lld)",
                         red, ps_plan_name(key->plan.id), wname, (long long)w->reset,
                         (long long)w->admitted, (long long)allowed, (long long)w->limit);
            else
                snprintf(
                    v->message, sizeof v->message,
                    "key %s (%s): the %s window ending at %lld admitted %lld requests, over its "
                    "limit of %lld",
                    red, ps_plan_name(key->plan.id), wname, (long long)w->reset,
                    (long long)w->admitted, (long long)w->limit);
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
    const ps_lg_window **ws = calloc(l->count + 1, sizeof *ws);
    *out = calloc(l->count + 1, sizeof **out);
    if (!ws || !*out) abort();
    size_t nw = 0;
    *n = 0;
    for (size_t i = 0; i < l->cap; i++)
        if (l->slots[i].used && l->slots[i].key < cfg->nkeys) ws[nw++] = &l->slots[i];
    qsort(ws, nw, sizeof *ws, by_window);
    for (size_t i = 0; i < nw;) {
        size_t end = i;
        while (end < nw && ws[end]->key == ws[i]->key && ws[end]->limit == ws[i]->limit)
            end++;
        ps_lg_key_model *m = &(*out)[(*n)++];
        m->key = ws[i]->key;
        m->limit = ws[i]->limit;
        m->model = infer_model(ws, i, end);
        m->window_ms = implied_window_ns(ws, i, end) / 1000000;
        i = end;
    }
    free(ws);
}
