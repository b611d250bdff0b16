/* test_html_reports.c - both HTML reports: everything from the JSON is
 * escaped, the page is self-contained, degenerate documents (empty, wrong
 * types, zero requests) render without crashing, a long run stays small, and
 * write failures are reported. Run under ASan in the sanitizer tree. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/json.h"
#include "harness.h"
#include "reports/html_report.h"

typedef int (*render_fn)(const ps_json *, FILE *, ps_error *);

/* Renders text with fn into a malloc'd string (NULL when rendering failed). */
static char *render_text(render_fn fn, const char *text, size_t *len, ps_error *err)
{
    ps_json *doc = ps_json_parse(text, strlen(text), NULL, NULL);
    char *html = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&html, &n);
    int rc = fn(doc, f, err);
    fclose(f);
    ps_json_free(doc);
    if (len) *len = n;
    if (rc != 0) {
        free(html);
        return NULL;
    }
    return html;
}

static char *render_file(render_fn fn, const char *name, size_t *len)
{
    char path[512];
    ps_buf text = PS_BUF_INIT;
    snprintf(path, sizeof path, "%s/%s", PS_REPORT_FIXTURES, name);
    if (ps_buf_read_file(&text, path) != 0) {
        fprintf(stderr, "cannot read %s\n", path);
        return NULL;
    }
    char *html = render_text(fn, text.data, len, NULL);
    ps_buf_free(&text);
    return html;
}

static size_t count_of(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

/* Self-contained: one inline script at most, nothing loaded from anywhere. */
static void check_self_contained(const char *html)
{
    CHECK(count_of(html, "<script") <= 1);
    CHECK(strstr(html, "<script src") == NULL);
    CHECK(strstr(html, "<link") == NULL);
    CHECK(strstr(html, "@import") == NULL);
    CHECK(strstr(html, "url(") == NULL);
    CHECK(strstr(html, "<img") == NULL);
    CHECK(strstr(html, "<iframe") == NULL);
    CHECK(strncmp(html, "<!DOCTYPE html>", 15) == 0);
    size_t n = strlen(html);
    CHECK(n > 8 && strcmp(html + n - 8, "</html>\n") == 0);
}

/* Every points="..." and data-x/data-y list holds only numbers: no nan/inf
 * leaked from a degenerate document into the SVG. */
static void check_numbers_only(const char *html)
{
    static const char *const attrs[] = {" points=\"",     " data-x=\"",     " data-y=\"",
                                        " data-x-min=\"", " data-x-max=\"", " data-y-min=\"",
                                        " data-y-max=\""};
    for (size_t a = 0; a < sizeof attrs / sizeof attrs[0]; a++) {
        for (const char *p = html; (p = strstr(p, attrs[a])) != NULL;) {
            p += strlen(attrs[a]);
            const char *end = strchr(p, '"');
            CHECK(end != NULL);
            if (!end) break;
            bool clean = strspn(p, "0123456789.,- e+") == (size_t)(end - p);
            if (!clean) fprintf(stderr, "bad number list in%s%.60s\n", attrs[a], p);
            CHECK(clean);
            p = end;
        }
    }
}

static void test_conform_sample_escapes_hostile_body(void)
{
    char *html = render_file(ps_report_html_conform, "conform-sample.json", NULL);
    CHECK(html != NULL);
    if (!html) return;
    check_self_contained(html);
    /* the fixture's response body holds </script><img src=x onerror=alert(1)> */
    CHECK(strstr(html, "onerror") != NULL);
    CHECK(strstr(html, "<img src=x onerror") == NULL);
    CHECK(strstr(html, "Dogs&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;") != NULL);
    CHECK_INT(count_of(html, "</script>"), 1);
    /* one row per check, failed/warning ones expandable with their evidence */
    CHECK_INT(count_of(html, "class=\"check\""), 12);
    CHECK_INT(count_of(html, "<details class=\"check\" data-status=\"failed\""), 1);
    CHECK_INT(count_of(html, "<details class=\"check\" data-status=\"warning\""), 2);
    /* failed checks start open (their evidence needs no click), the others closed */
    CHECK_INT(count_of(html, "<details class=\"check\" data-status=\"failed\" open id="), 1);
    CHECK_INT(count_of(html, "data-status=\"warning\" open"), 0);
    CHECK_INT(count_of(html, "data-status=\"passed\""), 7);
    CHECK(strstr(html, "schema.category-fields") != NULL);
    CHECK(strstr(html, "spec 5 Category") != NULL);
    CHECK(strstr(html, "curl -i -X GET -H &#39;Authorization: Bearer $PETSTORE_API_KEY&#39;") !=
          NULL);
    CHECK(strstr(html, "HTTP 200\nContent-Type: application/json\nX-RateLimit-Limit: 600") != NULL);
    CHECK(strstr(html, "each item an object with integer id") != NULL);
    CHECK(strstr(html, "data-count=\"failed\"><b>1</b>") != NULL);
    CHECK(strstr(html, "data-count=\"not_run\"><b>2</b>") != NULL);
    CHECK(strstr(html, "data-verdict=\"fail\"") != NULL);
    CHECK(strstr(html, "id=\"filters\"") != NULL);
    free(html);
}

static void test_load_sample_has_every_section(void)
{
    size_t len = 0;
    char *html = render_file(ps_report_html_load, "load-sample.json", &len);
    CHECK(html != NULL);
    if (!html) return;
    check_self_contained(html);
    check_numbers_only(html);
    CHECK(strstr(html, "data-plot=\"spectrum\" data-x-scale=\"percentile\"") != NULL);
    CHECK(strstr(html, "data-plot=\"throughput\"") != NULL);
    CHECK(strstr(html, "data-plot=\"latency\"") != NULL);
    CHECK(strstr(html, "data-plot=\"status\"") != NULL);
    CHECK(strstr(html, ">99.9%<") != NULL);
    CHECK(strstr(html, "data-series=\"corrected\"") && strstr(html, "data-series=\"uncorrected\""));
    /* both violations, with kind and message */
    CHECK_INT(count_of(html, "<tr data-kind="), 2);
    CHECK(strstr(html, "over_admission") && strstr(html, "missing_retry_after"));
    CHECK(strstr(html, "a 429 reply had no Retry-After header") != NULL);
    CHECK(strstr(html, "data-limits-verdict=\"fail\"") != NULL);
    /* per-plan verdict: the fixture's two violations are both on plan pro */
    const char *plans = strstr(html, "<table class=\"plans\">");
    CHECK(plans != NULL);
    CHECK(plans && strstr(plans, "<td>pro</td><td class=\"n\">1</td><td class=\"n\">19\xE2\x80\x89"
                                 "000</td>"
                                 "<td class=\"n\">990</td><td class=\"n\">2</td>"
                                 "<td><span class=\"badge st-failed\">violated</span>") != NULL);
    /* parameters: every member shown, under a human label, the JSON name kept */
    CHECK(strstr(html,
                 "<span title=\"honour_retry_after\">Honour Retry-After</span><code>yes</code>") !=
          NULL);
    CHECK(strstr(html, "<span title=\"requests_limit\">Request limit</span><code>none</code>") !=
          NULL);
    CHECK(strstr(html, "<span title=\"mix\">Operation mix</span><code>list 9, create 1</code>") !=
          NULL);
    CHECK(strstr(html, "<span title=\"plans\">Plans</span><code>pro</code>") != NULL);
    CHECK(strstr(html, "<span title=\"timeout_s\">Timeout</span><code>10 s</code>") != NULL);
    CHECK(strstr(html, "<span title=\"rate\">Target rate</span><code>2000 requests/s</code>") !=
          NULL);
    CHECK(strstr(html, "<span>timeout_s</span>") == NULL &&
          strstr(html, "<span>requests_limit</span>") == NULL);
    /* the URL gets two columns instead of wrapping mid-word; short values one */
    CHECK(strstr(
              html,
              "<div class=\"wide\" data-key=\"base_url\"><span title=\"base_url\">Target</span>") !=
          NULL);
    CHECK(strstr(html, "<div data-key=\"threads\"><span title=\"threads\">Threads</span>") != NULL);
    /* the verdict line does not repeat "checked true" */
    CHECK(strstr(html, "checked true") == NULL && strstr(html, "windows observed 12") != NULL);
    CHECK(strstr(html, "p99.9&lt;1ms") != NULL);
    CHECK(len < 200 * 1024);
    free(html);
}

/* Documents that are objects render (return 0) whatever their members hold. */
static const char *const degenerate[] = {
    "{}",
    "{\"suites\": 5, \"summary\": \"x\", \"target\": [], \"verdict\": 3, \"intervals\": {},"
    " \"percentile_spectrum\": [], \"latency_us\": null, \"status\": [1], \"limits\": \"no\","
    " \"parameters\": 7, \"plans\": {}, \"operations\": [], \"thresholds\": {}}",
    "{\"suites\": [5, null, {\"name\": 3, \"checks\": {}}, {\"checks\": [1, \"x\", {},"
    " {\"status\": \"bogus\", \"evidence\": 4}, {\"status\": \"failed\", \"evidence\": "
    "{\"request\": 1,"
    " \"response\": {\"headers\": {\"a\": [1]}, \"body\": {\"x\": 1}, \"status\": \"two hundred\"},"
    " \"curl\": null}}, {\"status\": \"warning\", \"evidence\": {\"request\": {\"headers\": [[1, "
    "2], \"x\", []]}}}]}]}",
    "{\"summary\": {\"total\": 0, \"passed\": 0, \"failed\": 0, \"warnings\": 0, \"not_run\": 0}, "
    "\"suites\": []}",
    "{\"summary\": {\"passed\": -5, \"failed\": 1e308, \"warnings\": 1e308}, \"duration_s\": "
    "\"long\"}",
    /* zero requests: empty intervals and spectrum, no violations */
    "{\"requests\": 0, \"duration_s\": 0, \"throughput_rps\": 0, \"status\": {}, \"errors\": {},"
    " \"latency_us\": {\"corrected\": {}, \"uncorrected\": {}}, \"percentile_spectrum\":"
    " {\"corrected\": [], \"uncorrected\": []}, \"intervals\": [], \"plans\": [],"
    " \"limits\": {\"verdict\": \"not_checked\", \"checked\": false, \"violations\": []}}",
    /* malformed rows and members of the wrong type everywhere */
    "{\"percentile_spectrum\": {\"corrected\": [1, [], [\"a\", 0.5], [100, \"p\"], [100, 1.5], "
    "[100, -1],"
    " [5, 0.5, 1]], \"uncorrected\": {}}, \"intervals\": [1, {}, {\"t_s\": \"0\"}, {\"t_s\": 1,"
    " \"p50_us\": \"x\", \"status_classes\": 4}, {\"t_s\": 2, \"throughput_rps\": -1e308}],"
    " \"latency_us\": {\"corrected\": {\"p50\": \"fast\", \"p99\": -1, \"max\": 1e300}},"
    " \"operations\": {\"list\": 5, \"create\": {\"latency_us\": []}}, \"status_classes\": "
    "{\"2xx\": null},"
    " \"plans\": [1, {\"plan\": {}}], \"limits\": {\"violations\": [1, {\"window_reset\": -5},"
    " {\"window_reset\": 1e300}, {\"window_reset\": \"soon\"}]}, \"thresholds\": [1, {\"passed\": "
    "1}]}",
    /* one interval and one spectrum row: a single point to draw */
    ("{\"intervals\": [{\"t_s\": 0, \"throughput_rps\": 5, \"p50_us\": 7}], "
     "\"percentile_spectrum\":"
     " {\"corrected\": [[5, 1.0, 1]]}}"),
};

static void test_degenerate_documents_render(void)
{
    for (size_t i = 0; i < sizeof degenerate / sizeof degenerate[0]; i++) {
        ps_error err = {{0}};
        char *c = render_text(ps_report_html_conform, degenerate[i], NULL, &err);
        char *l = render_text(ps_report_html_load, degenerate[i], NULL, &err);
        if (!c || !l) fprintf(stderr, "document %zu: %s\n", i, err.message);
        CHECK(c != NULL && l != NULL);
        if (c) check_self_contained(c), check_numbers_only(c);
        if (l) check_self_contained(l), check_numbers_only(l);
        free(c);
        free(l);
    }
    /* the zero-request document says so instead of drawing empty charts */
    char *l = render_text(ps_report_html_load, degenerate[5], NULL, NULL);
    CHECK(l && strstr(l, "No interval data in the report.") != NULL);
    /* limits not checked: said once, in words, not "Verdict not_checked · checked false" */
    CHECK(l && strstr(l, "Limits were not checked in this run") != NULL);
    CHECK(l && strstr(l, "not_checked</span>") == NULL && strstr(l, "checked false") == NULL);
    free(l);
}

static void test_non_objects_are_refused(void)
{
    static const char *const texts[] = {"[]", "null", "5", "\"x\""};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        ps_error err = {{0}};
        CHECK(render_text(ps_report_html_conform, texts[i], NULL, &err) == NULL);
        CHECK(strstr(err.message, "not a JSON object") != NULL);
        err.message[0] = '\0';
        CHECK(render_text(ps_report_html_load, texts[i], NULL, &err) == NULL);
        CHECK(strstr(err.message, "not a JSON object") != NULL);
    }
    ps_error err = {{0}};
    CHECK(ps_report_html_load(NULL, stdout, &err) == -1);
    CHECK(strstr(err.message, "missing") != NULL);
}

/* Every string and key of a document is untrusted. */
static void test_hostile_strings_everywhere(void)
{
    const char *doc =
        "{\"tool\": \"<t1>\", \"version\": \"<t2>\", \"verdict\": \"<t3>\", \"started_at\": "
        "\"<t4>\","
        " \"target\": {\"base_url\": \"<t5>\", \"plan\": \"<t6>\"},"
        " \"suites\": [{\"name\": \"<t7>\", \"checks\": [{\"id\": \"<t8>\", \"title\": \"<t9>\","
        " \"level\": \"<t10>\", \"clause\": \"<t11>\", \"status\": \"<t12>\", \"tags\": "
        "[\"<t13>\"],"
        " \"message\": \"<t14>\", \"evidence\": {\"request\": {\"method\": \"<t15>\", \"url\": "
        "\"<t16>\","
        " \"headers\": [[\"<t17>\", \"<t18>\"]], \"body\": \"<t19>\\u0000<t20>\"}, \"response\":"
        " {\"status\": \"<t21>\", \"headers\": {\"<t22>\": \"<t23>\"}, \"body\": \"<t24>\"},"
        " \"expected\": [\"<t25>\"], \"curl\": \"<t26>\", \"<t27>\": \"<t28>\"}}]}],"
        " \"parameters\": {\"<t29>\": \"<t30>\", \"base_url\": \"<t31>\"}, \"status\": {\"<t32>\": "
        "1},"
        " \"errors\": {\"<t33>\": \"<t34>\"}, \"operations\": {\"<t35>\": {}}, \"status_classes\": "
        "{\"<t36>\": {}},"
        " \"plans\": [{\"plan\": \"<t37>\"}], \"limits\": {\"verdict\": \"<t38>\", \"violations\": "
        "[{\"key\":"
        " \"<t39>\", \"plan\": \"<t40>\", \"kind\": \"<t41>\", \"window\": \"<t42>\", \"message\": "
        "\"<t43>\","
        " \"window_reset\": \"<t44>\"}]}, \"thresholds\": [{\"expression\": \"<t45>\"}]}";
    char *c = render_text(ps_report_html_conform, doc, NULL, NULL);
    char *l = render_text(ps_report_html_load, doc, NULL, NULL);
    CHECK(c && l);
    if (!c || !l) goto out;
    for (int i = 1; i <= 45; i++) {
        char raw[16];
        snprintf(raw, sizeof raw, "<t%d>", i);
        if (strstr(c, raw) || strstr(l, raw)) fprintf(stderr, "%s came out unescaped\n", raw);
        CHECK(strstr(c, raw) == NULL && strstr(l, raw) == NULL);
    }
    CHECK(strstr(c, "&lt;t8&gt;") && strstr(c, "&lt;t28&gt;") && strstr(c, "&lt;t20&gt;"));
    CHECK(strstr(c, "&lt;t19&gt;\xEF\xBF\xBD&lt;t20&gt;") != NULL); /* NUL shown as U+FFFD */
    CHECK(strstr(l, "&lt;t29&gt;") && strstr(l, "&lt;t45&gt;") && strstr(l, "&lt;t44&gt;"));
out:
    free(c);
    free(l);
}

/* A credential the writer forgot to redact does not reach the page. */
static void test_authorization_is_redacted(void)
{
    const char *doc =
        "{\"suites\": [{\"name\": \"s\", \"checks\": [{\"id\": \"a\", \"status\": \"failed\","
        " \"evidence\": {\"request\": {\"method\": \"GET\", \"url\": \"u\", \"headers\":"
        " [[\"authorization\", \"Bearer sk-live-123\"], [\"X-Api-Key\", \"sk-live-456\"]]}}}]}]}";
    char *c = render_text(ps_report_html_conform, doc, NULL, NULL);
    CHECK(c != NULL);
    CHECK(c && strstr(c, "sk-live") == NULL);
    CHECK(c && strstr(c, "authorization: Bearer ***") != NULL);
    free(c);
}

static void test_huge_body_is_capped(void)
{
    ps_buf doc = PS_BUF_INIT;
    ps_buf_puts(&doc,
                "{\"suites\": [{\"checks\": [{\"status\": \"failed\", \"evidence\": {\"response\":"
                " {\"body\": \"");
    for (int i = 0; i < 300000; i++)
        ps_buf_puts(&doc, "\xC3\xA9"); /* 600 KB of 2-byte characters */
    ps_buf_puts(&doc, "\"}}}]}]}");
    size_t len = 0;
    char *c = render_text(ps_report_html_conform, doc.data, &len, NULL);
    CHECK(c != NULL);
    CHECK(len < 100 * 1024);
    CHECK(c && strstr(c, "more bytes not shown") != NULL);
    CHECK(c && ps_utf8_valid(c, len));
    free(c);
    ps_buf_free(&doc);
}

/* A 10-minute run with 600 one-second intervals stays well under 1 MB. */
static void test_long_run_is_compact(void)
{
    ps_buf doc = PS_BUF_INIT;
    ps_buf_puts(&doc, "{\"requests\": 1200000, \"percentile_spectrum\": {");
    for (int s = 0; s < 2; s++) {
        ps_buf_printf(&doc, "%s\"%s\": [", s ? ", " : "", s ? "uncorrected" : "corrected");
        double p = 0;
        for (int i = 0; i < 200; i++) {
            ps_buf_printf(&doc, "%s[%d, %.12f, %d]", i ? ", " : "", 200 + i * 37, p, i * 6000);
            p += (1 - p) / 12;
        }
        ps_buf_puts(&doc, ", [99999, 1.0, 1200000]]");
    }
    ps_buf_puts(&doc, "}, \"intervals\": [");
    for (int i = 0; i < 600; i++)
        ps_buf_printf(
            &doc,
            "%s{\"t_s\": %d.0, \"length_s\": 1.0, \"requests\": %d, \"throughput_rps\": %d.5,"
            " \"p50_us\": %d, \"p90_us\": %d, \"p99_us\": %d, \"max_us\": %d,"
            " \"status_classes\": {\"2xx\": %d, \"4xx\": %d, \"5xx\": %d, \"429\": %d,"
            " \"errors\": %d}}",
            i ? ", " : "", i, 2000 - i % 17, 1999 - i % 13, 210 + i % 31, 320 + i % 47,
            900 + i % 301, 5000 + i * 7, 1900 - i % 11, 100 + i % 7, i % 3, 90 + i % 5, i % 2);
    ps_buf_puts(&doc, "]}");
    size_t len = 0;
    char *l = render_text(ps_report_html_load, doc.data, &len, NULL);
    CHECK(l != NULL);
    fprintf(stderr, "600-interval report: %zu bytes\n", len);
    CHECK(len < 512 * 1024);
    /* all 600 points drawn in each series of the interval plots */
    if (l) {
        const char *p = strstr(l, "data-series=\"p99_us\"");
        CHECK(p != NULL);
        const char *pts = p ? strstr(p, "points=\"") : NULL;
        const char *end = pts ? strchr(pts + 8, '"') : NULL;
        size_t commas = 0;
        for (const char *q = pts; q && q < end; q++)
            commas += *q == ',';
        CHECK_INT(commas, 600);
    }
    free(l);
    ps_buf_free(&doc);
}

static void test_write_failure_is_reported(void)
{
    FILE *full = fopen("/dev/full", "w");
    if (!full) {
        fprintf(stderr, "no /dev/full here; skipping the write-failure check\n");
        return;
    }
    ps_json *doc = ps_json_parse("{}", 2, NULL, NULL);
    ps_error err = {{0}};
    CHECK(ps_report_html_load(doc, full, &err) == -1);
    CHECK(strstr(err.message, "write failed") != NULL);
    err.message[0] = '\0';
    CHECK(ps_report_html_conform(doc, full, &err) == -1);
    CHECK(strstr(err.message, "write failed") != NULL);
    fclose(full);
    ps_json_free(doc);
}

/* An interval without answers has null latencies (docs/report-json.md): the
 * latency lines break there (two pieces, no point at that interval) instead of
 * being drawn straight across it; throughput still has its 0 there. */
static void test_null_interval_breaks_latency_line(void)
{
    static const char doc[] =
        "{\"intervals\": ["
        "{\"t_s\": 0, \"length_s\": 1, \"requests\": 10, \"throughput_rps\": 10,"
        " \"p50_us\": 100, \"p90_us\": 200, \"p99_us\": 300, \"max_us\": 400},"
        "{\"t_s\": 1, \"length_s\": 1, \"requests\": 10, \"throughput_rps\": 10,"
        " \"p50_us\": 110, \"p90_us\": 210, \"p99_us\": 310, \"max_us\": 410},"
        "{\"t_s\": 2, \"length_s\": 1, \"requests\": 0, \"throughput_rps\": 0,"
        " \"p50_us\": null, \"p90_us\": null, \"p99_us\": null, \"max_us\": null},"
        "{\"t_s\": 3, \"length_s\": 1, \"requests\": 10, \"throughput_rps\": 10,"
        " \"p50_us\": 120, \"p90_us\": 220, \"p99_us\": 320, \"max_us\": 420}]}";
    char *html = render_text(ps_report_html_load, doc, NULL, NULL);
    CHECK(html != NULL);
    if (!html) return;
    check_numbers_only(html);
    const char *lat = strstr(html, "data-plot=\"latency\"");
    const char *end = lat ? strstr(lat, "</svg>") : NULL;
    CHECK(lat && end);
    if (lat && end) {
        char *svg = strndup(lat, (size_t)(end - lat));
        static const char *const keys[] = {"p50_us", "p90_us", "p99_us", "max_us"};
        for (size_t k = 0; k < 4; k++) {
            char want[64];
            snprintf(want, sizeof want, "data-series=\"%s\"", keys[k]);
            CHECK_INT(count_of(svg, want), 2);
        }
        /* the first piece holds the two seconds before the gap, the second the one after */
        CHECK(
            strstr(svg, "data-series=\"p50_us\"") &&
            strstr(strstr(svg, "data-series=\"p50_us\""), "data-x=\"0.5 1.5\" data-y=\"100 110\""));
        CHECK(strstr(svg, "data-x=\"3.5\" data-y=\"120\"") != NULL);
        CHECK(strstr(svg, "data-x=\"0.5 1.5 2.5") == NULL && strstr(svg, " 2.5 ") == NULL);
        /* the lone point after the gap is marked, as a line of one point shows nothing */
        CHECK(count_of(svg, "<circle") == 4);
        free(svg);
    }
    /* and the page says why the lines stop */
    CHECK(strstr(html, "No request was answered in 1 interval (2\xE2\x80\x93"
                       "3 s): the latency "
                       "lines break there.") != NULL);
    /* throughput has a real 0 in that interval: one unbroken line through it */
    const char *thr = strstr(html, "data-plot=\"throughput\"");
    CHECK(thr && strstr(thr, "data-x=\"0.5 1.5 2.5 3.5\" data-y=\"10 10 0 10\""));
    free(html);
}

/* The text of the table row that starts with <tr><td>NAME</td> (malloc'd, NULL when absent). */
static char *row_of(const char *html, const char *name)
{
    char want[64];
    snprintf(want, sizeof want, "<tr><td>%s</td>", name);
    const char *r = strstr(html, want);
    const char *e = r ? strstr(r, "</tr>") : NULL;
    return r && e ? strndup(r, (size_t)(e - r)) : NULL;
}

/* Operations and status classes that counted nothing show a dash for their
 * latencies, not "0 µs" (loadgen writes 0s, or nulls, for them). */
static void test_empty_classes_show_dash(void)
{
    static const char lat5[] =
        "{\"corrected\": {\"p50\": 70, \"p90\": 90, \"p99\": 99, \"max\": 120,"
        " \"count\": 5}, \"uncorrected\": {\"p99\": 80, \"count\": 5}}";
    static const char lat0[] = "{\"corrected\": {\"p50\": 0, \"p90\": 0, \"p99\": 0, \"max\": 0,"
                               " \"count\": 0}, \"uncorrected\": {\"p99\": 0, \"count\": 0}}";
    static const char latnull[] = "{\"corrected\": {\"p50\": null, \"p90\": null, \"p99\": null,"
                                  " \"max\": null}, \"uncorrected\": {\"p99\": null}}";
    char doc[2048];
    snprintf(
        doc, sizeof doc,
        "{\"operations\": {\"list\": {\"requests\": 5, \"latency_us\": %s},"
        " \"create\": {\"requests\": 0, \"latency_us\": %s}},"
        " \"status_classes\": {\"2xx\": {\"count\": 5, \"latency_us\": %s},"
        " \"3xx\": {\"count\": 0, \"latency_us\": %s}, \"5xx\": {\"count\": 0, \"latency_us\": %s},"
        " \"4xx\": {\"count\": 2, \"latency_us\": %s}}}",
        lat5, lat0, lat5, lat0, latnull, latnull);
    char *html = render_text(ps_report_html_load, doc, NULL, NULL);
    CHECK(html != NULL);
    if (!html) return;
    static const char *const empty[] = {"create", "3xx", "5xx"};
    for (size_t i = 0; i < 3; i++) {
        char *row = row_of(html, empty[i]);
        CHECK(row != NULL);
        if (!row) continue;
        if (count_of(row, ">\xE2\x80\x93<") != 5) fprintf(stderr, "row %s: %s\n", empty[i], row);
        CHECK_INT(count_of(row, ">\xE2\x80\x93<"), 5);
        CHECK(strstr(row, "\xC2\xB5s") == NULL && strstr(row, "data-us") == NULL);
        free(row);
    }
    /* counted rows keep their numbers; a null value in a counted row is a dash too */
    char *row = row_of(html, "list");
    CHECK(row && strstr(row, "data-us=\"70\">70\xC2\xA0\xC2\xB5s<") &&
          !strstr(row, "\xE2\x80\x93"));
    free(row);
    row = row_of(html, "4xx");
    CHECK(row && count_of(row, ">\xE2\x80\x93<") == 5);
    free(row);
    free(html);

    /* a run that answered nothing: the latency table and cards show dashes */
    html = render_text(ps_report_html_load,
                       "{\"latency_us\": {\"corrected\": {\"p50\": 0, \"p99\": 0, \"max\": 0,"
                       " \"count\": 0}, \"uncorrected\": {\"p50\": null, \"count\": 0}}}",
                       NULL, NULL);
    CHECK(html != NULL);
    if (html) {
        CHECK(strstr(html, "data-card=\"p50\"><b>\xE2\x80\x93</b>") != NULL);
        const char *r = strstr(html, "<tr data-key=\"p50\">");
        CHECK(r && count_of(r, ">\xE2\x80\x93<") >= 2);
        CHECK(strstr(html, ">0\xC2\xA0\xC2\xB5s<") == NULL);
        free(html);
    }
}

/* Parameters read as a person writes them: objects as "k v, k v", arrays as
 * comma lists, numbers in their shortest form, no JSON punctuation. */
static void test_parameters_are_readable(void)
{
    char *html = render_text(ps_report_html_load,
                             "{\"parameters\": {\"mix\": {\"list\": 9, \"create\": 1}, \"plans\": "
                             "[\"enterprise\", \"pro\"],"
                             " \"rate\": 1000.000, \"duration_s\": 4.5, \"ramp\": {\"from\": 10, "
                             "\"to\": 20, \"steps\": [1, 2]},"
                             " \"tags\": [], \"empty\": {}, \"odd\": [{\"a\": \"<b>\"}, [3, "
                             "null]], \"requests_limit\": null,"
                             " \"verify_limits\": false}}",
                             NULL, NULL);
    CHECK(html != NULL);
    if (!html) return;
    CHECK(strstr(html, "<span title=\"mix\">Operation mix</span><code>list 9, create 1</code>") !=
          NULL);
    CHECK(strstr(html, "<span title=\"plans\">Plans</span><code>enterprise, pro</code>") != NULL);
    CHECK(strstr(html, "<span title=\"rate\">Target rate</span><code>1000 requests/s</code>") !=
          NULL);
    CHECK(strstr(html, "<span title=\"duration_s\">Duration</span><code>4.5 s</code>") != NULL);
    /* a ramp object of another shape is still shown whole, without a unit */
    CHECK(
        strstr(html,
               "<span title=\"ramp\">Rate ramp</span><code>from 10, to 20, steps (1, 2)</code>") !=
        NULL);
    /* members without a label keep their JSON name */
    CHECK(strstr(html, "<span title=\"tags\">tags</span><code>none</code>") != NULL);
    CHECK(strstr(html, "<span title=\"empty\">empty</span><code>none</code>") != NULL);
    CHECK(strstr(html, "<span title=\"odd\">odd</span><code>(a &lt;b&gt;), (3, none)</code>") !=
          NULL);
    CHECK(strstr(html, "<span title=\"requests_limit\">Request limit</span><code>none</code>") !=
          NULL);
    CHECK(strstr(html, "<span title=\"verify_limits\">Verify limits</span><code>no</code>") !=
          NULL);
    const char *p = strstr(html, "<h2>Parameters</h2>");
    const char *e = p ? strstr(p + 4, "<h2>") : NULL;
    CHECK(p && e);
    if (p && e) {
        char *sec = strndup(p, (size_t)(e - p));
        CHECK(strchr(sec, '{') == NULL && strchr(sec, '[') == NULL && !strstr(sec, "&quot;"));
        free(sec);
    }
    free(html);
}

/* What a user sees in the over-time plots: a latency plot whose lines span
 * more than 20x gets a log axis (p50 is not flattened onto the axis by max),
 * a narrow one stays linear; lines never touch the top of the frame; status
 * classes without any response are named in a note, not drawn along 0. */
static void test_over_time_plots_are_readable(void)
{
    static const char wide[] =
        "{\"intervals\": [{\"t_s\": 0, \"length_s\": 1, \"requests\": 10, \"throughput_rps\": 1000,"
        " \"p50_us\": 80, \"p90_us\": 140, \"p99_us\": 3000, \"max_us\": 8000,"
        " \"status_classes\": {\"2xx\": 1000, \"3xx\": 0, \"4xx\": 0, \"5xx\": 0, \"429\": 0,"
        " \"errors\": 0}},"
        "{\"t_s\": 1, \"length_s\": 1.25, \"requests\": 10, \"throughput_rps\": 1000,"
        " \"p50_us\": 70, \"p90_us\": 130, \"p99_us\": 200, \"max_us\": 2800,"
        " \"status_classes\": {\"2xx\": 990, \"3xx\": 0, \"4xx\": 10, \"5xx\": 0, \"429\": 10,"
        " \"errors\": 0}}]}";
    char *html = render_text(ps_report_html_load, wide, NULL, NULL);
    CHECK(html != NULL);
    if (!html) return;
    CHECK(strstr(html, "data-plot=\"latency\" data-x-scale=\"linear\" data-x-min=\"0\" "
                       "data-x-max=\"2.25\" data-y-scale=\"log\"") != NULL);
    CHECK(strstr(html, ">latency, log scale (ms)<") != NULL);
    const char *t = strstr(html, "data-plot=\"throughput\"");
    double ymax = t ? strtod(strstr(t, "data-y-max=\"") + 12, NULL) : 0;
    CHECK(ymax > 1000);
    /* 2xx, 4xx and 429 drawn; the rest named once */
    const char *st = strstr(html, "data-plot=\"status\"");
    CHECK(st && strstr(st, "data-series=\"status_classes.2xx\"") &&
          strstr(st, "data-series=\"status_classes.4xx\"") &&
          strstr(st, "data-series=\"status_classes.429\""));
    CHECK(strstr(html, "data-series=\"status_classes.3xx\"") == NULL &&
          strstr(html, "data-series=\"status_classes.5xx\"") == NULL &&
          strstr(html, "data-series=\"status_classes.errors\"") == NULL);
    CHECK(strstr(html, "Not drawn, none in any interval: 3xx, 5xx, errors.") != NULL);
    free(html);

    static const char narrow[] =
        "{\"intervals\": [{\"t_s\": 0, \"length_s\": 1, \"requests\": 10, \"p50_us\": 80,"
        " \"max_us\": 300}, {\"t_s\": 1, \"length_s\": 1, \"requests\": 10, \"p50_us\": 90,"
        " \"max_us\": 400}]}";
    html = render_text(ps_report_html_load, narrow, NULL, NULL);
    CHECK(html && strstr(html, "data-plot=\"latency\" data-x-scale=\"linear\" data-x-min=\"0\" "
                               "data-x-max=\"2\" data-y-scale=\"linear\"") != NULL);
    CHECK(html && strstr(html, ">latency (\xC2\xB5s)<") != NULL);
    free(html);
}

/* Every threshold row shows its verdict (✓/✗), the actual value and the
 * bound: an error_rate threshold's actual is a fraction ("actual": 0), which
 * once read as "n/a" because only actual_us was looked for. */
static void test_threshold_rows_show_actual_and_bound(void)
{
    char *html = render_text(
        ps_report_html_load,
        "{\"thresholds\": [{\"expression\": \"error_rate<1%\", \"passed\": true, \"actual\": 0,"
        " \"bound\": 0.01}, {\"expression\": \"p99<200ms\", \"passed\": false, \"actual_us\": "
        "250000,"
        " \"bound_us\": 200000}]}",
        NULL, NULL);
    CHECK(html != NULL);
    if (!html) return;
    const char *t = strstr(html, "<table class=\"thresholds\">");
    CHECK(t != NULL);
    CHECK(t &&
          strstr(t,
                 "<tr data-passed=\"true\"><td><span class=\"badge st-passed\">\xE2\x9C\x93 passed"
                 "</span></td><td class=\"mono\">error_rate&lt;1%</td>"
                 "<td class=\"n\" data-fraction=\"0\">0.00%</td>"
                 "<td class=\"n\" data-fraction=\"0.01\">1.00%</td></tr>") != NULL);
    CHECK(t &&
          strstr(t,
                 "<tr data-passed=\"false\"><td><span class=\"badge st-failed\">\xE2\x9C\x97 failed"
                 "</span></td><td class=\"mono\">p99&lt;200ms</td>"
                 "<td class=\"n\" data-us=\"250000\">250\xC2\xA0ms</td>"
                 "<td class=\"n\" data-us=\"200000\">200\xC2\xA0ms</td></tr>") != NULL);
    CHECK(t && strstr(t, ">n/a<") == NULL);
    free(html);
}

/* A rate-limited open-model run: 3 200 due at 400/s over 8 s, 2 114 skipped
 * while the key waited out Retry-After, 1 086 sent. The cards and one
 * sentence add the figures up, so 135.8 sent/s against 400 is explained. */
static void test_rate_limited_run_explains_send_rate(void)
{
    char *html =
        render_text(ps_report_html_load,
                    "{\"parameters\": {\"rate\": 400, \"model\": \"open\", \"ramp\": null}, "
                    "\"duration_s\": 8.0,"
                    " \"scheduled\": 1086, \"answered\": 1086, \"skipped_retry_after\": 2114,"
                    " \"throughput_rps\": 135.8, \"status\": {\"200\": 1029, \"429\": 57}}",
                    NULL, NULL);
    CHECK(html != NULL);
    if (!html) return;
    CHECK(strstr(html,
                 "data-card=\"sent_rps\" data-value=\"135.75\"><b>135.8</b><span>sent/s</span>") !=
          NULL);
    CHECK(strstr(html,
                 "data-card=\"target_rps\" data-value=\"400\"><b>400</b><span>target/s</span>") !=
          NULL);
    CHECK(strstr(html, "data-card=\"skipped_retry_after\" data-value=\"2114\"><b>2\xE2\x80\x89"
                       "114</b>"
                       "<span>skipped for Retry-After</span>") != NULL);
    CHECK(
        strstr(html,
               "data-card=\"status_429\" data-value=\"57\"><b>57</b><span>429 responses</span>") !=
        NULL);
    CHECK(strstr(html, "Open model at 400 requests/s: 3\xE2\x80\x89"
                       "200 requests were due; 2\xE2\x80\x89"
                       "114 (66.1%) were skipped because their key was waiting out a Retry-After, "
                       "1\xE2\x80\x89"
                       "086 were sent (135.8/s over 8.00 s) and 1\xE2\x80\x89"
                       "086 answered, 57 of them with 429.") != NULL);
    free(html);

    /* a ramp names both ends; a closed-model run has no target and no rate cards */
    html =
        render_text(ps_report_html_load,
                    "{\"parameters\": {\"rate\": null, \"ramp\": [10, 400], \"model\": \"open\"},"
                    " \"duration_s\": 2, \"scheduled\": 410, \"skipped_retry_after\": 0}",
                    NULL, NULL);
    CHECK(html &&
          strstr(html,
                 "Open model at a ramp from 10 to 400 requests/s: 410 requests were due; "
                 "none was skipped for Retry-After, 410 were sent (205.0/s over 2.00 s).") != NULL);
    CHECK(html &&
          strstr(
              html,
              "<span title=\"ramp\">Rate ramp</span><code>10 \xE2\x86\x92 400 requests/s</code>") !=
              NULL);
    CHECK(html && strstr(html, "data-card=\"target_rps\"") == NULL);
    free(html);
    html = render_text(
        ps_report_html_load,
        "{\"parameters\": {\"rate\": null, \"ramp\": null, \"model\": \"closed\"},"
        " \"duration_s\": 2, \"scheduled\": 410, \"skipped_retry_after\": 0, \"status\": {}}",
        NULL, NULL);
    CHECK(html && strstr(html, "data-card=\"sent_rps\"") == NULL &&
          strstr(html, "data-rate-note") == NULL);
    CHECK(html && strstr(html, "data-card=\"status_429\" data-value=\"0\"") != NULL);
    free(html);
}

/* One outlier 250x the median: the percentile plot gets a log latency axis
 * (a linear one drew p0 to p99.8 on its floor) and says why; a narrow
 * distribution keeps a linear axis. */
static void test_spectrum_goes_log_under_an_outlier(void)
{
    static const char wide[] =
        "{\"percentile_spectrum\": {\"corrected\": [[100, 0.0, 1], [200, 0.5, 500], [300, 0.99, "
        "990],"
        " [350, 0.998, 998], [50000, 1.0, 1000]], \"uncorrected\": [[100, 0.0, 1], [200, 0.5, 500],"
        " [48000, 1.0, 1000]]}}";
    char *html = render_text(ps_report_html_load, wide, NULL, NULL);
    CHECK(html && strstr(html, "data-plot=\"spectrum\" data-x-scale=\"percentile\"") != NULL);
    const char *sp = html ? strstr(html, "data-plot=\"spectrum\"") : NULL;
    CHECK(sp && strstr(sp, "data-y-scale=\"log\"") &&
          strstr(sp, "data-y-scale=\"log\"") < strstr(sp, ">"));
    CHECK(html && strstr(html, ">latency, log scale (ms)<") != NULL);
    CHECK(html &&
          strstr(html,
                 "data-spectrum-axis=\"log\">Latency on a log scale: the maximum (50.0\xC2\xA0ms)"
                 " is over 10 times the median (200\xC2\xA0\xC2\xB5s)") != NULL);
    free(html);
    static const char narrow[] = "{\"percentile_spectrum\": {\"corrected\": [[100, 0.0, 1], [200, "
                                 "0.5, 500], [900, 1.0, 1000]],"
                                 " \"uncorrected\": []}}";
    html = render_text(ps_report_html_load, narrow, NULL, NULL);
    sp = html ? strstr(html, "data-plot=\"spectrum\"") : NULL;
    CHECK(sp && strstr(sp, "data-y-scale=\"linear\"") &&
          strstr(sp, "data-y-scale=\"linear\"") < strstr(sp, ">"));
    CHECK(html && strstr(html, "data-spectrum-axis") == NULL);
    free(html);
}

int main(void)
{
    RUN(test_conform_sample_escapes_hostile_body);
    RUN(test_load_sample_has_every_section);
    RUN(test_null_interval_breaks_latency_line);
    RUN(test_empty_classes_show_dash);
    RUN(test_parameters_are_readable);
    RUN(test_over_time_plots_are_readable);
    RUN(test_threshold_rows_show_actual_and_bound);
    RUN(test_rate_limited_run_explains_send_rate);
    RUN(test_spectrum_goes_log_under_an_outlier);
    RUN(test_degenerate_documents_render);
    RUN(test_non_objects_are_refused);
    RUN(test_hostile_strings_everywhere);
    RUN(test_authorization_is_redacted);
    RUN(test_huge_body_is_capped);
    RUN(test_long_run_is_compact);
    RUN(test_write_failure_is_reported);
    return TEST_EXIT();
}
