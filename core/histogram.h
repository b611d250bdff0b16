/* histogram.h - HDR-style latency histogram: recording, merging and queries
 * (our own implementation of the HdrHistogram bucket layout, so its output
 * formats and encodings are interchangeable with HdrHistogram's tools). The
 * percentile-spectrum text is histogram_print.h; the compressed V2 encoding
 * and the interval log are hdr_log.h.
 *
 * Values are plain int64 in whatever unit the caller chooses (the load
 * generator records microseconds). Memory is fixed at init from the range and
 * precision, whatever the number of values recorded. A histogram is not
 * thread-safe: each thread records into its own and they are merged with
 * ps_hist_add after join. */
#ifndef PS_HISTOGRAM_H
#define PS_HISTOGRAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
/* false (nothing recorded) for a negative value or count, or a count that
 * would take the total past INT64_MAX */
bool ps_hist_record_n(ps_hist *h, int64_t value, int64_t count);
/* Records value and, when value > expected_interval > 0, the synthetic
 * values value - k*expected_interval that a request sent on schedule would
 * have seen (HdrHistogram's recordCorrectedValue). */
bool ps_hist_record_corrected(ps_hist *h, int64_t value, int64_t expected_interval);

/* Adds every count of src into dst (same or different layout). Returns the
 * number of values that did not fit dst's range (they are clamped), or whose
 * count would take dst's total past INT64_MAX (those are left out). */
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
/* Adds count to the slot at index, as a decoder restores a histogram; min
 * and max become known to that slot's precision. False (nothing changed) for
 * an index outside [0, ps_hist_counts_len), a negative count, or a total
 * that would overflow. */
bool ps_hist_add_at_index(ps_hist *h, int32_t index, int64_t count);
/* Lowest value counted at that index. */
int64_t ps_hist_value_at_index(const ps_hist *h, int32_t index);
/* Count recorded in value's bucket (0 for negative values; values above the
 * range read the highest trackable value's bucket, where they were clamped). */
int64_t ps_hist_count_at_value(const ps_hist *h, int64_t value);
/* Smallest and largest value sharing value's bucket (value >= 0). */
int64_t ps_hist_lowest_equivalent(const ps_hist *h, int64_t value);
int64_t ps_hist_highest_equivalent(const ps_hist *h, int64_t value);

#endif
