/* svg.c - the SVG line-plot writer behind the HTML reports' charts. */
#include "reports/svg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Okabe-Ito: distinguishable under the common colour-vision deficiencies and
 * dark enough on white (yellow is left out, it vanishes on paper). */
static const char *const palette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                      "#E69F00", "#56B4E9", "#000000"};
#define PALETTE_N (sizeof palette / sizeof palette[0])

void ps_svg_put_number(ps_buf *out, double v)
{
    char tmp[40];
    if (!isfinite(v)) {
        ps_buf_puts(out, "0");
        return;
    }
    if (v == floor(v) && fabs(v) < 1e15) {
        snprintf(tmp, sizeof tmp, "%.0f", v);
    } else {
        snprintf(tmp, sizeof tmp, "%.15g", v);
        if (strtod(tmp, NULL) != v) snprintf(tmp, sizeof tmp, "%.17g", v);
    }
    ps_buf_puts(out, tmp);
}

static double nice_step(double rough, int bump)
{
    static const double mult[] = {1, 2, 5};
    double mag = pow(10, floor(log10(rough)));
    int idx = 0;
    double norm = rough / mag;
    if (norm > 5) {
        mag *= 10;
        idx = 0;
    } else if (norm > 2) {
        idx = 2;
    } else if (norm > 1) {
        idx = 1;
    }
    idx += bump;
    while (idx >= 3) {
        idx -= 3;
        mag *= 10;
    }
    return mult[idx] * mag;
}

size_t ps_svg_ticks_linear(double *lo, double *hi, size_t max_ticks, double *ticks)
{
    double a = *lo, b = *hi;
    if (!isfinite(a) || !isfinite(b)) a = 0, b = 1;
    if (a > b) {
        double t = a;
        a = b, b = t;
    }
    if (a == b) {
        if (a == 0) {
            b = 1;
        } else {
            double pad = fabs(a) * 0.1;
            a -= pad, b += pad;
        }
    }
    if (max_ticks < 2) max_ticks = 2;
    if (max_ticks > PS_SVG_MAX_TICKS) max_ticks = PS_SVG_MAX_TICKS;
    double rough = (b - a) / (double)(max_ticks - 1);
    double step = 0, first = 0, last = 0;
    size_t count = 0;
    for (int bump = 0; bump < 12; bump++) {
        step = nice_step(rough, bump);
        first = floor(a / step) * step;
        last = ceil(b / step) * step;
        double c = round((last - first) / step) + 1;
        if (c <= (double)max_ticks) {
            count = (size_t)c;
            break;
        }
    }
    if (count < 2) { /* ranges too wide for doubles: draw the ends only */
        first = a, last = b, count = 2, step = b - a;
    }
    for (size_t i = 0; i < count; i++) {
        double v = first + (double)i * step;
        /* snap the float noise of i*step (0.30000000000000004) */
        if (fabs(v) < step * 1e-9) v = 0;
        ticks[i] = v;
    }
    *lo = first;
    *hi = last;
    return count;
}

size_t ps_svg_ticks_log(double *lo, double *hi, double *ticks)
{
    double a = *lo, b = *hi;
    if (!(a > 0) || !isfinite(a)) a = 1;
    if (!(b > a) || !isfinite(b)) b = a * 10;
    int dlo = (int)floor(log10(a) + 1e-9);
    int dhi = (int)ceil(log10(b) - 1e-9);
    if (dhi <= dlo) dhi = dlo + 1;
    size_t n = 0;
    if (dhi - dlo <= 2) {
        for (int d = dlo; d <= dhi; d++) {
            double p = pow(10, d);
            ticks[n++] = p;
            if (d < dhi) {
                ticks[n++] = 2 * p;
                ticks[n++] = 5 * p;
            }
        }
    } else {
        int stride = (dhi - dlo + PS_SVG_MAX_TICKS - 2) / (PS_SVG_MAX_TICKS - 1);
        if (stride < 1) stride = 1;
        for (int d = dlo; d <= dhi && n < PS_SVG_MAX_TICKS; d += stride)
            ticks[n++] = pow(10, d);
        dhi = dlo + (int)(n - 1) * stride;
    }
    *lo = pow(10, dlo);
    *hi = pow(10, dhi);
    return n;
}

void ps_svg_percentile_label(double u, char *out, size_t outlen)
{
    int k = (int)lround(log10(u > 1 ? u : 1));
    if (k > 20) k = 20;
    if (k <= 0) {
        snprintf(out, outlen, "0%%");
    } else if (k == 1) {
        snprintf(out, outlen, "90%%");
    } else {
        char nines[24];
        int i;
        for (i = 0; i < k - 2; i++)
            nines[i] = '9';
        nines[i] = '\0';
        snprintf(out, outlen, "99%s%s%%", k > 2 ? "." : "", nines);
    }
}

void ps_svg_format_number(double v, double step, char *out, size_t outlen)
{
    double av = fabs(v);
    if (av >= 1e6 && step >= 1e5) {
        ps_svg_format_number(v / 1e6, step / 1e6, out, outlen);
        strncat(out, "M", outlen - strlen(out) - 1);
        return;
    }
    if (av >= 1e4 && step >= 1e3) {
        ps_svg_format_number(v / 1e3, step / 1e3, out, outlen);
        strncat(out, "k", outlen - strlen(out) - 1);
        return;
    }
    int decimals = 0;
    if (step > 0 && step < 1) decimals = (int)ceil(-log10(step) - 1e-9);
    if (decimals > 9) decimals = 9;
    snprintf(out, outlen, "%.*f", decimals, v);
    if (strcmp(out, "-0") == 0) snprintf(out, outlen, "0");
}

/* An axis ready for drawing: bounds in data units plus the transform. */
typedef struct axis_geo {
    ps_svg_scale scale;
    double lo, hi;   /* data units (percentile axis: u = 1/(1-p) units) */
    double tlo, thi; /* transformed bounds */
    double px0, px1; /* pixel positions of lo and hi */
    double ticks[PS_SVG_MAX_TICKS];
    size_t nticks;
    double step; /* linear tick step, for label decimals */
} axis_geo;

static double transform(ps_svg_scale s, double v, bool *ok)
{
    *ok = isfinite(v);
    switch (s) {
    case PS_SVG_LINEAR:
        return v;
    case PS_SVG_LOG:
        if (!(v > 0)) *ok = false;
        return *ok ? log10(v) : 0;
    case PS_SVG_PERCENTILE:
        if (!*ok || v < 0) {
            *ok = false;
            return 0;
        }
        if (v >= 1) return INFINITY; /* clamped by the caller to the right edge */
        return log10(1 / (1 - v));
    }
    *ok = false;
    return 0;
}

static double to_px(const axis_geo *g, double v, bool *ok)
{
    double t = transform(g->scale, v, ok);
    if (!*ok) return 0;
    if (t > g->thi) t = g->thi;
    if (t < g->tlo) t = g->tlo;
    return g->px0 + (t - g->tlo) / (g->thi - g->tlo) * (g->px1 - g->px0);
}

/* Percentile-axis ticks are kept in u = 1/(1-p) units (labels need u). */
static double tick_px(const axis_geo *g, double tick, bool *ok)
{
    if (g->scale == PS_SVG_PERCENTILE) {
        *ok = true;
        return g->px0 + (log10(tick) - g->tlo) / (g->thi - g->tlo) * (g->px1 - g->px0);
    }
    return to_px(g, tick, ok);
}

/* Range of the finite, drawable values of one coordinate over all series. */
static bool data_range(const ps_svg_plot *p, bool want_x, ps_svg_scale s, double *lo, double *hi)
{
    bool any = false;
    for (size_t i = 0; i < p->nseries; i++) {
        const ps_svg_series *se = &p->series[i];
        const double *v = want_x ? se->x : se->y;
        const double *o = want_x ? se->y : se->x;
        if (!v || !o) continue;
        for (size_t j = 0; j < se->n; j++) {
            bool ok1, ok2;
            double t = transform(s, v[j], &ok1);
            transform(want_x ? p->y.scale : p->x.scale, o[j], &ok2);
            if (!ok1 || !ok2) continue;
            double val = v[j];
            if (s == PS_SVG_PERCENTILE) {
                if (!isfinite(t)) continue; /* the 100% row does not widen the axis */
                val = 1 / (1 - v[j]);
            }
            if (!any || val < *lo) *lo = val;
            if (!any || val > *hi) *hi = val;
            any = true;
        }
    }
    return any;
}

static void setup_axis(axis_geo *g, const ps_svg_plot *p, bool is_x, size_t max_ticks)
{
    const ps_svg_axis *a = is_x ? &p->x : &p->y;
    double lo = 0, hi = 0;
    bool any = data_range(p, is_x, a->scale, &lo, &hi);
    if (a->scale == PS_SVG_LINEAR && a->cover && isfinite(a->cover_lo) && isfinite(a->cover_hi) &&
        a->cover_lo <= a->cover_hi) {
        if (!any || a->cover_lo < lo) lo = a->cover_lo;
        if (!any || a->cover_hi > hi) hi = a->cover_hi;
        any = true;
    }
    g->scale = a->scale;
    g->step = 0;
    switch (a->scale) {
    case PS_SVG_LINEAR:
        if (!any) lo = 0, hi = 1;
        if (a->from_zero && lo > 0) lo = 0;
        if (a->from_zero && hi < 0) hi = 0;
        {
            /* ticks are chosen in label units so "2.5 ms" steps stay nice */
            double div = a->divisor > 0 ? a->divisor : 1;
            double l = lo / div, h = hi / div;
            g->nticks = ps_svg_ticks_linear(&l, &h, max_ticks, g->ticks);
            for (size_t i = 0; i < g->nticks; i++)
                g->ticks[i] *= div;
            g->step = g->nticks > 1 ? (g->ticks[1] - g->ticks[0]) / div : 1;
            if (a->tight && any && hi > lo && isfinite(lo) && isfinite(hi)) {
                /* keep the range; only the ticks inside it (tiny slack for rounding) */
                double slack = (hi - lo) * 1e-9;
                size_t n = 0;
                for (size_t i = 0; i < g->nticks; i++)
                    if (g->ticks[i] >= lo - slack && g->ticks[i] <= hi + slack)
                        g->ticks[n++] = g->ticks[i];
                g->nticks = n;
            } else {
                lo = l * div, hi = h * div;
            }
        }
        g->tlo = lo, g->thi = hi;
        break;
    case PS_SVG_LOG:
        if (!any) lo = 1, hi = 10;
        g->nticks = ps_svg_ticks_log(&lo, &hi, g->ticks);
        g->tlo = log10(lo), g->thi = log10(hi);
        break;
    case PS_SVG_PERCENTILE:
        if (!any || hi < 100) hi = 100; /* always show up to 99% */
        lo = 1;
        g->nticks = ps_svg_ticks_log(&lo, &hi, g->ticks);
        /* only decades: 2x and 5x have no percentile meaning worth a label */
        {
            size_t n = 0;
            for (size_t i = 0; i < g->nticks; i++) {
                double d = log10(g->ticks[i]);
                if (fabs(d - round(d)) < 1e-9) g->ticks[n++] = g->ticks[i];
            }
            g->nticks = n;
        }
        g->tlo = 0, g->thi = log10(hi);
        break;
    }
    if (!(g->thi > g->tlo)) g->thi = g->tlo + 1;
    g->lo = lo, g->hi = hi;
}

static void put_attr_text(ps_buf *out, const char *s)
{
    if (s) ps_buf_html_escape(out, s, strlen(s));
}

static void tick_label(const axis_geo *g, const ps_svg_axis *a, double v, char *buf, size_t n)
{
    double div = a->divisor > 0 ? a->divisor : 1;
    switch (g->scale) {
    case PS_SVG_PERCENTILE:
        ps_svg_percentile_label(v, buf, n);
        break;
    case PS_SVG_LOG:
        ps_svg_format_number(v / div, v / div, buf, n);
        break;
    case PS_SVG_LINEAR:
        ps_svg_format_number(v / div, g->step, buf, n);
        break;
    }
}

static const char *scale_name(ps_svg_scale s)
{
    return s == PS_SVG_LOG ? "log" : s == PS_SVG_PERCENTILE ? "percentile" : "linear";
}

/* Data-unit bound for the data-*-min/max attributes (percentile axis: p). */
static double bound_value(const axis_geo *g, double v)
{
    return g->scale == PS_SVG_PERCENTILE ? 1 - 1 / v : v;
}

static void axis_title(ps_buf *out, const ps_svg_axis *a)
{
    put_attr_text(out, a->label);
    if (a->unit && *a->unit) {
        ps_buf_puts(out, a->label ? " (" : "(");
        put_attr_text(out, a->unit);
        ps_buf_puts(out, ")");
    }
}

/* One unbroken piece of a series: a polyline of the points gathered in pts
 * (pixels) and dx/dy (data values), which are then emptied for the next piece. */
static void write_piece(ps_buf *out, const ps_svg_series *se, const char *col, ps_buf *pts,
                        ps_buf *dx, ps_buf *dy, size_t drawn, double lastx, double lasty)
{
    ps_buf_puts(out, "<polyline class=\"series\" data-series=\"");
    put_attr_text(out, se->key);
    ps_buf_printf(out,
                  "\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.8\""
                  " stroke-linejoin=\"round\"%s points=\"%s\" data-x=\"%s\" data-y=\"%s\">"
                  "<title>",
                  col, se->dashed ? " stroke-dasharray=\"6 3\"" : "", pts->data ? pts->data : "",
                  dx->data ? dx->data : "", dy->data ? dy->data : "");
    put_attr_text(out, se->name);
    ps_buf_puts(out, "</title></polyline>\n");
    /* a lone point has no line to show: mark it */
    if (drawn == 1)
        ps_buf_printf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n", lastx, lasty,
                      col);
    ps_buf_reset(pts);
    ps_buf_reset(dx);
    ps_buf_reset(dy);
}

void ps_svg_plot_write(ps_buf *out, const ps_svg_plot *p)
{
    int w = p->width > 0 ? p->width : 900, h = p->height > 0 ? p->height : 300;
    const double left = 64, right = w - 36, bottom = h - 44;
    /* legend right-aligned in the title band, or on its own line when the
     * title leaves no room; widths estimated from text length */
    double lw = 0, tw = 8 + 7.5 * (double)(p->title ? strlen(p->title) : 0);
    for (size_t i = 0; i < p->nseries; i++)
        lw += 34 + 6.6 * (double)(p->series[i].name ? strlen(p->series[i].name) : 0);
    bool legend_own_line = right - lw < tw + 16;
    const double top = legend_own_line ? 52 : 36;
    double lx = legend_own_line ? 8 : right - lw, ly = legend_own_line ? 40 : 20;
    axis_geo gx, gy;
    size_t xt = (size_t)((right - left) / 80);
    setup_axis(&gx, p, true, xt < 3 ? 3 : xt);
    setup_axis(&gy, p, false, 6);
    gx.px0 = left, gx.px1 = right;
    gy.px0 = bottom, gy.px1 = top;

    ps_buf_printf(out,
                  "<svg class=\"plot\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %d %d\""
                  " width=\"%d\" height=\"%d\" role=\"img\" data-plot=\"",
                  w, h, w, h);
    put_attr_text(out, p->id);
    ps_buf_printf(out, "\" data-x-scale=\"%s\" data-x-min=\"", scale_name(gx.scale));
    ps_svg_put_number(out, bound_value(&gx, gx.lo));
    ps_buf_puts(out, "\" data-x-max=\"");
    ps_svg_put_number(out, bound_value(&gx, gx.hi));
    ps_buf_printf(out, "\" data-y-scale=\"%s\" data-y-min=\"", scale_name(gy.scale));
    ps_svg_put_number(out, bound_value(&gy, gy.lo));
    ps_buf_puts(out, "\" data-y-max=\"");
    ps_svg_put_number(out, bound_value(&gy, gy.hi));
    ps_buf_printf(out,
                  "\" data-left=\"%g\" data-right=\"%g\" data-top=\"%g\" data-bottom=\"%g\""
                  " aria-label=\"",
                  left, right, top, bottom);
    put_attr_text(out, p->title);
    ps_buf_puts(out, "\">\n<title>");
    put_attr_text(out, p->title);
    ps_buf_puts(out, "</title>\n");
    ps_buf_puts(out, "<text class=\"pt\" x=\"8\" y=\"20\">");
    put_attr_text(out, p->title);
    ps_buf_puts(out, "</text>\n");

    /* grid and tick labels */
    ps_buf_puts(out, "<g class=\"grid\">");
    for (size_t i = 0; i < gx.nticks; i++) {
        bool ok;
        double x = tick_px(&gx, gx.ticks[i], &ok);
        if (!ok) continue;
        ps_buf_printf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x, top, x,
                      bottom);
    }
    for (size_t i = 0; i < gy.nticks; i++) {
        bool ok;
        double y = tick_px(&gy, gy.ticks[i], &ok);
        if (!ok) continue;
        ps_buf_printf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", left, y,
                      right, y);
    }
    ps_buf_puts(out, "</g>\n<g class=\"tl\">");
    for (size_t i = 0; i < gx.nticks; i++) {
        bool ok;
        char lab[48];
        double x = tick_px(&gx, gx.ticks[i], &ok);
        if (!ok) continue;
        tick_label(&gx, &p->x, gx.ticks[i], lab, sizeof lab);
        ps_buf_printf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>", x,
                      bottom + 16, lab);
    }
    for (size_t i = 0; i < gy.nticks; i++) {
        bool ok;
        char lab[48];
        double y = tick_px(&gy, gy.ticks[i], &ok);
        if (!ok) continue;
        tick_label(&gy, &p->y, gy.ticks[i], lab, sizeof lab);
        ps_buf_printf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>", left - 6,
                      y + 4, lab);
    }
    ps_buf_puts(out, "</g>\n");
    ps_buf_printf(out, "<rect class=\"frame\" x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\"/>\n",
                  left, top, right - left, bottom - top);
    ps_buf_printf(out, "<text class=\"al\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">",
                  (left + right) / 2, h - 8);
    axis_title(out, &p->x);
    ps_buf_printf(out,
                  "</text>\n<text class=\"al\" transform=\"translate(14 %.1f) rotate(-90)\""
                  " text-anchor=\"middle\">",
                  (top + bottom) / 2);
    axis_title(out, &p->y);
    ps_buf_puts(out, "</text>\n");

    /* series */
    size_t drawn_total = 0;
    for (size_t i = 0; i < p->nseries; i++) {
        const ps_svg_series *se = &p->series[i];
        const char *col = palette[(size_t)(se->color < 0 ? 0 : se->color) % PALETTE_N];
        ps_buf pts = PS_BUF_INIT, dx = PS_BUF_INIT, dy = PS_BUF_INIT;
        size_t drawn = 0, pieces = 0;
        double lastx = 0, lasty = 0;
        for (size_t j = 0; se->x && se->y && j <= se->n; j++) {
            bool okx = false, oky = false, end = j == se->n;
            double px = 0, py = 0;
            if (!end) {
                px = to_px(&gx, se->x[j], &okx);
                py = to_px(&gy, se->y[j], &oky);
                /* no measurement at a known x: the line stops here and starts again later */
                if (se->gaps && okx && !isfinite(se->y[j])) end = true;
            }
            if (end) {
                if (drawn) {
                    write_piece(out, se, col, &pts, &dx, &dy, drawn, lastx, lasty);
                    drawn_total += drawn;
                    pieces++;
                }
                drawn = 0;
                continue;
            }
            if (!okx || !oky) continue;
            if (drawn) {
                ps_buf_putc(&pts, ' ');
                ps_buf_putc(&dx, ' ');
                ps_buf_putc(&dy, ' ');
            }
            ps_buf_printf(&pts, "%.1f,%.1f", px, py);
            lastx = px, lasty = py;
            ps_svg_put_number(&dx, se->x[j]);
            ps_svg_put_number(&dy, se->y[j]);
            drawn++;
        }
        /* a series with nothing drawn still gets its (empty) element */
        if (!pieces) write_piece(out, se, col, &pts, &dx, &dy, 0, 0, 0);
        ps_buf_free(&pts);
        ps_buf_free(&dx);
        ps_buf_free(&dy);
    }
    if (!drawn_total)
        ps_buf_printf(out,
                      "<text class=\"nodata\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">"
                      "no data</text>\n",
                      (left + right) / 2, (top + bottom) / 2);

    /* legend */
    ps_buf_puts(out, "<g class=\"legend\">");
    for (size_t i = 0; i < p->nseries; i++) {
        const ps_svg_series *se = &p->series[i];
        const char *col = palette[(size_t)(se->color < 0 ? 0 : se->color) % PALETTE_N];
        ps_buf_printf(out,
                      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\""
                      " stroke-width=\"2.5\"%s/><text x=\"%.1f\" y=\"%.1f\">",
                      lx, ly - 4, lx + 22, ly - 4, col,
                      se->dashed ? " stroke-dasharray=\"6 3\"" : "", lx + 27, ly);
        put_attr_text(out, se->name);
        ps_buf_puts(out, "</text>");
        lx += 34 + 6.6 * (double)(se->name ? strlen(se->name) : 0);
    }
    ps_buf_puts(out, "</g>\n</svg>\n");
}
