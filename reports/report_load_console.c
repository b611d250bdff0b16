/* report_load_console.c - the load run's summary for people at a terminal. */
#include "reports/report_load_console.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define C_RESET "\033[0m"
#define C_RED "\033[31m"
#define C_GREEN "\033[32m"
#define C_BOLD "\033[1m"

static const char *col(const ps_load_console_options *o, const char *code)
{
    return o->color ? code : "";
}

bool ps_console_locale_utf8(void)
{
    static const char *const vars[] = {"LC_ALL", "LC_CTYPE", "LANG"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (!v || !*v) continue;
        /* "en_US.UTF-8", "C.utf8", "de_DE.utf-8@euro" */
        const char *dot = strchr(v, '.');
        return dot &&
               (strncasecmp(dot + 1, "utf-8", 5) == 0 || strncasecmp(dot + 1, "utf8", 4) == 0);
    }
    return false;
}

/* Microseconds as a person reads them: 850µs, 12.3ms, 1.25s (3 digits). */
static void put_latency(ps_buf *b, double us, bool utf8)
{
    double v = us;
    const char *unit = utf8 ? "\xC2\xB5s" : "us";
    if (!isfinite(us)) {
        ps_buf_puts(b, "n/a");
        return;
    }
    if (fabs(us) >= 1e6)
        v = us / 1e6, unit = "s";
    else if (fabs(us) >= 1e3)
        v = us / 1e3, unit = "ms";
    if (unit[0] != 'm' && unit[0] != 's' && v == floor(v))
        ps_buf_printf(b, "%.0f%s", v, unit);
    else
        ps_buf_printf(b, "%.*f%s", fabs(v) < 10 ? 2 : fabs(v) < 100 ? 1 : 0, v, unit);
}

void ps_report_load_threshold_line(ps_buf *b, const ps_json *t, int width,
                                   const ps_load_console_options *opts)
{
    static const ps_load_console_options dflt = {0};
    if (!opts) opts = &dflt;
    const ps_json *passed = ps_json_get(t, "passed");
    const char *expr = ps_json_get_string(t, "expression", "?");
    bool known = passed && passed->type == PS_JSON_BOOL;
    bool ok = known && passed->boolean;
    const char *mark = !known       ? "?"
                       : opts->utf8 ? (ok ? "\xE2\x9C\x93" : "\xE2\x9C\x97")
                       : ok         ? "PASS"
                                    : "FAIL";
    ps_buf_printf(b, "%s%s%s %-*s  ",
                  col(opts, !known ? ""
                            : ok   ? C_GREEN
                                   : C_RED),
                  mark, col(opts, C_RESET), width, expr);
    /* the metric is what the expression compares: "p99" of "p99<200ms" */
    size_t mlen = strcspn(expr, "<>=");
    ps_buf_append(b, expr, mlen);
    ps_buf_putc(b, '=');
    const ps_json *us = ps_json_get(t, "actual_us");
    const ps_json *frac = ps_json_get(t, "actual");
    if (us && us->type == PS_JSON_NUMBER)
        put_latency(b, us->d, opts->utf8);
    else if (frac && frac->type == PS_JSON_NUMBER && isfinite(frac->d))
        ps_buf_printf(b, "%.2f%%", frac->d * 100);
    else
        ps_buf_puts(b, "n/a");
    /* the generator's own lateness broke it, not the target (loadgen/summary.h) */
    const ps_json *lost = ps_json_get(t, "lost_to_generator");
    const ps_json *own = ps_json_get(t, "own_us"), *late = ps_json_get(t, "lateness_us");
    if (lost && lost->type == PS_JSON_BOOL && lost->boolean && own && own->type == PS_JSON_NUMBER &&
        late && late->type == PS_JSON_NUMBER) {
        ps_buf_puts(b, ": lost to the generator (its lateness ");
        put_latency(b, late->d, opts->utf8);
        ps_buf_puts(b, ", the target's ");
        put_latency(b, own->d, opts->utf8);
        ps_buf_putc(b, ')');
    }
}

/* The rate line of an open-model run: the schedule's target, the rate the
 * requests went out at, and where the rest went. A key waiting out a
 * Retry-After skips its due requests, so 135.8/s sent against 400/s asked
 * is explained by the skipped count, not hidden. */
static void rate_line(ps_buf *b, const ps_json *doc)
{
    const ps_json *params = ps_json_get(doc, "parameters");
    const ps_json *rate = ps_json_get(params, "rate");
    const ps_json *ramp = ps_json_get(params, "ramp");
    double dur = ps_json_get_number(doc, "duration_s", 0);
    long long sent = (long long)ps_json_get_int(doc, "scheduled", 0);
    long long skipped = (long long)ps_json_get_int(doc, "skipped_retry_after", 0);
    /* The generator's figures, when there: requests actually written. */
    const ps_json *gen = ps_json_get(doc, "generator");
    if (gen && gen->type == PS_JSON_OBJECT) sent = (long long)ps_json_get_int(gen, "sent", sent);
    long long due = sent + skipped + (long long)ps_json_get_int(gen, "unsent", 0);
    ps_buf_puts(b, "  send rate: ");
    if (gen && gen->type == PS_JSON_OBJECT)
        ps_buf_printf(b, "%.1f/s sent", ps_json_get_number(gen, "send_rate_rps", 0));
    else if (dur > 0)
        ps_buf_printf(b, "%.1f/s sent", (double)sent / dur);
    else
        ps_buf_puts(b, "n/a");
    if (rate && rate->type == PS_JSON_NUMBER)
        ps_buf_printf(b, " of %g/s target", rate->d);
    else if (ramp && ramp->type == PS_JSON_ARRAY && ramp->count == 2 &&
             ramp->items[0]->type == PS_JSON_NUMBER && ramp->items[1]->type == PS_JSON_NUMBER)
        ps_buf_printf(b, " of a %g to %g/s ramp", ramp->items[0]->d, ramp->items[1]->d);
    else if (gen && ps_json_get_number(gen, "target_rps", 0) > 0)
        ps_buf_printf(b, " of %.1f/s due (per-key rates)",
                      ps_json_get_number(gen, "target_rps", 0));
    else
        ps_buf_puts(b, " (per-key rates)");
    ps_buf_printf(b, "; %lld due, %lld skipped for Retry-After", due, skipped);
    if (due > 0 && skipped > 0)
        ps_buf_printf(b, " (%.1f%%)", 100.0 * (double)skipped / (double)due);
    ps_buf_printf(b, ", %lld sent\n", sent);
}

/* The generator's health (loadgen/generator.h): whether it kept its
 * schedule, how late requests left, its CPU, and connection waits. */
static void generator_line(ps_buf *b, const ps_json *doc, const ps_load_console_options *opts)
{
    const ps_json *g = ps_json_get(doc, "generator");
    if (!g || g->type != PS_JSON_OBJECT) return;
    const char *v = ps_json_get_string(g, "verdict", "?");
    if (!strcmp(v, "not-applicable")) return;
    const ps_json *late = ps_json_get(g, "lateness_us");
    bool ok = !strcmp(v, "ok");
    ps_buf_printf(
        b, "  generator: %s%s%s; lateness ms p50 %.3f p90 %.3f p99 %.3f max %.3f; ",
        col(opts, ok ? "" : C_RED), ok ? "kept up" : v, col(opts, C_RESET),
        ps_json_get_number(late, "p50", 0) / 1e3, ps_json_get_number(late, "p90", 0) / 1e3,
        ps_json_get_number(late, "p99", 0) / 1e3, ps_json_get_number(late, "max", 0) / 1e3);
    double busy = ps_json_get_number(g, "busy_share", -1);
    ps_buf_printf(b, "CPU %.2f s", ps_json_get_number(g, "thread_cpu_s", 0));
    if (busy >= 0) ps_buf_printf(b, " (busy %.0f%%)", 100.0 * busy);
    ps_buf_printf(b, "; %lld waited for a connection, %lld unsent; drain %.2f s\n",
                  (long long)ps_json_get_int(g, "connection_waits", 0),
                  (long long)ps_json_get_int(g, "unsent", 0), ps_json_get_number(g, "drain_s", 0));
    const char *why = ps_json_get_string(g, "why", NULL);
    if (why) ps_buf_printf(b, "    %s\n", why);
}

/* One line per plan (a run's plans[] with offered_rps), then per key group
 * (groups[]): what capacity testing asks of each, in place of per-key
 * lines. */
static void capacity_lines(ps_buf *b, const ps_json *doc, const char *array, const char *name)
{
    const ps_json *rows = ps_json_get(doc, array);
    for (size_t i = 0; rows && rows->type == PS_JSON_ARRAY && i < rows->count; i++) {
        const ps_json *p = rows->items[i];
        if (!ps_json_get(p, "offered_rps")) continue;
        ps_buf_printf(b, "  %s %s: %lld keys, offered %.1f/s", name,
                      ps_json_get_string(p, name, "?"), (long long)ps_json_get_int(p, "keys", 0),
                      ps_json_get_number(p, "offered_rps", 0));
        const ps_json *q = ps_json_get(p, "quota_share");
        if (q && q->type == PS_JSON_NUMBER) ps_buf_printf(b, " (%.1f%% of quota)", 100.0 * q->d);
        ps_buf_printf(b, ", achieved %.1f/s, admitted %.1f/s, %lld refused (429)",
                      ps_json_get_number(p, "achieved_rps", 0),
                      ps_json_get_number(p, "admitted_rps", 0),
                      (long long)ps_json_get_int(p, "limited", 0));
        if (ps_json_get(p, "refused_correct"))
            ps_buf_printf(b, ": %lld window full, %lld early",
                          (long long)ps_json_get_int(p, "refused_correct", 0),
                          (long long)ps_json_get_int(p, "refused_early", 0));
        if (ps_json_get(p, "windows_filled"))
            ps_buf_printf(b, ", %lld windows filled",
                          (long long)ps_json_get_int(p, "windows_filled", 0));
        const ps_json *day = ps_json_get(p, "day_quota_spent");
        if (day && day->type == PS_JSON_NUMBER)
            ps_buf_printf(b, "; spent %.1f%% of the minute quota, %.2f%% of the day's (per key)",
                          100.0 * ps_json_get_number(p, "minute_quota_spent", 0), 100.0 * day->d);
        if (ps_json_get_int(p, "unavailable", 0) > 0)
            ps_buf_printf(b, ", %lld answered 503 (a limiter's refusal or overload: not admitted)",
                          (long long)ps_json_get_int(p, "unavailable", 0));
        ps_buf_putc(b, '\n');
    }
}

/* Keys are grouped by what was decided for them (the three states), not
 * by the reason's text: that carries each key's own 429 count. */
static int by_states(const void *a, const void *b)
{
    static const char *const states[] = {"list", "create", "errors_4xx"};
    const ps_json *x = *(const ps_json *const *)a, *y = *(const ps_json *const *)b;
    int diff = 0;
    for (size_t i = 0; i < 3 && diff == 0; i++)
        diff = strcmp(ps_json_get_string(x, states[i], ""), ps_json_get_string(y, states[i], ""));
    return diff;
}

/* Which answers each key's limits counted: one line per outcome, with how
 * many keys share it, so 20,000 keys do not print 20,000 lines. */
static void counting_lines(ps_buf *b, const ps_json *cnt)
{
    if (!cnt || cnt->type != PS_JSON_ARRAY || cnt->count == 0) return;
    const ps_json **items = malloc(cnt->count * sizeof *items);
    if (!items) abort();
    for (size_t i = 0; i < cnt->count; i++)
        items[i] = cnt->items[i];
    qsort(items, cnt->count, sizeof *items, by_states);
    for (size_t i = 0; i < cnt->count;) {
        size_t j = i + 1;
        while (j < cnt->count && by_states(&items[i], &items[j]) == 0)
            j++;
        if (j - i == 1)
            ps_buf_printf(b, "    counted for key %s: %s\n",
                          ps_json_get_string(items[i], "key", "?"),
                          ps_json_get_string(items[i], "reason", "?"));
        else
            ps_buf_printf(b,
                          "    counted for %zu keys: list %s, create %s, 4xx answers %s "
                          "(e.g. %s: %s)\n",
                          j - i, ps_json_get_string(items[i], "list", "?"),
                          ps_json_get_string(items[i], "create", "?"),
                          ps_json_get_string(items[i], "errors_4xx", "?"),
                          ps_json_get_string(items[i], "key", "?"),
                          ps_json_get_string(items[i], "reason", "?"));
        i = j;
    }
    free(items);
}

static void latency_rows(ps_buf *b, const ps_json *lat)
{
    static const char *const keys[] = {"p50", "p90", "p99", "p99_9", "max"};
    static const char *const names[2][2] = {{"corrected", "corrected  "},
                                            {"uncorrected", "uncorrected"}};
    ps_buf_puts(b, "  latency ms       p50       p90       p99     p99.9       max\n");
    for (int i = 0; i < 2; i++) {
        const ps_json *o = ps_json_get(lat, names[i][0]);
        ps_buf_printf(b, "  %s", names[i][1]);
        bool none = ps_json_get_int(o, "count", -1) == 0;
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            const ps_json *v = ps_json_get(o, keys[k]);
            if (!none && v && v->type == PS_JSON_NUMBER)
                ps_buf_printf(b, " %9.3f", v->d / 1e3);
            else
                ps_buf_printf(b, " %9s", "-");
        }
        ps_buf_putc(b, '\n');
    }
}

int ps_report_console_load(const ps_json *doc, FILE *out, const ps_load_console_options *opts,
                           ps_error *err)
{
    static const ps_load_console_options dflt = {0};
    if (!opts) opts = &dflt;
    if (!doc || doc->type != PS_JSON_OBJECT)
        return ps_error_set(err, "console report: the load summary is not a JSON object");
    ps_buf b = PS_BUF_INIT;
    const ps_json *params = ps_json_get(doc, "parameters");
    const char *model = ps_json_get_string(params, "model", "?");
    double dur = ps_json_get_number(doc, "duration_s", 0);
    long long answered = (long long)ps_json_get_int(doc, "answered", 0);
    ps_buf_printf(
        &b, "%spetstore-load:%s %lld requests in %.2f s, %.1f answered/s (%s model, %s engine)\n",
        col(opts, C_BOLD), col(opts, C_RESET), (long long)ps_json_get_int(doc, "scheduled", 0), dur,
        dur > 0 ? (double)answered / dur : 0.0, model, ps_json_get_string(params, "engine", "?"));
    if (strcmp(model, "open") == 0) rate_line(&b, doc);
    generator_line(&b, doc, opts);
    const ps_json *errs = ps_json_get(doc, "errors");
    ps_buf_printf(&b,
                  "  answered %lld, failed %lld, timed out %lld; 429 responses %lld; "
                  "errors connect %lld read %lld timeout %lld\n",
                  answered, (long long)ps_json_get_int(doc, "failed", 0),
                  (long long)ps_json_get_int(doc, "timed_out", 0),
                  (long long)ps_json_get_int(ps_json_get(doc, "status"), "429", 0),
                  (long long)ps_json_get_int(errs, "connect", 0),
                  (long long)ps_json_get_int(errs, "read", 0),
                  (long long)ps_json_get_int(errs, "timeout", 0));
    latency_rows(&b, ps_json_get(doc, "latency_us"));
    capacity_lines(&b, doc, "plans", "plan");
    capacity_lines(&b, doc, "groups", "group");
    if (opts->first_failure) ps_buf_printf(&b, "  first failure: %s\n", opts->first_failure);

    const ps_json *lim = ps_json_get(doc, "limits");
    const ps_json *viol = ps_json_get(lim, "violations");
    for (size_t i = 0; viol && viol->type == PS_JSON_ARRAY && i < viol->count; i++) {
        bool warning =
            strcmp(ps_json_get_string(viol->items[i], "severity", "error"), "warning") == 0;
        ps_buf_printf(&b, "  %s%s%s: %s\n", col(opts, warning ? "" : C_RED),
                      warning ? "warning" : "LIMIT VIOLATION", col(opts, C_RESET),
                      ps_json_get_string(viol->items[i], "message", "?"));
    }
    const ps_json *checked = ps_json_get(params, "verify_limits");
    if (checked && checked->type == PS_JSON_BOOL && checked->boolean) {
        const char *v = ps_json_get_string(lim, "verdict", "not_checked");
        ps_buf_printf(&b, "  limits: %s (%lld windows checked",
                      !strcmp(v, "fail")            ? "FAIL"
                      : !strcmp(v, "pass")          ? "pass"
                      : !strcmp(v, "not_exercised") ? "NOT EXERCISED"
                                                    : "not checked",
                      (long long)ps_json_get_int(lim, "windows", 0));
        if (ps_json_get(lim, "windows_filled"))
            ps_buf_printf(&b, ", %lld reached their limit",
                          (long long)ps_json_get_int(lim, "windows_filled", 0));
        ps_buf_puts(&b, ")\n");
        /* which answers counted (spec section 8 rule 4 leaves it open), and why */
        counting_lines(&b, ps_json_get(lim, "counting"));
    }

    const ps_json *eb = ps_json_get(doc, "error_budget");
    const ps_json *eb_ok = ps_json_get(eb, "passed");
    if (eb_ok && eb_ok->type == PS_JSON_BOOL && !eb_ok->boolean)
        ps_buf_printf(&b, "  %serror budget: FAIL%s: error rate %.2f%% over the budget of %.2f%%\n",
                      col(opts, C_RED), col(opts, C_RESET),
                      100.0 * ps_json_get_number(eb, "error_rate", 0),
                      100.0 * ps_json_get_number(eb, "budget", 0));
    const ps_json *th = ps_json_get(doc, "thresholds");
    if (th && th->type == PS_JSON_ARRAY && th->count) {
        int width = 0;
        for (size_t i = 0; i < th->count; i++) {
            size_t n = strlen(ps_json_get_string(th->items[i], "expression", "?"));
            if ((int)n > width) width = n > 60 ? 60 : (int)n;
        }
        ps_buf_puts(&b, "  thresholds:\n");
        for (size_t i = 0; i < th->count; i++) {
            ps_buf_puts(&b, "    ");
            ps_report_load_threshold_line(&b, th->items[i], width, opts);
            ps_buf_putc(&b, '\n');
        }
    }
    const char *verdict = ps_json_get_string(doc, "verdict", NULL);
    const char *aborted = ps_json_get_string(doc, "aborted", NULL);
    if (verdict && aborted)
        ps_buf_printf(&b, "  %sverdict: %s (exit %lld): %s%s\n", col(opts, C_RED), verdict,
                      (long long)ps_json_get_int(doc, "exit_code", 3), aborted, col(opts, C_RESET));

    int rc = 0;
    if (b.len && fwrite(b.data, 1, b.len, out) != b.len)
        rc = ps_error_set(err, "console report: write failed");
    ps_buf_free(&b);
    return rc;
}
