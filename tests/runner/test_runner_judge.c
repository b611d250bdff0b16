/* test_runner_judge.c - the rate-limit judge on synthetic header
 * sequences: the limiter model it names for each algorithm, what it reports
 * counted on the limit key after a concurrent burst, and
 * ratelimit.reset-consistent for token buckets of any refill rate. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/json.h"
#include "core/ratelimit_headers.h"
#include "harness.h"
#include "runner/checks.h"
#include "runner/conform.h"
#include "runner/run.h"
#include "runner/suites/ratelimit_judge.h"
#include "runner/suites/ratelimit_limit.h"
#include "runner/suites/suites.h"

/* A Unix second well inside the range the judge takes for a Reset. */
#define T0 1800000000LL
#define MS 1000000LL

typedef struct run {
    ps_conform_config cfg;
    ps_checks *checks;
    ps_conform *c;
} run;

static void run_open(run *r, bool limit_key)
{
    memset(r, 0, sizeof *r);
    r->cfg.base_url = "http://127.0.0.1:1/v1";
    r->cfg.api_key = "unit-main-key";
    r->cfg.limit_key = limit_key ? "unit-limit-key" : NULL;
    r->cfg.limit_key_given = limit_key;
    r->cfg.plan.id = PS_PLAN_FREE, r->cfg.plan.per_minute = 60, r->cfg.plan.per_day = 1000;
    r->cfg.limit_plan = r->cfg.plan;
    r->cfg.timeout_ns = 1000000000LL;
    r->cfg.max_wait_ns = 1000000000LL;
    r->cfg.max_body = 4096;
    r->checks = ps_checks_create();
    ps_error err;
    r->c = ps_conform_create(&r->cfg, r->checks, ps_suite_observers, ps_suite_observer_count, &err);
    CHECK(r->c != NULL);
}

/* The service's clock, seconds ahead of the client's, its responses carry
 * as Date; NO_DATE: they carry none. */
#define NO_DATE INT64_MIN
static int64_t date_ahead_s = NO_DATE;

/* One response: sent at ms milliseconds after T0, answered 1 ms later. */
static void see(run *r, ps_key_role role, const char *method, long status, int64_t remaining,
                int64_t reset, int64_t ms)
{
    ps_exchange ex;
    memset(&ex, 0, sizeof ex);
    ex.method = strdup(method);
    ex.url = strdup("http://127.0.0.1:1/v1/categories");
    ex.curl = strdup("curl");
    ex.responded = true;
    ex.status = status;
    ex.body_cap = 4096;
    ex.sent_wall_ns = T0 * 1000000000LL + ms * MS;
    ex.done_wall_ns = ex.sent_wall_ns + MS;
    char v[32];
    ps_headers_add(&ex.resp_headers, "Content-Type", 12, "application/json", 16);
    ps_headers_add(&ex.resp_headers, "X-RateLimit-Limit", 17, "60", 2);
    snprintf(v, sizeof v, "%lld", (long long)remaining);
    ps_headers_add(&ex.resp_headers, "X-RateLimit-Remaining", 21, v, strlen(v));
    snprintf(v, sizeof v, "%lld", (long long)(T0 + reset));
    ps_headers_add(&ex.resp_headers, "X-RateLimit-Reset", 17, v, strlen(v));
    if (date_ahead_s != NO_DATE) {
        char date[40];
        ps_http_date_format(T0 + ms / 1000 + date_ahead_s, date, sizeof date);
        ps_headers_add(&ex.resp_headers, "Date", 4, date, strlen(date));
    }
    ps_buf_append(&ex.body, "[]", 2);
    ex.body_total = 2;
    ps_conform_observe(r->c, &ex, role);
    ps_exchange_free(&ex);
}

/* The report's "ratelimit" entry of a key ("main", "limit"): member's value. */
static char *report_of(run *r, const char *key, const char *member)
{
    ps_buf doc = PS_BUF_INIT;
    ps_conform_report_doc(r->c, 0, &doc);
    ps_error err;
    ps_json *tree = ps_json_parse(doc.data, doc.len, NULL, &err);
    CHECK(tree != NULL);
    char *out = NULL;
    const ps_json *rl = tree ? ps_json_get(tree, "ratelimit") : NULL;
    for (size_t i = 0; rl && i < rl->count; i++) {
        const ps_json *k = rl->items[i];
        if (strcmp(ps_json_get_string(k, "key", ""), key) != 0) continue;
        const char *v = strchr(member, '.') ? ps_json_get_string(ps_json_path(k, "counted"),
                                                                 strchr(member, '.') + 1, NULL)
                                            : ps_json_get_string(k, member, NULL);
        if (v) out = strdup(v);
    }
    ps_json_free(tree);
    ps_buf_free(&doc);
    ps_conform_destroy(r->c);
    ps_checks_destroy(r->checks);
    return out ? out : strdup("(absent)");
}

static void check_report(run *r, const char *key, const char *member, const char *want)
{
    char *got = report_of(r, key, member);
    CHECK_STR(got, want);
    free(got);
}

/* Ten quick lists at 100..190 ms, each counted, Reset held at reset_s. */
static void quick_falls(run *r, int64_t reset_s)
{
    for (int i = 0; i < 10; i++)
        see(r, PS_KEY_MAIN, "GET", 200, 59 - i, reset_s, 100 + 10 * i);
}

/* A window of 4 s starting at the first request: later, all 60 back. */
static void fixed_window_named(void)
{
    run r;
    run_open(&r, false);
    quick_falls(&r, 5);
    see(&r, PS_KEY_MAIN, "GET", 200, 49, 5, 3500);
    see(&r, PS_KEY_MAIN, "GET", 200, 59, 10, 5050);
    check_report(&r, "main", "model", "fixed-window");
}

/* A 4 s log: at 5.05 s the entries of 0.1 s have left, the one of 2 s not;
 * Reset moves to when that one leaves. Read as a fixed window before. */
static void sliding_log_named(void)
{
    run r;
    run_open(&r, false);
    quick_falls(&r, 5);
    see(&r, PS_KEY_MAIN, "GET", 200, 49, 5, 2000);
    see(&r, PS_KEY_MAIN, "GET", 200, 58, 6, 5050);
    check_report(&r, "main", "model", "sliding-log");
}

/* A counter of 4 s windows aligned on the clock: part back at 4 s with the
 * next window's end as Reset (read as a sliding log before: it must not be
 * named one), and then Remaining rising as the last window weighs less. */
static void sliding_counter_not_log(void)
{
    run r;
    run_open(&r, false);
    quick_falls(&r, 4);
    see(&r, PS_KEY_MAIN, "GET", 200, 49, 8, 4050);
    /* part back: a sliding limiter, log or counter not told apart */
    check_report(&r, "main", "model", "sliding-window");

    run_open(&r, false);
    quick_falls(&r, 4);
    see(&r, PS_KEY_MAIN, "GET", 200, 49, 8, 4050);
    see(&r, PS_KEY_MAIN, "GET", 200, 53, 8, 6000);
    check_report(&r, "main", "model", "sliding-counter");
}

/* A bucket of 60 refilled in 1 s (a time scale), its Reset when full
 * again rounded up: a quick run holds Reset while Remaining falls, and all
 * comes back at Reset, as a window would. Nothing tells it from one: the
 * generic name, never a specific window. */
static void bucket_at_second_resolution_generic(void)
{
    run r;
    run_open(&r, false);
    const double t_refill = 1.0 / 60;
    double tat = 0;
    for (int i = 0; i < 41; i++) {
        int64_t ms = i < 40 ? 900 + 2 * i : 2050;
        double now = (double)ms / 1000;
        tat = (tat > now ? tat : now) + t_refill;
        int64_t tokens = (int64_t)((now + 1.0 - tat) / t_refill + 1e-9);
        int64_t reset = (int64_t)tat + 1;
        see(&r, PS_KEY_MAIN, "GET", 200, tokens, reset, ms);
    }
    char *model = report_of(&r, "main", "model");
    CHECK(strcmp(model, "window") == 0 || strcmp(model, "unknown") == 0 ||
          strcmp(model, "token-bucket") == 0);
    free(model);
}

/* A token bucket of 60 refilling one token per t_refill seconds, honest:
 * Reset when full again (rounded up), Remaining its whole tokens. n
 * requests every gap_ms from 100 ms; jump_at > 0: from that request on,
 * Reset claims a refill jump_factor times slower than the bucket's. */
static void bucket_run(run *r, double t_refill, int n, int64_t gap_ms, int jump_at,
                       double jump_factor)
{
    double tat = 0;
    for (int i = 0; i < n; i++) {
        int64_t ms = 100 + gap_ms * i;
        double now = (double)ms / 1000;
        tat = (tat > now ? tat : now) + t_refill;
        int64_t tokens = (int64_t)((now + 60 * t_refill - tat) / t_refill + 1e-9);
        double full = jump_at > 0 && i >= jump_at ? now + (tat - now) * jump_factor : tat;
        see(r, PS_KEY_MAIN, "GET", 200, tokens, (int64_t)ceil(full), ms);
    }
}

/* ratelimit.reset-consistent's passes and failures so far. */
static void reset_outcome(run *r, unsigned *passes, unsigned *failures)
{
    ps_check_outcome o;
    ps_check_outcome_get(r->checks, PS_CK_RATELIMIT_RESET_CONSISTENT, false, &o);
    *passes = o.passes;
    *failures = o.failures;
}

/* The spec names no refill rate: a bucket of 60 refilling over 400 s (or
 * 90 s) only under-admits, and its honest Resets, far later than a
 * plan-rate bucket's, are consistent; so is a plan-rate bucket's. Each is
 * named a token bucket. */
static void slow_bucket_reset_consistent(void)
{
    const double rates[] = {400.0 / 60, 90.0 / 60, 1.0};
    for (size_t k = 0; k < sizeof rates / sizeof rates[0]; k++) {
        run r;
        run_open(&r, false);
        bucket_run(&r, rates[k], 40, 500, 0, 1);
        unsigned passes, failures;
        reset_outcome(&r, &passes, &failures);
        CHECK(passes > 0);
        CHECK(failures == 0);
        check_report(&r, "main", "model", "token-bucket");
    }
}

/* No single bucket: a Reset at now + 60 s on every request while Remaining
 * falls (the reference server's reset-unstable fault), and a plan-rate
 * bucket whose Reset then claims a refill six times slower. */
static void inconsistent_reset_fails(void)
{
    run r;
    run_open(&r, false);
    for (int i = 0; i < 20; i++)
        see(&r, PS_KEY_MAIN, "GET", 200, 59 - i, 60 + i / 2, 100 + 500 * i);
    unsigned passes, failures;
    reset_outcome(&r, &passes, &failures);
    CHECK(failures > 0);
    free(report_of(&r, "main", "model"));

    run_open(&r, false);
    bucket_run(&r, 1.0, 40, 100, 20, 6.0);
    reset_outcome(&r, &passes, &failures);
    CHECK(failures > 0);
    free(report_of(&r, "main", "model"));

    /* the same bucket without the jump passes */
    run_open(&r, false);
    bucket_run(&r, 1.0, 40, 100, 0, 1);
    reset_outcome(&r, &passes, &failures);
    CHECK(passes > 0);
    CHECK(failures == 0);
    free(report_of(&r, "main", "model"));
}

/* Flask-Limiter on redis writes Reset as now + the key's whole-second TTL,
 * so one window's end reads R and R - 1 by turns: a whole-second Unix time
 * names its instant to the second only (spec 8 rule 1 fixes no rounding),
 * so a second back is the same time. Two seconds back is not, nor a Reset
 * creeping back a second at a time. */
static void reset_second_of_rounding(void)
{
    run r;
    run_open(&r, false);
    for (int i = 0; i < 20; i++)
        see(&r, PS_KEY_MAIN, "GET", 200, 59 - i, 30 - (i % 2), 100 + 50 * i);
    unsigned passes, failures;
    reset_outcome(&r, &passes, &failures);
    CHECK(passes > 0);
    CHECK_INT(failures, 0);
    free(report_of(&r, "main", "model"));

    run_open(&r, false);
    for (int i = 0; i < 20; i++)
        see(&r, PS_KEY_MAIN, "GET", 200, 59 - i, 30 - 2 * (i % 2), 100 + 50 * i);
    reset_outcome(&r, &passes, &failures);
    CHECK(failures > 0);
    free(report_of(&r, "main", "model"));

    run_open(&r, false);
    for (int i = 0; i < 5; i++)
        see(&r, PS_KEY_MAIN, "GET", 200, 59 - i, 30 - i, 100 + 50 * i);
    reset_outcome(&r, &passes, &failures);
    CHECK(failures > 0);
    free(report_of(&r, "main", "model"));
}

/* The limit burst: 61 lists at once on the limit key, 60 admitted with
 * Remaining 59..0 (in any order) and one 429. Lists are counted there
 * ("not seen" before); createCategory was never sent. */
static void limit_key_burst_counted(void)
{
    run r;
    run_open(&r, true);
    see(&r, PS_KEY_MAIN, "GET", 200, 59, 50, 0);
    ps_ratelimit_judge_concurrent(r.c, true);
    for (int i = 0; i < 60; i++)
        see(&r, PS_KEY_LIMIT, "GET", 200, (i * 7) % 60, 60, 1000 + i);
    see(&r, PS_KEY_LIMIT, "GET", 429, 0, 60, 1070);
    ps_ratelimit_judge_concurrent(r.c, false);
    char *list = report_of(&r, "limit", "counted.listCategories");
    CHECK_STR(list, "counted");
    free(list);

    run_open(&r, true);
    see(&r, PS_KEY_MAIN, "GET", 200, 59, 50, 0);
    ps_ratelimit_judge_concurrent(r.c, true);
    for (int i = 0; i < 60; i++)
        see(&r, PS_KEY_LIMIT, "GET", 200, (i * 7) % 60, 60, 1000 + i);
    ps_ratelimit_judge_concurrent(r.c, false);
    check_report(&r, "limit", "counted.createCategory", "not seen");

    /* uncounted lists all tell the state as it stands: no evidence */
    run_open(&r, true);
    see(&r, PS_KEY_MAIN, "GET", 200, 59, 50, 0);
    ps_ratelimit_judge_concurrent(r.c, true);
    for (int i = 0; i < 20; i++)
        see(&r, PS_KEY_LIMIT, "GET", 200, 30, 60, 1000 + i);
    ps_ratelimit_judge_concurrent(r.c, false);
    check_report(&r, "limit", "counted.listCategories", "not seen");
}

/* ratelimit.reset-not-past after the run's end: passes, failures, applicable. */
static void not_past_outcome(run *r, unsigned *passes, unsigned *failures, bool *applicable)
{
    ps_suite_reset_past_finish(r->c);
    ps_check_outcome o;
    ps_check_outcome_get(r->checks, PS_CK_RATELIMIT_RESET_NOT_PAST, false, &o);
    *passes = o.passes;
    *failures = o.failures;
    *applicable = o.applicable;
    /* the report is the judge's last call: it frees what the judge kept
     * (LeakSanitizer found the evidence of a static Remaining leaked) */
    ps_buf doc = PS_BUF_INIT;
    ps_conform_report_doc(r->c, 0, &doc);
    ps_buf_free(&doc);
    ps_conform_destroy(r->c);
    ps_checks_destroy(r->checks);
}

/* Ten lists 200 ms apart from ms0, Remaining falling, Reset held at reset_s. */
static void falls_under(run *r, int64_t reset_s, int64_t ms0)
{
    for (int i = 0; i < 10; i++)
        see(r, PS_KEY_MAIN, "GET", 200, 59 - i, reset_s, ms0 + 200 * i);
}

/* Requests counted under a Reset already past fail (the reference server's
 * reset-clock-behind fault: Reset 30 s behind Date); a Reset ahead, a
 * conservative one, a clock a few seconds off, and a static Reset over a
 * Remaining that never falls (a mock's example) do not. */
static void reset_past_while_counting_fails(void)
{
    unsigned passes, failures;
    bool applicable;
    run r;
    /* Date in step: 5 s past (beyond the 3 s slack) fails; 2 s past (rounding) passes */
    date_ahead_s = 0;
    run_open(&r, false);
    falls_under(&r, -5, 0);
    not_past_outcome(&r, &passes, &failures, &applicable);
    CHECK(failures > 0);
    run_open(&r, false);
    falls_under(&r, -2, -1800);
    not_past_outcome(&r, &passes, &failures, &applicable);
    CHECK(failures == 0 && passes > 0);
    /* the window's start, 60 s back, whatever the clock */
    date_ahead_s = NO_DATE;
    run_open(&r, false);
    falls_under(&r, -60, 0);
    not_past_outcome(&r, &passes, &failures, &applicable);
    CHECK(failures > 0);
    /* a Reset ahead, and a conservative one (an hour later than any window) */
    run_open(&r, false);
    falls_under(&r, 3, 0);
    falls_under(&r, 3600, 5000);
    not_past_outcome(&r, &passes, &failures, &applicable);
    CHECK(failures == 0 && passes > 0);
    /* no Date, the service's clock 8 s behind: its Reset reads 8 s past, within the slack */
    run_open(&r, false);
    falls_under(&r, -8, 0);
    not_past_outcome(&r, &passes, &failures, &applicable);
    CHECK(failures == 0 && passes > 0);
    /* the same clock, but its Date says so: judged in its own time, Reset ahead */
    date_ahead_s = -8;
    run_open(&r, false);
    falls_under(&r, -7, 0);
    not_past_outcome(&r, &passes, &failures, &applicable);
    CHECK(failures == 0 && passes > 0);
    /* a static Reset a year back over a Remaining that never falls: nothing to judge */
    date_ahead_s = 0;
    run_open(&r, false);
    for (int i = 0; i < 10; i++)
        see(&r, PS_KEY_MAIN, "GET", 200, 59, -365 * 86400, 200 * i);
    not_past_outcome(&r, &passes, &failures, &applicable);
    CHECK(failures == 0 && passes == 0 && !applicable);
    /* a burst's replies come in no order: never judged as a sequence */
    run_open(&r, false);
    see(&r, PS_KEY_MAIN, "GET", 200, 59, 30, -5000);
    ps_ratelimit_judge_concurrent(r.c, true);
    falls_under(&r, -60, 0);
    ps_ratelimit_judge_concurrent(r.c, false);
    not_past_outcome(&r, &passes, &failures, &applicable);
    CHECK(failures == 0 && passes == 0);
    date_ahead_s = NO_DATE;
}

/* limit429.retry-after-agrees on a 429 whose Retry-After (60 s) ends long
 * after its Reset (2 s ahead), judged after a probe that found the window
 * fresh or not: returns the outcome. */
static void refusal_outcome(bool fresh, ps_check_outcome *o, char *message, size_t size)
{
    run r;
    run_open(&r, true);
    ps_exchange ex;
    memset(&ex, 0, sizeof ex);
    ex.method = strdup("GET");
    ex.url = strdup("http://127.0.0.1:1/v1/categories");
    ex.curl = strdup("curl");
    ex.responded = true;
    ex.status = 429;
    ex.body_cap = 4096;
    ex.sent_wall_ns = T0 * 1000000000LL;
    ex.done_wall_ns = ex.sent_wall_ns + MS;
    ps_headers_add(&ex.resp_headers, "Content-Type", 12, "application/json", 16);
    ps_headers_add(&ex.resp_headers, "X-RateLimit-Limit", 17, "60", 2);
    ps_headers_add(&ex.resp_headers, "X-RateLimit-Remaining", 21, "0", 1);
    char v[32];
    snprintf(v, sizeof v, "%lld", (long long)(T0 + 2));
    ps_headers_add(&ex.resp_headers, "X-RateLimit-Reset", 17, v, strlen(v));
    ps_headers_add(&ex.resp_headers, "Retry-After", 11, "60", 2);
    const char *body = "{\"code\":\"rate_limited\",\"message\":\"slow down\",\"status\":429}";
    ps_buf_append(&ex.body, body, strlen(body));
    ex.body_total = strlen(body);
    window_probe probe = {
        .announced = fresh ? 59 : 30, .limit = 60, .reset_s = T0 + 2, .fresh = fresh};
    limit_check_refusal(r.c, &ex, &probe);
    ps_check_outcome_get(r.checks, PS_CK_LIMIT429_RETRY_AFTER_AGREES, false, o);
    snprintf(message, size, "%s", o->message ? o->message : ""); /* o's lives with the checks */
    o->message = message;
    ps_exchange_free(&ex);
    ps_conform_destroy(r.c);
    ps_checks_destroy(r.checks);
}

/* The first refusals of a fresh window can have no ban behind them (spec 8
 * rule 3): a Retry-After past Reset there is the advice finding; in a
 * window already counting an earlier refusal's ban may explain it, so the
 * check does not apply, saying why. */
static void first_refusal_judged_apart(void)
{
    ps_check_outcome o;
    char message[600];
    refusal_outcome(true, &o, message, sizeof message);
    CHECK_INT(o.failures, 1);
    CHECK(o.message && strstr(o.message, "no ban") != NULL);
    refusal_outcome(false, &o, message, sizeof message);
    CHECK_INT(o.failures, 0);
    CHECK(!o.applicable);
    CHECK(o.message && strstr(o.message, "not seen fresh") != NULL &&
          strstr(o.message, "30 of 60") != NULL);
}

int main(void)
{
    RUN(fixed_window_named);
    RUN(sliding_log_named);
    RUN(sliding_counter_not_log);
    RUN(bucket_at_second_resolution_generic);
    RUN(slow_bucket_reset_consistent);
    RUN(inconsistent_reset_fails);
    RUN(reset_second_of_rounding);
    RUN(limit_key_burst_counted);
    RUN(reset_past_while_counting_fails);
    RUN(first_refusal_judged_apart);
    return TEST_EXIT();
}
