/* svg.h - a small SVG line-plot writer for the HTML reports.
 *
 * One call draws one plot: axes with nice ticks (linear, log10, or the
 * HdrHistogram percentile axis), grid, axis labels with units, a legend and
 * one polyline per series. Nothing here allocates beyond the caller's ps_buf;
 * every string given (titles, labels, names) is HTML-escaped on output.
 *
 * Machine-readable: the <svg> carries data-plot, data-x-scale, data-x-min,
 * data-x-max, data-y-scale, data-y-min, data-y-max (axis bounds in data units)
 * and data-left/right/top/bottom (the plot area in pixels); each series is a
 * <polyline data-series="KEY" data-x="..." data-y="..."> whose data-x/data-y
 * list the data values (as given, round-trip exact) of the drawn points, so a
 * test can check both the numbers and where they were drawn (a series with
 * gaps is several such polylines, in order; a piece of one point is also
 * marked by a <circle>). */
#ifndef PS_SVG_H
#define PS_SVG_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"

typedef enum ps_svg_scale {
    PS_SVG_LINEAR,
    PS_SVG_LOG,        /* log10; values <= 0 are not drawn */
    PS_SVG_PERCENTILE, /* values are percentiles in [0,1], drawn at log10(1/(1-p));
                          p >= 1 (the maximum) is drawn at the right edge */
} ps_svg_scale;

typedef struct ps_svg_axis {
    ps_svg_scale scale;
    const char *label; /* "latency"; NULL for none */
    const char *unit;  /* "ms"; NULL for none */
    double divisor;    /* tick labels show value/divisor (µs data, ms labels: 1000); 0 means 1 */
    bool from_zero;    /* linear: the axis starts at 0 (counts, rates) */
    bool cover;        /* linear: the axis spans at least [cover_lo, cover_hi], data or not
                          (a time axis reaching the end of the run, not its last point) */
    double cover_lo, cover_hi;
    bool tight; /* linear: the axis ends at the data (and cover) range instead of at the
                   next nice tick; ticks outside it are dropped */
} ps_svg_axis;

typedef struct ps_svg_series {
    const char *name;    /* legend text */
    const char *key;     /* data-series attribute, e.g. "corrected" */
    const double *x, *y; /* n points; a point with a non-finite coordinate is skipped */
    size_t n;
    int color; /* palette index (colour-blind-safe, cycles) */
    bool dashed;
    bool gaps; /* a point with a finite x and a non-finite y (no measurement) breaks the
                  line there instead of being skipped: the series is then written as one
                  <polyline> per unbroken piece, all with the same data-series */
} ps_svg_series;

typedef struct ps_svg_plot {
    const char *id; /* data-plot attribute */
    const char *title;
    int width, height; /* pixels; 0 picks 900 x 300 */
    ps_svg_axis x, y;
    const ps_svg_series *series;
    size_t nseries;
} ps_svg_plot;

/* Appends one <svg> element to out. Plots with no drawable point still get
 * axes and a "no data" note, so the page layout never depends on the data. */
void ps_svg_plot_write(ps_buf *out, const ps_svg_plot *p);

#define PS_SVG_MAX_TICKS 32

/* Nice linear ticks: a step of 1, 2 or 5 times a power of ten giving at most
 * max_ticks ticks; *lo and *hi are widened to multiples of the step (an empty
 * or non-finite range is widened to something drawable). Writes the ticks to
 * ticks[] (capacity PS_SVG_MAX_TICKS) and returns their count (>= 2). */
size_t ps_svg_ticks_linear(double *lo, double *hi, size_t max_ticks, double *ticks);

/* Log ticks: *lo and *hi (> 0) are widened to powers of ten (at least one
 * decade); ticks are the decades, plus 2x and 5x when the axis spans at most
 * two decades. Returns the count, at most PS_SVG_MAX_TICKS (decades are
 * thinned on very wide axes). */
size_t ps_svg_ticks_log(double *lo, double *hi, double *ticks);

/* Label of a percentile-axis tick at 1/(1-p) = u, u a power of ten:
 * 1 -> "0%", 10 -> "90%", 100 -> "99%", 1000 -> "99.9%", ... */
void ps_svg_percentile_label(double u, char *out, size_t outlen);

/* Formats v for a tick label with just enough decimals for the step. */
void ps_svg_format_number(double v, double step, char *out, size_t outlen);

/* Appends v as the shortest decimal that reads back as the same double. */
void ps_svg_put_number(ps_buf *out, double v);

#endif
