/* histogram.c - HDR latency histogram with HdrHistogram's bucket layout:
 * recording, merging and queries. Its text output is histogram_print.c, its
 * V2 encoding hdr_log.c (HdrHistogram_c splits it the same way). */
#include "core/histogram.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
    for (int i = 0; i < sigfigs; i++)
        single_unit_limit *= 10;
    int32_t sub_count_magnitude = 0; /* ceil(log2(2 * 10^sigfigs)) */
    while ((INT64_C(1) << sub_count_magnitude) < single_unit_limit)
        sub_count_magnitude++;
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
    if (!h) return ps_error_set(err, "histogram: cannot allocate %" PRId64 " counts", counts_len);
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
    /* A count from a file (a shard's, an interval log's) can be anything:
     * refused rather than let the total wrap (every bucket is at most the
     * total, so they cannot wrap either). */
    if (count > INT64_MAX - h->total_count) return false;
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

bool ps_hist_add_at_index(ps_hist *h, int32_t index, int64_t count)
{
    if (index < 0 || index >= h->counts_len || count < 0) return false;
    if (count > INT64_MAX - h->total_count) return false;
    h->counts[index] += count;
    h->total_count += count;
    if (count > 0) {
        /* Only the slot is known, so min and max are its lowest value: the
         * bucket every query reports anyway. */
        int64_t value = ps_hist_value_at_index(h, index);
        if (value < h->min_value) h->min_value = value;
        if (value > h->max_value) h->max_value = value;
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
        /* not kept whole: clamped to dst's range, or left out as the total would wrap */
        if (!ps_hist_record_n(dst, value, count) || value > dst->highest) dropped += count;
    }
    dst->clamped =
        src->clamped > INT64_MAX - dst->clamped ? INT64_MAX : dst->clamped + src->clamped;
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
