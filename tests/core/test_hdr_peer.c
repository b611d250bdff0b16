/* test_hdr_peer.c - cross-checks our histogram encoding and interval logs with
 * hdr-histogram-js (HdrHistogram's JavaScript port) in both directions: it
 * reads a log our writer produced, and we decode a histogram it encoded; the
 * numbers, every bucket and the percentile text (our JAVA layout against its
 * outputPercentileDistribution) must agree.
 *
 * Usage: test_hdr_peer NODE PEER_JS HDR_HISTOGRAM_JS_DIR */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/hdr_log.h"
#include "core/histogram.h"
#include "core/histogram_print.h"
#include "harness.h"

static const char *node_bin, *peer_js, *module_dir;

/* Runs `node peer.js MODULE mode file`, collecting stdout (bounded to 30 s).
 * Returns the exit status, or -1 when it could not run or timed out. */
static int run_peer(const char *mode, const char *file, ps_buf *out)
{
    int fds[2];
    if (pipe(fds) < 0) return -1;
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        close(fds[0]);
        close(fds[1]);
        execl(node_bin, node_bin, peer_js, module_dir, mode, file, (char *)NULL);
        fprintf(stderr, "test_hdr_peer: cannot run %s: %s\n", node_bin, strerror(errno));
        _exit(127);
    }
    close(fds[1]);
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    bool timed_out = false;
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        long left_ms =
            30000 - ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000);
        if (left_ms <= 0) {
            timed_out = true;
            break;
        }
        struct pollfd p = {.fd = fds[0], .events = POLLIN};
        int pr = poll(&p, 1, (int)left_ms);
        if (pr < 0 && errno == EINTR) continue;
        if (pr <= 0) {
            timed_out = pr == 0;
            break;
        }
        char chunk[4096];
        ssize_t n = read(fds[0], chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        ps_buf_append(out, chunk, (size_t)n);
    }
    close(fds[0]);
    if (timed_out) {
        kill(pid, SIGKILL);
        fprintf(stderr, "test_hdr_peer: node %s timed out after 30 s\n", mode);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (timed_out) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The value of "key value" in the peer's output, or NULL. */
static const char *field(const ps_buf *out, const char *key)
{
    size_t klen = strlen(key);
    for (const char *p = out->data; p && *p;) {
        if (strncmp(p, key, klen) == 0 && p[klen] == ' ') return p + klen + 1;
        p = strchr(p, '\n');
        if (p) p++;
    }
    return NULL;
}

static long long field_ll(const ps_buf *out, const char *key)
{
    const char *v = field(out, key);
    if (!v) {
        fprintf(stderr, "  peer output lacks \"%s\"\n", key);
        return -1;
    }
    return strtoll(v, NULL, 10);
}

/* Compares the peer's numbers and buckets with ours. */
static void compare_with_peer(const ps_buf *out, const ps_hist *ours)
{
    CHECK_INT(field_ll(out, "total"), ps_hist_total_count(ours));
    /* The same rank rule as the JS port (the ceiling of p/100 * total). */
    CHECK_INT(field_ll(out, "p0"), ps_hist_value_at_percentile(ours, 0));
    CHECK_INT(field_ll(out, "p50"), ps_hist_value_at_percentile(ours, 50));
    CHECK_INT(field_ll(out, "p90"), ps_hist_value_at_percentile(ours, 90));
    CHECK_INT(field_ll(out, "p99"), ps_hist_value_at_percentile(ours, 99));
    CHECK_INT(field_ll(out, "p99.9"), ps_hist_value_at_percentile(ours, 99.9));
    CHECK_INT(field_ll(out, "p100"), ps_hist_value_at_percentile(ours, 100));
    CHECK_INT(field_ll(out, "max"), ps_hist_max(ours));
    const char *mean = field(out, "mean");
    CHECK(mean != NULL);
    if (mean) {
        double theirs = strtod(mean, NULL), mine = ps_hist_mean(ours);
        if (!(theirs - mine < 1e-6 * mine && mine - theirs < 1e-6 * mine)) {
            fprintf(stderr, "  mean: peer %f, ours %f\n", theirs, mine);
            CHECK(0);
        }
    }
    CHECK_INT(field_ll(out, "counts_len"), ps_hist_counts_len(ours));

    /* Every non-zero bucket of theirs is ours, and no other bucket is set. */
    const char *c = field(out, "counts");
    CHECK(c != NULL);
    if (!c) return;
    int64_t seen_total = 0;
    int mismatches = 0, buckets = 0;
    while (*c && *c != '\n') {
        char *end;
        long idx = strtol(c, &end, 10);
        if (*end != ':') break;
        long long cnt = strtoll(end + 1, &end, 10);
        buckets++;
        seen_total += cnt;
        if (ps_hist_count_at_index(ours, (int32_t)idx) != cnt && mismatches++ < 5)
            fprintf(stderr, "  bucket %ld: peer %lld, ours %lld\n", idx, cnt,
                    (long long)ps_hist_count_at_index(ours, (int32_t)idx));
        c = end;
        while (*c == ' ')
            c++;
    }
    /* HdrHistogram's percentile text, byte for byte (our JAVA layout). */
    const char *spectrum = strstr(out->data, "\nspectrum\n");
    CHECK(spectrum != NULL);
    if (spectrum) {
        spectrum += strlen("\nspectrum\n");
        ps_buf mine = PS_BUF_INIT;
        ps_hist_percentiles_format(ours, &mine, 5, 1000.0, PS_HIST_FORMAT_JAVA);
        if (strcmp(spectrum, mine.data) != 0) {
            fprintf(stderr, "  percentile text differs; peer:\n%s\n  ours:\n%s\n", spectrum,
                    mine.data);
            CHECK(0);
        }
        ps_buf_free(&mine);
    }
    int ours_buckets = 0;
    for (int32_t i = 0; i < ps_hist_counts_len(ours); i++)
        if (ps_hist_count_at_index(ours, i)) ours_buckets++;
    CHECK_INT(mismatches, 0);
    CHECK_INT(buckets, ours_buckets);
    CHECK_INT(seen_total, ps_hist_total_count(ours));
}

static char tmpdir[64];

static void peer_reads_our_interval_log(void)
{
    char path[128];
    snprintf(path, sizeof path, "%s/run.hlog", tmpdir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    ps_error err;
    ps_hist *all = NULL, *iv = NULL;
    ps_hist_init(1, 60000000, 3, &all, &err);
    ps_hist_init(1, 60000000, 3, &iv, &err);
    CHECK_INT(ps_hdr_log_write_header(f, 1700000000.5, &err), 0);
    uint64_t x = 0x2545f4914f6cdd1du;
    for (int i = 0; i < 5; i++) {
        ps_hist_reset(iv);
        for (int k = 0; k < 2000; k++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            int shift = (int)(x % 27);
            int64_t v =
                (int64_t)((UINT64_C(1) << shift) + ((x >> 27) & ((UINT64_C(1) << shift) - 1)));
            ps_hist_record(iv, v); /* values above 60 s are clamped, in both */
            ps_hist_record(all, v < 60000000 ? v : 60000000);
        }
        CHECK_INT(ps_hdr_log_write_interval(f, i * 1.0, 1.0, iv, 1000.0, &err), 0);
    }
    fclose(f);

    ps_buf out = PS_BUF_INIT;
    int rc = run_peer("read-log", path, &out);
    CHECK_INT(rc, 0);
    if (rc == 0) {
        CHECK_INT(field_ll(&out, "intervals"), 5);
        CHECK_INT(field_ll(&out, "highest"), 60000000);
        CHECK_INT(field_ll(&out, "sigfigs"), 3);
        CHECK_INT(field_ll(&out, "start_ms"), INT64_C(1700000000500));
        compare_with_peer(&out, all);
    }

    /* Our reader agrees with our writer too. */
    f = fopen(path, "r");
    ps_hist *merged = NULL;
    CHECK_INT(ps_hdr_log_read_merged(f, &merged, &err), 5);
    fclose(f);
    if (merged)
        CHECK_INT(ps_hist_value_at_percentile(merged, 99), ps_hist_value_at_percentile(all, 99));
    ps_hist_close(merged);
    unlink(path);
    ps_buf_free(&out);
    ps_hist_close(all);
    ps_hist_close(iv);
}

static void we_decode_the_peers_encoding(void)
{
    char path[128];
    snprintf(path, sizeof path, "%s/js.b64", tmpdir);
    ps_buf out = PS_BUF_INIT, text = PS_BUF_INIT;
    int rc = run_peer("encode", path, &out);
    CHECK_INT(rc, 0);
    if (rc == 0 && ps_buf_read_file(&text, path) == 0) {
        while (text.len && (text.data[text.len - 1] == '\n' || text.data[text.len - 1] == '\r'))
            text.len--;
        ps_hist *h = NULL;
        ps_error err;
        CHECK_INT(ps_hdr_log_decode(text.data, text.len, &h, &err), 0);
        if (h) {
            CHECK_INT(ps_hist_significant_figures(h), 3);
            CHECK_INT(ps_hist_highest_trackable(h), 60000000);
            compare_with_peer(&out, h);
            ps_hist_close(h);
        } else {
            fprintf(stderr, "  decoding the peer's encoding: %s\n", err.message);
        }
    } else if (rc == 0) {
        CHECK(!"peer wrote no encoding file");
    }
    unlink(path);
    ps_buf_free(&out);
    ps_buf_free(&text);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: test_hdr_peer NODE PEER_JS HDR_HISTOGRAM_JS_DIR\n");
        return 2;
    }
    node_bin = argv[1];
    peer_js = argv[2];
    module_dir = argv[3];
    if (access(node_bin, X_OK) != 0) {
        fprintf(stderr, "test_hdr_peer: node not found (%s)\n", node_bin);
        return 1;
    }
    char pkg[512];
    snprintf(pkg, sizeof pkg, "%s/package.json", module_dir);
    if (access(pkg, R_OK) != 0) {
        fprintf(stderr,
                "test_hdr_peer: hdr-histogram-js is not installed at %s; run "
                "scripts/install-deps.sh\n",
                module_dir);
        return 1;
    }
    snprintf(tmpdir, sizeof tmpdir, "/tmp/ps_hdr_peer.XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    RUN(peer_reads_our_interval_log);
    RUN(we_decode_the_peers_encoding);
    rmdir(tmpdir);
    return TEST_EXIT();
}
