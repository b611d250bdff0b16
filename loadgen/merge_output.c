/* merge_output.c - the merged report's files (--json, --hdr, --hdr-log,
 * --html, --summary-md) and console summary (merge_internal.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hdr_log.h"
#include "core/histogram_print.h"
#include "loadgen/merge_internal.h"
#include "reports/html_report.h"
#include "reports/report_markdown.h"

void ps_lg_terminal_text(const char *s, char *out, size_t size)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p && n + 5 < size; p++) {
        unsigned c = *p;
        bool c1 = c == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f; /* U+0080..U+009F */
        if (c1) c = *++p;
        if (c1 || c < 0x20 || c == 0x7f)
            n += (size_t)snprintf(out + n, size - n, "\\x%02x", c);
        else
            out[n++] = (char)c;
    }
    out[n] = '\0';
}

int ps_lg_merged_json(ps_jw *w, const void *arg, ps_error *err)
{
    (void)err;
    const merge *m = arg;
    ps_jw_key(w, "merged");
    ps_jw_object_open(w);
    ps_jw_kstring(w, "run_id", m->shards[0].run_id);
    ps_jw_kint(w, "of", m->shards[0].of);
    ps_jw_key(w, "shards");
    ps_jw_array_open(w);
    for (int idx = 1; idx <= m->shards[0].of; idx++) {
        for (size_t i = 0; i < m->nshards; i++) {
            const shard_doc *s = &m->shards[i];
            if (s->index != idx) continue;
            ps_jw_object_open(w);
            ps_jw_kint(w, "index", s->index);
            ps_jw_kstring(w, "file", s->path);
            ps_jw_kint(w, "requests", s->requests);
            ps_jw_kint(w, "answered", s->answered);
            ps_jw_kint(w, "exit_code", s->exit_code);
            ps_jw_kstring(w, "verdict", s->verdict);
            ps_jw_kdouble(w, "start_unix_s", s->start_unix_s, 3);
            ps_jw_object_close(w);
        }
    }
    ps_jw_array_close(w);
    ps_jw_object_close(w);
    return 0;
}

static FILE *open_out(merge *m, const char *path)
{
    FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
    if (!f) ps_error_set(&m->err, "cannot write '%s': %s", path, strerror(errno));
    return f;
}

static int close_out(merge *m, FILE *f, const char *path)
{
    int bad = ferror(f);
    bad |= f == stdout ? fflush(f) != 0 : fclose(f) != 0;
    if (bad) return ps_error_set(&m->err, "error writing '%s'", path);
    return 0;
}

int ps_lg_merge_write_outputs(merge *m)
{
    FILE *f;
    if (m->json_path) {
        if (!(f = open_out(m, m->json_path))) return -1;
        fwrite(m->json.data, 1, m->json.len, f);
        if (close_out(m, f, m->json_path) != 0) return -1;
    }
    if (m->hdr_path) {
        if (!(f = open_out(m, m->hdr_path))) return -1;
        ps_hist_percentiles_print(m->total.all.corr, f, 5, 1000.0, PS_HIST_FORMAT_CLASSIC);
        if (close_out(m, f, m->hdr_path) != 0) return -1;
    }
    if (m->hdr_log_path) {
        if (!(f = open_out(m, m->hdr_log_path))) return -1;
        int rc = ps_hdr_log_write_header(f, m->start_unix_s, &m->err);
        for (size_t i = 0; i < m->nrows && rc == 0; i++) {
            ps_hist *h = NULL;
            rc = ps_hdr_log_decode(m->row_enc[i], strlen(m->row_enc[i]), &h, &m->err);
            if (rc == 0)
                rc = ps_hdr_log_write_interval(f, m->rows[i].t_s, m->rows[i].length_s, h, 1.0,
                                               &m->err);
            ps_hist_close(h);
        }
        if (close_out(m, f, m->hdr_log_path) != 0 || rc != 0) return -1;
    }
    if (m->html_path) {
        if (!(f = open_out(m, m->html_path))) return -1;
        ps_json *doc = ps_json_parse(m->json.data, m->json.len, NULL, &m->err);
        int rc = doc ? ps_report_html_load(doc, f, &m->err) : -1;
        ps_json_free(doc);
        if (close_out(m, f, m->html_path) != 0 || rc != 0) return -1;
    }
    if (m->md_path) {
        if (!(f = open_out(m, m->md_path))) return -1;
        ps_json *doc = ps_json_parse(m->json.data, m->json.len, NULL, &m->err);
        int rc = doc ? ps_report_md_load(doc, f, &m->err) : -1;
        ps_json_free(doc);
        if (close_out(m, f, m->md_path) != 0 || rc != 0) return -1;
    }
    return 0;
}

void ps_lg_merge_print_summary(const merge *m, int code)
{
    if (m->quiet) return;
    const ps_lg_stats *t = &m->total;
    fprintf(stderr,
            "petstore-load merge: run %s, %zu shards: %lld requests in %.2fs (answered %lld, "
            "failed %lld, timed out %lld)\n",
            m->shards[0].run_id, m->nshards, (long long)t->scheduled, m->duration_s,
            (long long)t->answered, (long long)t->failed, (long long)t->timed_out);
    fprintf(stderr, "  corrected latency ms: p50 %.3f p90 %.3f p99 %.3f p99.9 %.3f max %.3f\n",
            ps_hist_value_at_percentile(t->all.corr, 50) / 1e3,
            ps_hist_value_at_percentile(t->all.corr, 90) / 1e3,
            ps_hist_value_at_percentile(t->all.corr, 99) / 1e3,
            ps_hist_value_at_percentile(t->all.corr, 99.9) / 1e3, ps_hist_max(t->all.corr) / 1e3);
    for (size_t i = 0; i < m->nviolations; i++)
        fprintf(stderr, "  %s: %s\n", m->violations[i].fails ? "LIMIT VIOLATION" : "warning",
                m->violations[i].message);
    for (size_t i = 0; i < m->ncounting; i++) {
        const char *red = m->cfg.keys[m->counting[i].key].label;
        fprintf(stderr, "  limits counted for key %s: %s\n", red, m->counting[i].counting.reason);
    }
    if (m->verify_limits)
        fprintf(stderr, "  limits: %s (%zu windows checked, admissions summed over the shards)\n",
                m->failing                ? "FAIL"
                : m->windows_checked == 0 ? "not checked"
                                          : "pass",
                m->windows_checked);
    for (size_t i = 0; i < m->cfg.nthresholds; i++)
        fprintf(stderr, "  threshold %s: %s\n", m->cfg.thresholds[i].expression,
                m->thresholds[i].passed ? "passed" : "FAILED");
    fprintf(stderr, "  exit %d\n", code);
}
