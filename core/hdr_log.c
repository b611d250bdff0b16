/* hdr_log.c - HdrHistogram's V2 histogram codec (compressed, base64) and
 * the interval log built on it: writer and merging reader. */
#include "core/hdr_log.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "core/base64.h"

/* ---- V2 histogram encoding ---- */

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
    for (int i = 3; i >= 0; i--, v >>= 8)
        p[i] = (unsigned char)(v & 0xff);
}

static void put_be64(unsigned char *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8)
        p[i] = (unsigned char)(v & 0xff);
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

int ps_hdr_log_encode(const ps_hist *h, ps_buf *out, ps_error *err)
{
    int rc = -1;
    unsigned char *raw = NULL, *packed = NULL;

    int32_t limit = ps_hist_counts_len(h);
    while (limit > 0 && ps_hist_count_at_index(h, limit - 1) == 0)
        limit--;
    size_t raw_cap = ENCODING_HEADER_LEN + (size_t)limit * MAX_LEB128_LEN;
    raw = malloc(raw_cap);
    if (!raw) {
        ps_error_set(err, "histogram encoding: cannot allocate %zu bytes", raw_cap);
        goto out;
    }
    size_t pos = ENCODING_HEADER_LEN;
    for (int32_t i = 0; i < limit;) {
        int64_t count = ps_hist_count_at_index(h, i++);
        if (count == 0) {
            int64_t zeros = 1;
            while (i < limit && ps_hist_count_at_index(h, i) == 0) {
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
    put_be32(raw + 12, (uint32_t)ps_hist_significant_figures(h));
    put_be64(raw + 16, (uint64_t)ps_hist_lowest_trackable(h));
    put_be64(raw + 24, (uint64_t)ps_hist_highest_trackable(h));
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
            return ps_error_set(err, "encoded histogram: compressed data ends inside the %s", what);
        if (zrc != Z_OK)
            return ps_error_set(err, "encoded histogram: corrupt deflate data in the %s (%s)", what,
                                zs->msg ? zs->msg : "zlib error");
        if (zs->avail_in == 0 && zs->avail_out > 0)
            return ps_error_set(err, "encoded histogram: compressed data ends inside the %s", what);
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
/* The layout a decode must find (ps_hdr_log_decode_like), NULL: any. */
static int hist_from_header(const unsigned char *hdr, const ps_hist *like, ps_hist **out,
                            ps_error *err)
{
    int32_t sigfigs = (int32_t)get_be32(hdr + 12);
    int64_t lowest = (int64_t)get_be64(hdr + 16);
    int64_t highest = (int64_t)get_be64(hdr + 24);
    /* checked before the counts are allocated: a forged layout can ask
     * for tens of MB */
    if (like &&
        (lowest != ps_hist_lowest_trackable(like) || highest != ps_hist_highest_trackable(like) ||
         sigfigs != ps_hist_significant_figures(like)))
        return ps_error_set(err,
                            "encoded histogram header: range %" PRId64 "..%" PRId64 " at %" PRId32
                            " significant figures, expected %" PRId64 "..%" PRId64 " at %d",
                            lowest, highest, sigfigs, ps_hist_lowest_trackable(like),
                            ps_hist_highest_trackable(like), ps_hist_significant_figures(like));
    if (ps_hist_init(lowest, highest, sigfigs, out, err) < 0)
        return ps_error_prefix(err, "encoded histogram header: ");
    return 0;
}

static int fill_counts(ps_hist *h, const unsigned char *payload, size_t payload_len, ps_error *err)
{
    int32_t counts_len = ps_hist_counts_len(h);
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
            /* The run's length as unsigned: -v overflows for INT64_MIN, which
             * a hostile payload can hold (0xff x 9). */
            uint64_t run = (uint64_t)0 - (uint64_t)v;
            if (run > (uint64_t)(counts_len - index))
                return ps_error_set(err,
                                    "encoded histogram: a run of %" PRIu64
                                    " zeros passes the end of the %" PRId32 " counts",
                                    run, counts_len);
            index += (int32_t)run;
            continue;
        }
        if (index >= counts_len)
            return ps_error_set(
                err, "encoded histogram: more than the %" PRId32 " counts its layout has",
                counts_len);
        if (v > INT64_MAX - total)
            return ps_error_set(err, "encoded histogram: total count overflows");
        /* Min and max are only known to bucket precision after a round trip;
         * their bucket is what every query reports anyway. */
        ps_hist_add_at_index(h, index++, v);
        total += v;
    }
    return 0;
}

static int decode(const char *text, size_t len, const ps_hist *like, ps_hist **out, ps_error *err)
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
        if (hist_from_header(b, like, &h, err) < 0) goto out;
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
        ps_error_set(err, "encoded histogram: inner cookie 0x%08" PRIx32 " is not V2 (0x1c849303)",
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
    if (hist_from_header(hdr, like, &h, err) < 0) goto out;
    size_t max_payload = (size_t)ps_hist_counts_len(h) * MAX_LEB128_LEN;
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

int ps_hdr_log_decode(const char *text, size_t len, ps_hist **out, ps_error *err)
{
    return decode(text, len, NULL, out, err);
}

int ps_hdr_log_decode_like(const char *text, size_t len, const ps_hist *like, ps_hist **out,
                           ps_error *err)
{
    return decode(text, len, like, out, err);
}

/* ---- interval log ---- */

#define LEGEND                                                                                     \
    "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\""

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
    if (ps_hdr_log_encode(interval, &line, err) < 0) goto out;
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
        if (ps_hist_init(1, ps_hist_highest_trackable(src), ps_hist_significant_figures(*merged),
                         &grown, err) < 0)
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
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            len--;
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
                ps_error_set(err,
                             "interval log line %ld: expected 4 comma-separated fields, "
                             "found %d",
                             lineno, f + 1);
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
        if (ps_hdr_log_decode(p, strlen(p), &h, err) < 0) {
            ps_error_prefix(err, "interval log line %ld: ", lineno);
            goto out;
        }
        int mrc = merge_into(&merged, h, err);
        ps_hist_close(h);
        if (mrc < 0) goto out;
        intervals++;
    }
    if (ferror(in)) {
        ps_error_set(err, "interval log: read failed after line %ld: %s", lineno, strerror(errno));
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
