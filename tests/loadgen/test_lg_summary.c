/* test_lg_summary.c - the --json document of a load run, built from known
 * merged figures: it parses, and its values are the figures (nulls where
 * nothing was measured, strings escaped). With PS_LG_SUMMARY_DUMP set, the
 * document is also printed, to compare two builds' output value by value. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "harness.h"
#include "loadgen/summary.h"

static ps_lg_config cfg;
static ps_lg_stats total;

static void setup(void)
{
    char *argv[] = {"petstore-load",
                    "--base-url",
                    "http://127.0.0.1:1",
                    "--api-key",
                    "abcdefgh\"-long-12",
                    "--plan",
                    "free",
                    "--rate",
                    "100",
                    "--duration",
                    "2s",
                    "--mix",
                    "list=9,create=1",
                    "--verify-limits",
                    "--threshold",
                    "p99<10ms",
                    "--threshold",
                    "error_rate<1%",
                    NULL};
    ps_error err = {{0}};
    int argc = (int)(sizeof argv / sizeof argv[0]) - 1;
    CHECK_INT(ps_lg_config_parse(argc, argv, "fixtures/create-bodies.json", &cfg, &err),
              PS_LG_CONFIG_OK);
    CHECK_INT(ps_lg_stats_init(&total, (1u << PS_LG_PLANS) - 1, false, &err), 0);
    for (int i = 1; i <= 90; i++)
        ps_lg_stats_answer(&total, i % 10 ? PS_LG_OP_LIST : PS_LG_OP_CREATE, PS_PLAN_FREE,
                           i % 30 ? 200 : 429, 1000 * i, 900 * i);
    total.scheduled = 100;
    for (int i = 0; i < 4; i++)
        ps_lg_stats_fail(&total, PS_LG_FAIL_CONNECT);
    for (int i = 0; i < 6; i++)
        ps_lg_stats_fail(&total, PS_LG_FAIL_TIMEOUT);
    total.connect_failures = 7;
    total.skipped_retry_after = 3;
}

static ps_json *summary_doc(const ps_lg_summary *s)
{
    ps_buf out = PS_BUF_INIT;
    ps_error err = {{0}};
    CHECK_INT(ps_lg_summary_json(s, &out, &err), 0);
    if (getenv("PS_LG_SUMMARY_DUMP")) fwrite(out.data, 1, out.len, stdout);
    ps_json *doc = ps_json_parse(out.data, out.len, NULL, &err);
    if (!doc) fprintf(stderr, "unparseable: %s\n", err.message);
    CHECK(doc != NULL);
    ps_buf_free(&out);
    return doc;
}

static int64_t num(const ps_json *doc, const char *path)
{
    const ps_json *v = ps_json_path(doc, path);
    return v && v->type == PS_JSON_NUMBER ? (int64_t)v->d : INT64_MIN;
}

static bool is_null(const ps_json *doc, const char *path)
{
    const ps_json *v = ps_json_path(doc, path);
    return v && v->type == PS_JSON_NULL;
}

static bool is_true(const ps_json *doc, const char *path)
{
    const ps_json *v = ps_json_path(doc, path);
    return v && v->type == PS_JSON_BOOL && v->boolean;
}

/* A failed run with violations, thresholds and an interval without answers. */
static void figures_become_values(void)
{
    ps_lg_interval_row rows[2] = {
        {.t_s = 0,
         .length_s = 1,
         .requests = 90,
         .p50_us = 45000,
         .p90_us = 81000,
         .p99_us = 89000,
         .max_us = 90000,
         .c2xx = 87,
         .c4xx = 3,
         .c429 = 3,
         .errors = 4},
        {.t_s = 1, .length_s = 1.25, .errors = 6},
    };
    ps_lg_violation v = {.kind = PS_LG_V_OVER_ADMISSION,
                         .key = 0,
                         .window = "minute",
                         .reset = 1700000060,
                         .admitted = 61,
                         .limit = 60,
                         .count = 64,
                         .fails = true};
    snprintf(v.message, sizeof v.message, "window admitted 61 \"over\" 60\n");
    ps_lg_threshold_result thr[2] = {{.passed = false, .actual = 89000},
                                     {.passed = true, .actual = 0.1}};
    ps_lg_summary s = {
        .cfg = &cfg,
        .total = &total,
        .rows = rows,
        .nrows = 2,
        .limits_checked = true,
        .windows = 2,
        .violations = &v,
        .nviolations = 1,
        .failing_violations = 1,
        .thresholds = thr,
        .duration_s = 2.0,
        .started_wall_ns = INT64_C(1700000000000000000),
        .exit_code = 1,
    };
    ps_json *d = summary_doc(&s);
    if (!d) return;
    CHECK_STR(ps_json_get_string(d, "tool", ""), "petstore-load");
    CHECK_INT(num(d, "format"), 1);
    CHECK_INT(num(d, "parameters.rate"), 100);
    CHECK(is_null(d, "parameters.requests_limit"));
    CHECK(is_null(d, "parameters.ramp"));
    CHECK_STR(ps_json_get_string(ps_json_get(d, "parameters"), "model", ""), "open");
    CHECK_INT(num(d, "parameters.mix.create"), 1);
    CHECK_STR(ps_json_get_string(d, "started_at", ""), "2023-11-14T22:13:20Z");
    CHECK_INT(num(d, "requests"), 100);
    CHECK_INT(num(d, "answered"), 90);
    CHECK_INT(num(d, "failed"), 4);
    CHECK_INT(num(d, "timed_out"), 6);
    CHECK(is_true(d, "accounting_exact"));
    CHECK_INT(num(d, "send_rate_rps"), 51); /* (100 + 3) / 2 s */
    CHECK_INT(num(d, "status.200"), 87);
    CHECK_INT(num(d, "status.429"), 3);
    CHECK_INT(num(d, "errors.connect"), 4);
    CHECK_INT(num(d, "connect_failures"), 7);
    CHECK_INT(num(d, "latency_us.corrected.count"), 90);
    CHECK_INT(num(d, "operations.create.requests"), 9);
    CHECK_INT(num(d, "status_classes.4xx.count"), 3);
    const ps_json *iv = ps_json_get(d, "intervals");
    CHECK(iv && iv->count == 2);
    if (iv && iv->count == 2) {
        CHECK_INT(num(iv->items[0], "p99_us"), 89000);
        CHECK_INT(num(iv->items[0], "status_classes.429"), 3);
        CHECK(is_null(iv->items[1], "p50_us"));
        CHECK(is_null(iv->items[1], "max_us"));
        CHECK_INT(num(iv->items[1], "status_classes.errors"), 6);
    }
    const ps_json *spectrum = ps_json_path(d, "percentile_spectrum.corrected");
    CHECK(spectrum && spectrum->count > 0 && spectrum->items[0]->count == 3);
    CHECK_STR(ps_json_get_string(ps_json_get(d, "limits"), "verdict", ""), "fail");
    const ps_json *viol = ps_json_path(d, "limits.violations");
    CHECK(viol && viol->count == 1);
    if (viol && viol->count == 1) {
        /* the mask, then 6 hex digits of a keyed hash (loadgen/key_label.h) */
        const char *label = ps_json_get_string(viol->items[0], "key", "");
        CHECK(strncmp(label, "ab***12~", 8) == 0 && strlen(label) == 14 &&
              strspn(label + 8, "0123456789abcdef") == 6);
        CHECK_STR(ps_json_get_string(viol->items[0], "message", ""),
                  "window admitted 61 \"over\" 60\n");
        CHECK_INT(num(viol->items[0], "window_reset"), 1700000060);
    }
    const ps_json *th = ps_json_get(d, "thresholds");
    CHECK(th && th->count == 2);
    if (th && th->count == 2) {
        CHECK_INT(num(th->items[0], "actual_us"), 89000);
        CHECK_INT(num(th->items[0], "bound_us"), 10000);
        CHECK(ps_json_get(th->items[1], "bound") != NULL);
    }
    CHECK(is_null(d, "aborted"));
    CHECK_STR(ps_json_get_string(d, "verdict", ""), "fail");
    CHECK_INT(num(d, "exit_code"), 1);
    ps_json_free(d);
}

/* Exit 3: the verdict and its reason are the run's, not pass/fail. */
static void exit_3_names_its_reason(void)
{
    ps_lg_threshold_result thr[2] = {{.passed = true, .actual = 900},
                                     {.passed = true, .actual = 0}};
    ps_lg_summary s = {.cfg = &cfg,
                       .total = &total,
                       .thresholds = thr,
                       .exit_code = 3,
                       .verdict = "interrupted",
                       .aborted = "interrupted by SIGINT: partial results",
                       .interrupted = true};
    ps_json *d = summary_doc(&s);
    if (!d) return;
    CHECK_STR(ps_json_get_string(d, "verdict", ""), "interrupted");
    CHECK_STR(ps_json_get_string(d, "aborted", ""), "interrupted by SIGINT: partial results");
    CHECK(is_true(d, "interrupted"));
    CHECK_STR(ps_json_get_string(ps_json_get(d, "limits"), "verdict", ""), "not_checked");
    const ps_json *iv = ps_json_get(d, "intervals");
    CHECK(iv && iv->type == PS_JSON_ARRAY && iv->count == 0);
    ps_json_free(d);
}

/* A latency threshold lost to the generator (ps_lg_threshold_eval): its
 * lateness reached the bound and it was busy, or kept up with connections
 * and the target's own figure met the bound; a target whose own latency
 * breaks the bound fails it whatever the generator did. */
static void threshold_lost_to_generator(void)
{
    ps_error err = {{0}};
    ps_lg_stats st;
    CHECK_INT(ps_lg_stats_init(&st, (1u << PS_LG_PLANS) - 1, false, &err), 0);
    /* the target answers in 0.2 ms from its send; the generator sent 40 ms late */
    for (int i = 0; i < 100; i++) {
        ps_lg_stats_answer(&st, PS_LG_OP_LIST, PS_PLAN_FREE, 200, 40200, 200);
        ps_lg_stats_late(&st, 40000);
    }
    ps_lg_threshold p99_5ms = {0}, p99_1us = {0}, errors = {0};
    CHECK_INT(ps_lg_threshold_parse("p99<5ms", &p99_5ms, &err), 0);
    CHECK_INT(ps_lg_threshold_parse("p99<1us", &p99_1us, &err), 0);
    CHECK_INT(ps_lg_threshold_parse("error_rate<1%", &errors, &err), 0);
    ps_lg_generator idle = {
        .verdict = PS_LG_GEN_OK, .busy_share = 0.2, .cpu_s = 0.4, .runq_wait_s = 0.01};
    ps_lg_generator busy = {
        .verdict = PS_LG_GEN_OK, .busy_share = 0.9, .conn_waits = 5, .runq_wait_s = -1};
    /* nice 19 beside one busy loop: busy 61%, far longer waiting for a CPU than on
     * one, yet not CPU-bound by the rule: the target's own figure decides */
    ps_lg_generator starved = {.verdict = PS_LG_GEN_OK,
                               .busy_share = 0.61,
                               .conn_waits = 5,
                               .cpu_s = 0.03,
                               .runq_wait_s = 1.5};
    /* short of connections the target held: its waits are in the lateness */
    ps_lg_generator conn_limited = {
        .verdict = PS_LG_GEN_CONN_LIMITED, .busy_share = 0.9, .conn_waits = 500};
    ps_lg_generator waited = {
        .verdict = PS_LG_GEN_OK, .busy_share = 0.2, .conn_waits = 5, .runq_wait_s = -1};
    ps_lg_generator closed = {.verdict = PS_LG_GEN_NOT_APPLICABLE, .busy_share = 0.9};

    ps_lg_threshold_result r = ps_lg_threshold_eval(&p99_5ms, &st, &idle);
    CHECK(!r.passed && r.lost_to_generator);
    CHECK(r.own < 1000 && r.late >= 39000 && r.actual >= 40000);
    r = ps_lg_threshold_eval(&p99_5ms, &st, &busy);
    CHECK(!r.passed && r.lost_to_generator);
    r = ps_lg_threshold_eval(&p99_5ms, &st, &starved);
    CHECK(!r.passed && !r.lost_to_generator);
    r = ps_lg_threshold_eval(&p99_5ms, &st, &conn_limited);
    CHECK(!r.passed && !r.lost_to_generator);
    /* requests that waited for connections the target held: the target's delay */
    r = ps_lg_threshold_eval(&p99_5ms, &st, &waited);
    CHECK(!r.passed && !r.lost_to_generator);
    /* no schedule (closed model), or not known (a merge): never */
    r = ps_lg_threshold_eval(&p99_5ms, &st, &closed);
    CHECK(!r.passed && !r.lost_to_generator);
    r = ps_lg_threshold_eval(&p99_5ms, &st, NULL);
    CHECK(!r.passed && !r.lost_to_generator);
    /* the target's own 0.2 ms breaks p99<1us: its failure, unless the generator's CPU
     * held everything back (then its own figure was read late too) */
    r = ps_lg_threshold_eval(&p99_1us, &st, &idle);
    CHECK(!r.passed && !r.lost_to_generator);
    r = ps_lg_threshold_eval(&p99_1us, &st, &busy);
    CHECK(!r.passed && r.lost_to_generator);
    r = ps_lg_threshold_eval(&p99_1us, &st, &starved);
    CHECK(!r.passed && !r.lost_to_generator);
    /* a max: the generator's worst lateness and the target's worst answer may be two
     * requests; lost only when the target's own max met the bound */
    ps_lg_threshold max_5ms = {0};
    CHECK_INT(ps_lg_threshold_parse("max<5ms", &max_5ms, &err), 0);
    r = ps_lg_threshold_eval(&max_5ms, &st, &busy);
    CHECK(!r.passed && r.lost_to_generator);
    ps_lg_stats_answer(&st, PS_LG_OP_LIST, PS_PLAN_FREE, 200, 2000000,
                       2000000); /* one 2 s answer */
    r = ps_lg_threshold_eval(&max_5ms, &st, &busy);
    CHECK(!r.passed && !r.lost_to_generator);
    /* error rates are never the generator's */
    r = ps_lg_threshold_eval(&errors, &st, &busy);
    CHECK(r.passed && !r.lost_to_generator);
    free(p99_5ms.expression);
    free(p99_1us.expression);
    free(errors.expression);
    free(max_5ms.expression);
    ps_lg_stats_free(&st);
}

int main(void)
{
    threshold_lost_to_generator();
    setup();
    RUN(figures_become_values);
    RUN(exit_3_names_its_reason);
    ps_lg_stats_free(&total);
    ps_lg_config_free(&cfg);
    return TEST_EXIT();
}
