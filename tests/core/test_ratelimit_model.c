/* test_ratelimit_model.c - the shared rate-limit model: names, plan
 * windows, Reset forms, bounds, every counting rule of ps_rlm_decide, and
 * the same synthetic sequence fed through the runner's judge and the load
 * generator's collector giving the same classification. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/ratelimit_model.h"
#include "harness.h"
#include "loadgen/limits.h"
#include "runner/checks.h"
#include "runner/conform.h"
#include "runner/run.h"
#include "runner/suites/ratelimit_judge.h"
#include "runner/suites/suites.h"

#define T0 1800000000LL
#define MS 1000000LL
#define NS 1000000000LL

static void names_and_windows(void)
{
    for (int a = 0; a < PS_RLM_ALGOS; a++) {
        ps_rlm_algo back;
        ps_error err;
        CHECK_INT(ps_rlm_algo_parse(ps_rlm_algo_name((ps_rlm_algo)a), &back, &err), 0);
        CHECK_INT(back, a);
    }
    ps_rlm_algo x;
    ps_error err;
    CHECK_INT(ps_rlm_algo_parse("leaky", &x, &err), -1);
    CHECK(strstr(err.message, "token-bucket") != NULL);
    CHECK_STR(ps_rlm_label_name(ps_rlm_label_of(PS_RLM_TOKEN_BUCKET)), "token-bucket");
    CHECK_STR(ps_rlm_label_name(ps_rlm_label_of(PS_RLM_FIXED)), "fixed-window");
    ps_plan free_plan = {PS_PLAN_FREE, 60, 1000};
    CHECK_INT(ps_rlm_window_of_limit(&free_plan, 60), PS_RLM_WINDOW_MINUTE);
    CHECK_INT(ps_rlm_window_of_limit(&free_plan, 1000), PS_RLM_WINDOW_DAY);
    CHECK_INT(ps_rlm_window_of_limit(&free_plan, 300), PS_RLM_WINDOW_UNKNOWN);
    CHECK_INT(ps_rlm_window_governing(&free_plan, 300, 30), PS_RLM_WINDOW_MINUTE);
    CHECK_INT(ps_rlm_window_governing(&free_plan, 300, 4000), PS_RLM_WINDOW_DAY);
    CHECK_INT(ps_rlm_window_seconds(PS_RLM_WINDOW_DAY), 86400);
    CHECK_INT(ps_rlm_reset_form_of(37), PS_RLM_RESET_SECONDS_LEFT);
    CHECK_INT(ps_rlm_reset_form_of(T0), PS_RLM_RESET_UNIX);
    CHECK_INT(ps_rlm_reset_form_of(T0 * 1000), PS_RLM_RESET_MILLIS);
    CHECK_INT(ps_rlm_reset_unix(37, T0), T0 + 37);
    CHECK_INT(ps_rlm_reset_unix(T0 * 1000 + 999, 0), T0);
}

static void bounds(void)
{
    /* a window or sliding bound allows the limit, a bucket what refills too */
    CHECK_INT(ps_rlm_allowed(PS_RLM_BOUND_WINDOW, 60, 60 * NS, 30 * NS), 60);
    CHECK_INT(ps_rlm_allowed(PS_RLM_BOUND_SLIDING, 60, 60 * NS, 30 * NS), 60);
    CHECK_INT(ps_rlm_allowed(PS_RLM_BOUND_TOKEN, 60, 60 * NS, 30 * NS - PS_RLM_JITTER_NS), 90);
    CHECK_INT(ps_rlm_longest_span(60 * NS), 54 * NS);
    CHECK(ps_rlm_window_reached(10, 1, 60));
    CHECK(ps_rlm_window_reached(60, 0, 60));
    CHECK(!ps_rlm_window_reached(59, 0, 60));
}

static ps_rlm_counting decide(const ps_rlm_evidence *e)
{
    ps_rlm_counting c;
    ps_rlm_decide(e, &c);
    return c;
}

static void counting_rules(void)
{
    ps_rlm_evidence e;
    ps_rlm_counting c;
    /* refused: counted; never admitted: not seen */
    memset(&e, 0, sizeof e);
    e.by[PS_RLM_OP_LIST][PS_RLM_2XX] = (ps_rlm_tally){10, 0, 10};
    e.refused[PS_RLM_OP_LIST] = 3;
    c = decide(&e);
    CHECK_INT(c.ops[PS_RLM_OP_LIST], PS_RLM_COUNTED);
    CHECK_INT(c.ops[PS_RLM_OP_CREATE], PS_RLM_NOT_SEEN);
    CHECK_INT(c.mask, PS_RLM_KIND_BIT(PS_RLM_OP_LIST, PS_RLM_2XX));
    /* concurrent: most must fall; ordered: one fall is the request's own */
    memset(&e, 0, sizeof e);
    e.by[PS_RLM_OP_CREATE][PS_RLM_2XX] = (ps_rlm_tally){10, 3, 7};
    CHECK_INT(decide(&e).ops[PS_RLM_OP_CREATE], PS_RLM_NOT_COUNTED);
    e.ordered = true;
    CHECK_INT(decide(&e).ops[PS_RLM_OP_CREATE], PS_RLM_COUNTED);
    /* held on one only (ordered): not told; a refilling bucket: not told */
    e.by[PS_RLM_OP_CREATE][PS_RLM_2XX] = (ps_rlm_tally){1, 0, 1};
    CHECK_INT(decide(&e).ops[PS_RLM_OP_CREATE], PS_RLM_NOT_SEEN);
    e.by[PS_RLM_OP_CREATE][PS_RLM_2XX] = (ps_rlm_tally){5, 0, 5};
    CHECK_INT(decide(&e).ops[PS_RLM_OP_CREATE], PS_RLM_NOT_COUNTED);
    e.refill = true;
    CHECK_INT(decide(&e).ops[PS_RLM_OP_CREATE], PS_RLM_NOT_SEEN);
    /* a burst's consecutive Remaining values */
    memset(&e, 0, sizeof e);
    e.by[PS_RLM_OP_LIST][PS_RLM_2XX] = (ps_rlm_tally){5, 0, 5};
    e.bursts_counted[PS_RLM_OP_LIST] = 1;
    CHECK_INT(decide(&e).ops[PS_RLM_OP_LIST], PS_RLM_COUNTED);
    /* concurrent, nothing shown counted, Remaining below the limit: all */
    memset(&e, 0, sizeof e);
    e.by[PS_RLM_OP_LIST][PS_RLM_2XX] = (ps_rlm_tally){10, 4, 6};
    e.below_limit = true;
    CHECK_INT(decide(&e).ops[PS_RLM_OP_LIST], PS_RLM_COUNTED);
    e.ordered = true; /* ordered answers tell by their own falls */
    e.by[PS_RLM_OP_LIST][PS_RLM_2XX] = (ps_rlm_tally){10, 0, 10};
    CHECK_INT(decide(&e).ops[PS_RLM_OP_LIST], PS_RLM_NOT_COUNTED);
    /* the user's rules win */
    e.ops_rule = PS_RLM_OPS_CREATE;
    e.errors_rule = PS_RLM_ERRORS_YES;
    c = decide(&e);
    CHECK_INT(c.ops[PS_RLM_OP_LIST], PS_RLM_NOT_COUNTED);
    CHECK_INT(c.ops[PS_RLM_OP_CREATE], PS_RLM_COUNTED);
    CHECK(!c.inferred);
    CHECK_INT(c.mask, PS_RLM_KIND_BIT(PS_RLM_OP_CREATE, PS_RLM_2XX) |
                          PS_RLM_KIND_BIT(PS_RLM_OP_CREATE, PS_RLM_4XX));
}

static void errors_rules(void)
{
    ps_rlm_evidence e;
    memset(&e, 0, sizeof e);
    e.refused[PS_RLM_OP_CREATE] = 1;
    e.by[PS_RLM_OP_CREATE][PS_RLM_2XX] = (ps_rlm_tally){60, 60, 0};
    e.by[PS_RLM_OP_CREATE][PS_RLM_4XX] = (ps_rlm_tally){3, 3, 0};
    /* concurrent falls alone never show 4xx answers counted */
    CHECK_INT(decide(&e).errors, PS_RLM_NOT_COUNTED);
    e.ordered = true;
    CHECK_INT(decide(&e).errors, PS_RLM_COUNTED);
    e.ordered = false;
    /* a window refused with 57 2xx, 3 4xx making up the 60: counted */
    ps_rlm_window_tally w = {.limit = 60, .refused = 1};
    w.admitted[PS_RLM_OP_CREATE][PS_RLM_2XX] = 57;
    w.admitted[PS_RLM_OP_CREATE][PS_RLM_4XX] = 3;
    e.windows = &w;
    e.nwindows = 1;
    ps_rlm_counting c = decide(&e);
    CHECK_INT(c.errors, PS_RLM_COUNTED);
    CHECK(c.mask & PS_RLM_KIND_BIT(PS_RLM_OP_CREATE, PS_RLM_4XX));
    /* refused once the 2xx answers reached 60: not counted */
    w.admitted[PS_RLM_OP_CREATE][PS_RLM_2XX] = 60;
    c = decide(&e);
    CHECK_INT(c.errors, PS_RLM_NOT_COUNTED);
    CHECK(!(c.mask & PS_RLM_KIND_BIT(PS_RLM_OP_CREATE, PS_RLM_4XX)));
    /* one at a time, falls are the answers' own: they decide (a sliding
     * limiter's Reset-keyed windows refuse short of the limit whatever
     * counts), as the runner's judge reads them */
    e.ordered = true;
    CHECK_INT(decide(&e).errors, PS_RLM_COUNTED);
    e.by[PS_RLM_OP_CREATE][PS_RLM_4XX] = (ps_rlm_tally){3, 0, 3};
    CHECK_INT(decide(&e).errors, PS_RLM_NOT_COUNTED);
    e.by[PS_RLM_OP_CREATE][PS_RLM_4XX] = (ps_rlm_tally){3, 3, 0};
    e.ordered = false;
    /* unrefused, the 4xx answers past the limit: not counted */
    w.refused = 0;
    CHECK_INT(decide(&e).errors, PS_RLM_NOT_COUNTED);
    /* no 4xx on a counted operation: not seen */
    memset(&e.by[PS_RLM_OP_CREATE][PS_RLM_4XX], 0, sizeof(ps_rlm_tally));
    CHECK_INT(decide(&e).errors, PS_RLM_NOT_SEEN);
}

/* ---- one sequence, two collectors ------------------------------------------ */

/* One answer of the sequence: its operation, status and Remaining, under
 * Limit 60 and Reset T0 + 60, 10 ms apart from T0. */
typedef struct answer {
    bool list;
    int status;
    int64_t remaining;
} answer;

static void runner_observe(ps_conform *c, const answer *a, int64_t i)
{
    ps_exchange ex;
    memset(&ex, 0, sizeof ex);
    ex.method = strdup(a->list ? "GET" : "POST");
    ex.url = strdup("http://127.0.0.1:1/v1/categories");
    ex.curl = strdup("curl");
    ex.responded = true;
    ex.status = a->status;
    ex.body_cap = 4096;
    ex.sent_wall_ns = T0 * NS + i * 10 * MS;
    ex.done_wall_ns = ex.sent_wall_ns + MS;
    char v[32];
    ps_headers_add(&ex.resp_headers, "Content-Type", 12, "application/json", 16);
    ps_headers_add(&ex.resp_headers, "X-RateLimit-Limit", 17, "60", 2);
    snprintf(v, sizeof v, "%lld", (long long)a->remaining);
    ps_headers_add(&ex.resp_headers, "X-RateLimit-Remaining", 21, v, strlen(v));
    snprintf(v, sizeof v, "%lld", (long long)(T0 + 60));
    ps_headers_add(&ex.resp_headers, "X-RateLimit-Reset", 17, v, strlen(v));
    ps_buf_append(&ex.body, "[]", 2);
    ex.body_total = 2;
    ps_conform_observe(c, &ex, PS_KEY_MAIN);
    ps_exchange_free(&ex);
}

static void runner_view(const answer *seq, size_t n, ps_rl_key_view *out)
{
    ps_conform_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.base_url = "http://127.0.0.1:1/v1";
    cfg.api_key = "unit-main-key";
    cfg.plan = (ps_plan){PS_PLAN_FREE, 60, 1000};
    cfg.limit_plan = cfg.plan;
    cfg.timeout_ns = cfg.max_wait_ns = NS;
    cfg.max_body = 4096;
    ps_checks *checks = ps_checks_create();
    ps_error err;
    ps_conform *c =
        ps_conform_create(&cfg, checks, ps_suite_observers, ps_suite_observer_count, &err);
    CHECK(c != NULL);
    if (!c) return;
    for (size_t i = 0; i < n; i++)
        runner_observe(c, &seq[i], (int64_t)i);
    CHECK(ps_ratelimit_judge_view(c, PS_KEY_MAIN, out));
    /* the report is the judge's last call: it frees what the judge kept */
    ps_buf doc = PS_BUF_INIT;
    ps_conform_report_doc(c, 0, &doc);
    ps_buf_free(&doc);
    ps_conform_destroy(c);
    ps_checks_destroy(checks);
}

static void loadgen_view(const answer *seq, size_t n, ps_rlm_counting *out)
{
    static char k0[] = "unit-main-key";
    ps_lg_key keys[1] = {{.key = k0, .plan = {PS_PLAN_FREE, 60, 1000}}};
    ps_lg_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.keys = keys;
    cfg.nkeys = 1;
    cfg.threads = cfg.connections = 1; /* one answer at a time, as the runner's */
    ps_lg_limits l;
    ps_lg_limits_init(&l, 1);
    for (size_t i = 0; i < n; i++) {
        ps_lg_resp r;
        memset(&r, 0, sizeof r);
        r.status = seq[i].status;
        r.seen = PS_LG_H_LIMIT | PS_LG_H_REMAINING | PS_LG_H_RESET;
        r.limit = 60;
        r.remaining = seq[i].remaining;
        r.reset = T0 + 60;
        ps_lg_limits_observe_op(&l, 0, seq[i].list ? PS_LG_OP_LIST : PS_LG_OP_CREATE, &r,
                                T0 * NS + (int64_t)i * 10 * MS + MS, false);
    }
    ps_lg_counting *c;
    size_t nc;
    ps_lg_limits_counting(&l, &cfg, &c, &nc);
    CHECK_INT(nc, 1);
    if (nc) *out = c[0].counting;
    free(c);
    ps_lg_limits_free(&l);
}

/* Lists, creates and 400 creates in one window; counted says which of them
 * make Remaining fall. */
static size_t sequence(answer *seq, bool lists, bool creates, bool errors)
{
    size_t n = 0;
    int64_t rem = 60;
    for (int i = 0; i < 12; i++) {
        if (lists) rem--;
        seq[n++] = (answer){true, 200, rem};
        if (creates) rem--;
        seq[n++] = (answer){false, 201, rem};
        if (errors && creates) rem--;
        seq[n++] = (answer){false, 400, rem};
    }
    return n;
}

static void same_evidence_same_classification(void)
{
    static const bool cases[][3] = {{true, false, false}, {true, true, false},
                                    {true, true, true},   {false, true, true},
                                    {false, true, false}, {false, false, false}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        answer seq[64];
        size_t n = sequence(seq, cases[k][0], cases[k][1], cases[k][2]);
        ps_rl_key_view rv;
        ps_rlm_counting lc;
        runner_view(seq, n, &rv);
        loadgen_view(seq, n, &lc);
        fprintf(stderr, "  case %zu: runner %s/%s/%s, loadgen %s/%s/%s (%s)\n", k,
                ps_rlm_counted_name(rv.list_counted), ps_rlm_counted_name(rv.create_counted),
                ps_rlm_counted_name(rv.errors_counted), ps_rlm_counted_name(lc.ops[0]),
                ps_rlm_counted_name(lc.ops[1]), ps_rlm_counted_name(lc.errors), lc.reason);
        CHECK_INT(rv.list_counted, lc.ops[PS_RLM_OP_LIST]);
        CHECK_INT(rv.create_counted, lc.ops[PS_RLM_OP_CREATE]);
        CHECK_INT(rv.errors_counted, lc.errors);
        CHECK_INT(lc.ops[PS_RLM_OP_LIST], cases[k][0] ? PS_RLM_COUNTED : PS_RLM_NOT_COUNTED);
        CHECK_INT(lc.ops[PS_RLM_OP_CREATE], cases[k][1] ? PS_RLM_COUNTED : PS_RLM_NOT_COUNTED);
        if (cases[k][1]) CHECK_INT(lc.errors, cases[k][2] ? PS_RLM_COUNTED : PS_RLM_NOT_COUNTED);
    }
}

/* ---- every algorithm, every counting rule, two collectors ---------------- */

/* The reference server's four algorithms (docs/rate-limits.md), limit 60
 * per 60 s, answering one request at t (ns). A request of a kind the
 * service does not count is never refused and tells the state as it stands. */
typedef struct sim {
    ps_rlm_algo algo;
    int64_t start, tat, log[64];
    int count, prev, nlog;
    bool begun;
} sim;

enum { SIM_L = 60 };
#define SIM_W (60 * NS)

static int64_t ceil_s(int64_t ns)
{
    return (ns + NS - 1) / NS;
}

/* Answers a request at t; counted: the service counts its kind. Fills the
 * answer's Remaining and Reset; false when it is refused (429). */
static bool sim_answer(sim *s, int64_t t, bool counted, int64_t *remaining, int64_t *reset)
{
    const int64_t T = SIM_W / SIM_L;
    bool admit = true;
    switch (s->algo) {
    case PS_RLM_FIXED:
        if (!s->begun || t >= s->start + SIM_W) {
            s->begun = true;
            s->start = t;
            s->count = 0;
        }
        if (counted) {
            admit = s->count < SIM_L;
            s->count += admit;
        }
        *remaining = SIM_L - s->count;
        *reset = ceil_s(s->start + SIM_W);
        break;
    case PS_RLM_SLIDING_COUNTER: {
        if (!s->begun || t >= s->start + 2 * SIM_W) {
            s->begun = true;
            s->start = t;
            s->prev = s->count = 0;
        } else if (t >= s->start + SIM_W) {
            s->start += SIM_W;
            s->prev = s->count;
            s->count = 0;
        }
        double est = s->prev * (1.0 - (double)(t - s->start) / (double)SIM_W) + s->count;
        if (counted) {
            admit = est + 1 <= SIM_L;
            s->count += admit;
        }
        *remaining = (int64_t)(SIM_L - est - (counted && admit));
        if (*remaining < 0) *remaining = 0;
        *reset = ceil_s(s->start + SIM_W);
        break;
    }
    case PS_RLM_SLIDING_LOG: {
        int keep = 0;
        for (int i = 0; i < s->nlog; i++)
            if (s->log[i] + SIM_W > t) s->log[keep++] = s->log[i];
        s->nlog = keep;
        if (counted) {
            admit = s->nlog < SIM_L;
            if (admit) s->log[s->nlog++] = t;
        }
        *remaining = SIM_L - s->nlog;
        *reset = s->nlog ? ceil_s(s->log[0] + SIM_W) : ceil_s(t);
        break;
    }
    case PS_RLM_TOKEN_BUCKET:
    case PS_RLM_ALGOS:
        if (s->tat < t) s->tat = t;
        if (counted) {
            admit = s->tat + T - t <= SIM_W;
            if (admit) s->tat += T;
        }
        *remaining = (SIM_W - (s->tat - t)) / T;
        *reset = ceil_s(s->tat);
        break;
    }
    if (!admit) *remaining = 0;
    return admit;
}

/* One timed answer of a run: the runner's and the load generator's. */
typedef struct timed_answer {
    int64_t t;
    bool list;
    int status;
    int64_t remaining, reset;
} timed_answer;

/* A client's run against algo: lists, creates and invalid creates in turn,
 * one every step_ns for 130 s (two windows and more); the service counts
 * lists, creates and the creates' 400s as said. n answers into *out. */
static size_t sim_run(ps_rlm_algo algo, bool lists, bool creates, bool errors, int64_t step_ns,
                      timed_answer **out)
{
    size_t cap = (size_t)(130 * NS / step_ns) + 1, n = 0;
    timed_answer *a = calloc(cap, sizeof *a);
    if (!a) abort();
    sim s;
    memset(&s, 0, sizeof s);
    s.algo = algo;
    for (int64_t t = T0 * NS; n < cap; t += step_ns, n++) {
        int kind = (int)(n % 3); /* list, create, invalid create */
        bool counted = kind == 0 ? lists : kind == 1 ? creates : creates && errors;
        timed_answer *x = &a[n];
        x->t = t;
        x->list = kind == 0;
        bool admit = sim_answer(&s, t, counted, &x->remaining, &x->reset);
        x->status = !admit ? 429 : kind == 0 ? 200 : kind == 1 ? 201 : 400;
    }
    *out = a;
    return n;
}

static void runner_see(ps_conform *c, const timed_answer *a)
{
    ps_exchange ex;
    memset(&ex, 0, sizeof ex);
    ex.method = strdup(a->list ? "GET" : "POST");
    ex.url = strdup("http://127.0.0.1:1/v1/categories");
    ex.curl = strdup("curl");
    ex.responded = true;
    ex.status = a->status;
    ex.body_cap = 4096;
    ex.sent_wall_ns = a->t - MS;
    ex.done_wall_ns = a->t;
    char v[32];
    ps_headers_add(&ex.resp_headers, "Content-Type", 12, "application/json", 16);
    ps_headers_add(&ex.resp_headers, "X-RateLimit-Limit", 17, "60", 2);
    snprintf(v, sizeof v, "%lld", (long long)a->remaining);
    ps_headers_add(&ex.resp_headers, "X-RateLimit-Remaining", 21, v, strlen(v));
    snprintf(v, sizeof v, "%lld", (long long)a->reset);
    ps_headers_add(&ex.resp_headers, "X-RateLimit-Reset", 17, v, strlen(v));
    if (a->status == 429) ps_headers_add(&ex.resp_headers, "Retry-After", 11, "1", 1);
    ps_buf_append(&ex.body, "[]", 2);
    ex.body_total = 2;
    ps_conform_observe(c, &ex, PS_KEY_MAIN);
    ps_exchange_free(&ex);
}

/* The runner's label (its report's "model") and counting of a run. */
static void runner_classify(const timed_answer *seq, size_t n, ps_rlm_label *label,
                            ps_rl_key_view *view)
{
    ps_conform_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.base_url = "http://127.0.0.1:1/v1";
    cfg.api_key = "unit-main-key";
    cfg.plan = (ps_plan){PS_PLAN_FREE, 60, 1000};
    cfg.limit_plan = cfg.plan;
    cfg.timeout_ns = cfg.max_wait_ns = NS;
    cfg.max_body = 4096;
    ps_checks *checks = ps_checks_create();
    ps_error err;
    ps_conform *c =
        ps_conform_create(&cfg, checks, ps_suite_observers, ps_suite_observer_count, &err);
    CHECK(c != NULL);
    if (!c) return;
    for (size_t i = 0; i < n; i++)
        runner_see(c, &seq[i]);
    CHECK(ps_ratelimit_judge_view(c, PS_KEY_MAIN, view));
    *label = view->model;
    ps_buf doc = PS_BUF_INIT;
    ps_conform_report_doc(c, 0, &doc);
    ps_buf_free(&doc);
    ps_conform_destroy(c);
    ps_checks_destroy(checks);
}

/* The load generator's label (ps_lg_limits_models) and counting of a run
 * on one connection. */
static void loadgen_classify(const timed_answer *seq, size_t n, ps_rlm_label *label,
                             ps_rlm_counting *counting)
{
    static char k0[] = "unit-main-key";
    ps_lg_key keys[1] = {{.key = k0, .plan = {PS_PLAN_FREE, 60, 1000}}};
    ps_lg_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.keys = keys;
    cfg.nkeys = 1;
    cfg.threads = cfg.connections = 1;
    ps_lg_limits l;
    ps_lg_limits_init(&l, 1);
    for (size_t i = 0; i < n; i++) {
        ps_lg_resp r;
        memset(&r, 0, sizeof r);
        r.status = seq[i].status;
        r.seen = PS_LG_H_LIMIT | PS_LG_H_REMAINING | PS_LG_H_RESET;
        if (r.status == 429) {
            r.seen |= PS_LG_H_RETRY_AFTER;
            r.retry_after_wait_s = 1;
        }
        r.limit = 60;
        r.remaining = seq[i].remaining;
        r.reset = seq[i].reset;
        ps_lg_limits_observe_op(&l, 0, seq[i].list ? PS_LG_OP_LIST : PS_LG_OP_CREATE, &r, seq[i].t,
                                false);
    }
    ps_lg_counting *c;
    size_t nc;
    ps_lg_limits_counting(&l, &cfg, &c, &nc);
    CHECK_INT(nc, 1);
    if (nc) *counting = c[0].counting;
    free(c);
    ps_lg_key_model *m;
    size_t nm;
    ps_lg_limits_models(&l, &cfg, &m, &nm);
    CHECK_INT(nm, 1);
    *label = nm ? m[0].model : PS_RLM_LABEL_UNKNOWN;
    free(m);
    ps_lg_limits_free(&l);
}

/* Whether label may be given to algo: its own, or a label naming no
 * algorithm that algo's headers fit. */
static bool label_fits(ps_rlm_algo algo, ps_rlm_label label)
{
    if (label == ps_rlm_label_of(algo) || label == PS_RLM_LABEL_WINDOW) return true;
    if (algo == PS_RLM_SLIDING_LOG || algo == PS_RLM_SLIDING_COUNTER)
        return label == PS_RLM_LABEL_SLIDING_WINDOW;
    if (algo == PS_RLM_TOKEN_BUCKET) return label == PS_RLM_LABEL_MOVING_WINDOW;
    return false;
}

/* Every algorithm under every counting rule (lists, creates, both; the
 * creates' 400s counted or not), read at two paces: the runner's judge and
 * the load generator's collector, fed the same answers, give the same
 * label and the same counting, and both are right. */
static void every_algorithm_same_classification(void)
{
    static const bool rules[][3] = {{true, true, true},
                                    {true, true, false},
                                    {true, false, false},
                                    {false, true, true},
                                    {false, true, false}};
    static const int64_t steps[] = {NS / 20, NS / 4};
    for (int algo = 0; algo < PS_RLM_ALGOS; algo++)
        for (size_t r = 0; r < sizeof rules / sizeof rules[0]; r++)
            for (size_t p = 0; p < sizeof steps / sizeof steps[0]; p++) {
                timed_answer *seq;
                size_t n = sim_run((ps_rlm_algo)algo, rules[r][0], rules[r][1], rules[r][2],
                                   steps[p], &seq);
                ps_rlm_label rl = PS_RLM_LABEL_UNKNOWN, ll = PS_RLM_LABEL_UNKNOWN;
                ps_rl_key_view rv;
                ps_rlm_counting lc;
                memset(&rv, 0, sizeof rv);
                memset(&lc, 0, sizeof lc);
                runner_classify(seq, n, &rl, &rv);
                loadgen_classify(seq, n, &ll, &lc);
                fprintf(stderr,
                        "  %s, counting %d%d%d, every %lld ms: runner %s %s/%s/%s, loadgen %s "
                        "%s/%s/%s\n",
                        ps_rlm_algo_name((ps_rlm_algo)algo), rules[r][0], rules[r][1], rules[r][2],
                        (long long)(steps[p] / MS), ps_rlm_label_name(rl),
                        ps_rlm_counted_name(rv.list_counted),
                        ps_rlm_counted_name(rv.create_counted),
                        ps_rlm_counted_name(rv.errors_counted), ps_rlm_label_name(ll),
                        ps_rlm_counted_name(lc.ops[0]), ps_rlm_counted_name(lc.ops[1]),
                        ps_rlm_counted_name(lc.errors));
                CHECK_STR(ps_rlm_label_name(rl), ps_rlm_label_name(ll));
                CHECK(label_fits((ps_rlm_algo)algo, ll));
                CHECK_INT(rv.list_counted, lc.ops[PS_RLM_OP_LIST]);
                CHECK_INT(rv.create_counted, lc.ops[PS_RLM_OP_CREATE]);
                CHECK_INT(rv.errors_counted, lc.errors);
                /* right too: an uncounted operation is not counted, or (a
                 * refilling bucket holds Remaining whatever is counted) not
                 * told; 4xx answers as the rule says */
                for (int o = 0; o < PS_RLM_OPS; o++) {
                    bool counts = rules[r][o];
                    CHECK(lc.ops[o] == (counts ? PS_RLM_COUNTED : PS_RLM_NOT_COUNTED) ||
                          (!counts && algo == PS_RLM_TOKEN_BUCKET && lc.ops[o] == PS_RLM_NOT_SEEN));
                }
                if (rules[r][1])
                    CHECK(lc.errors == (rules[r][2] ? PS_RLM_COUNTED : PS_RLM_NOT_COUNTED));
                free(seq);
            }
}

int main(void)
{
    RUN(names_and_windows);
    RUN(bounds);
    RUN(counting_rules);
    RUN(errors_rules);
    RUN(same_evidence_same_classification);
    RUN(every_algorithm_same_classification);
    return TEST_EXIT();
}
