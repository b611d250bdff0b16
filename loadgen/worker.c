/* worker.c - scheduling, accounting and the --burst choreography shared
 * by the engines. */
#include "loadgen/worker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/ratelimit_headers.h"

/* --honour-retry-after: after a 429 that names no time the key backs off
 * this long (as the runner does); a named wait is held to a day. */
#define RETRY_BACKOFF_NS INT64_C(1000000000)
#define RETRY_WAIT_MAX_NS INT64_C(86400000000000)

static void heap_down(ps_lg_stream *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && h[l].due < h[m].due) m = l;
        if (r < n && h[r].due < h[m].due) m = r;
        if (m == i) return;
        ps_lg_stream tmp = h[i];
        h[i] = h[m];
        h[m] = tmp;
        i = m;
    }
}

/* Request k's due time (ns after begin) of stream s: evenly spaced at the
 * stream's phase, or, with --arrivals poisson, at a unit-rate Poisson
 * process's positions mapped through the rate's integral (a Poisson
 * process of the rate, ramps included). */
static void stream_set_due(const ps_lg_thread *t, ps_lg_stream *s)
{
    s->due = t->sh->cfg->poisson ? ps_lg_rate_time_ns(&s->rate, s->pos)
                                 : ps_lg_rate_due_ns(&s->rate, s->k);
}

static void stream_advance(const ps_lg_thread *t, ps_lg_stream *s)
{
    s->k++;
    if (t->sh->cfg->poisson) s->pos += ps_lg_rng_exp(&s->rng);
    stream_set_due(t, s);
}

/* The open model's streams: the shared keys' (--rate, --ramp), then one per
 * key with a rate of its own. Each thread runs 1/threads of every stream;
 * its share of a key starts at that key's phase (drawn from --seed) plus
 * id/threads, so a key's requests stay evenly spaced over the threads
 * while different keys start at spread phases, never all together. */
static void init_streams(ps_lg_thread *t)
{
    const ps_lg_config *cfg = t->sh->cfg;
    int nthreads = cfg->threads;
    t->heap = calloc(cfg->nkeys + 1, sizeof *t->heap);
    if (!t->heap) abort();
    double span = cfg->ramp ? (double)cfg->duration_ns / 1e9 : 0;
    if ((cfg->rate > 0 || cfg->ramp) && t->sh->nshared > 0) {
        ps_lg_stream *s = &t->heap[t->nheap++];
        s->key = -1;
        s->rate.r1 = (cfg->ramp ? cfg->ramp_from : cfg->rate) / nthreads;
        s->rate.r2 = (cfg->ramp ? cfg->ramp_to : cfg->rate) / nthreads;
        s->rate.span_s = span;
    }
    bool scaled = cfg->key_scale_from > 0 || cfg->key_scale_to > 0;
    for (size_t i = 0; i < cfg->nkeys; i++) {
        if (cfg->keys[i].rate <= 0) continue;
        ps_lg_stream *s = &t->heap[t->nheap++];
        s->key = (int64_t)i;
        double r = cfg->keys[i].rate / nthreads;
        s->rate.r1 = scaled ? r * cfg->key_scale_from : r;
        s->rate.r2 = scaled ? r * cfg->key_scale_to : r;
        s->rate.span_s = scaled ? span : 0;
    }
    for (size_t i = 0; i < t->nheap; i++) {
        ps_lg_stream *s = &t->heap[i];
        /* The shared keys' one stream has nothing to fall in step with. */
        double u = s->key < 0 ? 0 : ps_lg_stream_phase(cfg->seed, s->key);
        s->rate.phase = (u + t->id) / nthreads;
        s->rng = ps_lg_rng_seed(cfg->seed, s->key, t->id);
        s->pos = ps_lg_rng_exp(&s->rng);
        stream_set_due(t, s);
    }
    for (size_t i = t->nheap; i-- > 0;)
        heap_down(t->heap, t->nheap, i);
}

int ps_lg_thread_init(ps_lg_thread *t, int id, int nconns, const ps_lg_shared *sh, ps_lg_sync *sync,
                      ps_error *err)
{
    const ps_lg_config *cfg = sh->cfg;
    memset(t, 0, sizeof *t);
    t->id = id;
    t->nconns = nconns;
    t->sh = sh;
    t->sync = sync;
    unsigned plan_mask = 0;
    for (size_t i = 0; i < cfg->nkeys; i++)
        plan_mask |= 1u << cfg->keys[i].plan.id;
    if (ps_lg_stats_init(&t->stats, plan_mask, true, err) != 0) return -1;
    ps_lg_stats_groups(&t->stats, ps_lg_config_group_count(cfg));
    ps_lg_limits_init(&t->limits, cfg->nkeys);
    t->blocked_until = calloc(cfg->nkeys, sizeof *t->blocked_until);
    t->key_in_flight = calloc(cfg->nkeys + 1, sizeof *t->key_in_flight);
    if (!t->blocked_until || !t->key_in_flight) abort();
    /* --verify-limits: the window-opening volley, except where the run's
     * requests are counted out (--requests) or --burst does it */
    ps_lg_volley_init(&t->volley, cfg->nkeys,
                      cfg->verify_limits && !cfg->burst && !cfg->requests ? nconns : 0);
    t->rr = (size_t)id;
    t->open = ps_lg_config_open_model(cfg);
    int nthreads = cfg->threads;
    if (cfg->requests) {
        t->quota = cfg->requests / nthreads + (id < cfg->requests % nthreads ? 1 : 0);
        if (t->quota == 0) t->quota = -1; /* more threads than requests: this one idles */
    }
    if (t->open) init_streams(t);
    return 0;
}

void ps_lg_thread_free(ps_lg_thread *t)
{
    ps_lg_stats_free(&t->stats);
    ps_lg_limits_free(&t->limits);
    free(t->blocked_until);
    free(t->key_in_flight);
    ps_lg_volley_free(&t->volley);
    free(t->heap);
    memset(t, 0, sizeof *t);
}

void ps_lg_thread_begin(ps_lg_thread *t, int64_t begin_ns)
{
    /* --start-at: the schedule started at the common origin. A late thread
     * skips what is past (the open model's due requests, the closed model's
     * elapsed time) instead of sending it all at once. */
    int64_t now = begin_ns, origin = t->sh->schedule_origin_ns;
    if (origin && origin < begin_ns && !t->sh->cfg->burst) begin_ns = origin;
    t->begin_ns = begin_ns;
    int64_t none = 0;
    atomic_compare_exchange_strong(&t->sync->begun_ns, &none, begin_ns);
    t->measure_from_ns = begin_ns + t->sh->cfg->warmup_ns;
    t->end_ns = t->sh->cfg->duration_ns ? begin_ns + t->sh->cfg->warmup_ns + t->sh->cfg->duration_ns
                                        : INT64_MAX;
    if (begin_ns == now || !t->open) return;
    for (size_t i = 0; i < t->nheap; i++) {
        ps_lg_stream *s = &t->heap[i];
        while (s->due != INT64_MAX && begin_ns + s->due < now)
            stream_advance(t, s);
    }
    for (size_t i = t->nheap; i-- > 0;)
        heap_down(t->heap, t->nheap, i);
}

bool ps_lg_stopping(const ps_lg_thread *t)
{
    return atomic_load_explicit(&t->sync->stop, memory_order_relaxed) != 0;
}

void ps_lg_tick(ps_lg_thread *t, int64_t now)
{
    int64_t sec = (now - t->sh->start_mono_ns) / 1000000000;
    if (sec > t->stats.cur_sec) ps_lg_stats_tick(&t->stats, sec);
}

/* Next key of the round robin over `keys` (all keys when NULL) that is not
 * waiting out a Retry-After; -1 when all are, with *wake the earliest end. */
static int64_t next_key(ps_lg_thread *t, const size_t *keys, size_t n, int64_t now, int64_t *wake)
{
    bool honour = t->sh->cfg->honour_retry_after;
    int64_t earliest = INT64_MAX;
    for (size_t tries = 0; tries < n; tries++) {
        size_t i = t->rr++ % n;
        size_t key = keys ? keys[i] : i;
        if (!honour || t->blocked_until[key] <= now) return (int64_t)key;
        if (t->blocked_until[key] < earliest) earliest = t->blocked_until[key];
    }
    if (wake) *wake = earliest;
    return -1;
}

/* Fills r with key's next request (by the mix) and counts it as scheduled. */
static void take_for_key(ps_lg_thread *t, ps_lg_req *r, size_t key, int64_t due, int64_t now)
{
    const ps_lg_shared *sh = t->sh;
    r->key = key;
    t->key_in_flight[key]++;
    r->op = ps_lg_mix_op(sh->cfg->mix, t->mix_k++);
    r->body = 0;
    size_t idx = 0;
    if (r->op == PS_LG_OP_CREATE && sh->nbodies > 0) {
        r->body = (size_t)(t->body_k++ % sh->nbodies);
        idx = 1 + r->body;
    } else {
        r->op = PS_LG_OP_LIST;
    }
    r->bytes = &sh->reqs[key * sh->per_key + idx];
    r->due_ns = due;
    r->sent_ns = now;
    r->warm = due < t->measure_from_ns;
    t->in_flight++;
    t->last_sent_ns = now;
    if (r->warm) {
        t->stats.warmup_requests++;
        return;
    }
    t->stats.scheduled++;
    t->stats.sent++;
    t->stats.plan_sent[sh->cfg->keys[key].plan.id]++;
    ps_lg_stats_group_sent(&t->stats, sh->cfg->keys[key].group);
    if (t->live) ps_lg_live_sent(t->live, key, t->open ? now - due : 0);
    if (t->open) {
        ps_lg_stats_late(&t->stats, (now - due) / 1000);
        /* Every connection was busy at some moment since it was due. */
        if (t->full_until_ns >= due) t->stats.conn_waits++;
    }
}

/* A taken request is settled (answered or failed): its connection is free. */
static void settle(ps_lg_thread *t, int64_t now)
{
    if (t->in_flight >= t->nconns) t->full_until_ns = now;
    if (t->in_flight > 0) t->in_flight--;
}

static void drop_due_at_end(ps_lg_thread *t, int64_t now);

static bool quota_reached(const ps_lg_thread *t)
{
    return t->quota < 0 || (t->quota > 0 && t->stats.scheduled >= t->quota);
}

/* Moves the earliest stream on to its next request. */
static void advance_earliest(ps_lg_thread *t)
{
    stream_advance(t, &t->heap[0]);
    heap_down(t->heap, t->nheap, 0);
}

/* Drops streams whose next request falls after the end of the run; true
 * while one is left. */
static bool drop_ended_streams(ps_lg_thread *t)
{
    while (t->nheap > 0) {
        ps_lg_stream *s = &t->heap[0];
        if (s->due != INT64_MAX && t->begin_ns + s->due < t->end_ns && !quota_reached(t))
            return true;
        t->heap[0] = t->heap[--t->nheap];
        heap_down(t->heap, t->nheap, 0);
    }
    return false;
}

/* The next request of the schedule (closed: whenever asked; open: when due). */
static ps_lg_take_result take_scheduled(ps_lg_thread *t, int64_t now, ps_lg_req *r,
                                        int64_t *wake_ns)
{
    const ps_lg_shared *sh = t->sh;
    if (!t->open) {
        if (now >= t->end_ns || quota_reached(t)) return PS_LG_TAKE_EXHAUSTED;
        int64_t key = next_key(t, NULL, sh->cfg->nkeys, now, wake_ns);
        if (key < 0) return PS_LG_TAKE_NONE;
        take_for_key(t, r, (size_t)key, now, now);
        return PS_LG_TAKE_READY;
    }
    drop_due_at_end(t, now);
    while (drop_ended_streams(t)) {
        ps_lg_stream *s = &t->heap[0];
        int64_t due = t->begin_ns + s->due;
        if (due > now) {
            *wake_ns = due;
            return PS_LG_TAKE_NONE;
        }
        int64_t key = s->key;
        if (key < 0)
            key = next_key(t, sh->shared_keys, sh->nshared, now, NULL);
        else if (sh->cfg->honour_retry_after && t->blocked_until[key] > now)
            key = -1;
        if (key < 0) {
            /* Retry-After told us to wait: this request is not sent at all
             * (sending it later would bunch the schedule into a burst). */
            t->stats.skipped_retry_after++;
            advance_earliest(t);
            continue;
        }
        take_for_key(t, r, (size_t)key, due, now);
        advance_earliest(t);
        return PS_LG_TAKE_READY;
    }
    return PS_LG_TAKE_EXHAUSTED;
}

ps_lg_take_result ps_lg_take(ps_lg_thread *t, int64_t now, ps_lg_req *r, int64_t *wake_ns)
{
    if (ps_lg_stopping(t)) return PS_LG_TAKE_EXHAUSTED;
    /* a key's window just opened: its volley goes first, while the run lasts */
    int64_t volley_wake = INT64_MAX;
    size_t key;
    if (now < t->end_ns && !ps_lg_scheduling_done(t, now) &&
        ps_lg_volley_take(&t->volley, ps_clock_wall_ns(), now, &key, &volley_wake)) {
        take_for_key(t, r, key, now, now);
        ps_lg_volley_sent(&t->volley, t->key_in_flight[key]);
        return PS_LG_TAKE_READY;
    }
    ps_lg_take_result res = take_scheduled(t, now, r, wake_ns);
    if (res == PS_LG_TAKE_NONE && volley_wake < *wake_ns) *wake_ns = volley_wake;
    return res;
}

/* A request due at `due` that was never sent: it waited past --timeout
 * (expired), or the run ended first. Against an unreachable target it
 * failed for want of a connection; else it is the generator's unsent. run.c
 * counts the expired ones as timed out when the target held every
 * connection (connection-limited), as a client would have seen them, and
 * leaves them out of every figure of the target when the generator itself
 * fell behind (saturated); the ones cut off by the end are no timeout. */
static void drop_unsent(ps_lg_thread *t, int64_t due, bool expired)
{
    if (due < t->measure_from_ns) return;
    if (t->live) ps_lg_live_unsent(t->live);
    if (ps_lg_unreachable(t)) {
        t->stats.scheduled++;
        ps_lg_stats_fail(&t->stats, PS_LG_FAIL_CONNECT);
        return;
    }
    t->stats.unsent++;
    t->stats.unsent_expired += expired;
    if (t->in_flight >= t->nconns || t->full_until_ns >= due) t->stats.conn_waits++;
}

/* The run ends at its duration (and --max-lateness): what is still due
 * then is not sent late (a run never overruns to catch up); only the
 * requests in flight drain. */
static void drop_due_at_end(ps_lg_thread *t, int64_t now)
{
    /* A request due just before the end may leave as late as any other. */
    if (now < t->end_ns || now - t->end_ns < t->sh->cfg->max_lateness_ns) return;
    while (t->nheap > 0) {
        ps_lg_stream *s = &t->heap[0];
        int64_t due = t->begin_ns + s->due;
        if (s->due == INT64_MAX || due >= t->end_ns || quota_reached(t)) {
            t->heap[0] = t->heap[--t->nheap];
            heap_down(t->heap, t->nheap, 0);
            continue;
        }
        drop_unsent(t, due, false);
        advance_earliest(t);
    }
}

void ps_lg_expire_overdue(ps_lg_thread *t, int64_t now)
{
    if (!t->open) return;
    int64_t timeout = t->sh->cfg->timeout_ns;
    drop_due_at_end(t, now);
    while (drop_ended_streams(t)) {
        ps_lg_stream *s = &t->heap[0];
        int64_t due = t->begin_ns + s->due;
        if (due > now - timeout) return;
        drop_unsent(t, due, true);
        advance_earliest(t);
    }
}

void ps_lg_answered(ps_lg_thread *t, const ps_lg_req *r, int64_t now, const ps_lg_resp *resp)
{
    const ps_lg_config *cfg = t->sh->cfg;
    if (t->key_in_flight[r->key] > 0) t->key_in_flight[r->key]--;
    if ((resp->seen & PS_LG_H_RESET) && !(resp->bad & PS_LG_H_RESET) &&
        resp->reset > t->latest_reset_s)
        t->latest_reset_s = resp->reset;
    ps_lg_volley_note_limit(&t->volley, resp); /* --burst's first wave */
    settle(t, now);
    if (!r->warm) {
        ps_lg_stats_answer(&t->stats, r->op, cfg->keys[r->key].plan.id, resp->status,
                           (now - r->due_ns) / 1000, (now - r->sent_ns) / 1000);
        ps_lg_stats_group_answer(&t->stats, cfg->keys[r->key].group, resp->status);
        if (t->live) ps_lg_live_answered(t->live, r->key, resp->status, (now - r->due_ns) / 1000);
    }
    if (cfg->verify_limits) {
        int64_t wall = ps_clock_wall_ns();
        ps_lg_limits_observe_op(&t->limits, r->key, r->op, resp, wall, r->warm);
        ps_lg_volley_note(&t->volley, r->key, resp, wall);
    }
    if (resp->status == 429 && cfg->honour_retry_after) {
        /* when the key may send again: core's one computation (Retry-After,
         * else a Reset ahead within a day), else a second's backoff */
        ps_rl_info rl;
        ps_lg_resp_rl_info(resp, &rl);
        ps_retry_source src;
        int64_t wall = ps_clock_wall_ns();
        int64_t at = ps_rl_retry_at_ns(&rl, wall, 0, &src);
        int64_t wait_ns = src == PS_RETRY_NONE ? RETRY_BACKOFF_NS : at - wall;
        /* --time-scale: the server's windows run N times faster while its
         * headers keep real times, so its waits are N times shorter */
        if (src != PS_RETRY_NONE && cfg->time_scale > 1)
            wait_ns = (int64_t)((double)wait_ns / cfg->time_scale);
        if (wait_ns > RETRY_WAIT_MAX_NS) wait_ns = RETRY_WAIT_MAX_NS;
        if (now + wait_ns > t->blocked_until[r->key]) t->blocked_until[r->key] = now + wait_ns;
    }
}

void ps_lg_failed(ps_lg_thread *t, const ps_lg_req *r, ps_lg_failure why)
{
    settle(t, ps_clock_mono_ns());
    if (t->key_in_flight[r->key] > 0) t->key_in_flight[r->key]--;
    if (!r->warm) {
        ps_lg_stats_fail(&t->stats, why);
        if (t->live) ps_lg_live_failed(t->live, r->key, why);
    }
    if (t->sh->cfg->verify_limits) ps_lg_limits_failure(&t->limits, r->key);
}

bool ps_lg_scheduling_done(ps_lg_thread *t, int64_t now)
{
    if (ps_lg_stopping(t)) return true;
    if (!t->open) return now >= t->end_ns || quota_reached(t);
    drop_due_at_end(t, now);
    return !drop_ended_streams(t);
}

void ps_lg_conn_up(ps_lg_thread *t)
{
    t->conns_up++;
    t->last_connect_failed = false;
}

void ps_lg_conn_down(ps_lg_thread *t)
{
    if (t->conns_up > 0) t->conns_up--;
}

void ps_lg_connect_failed(ps_lg_thread *t)
{
    t->stats.connect_failures++;
    t->last_connect_failed = true;
}

void ps_lg_fail_next_if_unconnected(ps_lg_thread *t, int64_t now)
{
    if (t->open || t->conns_up > 0) return;
    ps_lg_req r;
    int64_t wake = INT64_MAX;
    if (ps_lg_take(t, now, &r, &wake) != PS_LG_TAKE_READY) return;
    if (!r.warm) t->stats.sent--; /* never written: there was no connection */
    ps_lg_failed(t, &r, PS_LG_FAIL_CONNECT);
}

void ps_lg_transfer_connected(ps_lg_thread *t)
{
    t->conns_up = 1;
    t->last_connect_failed = false;
}

void ps_lg_transfer_connect_failed(ps_lg_thread *t)
{
    ps_lg_connect_failed(t);
    t->conns_up = 0;
}

bool ps_lg_unreachable(const ps_lg_thread *t)
{
    return t->conns_up == 0 && t->last_connect_failed;
}

void ps_lg_note_failure(ps_lg_thread *t, const char *what)
{
    if (!t->first_failure[0]) snprintf(t->first_failure, sizeof t->first_failure, "%s", what);
}

/* A list request on the next key of the round robin, outside the schedule
 * (the burst's warm-up and release): cheap and side-effect free. Counted as
 * scheduled like any other; the mix's cursor is left where it was. */
static void take_burst_list(ps_lg_thread *t, int64_t now, ps_lg_req *r)
{
    size_t key = t->rr++ % t->sh->cfg->nkeys;
    uint64_t k = t->mix_k;
    take_for_key(t, r, key, now, now);
    r->op = PS_LG_OP_LIST;
    r->bytes = &t->sh->reqs[key * t->sh->per_key];
    t->mix_k = k;
}

static void send_on_every_idle_conn(ps_lg_thread *t, const ps_lg_burst_ops *ops, void *loop,
                                    int64_t now)
{
    while (ops->has_idle_conn(loop)) {
        ps_lg_req r;
        take_burst_list(t, now, &r);
        ops->send(loop, &r, now);
    }
}

void ps_lg_burst(ps_lg_thread *t, const ps_lg_burst_ops *ops, void *loop)
{
    ps_lg_sync *sync = t->sync;
    int64_t timeout = t->sh->cfg->timeout_ns;
    ops->settle(loop, ps_clock_mono_ns() + timeout);
    send_on_every_idle_conn(t, ops, loop, ps_clock_mono_ns());
    ops->settle(loop, ps_clock_mono_ns() + timeout);
    int64_t seen = atomic_load(&sync->burst_reset_s);
    while (t->latest_reset_s > seen &&
           !atomic_compare_exchange_weak(&sync->burst_reset_s, &seen, t->latest_reset_s)) {
    }
    pthread_barrier_wait(&sync->barrier);
    /* 30 ms past the reset second: the window has surely ended on the server. */
    int64_t target = atomic_load(&sync->burst_reset_s) * INT64_C(1000000000) + INT64_C(30000000);
    int64_t wait = target - ps_clock_wall_ns();
    if (wait > 0 && wait < INT64_C(130000000000)) ops->turn_until(loop, ps_clock_mono_ns() + wait);
    ops->reopen_closed(loop);
    ops->settle(loop, ps_clock_mono_ns() + INT64_C(1000000000));
    pthread_barrier_wait(&sync->barrier);
    int64_t now = ps_clock_mono_ns();
    ps_lg_thread_begin(t, now);
    /* a first wave, so the release crosses the limit in its middle (volley.h) */
    const ps_lg_config *cfg = t->sh->cfg;
    int first =
        ps_lg_volley_first_wave(t->volley.limit_seen, cfg->connections, t->nconns, cfg->nkeys);
    for (int i = 0; i < first && ops->has_idle_conn(loop); i++) {
        ps_lg_req r;
        take_burst_list(t, now, &r);
        ops->send(loop, &r, now);
    }
    if (first) ops->settle(loop, ps_clock_mono_ns() + timeout);
    pthread_barrier_wait(&sync->barrier);
    send_on_every_idle_conn(t, ops, loop, ps_clock_mono_ns());
}

void ps_lg_burst_abstain(ps_lg_thread *t)
{
    if (!t->sh->cfg->burst) return;
    pthread_barrier_wait(&t->sync->barrier);
    pthread_barrier_wait(&t->sync->barrier);
    pthread_barrier_wait(&t->sync->barrier); /* after the first wave */
}
