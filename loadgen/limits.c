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

void ps_lg_limits_observe(ps_lg_limits *l, size_t key, const ps_lg_resp *r)
{
    ps_lg_limits_observe_at(l, key, r, INT64_MIN);
}

void ps_lg_limits_observe_at(ps_lg_limits *l, size_t key, const ps_lg_resp *r, int64_t now_s)
{
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
    if (r->status == 429) {
        w->limited++;
        return;
    }
    w->admitted++;
    if ((r->seen & PS_LG_H_REMAINING) && !(r->bad & PS_LG_H_REMAINING)) {
        if (r->remaining > w->max_remaining) w->max_remaining = r->remaining;
        if (w->min_remaining < 0 || r->remaining < w->min_remaining) w->min_remaining = r->remaining;
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
    case PS_LG_V_OVER_ADMISSION: return "over_admission";
    case PS_LG_V_UNDER_ADMISSION: return "under_admission";
    case PS_LG_V_MISSING_RETRY_AFTER: return "missing_retry_after";
    case PS_LG_V_MISSING_HEADERS: return "missing_headers";
    case PS_LG_V_BAD_HEADERS: return "bad_headers";
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
    for (size_t i = 0; i < nw; i++) {
        const ps_lg_window *w = ws[i];
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
                    for (size_t j = i; j < nw && ws[j]->key == w->key && ws[j]->limit == w->limit; j++)
                        responses += ws[j]->admitted + ws[j]->limited;
                    ps_lg_violation *v = push(out, n, &cap);
                    v->kind = PS_LG_V_BAD_HEADERS;
                    v->fails = true;
                    v->key = w->key;
                    v->window = wname;
                    v->reset = w->reset;
                    v->limit = allowed;
                    v->count = responses;
                    snprintf(v->message, sizeof v->message,
                             "key %s (%s): %lld responses said X-RateLimit-Limit %lld, which is not "
                             "one of the plan's figures (%lld per minute, %lld per day); counted "
                             "against the %s figure %lld",
                             red, ps_plan_name(key->plan.id), (long long)responses,
                             (long long)w->limit, (long long)key->plan.per_minute,
                             (long long)key->plan.per_day, wname, (long long)allowed);
                    failing++;
                }
            }
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
                snprintf(v->message, sizeof v->message,
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
        v->count = v->kind == PS_LG_V_OVER_ADMISSION ? w->admitted - allowed : allowed - w->admitted;
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
