/* limits.c - the collector of --verify-limits: per-key, per-window admission
 * counts (merged across threads and shards), the evidence of what the limits
 * count handed to the shared model, and the windows as that counting sees
 * them (limits_view.h); limits_verdict.c judges them. */
#include "loadgen/limits.h"

#include "loadgen/limits_view.h"

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
    for (size_t k = 0; k < l->nkeys; k++)
        free(l->keys[k].unplaced);
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

static void add_unplaced(ps_lg_key_checks *k, int64_t t)
{
    if (k->nunplaced == k->cap_unplaced) {
        if (k->cap_unplaced >= PS_LG_ADMIT_TIMES) return;
        uint32_t ncap = k->cap_unplaced ? k->cap_unplaced * 2 : 16;
        int64_t *n = realloc(k->unplaced, ncap * sizeof *n);
        if (!n) abort();
        k->unplaced = n;
        k->cap_unplaced = ncap;
    }
    k->unplaced[k->nunplaced++] = t;
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
    ps_lg_limits_observe_op(l, key, PS_LG_OP_LIST, r, now_ns, false);
}

static void max_into(int64_t *dst, int64_t v)
{
    if (v > *dst) *dst = v;
}

static const char *field_name(unsigned f)
{
    return f == PS_LG_H_LIMIT         ? "X-RateLimit-Limit"
           : f == PS_LG_H_REMAINING   ? "X-RateLimit-Remaining"
           : f == PS_LG_H_RESET       ? "X-RateLimit-Reset"
           : f == PS_LG_H_RETRY_AFTER ? "Retry-After"
                                      : "?";
}

/* The header rules of one response, each check's first offender kept as
 * its sample. Returns false when the response's Reset is an integer that
 * is not a Unix time (seconds left, milliseconds): bad_headers, and the
 * caller places its window by arrival instead of keying it by the value. */
static bool header_checks(ps_lg_key_checks *k, const ps_lg_resp *r)
{
    const unsigned all = PS_LG_H_LIMIT | PS_LG_H_REMAINING | PS_LG_H_RESET;
    k->responses++;
    if ((r->seen & all) != all) {
        if (!k->missing_headers)
            snprintf(k->missing_sample, sizeof k->missing_sample, "a %d response lacked %s",
                     r->status, field_name(all & ~r->seen & (unsigned)-(int)(all & ~r->seen)));
        k->missing_headers++;
    }
    bool reset_unix = !(r->seen & PS_LG_H_RESET) || (r->bad & PS_LG_H_RESET) ||
                      ps_rlm_reset_form_of(r->reset) == PS_RLM_RESET_UNIX;
    if ((r->bad & all) || !reset_unix) {
        if (!k->bad_headers && (r->bad & all))
            snprintf(k->bad_sample, sizeof k->bad_sample, "%s: %s", field_name(r->bad_field),
                     r->bad_value);
        else if (!k->bad_headers)
            snprintf(k->bad_sample, sizeof k->bad_sample, "X-RateLimit-Reset: %lld (%s)",
                     (long long)r->reset,
                     ps_rlm_reset_form_of(r->reset) == PS_RLM_RESET_SECONDS_LEFT
                         ? "seconds left, not a Unix time: windows placed by arrival"
                         : "milliseconds, not a Unix time in seconds");
        k->bad_headers++;
    }
    if (r->status == 429) {
        if (!(r->seen & PS_LG_H_RETRY_AFTER) || (r->bad & PS_LG_H_RETRY_AFTER)) {
            if (!k->missing_retry_after && !k->bad_retry_after)
                snprintf(k->retry_sample, sizeof k->retry_sample, "Retry-After: %s",
                         r->seen & PS_LG_H_RETRY_AFTER ? r->bad_value : "(absent)");
        }
        if (!(r->seen & PS_LG_H_RETRY_AFTER))
            k->missing_retry_after++;
        else if (r->bad & PS_LG_H_RETRY_AFTER)
            k->bad_retry_after++;
    }
    return reset_unix;
}

/* The window a response with a Reset that is no Unix time joins: its end
 * placed at arrival + seconds left (or milliseconds / 1000), joined to a
 * window already placed within a second of it (the whole second of arrival
 * plus a whole number left lands within a second of the true end), the
 * nearest first: windows of 3 s and more never merge. */
static ps_lg_window *placed_window(ps_lg_limits *l, uint32_t key, int64_t limit, int64_t end)
{
    for (int64_t d = 0; d <= PS_RLM_RESET_ROUNDING_S; d++)
        for (int sign = -1; sign <= 1; sign += 2) {
            size_t i = slot_hash(key, limit, end + sign * d) & (l->cap - 1);
            for (;; i = (i + 1) & (l->cap - 1)) {
                ps_lg_window *w = &l->slots[i];
                if (!w->used) break;
                if (w->placed && w->key == key && w->limit == limit && w->reset == end + sign * d)
                    return w;
            }
        }
    ps_lg_window *w = find_or_add(l, key, limit, end);
    w->placed = true;
    return w;
}

void ps_lg_limits_observe_op(ps_lg_limits *l, size_t key, ps_lg_op op, const ps_lg_resp *r,
                             int64_t now_ns, bool warm)
{
    int64_t now_s = now_ns == INT64_MIN ? INT64_MIN : now_ns / 1000000000LL;
    ps_lg_key_checks *k = &l->keys[key];
    bool reset_unix = header_checks(k, r);
    const unsigned id = PS_LG_H_LIMIT | PS_LG_H_RESET;
    if ((r->seen & id) != id || (r->bad & id)) {
        if (r->status == 429 && (unsigned)op < PS_LG_OPS && !warm) k->bare_limited_by[op]++;
        if (r->status != 429 && (unsigned)op < PS_LG_OPS && now_ns > 0 && !warm)
            add_unplaced(k, (now_ns & ~(int64_t)3) | (int64_t)ps_lg_kind_of(op, r->status));
        return;
    }
    if (!reset_unix && now_s == INT64_MIN) return;
    if ((unsigned)op >= PS_LG_OPS) op = PS_LG_OP_LIST;
    int64_t reset = reset_unix ? r->reset : ps_rlm_reset_unix(r->reset, now_s);
    ps_lg_window *w = reset_unix ? find_or_add(l, (uint32_t)key, r->limit, reset)
                                 : placed_window(l, (uint32_t)key, r->limit, reset);
    if (now_s != INT64_MIN && reset - now_s < w->min_ahead_s) w->min_ahead_s = reset - now_s;
    bool timed = now_ns != INT64_MIN && now_ns > 0;
    if (timed) min_known(&w->first_ns, now_ns);
    if (r->status == 429) {
        k->after_429 = true;
        w->limited++;
        w->limited_warm += warm;
        w->limited_by[op]++;
        if (timed) min_known(&w->first_limited_ns, now_ns);
        return;
    }
    ps_lg_kind kind = ps_lg_kind_of(op, r->status);
    w->admitted++;
    w->admitted_by[kind]++;
    if (timed) {
        int64_t ahead = reset * 1000000000LL - now_ns;
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
        /* a fall is a counted request's, in any window; a hold tells only
         * within the Reset the thread's last admission named (after it,
         * the state may have moved: a window ended, a slot left) */
        bool fell = r->remaining < before;
        bool within = !timed || !k->last_admit_ns ||
                      now_ns < (k->last_reset - PS_RLM_RESET_ROUNDING_S) * 1000000000LL;
        if (k->after_429 || (!fell && !within))
            w->untold_by[kind]++;
        else if (fell)
            w->fell_by[kind]++;
        k->last_remaining_1 = r->remaining + 1;
        if (timed && k->last_admit_ns && k->last_limit == r->limit && k->last_reset == reset &&
            r->remaining > k->last_remaining && now_ns > k->last_admit_ns + PS_RLM_REORDER_NS &&
            now_ns < (reset - PS_RLM_RESET_ROUNDING_S) * 1000000000LL)
            w->rises++;
        if (timed) {
            k->last_limit = r->limit;
            k->last_reset = reset;
            k->last_remaining = r->remaining;
            k->last_admit_ns = now_ns;
        }
        if (r->remaining > w->max_remaining) w->max_remaining = r->remaining;
        if (w->min_remaining < 0 || r->remaining < w->min_remaining)
            w->min_remaining = r->remaining;
    }
    k->after_429 = false;
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
        /* placed windows of two threads a second apart are one window */
        ps_lg_window *d = s->placed ? placed_window(dst, s->key, s->limit, s->reset)
                                    : find_or_add(dst, s->key, s->limit, s->reset);
        d->admitted += s->admitted;
        d->limited += s->limited;
        d->limited_warm += s->limited_warm;
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
            d->untold_by[k] += s->untold_by[k];
            min_known(&d->first_admit_ns_by[k], s->first_admit_ns_by[k]);
            max_into(&d->last_admit_ns_by[k], s->last_admit_ns_by[k]);
            max_into(&d->max_ahead_ns_by[k], s->max_ahead_ns_by[k]);
        }
        for (int o = 0; o < PS_LG_OPS; o++)
            d->limited_by[o] += s->limited_by[o];
        d->rises += s->rises;
        for (uint32_t t = 0; t < s->nadmit_ns; t++)
            add_admit_time(d, s->admit_ns[t]);
    }
    for (size_t k = 0; k < dst->nkeys && k < src->nkeys; k++) {
        ps_lg_key_checks *d = &dst->keys[k];
        const ps_lg_key_checks *s = &src->keys[k];
        /* the first sample of a check: the earliest thread's that has one */
        if (!d->missing_sample[0])
            memcpy(d->missing_sample, s->missing_sample, sizeof d->missing_sample);
        if (!d->bad_sample[0]) memcpy(d->bad_sample, s->bad_sample, sizeof d->bad_sample);
        if (!d->retry_sample[0]) memcpy(d->retry_sample, s->retry_sample, sizeof d->retry_sample);
        d->responses += s->responses;
        d->missing_headers += s->missing_headers;
        d->bad_headers += s->bad_headers;
        d->missing_retry_after += s->missing_retry_after;
        d->bad_retry_after += s->bad_retry_after;
        d->failures += s->failures;
        for (int o = 0; o < PS_LG_OPS; o++)
            d->bare_limited_by[o] += s->bare_limited_by[o];
        for (uint32_t t = 0; t < s->nunplaced; t++)
            add_unplaced(d, s->unplaced[t]);
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

/* ---- what the limits count: the evidence, handed to the shared model ------ */

_Static_assert(PS_LG_KIND_LIST == PS_RLM_OP_LIST * 2 + PS_RLM_2XX &&
                   PS_LG_KIND_CREATE_4XX == PS_RLM_OP_CREATE * 2 + PS_RLM_4XX &&
                   (int)PS_LG_OPS == (int)PS_RLM_OPS,
               "ps_lg_kind is the model's (op, class) bit");
_Static_assert((int)PS_LG_LIMITED_AUTO == (int)PS_RLM_OPS_AUTO &&
                   (int)PS_LG_LIMITED_ALL == (int)PS_RLM_OPS_ALL &&
                   (int)PS_LG_LIMITED_LIST == (int)PS_RLM_OPS_LIST &&
                   (int)PS_LG_LIMITED_CREATE == (int)PS_RLM_OPS_CREATE &&
                   (int)PS_LG_ERRORS_AUTO == (int)PS_RLM_ERRORS_AUTO &&
                   (int)PS_LG_ERRORS_YES == (int)PS_RLM_ERRORS_YES &&
                   (int)PS_LG_ERRORS_NO == (int)PS_RLM_ERRORS_NO,
               "the flags are the model's rules");

/* Answers came one at a time only when one connection carried the whole
 * run: then a fall of Remaining is the request's own. */
static bool answers_ordered(const ps_lg_config *cfg)
{
    return cfg->threads == 1 && cfg->connections == 1 && !cfg->burst;
}

/* (limit, reset) order of window pointers. */
static int by_limit_reset(const void *a, const void *b)
{
    const ps_lg_window *x = *(const ps_lg_window *const *)a, *y = *(const ps_lg_window *const *)b;
    if (x->limit != y->limit) return x->limit < y->limit ? -1 : 1;
    return (x->reset > y->reset) - (x->reset < y->reset);
}

/* Whether a key's Reset-keyed windows are windows: none began while the
 * previous one of its Limit was more than its rounding second off (a
 * bucket's or a moving window's Reset moving ahead: each Reset then holds
 * a few answers). Only then does a window's count say what it admitted,
 * and its refusals what it held. (Room back under a Reset is no sign here:
 * an operation not counted is admitted after the counted ones are refused,
 * and the counting is what is being decided.) *moved: a Reset moved ahead
 * (a bucket may have refilled between answers). */
static bool windows_steady(const ps_lg_limits *l, const size_t *slots, size_t nslots, bool *moved)
{
    const ps_lg_window **order = malloc((nslots + 1) * sizeof *order);
    if (!order) abort();
    for (size_t j = 0; j < nslots; j++)
        order[j] = &l->slots[slots[j]];
    qsort(order, nslots, sizeof *order, by_limit_reset);
    bool steady = true;
    *moved = false;
    for (size_t j = 0; j < nslots; j++) {
        const ps_lg_window *w = order[j];
        if (j == 0) continue;
        const ps_lg_window *p = order[j - 1];
        if (p->limit == w->limit && w->first_ns &&
            w->first_ns < p->reset * 1000000000LL - PS_RLM_RESET_ROUNDING_NS - PS_RLM_JITTER_NS) {
            steady = false;
            *moved = true;
        }
    }
    free(order);
    return steady;
}

/* One key's evidence, summed over its windows (tallies: one per window of
 * the key, filled into the caller's array, when they are windows). */
static void key_evidence(const ps_lg_limits *l, const ps_lg_config *cfg, const size_t *slots,
                         size_t nslots, ps_rlm_evidence *e, ps_rlm_window_tally *tallies,
                         bool *seen)
{
    memset(e, 0, sizeof *e);
    e->ops_rule = (ps_rlm_ops_rule)cfg->limited_ops;
    e->errors_rule = (ps_rlm_errors_rule)cfg->limited_errors;
    e->ordered = answers_ordered(cfg);
    bool moved;
    bool steady = windows_steady(l, slots, nslots, &moved);
    /* one at a time, a bucket refilling between answers makes a hold tell
     * nothing and one fall tell enough (as the runner's sequence); under
     * concurrency a fall may be another request's, so most must fall */
    e->refill = moved && e->ordered;
    e->windows = tallies;
    *seen = nslots > 0;
    for (size_t j = 0; j < nslots; j++) {
        const ps_lg_window *w = &l->slots[slots[j]];
        if (w->min_remaining >= 0 && w->min_remaining < w->limit) e->below_limit = true;
        ps_rlm_window_tally scratch, *t = steady ? &tallies[e->nwindows++] : &scratch;
        memset(t, 0, sizeof *t);
        t->limit = w->limit;
        t->refused = w->limited;
        for (int k = 0; k < PS_LG_KINDS; k++) {
            ps_rlm_tally *by = &e->by[k / 2][k % 2];
            by->admitted += w->admitted_by[k] - w->untold_by[k]; /* those that could tell */
            by->fell += w->fell_by[k];
            by->held += w->admitted_by[k] - w->fell_by[k] - w->untold_by[k];
            t->admitted[k / 2][k % 2] = w->admitted_by[k];
        }
        /* a window that admitted nothing may be a ban's (every request
         * refused, counted or not): its refusals prove nothing */
        if (w->admitted > 0)
            for (int o = 0; o < PS_LG_OPS; o++)
                e->refused[o] += w->limited_by[o];
    }
}

/* The counting of every key of cfg (cfg->nkeys entries; seen_out[k]: key k
 * had a window), each decided once by the shared model. */
static ps_lg_counting *counting_table(const ps_lg_limits *l, const ps_lg_config *cfg,
                                      bool *seen_out)
{
    ps_lg_counting *c = calloc(cfg->nkeys + 1, sizeof *c);
    ps_rlm_window_tally *tallies = calloc(l->count + 1, sizeof *tallies);
    /* the used slots grouped by key (a counting sort), so each key visits
     * its own windows: a scan of every slot per key was quadratic (4 shards
     * of 8,000 keys took 4.7 s to merge) */
    size_t *first = calloc(cfg->nkeys + 2, sizeof *first);
    size_t *slots = calloc(l->count + 1, sizeof *slots);
    if (!c || !tallies || !first || !slots) abort();
    for (size_t i = 0; i < l->cap; i++)
        if (l->slots[i].used && l->slots[i].key < cfg->nkeys) first[l->slots[i].key + 2]++;
    for (size_t k = 2; k < cfg->nkeys + 2; k++)
        first[k] += first[k - 1];
    for (size_t i = 0; i < l->cap; i++)
        if (l->slots[i].used && l->slots[i].key < cfg->nkeys)
            slots[first[l->slots[i].key + 1]++] = i;
    for (size_t k = 0; k < cfg->nkeys; k++) {
        ps_rlm_evidence e;
        bool seen;
        key_evidence(l, cfg, slots + first[k], first[k + 1] - first[k], &e, tallies, &seen);
        /* a 429 that named no window still refused its operation: counted
         * (issue 17's stack, whose bare 429s hid an over-admission) */
        if (seen && k < l->nkeys)
            for (int o = 0; o < PS_LG_OPS; o++)
                e.refused[o] += l->keys[k].bare_limited_by[o];
        c[k].key = k;
        ps_rlm_decide(&e, &c[k].counting);
        if (seen_out) seen_out[k] = seen;
    }
    free(first);
    free(slots);
    free(tallies);
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

static int by_window(const void *a, const void *b)
{
    const ps_lg_window *x = *(const ps_lg_window *const *)a, *y = *(const ps_lg_window *const *)b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    if (x->limit != y->limit) return x->limit < y->limit ? -1 : 1;
    return (x->reset > y->reset) - (x->reset < y->reset);
}

/* The windows as the counting sees them: copies (sharing admit_ns) whose
 * admissions and times cover exactly the kinds in their key's mask; a
 * window left with no counted admission and no 429 (uncounted answers
 * telling a state) is left out. */
void ps_lg_view_build(ps_lg_view *v, const ps_lg_limits *l, const ps_lg_config *cfg)
{
    memset(v, 0, sizeof *v);
    v->counting = counting_table(l, cfg, NULL);
    v->store = calloc(l->count + 1, sizeof *v->store);
    v->ws = calloc(l->count + 1, sizeof *v->ws);
    if (!v->store || !v->ws) abort();
    for (size_t i = 0; i < l->cap; i++) {
        const ps_lg_window *w = &l->slots[i];
        if (!w->used || w->key >= cfg->nkeys) continue;
        unsigned mask = v->counting[w->key].counting.mask;
        ps_lg_window c = *w;
        c.admitted = 0;
        c.first_ns = w->first_limited_ns;
        c.last_admit_ns = c.max_ahead_ns = 0;
        for (int k = 0; k < PS_LG_KINDS; k++) {
            if (!(mask & (1u << k))) continue;
            c.admitted += w->admitted_by[k];
            min_known(&c.first_ns, w->first_admit_ns_by[k]);
            max_into(&c.last_admit_ns, w->last_admit_ns_by[k]);
            max_into(&c.max_ahead_ns, w->max_ahead_ns_by[k]);
        }
        if (c.admitted == 0 && c.limited == 0) continue;
        v->store[v->nw] = c;
        v->ws[v->nw] = &v->store[v->nw];
        v->nw++;
    }
    qsort(v->ws, v->nw, sizeof *v->ws, by_window);
}

void ps_lg_view_free(ps_lg_view *v)
{
    free(v->ws);
    free(v->store);
    free(v->counting);
    memset(v, 0, sizeof *v);
}

int64_t ps_lg_view_allowed(const ps_lg_key *key, const ps_lg_window *w)
{
    if (!ps_rlm_figures_known(&key->plan)) return w->limit;
    return ps_rlm_plan_figure(&key->plan,
                              ps_rlm_window_governing(&key->plan, w->limit, w->min_ahead_s));
}

size_t ps_lg_limits_counted_windows(const ps_lg_limits *l, const ps_lg_config *cfg)
{
    ps_lg_view v;
    ps_lg_view_build(&v, l, cfg);
    size_t n = v.nw;
    ps_lg_view_free(&v);
    return n;
}

size_t ps_lg_limits_reached_windows(const ps_lg_limits *l, const ps_lg_config *cfg)
{
    ps_lg_view v;
    ps_lg_view_build(&v, l, cfg);
    size_t n = 0;
    for (size_t i = 0; i < v.nw; i++)
        n += ps_rlm_window_reached(v.ws[i]->admitted, v.ws[i]->limited,
                                   ps_lg_view_allowed(&cfg->keys[v.ws[i]->key], v.ws[i]));
    ps_lg_view_free(&v);
    return n;
}

/* The length of a window of key's plan whose Limit is `limit`: the
 * per-minute or per-day figure's; 0 when it is neither. */
static int64_t window_len_s(const ps_lg_key *key, int64_t limit)
{
    if (key->plan.per_minute > 0 && limit == key->plan.per_minute) return 60;
    if (key->plan.per_day > 0 && limit == key->plan.per_day) return 86400;
    return 0;
}

void ps_lg_limits_place(ps_lg_limits *l, const ps_lg_config *cfg)
{
    if (cfg->time_scale != 1) return;
    for (size_t k = 0; k < l->nkeys && k < cfg->nkeys; k++) {
        ps_lg_key_checks *kc = &l->keys[k];
        for (uint32_t a = 0; a < kc->nunplaced; a++) {
            int64_t t = kc->unplaced[a] & ~(int64_t)3;
            ps_lg_kind kind = (ps_lg_kind)(kc->unplaced[a] & 3);
            /* the earliest-ending window a 429 named that holds t (a
             * minute's before a day's) */
            ps_lg_window *in = NULL;
            for (size_t i = 0; i < l->cap; i++) {
                ps_lg_window *w = &l->slots[i];
                if (!w->used || w->key != k || w->placed || !w->limited) continue;
                int64_t len = window_len_s(&cfg->keys[k], w->limit);
                if (!len || t >= w->reset * 1000000000LL || t < (w->reset - len) * 1000000000LL)
                    continue;
                if (!in || w->reset < in->reset) in = w;
            }
            if (!in) continue;
            /* counted like an admission with no Remaining: it tells the
             * counting nothing, the window's count everything */
            in->admitted++;
            in->admitted_by[kind]++;
            in->untold_by[kind]++;
            min_known(&in->first_ns, t);
            max_into(&in->last_admit_ns, t);
            min_known(&in->first_admit_ns_by[kind], t);
            max_into(&in->last_admit_ns_by[kind], t);
            add_admit_time(in, t | (int64_t)kind);
            kc->placed++;
        }
    }
}
