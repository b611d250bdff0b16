/* histogram_print.c - the percentile spectrum of a histogram as text, in
 * HdrHistogram_c's and HdrHistogram Java/JS's layouts, digit for digit. */
#include "core/histogram_print.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Walks the percentile levels as HdrHistogram's percentile iterator does:
 * levels start at 0% and halve their distance to 100% every
 * ticks_per_half_distance steps; a bucket is reported once for each level its
 * cumulative count reaches, and a final 100% row closes the walk. */
struct pct_walk {
    const ps_hist *h;
    int64_t total; /* the histogram's total count */
    int ticks_per_half_distance;
    int32_t index;
    int64_t count;
    int64_t cumulative;
    int64_t value; /* highest equivalent value of the current bucket */
    double level;  /* next level to report */
    double reported;
    bool seen_last;
};

static bool walk_step(struct pct_walk *w)
{
    if (w->cumulative >= w->total || w->index + 1 >= ps_hist_counts_len(w->h)) return false;
    w->index++;
    w->count = ps_hist_count_at_index(w->h, w->index);
    w->cumulative += w->count;
    w->value = ps_hist_highest_equivalent(w->h, ps_hist_value_at_index(w->h, w->index));
    return true;
}

static bool walk_next(struct pct_walk *w)
{
    if (w->cumulative >= w->total) {
        if (w->seen_last) return false;
        w->seen_last = true;
        w->reported = 100.0;
        return true;
    }
    if (w->index == -1 && !walk_step(w)) return false;
    do {
        double current = (100.0 * (double)w->cumulative) / (double)w->total;
        if (w->count != 0 && w->level <= current) {
            w->reported = w->level;
            /* The same floating-point steps as HdrHistogram, so the printed
             * levels match its output digit for digit. */
            int64_t halvings = (int64_t)(log(100.0 / (100.0 - w->level)) / log(2)) + 1;
            if (halvings > 62) halvings = 62;
            int64_t ticks = (int64_t)w->ticks_per_half_distance * (INT64_C(1) << halvings);
            w->level += 100.0 / (double)ticks;
            return true;
        }
    } while (walk_step(w));
    return true;
}

/* Appends v with `decimals` fraction digits right-aligned in `width`, rounded
 * the way Java's Formatter and JS's Intl.NumberFormat round: from the
 * shortest decimal that reads back as v, half up. printf rounds the exact
 * binary value instead, so e.g. 0.9997802734375 (a hair below in binary)
 * prints ...437 there but ...438 in HdrHistogram's Java and JS output. */
static void put_fixed_java(ps_buf *out, int width, int decimals, double v)
{
    if (!isfinite(v) || fabs(v) >= 1e15 || decimals > 20) {
        ps_buf_printf(out, "%*.*f", width, decimals, v);
        return;
    }
    char sci[40];
    for (int prec = 0; prec < 17; prec++) {
        snprintf(sci, sizeof sci, "%.*e", prec, v);
        if (strtod(sci, NULL) == v) break;
    }
    /* sci is [-]d[.ddd]e[+-]x: collect its digits and decimal exponent. */
    const char *p = sci;
    bool neg = *p == '-';
    if (neg) p++;
    char mant[24];
    int n = 0;
    for (; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9' && n < (int)sizeof mant) mant[n++] = *p;
    int exp10 = *p == 'e' ? atoi(p + 1) : 0;
    /* Positional digits: value = 0.digits * 10^point, with point digits
     * before the decimal point (leading zeros added when point < 1). */
    char digits[64];
    int len = 0, point = exp10 + 1;
    if (point < 1) {
        int zeros = -point + 1;
        if (zeros > 40) zeros = 40; /* far below any printed digit */
        for (int i = 0; i < zeros; i++)
            digits[len++] = '0';
        point = 1;
    }
    for (int i = 0; i < n && len < (int)sizeof digits - 1; i++)
        digits[len++] = mant[i];
    while (len < point + decimals + 1 && len < (int)sizeof digits - 1)
        digits[len++] = '0';
    int keep = point + decimals;
    bool up = digits[keep] >= '5';
    len = keep;
    if (up) {
        int i = keep - 1;
        for (; i >= 0; i--) {
            if (digits[i] == '9') {
                digits[i] = '0';
            } else {
                digits[i]++;
                break;
            }
        }
        if (i < 0) { /* carry past the first digit: 9.99 -> 10.00 */
            memmove(digits + 1, digits, (size_t)len);
            digits[0] = '1';
            len++;
            point++;
        }
    }
    char text[80];
    int t = 0;
    if (neg) text[t++] = '-';
    for (int i = 0; i < point; i++)
        text[t++] = digits[i];
    if (decimals > 0) {
        text[t++] = '.';
        for (int i = point; i < len; i++)
            text[t++] = digits[i];
    }
    text[t] = '\0';
    ps_buf_printf(out, "%*s", width, text);
}

void ps_hist_percentiles_format(const ps_hist *h, ps_buf *out, int ticks_per_half_distance,
                                double value_scale, ps_hist_format format)
{
    if (ticks_per_half_distance < 1) ticks_per_half_distance = 1;
    if (!(value_scale > 0.0)) value_scale = 1.0;
    int sf = ps_hist_significant_figures(h);
    switch (format) {
    case PS_HIST_FORMAT_CSV:
        ps_buf_printf(out, "%s,%s,%s,%s\n", "Value", "Percentile", "TotalCount",
                      "1/(1-Percentile)");
        break;
    case PS_HIST_FORMAT_JAVA:
        ps_buf_printf(out, "%12s %14s %10s %14s\n\n", "Value", "Percentile", "TotalCount",
                      "1/(1-Percentile)");
        break;
    default:
        ps_buf_printf(out, "%12s %12s %12s %12s\n\n", "Value", "Percentile", "TotalCount",
                      "1/(1-Percentile)");
        break;
    }

    struct pct_walk w = {.h = h,
                         .total = ps_hist_total_count(h),
                         .ticks_per_half_distance = ticks_per_half_distance,
                         .index = -1};
    while (walk_next(&w)) {
        double value = (double)w.value / value_scale;
        double p = w.reported / 100.0;
        double inverted = 1.0 / (1.0 - p);
        switch (format) {
        case PS_HIST_FORMAT_CSV:
            ps_buf_printf(out, "%.*f,%f,%" PRId64 ",%.2f\n", sf, value, p, w.cumulative, inverted);
            break;
        case PS_HIST_FORMAT_JAVA:
            put_fixed_java(out, 12, sf, value);
            ps_buf_putc(out, ' ');
            put_fixed_java(out, 2, 12, p);
            ps_buf_printf(out, " %10" PRId64, w.cumulative);
            if (w.reported != 100.0) {
                ps_buf_putc(out, ' ');
                put_fixed_java(out, 14, 2, inverted);
            }
            ps_buf_putc(out, '\n');
            break;
        default:
            ps_buf_printf(out, "%12.*f %12f %12" PRId64 " %12.2f\n", sf, value, p, w.cumulative,
                          inverted);
            break;
        }
    }

    double mean = ps_hist_mean(h) / value_scale;
    double stddev = ps_hist_stddev(h) / value_scale;
    double max = (double)ps_hist_max(h) / value_scale;
    if (format == PS_HIST_FORMAT_CLASSIC) {
        ps_buf_printf(out, "#[Mean    = %12.3f, StdDeviation   = %12.3f]\n", mean, stddev);
        ps_buf_printf(out, "#[Max     = %12.3f, Total count    = %12" PRIu64 "]\n", max,
                      (uint64_t)ps_hist_total_count(h));
        ps_buf_printf(out, "#[Buckets = %12d, SubBuckets     = %12d]\n", ps_hist_bucket_count(h),
                      ps_hist_sub_bucket_count(h));
    } else if (format == PS_HIST_FORMAT_JAVA) {
        ps_buf_puts(out, "#[Mean    = ");
        put_fixed_java(out, 12, sf, mean);
        ps_buf_puts(out, ", StdDeviation   = ");
        put_fixed_java(out, 12, sf, stddev);
        ps_buf_puts(out, "]\n#[Max     = ");
        put_fixed_java(out, 12, sf, max);
        ps_buf_printf(out, ", Total count    = %12" PRId64 "]\n", ps_hist_total_count(h));
        ps_buf_printf(out, "#[Buckets = %12d, SubBuckets     = %12d]\n", ps_hist_bucket_count(h),
                      ps_hist_sub_bucket_count(h));
    }
}

int ps_hist_percentiles_print(const ps_hist *h, FILE *out, int ticks_per_half_distance,
                              double value_scale, ps_hist_format format)
{
    ps_buf text = PS_BUF_INIT;
    ps_hist_percentiles_format(h, &text, ticks_per_half_distance, value_scale, format);
    int rc = fwrite(text.data, 1, text.len, out) == text.len ? 0 : -1;
    ps_buf_free(&text);
    return rc;
}
