/* limiter.c - per-identity minute/day limits (fixed window, sliding log,
 * sliding window counter or token bucket) and temporary bans, behind striped
 * locks. */
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
 * seen identities of its stripe and drops those whose limits are back to full. */
#define LAZY_SWEEP 2
/* fault over-admission-race: the pause between reading the count and writing it
 * back, long enough that concurrent requests reliably read the same count. */
#define RACY_PAUSE_NS 100000
/* Sliding log: admissions are logged per millisecond (a count per slot), and
 * a slot leaves the window at the end of its millisecond plus the window:
 * never earlier than its requests' own times would, so never over-admitting. */
#define LOG_SLOT_NS 1000000

__extension__ typedef __int128 i128;

enum { MINUTE = 0, DAY = 1 };
static const char *const window_names[2] = {"minute", "day"};

typedef struct log_slot {
    int64_t leave_ns; /* when this slot's admissions leave the window */
    int64_t n;
} log_slot;

/* One limit's state. Which members mean what depends on the mode. */
typedef struct window {
    int64_t end_ns;  /* fixed: the window's end; counter: the current counting window's end;
                        0: never started */
    int64_t count;   /* fixed, counter: admitted in the (current) window; log: admissions logged */
    int64_t prev;    /* counter: admitted in the previous counting window */
    int64_t refused; /* refusals since the window started (fixed) or since the last admission */
    int64_t limit;   /* token bucket: the limit tat is scaled by */
    i128 tat;        /* token bucket: theoretical arrival time in ns x limit (<= now: full) */
    log_slot *log;   /* sliding log: a ring of cap slots, len of them used from head */
    size_t head, len, cap;
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
    ps_limiter_mode mode;
    atomic_size_t tracked;
    stripe stripes[NSTRIPES];
};

int ps_limiter_create(const ps_limiter_options *opts, ps_limiter **out, ps_error *err)
{
    *out = NULL;
    double scale = opts->time_scale == 0 ? 1.0 : opts->time_scale;
    if (!(scale >= 1.0) || scale > 1e9)
        return ps_error_set(err, "limiter: time scale %g is out of range (1 to 1e9)",
                            opts->time_scale);
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
    l->mode = opts->mode;
    if (!ps_rlm_algo_name(l->mode)) {
        free(l);
        return ps_error_set(err, "limiter: unknown mode %d", (int)opts->mode);
    }
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
            free(e->w[MINUTE].log);
            free(e->w[DAY].log);
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
    if (e->lru_prev)
        e->lru_prev->lru_next = e->lru_next;
    else
        st->lru_head = e->lru_next;
    if (e->lru_next)
        e->lru_next->lru_prev = e->lru_prev;
    else
        st->lru_tail = e->lru_prev;
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
    while (*pp != e)
        pp = &(*pp)->hnext;
    *pp = e->hnext;
    lru_unlink(st, e);
    st->count--;
    atomic_fetch_sub_explicit(&l->tracked, 1, memory_order_relaxed);
    free(e->w[MINUTE].log);
    free(e->w[DAY].log);
    free(e);
}

static int64_t ceil_div(i128 a, int64_t b) /* b > 0, a >= 0 */
{
    return (int64_t)((a + b - 1) / b);
}

/* When window i is back to its full allowance (nothing of the past counts
 * any more): from then on its state can be forgotten. */
static int64_t window_idle_at(const ps_limiter *l, const window *w, int i)
{
    switch (l->mode) {
    case PS_RLM_SLIDING_LOG:
        return w->len ? w->log[(w->head + w->len - 1) % w->cap].leave_ns : 0;
    case PS_RLM_SLIDING_COUNTER:
        return w->end_ns ? w->end_ns + l->window_ns[i] : 0;
    case PS_RLM_TOKEN_BUCKET:
        return w->limit > 0 && w->tat > 0 ? ceil_div(w->tat, w->limit) : 0;
    case PS_RLM_FIXED:
    default:
        return w->end_ns;
    }
}

static bool entry_expired(const ps_limiter *l, const entry *e, int64_t now_ns)
{
    return now_ns >= window_idle_at(l, &e->w[MINUTE], MINUTE) &&
           now_ns >= window_idle_at(l, &e->w[DAY], DAY) && now_ns >= e->ban_end_ns;
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
    while (st->count >= l->stripe_cap && st->lru_tail)
        entry_remove(l, st, st->lru_tail);
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
        if (e != keep && entry_expired(l, e, now_ns)) entry_remove(l, st, e);
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
                         int64_t reset_ns, int64_t next_ns, int64_t now_ns, const char *which)
{
    out->verdict = verdict;
    out->limit = limit;
    out->remaining = 0;
    out->reset_unix_s = ceil_s(reset_ns);
    /* rounded up: the client's whole-second clock plus Retry-After is never
     * before the moment admission is possible again */
    out->retry_after_s = ceil_s(next_ns) - floor_s(now_ns);
    if (out->retry_after_s < 1) out->retry_after_s = 1;
    out->window = which;
}

/* What one limit says about a request at now_ns, without changing it. */
typedef struct probe {
    bool room;        /* a request would be admitted */
    int64_t left;     /* requests left as it stands (before this one), 0..lim */
    int64_t reset_ns; /* X-RateLimit-Reset after admitting it (room), or as it stands (refused) */
    int64_t stand_ns; /* X-RateLimit-Reset as it stands (for answers that are not counted) */
    int64_t next_ns;  /* refused: the earliest time a request would be admitted */
} probe;

/* Sliding log: admissions of w still in the window at now_ns, and the
 * index (from head) of the first live slot. */
static int64_t log_live(const window *w, int64_t now_ns, size_t *first)
{
    int64_t live = w->count;
    size_t k = 0;
    while (k < w->len && w->log[(w->head + k) % w->cap].leave_ns <= now_ns) {
        live -= w->log[(w->head + k) % w->cap].n;
        k++;
    }
    *first = k;
    return live;
}

/* Counter: the counting window holding now_ns (start, current and previous
 * counts) as it would be after rolling. */
static void counter_at(const ps_limiter *l, const window *w, int i, int64_t now_ns, int64_t *start,
                       int64_t *cur, int64_t *prev)
{
    int64_t W = l->window_ns[i];
    if (w->end_ns == 0 || now_ns >= w->end_ns + W) {
        *start = now_ns;
        *cur = *prev = 0;
    } else if (now_ns >= w->end_ns) {
        *start = w->end_ns;
        *prev = w->count;
        *cur = 0;
    } else {
        *start = w->end_ns - W;
        *cur = w->count;
        *prev = w->prev;
    }
}

/* cap is the number the limit admits (lim, or lim + 1 under the fault
 * off-by-one-admission); remaining is always told against lim. */
static void probe_window(const ps_limiter *l, const window *w, int i, int64_t lim, int64_t cap,
                         int64_t now_ns, probe *p)
{
    int64_t W = l->window_ns[i];
    memset(p, 0, sizeof *p);
    switch (l->mode) {
    case PS_RLM_FIXED:
    default: {
        int64_t cnt = now_ns >= w->end_ns ? 0 : w->count;
        int64_t end = now_ns >= w->end_ns ? now_ns + W : w->end_ns;
        p->room = cnt < cap;
        p->left = lim - cnt;
        p->reset_ns = p->next_ns = p->stand_ns = end;
        break;
    }
    case PS_RLM_SLIDING_LOG: {
        size_t first;
        int64_t live = log_live(w, now_ns, &first);
        int64_t mine = (now_ns + LOG_SLOT_NS - 1) / LOG_SLOT_NS * LOG_SLOT_NS + W;
        p->room = live < cap;
        p->left = lim - live;
        /* the oldest counted request (this one when the log is empty) */
        p->reset_ns = first < w->len ? w->log[(w->head + first) % w->cap].leave_ns : mine;
        p->stand_ns = first < w->len ? p->reset_ns : now_ns;
        if (!p->room) { /* room comes when live - cap + 1 admissions have left */
            int64_t need = live - cap + 1, gone = 0;
            for (size_t k = first; k < w->len; k++) {
                const log_slot *s = &w->log[(w->head + k) % w->cap];
                gone += s->n;
                if (gone >= need) {
                    p->next_ns = s->leave_ns;
                    break;
                }
            }
        }
        break;
    }
    case PS_RLM_SLIDING_COUNTER: {
        int64_t start, cur, prev;
        counter_at(l, w, i, now_ns, &start, &cur, &prev);
        int64_t e = now_ns - start;
        /* estimate = prev * (W - e) / W + cur, kept exact in units of 1/W */
        i128 used = (i128)prev * (W - e) + (i128)cur * W;
        p->room = used + W <= (i128)cap * W;
        i128 left = (i128)lim * W - used;
        p->left = left <= 0 ? 0 : (int64_t)(left / W);
        p->reset_ns = p->stand_ns = start + W;
        if (!p->room) {
            if (cur + 1 > cap) { /* only the next window can make room: prev' = cur there */
                i128 x = (i128)(cap - 1) * W / cur;
                p->next_ns = start + W + (W - (int64_t)x);
            } else { /* the previous window's weight must fall */
                i128 x = (i128)(cap - cur - 1) * W / prev;
                p->next_ns = start + (W - (int64_t)x);
            }
        }
        break;
    }
    case PS_RLM_TOKEN_BUCKET: {
        /* GCRA in units of ns x lim: one request costs W, the bucket holds
         * cap requests, so a request is admitted when
         * max(tat, now) + W <= now + cap * W. */
        i128 now_u = (i128)now_ns * lim;
        i128 wt = w->limit == lim ? w->tat : 0;
        i128 tat = wt > now_u ? wt : now_u;
        i128 new_tat = tat + W;
        p->room = new_tat <= now_u + (i128)cap * W;
        i128 left = now_u + (i128)lim * W - tat;
        p->left = left <= 0 ? 0 : (int64_t)(left / W);
        p->stand_ns = ceil_div(tat, lim); /* full again */
        p->reset_ns = ceil_div(p->room ? new_tat : tat, lim);
        if (!p->room) p->next_ns = ceil_div(tat + W - (i128)cap * W, lim);
        break;
    }
    }
    if (p->left < 0) p->left = 0;
    if (p->left > lim) p->left = lim;
}

/* Brings window i to now_ns before counting (a fixed or counting window
 * rolls, a log drops what left). */
static void roll_window(const ps_limiter *l, window *w, int i, int64_t lim, int64_t now_ns)
{
    int64_t W = l->window_ns[i];
    switch (l->mode) {
    case PS_RLM_FIXED:
    default:
        if (now_ns >= w->end_ns) {
            w->end_ns = now_ns + W;
            w->count = 0;
            w->refused = 0;
        }
        break;
    case PS_RLM_SLIDING_LOG: {
        size_t first;
        w->count = log_live(w, now_ns, &first);
        w->head = w->cap ? (w->head + first) % w->cap : 0;
        w->len -= first;
        break;
    }
    case PS_RLM_SLIDING_COUNTER: {
        int64_t start, cur, prev;
        counter_at(l, w, i, now_ns, &start, &cur, &prev);
        w->end_ns = start + W;
        w->count = cur;
        w->prev = prev;
        break;
    }
    case PS_RLM_TOKEN_BUCKET:
        if (w->limit != lim) { /* the plan changed: start full */
            w->tat = 0;
            w->limit = lim;
        }
        break;
    }
}

/* Counts one admission at now_ns in a rolled window. */
static void commit_window(const ps_limiter *l, window *w, int i, int64_t lim, int64_t now_ns)
{
    int64_t W = l->window_ns[i];
    switch (l->mode) {
    case PS_RLM_FIXED:
    case PS_RLM_SLIDING_COUNTER:
    default:
        w->count++;
        break;
    case PS_RLM_SLIDING_LOG: {
        int64_t leave = (now_ns + LOG_SLOT_NS - 1) / LOG_SLOT_NS * LOG_SLOT_NS + W;
        log_slot *last = w->len ? &w->log[(w->head + w->len - 1) % w->cap] : NULL;
        if (last && last->leave_ns >= leave) {
            last->n++; /* same slot (or a clock that stepped back: keep the later leave) */
        } else {
            if (w->len == w->cap) {
                size_t ncap = w->cap ? w->cap * 2 : 8;
                log_slot *nl = malloc(ncap * sizeof *nl);
                if (!nl) abort();
                for (size_t k = 0; k < w->len; k++)
                    nl[k] = w->log[(w->head + k) % w->cap];
                free(w->log);
                w->log = nl;
                w->cap = ncap;
                w->head = 0;
            }
            w->log[(w->head + w->len) % w->cap] = (log_slot){leave, 1};
            w->len++;
        }
        w->count++;
        break;
    }
    case PS_RLM_TOKEN_BUCKET: {
        i128 now_u = (i128)now_ns * lim;
        w->tat = (w->tat > now_u ? w->tat : now_u) + W;
        break;
    }
    }
    if (l->mode != PS_RLM_FIXED) w->refused = 0;
}

/* The decision for entry e at now_ns. With count set, the request is
 * counted (limits roll, counts and refusals increase, bans start);
 * otherwise e is left as it is and the decision is what a request would get.
 * beyond: admissions this request may find beyond the limits (faults only).
 * Returns true when the request is admitted. Called with the stripe locked. */
static bool decide(ps_limiter *l, entry *e, const int64_t lim[2], int64_t now_ns, bool count,
                   int64_t beyond, ps_limit_decision *out)
{
    if (now_ns < e->ban_end_ns) {
        fill_refusal(out, PS_BANNED, e->ban_limit, e->ban_end_ns, e->ban_end_ns, now_ns, "ban");
        return false;
    }
    int64_t extra = (ps_fault_on(l->faults, PS_FAULT_OFF_BY_ONE_ADMISSION) ? 1 : 0) + beyond;
    probe p[2];
    bool any = false, exhausted[2] = {false, false};
    for (int i = 0; i < 2; i++) {
        if (lim[i] <= 0) continue;
        any = true;
        if (count) roll_window(l, &e->w[i], i, lim[i], now_ns);
        probe_window(l, &e->w[i], i, lim[i], lim[i] + extra, now_ns, &p[i]);
        exhausted[i] = !p[i].room;
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
        /* the limit that holds out longer refuses: admission waits for both
         * (ties, as with fixed windows ending together: the day) */
        int r = !exhausted[MINUTE]                    ? DAY
                : !exhausted[DAY]                     ? MINUTE
                : p[DAY].next_ns >= p[MINUTE].next_ns ? DAY
                                                      : MINUTE;
        int64_t next = p[r].next_ns;
        for (int i = 0; i < 2; i++)
            if (exhausted[i] && p[i].next_ns > next) next = p[i].next_ns;
        if (count) {
            e->w[r].refused++;
            if (l->ban_threshold > 0 && e->w[r].refused > l->ban_threshold) {
                e->ban_end_ns = now_ns + l->ban_ns;
                e->ban_limit = lim[r];
                e->w[r].refused = 0;
                if (now_ns < e->ban_end_ns) {
                    fill_refusal(out, PS_BANNED, lim[r], e->ban_end_ns, e->ban_end_ns, now_ns,
                                 "ban");
                    return false;
                }
            }
        }
        fill_refusal(out, PS_LIMITED, lim[r], p[r].reset_ns, next, now_ns, window_names[r]);
        return false;
    }
    /* Counted: remaining after this request, and the Reset that follows it;
     * a peek: both as they stand. */
    int best = -1;
    int64_t rem[2] = {0, 0}, reset[2] = {0, 0};
    for (int i = 0; i < 2; i++) {
        if (lim[i] <= 0) continue;
        if (count) commit_window(l, &e->w[i], i, lim[i], now_ns);
        rem[i] = count ? (p[i].left > 0 ? p[i].left - 1 : 0) : p[i].left;
        reset[i] = count ? p[i].reset_ns : p[i].stand_ns;
        if (best < 0 || rem[i] < rem[best] || (rem[i] == rem[best] && reset[i] < reset[best]))
            best = i;
    }
    /* fault stacked-limiters: two limiters each write the three headers and
     * the day limiter, running last, wins on every admitted answer */
    if (ps_fault_on(l->faults, PS_FAULT_STACKED_LIMITERS) && lim[DAY] > 0) best = DAY;
    out->verdict = PS_ADMITTED;
    out->limit = lim[best];
    out->remaining = rem[best];
    out->reset_unix_s = ceil_s(reset[best]);
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
                       const int64_t lim[2], int64_t now_ns, int64_t beyond, ps_limit_decision *out)
{
    pthread_mutex_lock(&st->mu);
    entry *e = stripe_touch(l, st, h, identity, len, now_ns);
    stripe_lazy_sweep(l, st, e, now_ns);
    bool room = decide(l, e, lim, now_ns, false, beyond, out);
    if (!room) { /* refusals are counted (and bans started) the ordinary way */
        decide(l, e, lim, now_ns, true, beyond, out);
        pthread_mutex_unlock(&st->mu);
        return;
    }
    /* out describes the limits before this request: account for it */
    if (out->remaining > 0) out->remaining--;
    pthread_mutex_unlock(&st->mu);

    sched_yield();
    ps_clock_sleep_ns(RACY_PAUSE_NS);

    pthread_mutex_lock(&st->mu);
    e = stripe_touch(l, st, h, identity, len, now_ns);
    for (int i = 0; i < 2; i++) {
        if (lim[i] <= 0) continue;
        roll_window(l, &e->w[i], i, lim[i], now_ns);
        commit_window(l, &e->w[i], i, lim[i], now_ns);
    }
    pthread_mutex_unlock(&st->mu);
}

void ps_limiter_admit(ps_limiter *l, const char *identity, size_t identity_len, int64_t per_minute,
                      int64_t per_day, int64_t now_ns, ps_limit_decision *out)
{
    ps_limiter_admit_beyond(l, identity, identity_len, per_minute, per_day, now_ns, 0, out);
}

void ps_limiter_admit_beyond(ps_limiter *l, const char *identity, size_t identity_len,
                             int64_t per_minute, int64_t per_day, int64_t now_ns, int64_t beyond,
                             ps_limit_decision *out)
{
    const int64_t lim[2] = {per_minute, per_day};
    uint64_t h = ps_hash_bytes(identity, identity_len);
    stripe *st = stripe_of(l, h);
    if (ps_fault_on(l->faults, PS_FAULT_OVER_ADMISSION_RACE)) {
        admit_racy(l, st, h, identity, identity_len, lim, now_ns, beyond, out);
        return;
    }
    pthread_mutex_lock(&st->mu);
    entry *e = stripe_touch(l, st, h, identity, identity_len, now_ns);
    stripe_lazy_sweep(l, st, e, now_ns);
    decide(l, e, lim, now_ns, true, beyond, out);
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
        decide(l, e, lim, now_ns, false, 0, out);
    } else {
        entry fresh;
        memset(&fresh, 0, sizeof fresh);
        decide(l, &fresh, lim, now_ns, false, 0, out);
    }
    pthread_mutex_unlock(&st->mu);
}

/* Takes one admission made at t back from window i, if the window still holds it. */
static void refund_window(const ps_limiter *l, window *w, int i, int64_t lim, int64_t t)
{
    int64_t W = l->window_ns[i];
    switch (l->mode) {
    case PS_RLM_FIXED:
    default:
        if (t >= w->end_ns - W && t < w->end_ns && w->count > 0) w->count--;
        break;
    case PS_RLM_SLIDING_COUNTER:
        if (t >= w->end_ns - W && t < w->end_ns && w->count > 0)
            w->count--;
        else if (t >= w->end_ns - 2 * W && t < w->end_ns - W && w->prev > 0)
            w->prev--;
        break;
    case PS_RLM_SLIDING_LOG: {
        int64_t leave = (t + LOG_SLOT_NS - 1) / LOG_SLOT_NS * LOG_SLOT_NS + W;
        for (size_t k = w->len; k-- > 0;) {
            log_slot *s = &w->log[(w->head + k) % w->cap];
            if (s->leave_ns == leave && s->n > 0) {
                s->n--; /* an empty slot leaves in its time, harmlessly */
                w->count--;
                break;
            }
        }
        break;
    }
    case PS_RLM_TOKEN_BUCKET:
        if (w->limit == lim && w->tat >= W) w->tat -= W; /* below now it is simply full */
        break;
    }
}

void ps_limiter_refund(ps_limiter *l, const char *identity, size_t identity_len, int64_t per_minute,
                       int64_t per_day, int64_t admitted_ns)
{
    const int64_t lim[2] = {per_minute, per_day};
    uint64_t h = ps_hash_bytes(identity, identity_len);
    stripe *st = stripe_of(l, h);
    pthread_mutex_lock(&st->mu);
    entry *e = stripe_find(st, h, identity, identity_len);
    if (e)
        for (int i = 0; i < 2; i++)
            if (lim[i] > 0) refund_window(l, &e->w[i], i, lim[i], admitted_ns);
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
            if (entry_expired(l, e, now_ns)) {
                entry_remove(l, st, e);
                gone++;
            }
        }
        pthread_mutex_unlock(&st->mu);
    }
    return gone;
}
