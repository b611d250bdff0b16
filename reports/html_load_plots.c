/* html_load_plots.c - the load report's plots (see html_load_plots.h). */
#include "reports/html_load_plots.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "reports/html_common.h"
#include "reports/svg.h"

/* Latency axis unit from the largest value drawn, so ticks read "2.5 ms", not "2500 µs". */
static void latency_unit(double max_us, double *div, const char **unit)
{
    if (max_us >= 1e6)
        *div = 1e6, *unit = "s";
    else if (max_us >= 1e3)
        *div = 1e3, *unit = "ms";
    else
        *div = 1, *unit = "\xC2\xB5s";
}

/* The y axis of a plot whose highest point is max: from 0, with headroom
 * above max (a line on the frame is hard to see); log_y (latency spanning
 * too much for a linear axis) puts it on a log scale. */
static ps_svg_axis value_axis(bool log_y, const char *label, const char *unit, double div,
                              double max)
{
    return (ps_svg_axis){.scale = log_y ? PS_SVG_LOG : PS_SVG_LINEAR,
                         .label = log_y ? "latency, log scale" : label,
                         .unit = unit,
                         .divisor = div,
                         .from_zero = true,
                         .cover = max > 0,
                         .cover_lo = 0,
                         .cover_hi = max * 1.05};
}

/* Fills x/y from spectrum rows [value_us, percentile, total_count]; rows of
 * another shape become NaN and are skipped by the plot writer. */
static size_t spectrum_points(const ps_json *rows, double **x, double **y, double *max_us)
{
    *x = *y = NULL;
    if (!rows || rows->type != PS_JSON_ARRAY || !rows->count) return 0;
    *x = malloc(rows->count * sizeof **x);
    *y = malloc(rows->count * sizeof **y);
    if (!*x || !*y) abort(); /* as ps_buf does: nothing useful to do without memory */
    for (size_t i = 0; i < rows->count; i++) {
        const ps_json *r = rows->items[i];
        (*x)[i] = (*y)[i] = NAN;
        if (r->type != PS_JSON_ARRAY || r->count < 2 || r->items[0]->type != PS_JSON_NUMBER ||
            r->items[1]->type != PS_JSON_NUMBER)
            continue;
        (*y)[i] = r->items[0]->d;
        (*x)[i] = r->items[1]->d;
        if (isfinite((*y)[i]) && (*y)[i] > *max_us) *max_us = (*y)[i];
    }
    return rows->count;
}

/* The latency at the first spectrum row at or past the 50th percentile; NaN: none. */
static double median_of(const double *x, const double *y, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (isfinite(x[i]) && isfinite(y[i]) && x[i] >= 0.5) return y[i];
    return NAN;
}

void ps_html_load_spectrum_section(ps_buf *b, const ps_json *spec)
{
    double *cx, *cy, *ux, *uy, max_us = 0, div;
    const char *unit;
    if (!spec || spec->type != PS_JSON_OBJECT) {
        ps_buf_puts(b, "<p class=\"note\">No percentile distribution in the report.</p>\n");
        return;
    }
    size_t cn = spectrum_points(ps_json_get(spec, "corrected"), &cx, &cy, &max_us);
    size_t un = spectrum_points(ps_json_get(spec, "uncorrected"), &ux, &uy, &max_us);
    latency_unit(max_us, &div, &unit);
    /* One slow outlier makes the maximum a hundred times the median, and a
     * linear axis up to it draws p0 to p99.8 as a line on the floor: when the
     * maximum is over 10x the median, latency goes on a log axis. */
    double median = median_of(cx, cy, cn);
    if (!(median > 0)) median = median_of(ux, uy, un);
    bool log_y = median > 0 && max_us > 10 * median;
    ps_svg_series s[2] = {
        {.name = "corrected", .key = "corrected", .x = cx, .y = cy, .n = cn, .color = 0},
        {.name = "uncorrected",
         .key = "uncorrected",
         .x = ux,
         .y = uy,
         .n = un,
         .color = 1,
         .dashed = true},
    };
    ps_svg_plot p = {
        .id = "spectrum",
        .title = "Latency by percentile",
        .width = 1180,
        .height = 360,
        .x = {.scale = PS_SVG_PERCENTILE, .label = "percentile"},
        .y = value_axis(log_y, "latency", unit, div, max_us),
        .series = s,
        .nseries = 2,
    };
    ps_svg_plot_write(b, &p);
    if (log_y) {
        ps_buf_puts(b, "<p class=\"note\" data-spectrum-axis=\"log\">Latency on a log scale: the "
                       "maximum (");
        ps_html_latency_us(b, max_us);
        ps_buf_puts(b, ") is over 10 times the median (");
        ps_html_latency_us(b, median);
        ps_buf_puts(b, "), so a linear axis would flatten everything below the tail.</p>\n");
    }
    free(cx), free(cy), free(ux), free(uy);
}

/* The last interval of a run is usually a sliver (10 ms after the final
 * whole second); drawn, its rate of a few requests looks like a collapse. An
 * interval shorter than half the longest one is left out of the plots. */
static double longest_interval(const ps_json *iv)
{
    double max = 0, len;
    for (size_t i = 0; i < iv->count; i++)
        if (ps_html_num(iv->items[i], "length_s", &len) && len > max) max = len;
    return max;
}

static bool interval_is_partial(const ps_json *iv, size_t i)
{
    double len;
    return ps_html_num(iv->items[i], "length_s", &len) && len < longest_interval(iv) / 2;
}

/* One time-series plot over intervals[]: each series reads a dotted member. */
typedef struct ts_def {
    const char *path, *name;
    bool dashed;
} ts_def;

static void interval_plot(ps_buf *b, const ps_json *iv, const char *id, const char *title,
                          const char *ylabel, const char *yunit, bool latency, const ts_def *defs,
                          size_t ndefs)
{
    size_t n = iv->count;
    double *x = malloc((n ? n : 1) * sizeof *x);
    double *ys = malloc((n ? n : 1) * ndefs * sizeof *ys);
    ps_svg_series s[8];
    double max = 0, min_pos = INFINITY, div = 1, run_end = 0;
    if (!x || !ys) abort();
    for (size_t i = 0; i < n; i++) {
        const ps_json *t = ps_html_get(iv->items[i], "t_s", PS_JSON_NUMBER);
        double req, len;
        /* an interval's figures describe [t, t + length]: drawn at its middle,
         * and the axis runs to the end of the last one, so a 4 s run's axis
         * ends at 4 s, not at the start of its last second */
        if (!ps_html_num(iv->items[i], "length_s", &len) || !(len >= 0)) len = 0;
        x[i] = t && !interval_is_partial(iv, i) ? t->d + len / 2 : NAN;
        if (t && isfinite(t->d + len) && t->d + len > run_end) run_end = t->d + len;
        /* an interval without answers has no latency (loadgen writes null; older
         * documents 0, which is not a measurement either): a gap in the line */
        bool unmeasured = latency && ps_html_num(iv->items[i], "requests", &req) && req == 0;
        for (size_t k = 0; k < ndefs; k++) {
            const ps_json *v = ps_json_path(iv->items[i], defs[k].path);
            double d = v && v->type == PS_JSON_NUMBER && isfinite(x[i]) && !unmeasured ? v->d : NAN;
            ys[k * n + i] = d;
            if (isfinite(d) && d > max) max = d;
            if (isfinite(d) && d > 0 && d < min_pos) min_pos = d;
        }
    }
    for (size_t k = 0; k < ndefs && k < 8; k++)
        s[k] = (ps_svg_series){.name = defs[k].name,
                               .key = defs[k].path,
                               .x = x,
                               .y = ys + k * n,
                               .n = n,
                               .color = (int)k,
                               .dashed = defs[k].dashed,
                               .gaps = latency};
    if (latency) latency_unit(max, &div, &yunit);
    /* a max of 8 ms flattens a p50 of 80 µs onto the axis: when the lines
     * span more than 20x, latency gets a log axis so every line is readable */
    bool log_y = latency && isfinite(min_pos) && max > 20 * min_pos;
    ps_svg_plot p = {
        .id = id,
        .title = title,
        .width = 1180,
        .height = 280,
        .x = {.scale = PS_SVG_LINEAR,
              .label = "time since start",
              .unit = "s",
              .from_zero = true,
              .cover = true,
              .cover_lo = 0,
              .cover_hi = run_end,
              .tight = true},
        .y = value_axis(log_y, ylabel, yunit, div, max),
        .series = s,
        .nseries = ndefs < 8 ? ndefs : 8,
    };
    ps_svg_plot_write(b, &p);
    free(x);
    free(ys);
}

void ps_html_load_intervals_section(ps_buf *b, const ps_json *iv)
{
    static const ts_def thr[] = {{"throughput_rps", "throughput", false}};
    static const ts_def lat[] = {{"p50_us", "p50", false},
                                 {"p90_us", "p90", false},
                                 {"p99_us", "p99", false},
                                 {"max_us", "max", true}};
    static const ts_def st_all[] = {
        {"status_classes.2xx", "2xx", false}, {"status_classes.3xx", "3xx", false},
        {"status_classes.4xx", "4xx", false}, {"status_classes.5xx", "5xx", false},
        {"status_classes.429", "429", true},  {"status_classes.errors", "errors", true}};
    ts_def st[6];
    size_t nst = 0;
    ps_buf_puts(b, "<h2>Over time</h2>\n");
    if (!iv || iv->type != PS_JSON_ARRAY || !iv->count) {
        ps_buf_puts(b, "<p class=\"note\">No interval data in the report.</p>\n");
        return;
    }
    size_t partial = 0;
    for (size_t i = 0; i < iv->count; i++)
        partial += interval_is_partial(iv, i);
    interval_plot(b, iv, "throughput", "Throughput", "throughput", "requests/s", false, thr, 1);
    /* loadgen records intervals[] latencies corrected (docs/report-json.md) */
    interval_plot(b, iv, "latency", "Latency per interval (corrected)", "latency", NULL, true, lat,
                  4);
    /* only the classes with a response in some interval: six lines lying on
     * the axis at 0 hide each other and say less than one sentence does */
    ps_buf none = PS_BUF_INIT;
    size_t nnone = 0;
    for (size_t k = 0; k < sizeof st_all / sizeof st_all[0]; k++) {
        bool present = false, nonzero = false;
        for (size_t i = 0; i < iv->count; i++) {
            const ps_json *v = ps_json_path(iv->items[i], st_all[k].path);
            present |= v != NULL;
            nonzero |= v && v->type == PS_JSON_NUMBER && v->d != 0;
        }
        if (nonzero) {
            st[nst++] = st_all[k];
        } else if (present) {
            ps_buf_puts(&none, nnone++ ? ", " : "");
            ps_buf_puts(&none, st_all[k].name);
        }
    }
    interval_plot(b, iv, "status", "Responses per interval by status", "responses", NULL, false, st,
                  nst);
    if (nnone && nst)
        ps_buf_printf(
            b, "<p class=\"note\" data-not-drawn=\"%s\">Not drawn, none in any interval: %s.</p>\n",
            none.data, none.data);
    ps_buf_free(&none);
    /* say why the latency lines stop, and where */
    size_t unanswered = 0;
    ps_buf where = PS_BUF_INIT;
    for (size_t i = 0; i < iv->count; i++) {
        double req, t, len;
        if (!ps_html_num(iv->items[i], "requests", &req) || req != 0 || interval_is_partial(iv, i))
            continue;
        if (unanswered++ < 5 && ps_html_num(iv->items[i], "t_s", &t)) {
            if (!ps_html_num(iv->items[i], "length_s", &len)) len = 0;
            ps_buf_puts(&where, where.len ? ", " : " (");
            ps_svg_put_number(&where, t);
            ps_buf_puts(&where, "\xE2\x80\x93");
            ps_svg_put_number(&where, t + len);
            ps_buf_puts(&where, " s");
        }
    }
    if (where.len) ps_buf_puts(&where, unanswered > 5 ? ", ...)" : ")");
    if (unanswered)
        ps_buf_printf(b,
                      "<p class=\"note\" data-unanswered=\"%zu\">No request was answered in %zu "
                      "interval%s%s: the latency lines break there.</p>\n",
                      unanswered, unanswered, unanswered == 1 ? "" : "s",
                      where.data ? where.data : "");
    ps_buf_free(&where);
    if (partial)
        ps_buf_printf(
            b,
            "<p class=\"note\">%zu partial interval%s (shorter than half the longest)"
            " not drawn; intervals without answers leave a gap in the latency lines.</p>\n",
            partial, partial == 1 ? "" : "s");
}
