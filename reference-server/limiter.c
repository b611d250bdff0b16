/* limiter.c - per-identity fixed minute/day windows and temporary bans, behind striped locks. */
#include "reference-server/limiter.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/hash.h"

/* Identities are spread over this many independently locked stripes so that
 * the server's event-loop threads only contend when they serve identities
 * that hash to the same stripe; no lock is global. */
#define NSTRIPES 64
#define INITIAL_BUCKETS 16
/* Lazy reclamation: each admission looks at this many of the least recently
 * seen identities of its stripe and drops those whose windows have ended. */
#define LAZY_SWEEP 2
/* fault over-admission-race: the pause between reading the count and writing it
 * back, long enough that concurrent requests reliably read the same count. */
#define RACY_PAUSE_NS 100000

enum { MINUTE = 0, DAY = 1 };
static const char *const window_names[2] = {"minute", "day"};

typedef struct window {
    int64_t end_ns; /* 0: never started */
    int64_t count;  /* requests admitted in it */
    int64_t refused;
} window;

typedef struct entry {
    struct entry *hnext;
    struct entry *lru_prev, *lru_next; /* lru_head = most recently seen */
    uint64_t hash;
    window w[2];
    int64_t ban_end_ns;
    int64_t ban_limit;
    size_t id_len;
    char id[];
} entry;

typedef struct stripe {
    pthread_mutex_t mu;
    entry **buckets;
    size_t nbuckets; /* power of two */
    size_t count;
    entry *lru_head, *lru_tail;
} __attribute__((aligned(64))) stripe; /* one cache line each: no false sharing of locks */

struct ps_limiter {
    int64_t window_ns[2];
    int64_t ban_ns;
    int64_t ban_threshold;
    size_t stripe_cap;
    ps_fault_set faults;
    atomic_size_t tracked;
    stripe stripes[NSTRIPES];
};

int ps_limiter_create(const ps_limiter_options *opts, ps_limiter **out, ps_error *err)
{
    *out = NULL;
    double scale = opts->time_scale == 0 ? 1.0 : opts->time_scale;
    if (!(scale >= 1.0) || scale > 1e9)
        return ps_error_set(err, "limiter: time scale %g is out of range (1 to 1e9)", opts->time_scale);
    if (opts->ban_threshold < 0)
        return ps_error_set(err, "limiter: ban threshold %lld is negative",
                            (long long)opts->ban_threshold);
    if (opts->ban_seconds < 0)
        return ps_error_set(err, "limiter: ban length %lld s is negative",
                            (long long)opts->ban_seconds);
    ps_limiter *l = aligned_alloc(64, (sizeof *l + 63) / 64 * 64);
    if (!l) return ps_error_set(err, "limiter: out of memory");
    memset(l, 0, sizeof *l);
    l->window_ns[MINUTE] = (int64_t)(60e9 / scale);
    l->window_ns[DAY] = (int64_t)(86400e9 / scale);
    if (l->window_ns[MINUTE] < 1) l->window_ns[MINUTE] = 1;
    l->ban_ns = (int64_t)((double)opts->ban_seconds * 1e9 / scale);
    l->ban_threshold = opts->ban_threshold;
    size_t max = opts->max_identities ? opts->max_identities : 1000000;
    l->stripe_cap = (max + NSTRIPES - 1) / NSTRIPES;
    l->faults = opts->faults;
    atomic_init(&l->tracked, 0);
    for (int i = 0; i < NSTRIPES; i++) {
        stripe *st = &l->stripes[i];
        pthread_mutex_init(&st->mu, NULL);
        st->nbuckets = INITIAL_BUCKETS;
        st->buckets = calloc(st->nbuckets, sizeof *st->buckets);
        if (!st->buckets) abort();
    }
    *out = l;
    return 0;
}

void ps_limiter_destroy(ps_limiter *l)
{
    if (!l) return;
    for (int i = 0; i < NSTRIPES; i++) {
        stripe *st = &l->stripes[i];
        for (entry *e = st->lru_head, *next; e; e = next) {
            next = e->lru_next;
            free(e);
        }
        free(st->buckets);
        pthread_mutex_destroy(&st->mu);
    }
    free(l);
}

static stripe *stripe_of(ps_limiter *l, uint64_t h)
{
    return &l->stripes[h % NSTRIPES];
}

static size_t bucket_of(const stripe *st, uint64_t h)
{
    return (size_t)(h / NSTRIPES) & (st->nbuckets - 1);
}

static void lru_unlink(stripe *st, entry *e)
{
    if (e->lru_prev) e->lru_prev->lru_next = e->lru_next;
    else st->lru_head = e->lru_next;
    if (e->lru_next) e->lru_next->lru_prev = e->lru_prev;
    else st->lru_tail = e->lru_prev;
    e->lru_prev = e->lru_next = NULL;
}

static void lru_push_front(stripe *st, entry *e)
{
    e->lru_prev = NULL;
    e->lru_next = st->lru_head;
    if (st->lru_head) st->lru_head->lru_prev = e;
    st->lru_head = e;
    if (!st->lru_tail) st->lru_tail = e;
}

static void entry_remove(ps_limiter *l, stripe *st, entry *e)
{
    entry **pp = &st->buckets[bucket_of(st, e->hash)];
    while (*pp != e) pp = &(*pp)->hnext;
    *pp = e->hnext;
    lru_unlink(st, e);
    st->count--;
    atomic_fetch_sub_explicit(&l->tracked, 1, memory_order_relaxed);
    free(e);
}

static bool entry_expired(const entry *e, int64_t now_ns)
{
    return now_ns >= e->w[MINUTE].end_ns && now_ns >= e->w[DAY].end_ns && now_ns >= e->ban_end_ns;
}

static void stripe_grow(stripe *st)
{
    size_t n = st->nbuckets * 2;
    entry **nb = calloc(n, sizeof *nb);
    if (!nb) return; /* keep the longer chains: still correct */
    size_t old_n = st->nbuckets;
    entry **old = st->buckets;
    st->buckets = nb;
    st->nbuckets = n;
    for (size_t i = 0; i < old_n; i++) {
        for (entry *e = old[i], *next; e; e = next) {
            next = e->hnext;
            size_t b = bucket_of(st, e->hash);
            e->hnext = nb[b];
            nb[b] = e;
        }
    }
    free(old);
}

static entry *stripe_find(stripe *st, uint64_t h, const char *id, size_t len)
{
    for (entry *e = st->buckets[bucket_of(st, h)]; e; e = e->hnext)
        if (e->hash == h && e->id_len == len && memcmp(e->id, id, len) == 0) return e;
    return NULL;
}

/* Finds or creates the identity's entry and marks it most recently seen;
 * called with the stripe locked. Creation may evict the least recently seen
 * identity when the stripe is at its share of max_identities. */
static entry *stripe_touch(ps_limiter *l, stripe *st, uint64_t h, const char *id, size_t len,
                           int64_t now_ns)
{
    entry *e = stripe_find(st, h, id, len);
    if (e) {
        lru_unlink(st, e);
        lru_push_front(st, e);
        return e;
    }
    while (st->count >= l->stripe_cap && st->lru_tail) entry_remove(l, st, st->lru_tail);
    e = calloc(1, sizeof *e + len + 1);
    if (!e) abort();
    e->hash = h;
    e->id_len = len;
    memcpy(e->id, id, len);
    if (st->count + 1 > st->nbuckets) stripe_grow(st);
    size_t b = bucket_of(st, h);
    e->hnext = st->buckets[b];
    st->buckets[b] = e;
    lru_push_front(st, e);
    st->count++;
    atomic_fetch_add_explicit(&l->tracked, 1, memory_order_relaxed);
    (void)now_ns;
    return e;
}

/* Drops a few expired identities from the cold end of the stripe. */
static void stripe_lazy_sweep(ps_limiter *l, stripe *st, const entry *keep, int64_t now_ns)
{
    entry *e = st->lru_tail;
    for (int i = 0; i < LAZY_SWEEP && e; i++) {
        entry *prev = e->lru_prev;
        if (e != keep && entry_expired(e, now_ns)) entry_remove(l, st, e);
        e = prev;
    }
}

static int64_t ceil_s(int64_t ns)
{
    return ns >= 0 ? (ns + 999999999) / 1000000000 : -((-ns) / 1000000000);
}

static int64_t floor_s(int64_t ns)
{
    return ns >= 0 ? ns / 1000000000 : -((-ns + 999999999) / 1000000000);
}

static void fill_refusal(ps_limit_decision *out, ps_admission verdict, int64_t limit,
                         int64_t end_ns, int64_t now_ns, const char *which)
{
    out->verdict = verdict;
    out->limit = limit;
    out->remaining = 0;
    out->reset_unix_s = ceil_s(end_ns);
    out->retry_after_s = out->reset_unix_s - floor_s(now_ns);
    if (out->retry_after_s < 1) out->retry_after_s = 1;
    out->window = which;
}

/* The decision for entry e at now_ns. With count set, the request is
 * counted (windows roll, counts and refusals increase, bans start);
 * otherwise e is left as it is and the decision is what a request would get.
 * Returns true when the request is admitted. Called with the stripe locked. */
static bool decide(ps_limiter *l, entry *e, const int64_t lim[2], int64_t now_ns, bool count,
                   ps_limit_decision *out)
{
    if (now_ns < e->ban_end_ns) {
        fill_refusal(out, PS_BANNED, e->ban_limit, e->ban_end_ns, now_ns, "ban");
        return false;
    }
    int64_t cnt[2] = {0, 0}, end[2] = {0, 0};
    bool exhausted[2] = {false, false};
    bool any = false;
    for (int i = 0; i < 2; i++) {
        if (lim[i] <= 0) continue;
        any = true;
        window *w = &e->w[i];
        if (now_ns >= w->end_ns) { /* a new window starts with this request */
            if (count) {
                w->end_ns = now_ns + l->window_ns[i];
                w->count = 0;
                w->refused = 0;
            }
            cnt[i] = 0;
            end[i] = now_ns + l->window_ns[i];
        } else {
            cnt[i] = w->count;
            end[i] = w->end_ns;
        }
        exhausted[i] = cnt[i] >= lim[i];
    }
    if (!any) {
        out->verdict = PS_ADMITTED;
        out->limit = 0;
        out->remaining = 0;
        out->reset_unix_s = ceil_s(now_ns);
        out->retry_after_s = 0;
        out->window = "none";
        return true;
    }
    if (exhausted[MINUTE] || exhausted[DAY]) {
        int r = exhausted[DAY] ? DAY : MINUTE; /* the day one holds out longer */
        if (count) {
            e->w[r].refused++;
            if (l->ban_threshold > 0 && e->w[r].refused > l->ban_threshold) {
                e->ban_end_ns = now_ns + l->ban_ns;
                e->ban_limit = lim[r];
                e->w[r].refused = 0;
                if (now_ns < e->ban_end_ns) {
                    fill_refusal(out, PS_BANNED, lim[r], e->ban_end_ns, now_ns, "ban");
                    return false;
                }
            }
        }
        fill_refusal(out, PS_LIMITED, lim[r], end[r], now_ns, window_names[r]);
        return false;
    }
    int best = -1;
    int64_t best_rem = 0;
    for (int i = 0; i < 2; i++) {
        if (lim[i] <= 0) continue;
        if (count) {
            e->w[i].count++;
            cnt[i]++;
        }
        int64_t rem = lim[i] - cnt[i];
        if (best < 0 || rem < best_rem || (rem == best_rem && end[i] < end[best])) {
            best = i;
            best_rem = rem;
        }
    }
    out->verdict = PS_ADMITTED;
    out->limit = lim[best];
    out->remaining = best_rem < 0 ? 0 : best_rem;
    out->reset_unix_s = ceil_s(end[best]);
    out->retry_after_s = 0;
    out->window = window_names[best];
    return true;
}

/* fault over-admission-race: the check is made under the lock, the lock is
 * dropped for a pause, and the count is incremented under the lock again.
 * Every access stays locked (no data race in the C sense, TSan is quiet),
 * but the check-then-act is no longer atomic, so concurrent requests that
 * all saw room are all admitted. */
static void admit_racy(ps_limiter *l, stripe *st, uint64_t h, const char *identity, size_t len,
                       const int64_t lim[2], int64_t now_ns, ps_limit_decision *out)
{
    pthread_mutex_lock(&st->mu);
    entry *e = stripe_touch(l, st, h, identity, len, now_ns);
    stripe_lazy_sweep(l, st, e, now_ns);
    bool room = decide(l, e, lim, now_ns, false, out);
    if (!room) { /* refusals are counted (and bans started) the ordinary way */
        decide(l, e, lim, now_ns, true, out);
        pthread_mutex_unlock(&st->mu);
        return;
    }
    /* out describes the window before this request: account for it */
    if (out->remaining > 0) out->remaining--;
    pthread_mutex_unlock(&st->mu);

    sched_yield();
    ps_clock_sleep_ns(RACY_PAUSE_NS);

    pthread_mutex_lock(&st->mu);
    e = stripe_touch(l, st, h, identity, len, now_ns);
    for (int i = 0; i < 2; i++) {
        if (lim[i] <= 0) continue;
        window *w = &e->w[i];
        if (now_ns >= w->end_ns) {
            w->end_ns = now_ns + l->window_ns[i];
            w->count = 0;
            w->refused = 0;
        }
        w->count++;
    }
    pthread_mutex_unlock(&st->mu);
}

void ps_limiter_admit(ps_limiter *l, const char *identity, size_t identity_len, int64_t per_minute,
                      int64_t per_day, int64_t now_ns, ps_limit_decision *out)
{
    const int64_t lim[2] = {per_minute, per_day};
    uint64_t h = ps_hash_bytes(identity, identity_len);
    stripe *st = stripe_of(l, h);
    if (ps_fault_on(l->faults, PS_FAULT_OVER_ADMISSION_RACE)) {
        admit_racy(l, st, h, identity, identity_len, lim, now_ns, out);
        return;
    }
    pthread_mutex_lock(&st->mu);
    entry *e = stripe_touch(l, st, h, identity, identity_len, now_ns);
    stripe_lazy_sweep(l, st, e, now_ns);
    decide(l, e, lim, now_ns, true, out);
    pthread_mutex_unlock(&st->mu);
}

void ps_limiter_peek(ps_limiter *l, const char *identity, size_t identity_len, int64_t per_minute,
                     int64_t per_day, int64_t now_ns, ps_limit_decision *out)
{
    const int64_t lim[2] = {per_minute, per_day};
    uint64_t h = ps_hash_bytes(identity, identity_len);
    stripe *st = stripe_of(l, h);
    pthread_mutex_lock(&st->mu);
    entry *e = stripe_find(st, h, identity, identity_len);
    if (e) {
        decide(l, e, lim, now_ns, false, out);
    } else {
        entry fresh;
        memset(&fresh, 0, sizeof fresh);
        decide(l, &fresh, lim, now_ns, false, out);
    }
    pthread_mutex_unlock(&st->mu);
}

size_t ps_limiter_tracked(ps_limiter *l)
{
    return atomic_load_explicit(&l->tracked, memory_order_relaxed);
}

size_t ps_limiter_reclaim(ps_limiter *l, int64_t now_ns)
{
    size_t gone = 0;
    for (int i = 0; i < NSTRIPES; i++) {
        stripe *st = &l->stripes[i];
        pthread_mutex_lock(&st->mu);
        for (entry *e = st->lru_head, *next; e; e = next) {
            next = e->lru_next;
            if (entry_expired(e, now_ns)) {
                entry_remove(l, st, e);
                gone++;
            }
        }
        pthread_mutex_unlock(&st->mu);
    }
    return gone;
}
