/* test_html_numbers.c - the numbers in the HTML reports are the numbers of
 * the JSON summary they were drawn from: every plotted point (its data-x/y
 * and where it was drawn on the axes), the latency table and the conformance
 * counts are read back out of the HTML and compared with the JSON.
 *
 * Usage: test_html_numbers [load.json conform.json] (defaults: the fixtures),
 * so the same test can be pointed at the JSON of a real run. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/json.h"
#include "harness.h"
#include "reports/html_report.h"

static ps_json *load_json(const char *path)
{
    ps_buf text = PS_BUF_INIT;
    ps_error err = {{0}};
    ps_json *doc = NULL;
    if (ps_buf_read_file(&text, path) != 0)
        fprintf(stderr, "cannot read %s\n", path);
    else if (!(doc = ps_json_parse(text.data, text.len, NULL, &err)))
        fprintf(stderr, "%s: %s\n", path, err.message);
    ps_buf_free(&text);
    return doc;
}

static char *render(int (*fn)(const ps_json *, FILE *, ps_error *), const ps_json *doc)
{
    char *html = NULL;
    size_t n = 0;
    ps_error err = {{0}};
    FILE *f = open_memstream(&html, &n);
    int rc = fn(doc, f, &err);
    fclose(f);
    if (rc != 0) {
        fprintf(stderr, "render: %s\n", err.message);
        free(html);
        return NULL;
    }
    return html;
}

/* Value of attribute name in the element starting at elem (up to its '>'); malloc'd or NULL. */
static char *attr(const char *elem, const char *name)
{
    const char *end = strchr(elem, '>');
    char key[64];
    snprintf(key, sizeof key, " %s=\"", name);
    const char *p = strstr(elem, key);
    if (!p || (end && p > end)) return NULL;
    p += strlen(key);
    const char *q = strchr(p, '"');
    return q ? strndup(p, (size_t)(q - p)) : NULL;
}

static double attr_num(const char *elem, const char *name)
{
    char *s = attr(elem, name);
    double v = s ? strtod(s, NULL) : NAN;
    free(s);
    return v;
}

/* Splits a space- (and comma-) separated number list. */
static size_t parse_list(const char *s, double *out, size_t cap)
{
    size_t n = 0;
    char *end;
    while (s && *s && n < cap) {
        double v = strtod(s, &end);
        if (end == s) break;
        out[n++] = v;
        s = end;
        while (*s == ' ' || *s == ',')
            s++;
    }
    return n;
}

typedef struct plot_geo {
    const char *svg;
    char xscale[16], yscale[16];
    double xmin, xmax, ymin, ymax, left, right, top, bottom;
} plot_geo;

static bool find_plot(const char *html, const char *id, plot_geo *g)
{
    char key[64];
    snprintf(key, sizeof key, "data-plot=\"%s\"", id);
    const char *p = strstr(html, key);
    if (!p) return false;
    while (p > html && strncmp(p, "<svg", 4) != 0)
        p--;
    g->svg = p;
    char *xs = attr(p, "data-x-scale");
    snprintf(g->xscale, sizeof g->xscale, "%s", xs ? xs : "");
    free(xs);
    xs = attr(p, "data-y-scale");
    snprintf(g->yscale, sizeof g->yscale, "%s", xs ? xs : "");
    free(xs);
    g->xmin = attr_num(p, "data-x-min"), g->xmax = attr_num(p, "data-x-max");
    g->ymin = attr_num(p, "data-y-min"), g->ymax = attr_num(p, "data-y-max");
    g->left = attr_num(p, "data-left"), g->right = attr_num(p, "data-right");
    g->top = attr_num(p, "data-top"), g->bottom = attr_num(p, "data-bottom");
    return true;
}

/* Where a value should have been drawn, computed independently of svg.c. */
static double expect_px(const plot_geo *g, double x)
{
    if (strcmp(g->xscale, "percentile") == 0) {
        double tmax = log10(1 / (1 - g->xmax));
        double t = x >= 1 ? tmax : log10(1 / (1 - x));
        if (t > tmax) t = tmax;
        return g->left + t / tmax * (g->right - g->left);
    }
    return g->left + (x - g->xmin) / (g->xmax - g->xmin) * (g->right - g->left);
}

static double expect_py(const plot_geo *g, double y)
{
    if (strcmp(g->yscale, "log") == 0)
        return g->bottom - (log10(y) - log10(g->ymin)) / (log10(g->ymax) - log10(g->ymin)) *
                               (g->bottom - g->top);
    return g->bottom - (y - g->ymin) / (g->ymax - g->ymin) * (g->bottom - g->top);
}

#define MAXPTS 100000

/* Appends the data-x, data-y and points lists of every polyline of series
 * key inside plot g (a series with gaps is several polylines) to the arrays;
 * returns the number of polylines; nx, ny and np get the counts read. */
static size_t series_lists(const plot_geo *g, const char *key, double *dx, size_t *nx, double *dy,
                           size_t *ny, double *pp, size_t *np)
{
    char want[128];
    snprintf(want, sizeof want, "data-series=\"%s\"", key);
    const char *end = strstr(g->svg, "</svg>");
    size_t pieces = 0;
    *nx = *ny = *np = 0;
    for (const char *p = g->svg; (p = strstr(p, want)) != NULL && p < end; p += strlen(want)) {
        const char *e = p;
        while (strncmp(e, "<polyline", 9) != 0)
            e--;
        char *sx = attr(e, "data-x"), *sy = attr(e, "data-y"), *pts = attr(e, "points");
        *nx += parse_list(sx, dx + *nx, MAXPTS - *nx);
        *ny += parse_list(sy, dy + *ny, MAXPTS - *ny);
        *np += parse_list(pts, pp + *np, 2 * MAXPTS - *np);
        free(sx), free(sy), free(pts);
        pieces++;
    }
    return pieces;
}

/* Checks one series of plot g against the expected points (NaN y = not drawn). */
static void check_series(const plot_geo *g, const char *key, const double *ex, const double *ey,
                         size_t n)
{
    static double dx[MAXPTS], dy[MAXPTS], pp[2 * MAXPTS];
    size_t nx, ny, np;
    size_t pieces = series_lists(g, key, dx, &nx, dy, &ny, pp, &np);
    CHECK(pieces > 0);
    if (!pieces) {
        fprintf(stderr, "series %s not found\n", key);
        return;
    }
    size_t k = 0, bad = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(ex[i]) || !isfinite(ey[i])) continue;
        if (k >= nx || k >= ny || 2 * k + 1 >= np) {
            bad++;
            break;
        }
        /* the numbers themselves, exactly */
        if (dx[k] != ex[i] || dy[k] != ey[i]) bad++;
        /* and where they were drawn, to the 0.1 px the writer prints */
        if (fabs(pp[2 * k] - expect_px(g, ex[i])) > 0.051 ||
            fabs(pp[2 * k + 1] - expect_py(g, ey[i])) > 0.051) {
            if (bad < 3)
                fprintf(stderr, "%s point %zu (%g,%g) drawn at %g,%g, expected %g,%g\n", key, k,
                        ex[i], ey[i], pp[2 * k], pp[2 * k + 1], expect_px(g, ex[i]),
                        expect_py(g, ey[i]));
            bad++;
        }
        k++;
    }
    CHECK_INT(bad, 0);
    CHECK_INT(nx, k);
    CHECK_INT(ny, k);
    CHECK_INT(np, 2 * k);
    CHECK(k > 0);
}

static void check_spectrum(const char *html, const ps_json *doc)
{
    plot_geo g;
    CHECK(find_plot(html, "spectrum", &g));
    CHECK_STR(g.xscale, "percentile");
    static const char *const kinds[] = {"corrected", "uncorrected"};
    for (int k = 0; k < 2; k++) {
        const ps_json *rows = ps_json_path(doc, "percentile_spectrum")
                                  ? ps_json_get(ps_json_get(doc, "percentile_spectrum"), kinds[k])
                                  : NULL;
        if (!rows || rows->type != PS_JSON_ARRAY) {
            fprintf(stderr, "no %s spectrum in the JSON\n", kinds[k]);
            CHECK(rows != NULL);
            continue;
        }
        double *x = calloc(rows->count + 1, sizeof *x), *y = calloc(rows->count + 1, sizeof *y);
        for (size_t i = 0; i < rows->count; i++) {
            const ps_json *r = rows->items[i];
            y[i] = r->count >= 2 ? r->items[0]->d : NAN;
            x[i] = r->count >= 2 ? r->items[1]->d : NAN;
        }
        check_series(&g, kinds[k], x, y, rows->count);
        free(x), free(y);
    }
}

static void check_intervals(const char *html, const ps_json *doc)
{
    static const struct {
        const char *plot, *path;
    } series[] = {{"throughput", "throughput_rps"},
                  {"latency", "p50_us"},
                  {"latency", "p90_us"},
                  {"latency", "p99_us"},
                  {"latency", "max_us"},
                  {"status", "status_classes.2xx"},
                  {"status", "status_classes.3xx"},
                  {"status", "status_classes.4xx"},
                  {"status", "status_classes.5xx"},
                  {"status", "status_classes.429"},
                  {"status", "status_classes.errors"}};
    const ps_json *iv = ps_json_get(doc, "intervals");
    CHECK(iv && iv->type == PS_JSON_ARRAY && iv->count > 0);
    if (!iv || iv->type != PS_JSON_ARRAY || !iv->count) return;
    double *x = calloc(iv->count, sizeof *x), *y = calloc(iv->count, sizeof *y), max_len = 0;
    for (size_t i = 0; i < iv->count; i++) {
        double len = ps_json_get_number(iv->items[i], "length_s", 0);
        if (len > max_len) max_len = len;
    }
    for (size_t s = 0; s < sizeof series / sizeof series[0]; s++) {
        plot_geo g;
        CHECK(find_plot(html, series[s].plot, &g));
        bool present = false;
        for (size_t i = 0; i < iv->count; i++) {
            const ps_json *v = ps_json_path(iv->items[i], series[s].path);
            /* a status class is drawn when some interval has a response of it */
            if (!strcmp(series[s].plot, "status"))
                present |= v && v->type == PS_JSON_NUMBER && v->d != 0;
            else
                present |= v != NULL;
        }
        if (!present) { /* a class without responses (or not reported) is not drawn */
            char key[96];
            snprintf(key, sizeof key, "data-series=\"%s\"", series[s].path);
            CHECK(strstr(html, key) == NULL);
            continue;
        }
        double run_end = 0;
        for (size_t i = 0; i < iv->count; i++) {
            const ps_json *t = ps_json_get(iv->items[i], "t_s");
            const ps_json *v = ps_json_path(iv->items[i], series[s].path);
            double len = ps_json_get_number(iv->items[i], "length_s", 0);
            /* each interval is drawn at its midpoint, t + length/2 */
            x[i] = t && t->type == PS_JSON_NUMBER ? t->d + len / 2 : NAN;
            if (t && t->type == PS_JSON_NUMBER && t->d + len > run_end) run_end = t->d + len;
            /* not drawn: partial intervals, and latency of intervals without requests */
            if (ps_json_get_number(iv->items[i], "length_s", 1) < max_len / 2) x[i] = NAN;
            y[i] = v && v->type == PS_JSON_NUMBER ? v->d : NAN;
            if (!strcmp(series[s].plot, "latency") &&
                ps_json_get_number(iv->items[i], "requests", 1) == 0)
                y[i] = NAN;
            /* a log axis cannot place 0: that point is left out, not a gap */
            if (!strcmp(g.yscale, "log") && isfinite(y[i]) && y[i] <= 0) x[i] = NAN;
        }
        check_series(&g, series[s].path, x, y, iv->count);
        /* latency lines break at every drawn-time interval without a measurement:
         * one polyline per unbroken run of measured intervals */
        if (!strcmp(series[s].plot, "latency")) {
            size_t want = 0;
            bool in_piece = false;
            for (size_t i = 0; i < iv->count; i++) {
                if (!isfinite(x[i])) continue;
                if (isfinite(y[i]) && !in_piece) want++;
                in_piece = isfinite(y[i]);
            }
            static double dx[MAXPTS], dy[MAXPTS], pp[2 * MAXPTS];
            size_t nx, ny, np;
            size_t got = series_lists(&g, series[s].path, dx, &nx, dy, &ny, pp, &np);
            if (got != (want ? want : 1))
                fprintf(stderr, "%s: %zu line pieces, expected %zu\n", series[s].path, got, want);
            CHECK_INT(got, want ? want : 1);
        }
        /* the time axis spans the whole run: from 0 to the end of the last interval */
        if (g.xmin > 0 || g.xmax < run_end)
            fprintf(stderr, "%s: x axis [%g, %g] does not cover the run [0, %g]\n", series[s].plot,
                    g.xmin, g.xmax, run_end);
        CHECK(g.xmin <= 0 && g.xmax >= run_end);
        /* and ends there (a tight axis), not at the next nice tick */
        CHECK(fabs(g.xmax - run_end) < 1e-9);
        /* no line runs along the top of the frame */
        double top = -INFINITY;
        for (size_t i = 0; i < iv->count; i++)
            if (isfinite(x[i]) && isfinite(y[i]) && y[i] > top) top = y[i];
        if (isfinite(top) && top > 0) CHECK(g.ymax > top);
    }
    free(x), free(y);
}

/* intervals[] latencies are the corrected ones (docs/report-json.md): the
 * latency plot's caption (its <title>, aria-label and visible heading) must
 * say so and must not call them uncorrected. */
static void check_interval_latency_caption(const char *html)
{
    plot_geo g;
    CHECK(find_plot(html, "latency", &g));
    if (!find_plot(html, "latency", &g)) return;
    const char *end = strstr(g.svg, "</svg>");
    CHECK(end != NULL);
    if (!end) return;
    char *label = attr(g.svg, "aria-label");
    CHECK(label && strstr(label, "(corrected)") && !strstr(label, "uncorrected"));
    const char *t = strstr(g.svg, "<title>"), *te = t ? strstr(t, "</title>") : NULL;
    CHECK(t && te && te < end);
    if (t && te) {
        char *title = strndup(t + 7, (size_t)(te - t - 7));
        CHECK(title && label && strcmp(title, label) == 0);
        free(title);
    }
    const char *h = strstr(g.svg, "<text class=\"pt\"");
    const char *hs = h ? strchr(h, '>') : NULL, *he = hs ? strstr(hs, "</text>") : NULL;
    CHECK(hs && he && he < end);
    if (hs && he) {
        char *heading = strndup(hs + 1, (size_t)(he - hs - 1));
        CHECK(heading && label && strcmp(heading, label) == 0);
        free(heading);
    }
    free(label);
}

static void check_latency_table(const char *html, const ps_json *doc)
{
    static const char *const keys[] = {"p50",   "p75",    "p90", "p95", "p99",
                                       "p99_9", "p99_99", "max", "mean"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        char row[64], path[64];
        snprintf(row, sizeof row, "<tr data-key=\"%s\">", keys[i]);
        const char *r = strstr(html, row);
        CHECK(r != NULL);
        if (!r) continue;
        const char *c1 = strstr(r, "<td"), *c2 = c1 ? strstr(c1 + 3, "<td") : NULL;
        snprintf(path, sizeof path, "latency_us.corrected.%s", keys[i]);
        const ps_json *vc = ps_json_path(doc, path);
        snprintf(path, sizeof path, "latency_us.uncorrected.%s", keys[i]);
        const ps_json *vu = ps_json_path(doc, path);
        /* a latency that measured nothing (count 0, or null) is a dash, not a number */
        bool nc = ps_json_get_number(ps_json_path(doc, "latency_us.corrected"), "count", 1) == 0;
        bool nu = ps_json_get_number(ps_json_path(doc, "latency_us.uncorrected"), "count", 1) == 0;
        if (vc && (nc || vc->type == PS_JSON_NULL))
            CHECK(c1 && strncmp(c1, "<td class=\"n none\"", 19) == 0);
        else if (vc)
            CHECK(c1 && attr_num(c1, "data-us") == vc->d);
        if (vu && (nu || vu->type == PS_JSON_NULL))
            CHECK(c2 && strncmp(c2, "<td class=\"n none\"", 19) == 0);
        else if (vu)
            CHECK(c2 && attr_num(c2, "data-us") == vu->d);
    }
}

static void check_conform_counts(const char *html, const ps_json *doc)
{
    static const char *const cards[] = {"passed", "failed", "warnings", "not_run",
                                        "not_applicable"};
    static const char *const card_ids[] = {"passed", "failed", "warning", "not_run",
                                           "not_applicable"};
    for (int i = 0; i < 5; i++) {
        char want[96];
        double n = ps_json_get_number(ps_json_get(doc, "summary"), cards[i], -1);
        if (i == 4 && n < 0) continue; /* a document older than the not_applicable member */
        CHECK(n >= 0);
        snprintf(want, sizeof want, "data-count=\"%s\"><b>%.0f</b>", card_ids[i], n);
        CHECK(n >= 1000 || strstr(html, want) != NULL); /* >= 1000 is grouped with a thin space */
    }
    const ps_json *suites = ps_json_get(doc, "suites");
    size_t checks = 0;
    for (size_t i = 0; suites && i < suites->count; i++) {
        const ps_json *cs = ps_json_get(suites->items[i], "checks");
        for (size_t j = 0; cs && j < cs->count; j++, checks++) {
            const char *id = ps_json_get_string(cs->items[j], "id", "");
            const char *st = ps_json_get_string(cs->items[j], "status", "");
            const ps_json *applicable = ps_json_get(cs->items[j], "applicable");
            /* a not-run check with nothing to judge is a row of its own kind */
            if (strcmp(st, "not_run") == 0 && applicable && applicable->type == PS_JSON_BOOL &&
                !applicable->boolean)
                st = "not_applicable";
            char want[512], want_open[512];
            ps_buf esc = PS_BUF_INIT;
            ps_buf_html_escape(&esc, id, strlen(id));
            snprintf(want, sizeof want, "data-status=\"%s\" id=\"%s\"", st,
                     esc.data ? esc.data : "");
            /* failed checks start open */
            snprintf(want_open, sizeof want_open, "data-status=\"%s\" open id=\"%s\"", st,
                     esc.data ? esc.data : "");
            bool shown = strstr(html, want) || strstr(html, want_open);
            if (!shown) fprintf(stderr, "check %s (%s) not shown\n", id, st);
            CHECK(shown);
            ps_buf_free(&esc);
        }
    }
    size_t rows = 0;
    for (const char *p = html; (p = strstr(p, "class=\"check\"")) != NULL; p++)
        rows++;
    CHECK_INT(rows, checks);
}

/* The value a card shows (its data-value), NaN when the card is absent. */
static double card_value(const char *html, const char *key)
{
    char want[96];
    snprintf(want, sizeof want, "data-card=\"%s\"", key);
    const char *p = strstr(html, want);
    while (p && p > html && strncmp(p, "<div", 4) != 0)
        p--;
    return p ? attr_num(p, "data-value") : NAN;
}

/* Cards and thresholds say what the JSON says: the sent rate is scheduled
 * over duration_s, skipped-for-Retry-After and 429s are the JSON's counts,
 * each threshold row carries the JSON's actual and bound; the percentile
 * plot is on a log axis exactly when the maximum is over 10x the median. */
static void check_cards_and_thresholds(const char *html, const ps_json *doc)
{
    const char *model = ps_json_get_string(ps_json_get(doc, "parameters"), "model", "");
    double dur = ps_json_get_number(doc, "duration_s", 0);
    if (strcmp(model, "open") == 0 && dur > 0) {
        CHECK(fabs(card_value(html, "sent_rps") - ps_json_get_number(doc, "scheduled", -1) / dur) <
              1e-6);
        CHECK(card_value(html, "skipped_retry_after") ==
              ps_json_get_number(doc, "skipped_retry_after", -1));
        CHECK(strstr(html, "data-rate-note") != NULL);
    }
    CHECK(card_value(html, "status_429") ==
          ps_json_get_number(ps_json_get(doc, "status"), "429", 0));
    const ps_json *th = ps_json_get(doc, "thresholds");
    const char *row = strstr(html, "<table class=\"thresholds\">");
    for (size_t i = 0; th && i < th->count; i++) {
        const ps_json *t = th->items[i];
        row = row ? strstr(row + 1, "<tr data-passed=") : NULL;
        CHECK(row != NULL);
        if (!row) break;
        char *passed = attr(row, "data-passed");
        CHECK_STR(passed ? passed : "", ps_json_get(t, "passed")->boolean ? "true" : "false");
        free(passed);
        bool us = ps_json_get(t, "actual_us") != NULL;
        const char *a = strstr(row, us ? "data-us=" : "data-fraction=");
        const char *b = a ? strstr(a + 1, us ? "data-us=" : "data-fraction=") : NULL;
        CHECK(a && b);
        if (!a || !b) continue;
        CHECK(strtod(strchr(a, '"') + 1, NULL) ==
              ps_json_get_number(t, us ? "actual_us" : "actual", NAN));
        CHECK(strtod(strchr(b, '"') + 1, NULL) ==
              ps_json_get_number(t, us ? "bound_us" : "bound", NAN));
    }
    /* log axis rule, from the corrected spectrum */
    const ps_json *rows = ps_json_get(ps_json_get(doc, "percentile_spectrum"), "corrected");
    double median = NAN, max = 0;
    for (size_t i = 0; rows && i < rows->count; i++) {
        double v = rows->items[i]->items[0]->d, p = rows->items[i]->items[1]->d;
        if (isnan(median) && p >= 0.5) median = v;
        if (v > max) max = v;
    }
    plot_geo g;
    if (isfinite(median) && find_plot(html, "spectrum", &g)) {
        if (max > 10 * median)
            fprintf(stderr, "spectrum: max %g > 10 x median %g: log axis\n", max, median);
        CHECK_STR(g.yscale, max > 10 * median ? "log" : "linear");
    }
}

int main(int argc, char **argv)
{
    const char *load_path = argc > 2 ? argv[1] : PS_REPORT_FIXTURES "/load-sample.json";
    const char *conform_path = argc > 2 ? argv[2] : PS_REPORT_FIXTURES "/conform-sample.json";
    ps_json *load = load_json(load_path), *conform = load_json(conform_path);
    CHECK(load && conform);
    char *lh = load ? render(ps_report_html_load, load) : NULL;
    char *ch = conform ? render(ps_report_html_conform, conform) : NULL;
    CHECK(lh && ch);
    if (lh) {
        check_spectrum(lh, load);
        fprintf(stderr, "spectrum checked\n");
        check_intervals(lh, load);
        fprintf(stderr, "intervals checked\n");
        check_interval_latency_caption(lh);
        fprintf(stderr, "interval latency caption checked\n");
        check_latency_table(lh, load);
        fprintf(stderr, "latency table checked\n");
        check_cards_and_thresholds(lh, load);
        fprintf(stderr, "cards and thresholds checked\n");
    }
    if (ch) {
        check_conform_counts(ch, conform);
        fprintf(stderr, "conformance counts checked\n");
    }
    free(lh), free(ch);
    ps_json_free(load), ps_json_free(conform);
    return TEST_EXIT();
}
