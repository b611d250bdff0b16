/* histogram.h - HDR-style latency histogram (our own implementation of the
 * HdrHistogram bucket layout, so its output formats and encodings are
 * interchangeable with HdrHistogram's tools).
 *
 * Values are plain int64 in whatever unit the caller chooses (the load
 * generator records microseconds). Memory is fixed at init from the range and
 * precision, whatever the number of values recorded. A histogram is not
 * thread-safe: each thread records into its own and they are merged with
 * ps_hist_add after join. */
#ifndef PS_HISTOGRAM_H
#define PS_HISTOGRAM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/buf.h"
#include "core/error.h"

typedef struct ps_hist ps_hist;

/* Creates a histogram covering [lowest, highest] (lowest >= 1, highest >=
 * 2 * lowest) with sigfigs significant decimal digits (1..5). Returns 0 and
 * *out, or -1 with a message. Free with ps_hist_close. */
int ps_hist_init(int64_t lowest, int64_t highest, int sigfigs, ps_hist **out, ps_error *err);
void ps_hist_close(ps_hist *h);
void ps_hist_reset(ps_hist *h);

/* Records a value (count times). Values above the range are clamped to the
 * highest trackable value and counted in ps_hist_clamped; negative ones are
 * rejected (returns false). */
bool ps_hist_record(ps_hist *h, int64_t value);
bool ps_hist_record_n(ps_hist *h, int64_t value, int64_t count);
/* Records value and, when value > expected_interval > 0, the synthetic
 * values value - k*expected_interval that a request sent on schedule would
 * have seen (HdrHistogram's recordCorrectedValue). */
bool ps_hist_record_corrected(ps_hist *h, int64_t value, int64_t expected_interval);

/* Adds every count of src into dst (same or different layout). Returns the
 * number of values that did not fit dst's range (they are clamped). */
int64_t ps_hist_add(ps_hist *dst, const ps_hist *src);

int64_t ps_hist_total_count(const ps_hist *h);
int64_t ps_hist_clamped(const ps_hist *h);
int64_t ps_hist_min(const ps_hist *h); /* 0 when empty */
int64_t ps_hist_max(const ps_hist *h); /* 0 when empty; highest equivalent value */
double ps_hist_mean(const ps_hist *h);
double ps_hist_stddev(const ps_hist *h);
/* Value at a percentile in [0, 100] (the highest equivalent value of the
 * bucket holding that rank, as HdrHistogram reports it); 0 when empty. The
 * rank is HdrHistogram Java's and hdr-histogram-js's: ceil(p/100 * total),
 * at least 1 (not HdrHistogram_c's round half up). */
int64_t ps_hist_value_at_percentile(const ps_hist *h, double percentile);
int64_t ps_hist_lowest_trackable(const ps_hist *h);
int64_t ps_hist_highest_trackable(const ps_hist *h);
int ps_hist_significant_figures(const ps_hist *h);
/* True when a and b map to the same bucket. */
bool ps_hist_values_equivalent(const ps_hist *h, int64_t a, int64_t b);

/* Writes HdrHistogram's percentile-spectrum text ("Value Percentile
 * TotalCount 1/(1-Percentile)" rows, then the #[Mean...], #[Max...],
 * #[Buckets...] footer) as hdr_percentiles_print does in CLASSIC format.
 * Values are divided by value_scale (e.g. 1000.0 to print ms from us);
 * ticks_per_half_distance is usually 5. Returns 0, or -1 on write error. */
int ps_hist_percentiles_print(const ps_hist *h, FILE *out, int ticks_per_half_distance,
                              double value_scale);

/* Encodes h in HdrHistogram's compressed V2 format (cookie 0x1c849304
 * around a zlib-deflated 0x1c849303 payload of ZigZag-LEB128 counts) and
 * appends its base64 text to out. Returns 0 or -1 with a message. Like
 * HdrHistogram_c and the Java/JS ports, the cookies are written with the
 * word-size nibble 0x10 set (0x1c849314 / 0x1c849313); readers mask it. */
int ps_hist_encode_base64(const ps_hist *h, ps_buf *out, ps_error *err);
/* Decodes such a base64 text into a new histogram (caller closes it).
 * Surrounding whitespace is ignored; the uncompressed V2 form (cookie
 * 0x1c849303) is accepted too. Corrupt input fails with a message, never
 * crashes: the declared payload length is checked against the header's
 * layout before anything is inflated. */
int ps_hist_decode_base64(const char *text, size_t len, ps_hist **out, ps_error *err);

/* --- Additions beyond the first contract (all additive). --- */

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

/* Appends the percentile spectrum in the given layout to out (CLASSIC gives
 * exactly what ps_hist_percentiles_print writes). An empty histogram prints a
 * single 100% row of 0 and, unlike HdrHistogram_c's NaN, a mean of 0.
 * ticks_per_half_distance < 1 is taken as 1, value_scale <= 0 as 1.0. */
void ps_hist_percentiles_format(const ps_hist *h, ps_buf *out, int ticks_per_half_distance,
                                double value_scale, ps_hist_format format);
/* Writes ps_hist_percentiles_format's text to out. Returns 0, or -1 on write error. */
int ps_hist_percentiles_fprint(const ps_hist *h, FILE *out, int ticks_per_half_distance,
                               double value_scale, ps_hist_format format);

/* Bytes the histogram holds (handle and counts). Fixed by ps_hist_init's
 * range and precision; recording never allocates. */
size_t ps_hist_memory_size(const ps_hist *h);
/* HdrHistogram's layout numbers (the #[Buckets...] footer line). */
int32_t ps_hist_bucket_count(const ps_hist *h);
int32_t ps_hist_sub_bucket_count(const ps_hist *h);
/* Raw access to the counts array, for comparing and exporting histograms:
 * index in [0, ps_hist_counts_len); out-of-range indexes read 0. */
int32_t ps_hist_counts_len(const ps_hist *h);
int64_t ps_hist_count_at_index(const ps_hist *h, int32_t index);
/* Lowest value counted at that index. */
int64_t ps_hist_value_at_index(const ps_hist *h, int32_t index);
/* Count recorded in value's bucket (0 for negative values; values above the
 * range read the highest trackable value's bucket, where they were clamped). */
int64_t ps_hist_count_at_value(const ps_hist *h, int64_t value);
/* Smallest and largest value sharing value's bucket (value >= 0). */
int64_t ps_hist_lowest_equivalent(const ps_hist *h, int64_t value);
int64_t ps_hist_highest_equivalent(const ps_hist *h, int64_t value);

#endif
