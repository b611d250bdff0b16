/* report_search.c - a search's steps on the console and in HTML. */
#include "reports/report_search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reports/html_common.h"
#include "reports/svg.h"

static int by_rate(const void *a, const void *b)
{
    double x = ps_json_get_number(*(const ps_json *const *)a, "rate", 0);
    double y = ps_json_get_number(*(const ps_json *const *)b, "rate", 0);
    return x < y ? -1 : x > y;
}

/* The steps sorted by target rate (borrowed from the document; free the
 * array). */
static const ps_json **sorted_steps(const ps_json *search, size_t *n)
{
    const ps_json *steps = ps_json_get(search, "steps");
    *n = steps && steps->type == PS_JSON_ARRAY ? steps->count : 0;
    const ps_json **s = calloc(*n + 1, sizeof *s);
    if (!s) abort();
    for (size_t i = 0; i < *n; i++)
        s[i] = steps->items[i];
    qsort(s, *n, sizeof *s, by_rate);
    return s;
}

static const char *result_text(const char *result)
{
    if (!strcmp(result, "found")) return "found";
    if (!strcmp(result, "all-passed"))
        return "every rate up to --to passed: the capacity is higher";
    if (!strcmp(result, "first-step-failed")) return "even the first step failed: lower --from";
    if (!strcmp(result, "generator-saturated"))
        return "the generator saturated before the target failed: no capacity claimed beyond it";
    if (!strcmp(result, "keys-exhausted"))
        return "every mix the keys allow passed: the capacity is higher, no answer (more keys)";
    return "a step was unreachable or interrupted";
}

int ps_report_console_search(const ps_json *doc, FILE *out, const ps_load_console_options *opts,
                             ps_error *err)
{
    const ps_json *search = ps_json_get(doc, "search");
    if (!search || search->type != PS_JSON_OBJECT)
        return ps_error_set(err, "console report: no search member");
    bool color = opts && opts->color;
    size_t n;
    const ps_json **s = sorted_steps(search, &n);
    ps_buf b = PS_BUF_INIT;
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        double p99 = ps_json_get_number(ps_json_get(s[i], "latency_us"), "p99", 0);
        if (p99 > worst) worst = p99;
    }
    /* p99 against the target rate: one bar per step, log-scaled from 100 us
     * to the worst p99, so both the flat part and the knee show. */
    ps_buf_puts(&b, "petstore-load search: p99 latency against the target rate\n");
    double lo = log10(100.0), hi = log10(worst > 1000 ? worst : 1000);
    for (size_t i = 0; i < n; i++) {
        const ps_json *st = s[i];
        double p99 = ps_json_get_number(ps_json_get(st, "latency_us"), "p99", 0);
        bool passed = ps_json_get(st, "passed") && ps_json_get(st, "passed")->boolean;
        int len = p99 <= 100 ? 1 : (int)lrint(1 + 39 * (log10(p99) - lo) / (hi - lo));
        if (len > 40) len = 40;
        ps_buf_printf(&b, "  %11.1f/s |%s", ps_json_get_number(st, "rate", 0),
                      color ? (passed ? "\033[32m" : "\033[31m") : "");
        for (int k = 0; k < len; k++)
            ps_buf_putc(&b, passed ? '#' : 'x');
        ps_buf_printf(&b, "%s%*s %10.3f ms  %.1f answered/s  %s\n", color ? "\033[0m" : "",
                      40 - len, "", p99 / 1e3, ps_json_get_number(st, "achieved_rps", 0),
                      passed ? "pass" : "FAIL");
    }
    const ps_json *max = ps_json_get(search, "max_rate");
    const ps_json *minf = ps_json_get(search, "min_failing_rate");
    const char *result = ps_json_get_string(search, "result", "?");
    ps_buf_printf(&b, "%s  result: %s", color ? "\033[1m" : "", result_text(result));
    if (max && max->type == PS_JSON_NUMBER)
        ps_buf_printf(&b, "; highest rate measured passing %.1f req/s", max->d);
    else
        ps_buf_puts(&b, "; no rate passed");
    if (minf && minf->type == PS_JSON_NUMBER)
        ps_buf_printf(&b, ", lowest failing %.1f req/s", minf->d);
    ps_buf_printf(&b, " (exit %lld)%s\n", (long long)ps_json_get_int(search, "exit_code", 0),
                  color ? "\033[0m" : "");
    const ps_json *cust = ps_json_get(search, "customers");
    for (size_t i = 0; cust && cust->type == PS_JSON_OBJECT && i < cust->count; i++)
        ps_buf_printf(&b, "    %s customers at that rate: %.0f\n", cust->keys[i],
                      cust->items[i]->type == PS_JSON_NUMBER ? cust->items[i]->d : 0);
    const ps_json *knee = ps_json_get(search, "knee");
    if (knee && knee->type == PS_JSON_OBJECT) {
        ps_buf_printf(&b, "  knee (%s), spread over the boundary's runs:\n",
                      ps_json_get_string(knee, "objective", "?"));
        static const char *const sides[] = {"highest_passing", "lowest_failing"};
        for (int k = 0; k < 2; k++) {
            const ps_json *side = ps_json_get(knee, sides[k]);
            ps_buf_printf(&b, "    %.1f/s: %lld of %lld runs passed, %.3f to %.3f ms\n",
                          ps_json_get_number(side, "rate", 0),
                          (long long)ps_json_get_int(side, "runs_passed", 0),
                          (long long)ps_json_get_int(side, "runs", 0),
                          ps_json_get_number(side, "figure_min_us", 0) / 1e3,
                          ps_json_get_number(side, "figure_max_us", 0) / 1e3);
        }
    }
    const char *keys_why = ps_json_get_string(search, "keys_why", NULL);
    if (keys_why) ps_buf_printf(&b, "  %s\n", keys_why);
    for (size_t i = 0; i < n; i++) {
        const char *why = ps_json_get_string(s[i], "why", NULL);
        if (why)
            ps_buf_printf(&b, "  %.1f/s failed: %s\n", ps_json_get_number(s[i], "rate", 0), why);
    }
    free(s);
    int rc = 0;
    if (fwrite(b.data, 1, b.len, out) != b.len)
        rc = ps_error_set(err, "console report: write failed");
    ps_buf_free(&b);
    return rc;
}

/* The knee with its spread (search.knee): each boundary step's runs. */
static void html_knee(ps_buf *b, const ps_json *knee)
{
    ps_buf_puts(b, "<p data-knee>Knee (");
    ps_html_esc(b, ps_json_get_string(knee, "objective", "?"));
    ps_buf_puts(b, "), spread over the boundary's runs:");
    static const char *const sides[] = {"highest_passing", "lowest_failing"};
    for (int k = 0; k < 2; k++) {
        const ps_json *side = ps_json_get(knee, sides[k]);
        ps_buf_puts(b, k ? "; " : " ");
        ps_html_number(b, ps_json_get_number(side, "rate", 0));
        ps_buf_printf(b, " req/s: %lld of %lld runs passed, ",
                      (long long)ps_json_get_int(side, "runs_passed", 0),
                      (long long)ps_json_get_int(side, "runs", 0));
        ps_html_latency_us(b, ps_json_get_number(side, "figure_min_us", NAN));
        ps_buf_puts(b, " to ");
        ps_html_latency_us(b, ps_json_get_number(side, "figure_max_us", NAN));
    }
    ps_buf_puts(b, ".</p>\n");
}

void ps_report_html_search(ps_buf *b, const ps_json *search)
{
    if (!search || search->type != PS_JSON_OBJECT) return;
    size_t n;
    const ps_json **s = sorted_steps(search, &n);
    ps_buf_puts(b, "<h2 id=\"search\">Capacity search</h2>\n<p data-search-result=\"");
    ps_html_esc(b, ps_json_get_string(search, "result", "?"));
    ps_buf_puts(b, "\">");
    ps_html_esc(b, result_text(ps_json_get_string(search, "result", "?")));
    const ps_json *max = ps_json_get(search, "max_rate");
    if (max && max->type == PS_JSON_NUMBER) {
        ps_buf_puts(b, ": highest rate measured passing <strong data-max-rate>");
        ps_html_number(b, max->d);
        ps_buf_puts(b, " req/s</strong>");
    }
    const ps_json *minf = ps_json_get(search, "min_failing_rate");
    if (minf && minf->type == PS_JSON_NUMBER) {
        ps_buf_puts(b, ", lowest failing ");
        ps_html_number(b, minf->d);
        ps_buf_puts(b, " req/s");
    }
    ps_buf_puts(b, ".</p>\n");
    const ps_json *knee = ps_json_get(search, "knee");
    if (knee && knee->type == PS_JSON_OBJECT) html_knee(b, knee);
    bool customers = n > 0 && ps_json_get(s[0], "customers");
    double *x = calloc(n + 1, sizeof *x), *p50 = calloc(n + 1, sizeof *x),
           *p99 = calloc(n + 1, sizeof *x), *ach = calloc(n + 1, sizeof *x);
    if (!x || !p50 || !p99 || !ach) abort();
    ps_buf_puts(b, "<table class=\"search-steps\">\n<thead><tr><th>target req/s</th><th>answered/s"
                   "</th><th>p50</th><th>p99</th><th>errors</th><th>generator</th>"
                   "<th>late p99</th>");
    ps_buf_puts(b, customers ? "<th>customers</th><th>result</th></tr></thead>\n<tbody>\n"
                             : "<th>result</th></tr></thead>\n<tbody>\n");
    for (size_t i = 0; i < n; i++) {
        const ps_json *st = s[i], *lat = ps_json_get(st, "latency_us");
        const ps_json *g = ps_json_get(st, "generator");
        bool passed = ps_json_get(st, "passed") && ps_json_get(st, "passed")->boolean;
        x[i] = ps_json_get_number(st, "rate", 0);
        p50[i] = ps_json_get_number(lat, "p50", NAN);
        p99[i] = ps_json_get_number(lat, "p99", NAN);
        ach[i] = ps_json_get_number(st, "achieved_rps", NAN);
        ps_buf_puts(b, "<tr data-step><td>");
        ps_html_number(b, x[i]);
        ps_buf_puts(b, "</td><td>");
        ps_html_number(b, ach[i]);
        ps_buf_puts(b, "</td><td>");
        ps_html_latency_us(b, p50[i]);
        ps_buf_puts(b, "</td><td>");
        ps_html_latency_us(b, p99[i]);
        ps_buf_puts(b, "</td><td>");
        ps_html_number(b, ps_json_get_number(st, "errors", 0));
        ps_buf_puts(b, "</td><td>");
        ps_html_esc(b, ps_json_get_string(g, "verdict", "?"));
        ps_buf_puts(b, "</td><td>");
        ps_html_latency_us(b, ps_json_get_number(ps_json_get(g, "lateness_us"), "p99", 0));
        if (customers) {
            const ps_json *c = ps_json_get(st, "customers");
            ps_buf_puts(b, "</td><td data-customers>");
            for (size_t k = 0; c && c->type == PS_JSON_OBJECT && k < c->count; k++) {
                ps_buf_puts(b, k ? ", " : "");
                ps_html_esc(b, c->keys[k]);
                ps_buf_printf(b, " %.0f", c->items[k]->type == PS_JSON_NUMBER ? c->items[k]->d : 0);
            }
        }
        ps_buf_printf(b, "</td><td class=\"%s\">", passed ? "pass" : "fail");
        ps_buf_puts(b, passed ? "pass" : "fail: ");
        if (!passed) ps_html_esc(b, ps_json_get_string(st, "why", ""));
        ps_buf_puts(b, "</td></tr>\n");
    }
    ps_buf_puts(b, "</tbody></table>\n");
    /* the objective's line, across the rates measured */
    double bx[2] = {INFINITY, -INFINITY}, by[2];
    for (size_t i = 0; i < n; i++) {
        if (x[i] < bx[0]) bx[0] = x[i];
        if (x[i] > bx[1]) bx[1] = x[i];
    }
    by[0] = by[1] = ps_json_get_number(knee, "bound_us", NAN);
    ps_svg_series lat_series[] = {
        {.name = "p50", .key = "p50", .x = x, .y = p50, .n = n, .color = 0},
        {.name = "p99", .key = "p99", .x = x, .y = p99, .n = n, .color = 1},
        {.name = ps_json_get_string(knee, "objective", "objective"),
         .key = "objective",
         .x = bx,
         .y = by,
         .n = 2,
         .color = 3,
         .dashed = true},
    };
    ps_svg_plot lp = {
        .id = "search-latency",
        .title = "Latency against the target rate",
        .x = {.scale = PS_SVG_LINEAR, .label = "target rate", .unit = "req/s", .from_zero = true},
        .y = {.scale = PS_SVG_LOG, .label = "latency", .unit = "ms", .divisor = 1000},
        .series = lat_series,
        .nseries = isfinite(by[0]) && n > 0 ? 3 : 2};
    ps_svg_plot_write(b, &lp);
    ps_svg_series rate_series[] = {
        {.name = "target", .key = "target", .x = x, .y = x, .n = n, .color = 2, .dashed = true},
        {.name = "answered", .key = "answered", .x = x, .y = ach, .n = n, .color = 0},
    };
    ps_svg_plot rp = {
        .id = "search-throughput",
        .title = "Answered against the target rate",
        .x = {.scale = PS_SVG_LINEAR, .label = "target rate", .unit = "req/s", .from_zero = true},
        .y = {.scale = PS_SVG_LINEAR, .label = "answered", .unit = "req/s", .from_zero = true},
        .series = rate_series,
        .nseries = 2};
    ps_svg_plot_write(b, &rp);
    free(x);
    free(p50);
    free(p99);
    free(ach);
    free(s);
}
