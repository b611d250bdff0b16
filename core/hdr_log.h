/* hdr_log.h - writer (and reader, for tests and merging) of HdrHistogram
 * interval logs: "#[StartTime: ...]" and "#[BaseTime: ...]" headers, a
 * "StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"
 * legend, then one line per interval with the base64 V2 histogram.
 *
 * The writer owns nothing but its FILE pointer's use; the caller opens and
 * closes the file. */
#ifndef PS_HDR_LOG_H
#define PS_HDR_LOG_H

#include <stdint.h>
#include <stdio.h>

#include "core/error.h"
#include "core/histogram.h"

/* Writes the log header. start_unix_s is the run's start (wall clock,
 * fractional seconds). */
int ps_hdr_log_write_header(FILE *out, double start_unix_s, ps_error *err);
/* Appends one interval: start offset from the log's start in seconds, its
 * length in seconds, and the histogram of values recorded in it.
 * max_value_scale divides the Interval_Max column (HdrHistogram's tools
 * print it in the histogram's unit divided by this; use 1.0 to keep units). */
int ps_hdr_log_write_interval(FILE *out, double start_offset_s, double length_s,
                              const ps_hist *interval, double max_value_scale, ps_error *err);

/* Reads every interval line of a log and adds their histograms into a new
 * histogram (lowest 1, highest and sigfigs from the first interval; highest
 * grows when a later interval reaches higher, so nothing is clamped). A log
 * without intervals gives an empty histogram. The caller closes *out.
 * Returns the number of intervals, or -1 with a message naming the line. */
int ps_hdr_log_read_merged(FILE *in, ps_hist **out, ps_error *err);

#endif
