/* test_lg_limits.c - the per-key, per-window admission verifier. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "loadgen/generator.h"
#include "loadgen/key_label.h"
#include "loadgen/limits.h"

static ps_lg_config cfg_with_keys(void)
{
    static ps_lg_key keys[2];
    static char k0[] = "abcdefgh-key-00zz", k1[] = "short";
    keys[0] = (ps_lg_key){.key = k0, .plan = {PS_PLAN_FREE, 60, 1000}};
    keys[1] = (ps_lg_key){.key = k1, .plan = {PS_PLAN_PRO, 300, 10000}};
    ps_lg_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.keys = keys;
    cfg.nkeys = 2;
    ps_lg_key_labels(&cfg); /* masks only: no --verify-limits, no secret */
    return cfg;
}

/* A Unix time near the tests' own (a Reset below 10^9 is not one). */
#define U0 1700000000LL

static ps_lg_resp resp(int status, int64_t limit, int64_t remaining, int64_t reset)
{
    ps_lg_resp r;
    memset(&r, 0, sizeof r);
    r.status = status;
    r.seen = PS_LG_H_LIMIT | PS_LG_H_REMAINING | PS_LG_H_RESET;
    r.limit = limit;
    r.remaining = remaining;
    r.reset = reset;
    if (status == 429) {
        r.seen |= PS_LG_H_RETRY_AFTER;
        r.retry_after_wait_s = 5;
    }
    return r;
}

static void exact_limit_passes(void)
{
    ps_lg_config cfg = cfg_with_keys();
    ps_lg_limits l;
    ps_lg_limits_init(&l, 2);
    for (int i = 0; i < 60; i++) {
        ps_lg_resp r = resp(200, 60, 59 - i, U0 + 1000);
        ps_lg_limits_observe(&l, 0, &r);
    }
    for (int i = 0; i < 5; i++) {
        ps_lg_resp r = resp(429, 60, 0, U0 + 1000);
        ps_lg_limits_observe(&l, 0, &r);
    }
    ps_lg_violation *v;
    size_t n;
    CHECK_INT(ps_lg_limits_verify(&l, &cfg, &v, &n), 0);
    CHECK_INT(n, 0);
    CHECK_INT(l.count, 1);
    free(v);
    ps_lg_limits_free(&l);
}

static void over_admission_named(void)
{
    ps_lg_config cfg = cfg_with_keys();
    ps_lg_limits a, b;
    ps_lg_limits_init(&a, 2);
    ps_lg_limits_init(&b, 2);
    /* Two threads each saw 31 admissions of one 60-request window: 62. */
    for (int i = 0; i < 31; i++) {
        ps_lg_resp r = resp(201, 60, 10, U0 + 2000);
        ps_lg_limits_observe(&a, 0, &r);
        ps_lg_limits_observe(&b, 0, &r);
    }
    /* The next window of the same key is fine and stays apart. */
    for (int i = 0; i < 60; i++) {
        ps_lg_resp r = resp(200, 60, 59 - i, U0 + 2060);
        ps_lg_limits_observe(&b, 0, &r);
    }
    ps_lg_limits_merge(&a, &b);
    ps_lg_violation *v;
    size_t n;
    CHECK_INT(ps_lg_limits_verify(&a, &cfg, &v, &n), 1);
    CHECK_INT(n, 1);
    if (n == 1) {
        CHECK_INT(v[0].kind, PS_LG_V_OVER_ADMISSION);
        CHECK(v[0].fails);
        CHECK_INT(v[0].admitted, 62);
        CHECK_INT(v[0].limit, 60);
        CHECK_INT(v[0].reset, U0 + 2000);
        CHECK_STR(v[0].window, "minute");
        CHECK(strstr(v[0].message, "ab***zz") != NULL);
        CHECK(strstr(v[0].message, "abcdefgh") == NULL);
    }
    free(v);
    ps_lg_limits_free(&a);
    ps_lg_limits_free(&b);
}

static void under_admission_is_a_warning(void)
{
    ps_lg_config cfg = cfg_with_keys();
    ps_lg_limits l;
    ps_lg_limits_init(&l, 2);
    for (int i = 0; i < 200; i++) {
        ps_lg_resp r = resp(200, 300, 299 - i, U0 + 3000);
        ps_lg_limits_observe(&l, 1, &r);
    }
    ps_lg_resp r = resp(429, 300, 0, U0 + 3000);
    ps_lg_limits_observe(&l, 1, &r);
    ps_lg_violation *v;
    size_t n;
    CHECK_INT(ps_lg_limits_verify(&l, &cfg, &v, &n), 0);
    CHECK_INT(n, 1);
    if (n == 1) {
        CHECK_INT(v[0].kind, PS_LG_V_UNDER_ADMISSION);
        CHECK(!v[0].fails);
        CHECK_INT(v[0].admitted, 200);
        CHECK(strstr(v[0].message, "***") != NULL);
    }
    free(v);
    /* Not when the window was already in use before we looked (first
     * Remaining we saw is not limit - 1). */
    ps_lg_limits_free(&l);
    ps_lg_limits_init(&l, 2);
    for (int i = 0; i < 200; i++) {
        ps_lg_resp ok = resp(200, 300, 199 - i, U0 + 3000);
        ps_lg_limits_observe(&l, 1, &ok);
    }
    ps_lg_limits_observe(&l, 1, &r);
    CHECK_INT(ps_lg_limits_verify(&l, &cfg, &v, &n), 0);
    CHECK_INT(n, 0);
    free(v);
    /* ...but the next window began while we watched: refusing it with
     * nothing admitted is an under-admission even without Remaining = L-1. */
    ps_lg_resp later = resp(429, 300, 0, U0 + 3060);
    ps_lg_limits_observe(&l, 1, &later);
    CHECK_INT(ps_lg_limits_verify(&l, &cfg, &v, &n), 0);
    CHECK_INT(n, 1);
    if (n == 1) {
        CHECK_INT(v[0].kind, PS_LG_V_UNDER_ADMISSION);
        CHECK_INT(v[0].reset, U0 + 3060);
        CHECK_INT(v[0].admitted, 0);
    }
    free(v);
    ps_lg_limits_free(&l);
}

static void header_rules(void)
{
    ps_lg_config cfg = cfg_with_keys();
    ps_lg_limits l;
    ps_lg_limits_init(&l, 2);
    ps_lg_resp r = resp(429, 60, 0, U0 + 4000);
    r.seen &= ~(unsigned)PS_LG_H_RETRY_AFTER;
    ps_lg_limits_observe(&l, 0, &r);
    ps_lg_resp bare;
    memset(&bare, 0, sizeof bare);
    bare.status = 200;
    ps_lg_limits_observe(&l, 0, &bare);
    ps_lg_resp bad = resp(200, 60, 3, U0 + 4000);
    bad.bad = PS_LG_H_REMAINING;
    ps_lg_limits_observe(&l, 0, &bad);
    ps_lg_violation *v;
    size_t n;
    CHECK_INT(ps_lg_limits_verify(&l, &cfg, &v, &n), 3);
    CHECK_INT(n, 3);
    int seen = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i].kind == PS_LG_V_MISSING_RETRY_AFTER) seen |= 1;
        if (v[i].kind == PS_LG_V_MISSING_HEADERS) seen |= 2;
        if (v[i].kind == PS_LG_V_BAD_HEADERS) seen |= 4;
        CHECK_INT(v[i].count, 1);
    }
    CHECK_INT(seen, 7);
    free(v);
    ps_lg_limits_free(&l);
}

/* Many windows force the table to grow; counts survive it. */
static void many_windows(void)
{
    ps_lg_config cfg = cfg_with_keys();
    ps_lg_limits l;
    ps_lg_limits_init(&l, 2);
    for (int w = 0; w < 1000; w++)
        for (int i = 0; i < 3; i++) {
            /* each key's own minute figure (free 60, pro 300) */
            int64_t lim = (w & 1) ? 300 : 60;
            ps_lg_resp r = resp(200, lim, lim - 1 - i, U0 + 10000 + w);
            ps_lg_limits_observe(&l, (size_t)(w & 1), &r);
        }
    for (int i = 0; i < 61; i++) {
        ps_lg_resp r = resp(200, 60, 5, U0 + 10500);
        ps_lg_limits_observe(&l, 0, &r);
    }
    CHECK_INT(l.count, 1000);
    ps_lg_violation *v;
    size_t n;
    CHECK_INT(ps_lg_limits_verify(&l, &cfg, &v, &n), 1);
    if (n == 1) CHECK_INT(v[0].admitted, 64);
    free(v);
    ps_lg_limits_free(&l);
}

/* A free key that the server treats as pro (Limit 300): the plan, not the
 * header, is the allowance: over_admission against 60, and the header's
 * Limit (not a free figure) is bad_headers naming both numbers. */
static void declared_plan_is_the_allowance(void)
{
    ps_lg_config cfg = cfg_with_keys();
    ps_lg_limits l;
    ps_lg_limits_init(&l, 2);
    for (int i = 0; i < 300; i++) {
        ps_lg_resp r = resp(200, 300, 299 - i, U0 + 5000);
        ps_lg_limits_observe_at(&l, 0, &r, U0 + 4990);
    }
    /* The pro key with pro limits, same counts: fine. */
    for (int i = 0; i < 300; i++) {
        ps_lg_resp r = resp(200, 300, 299 - i, U0 + 5000);
        ps_lg_limits_observe_at(&l, 1, &r, U0 + 4990);
    }
    ps_lg_violation *v;
    size_t n;
    CHECK_INT(ps_lg_limits_verify(&l, &cfg, &v, &n), 2);
    CHECK_INT(n, 2);
    bool over = false, bad = false;
    for (size_t i = 0; i < n; i++) {
        CHECK_INT(v[i].key, 0);
        CHECK(v[i].fails);
        if (v[i].kind == PS_LG_V_OVER_ADMISSION) {
            over = true;
            CHECK_INT(v[i].admitted, 300);
            CHECK_INT(v[i].limit, 60);
            CHECK_INT(v[i].count, 240);
            CHECK_STR(v[i].window, "minute");
            CHECK_INT(v[i].reset, U0 + 5000);
            CHECK(strstr(v[i].message, "admitted 300") != NULL);
            CHECK(strstr(v[i].message, "bound of 60") != NULL);
        } else if (v[i].kind == PS_LG_V_BAD_HEADERS) {
            bad = true;
            CHECK(strstr(v[i].message, "X-RateLimit-Limit: 300") != NULL);
            CHECK(strstr(v[i].message, "60 per minute") != NULL);
            CHECK_INT(v[i].count, 300);
        }
    }
    CHECK(over && bad);
    free(v);
    ps_lg_limits_free(&l);

    /* A Limit that is no figure, Reset far ahead: the day figure (1000)
     * governs, 900 admitted is within it; only the header is wrong. */
    ps_lg_limits_init(&l, 2);
    for (int i = 0; i < 900; i++) {
        ps_lg_resp r = resp(200, 5000, 4999 - i, U0 + 100000);
        ps_lg_limits_observe_at(&l, 0, &r, U0 + 60000);
    }
    CHECK_INT(ps_lg_limits_verify(&l, &cfg, &v, &n), 1);
    CHECK_INT(n, 1);
    if (n == 1) {
        CHECK_INT(v[0].kind, PS_LG_V_BAD_HEADERS);
        CHECK_STR(v[0].window, "day");
    }
    free(v);
    ps_lg_limits_free(&l);

    /* Plain enterprise (no figures): the header's Limit stands. */
    static char k2[] = "enterprise-key-01";
    ps_lg_key ent = {.key = k2, .plan = {PS_PLAN_ENTERPRISE, 0, 0}};
    cfg.keys = &ent;
    cfg.nkeys = 1;
    ps_lg_limits_init(&l, 1);
    for (int i = 0; i < 500; i++) {
        ps_lg_resp r = resp(200, 500, 499 - i, U0 + 5000);
        ps_lg_limits_observe_at(&l, 0, &r, U0 + 4990);
    }
    CHECK_INT(ps_lg_limits_verify(&l, &cfg, &v, &n), 0);
    CHECK_INT(n, 0);
    free(v);
    ps_lg_limits_free(&l);
}

#define NS 1000000000LL
#define T0 (1700000000LL * NS + 200000000LL)

static void observe_n(ps_lg_limits *l, int n, int status, int64_t reset, int64_t from_ns,
                      int64_t step_ns)
{
    for (int i = 0; i < n; i++) {
        ps_lg_resp r = resp(status, 60, status == 429 ? 0 : (n - 1 - i) % 60, reset);
        ps_lg_limits_observe_ns(l, 0, &r, from_ns + i * step_ns);
    }
}

static size_t verify(const ps_lg_limits *l, const char **model)
{
    ps_lg_config cfg = cfg_with_keys();
    ps_lg_violation *v;
    size_t n;
    size_t failing = ps_lg_limits_verify(l, &cfg, &v, &n);
    for (size_t i = 0; i < n; i++)
        fprintf(stderr, "  %s\n", v[i].message);
    free(v);
    ps_lg_key_model *m;
    size_t nm;
    ps_lg_limits_models(l, &cfg, &m, &nm);
    *model = nm ? ps_rlm_label_name(m[0].model) : "none";
    free(m);
    return failing;
}

/* A sliding log: the burst's requests leave 60 s later and 60 more are
 * admitted while Reset (rounded up) still names the same second: 120 under
 * one Reset, yet never more than 60 in any 60 s. Legal; inferred sliding. */
static void sliding_log_is_not_over_admission(void)
{
    int64_t reset = 1700000061;
    ps_lg_limits l;
    ps_lg_limits_init(&l, 2);
    observe_n(&l, 60, 200, reset, T0, 1000000);
    observe_n(&l, 5, 429, reset, T0 + NS, 1000000);
    observe_n(&l, 60, 200, reset, T0 + 60 * NS + 50000000, 1000000);
    const char *model;
    CHECK_INT(verify(&l, &model), 0);
    CHECK_STR(model, "sliding-window");
    ps_lg_limits_free(&l);
    /* the same limiter admitting its second 60 only 30 s later over-admits */
    ps_lg_limits_init(&l, 2);
    observe_n(&l, 60, 200, reset, T0, 1000000);
    observe_n(&l, 5, 429, reset, T0 + NS, 1000000);
    observe_n(&l, 60, 200, reset, T0 + 30 * NS, 1000000);
    CHECK_INT(verify(&l, &model), 1);
    /* Remaining rose under the Reset before it came, no log entry able to
     * leave: what a counter's decay shows (core ps_rlm_classify) */
    CHECK_STR(model, "sliding-counter");
    ps_lg_limits_free(&l);
}

/* A token bucket: Reset moves a second ahead with every request. Legal;
 * inferred token-bucket. Admitting far more than the bucket plus its refill
 * is not. */
static void token_bucket_moving_reset(void)
{
    ps_lg_limits l;
    ps_lg_limits_init(&l, 2);
    for (int i = 0; i < 60; i++) {
        ps_lg_resp r = resp(200, 60, 59 - i, 1700000000 + i + 2);
        ps_lg_limits_observe_ns(&l, 0, &r, T0 + i * 10000000);
    }
    const char *model;
    CHECK_INT(verify(&l, &model), 0);
    CHECK_STR(model, "token-bucket");
    ps_lg_limits_free(&l);
    ps_lg_limits_init(&l, 2);
    observe_n(&l, 100, 200, 1700000061, T0, 1000000);
    observe_n(&l, 100, 200, 1700000062, T0 + NS / 2, 1000000);
    CHECK_INT(verify(&l, &model), 1);
    CHECK_STR(model, "token-bucket");
    ps_lg_limits_free(&l);
}

/* Fixed windows stay exact: one admission over the limit under a steady
 * Reset fails, and merging threads' tables keeps the times. */
static void fixed_window_exact_with_times(void)
{
    ps_lg_limits a, b;
    ps_lg_limits_init(&a, 2);
    ps_lg_limits_init(&b, 2);
    observe_n(&a, 30, 200, 1700000061, T0, 1000000);
    observe_n(&b, 31, 200, 1700000061, T0, 1000000);
    observe_n(&b, 3, 429, 1700000061, T0 + NS, 1000000);
    ps_lg_limits_merge(&a, &b);
    const char *model;
    CHECK_INT(verify(&a, &model), 1);
    /* one window: nothing showed what came back at its Reset */
    CHECK_STR(model, "window");
    ps_lg_limits_free(&a);
    ps_lg_limits_free(&b);
}

/* The limiters of docs/rate-limits.md (and Flask-Limiter's moving window),
 * simulated to answer a client for the model-label cases. */
typedef enum sim_kind { SIM_FIXED, SIM_LOG, SIM_COUNTER, SIM_BUCKET, SIM_FLASK } sim_kind;

static int64_t ceil_s(int64_t ns)
{
    return (ns + NS - 1) / NS;
}

/* Requests every step_ns from T0 for dur_ns against limiter kind (limit 60
 * per 60 s), each answer observed on key 0. With honour, a 429 holds the
 * client back until its Reset (a Retry-After pointing there: not the
 * counter's nor the bucket's, which point earlier). */
static void simulate(ps_lg_limits *l, sim_kind kind, int64_t step_ns, int64_t dur_ns, bool honour)
{
    enum { L = 60 };
    const int64_t W = 60 * NS, T = W / L;
    int64_t log[4 * L], start = 0, tat = 0;
    int nlog = 0, count = 0, prev = 0;
    bool begun = false;
    for (int64_t t = T0; t < T0 + dur_ns; t += step_ns) {
        bool admit = false;
        int64_t remaining = 0, reset = 0;
        switch (kind) {
        case SIM_FIXED: /* a window opens with the first request after one ended */
            if (!begun || t >= start + W) {
                begun = true;
                start = t;
                count = 0;
            }
            admit = count < L;
            count += admit;
            remaining = L - count;
            reset = ceil_s(start + W);
            break;
        case SIM_COUNTER: /* counting windows as in fixed, the previous one decaying */
            if (!begun || t >= start + 2 * W) {
                begun = true;
                start = t;
                prev = count = 0;
            } else if (t >= start + W) {
                start += W;
                prev = count;
                count = 0;
            }
            {
                double est = prev * (1.0 - (double)(t - start) / (double)W) + count;
                admit = est + 1 <= L;
                count += admit;
                remaining = (int64_t)(L - est - admit);
                if (remaining < 0) remaining = 0;
            }
            reset = ceil_s(start + W);
            break;
        case SIM_LOG:
        case SIM_FLASK: {
            int keep = 0;
            for (int i = 0; i < nlog; i++)
                if (log[i] + W > t) log[keep++] = log[i];
            nlog = keep;
            admit = nlog < L;
            if (admit) log[nlog++] = t;
            remaining = L - nlog;
            /* the reference server: when the oldest leaves; Flask-Limiter:
             * the newest's second plus the window plus one */
            reset = kind == SIM_LOG ? ceil_s(log[0] + W) : log[nlog - 1] / NS + W / NS + 1;
            break;
        }
        case SIM_BUCKET: /* GCRA: tat is when the bucket is full again */
            if (tat < t) tat = t;
            admit = tat + T - t <= W;
            if (admit) tat += T;
            remaining = (W - (tat - t)) / T;
            reset = ceil_s(tat);
            break;
        }
        ps_lg_resp r = resp(admit ? 200 : 429, L, admit ? remaining : 0, reset);
        ps_lg_limits_observe_ns(l, 0, &r, t);
        if (!admit && honour && reset * NS > t + step_ns) t = reset * NS - step_ns;
    }
}

static const char *label_of(sim_kind kind, int64_t step_ns, bool honour)
{
    ps_lg_limits l;
    ps_lg_limits_init(&l, 2);
    simulate(&l, kind, step_ns, 130 * NS, honour);
    const char *model;
    CHECK_INT(verify(&l, &model), 0); /* every one legal: the verdict is unchanged */
    ps_lg_limits_free(&l);
    return model;
}

/* The label names an algorithm only when the responses rule the others
 * out. A fixed window read slowly (20/s: its 60 admissions take 3 s) gives
 * the whole limit back at Reset while a sliding log would still count the
 * last 2 s of them: fixed-window. Read in a 60 ms burst, a sliding log
 * whose Reset names the oldest request gives all back at Reset too: not
 * told apart. A sliding log or counter lets room back under a Reset that
 * refused, or only part of it after Reset. */
static void labels_reference_modes(void)
{
    CHECK_STR(label_of(SIM_FIXED, NS / 20, true), "fixed-window");
    CHECK_STR(label_of(SIM_FIXED, NS / 20, false), "fixed-window");
    CHECK_STR(label_of(SIM_FIXED, NS / 1000, true), "window");
    /* part back at Reset, under a Reset sooner than a counter's next
     * window: a log */
    CHECK_STR(label_of(SIM_LOG, NS / 20, false), "sliding-log");
    CHECK_STR(label_of(SIM_LOG, NS / 20, true), "sliding-log");
    CHECK_STR(label_of(SIM_COUNTER, NS / 20, false), "sliding-window");
    CHECK_STR(label_of(SIM_BUCKET, NS / 20, false), "token-bucket");
    CHECK_STR(label_of(SIM_BUCKET, NS / 20, true), "token-bucket");
    /* a bucket read slower than it refills (one request per 2 s) always
     * says Remaining 59 and a Reset a second or two off: Remaining never
     * fell twice under one Reset, nothing to tell a limiter by */
    CHECK_STR(label_of(SIM_BUCKET, 2 * NS, false), "unknown");
}

/* Flask-Limiter's moving window: a sliding log whose Reset is the newest
 * counted request's second plus the window plus one. When a window's
 * admissions straddle a second its Reset moves a second ahead like a
 * bucket's, but it never admits more than the limit in under a window and
 * its Reset is a window off even when it is nearly empty: moving-window,
 * never token-bucket. Admitting its 60 within 200 ms of one second (300/s)
 * and waiting for Reset, it gives all back then, as a fixed window would:
 * window, never fixed-window. */
static void labels_flask_moving_window(void)
{
    CHECK_STR(label_of(SIM_FLASK, NS / 20, true), "moving-window");
    CHECK_STR(label_of(SIM_FLASK, NS / 20, false), "moving-window");
    CHECK_STR(label_of(SIM_FLASK, NS / 300, true), "window");
}

/* A fixed window of a service counting only lists (--count-ops list):
 * lists fall 59..0 and then get 429; creates, interleaved and after the
 * refusals, tell the state as it stands (Remaining not falling). extra
 * lists over the 60 (an off-by-one says Remaining 0 again). */
static void window_counting_lists(ps_lg_limits *l, int extra, int create_status)
{
    int64_t reset = 1700000061, t = T0;
    for (int i = 0; i < 60 + extra; i++) {
        int64_t rem = i < 60 ? 59 - i : 0;
        ps_lg_resp r = resp(200, 60, rem, reset);
        ps_lg_limits_observe_op(l, 0, PS_LG_OP_LIST, &r, t += 1000000, false);
        ps_lg_resp c = resp(create_status, 60, rem, reset);
        ps_lg_limits_observe_op(l, 0, PS_LG_OP_CREATE, &c, t += 1000000, false);
    }
    for (int i = 0; i < 20; i++) {
        ps_lg_resp r = resp(429, 60, 0, reset);
        ps_lg_limits_observe_op(l, 0, PS_LG_OP_LIST, &r, t += 1000000, false);
        ps_lg_resp c = resp(create_status, 60, 0, reset);
        ps_lg_limits_observe_op(l, 0, PS_LG_OP_CREATE, &c, t += 1000000, false);
    }
}

static size_t verify_counting(const ps_lg_limits *l, ps_lg_limited_ops ops,
                              ps_lg_limited_errors errors, ps_lg_counting *out)
{
    ps_lg_config cfg = cfg_with_keys();
    cfg.limited_ops = ops;
    cfg.limited_errors = errors;
    ps_lg_violation *v;
    size_t n;
    size_t failing = ps_lg_limits_verify(l, &cfg, &v, &n);
    for (size_t i = 0; i < n; i++)
        fprintf(stderr, "  %s\n", v[i].message);
    free(v);
    ps_lg_counting *c;
    size_t nc;
    ps_lg_limits_counting(l, &cfg, &c, &nc);
    CHECK_INT(nc, 1);
    if (nc) *out = c[0];
    free(c);
    return failing;
}

/* Which operations count is inferred: 140 creates admitted beside 60 lists
 * is legal when creates do not count, and the report says so; one list too
 * many still fails; --limited-ops all (wrongly) would fail the legal one. */
static void counting_rule_inferred(void)
{
    ps_lg_limits l;
    ps_lg_counting c;
    ps_lg_limits_init(&l, 2);
    window_counting_lists(&l, 0, 201);
    CHECK_INT(verify_counting(&l, PS_LG_LIMITED_AUTO, PS_LG_ERRORS_AUTO, &c), 0);
    CHECK_STR(ps_rlm_counted_name(c.counting.ops[PS_RLM_OP_LIST]), "counted");
    CHECK_STR(ps_rlm_counted_name(c.counting.ops[PS_RLM_OP_CREATE]), "not_counted");
    CHECK(c.counting.inferred);
    CHECK(strstr(c.counting.reason, "create: not counted") != NULL);
    CHECK_INT(verify_counting(&l, PS_LG_LIMITED_ALL, PS_LG_ERRORS_AUTO, &c), 1);
    CHECK_INT(verify_counting(&l, PS_LG_LIMITED_LIST, PS_LG_ERRORS_YES, &c), 0);
    CHECK(!c.counting.inferred);
    ps_lg_limits_free(&l);
    ps_lg_limits_init(&l, 2);
    window_counting_lists(&l, 1, 201);
    CHECK_INT(verify_counting(&l, PS_LG_LIMITED_AUTO, PS_LG_ERRORS_AUTO, &c), 1);
    CHECK_STR(ps_rlm_counted_name(c.counting.ops[PS_RLM_OP_CREATE]), "not_counted");
    ps_lg_limits_free(&l);
    /* creates answered 400 whose Remaining does not fall: with every
     * operation counted (creates were refused too), the 4xx are left out */
    ps_lg_limits_init(&l, 2);
    window_counting_lists(&l, 0, 400);
    ps_lg_resp refused = resp(429, 60, 0, 1700000061);
    ps_lg_limits_observe_op(&l, 0, PS_LG_OP_CREATE, &refused, T0 + NS, false);
    CHECK_INT(verify_counting(&l, PS_LG_LIMITED_AUTO, PS_LG_ERRORS_AUTO, &c), 0);
    CHECK_STR(ps_rlm_counted_name(c.counting.ops[PS_RLM_OP_CREATE]), "counted");
    CHECK_STR(ps_rlm_counted_name(c.counting.errors), "not_counted");
    CHECK_INT(verify_counting(&l, PS_LG_LIMITED_AUTO, PS_LG_ERRORS_YES, &c), 1);
    ps_lg_limits_free(&l);
    /* a service counting nothing (Remaining held at the limit) is not held
     * to a count; one whose Remaining fell, unsteadily, is */
    ps_lg_limits_init(&l, 2);
    for (int i = 0; i < 100; i++) {
        ps_lg_resp r = resp(200, 60, 60, 1700000061);
        ps_lg_limits_observe_op(&l, 0, PS_LG_OP_LIST, &r, T0 + i * 1000000, false);
    }
    CHECK_INT(verify_counting(&l, PS_LG_LIMITED_AUTO, PS_LG_ERRORS_AUTO, &c), 0);
    CHECK_STR(ps_rlm_counted_name(c.counting.ops[PS_RLM_OP_LIST]), "not_counted");
    CHECK_INT(verify_counting(&l, PS_LG_LIMITED_LIST, PS_LG_ERRORS_AUTO, &c), 1);
    ps_lg_limits_free(&l);
}

/* One fixed window of creates (limit 60, the free plan's): 2xx answers
 * carrying Remaining 59..0 but those in taken (counted 400s took them) and
 * once more 0 when over, 400 answers carrying told, each observed just before
 * the first 2xx with the same or a lower Remaining (as an uncounted answer
 * telling the state, raced by the counted request it reports, is read); then
 * a 429. told and taken end with -1. */
static void refused_window(ps_lg_limits *l, const int *told, const int *taken, bool over)
{
    int64_t t = T0;
    const int *e = told;
    for (int r = 59; r >= (over ? -1 : 0); r--) {
        int value = r < 0 ? 0 : r;
        bool skip = false;
        for (const int *k = taken; *k >= 0; k++)
            skip |= *k == r;
        for (; *e >= 0 && *e >= value; e++) {
            ps_lg_resp bad = resp(400, 60, *e, 1700000061);
            ps_lg_limits_observe_op(l, 0, PS_LG_OP_CREATE, &bad, t += 1000000, false);
        }
        if (skip) continue;
        ps_lg_resp ok = resp(201, 60, value, 1700000061);
        ps_lg_limits_observe_op(l, 0, PS_LG_OP_CREATE, &ok, t += 1000000, false);
    }
    ps_lg_resp refused = resp(429, 60, 0, 1700000061);
    ps_lg_limits_observe_op(l, 0, PS_LG_OP_CREATE, &refused, t + 1000000, false);
}

/* Under concurrency an uncounted 4xx answer can show a "fall" of Remaining
 * that a counted request answered later made: the refused window's
 * arithmetic tells it apart (CI: a legal --count-errors no service failed
 * over-admission with 15 'admitted' in a window of 10). */
static void errors_told_by_refused_windows(void)
{
    ps_lg_limits l;
    ps_lg_counting c;
    static const int three[] = {50, 30, 10, -1}, none[] = {-1};
    /* not counted: sixty 2xx take 59..0, three 400s tell 50, 30, 10 first */
    ps_lg_limits_init(&l, 2);
    refused_window(&l, three, none, false);
    CHECK_INT(verify_counting(&l, PS_LG_LIMITED_AUTO, PS_LG_ERRORS_AUTO, &c), 0);
    CHECK_STR(ps_rlm_counted_name(c.counting.errors), "not_counted");
    CHECK(strstr(c.counting.reason, "refused once the 2xx answers reached the limit") != NULL);
    CHECK_INT(verify_counting(&l, PS_LG_LIMITED_AUTO, PS_LG_ERRORS_YES, &c), 1);
    ps_lg_limits_free(&l);
    /* counted: the three 400s take 50, 30 and 10, 57 2xx the rest */
    ps_lg_limits_init(&l, 2);
    refused_window(&l, three, three, false);
    CHECK_INT(verify_counting(&l, PS_LG_LIMITED_AUTO, PS_LG_ERRORS_AUTO, &c), 0);
    CHECK_STR(ps_rlm_counted_name(c.counting.errors), "counted");
    ps_lg_limits_free(&l);
    /* counted and one over (off by one): 58 2xx and three 400s */
    ps_lg_limits_init(&l, 2);
    refused_window(&l, three, three, true);
    CHECK_INT(verify_counting(&l, PS_LG_LIMITED_AUTO, PS_LG_ERRORS_AUTO, &c), 1);
    CHECK_STR(ps_rlm_counted_name(c.counting.errors), "counted");
    ps_lg_limits_free(&l);
}

/* Issue 18: 429s per plan and key group, window full (the window admitted
 * its limit, or its Remaining reached 0) or early (fewer admitted and
 * Remaining still said there was room), and the windows filled. */
static void refusals_tallied_by_plan_and_group(void)
{
    static ps_lg_key keys[3];
    static char k0[] = "bg-key-0001", k1[] = "bg-key-0002", k2[] = "probe-key-01";
    static char g0[] = "default", g1[] = "bg", g2[] = "probe";
    static char *names[] = {g0, g1, g2};
    keys[0] = (ps_lg_key){.key = k0, .plan = {PS_PLAN_FREE, 60, 1000}, .group = 1};
    keys[1] = (ps_lg_key){.key = k1, .plan = {PS_PLAN_FREE, 60, 1000}, .group = 1};
    keys[2] = (ps_lg_key){.key = k2, .plan = {PS_PLAN_PRO, 300, 10000}, .group = 2};
    ps_lg_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.keys = keys;
    cfg.nkeys = 3;
    cfg.groups = names;
    cfg.ngroups = 3;
    ps_lg_limits l;
    ps_lg_limits_init(&l, 3);
    /* key 0: full (60 admitted) then 3 refusals; a later window refused 2
     * with Remaining at 5 after 55 admissions: early */
    ps_lg_window w = {.key = 0,
                      .limit = 60,
                      .reset = U0 + 60,
                      .admitted = 60,
                      .limited = 3,
                      .min_remaining = 0,
                      .max_remaining = 59};
    ps_lg_limits_add_window(&l, &w);
    w = (ps_lg_window){.key = 0,
                       .limit = 60,
                       .reset = U0 + 120,
                       .admitted = 55,
                       .limited = 2,
                       .min_remaining = 5,
                       .max_remaining = 59};
    ps_lg_limits_add_window(&l, &w);
    /* key 1: 10 admitted (the run came in late) until Remaining said 0: full */
    w = (ps_lg_window){.key = 1,
                       .limit = 60,
                       .reset = U0 + 60,
                       .admitted = 10,
                       .limited = 4,
                       .min_remaining = 0,
                       .max_remaining = 9};
    ps_lg_limits_add_window(&l, &w);
    /* key 2: a window with room that refused nothing */
    w = (ps_lg_window){.key = 2,
                       .limit = 300,
                       .reset = U0 + 60,
                       .admitted = 20,
                       .min_remaining = 280,
                       .max_remaining = 299};
    ps_lg_limits_add_window(&l, &w);
    ps_lg_window_tally by_plan[PS_LG_PLANS], by_group[3];
    ps_lg_limits_tally(&l, &cfg, by_plan, by_group);
    CHECK_INT(by_plan[PS_PLAN_FREE].refused_correct, 7);
    CHECK_INT(by_plan[PS_PLAN_FREE].refused_early, 2);
    CHECK_INT(by_plan[PS_PLAN_FREE].filled, 3);
    CHECK_INT(by_plan[PS_PLAN_PRO].refused_correct + by_plan[PS_PLAN_PRO].refused_early, 0);
    CHECK_INT(by_plan[PS_PLAN_PRO].filled, 0);
    CHECK_INT(by_group[0].filled + by_group[0].refused_correct + by_group[0].refused_early, 0);
    CHECK_INT(by_group[1].refused_correct, 7);
    CHECK_INT(by_group[1].refused_early, 2);
    CHECK_INT(by_group[1].filled, 3);
    CHECK_INT(by_group[2].filled, 0);
    CHECK_INT((int64_t)ps_lg_limits_windows_filled(&l), 3);
    ps_lg_limits_free(&l);
}

/* 429s answering --warmup requests still place and fill their window, but
 * the refusal split leaves them out, as the run's 429 count does (a run at
 * 120% of quota with --warmup 2s split 2,560 of 2,160 refusals before). */
static void warmup_refusals_left_out_of_the_split(void)
{
    static ps_lg_key keys[1];
    static char k0[] = "warm-key-0001", g0[] = "default";
    static char *names[] = {g0};
    keys[0] = (ps_lg_key){.key = k0, .plan = {PS_PLAN_FREE, 60, 1000}, .group = 0};
    ps_lg_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.keys = keys;
    cfg.nkeys = 1;
    cfg.groups = names;
    cfg.ngroups = 1;
    ps_lg_limits l;
    ps_lg_limits_init(&l, 1);
    int64_t t = (U0 + 1) * 1000000000LL;
    for (int i = 0; i < 60; i++) {
        ps_lg_resp r = resp(200, 60, 59 - i, U0 + 60);
        ps_lg_limits_observe_op(&l, 0, PS_LG_OP_LIST, &r, t += 1000000, false);
    }
    ps_lg_resp refused = resp(429, 60, 0, U0 + 60);
    for (int i = 0; i < 5; i++) { /* 3 during the warm-up, 2 measured */
        ps_lg_limits_observe_op(&l, 0, PS_LG_OP_LIST, &refused, t += 1000000, i < 3);
    }
    ps_lg_window_tally by_plan[PS_LG_PLANS], by_group[1];
    ps_lg_limits_tally(&l, &cfg, by_plan, by_group);
    CHECK_INT(by_plan[PS_PLAN_FREE].refused_correct, 2);
    CHECK_INT(by_plan[PS_PLAN_FREE].refused_early, 0);
    CHECK_INT(by_group[0].refused_correct, 2);
    CHECK_INT(by_plan[PS_PLAN_FREE].filled, 1);
    ps_lg_limits_free(&l);
}

int main(void)
{
    RUN(declared_plan_is_the_allowance);
    RUN(exact_limit_passes);
    RUN(over_admission_named);
    RUN(under_admission_is_a_warning);
    RUN(header_rules);
    RUN(many_windows);
    RUN(sliding_log_is_not_over_admission);
    RUN(token_bucket_moving_reset);
    RUN(fixed_window_exact_with_times);
    RUN(labels_reference_modes);
    RUN(labels_flask_moving_window);
    RUN(counting_rule_inferred);
    RUN(errors_told_by_refused_windows);
    RUN(refusals_tallied_by_plan_and_group);
    RUN(warmup_refusals_left_out_of_the_split);
    return TEST_EXIT();
}
