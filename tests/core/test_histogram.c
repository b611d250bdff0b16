/* test_histogram.c - the HDR histogram: HdrHistogram's layout and numbers,
 * precision bounds, clamping, merging, coordinated-omission correction, fixed
 * memory, restoring counts by index, the V2 encoding round trip (core/hdr_log)
 * and the percentile text (core/histogram_print). */
#define _GNU_SOURCE
#include <malloc.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "core/base64.h"
#include "core/buf.h"
#include "core/hdr_log.h"
#include "core/histogram.h"
#include "core/histogram_print.h"
#include "harness.h"

#define US_60S INT64_C(60000000)
#define STARTS_WITH(s, lit) (strncmp((s), (lit), sizeof(lit) - 1) == 0)

static ps_hist *make(int64_t lowest, int64_t highest, int sigfigs)
{
    ps_hist *h = NULL;
    ps_error err;
    if (ps_hist_init(lowest, highest, sigfigs, &h, &err) < 0) {
        fprintf(stderr, "ps_hist_init(%lld, %lld, %d): %s\n", (long long)lowest, (long long)highest,
                sigfigs, err.message);
        exit(2);
    }
    return h;
}

/* Small deterministic generator so failures reproduce. */
static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* A latency-like value: log-uniform between 1 us and ~60 s. */
static int64_t latency_value(void)
{
    int shift = (int)(rng() % 26);
    return (int64_t)(1 + (rng() & ((UINT64_C(1) << shift) - 1)) + (UINT64_C(1) << shift) - 1);
}

static bool same_counts(const ps_hist *a, const ps_hist *b)
{
    if (ps_hist_counts_len(a) != ps_hist_counts_len(b)) return false;
    for (int32_t i = 0; i < ps_hist_counts_len(a); i++)
        if (ps_hist_count_at_index(a, i) != ps_hist_count_at_index(b, i)) {
            fprintf(stderr, "  counts differ at index %d: %lld vs %lld\n", i,
                    (long long)ps_hist_count_at_index(a, i),
                    (long long)ps_hist_count_at_index(b, i));
            return false;
        }
    return true;
}

static void layout_matches_hdrhistogram(void)
{
    /* HdrHistogram_c's own test: 1..3600 s in us at 3 digits has 23552 counts. */
    ps_hist *h = make(1, INT64_C(3600000000), 3);
    CHECK_INT(ps_hist_counts_len(h), 23552);
    CHECK_INT(ps_hist_sub_bucket_count(h), 2048);
    ps_hist_close(h);

    /* 60 s in us: 2048 sub-buckets (2^ceil(log2(2000))), and as many buckets as
     * doublings of 2048 it takes to pass 60,000,000. */
    h = make(1, US_60S, 3);
    int expected_buckets = 1 + (int)ceil(log2((double)(US_60S + 1) / 2048.0));
    CHECK_INT(ps_hist_sub_bucket_count(h), 2048);
    CHECK_INT(ps_hist_bucket_count(h), expected_buckets);
    CHECK_INT(ps_hist_counts_len(h), (expected_buckets + 1) * 1024);
    CHECK_INT(ps_hist_lowest_trackable(h), 1);
    CHECK_INT(ps_hist_highest_trackable(h), US_60S);
    CHECK_INT(ps_hist_significant_figures(h), 3);
    /* Fixed memory of a few hundred KiB, not proportional to the range. */
    CHECK(ps_hist_memory_size(h) < 200 * 1024);
    ps_hist_close(h);

    for (int sf = 1; sf <= 5; sf++) {
        h = make(1, US_60S, sf);
        int64_t need = 2;
        for (int i = 0; i < sf; i++)
            need *= 10;
        int64_t sub = ps_hist_sub_bucket_count(h);
        CHECK(sub >= need && sub / 2 < need); /* smallest power of two >= 2*10^sf */
        ps_hist_close(h);
    }

    ps_hist *bad = NULL;
    ps_error err = {""};
    CHECK_INT(ps_hist_init(0, 1000, 3, &bad, &err), -1);
    CHECK(strstr(err.message, "lowest") != NULL);
    CHECK_INT(ps_hist_init(1, 1000, 0, &bad, &err), -1);
    CHECK(strstr(err.message, "significant") != NULL);
    CHECK_INT(ps_hist_init(1, 1000, 6, &bad, &err), -1);
    CHECK_INT(ps_hist_init(80, 110, 5, &bad, &err), -1);
    CHECK(strstr(err.message, "twice") != NULL);
    CHECK(bad == NULL);
}

static void uniform_values_give_exact_ranks(void)
{
    const int64_t n = 100000;
    ps_hist *h = make(1, US_60S, 3);
    for (int64_t v = 1; v <= n; v++)
        CHECK(ps_hist_record(h, v));
    CHECK_INT(ps_hist_total_count(h), n);
    const double ps[] = {1, 10, 25, 50, 75, 90, 99, 99.9, 99.99, 100};
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
        /* With values 1..n the value of rank r is r itself; the histogram may
         * only report the top of r's bucket, at most 1/1000 above it. The
         * rank is the ceiling of p/100 * n (HdrHistogram Java, JS). */
        int64_t rank = (int64_t)ceil(ps[i] / 100.0 * (double)n);
        if (rank < 1) rank = 1;
        int64_t got = ps_hist_value_at_percentile(h, ps[i]);
        if (!(got >= rank && got <= rank + rank / 1000)) {
            fprintf(stderr, "  p%g: got %lld, exact %lld\n", ps[i], (long long)got,
                    (long long)rank);
            CHECK(0);
        }
    }
    CHECK_INT(ps_hist_min(h), 1);
    CHECK(ps_hist_max(h) >= n && ps_hist_max(h) <= n + n / 1000);
    double exact_mean = (double)(n + 1) / 2.0;
    double exact_sd = sqrt(((double)n * (double)n - 1.0) / 12.0);
    CHECK(fabs(ps_hist_mean(h) - exact_mean) <= exact_mean * 1e-3);
    CHECK(fabs(ps_hist_stddev(h) - exact_sd) <= exact_sd * 1e-3);
    /* p0 reports the lowest value of the first bucket. */
    CHECK_INT(ps_hist_value_at_percentile(h, 0), 1);
    ps_hist_reset(h);
    CHECK_INT(ps_hist_total_count(h), 0);
    CHECK_INT(ps_hist_value_at_percentile(h, 99), 0);
    CHECK_INT(ps_hist_max(h), 0);
    CHECK_INT(ps_hist_min(h), 0);
    CHECK(ps_hist_mean(h) == 0.0);
    ps_hist_close(h);
}

static bool near(double got, double want, double rel)
{
    return fabs(got - want) <= fabs(want) * rel;
}

/* The rank is the ceiling of p/100 * total (HdrHistogram Java 2.1.x,
 * hdr-histogram-js), not HdrHistogram_c's round half up: of 1..10, p71 is
 * rank ceil(7.1) = 8 (half up: 7); and the one-ulp guard keeps p70 at rank
 * 7 although 0.7 * 10 comes out as 7.000000000000001. */
static void rank_is_the_ceiling(void)
{
    ps_hist *h = make(1, US_60S, 3);
    for (int64_t v = 1; v <= 10; v++)
        ps_hist_record(h, v);
    CHECK_INT(ps_hist_value_at_percentile(h, 71), 8);
    CHECK_INT(ps_hist_value_at_percentile(h, 70), 7);
    CHECK_INT(ps_hist_value_at_percentile(h, 90.5), 10);
    CHECK_INT(ps_hist_value_at_percentile(h, 0.01), 1); /* at least the first value */
    ps_hist_close(h);
}

static void hdrhistogram_reference_example(void)
{
    /* HdrHistogram's classic example: 10,000 values of 1 ms and one 100 s
     * stall, recorded raw and corrected at a 10 ms expected interval (units
     * of us). Expected numbers are HdrHistogram's. */
    ps_hist *raw = make(1, INT64_C(3600000000), 3);
    ps_hist *cor = make(1, INT64_C(3600000000), 3);
    for (int i = 0; i < 10000; i++) {
        ps_hist_record(raw, 1000);
        ps_hist_record_corrected(cor, 1000, 10000);
    }
    ps_hist_record(raw, 100000000);
    ps_hist_record_corrected(cor, 100000000, 10000);

    CHECK_INT(ps_hist_total_count(raw), 10001);
    CHECK_INT(ps_hist_total_count(cor), 20000);
    CHECK_INT(ps_hist_min(raw), 1000);
    CHECK_INT(ps_hist_min(cor), 1000);
    CHECK(ps_hist_values_equivalent(raw, ps_hist_max(raw), 100000000));
    CHECK(ps_hist_values_equivalent(cor, ps_hist_max(cor), 100000000));

    CHECK(near((double)ps_hist_value_at_percentile(raw, 30.0), 1000.0, 0.001));
    CHECK(near((double)ps_hist_value_at_percentile(raw, 99.0), 1000.0, 0.001));
    CHECK(near((double)ps_hist_value_at_percentile(raw, 99.99), 1000.0, 0.001));
    CHECK(near((double)ps_hist_value_at_percentile(raw, 99.999), 100000000.0, 0.001));
    CHECK(near((double)ps_hist_value_at_percentile(raw, 100.0), 100000000.0, 0.001));

    CHECK(near((double)ps_hist_value_at_percentile(cor, 30.0), 1000.0, 0.001));
    CHECK(near((double)ps_hist_value_at_percentile(cor, 50.0), 1000.0, 0.001));
    CHECK(near((double)ps_hist_value_at_percentile(cor, 75.0), 50000000.0, 0.001));
    CHECK(near((double)ps_hist_value_at_percentile(cor, 90.0), 80000000.0, 0.001));
    CHECK(near((double)ps_hist_value_at_percentile(cor, 99.0), 98000000.0, 0.001));
    CHECK(near((double)ps_hist_value_at_percentile(cor, 99.999), 100000000.0, 0.001));
    CHECK(near((double)ps_hist_value_at_percentile(cor, 100.0), 100000000.0, 0.001));
    ps_hist_close(raw);
    ps_hist_close(cor);

    /* HdrHistogram_c's large-value case: lowest 2e7, 5 digits. */
    ps_hist *h = make(20000000, 100000000, 5);
    ps_hist_record(h, 100000000);
    ps_hist_record(h, 20000000);
    ps_hist_record(h, 30000000);
    CHECK(ps_hist_values_equivalent(h, 20000000, ps_hist_value_at_percentile(h, 50.0)));
    /* Ranks by the ceiling (hdr-histogram-js gives these three as well):
     * 66.66% of 3 is 1.9998, rank 2; 66.67% is 2.0001, rank 3; 83.33% is
     * 2.4999, rank 3 (HdrHistogram_c's half-up made it 2: 3e7). */
    CHECK(ps_hist_values_equivalent(h, 30000000, ps_hist_value_at_percentile(h, 66.66)));
    CHECK(ps_hist_values_equivalent(h, 100000000, ps_hist_value_at_percentile(h, 66.67)));
    CHECK(ps_hist_values_equivalent(h, 100000000, ps_hist_value_at_percentile(h, 83.33)));
    CHECK(ps_hist_values_equivalent(h, 100000000, ps_hist_value_at_percentile(h, 83.34)));
    CHECK(ps_hist_values_equivalent(h, 100000000, ps_hist_value_at_percentile(h, 99.0)));
    ps_hist_close(h);
}

static void corrected_stall_adds_synthetic_values(void)
{
    /* One response of 1 s when a request was due every 10 ms: the 99 requests
     * that would have been sent during the stall waited 990 ms, 980 ms, ...,
     * 10 ms. */
    ps_hist *h = make(1, US_60S, 3);
    CHECK(ps_hist_record_corrected(h, 1000000, 10000));
    CHECK_INT(ps_hist_total_count(h), 100);
    int all_one = 1;
    for (int64_t k = 1; k <= 100; k++)
        if (ps_hist_count_at_value(h, k * 10000) != 1) all_one = 0;
    CHECK(all_one);
    CHECK_INT(ps_hist_count_at_value(h, 5000), 0);
    CHECK_INT(ps_hist_min(h), 10000);
    CHECK(ps_hist_values_equivalent(h, ps_hist_max(h), 1000000));
    ps_hist_reset(h);

    /* No correction at or below the interval, nor without an interval. */
    ps_hist_record_corrected(h, 10000, 10000);
    ps_hist_record_corrected(h, 5000, 10000);
    ps_hist_record_corrected(h, 900000, 0);
    CHECK_INT(ps_hist_total_count(h), 3);
    /* 2x the interval adds exactly one. */
    ps_hist_record_corrected(h, 20000, 10000);
    CHECK_INT(ps_hist_total_count(h), 5);
    CHECK_INT(ps_hist_count_at_value(h, 10000), 2);
    CHECK(!ps_hist_record_corrected(h, -5, 10));
    CHECK_INT(ps_hist_total_count(h), 5);
    ps_hist_close(h);

    /* Against the definition, one synthetic value at a time, including
     * intervals of 1 and values above the range (clamped first). */
    const int64_t cases[][2] = {{100000, 1},          {100000, 7},  {US_60S, 3}, {59999999, 1000},
                                {US_60S * 3, 999983}, {4096, 4096}, {4097, 2048}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int64_t value = cases[c][0], interval = cases[c][1];
        ps_hist *fast = make(1, US_60S, 3), *slow = make(1, US_60S, 3);
        CHECK(ps_hist_record_corrected(fast, value, interval));
        int64_t top = value < US_60S ? value : US_60S;
        ps_hist_record(slow, value);
        for (int64_t m = top - interval; m >= interval; m -= interval)
            ps_hist_record(slow, m);
        if (!same_counts(fast, slow)) {
            fprintf(stderr, "  corrected %lld at interval %lld differs\n", (long long)value,
                    (long long)interval);
            CHECK(0);
        }
        CHECK_INT(ps_hist_total_count(fast), ps_hist_total_count(slow));
        CHECK_INT(ps_hist_min(fast), ps_hist_min(slow));
        CHECK_INT(ps_hist_max(fast), ps_hist_max(slow));
        CHECK_INT(ps_hist_clamped(fast), ps_hist_clamped(slow));
        ps_hist_close(fast);
        ps_hist_close(slow);
    }
}

static void equivalence_ranges_at_three_digits(void)
{
    ps_hist *h = make(1, US_60S, 3);
    /* Below 2048 every integer has its own bucket. */
    for (int64_t v = 0; v < 2047; v++)
        if (ps_hist_values_equivalent(h, v, v + 1)) {
            CHECK(0);
            break;
        }
    CHECK(ps_hist_values_equivalent(h, 2048, 2049));
    CHECK(!ps_hist_values_equivalent(h, 2049, 2050));
    CHECK_INT(ps_hist_lowest_equivalent(h, 4099), 4096);
    CHECK_INT(ps_hist_highest_equivalent(h, 4096), 4099);
    /* Everywhere: v lies in its bucket, the bucket is a power of two wide and
     * narrower than a thousandth of v, and its neighbours are other buckets. */
    int bad = 0;
    for (int i = 0; i < 200000 && !bad; i++) {
        int64_t v = (int64_t)(rng() % (uint64_t)US_60S);
        int64_t lo = ps_hist_lowest_equivalent(h, v), hi = ps_hist_highest_equivalent(h, v);
        int64_t width = hi - lo + 1;
        if (lo > v || hi < v || (width & (width - 1)) != 0) bad = 1;
        if (v >= 2048 && (double)width > (double)v / 1000.0) bad = 1;
        if (ps_hist_values_equivalent(h, v, hi + 1)) bad = 1;
        if (lo > 0 && ps_hist_values_equivalent(h, v, lo - 1)) bad = 1;
        if (!ps_hist_values_equivalent(h, lo, hi)) bad = 1;
        if (bad)
            fprintf(stderr, "  value %lld: bucket [%lld, %lld]\n", (long long)v, (long long)lo,
                    (long long)hi);
    }
    CHECK(!bad);
    ps_hist_close(h);

    /* A lowest discernible value of 1000 makes 0..511 (2^9 units) one bucket. */
    h = make(1000, US_60S, 3);
    CHECK(ps_hist_values_equivalent(h, 0, 511));
    CHECK(!ps_hist_values_equivalent(h, 511, 512));
    ps_hist_close(h);
}

static void out_of_range_values_are_clamped(void)
{
    ps_hist *h = make(1, 1000, 3);
    CHECK(ps_hist_record(h, 1000));
    CHECK(ps_hist_record(h, 5000));
    CHECK(ps_hist_record_n(h, INT64_MAX, 3));
    CHECK_INT(ps_hist_clamped(h), 4);
    CHECK_INT(ps_hist_total_count(h), 5);
    CHECK_INT(ps_hist_count_at_value(h, 1000), 5);
    CHECK_INT(ps_hist_max(h), 1000);
    CHECK(!ps_hist_record(h, -1));
    CHECK(!ps_hist_record_n(h, 10, -2));
    CHECK_INT(ps_hist_total_count(h), 5);
    ps_hist_reset(h);
    CHECK_INT(ps_hist_clamped(h), 0);
    ps_hist_close(h);
}

/* Restoring counts slot by slot (what the V2 decoder does) gives the
 * histogram that recording the same values gave, to bucket precision, and
 * refuses slots and counts that do not exist. */
static void counts_restore_by_index(void)
{
    ps_hist *recorded = make(1, US_60S, 3);
    ps_hist *restored = make(1, US_60S, 3);
    for (int i = 0; i < 5000; i++)
        ps_hist_record(recorded, latency_value());
    for (int32_t i = 0; i < ps_hist_counts_len(recorded); i++)
        CHECK(ps_hist_add_at_index(restored, i, ps_hist_count_at_index(recorded, i)));
    CHECK(same_counts(recorded, restored));
    CHECK_INT(ps_hist_total_count(restored), 5000);
    CHECK_INT(ps_hist_min(restored), ps_hist_min(recorded));
    CHECK_INT(ps_hist_max(restored), ps_hist_max(recorded));
    CHECK_INT(ps_hist_value_at_percentile(restored, 99.9),
              ps_hist_value_at_percentile(recorded, 99.9));

    CHECK(!ps_hist_add_at_index(restored, -1, 1));
    CHECK(!ps_hist_add_at_index(restored, ps_hist_counts_len(restored), 1));
    CHECK(!ps_hist_add_at_index(restored, 0, -1));
    CHECK(!ps_hist_add_at_index(restored, 0, INT64_MAX));
    CHECK_INT(ps_hist_total_count(restored), 5000);
    ps_hist_close(recorded);
    ps_hist_close(restored);
}

static void merged_threads_equal_one_histogram(void)
{
    enum { THREADS = 4, PER_THREAD = 50000 };
    ps_hist *all = make(1, US_60S, 3);
    ps_hist *part[THREADS];
    for (int t = 0; t < THREADS; t++)
        part[t] = make(1, US_60S, 3);
    for (int t = 0; t < THREADS; t++)
        for (int i = 0; i < PER_THREAD; i++) {
            int64_t v = latency_value();
            ps_hist_record(all, v);
            ps_hist_record(part[t], v);
        }
    ps_hist *merged = make(1, US_60S, 3);
    for (int t = 0; t < THREADS; t++)
        CHECK_INT(ps_hist_add(merged, part[t]), 0);
    CHECK(same_counts(merged, all));
    CHECK_INT(ps_hist_total_count(merged), ps_hist_total_count(all));
    CHECK_INT(ps_hist_min(merged), ps_hist_min(all));
    CHECK_INT(ps_hist_max(merged), ps_hist_max(all));
    CHECK(ps_hist_mean(merged) == ps_hist_mean(all));
    CHECK(ps_hist_stddev(merged) == ps_hist_stddev(all));
    CHECK_INT(ps_hist_value_at_percentile(merged, 50), ps_hist_value_at_percentile(all, 50));
    CHECK_INT(ps_hist_value_at_percentile(merged, 99.9), ps_hist_value_at_percentile(all, 99.9));

    /* Different ranges: a wider source's values above the destination's
     * range are clamped and counted, the rest land where they belong. */
    ps_hist *wide = make(1, INT64_C(3600000000), 3);
    for (int i = 0; i < 1000; i++)
        ps_hist_record(wide, 1 + i * 997);
    ps_hist_record_n(wide, 500000000, 10);
    ps_hist *narrow = make(1, US_60S, 3);
    CHECK_INT(ps_hist_add(narrow, wide), 10);
    CHECK_INT(ps_hist_clamped(narrow), 10);
    CHECK_INT(ps_hist_total_count(narrow), 1010);
    CHECK_INT(ps_hist_max(narrow), ps_hist_highest_equivalent(narrow, US_60S));
    CHECK_INT(ps_hist_count_at_value(narrow, 1 + 500 * 997), 1);

    /* Different precision: a 2-digit source into a 3-digit destination keeps
     * every count and its percentiles within the source's precision. */
    ps_hist *coarse = make(1, US_60S, 2);
    for (int i = 0; i < 20000; i++)
        ps_hist_record(coarse, latency_value());
    ps_hist *fine = make(1, US_60S, 3);
    CHECK_INT(ps_hist_add(fine, coarse), 0);
    CHECK_INT(ps_hist_total_count(fine), 20000);
    CHECK(ps_hist_values_equivalent(coarse, ps_hist_value_at_percentile(fine, 99),
                                    ps_hist_value_at_percentile(coarse, 99)));
    ps_hist_close(coarse);
    ps_hist_close(fine);
    ps_hist_close(wide);
    ps_hist_close(narrow);
    for (int t = 0; t < THREADS; t++)
        ps_hist_close(part[t]);
    ps_hist_close(merged);
    ps_hist_close(all);
}

struct thread_job {
    ps_hist *h;
    uint64_t seed;
};

static void *record_thread(void *arg)
{
    struct thread_job *job = arg;
    uint64_t x = job->seed;
    for (int i = 0; i < 100000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        ps_hist_record_corrected(job->h, (int64_t)(x % 200000), 50000);
    }
    return NULL;
}

static void threads_record_apart_and_merge_after_join(void)
{
    /* The load generator's pattern: each thread owns its histogram, the
     * main thread merges after join (TSan checks there is no sharing). */
    enum { THREADS = 4 };
    pthread_t tid[THREADS];
    struct thread_job jobs[THREADS];
    for (int t = 0; t < THREADS; t++) {
        jobs[t].h = make(1, US_60S, 3);
        jobs[t].seed = 0x1234567u * (uint64_t)(t + 1);
        CHECK_INT(pthread_create(&tid[t], NULL, record_thread, &jobs[t]), 0);
    }
    for (int t = 0; t < THREADS; t++)
        pthread_join(tid[t], NULL);
    ps_hist *merged = make(1, US_60S, 3), *serial = make(1, US_60S, 3);
    for (int t = 0; t < THREADS; t++) {
        ps_hist_add(merged, jobs[t].h);
        struct thread_job again = {serial, jobs[t].seed};
        record_thread(&again);
        ps_hist_close(jobs[t].h);
    }
    CHECK(same_counts(merged, serial));
    CHECK_INT(ps_hist_total_count(merged), ps_hist_total_count(serial));
    CHECK_INT(ps_hist_value_at_percentile(merged, 99), ps_hist_value_at_percentile(serial, 99));
    ps_hist_close(merged);
    ps_hist_close(serial);
}

static size_t heap_in_use(void)
{
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

/* The thread's CPU time: a loaded machine (CI beside other builds) stretched
 * the wall time of 10 M records from 0.6 s to 4.6 s under ASan. */
static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void memory_is_fixed_and_recording_is_cheap(void)
{
    ps_hist *h = make(1, US_60S, 3);
    size_t reported = ps_hist_memory_size(h);
    for (int i = 0; i < 10; i++)
        ps_hist_record(h, latency_value());
    CHECK_INT(ps_hist_memory_size(h), reported);
    size_t heap_before = heap_in_use();
    const int64_t n = 10000000;
    int64_t values[1024];
    for (int i = 0; i < 1024; i++)
        values[i] = latency_value();
    double t0 = now_s();
    for (int64_t i = 0; i < n; i++)
        ps_hist_record(h, values[i & 1023]);
    double elapsed = now_s() - t0;
    CHECK_INT(ps_hist_memory_size(h), reported);
    CHECK_INT(heap_in_use(), heap_before); /* recording never allocates */
    CHECK_INT(ps_hist_total_count(h), n + 10);
    /* A few ns per record; the bound is loose (sanitizers, shared CI cores)
     * but a per-value search or allocation would blow it. */
#ifdef PETSTORE_SANITIZED
    const double limit = 3.0;
#else
    const double limit = 1.0;
#endif
    fprintf(stderr, "  %.1f ns per record\n", elapsed / (double)n * 1e9);
    CHECK(elapsed < limit);
    ps_hist_close(h);
}

/* Unwraps base64 + compressed cookie + zlib, independently of the decoder. */
static int unwrap(const ps_buf *b64, unsigned char *out, size_t cap, size_t *out_len,
                  uint32_t *outer_cookie)
{
    ps_buf bin = PS_BUF_INIT;
    ps_error err;
    if (ps_base64_decode(b64->data, b64->len, &bin, &err) < 0 || bin.len < 8) {
        ps_buf_free(&bin);
        return -1;
    }
    const unsigned char *p = (const unsigned char *)bin.data;
    *outer_cookie = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
    uint32_t clen = (uint32_t)p[4] << 24 | (uint32_t)p[5] << 16 | (uint32_t)p[6] << 8 | p[7];
    uLongf len = cap;
    int rc = (clen == bin.len - 8 && uncompress(out, &len, p + 8, clen) == Z_OK) ? 0 : -1;
    *out_len = len;
    ps_buf_free(&bin);
    return rc;
}

static uint64_t be(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

static void encoding_follows_the_v2_layout(void)
{
    ps_hist *h = make(1, US_60S, 3);
    ps_hist_record_n(h, 5, 3);
    ps_buf text = PS_BUF_INIT;
    ps_error err;
    CHECK_INT(ps_hdr_log_encode(h, &text, &err), 0);
    unsigned char raw[256];
    size_t len = 0;
    uint32_t outer = 0;
    CHECK_INT(unwrap(&text, raw, sizeof raw, &len, &outer), 0);
    CHECK_INT(outer & ~0xf0u, 0x1c849304);
    CHECK_INT(len, 40 + 2);
    CHECK_INT(be(raw, 4) & ~0xf0u, 0x1c849303);
    CHECK_INT(be(raw + 4, 4), 2);  /* payload length */
    CHECK_INT(be(raw + 8, 4), 0);  /* normalizing index offset */
    CHECK_INT(be(raw + 12, 4), 3); /* significant digits */
    CHECK_INT(be(raw + 16, 8), 1);
    CHECK_INT(be(raw + 24, 8), US_60S);
    double ratio;
    uint64_t bits = be(raw + 32, 8);
    memcpy(&ratio, &bits, sizeof ratio);
    CHECK(ratio == 1.0);
    /* Counts: five empty slots (a run, -5 zigzags to 9), then 3 (zigzag 6). */
    CHECK_INT(raw[40], 9);
    CHECK_INT(raw[41], 6);

    /* The uncompressed form (no 0x1c849304 wrapper) decodes too. */
    ps_buf plain = PS_BUF_INIT;
    ps_base64_encode(raw, len, &plain);
    ps_hist *back = NULL;
    CHECK_INT(ps_hdr_log_decode(plain.data, plain.len, &back, &err), 0);
    CHECK(back && ps_hist_count_at_value(back, 5) == 3 && ps_hist_total_count(back) == 3);
    ps_hist_close(back);
    ps_buf_free(&plain);
    ps_buf_free(&text);
    ps_hist_close(h);
}

static void round_trip(ps_hist *h)
{
    ps_buf text = PS_BUF_INIT;
    ps_error err;
    ps_hist *back = NULL;
    CHECK_INT(ps_hdr_log_encode(h, &text, &err), 0);
    ps_buf_puts(&text, "\r\n"); /* as read from a file */
    CHECK_INT(ps_hdr_log_decode(text.data, text.len, &back, &err), 0);
    if (!back) {
        fprintf(stderr, "  decode: %s\n", err.message);
        ps_buf_free(&text);
        return;
    }
    CHECK_INT(ps_hist_lowest_trackable(back), ps_hist_lowest_trackable(h));
    CHECK_INT(ps_hist_highest_trackable(back), ps_hist_highest_trackable(h));
    CHECK_INT(ps_hist_significant_figures(back), ps_hist_significant_figures(h));
    CHECK(same_counts(back, h));
    CHECK_INT(ps_hist_total_count(back), ps_hist_total_count(h));
    CHECK_INT(ps_hist_min(back), ps_hist_min(h));
    CHECK_INT(ps_hist_max(back), ps_hist_max(h));
    CHECK_INT(ps_hist_value_at_percentile(back, 99), ps_hist_value_at_percentile(h, 99));
    ps_hist_close(back);
    ps_buf_free(&text);
}

static void encode_decode_round_trips(void)
{
    ps_hist *h = make(1, US_60S, 3);
    round_trip(h); /* empty */
    for (int i = 0; i < 100000; i++)
        ps_hist_record(h, latency_value());
    ps_hist_record(h, 0);
    ps_hist_record_n(h, 777, INT64_C(1000000000000)); /* a count needing 6 LEB128 bytes */
    ps_hist_record(h, US_60S);
    round_trip(h);
    ps_hist_close(h);

    h = make(1000, INT64_C(3600000000), 5);
    for (int i = 0; i < 50000; i++)
        ps_hist_record(h, latency_value() * 7);
    round_trip(h);
    ps_hist_close(h);

    h = make(1, 100, 1);
    for (int v = 0; v <= 100; v++)
        ps_hist_record_n(h, v, v + 1);
    round_trip(h);
    ps_hist_close(h);
}

static int decode_fails(const char *text, const char *needle)
{
    ps_hist *h = NULL;
    ps_error err = {""};
    int rc = ps_hdr_log_decode(text, strlen(text), &h, &err);
    if (rc == 0) {
        ps_hist_close(h);
        fprintf(stderr, "  decoding \"%.30s\" succeeded\n", text);
        return 0;
    }
    if (h != NULL || strstr(err.message, needle) == NULL) {
        fprintf(stderr, "  message \"%s\" lacks \"%s\"\n", err.message, needle);
        return 0;
    }
    return 1;
}

static void decoder_rejects_bad_input(void)
{
    CHECK(decode_fails("", "too short"));
    CHECK(decode_fails("HISTFAAAAB!x", "alphabet"));
    CHECK(decode_fails("AAAAAAAAAAAA", "cookie"));
    /* A good encoding, then damaged in every byte: each decode must either
     * fail with a message or produce a histogram, never crash (ASan checks). */
    ps_hist *h = make(1, US_60S, 3);
    for (int i = 0; i < 2000; i++)
        ps_hist_record(h, latency_value());
    ps_buf text = PS_BUF_INIT, bin = PS_BUF_INIT, again = PS_BUF_INIT;
    ps_error err;
    CHECK_INT(ps_hdr_log_encode(h, &text, &err), 0);
    CHECK_INT(ps_base64_decode(text.data, text.len, &bin, &err), 0);
    /* Truncations. */
    for (size_t cut = 0; cut < bin.len; cut += 7) {
        ps_buf_reset(&again);
        ps_base64_encode(bin.data, cut, &again);
        ps_hist *out = NULL;
        CHECK_INT(ps_hdr_log_decode(again.data, again.len, &out, &err), -1);
        CHECK(out == NULL);
    }
    int decoded = 0, rejected = 0;
    for (size_t i = 0; i < bin.len; i++) {
        for (int bit = 0; bit < 8; bit += 3) {
            bin.data[i] ^= (char)(1 << bit);
            ps_buf_reset(&again);
            ps_base64_encode(bin.data, bin.len, &again);
            ps_hist *out = NULL;
            if (ps_hdr_log_decode(again.data, again.len, &out, &err) == 0) {
                decoded++;
                ps_hist_close(out);
            } else {
                rejected++;
                CHECK(err.message[0] != '\0');
            }
            bin.data[i] ^= (char)(1 << bit);
        }
    }
    CHECK(rejected > 0);
    fprintf(stderr, "  damaged encodings: %d rejected, %d still decodable\n", rejected, decoded);
    ps_buf_free(&text);
    ps_buf_free(&bin);
    ps_buf_free(&again);
    ps_hist_close(h);
}

/* Reads the percentile text back: rows, then the footer. */
struct parsed {
    int rows;
    double first_p[16];
    double last_value, last_p;
    long long last_count;
    int last_inf;
    int monotonic;
    double mean, stddev, max;
    long long total;
    int buckets, sub_buckets;
    int footer_lines;
};

static void parse_classic(const char *text, struct parsed *r)
{
    memset(r, 0, sizeof *r);
    r->monotonic = 1;
    const char *line = text;
    double prev_v = -1, prev_p = -1;
    long long prev_c = -1;
    int lineno = 0;
    while (line && *line) {
        const char *nl = strchr(line, '\n');
        char buf[256];
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        if (len >= sizeof buf) len = sizeof buf - 1;
        memcpy(buf, line, len);
        buf[len] = '\0';
        lineno++;
        double v, p;
        long long c;
        char inv[32];
        if (lineno > 2 && sscanf(buf, "%lf %lf %lld %31s", &v, &p, &c, inv) == 4) {
            if (r->rows < 16) r->first_p[r->rows] = p;
            r->rows++;
            if (v < prev_v || p < prev_p || c < prev_c) r->monotonic = 0;
            prev_v = v, prev_p = p, prev_c = c;
            r->last_value = v, r->last_p = p, r->last_count = c;
            r->last_inf = strcmp(inv, "inf") == 0;
        } else if (sscanf(buf, "#[Mean    = %lf, StdDeviation   = %lf]", &r->mean, &r->stddev) ==
                   2) {
            r->footer_lines++;
        } else if (sscanf(buf, "#[Max     = %lf, Total count    = %lld]", &r->max, &r->total) ==
                   2) {
            r->footer_lines++;
        } else if (sscanf(buf, "#[Buckets = %d, SubBuckets     = %d]", &r->buckets,
                          &r->sub_buckets) == 2) {
            r->footer_lines++;
        }
        line = nl ? nl + 1 : NULL;
    }
}

static void percentile_text_parses_back(void)
{
    ps_hist *h = make(1, US_60S, 3);
    for (int64_t v = 1; v <= 100000; v++)
        ps_hist_record(h, v);
    ps_buf text = PS_BUF_INIT;
    ps_hist_percentiles_format(h, &text, 5, 1000.0, PS_HIST_FORMAT_CLASSIC);
    /* HdrHistogram_c's header, columns 12 wide, then a blank line. */
    CHECK(STARTS_WITH(text.data, "       Value   Percentile   TotalCount 1/(1-Percentile)\n\n"));
    struct parsed r;
    parse_classic(text.data, &r);
    CHECK(r.rows > 20);
    CHECK(r.monotonic);
    /* Levels start at 0 and step by 100/(2*ticks) % until 50 %, then the
     * step halves each time the distance to 100 % halves. */
    const double want[] = {0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.775};
    for (int i = 0; i < 12; i++)
        if (fabs(r.first_p[i] - want[i]) > 1e-6) {
            fprintf(stderr, "  row %d percentile %f, expected %f\n", i, r.first_p[i], want[i]);
            CHECK(0);
        }
    CHECK(r.last_p == 1.0);
    CHECK(r.last_inf);
    CHECK_INT(r.last_count, 100000);
    CHECK(fabs(r.last_value - (double)ps_hist_max(h) / 1000.0) < 0.0005);
    CHECK_INT(r.footer_lines, 3);
    CHECK(fabs(r.mean - ps_hist_mean(h) / 1000.0) < 0.0005);
    CHECK(fabs(r.stddev - ps_hist_stddev(h) / 1000.0) < 0.0005);
    CHECK(fabs(r.max - (double)ps_hist_max(h) / 1000.0) < 0.0005);
    CHECK_INT(r.total, 100000);
    CHECK_INT(r.buckets, ps_hist_bucket_count(h));
    CHECK_INT(r.sub_buckets, 2048);

    /* The FILE variant writes the same bytes. */
    char *mem = NULL;
    size_t memlen = 0;
    FILE *f = open_memstream(&mem, &memlen);
    CHECK_INT(ps_hist_percentiles_print(h, f, 5, 1000.0, PS_HIST_FORMAT_CLASSIC), 0);
    fclose(f);
    CHECK(memlen == text.len && memcmp(mem, text.data, memlen) == 0);
    free(mem);

    /* HdrHistogram (Java/JS) layout: its header, the 100% row one column
     * short, footer values with the histogram's digits. */
    ps_buf java = PS_BUF_INIT;
    ps_hist_percentiles_format(h, &java, 5, 1.0, PS_HIST_FORMAT_JAVA);
    CHECK(STARTS_WITH(java.data, "       Value     Percentile TotalCount 1/(1-Percentile)\n\n"));
    const char *last_row = strstr(java.data, " 1.000000000000     100000\n#[Mean");
    CHECK(last_row != NULL);
    CHECK(strstr(java.data, "#[Buckets = ") != NULL);

    ps_buf csv = PS_BUF_INIT;
    ps_hist_percentiles_format(h, &csv, 5, 1.0, PS_HIST_FORMAT_CSV);
    const char csv_head[] = "Value,Percentile,TotalCount,1/(1-Percentile)\n1.000,0.000000,1,1.00\n";
    CHECK(STARTS_WITH(csv.data, csv_head));
    CHECK(strstr(csv.data, ",1.000000,100000,inf\n") != NULL);
    CHECK(strstr(csv.data, "#[") == NULL);

    /* Rounding: a mean of exactly 1/16 is a tie at 3 decimals. printf (and so
     * HdrHistogram_c) rounds it to even, Java and JS round half up. */
    ps_hist *sixteenth = make(1, US_60S, 3);
    ps_hist_record_n(sixteenth, 0, 15);
    ps_hist_record(sixteenth, 1);
    CHECK(ps_hist_mean(sixteenth) == 0.0625);
    ps_buf tie_c = PS_BUF_INIT, tie_j = PS_BUF_INIT;
    ps_hist_percentiles_format(sixteenth, &tie_c, 5, 1.0, PS_HIST_FORMAT_CLASSIC);
    ps_hist_percentiles_format(sixteenth, &tie_j, 5, 1.0, PS_HIST_FORMAT_JAVA);
    CHECK(strstr(tie_c.data, "#[Mean    =        0.062,") != NULL);
    CHECK(strstr(tie_j.data, "#[Mean    =        0.063,") != NULL);
    ps_buf_free(&tie_c);
    ps_buf_free(&tie_j);
    ps_hist_close(sixteenth);

    /* Empty: one 100% row and a zero footer, no NaN. */
    ps_hist_reset(h);
    ps_buf empty = PS_BUF_INIT;
    ps_hist_percentiles_format(h, &empty, 5, 1.0, PS_HIST_FORMAT_CLASSIC);
    parse_classic(empty.data, &r);
    CHECK_INT(r.rows, 1);
    CHECK_INT(r.footer_lines, 3);
    CHECK(strstr(empty.data, "nan") == NULL);
    ps_buf_free(&text);
    ps_buf_free(&java);
    ps_buf_free(&csv);
    ps_buf_free(&empty);
    ps_hist_close(h);
}

static void base64_matches_rfc4648(void)
{
    /* RFC 4648 section 10 test vectors. */
    const char *plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
    const char *coded[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
    for (int i = 0; i < 7; i++) {
        ps_buf e = PS_BUF_INIT, d = PS_BUF_INIT;
        ps_error err;
        ps_base64_encode(plain[i], strlen(plain[i]), &e);
        CHECK_STR(e.len ? e.data : "", coded[i]);
        CHECK_INT(ps_base64_decode(coded[i], strlen(coded[i]), &d, &err), 0);
        CHECK(d.len == strlen(plain[i]) && (d.len == 0 || memcmp(d.data, plain[i], d.len) == 0));
        ps_buf_free(&e);
        ps_buf_free(&d);
    }
    ps_buf d = PS_BUF_INIT;
    ps_error err;
    CHECK_INT(ps_base64_decode("Zm9vYg", 6, &d, &err), 0); /* unpadded is fine */
    ps_buf_reset(&d);
    CHECK_INT(ps_base64_decode("Zm9=vYg=", 8, &d, &err), -1);
    CHECK_INT(ps_base64_decode("Zm9vY", 5, &d, &err), -1);
    CHECK_INT(ps_base64_decode("Zh==", 4, &d, &err), -1); /* non-zero unused bits */
    CHECK_INT(ps_base64_decode("Zm 9v", 5, &d, &err), -1);
    ps_buf_free(&d);
}

int main(void)
{
    RUN(rank_is_the_ceiling);
    RUN(layout_matches_hdrhistogram);
    RUN(uniform_values_give_exact_ranks);
    RUN(hdrhistogram_reference_example);
    RUN(corrected_stall_adds_synthetic_values);
    RUN(equivalence_ranges_at_three_digits);
    RUN(out_of_range_values_are_clamped);
    RUN(counts_restore_by_index);
    RUN(merged_threads_equal_one_histogram);
    RUN(threads_record_apart_and_merge_after_join);
    RUN(memory_is_fixed_and_recording_is_cheap);
    RUN(encoding_follows_the_v2_layout);
    RUN(encode_decode_round_trips);
    RUN(decoder_rejects_bad_input);
    RUN(percentile_text_parses_back);
    RUN(base64_matches_rfc4648);
    return TEST_EXIT();
}
