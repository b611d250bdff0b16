/* search_report.c - the report of `petstore-load search`: the document of
 * the step the result rests on with a "search" member, and --json, --html
 * and the console summary from it (search_step.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cli.h"
#include "core/json.h"
#include "core/json_writer.h"
#include "loadgen/search_step.h"
#include "reports/html_report.h"
#include "reports/report_load_console.h"
#include "reports/report_markdown.h"
#include "reports/report_search.h"

/* customers per plan of a --customers step (or the search's answer) */
static void customers_json(ps_jw *w, const step *st)
{
    ps_jw_key(w, "customers");
    ps_jw_object_open(w);
    for (int p = 0; p <= PS_PLAN_UNKNOWN; p++)
        if (st->customers[p] > 0) ps_jw_kint(w, ps_plan_name((ps_plan_id)p), st->customers[p]);
    ps_jw_object_close(w);
}

static void step_json(ps_jw *w, const step *st, bool customers)
{
    ps_jw_object_open(w);
    ps_jw_kdouble(w, "rate", st->rate, 3);
    ps_jw_kdouble(w, "achieved_rps", st->achieved, 1);
    ps_jw_key(w, "latency_us");
    ps_jw_object_open(w);
    static const char *const lk[] = {"p50", "p90", "p99", "p99_9", "max"};
    for (int i = 0; i < 5; i++)
        ps_jw_kint(w, lk[i], st->lat[i]);
    ps_jw_object_close(w);
    ps_jw_kint(w, "errors", st->errors);
    ps_jw_kdouble(w, "error_rate", st->error_rate, 6);
    ps_jw_key(w, "generator");
    ps_jw_object_open(w);
    ps_jw_kstring(w, "verdict", st->gen_verdict);
    ps_jw_kdouble(w, "send_rate_rps", st->send_rate, 1);
    ps_jw_key(w, "lateness_us");
    ps_jw_object_open(w);
    static const char *const gk[] = {"p50", "p90", "p99", "max"};
    for (int i = 0; i < 4; i++)
        ps_jw_kint(w, gk[i], st->late[i]);
    ps_jw_object_close(w);
    ps_jw_object_close(w);
    ps_jw_kbool(w, "passed", st->passed);
    if (st->passed)
        ps_jw_knull(w, "why");
    else
        ps_jw_kstring(w, "why", st->why);
    ps_jw_kint(w, "exit_code", st->exit_code);
    if (customers) customers_json(w, st);
    ps_jw_kdouble(w, "offered_share", st->offered_share, 4);
    ps_jw_kint(w, "answered", st->answered);
    ps_jw_kint(w, "answers_needed", st->answers_needed);
    ps_jw_kint(w, "runs", st->runs);
    ps_jw_kint(w, "generator_reruns", st->regen_runs);
    ps_jw_object_close(w);
}

/* One boundary step's runs: how many, how many passed, the judged
 * figure's lowest and highest. */
static void boundary_json(ps_jw *w, const char *name, const step *st)
{
    ps_jw_key(w, name);
    ps_jw_object_open(w);
    ps_jw_kdouble(w, "rate", st->rate, 3);
    ps_jw_kint(w, "runs", st->runs);
    ps_jw_kint(w, "runs_passed", st->runs_passed);
    int64_t lo = INT64_MAX, hi = 0;
    for (int i = 0; i < st->njudged; i++) {
        if (st->judged_us[i] < lo) lo = st->judged_us[i];
        if (st->judged_us[i] > hi) hi = st->judged_us[i];
    }
    if (st->njudged > 0) {
        ps_jw_kint(w, "figure_min_us", lo);
        ps_jw_kint(w, "figure_max_us", hi);
    } else {
        ps_jw_knull(w, "figure_min_us");
        ps_jw_knull(w, "figure_max_us");
    }
    ps_jw_object_close(w);
}

/* The knee with its spread: the first latency objective's figure over
 * every run of the highest passing and the lowest failing step (null
 * without both). */
static void knee_json(ps_jw *w, const search *S, const outcome *o)
{
    ps_jw_key(w, "knee");
    if (o->best < 0 || o->worst < 0 || !S->steps[o->best].judged_expr[0]) {
        ps_jw_null(w);
        return;
    }
    ps_jw_object_open(w);
    ps_jw_kstring(w, "objective", S->steps[o->best].judged_expr);
    /* its bound, for the objective's line in the HTML */
    for (size_t i = 0; i < S->cfg.nthresholds; i++)
        if (!strcmp(S->cfg.thresholds[i].expression, S->steps[o->best].judged_expr)) {
            ps_jw_kdouble(w, "bound_us", S->cfg.thresholds[i].bound, 3);
            break;
        }
    boundary_json(w, "highest_passing", &S->steps[o->best]);
    boundary_json(w, "lowest_failing", &S->steps[o->worst]);
    ps_jw_object_close(w);
}

/* The report: the document of the step the result rests on, with the
 * search member added as its last. */
int ps_lg_search_build_report(const search *S, const outcome *o, ps_buf *out, ps_error *err)
{
    const char *doc = S->steps[o->doc_step].doc;
    const char *last = strrchr(doc, '}');
    if (!last) return ps_error_set(err, "internal error: a step's report is not an object");
    ps_buf_append(out, doc, (size_t)(last - doc));
    ps_buf_puts(out, ",\n  \"search\": ");
    ps_jw w;
    ps_jw_init(&w, out, true);
    ps_jw_object_open(&w);
    ps_jw_key(&w, "slos");
    ps_jw_array_open(&w);
    for (size_t i = 0; i < S->nslos; i++)
        ps_jw_string(&w, S->slos[i]);
    ps_jw_array_close(&w);
    ps_jw_kdouble(&w, "from_rps", S->from, 3);
    ps_jw_kdouble(&w, "to_rps", S->to, 3);
    ps_jw_kdouble(&w, "resolution", S->resolution, 6);
    ps_jw_kdouble(&w, "step_s", (double)S->step_ns / 1e9, 3);
    ps_jw_kdouble(&w, "warmup_s", (double)S->cfg.warmup_ns / 1e9, 3);
    ps_jw_kint(&w, "repeat", S->repeat);
    ps_jw_kstring(&w, "result", o->result);
    ps_jw_kint(&w, "exit_code", o->exit_code);
    if (o->best >= 0)
        ps_jw_kdouble(&w, "max_rate", S->steps[o->best].rate, 3);
    else
        ps_jw_knull(&w, "max_rate");
    if (o->worst >= 0)
        ps_jw_kdouble(&w, "min_failing_rate", S->steps[o->worst].rate, 3);
    else
        ps_jw_knull(&w, "min_failing_rate");
    if (S->cfg.have_customers) {
        /* --customers: the customers per plan of the largest mix measured
         * passing (null when none passed) */
        if (o->best >= 0)
            customers_json(&w, &S->steps[o->best]);
        else
            ps_jw_knull(&w, "customers");
    }
    ps_jw_key(&w, "steps");
    ps_jw_array_open(&w);
    for (size_t i = 0; i < S->nsteps; i++)
        step_json(&w, &S->steps[i], S->cfg.have_customers);
    ps_jw_array_close(&w);
    ps_jw_kdouble(&w, "evidence_beyond", PS_LG_EVIDENCE_BEYOND, 0);
    knee_json(&w, S, o);
    if (S->keys_why[0])
        ps_jw_kstring(&w, "keys_why", S->keys_why);
    else
        ps_jw_knull(&w, "keys_why");
    ps_jw_object_close(&w);
    ps_buf_puts(out, "\n}\n");
    if (!ps_jw_ok(&w)) return ps_error_set(err, "internal error: the search member is malformed");
    return 0;
}

static int write_file(const char *path, const char *data, size_t len, ps_error *err)
{
    FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
    if (!f) return ps_error_set(err, "cannot write '%s': %s", path, strerror(errno));
    bool bad = fwrite(data, 1, len, f) != len;
    bad |= f == stdout ? fflush(f) != 0 : fclose(f) != 0;
    if (bad) return ps_error_set(err, "error writing '%s'", path);
    return 0;
}

/* --json, --html and the console summary, all from the one report. */
int ps_lg_search_write_outputs(const search *S, const ps_buf *report, ps_error *err)
{
    if (S->json_path && write_file(S->json_path, report->data, report->len, err) != 0) return -1;
    ps_json *doc = ps_json_parse(report->data, report->len, NULL, err);
    if (!doc) return ps_error_prefix(err, "own search report unreadable: ");
    int rc = 0;
    if (S->html_path) {
        FILE *f = strcmp(S->html_path, "-") == 0 ? stdout : fopen(S->html_path, "w");
        if (!f)
            rc = ps_error_set(err, "cannot write '%s': %s", S->html_path, strerror(errno));
        else {
            rc = ps_report_html_load(doc, f, err);
            if ((f == stdout ? fflush(f) : fclose(f)) != 0 && rc == 0)
                rc = ps_error_set(err, "error writing '%s'", S->html_path);
        }
    }
    if (S->md_path && rc == 0) {
        FILE *f = fopen(S->md_path, "w");
        if (!f)
            rc = ps_error_set(err, "cannot write '%s': %s", S->md_path, strerror(errno));
        else {
            rc = ps_report_md_load(doc, f, err);
            if (fclose(f) != 0 && rc == 0) rc = ps_error_set(err, "error writing '%s'", S->md_path);
        }
    }
    if (!S->quiet && rc == 0) {
        ps_load_console_options o = {.color = ps_cli_color_enabled(S->cfg.color, 2),
                                     .utf8 = ps_console_locale_utf8()};
        rc = ps_report_console_search(doc, stderr, &o, err);
    }
    ps_json_free(doc);
    return rc;
}
