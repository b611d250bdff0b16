/* histogram.c - HDR latency histogram with HdrHistogram's bucket layout,
 * percentile text and V2 compressed encoding. */
#include "core/histogram.h"

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/base64.h"

/* The layout is HdrHistogram's: bucket 0 holds sub_bucket_count slots of
 * width 2^unit_magnitude; every further bucket doubles the width and only
 * needs its upper half (the lower half is covered by the bucket before), so
 * counts has (bucket_count + 1) * sub_bucket_half_count slots. Keeping the
 * same layout makes our counts array the one HdrHistogram encodes. */
struct ps_hist {
    int64_t lowest;
    int64_t highest;
    int sigfigs;
    int32_t unit_magnitude;
    int32_t sub_bucket_half_count_magnitude;
    int32_t sub_bucket_count;
    int32_t sub_bucket_half_count;
    int32_t bucket_count;
    int32_t counts_len;
    int64_t sub_bucket_mask;
    int64_t total_count;
    int64_t clamped;
    int64_t min_value; /* smallest value recorded, INT64_MAX when empty */
    int64_t max_value; /* largest value recorded, 0 when empty */
    int64_t counts[];
};

/* ---- layout ---- */

static int32_t bucket_index_of(const ps_hist *h, int64_t value)
{
    /* OR-ing the mask makes every value below the first bucket's end land in
     * bucket 0, so no branch and no division is needed. */
    int32_t pow2ceiling = 64 - __builtin_clzll((uint64_t)(value | h->sub_bucket_mask));
    return pow2ceiling - h->unit_magnitude - (h->sub_bucket_half_count_magnitude + 1);
}

static int32_t index_of(const ps_hist *h, int64_t value)
{
    int32_t bucket = bucket_index_of(h, value);
    int32_t sub = (int32_t)(value >> (bucket + h->unit_magnitude));
    return ((bucket + 1) << h->sub_bucket_half_count_magnitude) + sub - h->sub_bucket_half_count;
}

/* Splits a counts index into its bucket and sub-bucket. */
static void index_split(const ps_hist *h, int32_t index, int32_t *bucket, int32_t *sub)
{
    int32_t b = (index >> h->sub_bucket_half_count_magnitude) - 1;
    int32_t s = (index & (h->sub_bucket_half_count - 1)) + h->sub_bucket_half_count;
    if (b < 0) {
        s -= h->sub_bucket_half_count;
        b = 0;
    }
    *bucket = b;
    *sub = s;
}

int64_t ps_hist_value_at_index(const ps_hist *h, int32_t index)
{
    int32_t bucket, sub;
    index_split(h, index, &bucket, &sub);
    return (int64_t)sub << (bucket + h->unit_magnitude);
}

static int64_t range_size_at_index(const ps_hist *h, int32_t index)
{
    int32_t bucket, sub;
    index_split(h, index, &bucket, &sub);
    return INT64_C(1) << (bucket + h->unit_magnitude);
}

int64_t ps_hist_lowest_equivalent(const ps_hist *h, int64_t value)
{
    if (value < 0) return value;
    int32_t bucket = bucket_index_of(h, value);
    int64_t sub = value >> (bucket + h->unit_magnitude);
    return sub << (bucket + h->unit_magnitude);
}

int64_t ps_hist_highest_equivalent(const ps_hist *h, int64_t value)
{
    if (value < 0) return value;
    int32_t bucket = bucket_index_of(h, value);
    return ps_hist_lowest_equivalent(h, value) + (INT64_C(1) << (bucket + h->unit_magnitude)) - 1;
}

static int64_t highest_at_index(const ps_hist *h, int32_t index)
{
    return ps_hist_value_at_index(h, index) + range_size_at_index(h, index) - 1;
}

static int64_t median_at_index(const ps_hist *h, int32_t index)
{
    return ps_hist_value_at_index(h, index) + (range_size_at_index(h, index) >> 1);
}

/* ---- life cycle ---- */

int ps_hist_init(int64_t lowest, int64_t highest, int sigfigs, ps_hist **out, ps_error *err)
{
    *out = NULL;
    if (lowest < 1)
        return ps_error_set(err, "histogram: lowest discernible value %" PRId64 " must be >= 1",
                            lowest);
    if (sigfigs < 1 || sigfigs > 5)
        return ps_error_set(err, "histogram: %d significant digits is outside 1..5", sigfigs);
    if (highest < 2 || highest / 2 < lowest)
        return ps_error_set(err,
                            "histogram: highest trackable value %" PRId64
                            " must be at least twice the lowest (%" PRId64 ")",
                            highest, lowest);

    int64_t single_unit_limit = 2;
    for (int i = 0; i < sigfigs; i++) single_unit_limit *= 10;
    int32_t sub_count_magnitude = 0; /* ceil(log2(2 * 10^sigfigs)) */
    while ((INT64_C(1) << sub_count_magnitude) < single_unit_limit) sub_count_magnitude++;
    int32_t half_magnitude = (sub_count_magnitude > 1 ? sub_count_magnitude : 1) - 1;
    int32_t unit_magnitude = 63 - __builtin_clzll((uint64_t)lowest); /* floor(log2(lowest)) */
    if (unit_magnitude + half_magnitude > 61)
        return ps_error_set(err,
                            "histogram: lowest value %" PRId64
                            " with %d significant digits leaves no room for buckets",
                            lowest, sigfigs);
    int32_t sub_count = 1 << (half_magnitude + 1);

    /* Buckets double the covered range until highest fits. */
    int64_t untrackable = (int64_t)sub_count << unit_magnitude;
    int32_t buckets = 1;
    while (untrackable <= highest) {
        if (untrackable > INT64_MAX / 2) {
            buckets++;
            break;
        }
        untrackable <<= 1;
        buckets++;
    }
    int64_t counts_len = (int64_t)(buckets + 1) * (sub_count / 2);

    ps_hist *h = calloc(1, sizeof *h + (size_t)counts_len * sizeof(int64_t));
    if (!h)
        return ps_error_set(err, "histogram: cannot allocate %" PRId64 " counts", counts_len);
    h->lowest = lowest;
    h->highest = highest;
    h->sigfigs = sigfigs;
    h->unit_magnitude = unit_magnitude;
    h->sub_bucket_half_count_magnitude = half_magnitude;
    h->sub_bucket_count = sub_count;
    h->sub_bucket_half_count = sub_count / 2;
    h->bucket_count = buckets;
    h->counts_len = (int32_t)counts_len;
    h->sub_bucket_mask = ((int64_t)sub_count - 1) << unit_magnitude;
    h->min_value = INT64_MAX;
    *out = h;
    return 0;
}

void ps_hist_close(ps_hist *h)
{
    free(h);
}

void ps_hist_reset(ps_hist *h)
{
    memset(h->counts, 0, (size_t)h->counts_len * sizeof(int64_t));
    h->total_count = 0;
    h->clamped = 0;
    h->min_value = INT64_MAX;
    h->max_value = 0;
}

size_t ps_hist_memory_size(const ps_hist *h)
{
    return sizeof *h + (size_t)h->counts_len * sizeof(int64_t);
}

/* ---- recording ---- */

bool ps_hist_record_n(ps_hist *h, int64_t value, int64_t count)
{
    if (value < 0 || count < 0) return false;
    if (value > h->highest) {
        value = h->highest;
        h->clamped += count;
    }
    h->counts[index_of(h, value)] += count;
    h->total_count += count;
    if (count > 0) {
        if (value < h->min_value) h->min_value = value;
        if (value > h->max_value) h->max_value = value;
    }
    return true;
}

bool ps_hist_record(ps_hist *h, int64_t value)
{
    return ps_hist_record_n(h, value, 1);
}

bool ps_hist_record_corrected(ps_hist *h, int64_t value, int64_t expected_interval)
{
    if (!ps_hist_record_n(h, value, 1)) return false;
    if (expected_interval <= 0 || value <= expected_interval) return true;
    /* A clamped value only gets the synthetic values below the range's top. */
    if (value > h->highest) value = h->highest;
    /* The synthetic values value - k*interval (k >= 1, down to the interval)
     * are recorded a bucket at a time: all of them that share the current
     * one's bucket in one count, so a long stall with a short interval costs
     * one step per bucket rather than one per value. */
    int64_t missing = value - expected_interval;
    while (missing >= expected_interval) {
        int64_t floor_value = ps_hist_lowest_equivalent(h, missing);
        if (floor_value < expected_interval) floor_value = expected_interval;
        int64_t n = (missing - floor_value) / expected_interval + 1;
        ps_hist_record_n(h, missing, n);
        missing -= n * expected_interval;
    }
    return true;
}

int64_t ps_hist_add(ps_hist *dst, const ps_hist *src)
{
    int64_t dropped = 0;
    for (int32_t i = 0; i < src->counts_len; i++) {
        int64_t count = src->counts[i];
        if (count == 0) continue;
        int64_t value = ps_hist_value_at_index(src, i);
        if (value > dst->highest) dropped += count;
        ps_hist_record_n(dst, value, count);
    }
    dst->clamped += src->clamped;
    return dropped;
}

/* ---- queries ---- */

int64_t ps_hist_total_count(const ps_hist *h)
{
    return h->total_count;
}

int64_t ps_hist_clamped(const ps_hist *h)
{
    return h->clamped;
}

int64_t ps_hist_min(const ps_hist *h)
{
    if (h->total_count == 0) return 0;
    return ps_hist_lowest_equivalent(h, h->min_value);
}

int64_t ps_hist_max(const ps_hist *h)
{
    if (h->max_value == 0) return 0;
    return ps_hist_highest_equivalent(h, h->max_value);
}

double ps_hist_mean(const ps_hist *h)
{
    if (h->total_count == 0) return 0.0;
    double total = 0.0;
    for (int32_t i = 0; i < h->counts_len; i++)
        if (h->counts[i]) total += (double)h->counts[i] * (double)median_at_index(h, i);
    return total / (double)h->total_count;
}

double ps_hist_stddev(const ps_hist *h)
{
    if (h->total_count == 0) return 0.0;
    double mean = ps_hist_mean(h);
    double sum = 0.0;
    for (int32_t i = 0; i < h->counts_len; i++) {
        if (!h->counts[i]) continue;
        double dev = (double)median_at_index(h, i) - mean;
        sum += dev * dev * (double)h->counts[i];
    }
    return sqrt(sum / (double)h->total_count);
}

int64_t ps_hist_value_at_percentile(const ps_hist *h, double percentile)
{
    if (h->total_count == 0) return 0;
    if (!(percentile >= 0.0)) percentile = 0.0; /* NaN and negatives */
    double requested = percentile < 100.0 ? percentile : 100.0;
    /* HdrHistogram Java's (2.1.x) and hdr-histogram-js's rank: the ceiling
     * of p/100 * total, so the value reported covers at least p percent of
     * the recorded values, less one ulp first (the product can come out one
     * ulp above an exact integer count), and at least the first value.
     * HdrHistogram_c rounds half up instead, which reports a lower value
     * whenever the fraction is below .5 (p99.99 of 14,100 values: rank
     * 1410 against the peers' 1411). Reports are checked against the JS
     * port, so its rule is ours. */
    double fp = requested / 100.0 * (double)h->total_count;
    double ulp = fp > 0 ? pow(2.0, floor(log2(fp)) - 52.0) : 0.0;
    int64_t rank = (int64_t)ceil(fp - ulp);
    if (rank < 1) rank = 1;
    int64_t cumulative = 0;
    for (int32_t i = 0; i < h->counts_len; i++) {
        cumulative += h->counts[i];
        if (cumulative >= rank)
            return percentile == 0.0 ? ps_hist_value_at_index(h, i) : highest_at_index(h, i);
    }
    return 0;
}

int64_t ps_hist_lowest_trackable(const ps_hist *h)
{
    return h->lowest;
}

int64_t ps_hist_highest_trackable(const ps_hist *h)
{
    return h->highest;
}

int ps_hist_significant_figures(const ps_hist *h)
{
    return h->sigfigs;
}

bool ps_hist_values_equivalent(const ps_hist *h, int64_t a, int64_t b)
{
    if (a < 0 || b < 0) return a == b;
    return ps_hist_lowest_equivalent(h, a) == ps_hist_lowest_equivalent(h, b);
}

int32_t ps_hist_bucket_count(const ps_hist *h)
{
    return h->bucket_count;
}

int32_t ps_hist_sub_bucket_count(const ps_hist *h)
{
    return h->sub_bucket_count;
}

int32_t ps_hist_counts_len(const ps_hist *h)
{
    return h->counts_len;
}

int64_t ps_hist_count_at_index(const ps_hist *h, int32_t index)
{
    if (index < 0 || index >= h->counts_len) return 0;
    return h->counts[index];
}

int64_t ps_hist_count_at_value(const ps_hist *h, int64_t value)
{
    if (value < 0) return 0;
    if (value > h->highest) value = h->highest;
    return h->counts[index_of(h, value)];
}

/* ---- percentile spectrum ---- */

/* Walks the percentile levels as HdrHistogram's percentile iterator does:
 * levels start at 0% and halve their distance to 100% every
 * ticks_per_half_distance steps; a bucket is reported once for each level its
 * cumulative count reaches, and a final 100% row closes the walk. */
struct pct_walk {
    const ps_hist *h;
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
    if (w->cumulative >= w->h->total_count || w->index + 1 >= w->h->counts_len) return false;
    w->index++;
    w->count = w->h->counts[w->index];
    w->cumulative += w->count;
    w->value = highest_at_index(w->h, w->index);
    return true;
}

static bool walk_next(struct pct_walk *w)
{
    const ps_hist *h = w->h;
    if (w->cumulative >= h->total_count) {
        if (w->seen_last) return false;
        w->seen_last = true;
        w->reported = 100.0;
        return true;
    }
    if (w->index == -1 && !walk_step(w)) return false;
    do {
        double current = (100.0 * (double)w->cumulative) / (double)h->total_count;
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
        for (int i = 0; i < zeros; i++) digits[len++] = '0';
        point = 1;
    }
    for (int i = 0; i < n && len < (int)sizeof digits - 1; i++) digits[len++] = mant[i];
    while (len < point + decimals + 1 && len < (int)sizeof digits - 1) digits[len++] = '0';
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
    for (int i = 0; i < point; i++) text[t++] = digits[i];
    if (decimals > 0) {
        text[t++] = '.';
        for (int i = point; i < len; i++) text[t++] = digits[i];
    }
    text[t] = '\0';
    ps_buf_printf(out, "%*s", width, text);
}

void ps_hist_percentiles_format(const ps_hist *h, ps_buf *out, int ticks_per_half_distance,
                                double value_scale, ps_hist_format format)
{
    if (ticks_per_half_distance < 1) ticks_per_half_distance = 1;
    if (!(value_scale > 0.0)) value_scale = 1.0;
    int sf = h->sigfigs;
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

    struct pct_walk w = {.h = h, .ticks_per_half_distance = ticks_per_half_distance, .index = -1};
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
                      (uint64_t)h->total_count);
        ps_buf_printf(out, "#[Buckets = %12d, SubBuckets     = %12d]\n", h->bucket_count,
                      h->sub_bucket_count);
    } else if (format == PS_HIST_FORMAT_JAVA) {
        ps_buf_puts(out, "#[Mean    = ");
        put_fixed_java(out, 12, sf, mean);
        ps_buf_puts(out, ", StdDeviation   = ");
        put_fixed_java(out, 12, sf, stddev);
        ps_buf_puts(out, "]\n#[Max     = ");
        put_fixed_java(out, 12, sf, max);
        ps_buf_printf(out, ", Total count    = %12" PRId64 "]\n", h->total_count);
        ps_buf_printf(out, "#[Buckets = %12d, SubBuckets     = %12d]\n", h->bucket_count,
                      h->sub_bucket_count);
    }
}

int ps_hist_percentiles_fprint(const ps_hist *h, FILE *out, int ticks_per_half_distance,
                               double value_scale, ps_hist_format format)
{
    ps_buf text = PS_BUF_INIT;
    ps_hist_percentiles_format(h, &text, ticks_per_half_distance, value_scale, format);
    int rc = fwrite(text.data, 1, text.len, out) == text.len ? 0 : -1;
    ps_buf_free(&text);
    return rc;
}

int ps_hist_percentiles_print(const ps_hist *h, FILE *out, int ticks_per_half_distance,
                              double value_scale)
{
    return ps_hist_percentiles_fprint(h, out, ticks_per_half_distance, value_scale,
                                      PS_HIST_FORMAT_CLASSIC);
}

/* ---- V2 encoding ---- */

/* Cookies carry a word-size nibble (bits 4..7); HdrHistogram writes 1 there
 * for the ZigZag-LEB128 form and compares cookies with that nibble masked. */
#define V2_ENCODING_COOKIE 0x1c849303u
#define V2_COMPRESSED_COOKIE 0x1c849304u
#define COOKIE_BASE(c) ((c) & ~0xf0u)
#define ENCODING_HEADER_LEN 40
#define COMPRESSED_HEADER_LEN 8
#define MAX_LEB128_LEN 9

static void put_be32(unsigned char *p, uint32_t v)
{
    for (int i = 3; i >= 0; i--, v >>= 8) p[i] = (unsigned char)(v & 0xff);
}

static void put_be64(unsigned char *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8) p[i] = (unsigned char)(v & 0xff);
}

static uint32_t get_be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t get_be64(const unsigned char *p)
{
    return (uint64_t)get_be32(p) << 32 | get_be32(p + 4);
}

/* ZigZag then LEB128, at most 9 bytes: the 9th carries the last 8 bits whole
 * (HdrHistogram's "LEB128-64b9B" variant). */
static size_t put_zigzag(unsigned char *p, int64_t value)
{
    uint64_t u = ((uint64_t)value << 1) ^ (uint64_t)(value >> 63);
    for (size_t i = 0; i < 8; i++) {
        if (u < 0x80) {
            p[i] = (unsigned char)u;
            return i + 1;
        }
        p[i] = (unsigned char)((u & 0x7f) | 0x80);
        u >>= 7;
    }
    p[8] = (unsigned char)u;
    return 9;
}

/* Returns the bytes consumed, or 0 when the value runs past end. */
static size_t get_zigzag(const unsigned char *p, size_t avail, int64_t *value)
{
    uint64_t u = 0;
    size_t n = 0;
    for (;;) {
        if (n >= avail) return 0;
        unsigned char b = p[n];
        if (n == 8) {
            u |= (uint64_t)b << 56;
            n++;
            break;
        }
        u |= (uint64_t)(b & 0x7f) << (7 * n);
        n++;
        if (!(b & 0x80)) break;
    }
    *value = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
    return n;
}

int ps_hist_encode_base64(const ps_hist *h, ps_buf *out, ps_error *err)
{
    int rc = -1;
    unsigned char *raw = NULL, *packed = NULL;

    int32_t limit = h->counts_len;
    while (limit > 0 && h->counts[limit - 1] == 0) limit--;
    size_t raw_cap = ENCODING_HEADER_LEN + (size_t)limit * MAX_LEB128_LEN;
    raw = malloc(raw_cap);
    if (!raw) {
        ps_error_set(err, "histogram encoding: cannot allocate %zu bytes", raw_cap);
        goto out;
    }
    size_t pos = ENCODING_HEADER_LEN;
    for (int32_t i = 0; i < limit;) {
        int64_t count = h->counts[i++];
        if (count == 0) {
            int64_t zeros = 1;
            while (i < limit && h->counts[i] == 0) {
                zeros++;
                i++;
            }
            /* A lone zero is written as 0, a run as its negated length. */
            pos += put_zigzag(raw + pos, zeros > 1 ? -zeros : 0);
        } else {
            pos += put_zigzag(raw + pos, count);
        }
    }
    put_be32(raw, V2_ENCODING_COOKIE | 0x10u);
    put_be32(raw + 4, (uint32_t)(pos - ENCODING_HEADER_LEN));
    put_be32(raw + 8, 0); /* normalizing index offset */
    put_be32(raw + 12, (uint32_t)h->sigfigs);
    put_be64(raw + 16, (uint64_t)h->lowest);
    put_be64(raw + 24, (uint64_t)h->highest);
    double ratio = 1.0; /* integer-to-double conversion ratio */
    uint64_t ratio_bits;
    memcpy(&ratio_bits, &ratio, sizeof ratio_bits);
    put_be64(raw + 32, ratio_bits);

    uLongf packed_len = compressBound((uLong)pos);
    packed = malloc(COMPRESSED_HEADER_LEN + packed_len);
    if (!packed) {
        ps_error_set(err, "histogram encoding: cannot allocate %lu bytes",
                     (unsigned long)packed_len);
        goto out;
    }
    int zrc = compress2(packed + COMPRESSED_HEADER_LEN, &packed_len, raw, (uLong)pos,
                        Z_DEFAULT_COMPRESSION);
    if (zrc != Z_OK) {
        ps_error_set(err, "histogram encoding: zlib compress failed (%d)", zrc);
        goto out;
    }
    put_be32(packed, V2_COMPRESSED_COOKIE | 0x10u);
    put_be32(packed + 4, (uint32_t)packed_len);
    ps_base64_encode(packed, COMPRESSED_HEADER_LEN + packed_len, out);
    rc = 0;
out:
    free(raw);
    free(packed);
    return rc;
}

/* Inflates exactly want bytes from the stream into dst. Returns 0, or -1 when
 * the stream is corrupt or ends early. */
static int inflate_exactly(z_stream *zs, unsigned char *dst, size_t want, bool expect_end,
                           ps_error *err, const char *what)
{
    zs->next_out = dst;
    zs->avail_out = (uInt)want;
    while (zs->avail_out > 0) {
        int zrc = inflate(zs, Z_NO_FLUSH);
        if (zrc == Z_STREAM_END) break;
        if (zrc == Z_BUF_ERROR) /* no progress: the input ran out */
            return ps_error_set(err, "encoded histogram: compressed data ends inside the %s",
                                what);
        if (zrc != Z_OK)
            return ps_error_set(err, "encoded histogram: corrupt deflate data in the %s (%s)",
                                what, zs->msg ? zs->msg : "zlib error");
        if (zs->avail_in == 0 && zs->avail_out > 0)
            return ps_error_set(err, "encoded histogram: compressed data ends inside the %s",
                                what);
    }
    if (zs->avail_out > 0)
        return ps_error_set(err, "encoded histogram: %s is %zu bytes short", what,
                            (size_t)zs->avail_out);
    if (expect_end) {
        unsigned char extra;
        zs->next_out = &extra;
        zs->avail_out = 1;
        int zrc = inflate(zs, Z_FINISH);
        if (zrc != Z_STREAM_END)
            return ps_error_set(err, "encoded histogram: data continues past the declared "
                                     "payload length");
    }
    return 0;
}

/* Creates the histogram an encoding header (40 bytes) describes and fills its
 * counts from the ZigZag-LEB128 payload. */
static int hist_from_header(const unsigned char *hdr, ps_hist **out, ps_error *err)
{
    int32_t sigfigs = (int32_t)get_be32(hdr + 12);
    int64_t lowest = (int64_t)get_be64(hdr + 16);
    int64_t highest = (int64_t)get_be64(hdr + 24);
    if (ps_hist_init(lowest, highest, sigfigs, out, err) < 0)
        return ps_error_prefix(err, "encoded histogram header: ");
    return 0;
}

static int fill_counts(ps_hist *h, const unsigned char *payload, size_t payload_len, ps_error *err)
{
    size_t pos = 0;
    int32_t index = 0;
    int64_t total = 0;
    while (pos < payload_len) {
        int64_t v;
        size_t n = get_zigzag(payload + pos, payload_len - pos, &v);
        if (n == 0)
            return ps_error_set(err, "encoded histogram: count at payload byte %zu is truncated",
                                pos);
        pos += n;
        if (v < 0) {
            if (v < -(int64_t)(h->counts_len - index))
                return ps_error_set(err,
                                    "encoded histogram: a run of %" PRId64
                                    " zeros passes the end of the %" PRId32 " counts",
                                    -v, h->counts_len);
            index += (int32_t)-v;
            continue;
        }
        if (index >= h->counts_len)
            return ps_error_set(err,
                                "encoded histogram: more than the %" PRId32
                                " counts its layout has",
                                h->counts_len);
        if (v > INT64_MAX - total)
            return ps_error_set(err, "encoded histogram: total count overflows");
        h->counts[index++] = v;
        total += v;
    }
    /* Min and max are only known to bucket precision after a round trip;
     * their bucket is what every query reports anyway. */
    h->total_count = total;
    for (int32_t i = 0; i < h->counts_len; i++) {
        if (!h->counts[i]) continue;
        if (h->min_value == INT64_MAX) h->min_value = ps_hist_value_at_index(h, i);
        h->max_value = ps_hist_value_at_index(h, i);
    }
    return 0;
}

int ps_hist_decode_base64(const char *text, size_t len, ps_hist **out, ps_error *err)
{
    int rc = -1;
    ps_buf bytes = PS_BUF_INIT;
    unsigned char *payload = NULL;
    ps_hist *h = NULL;
    z_stream zs;
    bool zs_open = false;
    *out = NULL;

    /* Surrounding whitespace (a line's newline, a file's last line) is not
     * part of the encoding; HdrHistogram's readers trim it too. */
    while (len > 0 && (*text == ' ' || *text == '\t' || *text == '\r' || *text == '\n')) {
        text++;
        len--;
    }
    while (len > 0 && (text[len - 1] == ' ' || text[len - 1] == '\t' || text[len - 1] == '\r' ||
                       text[len - 1] == '\n'))
        len--;
    if (ps_base64_decode(text, len, &bytes, err) < 0) {
        ps_error_prefix(err, "encoded histogram: ");
        goto out;
    }
    const unsigned char *b = (const unsigned char *)bytes.data;
    if (bytes.len < COMPRESSED_HEADER_LEN) {
        ps_error_set(err, "encoded histogram: %zu bytes is too short for a header", bytes.len);
        goto out;
    }
    uint32_t cookie = get_be32(b);
    unsigned char hdr[ENCODING_HEADER_LEN];

    if (COOKIE_BASE(cookie) == V2_ENCODING_COOKIE) {
        /* Uncompressed V2: accepted too, it is the same payload. */
        if (bytes.len < ENCODING_HEADER_LEN) {
            ps_error_set(err, "encoded histogram: %zu bytes is too short for a header", bytes.len);
            goto out;
        }
        uint32_t plen = get_be32(b + 4);
        if (plen > bytes.len - ENCODING_HEADER_LEN) {
            ps_error_set(err, "encoded histogram: payload length %" PRIu32 " exceeds the data",
                         plen);
            goto out;
        }
        if (hist_from_header(b, &h, err) < 0) goto out;
        if (fill_counts(h, b + ENCODING_HEADER_LEN, plen, err) < 0) goto out;
        goto done;
    }
    if (COOKIE_BASE(cookie) != V2_COMPRESSED_COOKIE) {
        ps_error_set(err,
                     "encoded histogram: cookie 0x%08" PRIx32
                     " is not HdrHistogram's compressed V2 (0x1c849304)",
                     cookie);
        goto out;
    }
    uint32_t packed_len = get_be32(b + 4);
    if (packed_len > bytes.len - COMPRESSED_HEADER_LEN) {
        ps_error_set(err,
                     "encoded histogram: compressed length %" PRIu32 " exceeds the %zu bytes given",
                     packed_len, bytes.len - COMPRESSED_HEADER_LEN);
        goto out;
    }
    memset(&zs, 0, sizeof zs);
    if (inflateInit(&zs) != Z_OK) {
        ps_error_set(err, "encoded histogram: zlib inflateInit failed");
        goto out;
    }
    zs_open = true;
    zs.next_in = (Bytef *)(b + COMPRESSED_HEADER_LEN);
    zs.avail_in = packed_len;
    if (inflate_exactly(&zs, hdr, sizeof hdr, false, err, "header") < 0) goto out;
    uint32_t inner = get_be32(hdr);
    if (COOKIE_BASE(inner) != V2_ENCODING_COOKIE) {
        ps_error_set(err,
                     "encoded histogram: inner cookie 0x%08" PRIx32 " is not V2 (0x1c849303)",
                     inner);
        goto out;
    }
    uint32_t plen = get_be32(hdr + 4);
    /* Every count takes 1..9 bytes, so a longer payload cannot be a histogram
     * of any layout; checking first keeps a forged length from allocating. */
    if (plen > (uint32_t)INT32_MAX) {
        ps_error_set(err, "encoded histogram: payload length %" PRIu32 " is not plausible", plen);
        goto out;
    }
    if (hist_from_header(hdr, &h, err) < 0) goto out;
    size_t max_payload = (size_t)h->counts_len * MAX_LEB128_LEN;
    if (plen > max_payload) {
        ps_error_set(err,
                     "encoded histogram: payload length %" PRIu32
                     " exceeds what its layout can need (%zu)",
                     plen, max_payload);
        goto out;
    }
    payload = malloc(plen ? plen : 1);
    if (!payload) {
        ps_error_set(err, "encoded histogram: cannot allocate %" PRIu32 " bytes", plen);
        goto out;
    }
    if (inflate_exactly(&zs, payload, plen, true, err, "payload") < 0) goto out;
    if (fill_counts(h, payload, plen, err) < 0) goto out;
done:
    *out = h;
    h = NULL;
    rc = 0;
out:
    ps_hist_close(h);
    if (zs_open) inflateEnd(&zs);
    free(payload);
    ps_buf_free(&bytes);
    return rc;
}
