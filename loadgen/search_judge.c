/* search_judge.c - whether one step of `petstore-load search` counts and
 * passes, from its run's JSON document (search_step.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "loadgen/search_step.h"

static void add_why(ps_lg_step *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_why(ps_lg_step *st, const char *fmt, ...)
{
    size_t used = strlen(st->why);
    if (used + 3 >= sizeof st->why) return;
    if (used) {
        memcpy(st->why + used, "; ", 3);
        used += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->why + used, sizeof st->why - used, fmt, ap);
    va_end(ap);
}

/* Sent against the schedule: a request Retry-After held back was not
 * sent, so a step whose keys were refused and waited offered less than
 * its rate, however well the little it sent was answered. Returns true
 * (with why) when under PS_LG_STEP_MIN_OFFERED of the due requests went
 * out. */
static bool not_offered(ps_lg_step *st, const ps_json *d)
{
    const ps_json *g = ps_json_get(d, "generator");
    int64_t sent = ps_json_get_int(g, "sent", 0), unsent = ps_json_get_int(g, "unsent", 0),
            skipped = ps_json_get_int(d, "skipped_retry_after", 0);
    int64_t due = sent + unsent + skipped;
    st->offered_share = due > 0 ? (double)sent / (double)due : 1;
    if (due == 0 || st->offered_share >= PS_LG_STEP_MIN_OFFERED) return false;
    add_why(st,
            "load not offered: sent %.1f%% of the %lld requests due (%lld held back by "
            "Retry-After, %lld never sent), under the %.0f%% a step needs",
            100.0 * st->offered_share, (long long)due, (long long)skipped, (long long)unsent,
            100.0 * PS_LG_STEP_MIN_OFFERED);
    return true;
}

/* Each plan's customers got their quota: admitted (answered other than
 * 429) at PS_LG_STEP_MIN_QUOTA_RECEIVED of the share asked. A customer
 * refused below its quota was not served, whatever the latency of the
 * rest. Returns true (with why) when a plan's were not. */
static bool quota_not_received(ps_lg_step *st, const ps_json *d, const ps_lg_step_ask *ask)
{
    bool short_any = false;
    const ps_json *plans = ps_json_get(d, "plans");
    double asked = ask->quota < 1 ? ask->quota : 1;
    for (size_t i = 0; plans && plans->type == PS_JSON_ARRAY && i < plans->count; i++) {
        const ps_json *r = plans->items[i];
        const char *name = ps_json_get_string(r, "plan", "?");
        ps_plan plan;
        ps_error e = {0};
        if (ps_plan_parse(name, &plan, &e) != 0 || plan.id > PS_PLAN_UNKNOWN) continue;
        double quota_rps = ask->plan_quota_rps[plan.id];
        if (!(quota_rps > 0)) continue;
        double got = ps_json_get_number(r, "admitted_rps", 0) / quota_rps;
        if (got >= PS_LG_STEP_MIN_QUOTA_RECEIVED * asked) continue;
        short_any = true;
        add_why(st,
                "%s customers did not get their quota: admitted %.1f%% of it (asked %.0f%%), "
                "%.1f/s of %.1f/s, %lld refused (429)",
                name, 100.0 * got, 100.0 * ask->quota, ps_json_get_number(r, "admitted_rps", 0),
                quota_rps * asked, (long long)ps_json_get_int(r, "limited", 0));
    }
    return short_any;
}

/* Judges a step from its run's document (search_step.h). */
void ps_lg_search_judge(ps_lg_step *st, const ps_json *d, const ps_lg_step_ask *ask)
{
    st->why[0] = '\0';
    st->by_generator = false;
    const ps_json *lat = ps_json_path(d, "latency_us.corrected");
    static const char *const lk[] = {"p50", "p90", "p99", "p99_9", "max"};
    for (int i = 0; i < 5; i++)
        st->lat[i] = ps_json_get_int(lat, lk[i], 0);
    st->achieved = ps_json_get_number(d, "throughput_rps", 0);
    st->error_rate = ps_json_get_number(d, "error_rate", 0);
    int64_t e5 = 0;
    const ps_json *status = ps_json_get(d, "status");
    for (size_t i = 0; status && status->type == PS_JSON_OBJECT && i < status->count; i++)
        if (status->keys[i][0] == '5')
            e5 += status->items[i]->type == PS_JSON_NUMBER ? (int64_t)status->items[i]->d : 0;
    st->errors = ps_json_get_int(d, "failed", 0) + ps_json_get_int(d, "timed_out", 0) + e5;
    const ps_json *g = ps_json_get(d, "generator");
    snprintf(st->gen_verdict, sizeof st->gen_verdict, "%s",
             ps_json_get_string(g, "verdict", "not-applicable"));
    st->send_rate = ps_json_get_number(g, "send_rate_rps", 0);
    static const char *const gk[] = {"p50", "p90", "p99", "max"};
    for (int i = 0; i < 4; i++)
        st->late[i] = ps_json_get_int(ps_json_get(g, "lateness_us"), gk[i], 0);
    const char *verdict = ps_json_get_string(d, "verdict", "?");
    st->exit_code = (int)ps_json_get_int(d, "exit_code", 3);
    if (!strcmp(verdict, "unreachable") || !strcmp(verdict, "aborted") ||
        !strcmp(verdict, "interrupted")) {
        st->stop = true;
        add_why(st, "%s: %s", verdict, ps_json_get_string(d, "aborted", "?"));
    }
    /* nothing answered: the objectives below had no answer to judge, and a
     * "p99<5ms: 0.000 ms" alone would not say why */
    int64_t answered = st->answered = ps_json_get_int(d, "answered", 0),
            skipped = ps_json_get_int(d, "skipped_retry_after", 0);
    if (!st->stop && answered == 0 && skipped > 0)
        add_why(st,
                "nothing answered in the measured time: %lld requests not sent, waiting out the "
                "key's 429s (its rate limit: give keys whose plans allow the rate, or "
                "--customers, or --ignore-retry-after)",
                (long long)skipped);
    else if (!st->stop && answered == 0)
        add_why(st, "nothing answered in the measured time");
    /* A latency objective lost before any request reached the target: the
     * step measured the generator, not the target (the run's rule,
     * ps_lg_threshold_eval: its report's lost_to_generator). */
    bool late_alone = true, any_failed = false;
    long judged = -1;
    const ps_json *th = ps_json_get(d, "thresholds");
    for (size_t i = 0; th && th->type == PS_JSON_ARRAY && i < th->count; i++) {
        const ps_json *t = th->items[i];
        const ps_json *ok = ps_json_get(t, "passed");
        const char *expr = ps_json_get_string(t, "expression", "?");
        if (ps_json_get(t, "actual_us") && judged < 0) judged = (long)i;
        if (ok && ok->type == PS_JSON_BOOL && ok->boolean) continue;
        any_failed = true;
        const ps_json *lost = ps_json_get(t, "lost_to_generator");
        late_alone &= lost && lost->type == PS_JSON_BOOL && lost->boolean;
        if (ps_json_get(t, "actual_us"))
            add_why(st, "%s: %.3f ms", expr, ps_json_get_number(t, "actual_us", 0) / 1e3);
        else
            add_why(st, "%s: %.3f%%", expr, 100.0 * ps_json_get_number(t, "actual", 0));
    }
    if (judged >= 0 && st->njudged < (int)(sizeof st->judged_us / sizeof st->judged_us[0])) {
        const ps_json *t = th->items[judged];
        snprintf(st->judged_expr, sizeof st->judged_expr, "%s",
                 ps_json_get_string(t, "expression", "?"));
        st->judged_us[st->njudged++] = (int64_t)ps_json_get_number(t, "actual_us", 0);
    }
    late_alone &= any_failed && answered > 0;
    if (late_alone)
        add_why(st,
                "the generator itself left requests that late (lateness p50 %.3f p90 %.3f p99 "
                "%.3f ms, its threads busy %.0f%% of the time): the objective was lost before "
                "the target answered (add --threads, cores or machines: --shard)",
                (double)st->late[0] / 1e3, (double)st->late[1] / 1e3, (double)st->late[2] / 1e3,
                100.0 * ps_json_get_number(g, "busy_share", 0));
    const ps_json *eb = ps_json_get(d, "error_budget");
    const ps_json *eb_ok = ps_json_get(eb, "passed");
    bool other_failed = eb_ok && eb_ok->type == PS_JSON_BOOL && !eb_ok->boolean;
    if (other_failed)
        add_why(st, "error budget: %.2f%% errors over %.2f%%",
                100.0 * ps_json_get_number(eb, "error_rate", 0),
                100.0 * ps_json_get_number(eb, "budget", 0));
    if (!strcmp(ps_json_path(d, "limits.verdict")
                    ? ps_json_get_string(ps_json_get(d, "limits"), "verdict", "")
                    : "",
                "fail")) {
        other_failed = true;
        add_why(st, "limits violated (%zu violations)",
                ps_json_path(d, "limits.violations") ? ps_json_path(d, "limits.violations")->count
                                                     : (size_t)0);
    }
    if (!st->stop && answered > 0 && not_offered(st, d)) other_failed = true;
    if (!st->stop && answered > 0 && ask && quota_not_received(st, d, ask)) other_failed = true;
    if (!strcmp(st->gen_verdict, "connection-limited")) {
        other_failed = true;
        add_why(st, "connection-limited: %s", ps_json_get_string(g, "why", "?"));
    }
    /* With nothing answered in the measured time the objectives judged no
     * answer of the target's: a saturated generator sent none. */
    bool service_failed = answered > 0 && ((any_failed && !late_alone) || other_failed);
    if (!strcmp(st->gen_verdict, "saturated"))
        add_why(st, "generator saturated: %s", ps_json_get_string(g, "why", "?"));
    st->by_generator = (!strcmp(st->gen_verdict, "saturated") || late_alone) && !service_failed;
    st->passed = st->why[0] == '\0';
    st->runs_passed += st->passed;
}
