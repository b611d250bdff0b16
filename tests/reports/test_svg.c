/* test_svg.c - the SVG plot writer: nice ticks, percentile axis labels,
 * escaping, and that drawn points sit where their values say. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "reports/svg.h"

static void test_linear_ticks_are_nice(void)
{
    double t[PS_SVG_MAX_TICKS], lo = 0, hi = 97;
    size_t n = ps_svg_ticks_linear(&lo, &hi, 6, t);
    CHECK_INT(n, 6);
    CHECK(lo == 0 && hi == 100);
    CHECK(t[1] == 20 && t[5] == 100);

    lo = 0.13, hi = 0.71; /* step 0.1 or 0.2, never 0.15 */
    n = ps_svg_ticks_linear(&lo, &hi, 8, t);
    CHECK(n >= 2 && n <= 8);
    double step = t[1] - t[0];
    CHECK(fabs(step - 0.1) < 1e-12 || fabs(step - 0.2) < 1e-12);
    CHECK(lo <= 0.13 && hi >= 0.71);

    lo = 1234, hi = 98765;
    n = ps_svg_ticks_linear(&lo, &hi, 6, t);
    CHECK(n <= 6 && lo <= 1234 && hi >= 98765);
    CHECK(t[1] - t[0] == 20000);

    /* degenerate ranges still give a drawable axis */
    lo = hi = 0;
    n = ps_svg_ticks_linear(&lo, &hi, 5, t);
    CHECK(n >= 2 && hi > lo);
    lo = hi = 500;
    n = ps_svg_ticks_linear(&lo, &hi, 5, t);
    CHECK(n >= 2 && lo < 500 && hi > 500);
    lo = NAN, hi = INFINITY;
    n = ps_svg_ticks_linear(&lo, &hi, 5, t);
    CHECK(n >= 2 && isfinite(lo) && isfinite(hi) && hi > lo);
    lo = -1e300, hi = 1e300;
    n = ps_svg_ticks_linear(&lo, &hi, 40, t);
    CHECK(n >= 2 && n <= PS_SVG_MAX_TICKS);
}

static void test_log_ticks_are_decades(void)
{
    double t[PS_SVG_MAX_TICKS], lo = 150, hi = 42000;
    size_t n = ps_svg_ticks_log(&lo, &hi, t);
    CHECK(lo == 100 && hi == 100000);
    CHECK_INT(n, 4);
    CHECK(t[0] == 100 && t[3] == 100000);

    lo = 3, hi = 40; /* narrow: 2x and 5x as well */
    n = ps_svg_ticks_log(&lo, &hi, t);
    CHECK(lo == 1 && hi == 100);
    CHECK_INT(n, 7);
    CHECK(t[1] == 2 && t[2] == 5 && t[3] == 10);

    lo = 1e-300, hi = 1e300; /* thinned, never overflowing the array */
    n = ps_svg_ticks_log(&lo, &hi, t);
    CHECK(n >= 2 && n <= PS_SVG_MAX_TICKS);
    lo = -5, hi = 0;
    n = ps_svg_ticks_log(&lo, &hi, t);
    CHECK(n >= 2 && lo > 0 && hi > lo);
}

static void test_percentile_labels(void)
{
    char s[32];
    ps_svg_percentile_label(1, s, sizeof s);
    CHECK_STR(s, "0%");
    ps_svg_percentile_label(10, s, sizeof s);
    CHECK_STR(s, "90%");
    ps_svg_percentile_label(100, s, sizeof s);
    CHECK_STR(s, "99%");
    ps_svg_percentile_label(1000, s, sizeof s);
    CHECK_STR(s, "99.9%");
    ps_svg_percentile_label(1e5, s, sizeof s);
    CHECK_STR(s, "99.999%");
}

static void test_numbers_round_trip(void)
{
    static const double vals[] = {0, 210, -3, 0.1, 230.5, 0.99999, 1.0 / 3, 1e-7, 123456789012.0};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        ps_buf b = PS_BUF_INIT;
        ps_svg_put_number(&b, vals[i]);
        CHECK(strtod(b.data, NULL) == vals[i]);
        ps_buf_free(&b);
    }
    ps_buf b = PS_BUF_INIT;
    ps_svg_put_number(&b, 210);
    CHECK_STR(b.data, "210");
    ps_buf_free(&b);
    char s[32];
    ps_svg_format_number(2500, 500, s, sizeof s);
    CHECK_STR(s, "2500");
    ps_svg_format_number(20000, 5000, s, sizeof s);
    CHECK_STR(s, "20k");
    ps_svg_format_number(0.25, 0.05, s, sizeof s);
    CHECK_STR(s, "0.25");
}

/* Reads attribute name="..." of the first element at or after from. */
static double attr_num(const char *from, const char *name)
{
    char key[64];
    snprintf(key, sizeof key, " %s=\"", name);
    const char *p = strstr(from, key);
    return p ? strtod(p + strlen(key), NULL) : NAN;
}

static void test_plot_places_points_and_escapes(void)
{
    double x[] = {0, 1, 2, 3}, y[] = {100, 2500, NAN, 1000};
    ps_svg_series s = {.name = "p99 <b>", .key = "p99\"x", .x = x, .y = y, .n = 4, .color = 0};
    ps_svg_plot p = {.id = "t",
                     .title = "A & B</svg>",
                     .x = {.scale = PS_SVG_LINEAR, .label = "time", .unit = "s", .from_zero = true},
                     .y = {.scale = PS_SVG_LINEAR,
                           .label = "latency",
                           .unit = "ms",
                           .divisor = 1000,
                           .from_zero = true},
                     .series = &s,
                     .nseries = 1};
    ps_buf b = PS_BUF_INIT;
    ps_svg_plot_write(&b, &p);
    const char *svg = b.data;
    CHECK(strstr(svg, "A &amp; B&lt;/svg&gt;") != NULL);
    /* the title's "</svg>" did not end the element early: one close, at the end */
    CHECK(strstr(svg, "</svg>") == svg + b.len - strlen("</svg>\n"));
    CHECK(strstr(svg, "p99 &lt;b&gt;") != NULL);
    CHECK(strstr(svg, "data-series=\"p99&quot;x\"") != NULL);
    CHECK(strstr(svg, "nan") == NULL && strstr(svg, "inf") == NULL);
    CHECK(strstr(svg, "data-x=\"0 1 3\"") != NULL); /* the NaN point is skipped */
    CHECK(strstr(svg, "data-y=\"100 2500 1000\"") != NULL);
    CHECK(strstr(svg, ">latency (ms)<") != NULL);
    CHECK(strstr(svg, ">2.5<") != NULL || strstr(svg, ">2<") != NULL); /* ticks in ms */

    /* the second point (x=1, y=2500) is drawn where the axis attributes put it */
    double l = attr_num(svg, "data-left"), r = attr_num(svg, "data-right");
    double t = attr_num(svg, "data-top"), bot = attr_num(svg, "data-bottom");
    double x0 = attr_num(svg, "data-x-min"), x1 = attr_num(svg, "data-x-max");
    double y0 = attr_num(svg, "data-y-min"), y1 = attr_num(svg, "data-y-max");
    CHECK(x0 <= 0 && x1 >= 3 && y0 <= 100 && y1 >= 2500);
    const char *pts = strstr(svg, "points=\"");
    CHECK(pts != NULL);
    if (pts) {
        double px, py, qx, qy;
        CHECK(sscanf(pts + 8, "%lf,%lf %lf,%lf", &px, &py, &qx, &qy) == 4);
        CHECK(fabs(qx - (l + (1 - x0) / (x1 - x0) * (r - l))) < 0.1);
        CHECK(fabs(qy - (bot - (2500 - y0) / (y1 - y0) * (bot - t))) < 0.1);
    }
    ps_buf_free(&b);
}

static void test_percentile_axis(void)
{
    /* spectrum rows: 0%, 90%, 99.9%, and the 100% row that must sit at the right edge */
    double x[] = {0, 0.9, 0.999, 1.0}, y[] = {100, 200, 900, 5000};
    ps_svg_series s = {.name = "corrected", .key = "corrected", .x = x, .y = y, .n = 4};
    ps_svg_plot p = {.id = "spec",
                     .title = "spectrum",
                     .x = {.scale = PS_SVG_PERCENTILE},
                     .y = {.scale = PS_SVG_LINEAR, .from_zero = true},
                     .series = &s,
                     .nseries = 1};
    ps_buf b = PS_BUF_INIT;
    ps_svg_plot_write(&b, &p);
    const char *svg = b.data;
    CHECK(strstr(svg, "data-x-scale=\"percentile\"") != NULL);
    CHECK(strstr(svg, ">0%<") && strstr(svg, ">90%<") && strstr(svg, ">99%<") &&
          strstr(svg, ">99.9%<"));
    CHECK(strstr(svg, ">50%<") == NULL);
    double l = attr_num(svg, "data-left"), r = attr_num(svg, "data-right");
    double xmax = attr_num(svg, "data-x-max");
    CHECK(fabs(xmax - 0.999) < 1e-9); /* 99.9% is the last decade with data */
    const char *pts = strstr(svg, "points=\"");
    double p0x = NAN, p0y, p1x = NAN, p1y, p2x = NAN, p2y, p3x = NAN, p3y;
    CHECK(pts && sscanf(pts + 8, "%lf,%lf %lf,%lf %lf,%lf %lf,%lf", &p0x, &p0y, &p1x, &p1y, &p2x,
                        &p2y, &p3x, &p3y) == 8);
    CHECK(fabs(p0x - l) < 0.1);
    CHECK(fabs(p1x - (l + (r - l) / 3)) < 0.1); /* 90% is one decade of three */
    CHECK(fabs(p2x - r) < 0.1 && fabs(p3x - r) < 0.1);
    ps_buf_free(&b);
}

static void test_empty_plot_says_no_data(void)
{
    ps_svg_plot p = {
        .id = "e", .title = NULL, .x = {.scale = PS_SVG_LOG}, .y = {.scale = PS_SVG_LINEAR}};
    ps_buf b = PS_BUF_INIT;
    ps_svg_plot_write(&b, &p);
    CHECK(strstr(b.data, ">no data<") != NULL);
    CHECK(strstr(b.data, "nan") == NULL);
    ps_buf_free(&b);
}

/* With gaps, a point without a y (no measurement) breaks the line in two;
 * without, it is skipped and the line joins its neighbours; a point without
 * an x is skipped either way. */
static void test_gaps_break_the_line(void)
{
    double x[] = {0, 1, 2, NAN, 3, 4}, y[] = {5, 6, NAN, 9, 7, 8};
    for (int gaps = 0; gaps < 2; gaps++) {
        ps_svg_series s = {.name = "p", .key = "p", .x = x, .y = y, .n = 6, .gaps = gaps};
        ps_svg_plot p = {.id = "g",
                         .x = {.scale = PS_SVG_LINEAR},
                         .y = {.scale = PS_SVG_LINEAR},
                         .series = &s,
                         .nseries = 1};
        ps_buf b = PS_BUF_INIT;
        ps_svg_plot_write(&b, &p);
        size_t lines = 0;
        for (const char *q = b.data; (q = strstr(q, "<polyline")) != NULL; q++)
            lines++;
        if (gaps) {
            CHECK_INT(lines, 2);
            CHECK(strstr(b.data, "data-x=\"0 1\" data-y=\"5 6\"") != NULL);
            CHECK(strstr(b.data, "data-x=\"3 4\" data-y=\"7 8\"") != NULL);
        } else {
            CHECK_INT(lines, 1);
            CHECK(strstr(b.data, "data-x=\"0 1 3 4\" data-y=\"5 6 7 8\"") != NULL);
        }
        CHECK(strstr(b.data, "<circle") == NULL);
        ps_buf_free(&b);
    }
}

/* cover widens an axis to a range whatever the data; tight ends it there
 * (a time axis ending at the run's end, 4.014 s, not at the next nice tick). */
static void test_cover_and_tight_axis(void)
{
    double x[] = {0.5, 1.5, 2.5, 3.5}, y[] = {1, 2, 3, 4};
    ps_svg_series s = {.name = "s", .key = "s", .x = x, .y = y, .n = 4};
    for (int tight = 0; tight < 2; tight++) {
        ps_svg_plot p = {.id = "c",
                         .x = {.scale = PS_SVG_LINEAR,
                               .from_zero = true,
                               .cover = true,
                               .cover_lo = 0,
                               .cover_hi = 4.014,
                               .tight = tight},
                         .y = {.scale = PS_SVG_LINEAR},
                         .series = &s,
                         .nseries = 1};
        ps_buf b = PS_BUF_INIT;
        ps_svg_plot_write(&b, &p);
        double x0 = attr_num(b.data, "data-x-min"), x1 = attr_num(b.data, "data-x-max");
        CHECK(x0 == 0);
        if (tight) {
            CHECK(x1 == 4.014);
            CHECK(strstr(b.data, ">4.0<") != NULL || strstr(b.data, ">4<") != NULL);
            CHECK(strstr(b.data, ">4.5<") == NULL && strstr(b.data, ">5<") == NULL);
        } else {
            CHECK(x1 > 4.014); /* widened to a nice tick */
        }
        ps_buf_free(&b);
    }
}

int main(void)
{
    RUN(test_linear_ticks_are_nice);
    RUN(test_log_ticks_are_decades);
    RUN(test_percentile_labels);
    RUN(test_numbers_round_trip);
    RUN(test_plot_places_points_and_escapes);
    RUN(test_percentile_axis);
    RUN(test_empty_plot_says_no_data);
    RUN(test_gaps_break_the_line);
    RUN(test_cover_and_tight_axis);
    return TEST_EXIT();
}
