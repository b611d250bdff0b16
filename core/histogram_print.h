/* histogram_print.h - the text output of a histogram: HdrHistogram's
 * percentile spectrum ("Value Percentile TotalCount 1/(1-Percentile)" rows,
 * then the #[Mean...], #[Max...], #[Buckets...] footer) in the layouts of
 * HdrHistogram_c and of the Java/JS ports. */
#ifndef PS_HISTOGRAM_PRINT_H
#define PS_HISTOGRAM_PRINT_H

#include <stdio.h>

#include "core/buf.h"
#include "core/histogram.h"

/* Text layouts of the percentile spectrum. CLASSIC is HdrHistogram_c's
 * hdr_percentiles_print (what wrk2 prints: "%12s %12s %12s %12s" header,
 * "%12.<sigfigs>f %12f %12d %12.2f" rows, the 100% row ending in "inf");
 * CSV is HdrHistogram_c's CSV; JAVA is HdrHistogram's (Java/JS)
 * outputPercentileDistribution ("%12s %14s %10s %14s" header, rows
 * "%12.<sigfigs>f %2.12f %10d %14.2f", the 100% row without its last column,
 * footer values with <sigfigs> decimals). */
typedef enum ps_hist_format {
    PS_HIST_FORMAT_CLASSIC = 0,
    PS_HIST_FORMAT_CSV,
    PS_HIST_FORMAT_JAVA,
} ps_hist_format;

/* Appends the percentile spectrum in the given layout to out. Levels start
 * at 0% and halve their distance to 100% every ticks_per_half_distance rows
 * (usually 5); values are divided by value_scale (e.g. 1000.0 to print ms
 * from us). An empty histogram prints a single 100% row of 0 and, unlike
 * HdrHistogram_c's NaN, a mean of 0. ticks_per_half_distance < 1 is taken as
 * 1, value_scale <= 0 as 1.0. */
void ps_hist_percentiles_format(const ps_hist *h, ps_buf *out, int ticks_per_half_distance,
                                double value_scale, ps_hist_format format);
/* Writes ps_hist_percentiles_format's text to out, as HdrHistogram_c's
 * hdr_percentiles_print does. Returns 0, or -1 on write error. */
int ps_hist_percentiles_print(const ps_hist *h, FILE *out, int ticks_per_half_distance,
                              double value_scale, ps_hist_format format);

#endif
