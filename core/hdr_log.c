/* hdr_log.c - HdrHistogram interval log writer and merging reader. */
#include "core/hdr_log.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/buf.h"

#define LEGEND "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\""

int ps_hdr_log_write_header(FILE *out, double start_unix_s, ps_error *err)
{
    if (!isfinite(start_unix_s) || start_unix_s < 0)
        return ps_error_set(err, "interval log: start time %g is not a Unix time", start_unix_s);
    /* The date after the StartTime number is for people; Java writes
     * Date.toString(), which this mirrors in UTC. */
    char date[64] = "";
    time_t whole = (time_t)start_unix_s;
    struct tm tm;
    if (gmtime_r(&whole, &tm)) strftime(date, sizeof date, "%a %b %d %H:%M:%S UTC %Y", &tm);
    /* BaseTime equals StartTime because interval timestamps are offsets from
     * the start; readers add BaseTime to them to get absolute times. */
    int n = fprintf(out,
                    "#[Histogram log format version 1.3]\n"
                    "#[StartTime: %.3f (seconds since epoch), %s]\n"
                    "#[BaseTime: %.3f (seconds since epoch)]\n" LEGEND "\n",
                    start_unix_s, date, start_unix_s);
    if (n < 0) return ps_error_set(err, "interval log: write failed: %s", strerror(errno));
    return 0;
}

int ps_hdr_log_write_interval(FILE *out, double start_offset_s, double length_s,
                              const ps_hist *interval, double max_value_scale, ps_error *err)
{
    if (!isfinite(start_offset_s) || !isfinite(length_s) || length_s < 0)
        return ps_error_set(err, "interval log: interval start %g / length %g is not valid",
                            start_offset_s, length_s);
    if (!(max_value_scale > 0) || !isfinite(max_value_scale))
        return ps_error_set(err, "interval log: max value scale %g must be > 0", max_value_scale);
    ps_buf line = PS_BUF_INIT;
    int rc = -1;
    ps_buf_printf(&line, "%.3f,%.3f,%.3f,", start_offset_s, length_s,
                  (double)ps_hist_max(interval) / max_value_scale);
    if (ps_hist_encode_base64(interval, &line, err) < 0) goto out;
    ps_buf_putc(&line, '\n');
    if (fwrite(line.data, 1, line.len, out) != line.len) {
        ps_error_set(err, "interval log: write failed: %s", strerror(errno));
        goto out;
    }
    rc = 0;
out:
    ps_buf_free(&line);
    return rc;
}

/* Parses a whole decimal number field (HdrHistogram writes "%.3f"). */
static bool parse_number(const char *s, size_t len, double *out)
{
    if (len == 0 || len > 63) return false;
    char tmp[64];
    memcpy(tmp, s, len);
    tmp[len] = '\0';
    char *end;
    errno = 0;
    double v = strtod(tmp, &end);
    if (errno || *end || !isfinite(v)) return false;
    *out = v;
    return true;
}

/* Adds src into *merged, growing merged's range first when src reaches
 * higher: a log's intervals may have been recorded with different ranges and
 * none of their values should be clamped by the merge. */
static int merge_into(ps_hist **merged, const ps_hist *src, ps_error *err)
{
    if (!*merged) {
        if (ps_hist_init(1, ps_hist_highest_trackable(src), ps_hist_significant_figures(src),
                         merged, err) < 0)
            return -1;
    } else if (ps_hist_highest_trackable(src) > ps_hist_highest_trackable(*merged)) {
        ps_hist *grown = NULL;
        if (ps_hist_init(1, ps_hist_highest_trackable(src),
                         ps_hist_significant_figures(*merged), &grown, err) < 0)
            return -1;
        ps_hist_add(grown, *merged);
        ps_hist_close(*merged);
        *merged = grown;
    }
    ps_hist_add(*merged, src);
    return 0;
}

int ps_hdr_log_read_merged(FILE *in, ps_hist **out, ps_error *err)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    long lineno = 0;
    int intervals = 0;
    ps_hist *merged = NULL;
    int rc = -1;
    *out = NULL;

    while ((n = getline(&line, &cap, in)) > 0) {
        lineno++;
        size_t len = (size_t)n;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) len--;
        line[len] = '\0';
        if (len == 0 || line[0] == '#' || line[0] == '"') continue; /* comments, legend */
        if (strlen(line) != len) {
            ps_error_set(err, "interval log line %ld: contains a NUL byte", lineno);
            goto out;
        }
        const char *p = line;
        if (strncmp(p, "Tag=", 4) == 0) {
            p = strchr(p, ',');
            if (!p) {
                ps_error_set(err, "interval log line %ld: a Tag= field and nothing else", lineno);
                goto out;
            }
            p++;
        }
        /* StartTimestamp, Interval_Length, Interval_Max, then the histogram. */
        static const char *const names[] = {"StartTimestamp", "Interval_Length", "Interval_Max"};
        double fields[3];
        for (int f = 0; f < 3; f++) {
            const char *comma = strchr(p, ',');
            if (!comma) {
                ps_error_set(err, "interval log line %ld: expected 4 comma-separated fields, "
                                  "found %d", lineno, f + 1);
                goto out;
            }
            if (!parse_number(p, (size_t)(comma - p), &fields[f])) {
                ps_error_set(err, "interval log line %ld: %s \"%.*s\" is not a number", lineno,
                             names[f], (int)(comma - p > 40 ? 40 : comma - p), p);
                goto out;
            }
            p = comma + 1;
        }
        ps_hist *h = NULL;
        if (ps_hist_decode_base64(p, strlen(p), &h, err) < 0) {
            ps_error_prefix(err, "interval log line %ld: ", lineno);
            goto out;
        }
        int mrc = merge_into(&merged, h, err);
        ps_hist_close(h);
        if (mrc < 0) goto out;
        intervals++;
    }
    if (ferror(in)) {
        ps_error_set(err, "interval log: read failed after line %ld: %s", lineno,
                     strerror(errno));
        goto out;
    }
    if (!merged && ps_hist_init(1, 2, 3, &merged, err) < 0) goto out;
    *out = merged;
    merged = NULL;
    rc = intervals;
out:
    ps_hist_close(merged);
    free(line);
    return rc;
}
