/* test_hdr_log.c - HdrHistogram interval logs: the header and line layout the
 * writer produces, and the reader merging every interval back (or naming the
 * line that is wrong). */
#include <stdlib.h>
#include <string.h>

#include "core/base64.h"
#include "core/hdr_log.h"
#include "core/histogram.h"
#include "harness.h"

static ps_hist *make(int64_t highest)
{
    ps_hist *h = NULL;
    ps_error err;
    if (ps_hist_init(1, highest, 3, &h, &err) < 0) {
        fprintf(stderr, "%s\n", err.message);
        exit(2);
    }
    return h;
}

/* Splits text into at most max lines (modifies text). */
static int split_lines(char *text, char **lines, int max)
{
    int n = 0;
    for (char *p = text; p && *p && n < max;) {
        lines[n++] = p;
        char *nl = strchr(p, '\n');
        if (!nl) break;
        *nl = '\0';
        p = nl + 1;
    }
    return n;
}

static bool same_counts(const ps_hist *a, const ps_hist *b)
{
    if (ps_hist_counts_len(a) != ps_hist_counts_len(b)) return false;
    for (int32_t i = 0; i < ps_hist_counts_len(a); i++)
        if (ps_hist_count_at_index(a, i) != ps_hist_count_at_index(b, i)) return false;
    return true;
}

static void writer_produces_hdrhistogram_layout(void)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    ps_error err;
    /* 1700000000 s is Tue Nov 14 22:13:20 UTC 2023. */
    CHECK_INT(ps_hdr_log_write_header(f, 1700000000.125, &err), 0);
    ps_hist *a = make(60000000);
    ps_hist_record(a, 1500);
    ps_hist_record(a, 700);
    CHECK_INT(ps_hdr_log_write_interval(f, 0.0, 1.0, a, 1000.0, &err), 0);
    ps_hist *b = make(60000000);
    CHECK_INT(ps_hdr_log_write_interval(f, 1.0, 1.5, b, 1.0, &err), 0); /* empty interval */
    fclose(f);

    char *lines[16];
    int n = split_lines(text, lines, 16);
    CHECK_INT(n, 6);
    if (n == 6) {
        CHECK_STR(lines[0], "#[Histogram log format version 1.3]");
        CHECK_STR(lines[1], "#[StartTime: 1700000000.125 (seconds since epoch), "
                            "Tue Nov 14 22:13:20 UTC 2023]");
        CHECK_STR(lines[2], "#[BaseTime: 1700000000.125 (seconds since epoch)]");
        CHECK_STR(lines[3], "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\","
                            "\"Interval_Compressed_Histogram\"");
        /* 1500 us has its own bucket below 2048: max prints as 1.500 ms. */
        CHECK(strncmp(lines[4], "0.000,1.000,1.500,", 18) == 0);
        CHECK(strncmp(lines[5], "1.000,1.500,0.000,", 18) == 0);
        /* The last field is the histogram, decodable on its own. */
        ps_hist *back = NULL;
        const char *b64 = lines[4] + 18;
        CHECK_INT(ps_hdr_log_decode(b64, strlen(b64), &back, &err), 0);
        if (back) {
            CHECK(same_counts(back, a));
            ps_hist_close(back);
        }
    }
    free(text);

    FILE *devnull = fopen("/dev/null", "w");
    CHECK_INT(ps_hdr_log_write_interval(devnull, 0.0, 1.0, a, 0.0, &err), -1);
    CHECK(strstr(err.message, "scale") != NULL);
    CHECK_INT(ps_hdr_log_write_header(devnull, -5.0, &err), -1);
    fclose(devnull);
    ps_hist_close(a);
    ps_hist_close(b);
}

static void reader_merges_every_interval(void)
{
    FILE *f = tmpfile();
    ps_error err;
    CHECK_INT(ps_hdr_log_write_header(f, 1700000000.0, &err), 0);
    ps_hist *expected = make(INT64_C(3600000000));
    /* Five intervals; the fourth has a wider range and values above the
     * first's, which the merge must keep rather than clamp. */
    for (int i = 0; i < 5; i++) {
        int64_t highest = i == 3 ? INT64_C(3600000000) : 60000000;
        ps_hist *iv = make(highest);
        for (int k = 0; k < 2000; k++) {
            int64_t v = ps_test_rand_below(i == 3 ? INT64_C(2000000000) : 50000000);
            ps_hist_record(iv, v);
            ps_hist_record(expected, v);
        }
        CHECK_INT(ps_hdr_log_write_interval(f, i * 1.0, 1.0, iv, 1.0, &err), 0);
        ps_hist_close(iv);
    }
    /* A tagged line, as HdrHistogram writes for tagged histograms. */
    ps_hist *tagged = make(60000000);
    ps_hist_record_n(tagged, 12345, 7);
    ps_hist_record_n(expected, 12345, 7);
    ps_buf line = PS_BUF_INIT;
    ps_buf_puts(&line, "Tag=login,5.000,1.000,12.351,");
    CHECK_INT(ps_hdr_log_encode(tagged, &line, &err), 0);
    fprintf(f, "%s\r\n\n", line.data);
    ps_buf_free(&line);
    ps_hist_close(tagged);
    rewind(f);

    ps_hist *merged = NULL;
    CHECK_INT(ps_hdr_log_read_merged(f, &merged, &err), 6);
    fclose(f);
    if (!merged) {
        fprintf(stderr, "  %s\n", err.message);
        ps_hist_close(expected);
        return;
    }
    CHECK_INT(ps_hist_total_count(merged), 5 * 2000 + 7);
    CHECK_INT(ps_hist_clamped(merged), 0);
    CHECK_INT(ps_hist_highest_trackable(merged), INT64_C(3600000000));
    CHECK(same_counts(merged, expected));
    CHECK_INT(ps_hist_max(merged), ps_hist_max(expected));
    CHECK_INT(ps_hist_value_at_percentile(merged, 99), ps_hist_value_at_percentile(expected, 99));
    ps_hist_close(merged);
    ps_hist_close(expected);

    /* A log with only a header merges to an empty histogram. */
    f = tmpfile();
    ps_hdr_log_write_header(f, 1700000000.0, &err);
    rewind(f);
    CHECK_INT(ps_hdr_log_read_merged(f, &merged, &err), 0);
    CHECK(merged && ps_hist_total_count(merged) == 0);
    ps_hist_close(merged);
    fclose(f);
}

static int read_fails(const char *log, const char *needle)
{
    FILE *f = fmemopen((void *)log, strlen(log), "r");
    ps_hist *h = NULL;
    ps_error err = {""};
    int rc = ps_hdr_log_read_merged(f, &h, &err);
    fclose(f);
    if (rc >= 0) {
        ps_hist_close(h);
        fprintf(stderr, "  log was accepted: %s\n", log);
        return 0;
    }
    if (h || !strstr(err.message, needle)) {
        fprintf(stderr, "  message \"%s\" lacks \"%s\"\n", err.message, needle);
        return 0;
    }
    return 1;
}

static void reader_names_the_bad_line(void)
{
    ps_hist *h = make(60000000);
    ps_hist_record(h, 42);
    ps_buf good = PS_BUF_INIT;
    ps_error err;
    ps_hdr_log_encode(h, &good, &err);
    ps_hist_close(h);

    ps_buf log = PS_BUF_INIT;
    ps_buf_printf(&log,
                  "#[StartTime: 1.000 (seconds since epoch), x]\n0.000,1.000,0.042,%s\n"
                  "1.000,1.000,%s\n",
                  good.data, good.data);
    CHECK(read_fails(log.data, "line 3: expected 4 comma-separated fields"));
    ps_buf_reset(&log);
    ps_buf_printf(&log, "0.000,1.000,0.042,%s\nabc,1.000,0.042,%s\n", good.data, good.data);
    CHECK(read_fails(log.data, "line 2: StartTimestamp \"abc\" is not a number"));
    ps_buf_reset(&log);
    ps_buf_printf(&log, "0.000,1.000,0.042,%s!!\n", good.data);
    CHECK(read_fails(log.data, "line 1: encoded histogram"));
    ps_buf_reset(&log);
    ps_buf_printf(&log, "0.000,1.000,0.042,%.20s\n", good.data);
    CHECK(read_fails(log.data, "line 1: encoded histogram"));
    CHECK(read_fails("Tag=abc\n", "line 1: a Tag= field"));
    ps_buf_free(&log);
    ps_buf_free(&good);
}

/* A payload is a peer's or a file's: a zero run of INT64_MIN (ZigZag 0xff x 9)
 * is refused with its length, which -v could not give (undefined behaviour;
 * wrapped, it printed a negative run). */
static void decoder_refuses_a_run_of_int64_min(void)
{
    unsigned char raw[40 + 9] = {0};
    const uint32_t words[4] = {0x1c849313u, 9, 0, 3};
    for (int w = 0; w < 4; w++)
        for (int k = 0; k < 4; k++)
            raw[w * 4 + k] = (unsigned char)(words[w] >> (24 - 8 * k));
    const uint64_t longs[3] = {1, 60000000,
                               UINT64_C(0x3ff0000000000000)}; /* lowest, highest, 1.0 */
    for (int l = 0; l < 3; l++)
        for (int k = 0; k < 8; k++)
            raw[16 + l * 8 + k] = (unsigned char)(longs[l] >> (56 - 8 * k));
    memset(raw + 40, 0xff, 9);
    ps_buf text = PS_BUF_INIT;
    ps_base64_encode(raw, sizeof raw, &text);
    ps_hist *h = NULL;
    ps_error err = {""};
    CHECK_INT(ps_hdr_log_decode(text.data, text.len, &h, &err), -1);
    CHECK(h == NULL);
    CHECK(strstr(err.message, "a run of 9223372036854775808 zeros") != NULL);
    if (!strstr(err.message, "run of 9223372036854775808")) fprintf(stderr, "  %s\n", err.message);
    ps_hist_close(h);
    ps_buf_free(&text);
}

int main(void)
{
    RUN(decoder_refuses_a_run_of_int64_min);
    RUN(writer_produces_hdrhistogram_layout);
    RUN(reader_merges_every_interval);
    RUN(reader_names_the_bad_line);
    return TEST_EXIT();
}
