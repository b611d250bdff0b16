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
    /* refused once the 2xx answers reached 60: not counted, even ordered */
    w.admitted[PS_RLM_OP_CREATE][PS_RLM_2XX] = 60;
    e.ordered = true;
    c = decide(&e);
    CHECK_INT(c.errors, PS_RLM_NOT_COUNTED);
    CHECK(!(c.mask & PS_RLM_KIND_BIT(PS_RLM_OP_CREATE, PS_RLM_4XX)));
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
                                T0 * NS + (int64_t)i * 10 * MS + MS);
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

int main(void)
{
    RUN(names_and_windows);
    RUN(bounds);
    RUN(counting_rules);
    RUN(errors_rules);
    RUN(same_evidence_same_classification);
    return TEST_EXIT();
}
