/* hdr_log.h - HdrHistogram's log codec, as HdrHistogram_c's
 * hdr_histogram_log.h: the compressed V2 encoding of one histogram (base64
 * text), and the interval log of such histograms: "#[StartTime: ...]" and
 * "#[BaseTime: ...]" headers, a
 * "StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"
 * legend, then one line per interval with the base64 V2 histogram; a writer,
 * and a reader for tests and merging.
 *
 * The writer owns nothing but its FILE pointer's use; the caller opens and
 * closes the file. */
#ifndef PS_HDR_LOG_H
#define PS_HDR_LOG_H

#include <stdint.h>
#include <stdio.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/histogram.h"

/* Encodes h in HdrHistogram's compressed V2 format (cookie 0x1c849304
 * around a zlib-deflated 0x1c849303 payload of ZigZag-LEB128 counts) and
 * appends its base64 text to out. Returns 0 or -1 with a message. Like
 * HdrHistogram_c and the Java/JS ports, the cookies are written with the
 * word-size nibble 0x10 set (0x1c849314 / 0x1c849313); readers mask it. */
int ps_hdr_log_encode(const ps_hist *h, ps_buf *out, ps_error *err);
/* Decodes such a base64 text into a new histogram (caller closes it).
 * Surrounding whitespace is ignored; the uncompressed V2 form (cookie
 * 0x1c849303) is accepted too. Corrupt input fails with a message, never
 * crashes: the declared payload length is checked against the header's
 * layout before anything is inflated. Min and max come back to bucket
 * precision. */
int ps_hdr_log_decode(const char *text, size_t len, ps_hist **out, ps_error *err);
/* The same, refusing (before any allocation) a histogram whose range or
 * precision is not like's: what a reader of its own files (petstore-load
 * merge) knows to expect. */
int ps_hdr_log_decode_like(const char *text, size_t len, const ps_hist *like, ps_hist **out,
                           ps_error *err);

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
