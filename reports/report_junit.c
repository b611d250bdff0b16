/* report_junit.c - JUnit XML writer for conformance results. */
#include "reports/report_junit.h"

#include <string.h>

#include "core/buf.h"
#include "reports/report_conform_text.h"

/* XML text/attribute escaping; bytes XML 1.0 forbids (controls but tab,
 * newline, carriage return) are replaced so the file always parses. */
static void xml(ps_buf *b, const char *s)
{
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        switch (c) {
        case '&': ps_buf_puts(b, "&amp;"); break;
        case '<': ps_buf_puts(b, "&lt;"); break;
        case '>': ps_buf_puts(b, "&gt;"); break;
        case '"': ps_buf_puts(b, "&quot;"); break;
        case '\'': ps_buf_puts(b, "&apos;"); break;
        default:
            if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) ps_buf_putc(b, '.');
            else ps_buf_putc(b, (char)c);
        }
    }
}

static size_t count_status(const ps_json *checks, const char *status)
{
    size_t n = 0;
    for (size_t i = 0; checks && checks->type == PS_JSON_ARRAY && i < checks->count; i++)
        n += strcmp(ps_report_str(checks->items[i], "status", ""), status) == 0;
    return n;
}

int ps_report_junit_conform(const ps_json *doc, FILE *out, ps_error *err)
{
    if (!doc || doc->type != PS_JSON_OBJECT)
        return ps_error_set(err, "JUnit report: the document is not a JSON object");
    ps_buf b = PS_BUF_INIT;
    const ps_json *sum = ps_json_get(doc, "summary");
    ps_buf_puts(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    ps_buf_printf(&b,
                  "<testsuites name=\"petstore-conform\" tests=\"%lld\" failures=\"%lld\" errors=\"%d\" "
                  "skipped=\"%lld\" time=\"%.3f\">\n",
                  (long long)ps_json_get_int(sum, "total", 0), (long long)ps_json_get_int(sum, "failed", 0),
                  ps_report_str(doc, "aborted", NULL) ? 1 : 0, (long long)ps_json_get_int(sum, "not_run", 0),
                  ps_json_get_number(doc, "duration_s", 0));
    const ps_json *suites = ps_json_get(doc, "suites");
    for (size_t s = 0; suites && suites->type == PS_JSON_ARRAY && s < suites->count; s++) {
        const ps_json *suite = suites->items[s];
        const ps_json *checks = ps_json_get(suite, "checks");
        double ms = 0;
        for (size_t i = 0; checks && checks->type == PS_JSON_ARRAY && i < checks->count; i++)
            ms += ps_json_get_number(checks->items[i], "duration_ms", 0);
        ps_buf_puts(&b, "  <testsuite name=\"");
        xml(&b, ps_report_str(suite, "name", "?"));
        ps_buf_printf(&b, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\" time=\"%.3f\" timestamp=\"",
                      checks && checks->type == PS_JSON_ARRAY ? checks->count : 0, count_status(checks, "failed"),
                      count_status(checks, "not_run"), ms / 1000.0);
        const char *started = ps_report_str(doc, "started_at", "");
        /* JUnit timestamps carry no zone designator. */
        size_t sl = strlen(started);
        ps_buf tsb = PS_BUF_INIT;
        ps_buf_append(&tsb, started, sl && started[sl - 1] == 'Z' ? sl - 1 : sl);
        xml(&b, tsb.data ? tsb.data : "");
        ps_buf_free(&tsb);
        ps_buf_puts(&b, "\">\n");
        for (size_t i = 0; checks && checks->type == PS_JSON_ARRAY && i < checks->count; i++) {
            const ps_json *ck = checks->items[i];
            const char *status = ps_report_str(ck, "status", "not_run");
            const char *message = ps_report_str(ck, "message", "");
            ps_buf_puts(&b, "    <testcase classname=\"petstore-conform.");
            xml(&b, ps_report_str(suite, "name", "?"));
            ps_buf_puts(&b, "\" name=\"");
            xml(&b, ps_report_str(ck, "id", "?"));
            ps_buf_printf(&b, "\" time=\"%.4f\">\n", ps_json_get_number(ck, "duration_ms", 0) / 1000.0);
            ps_buf text = PS_BUF_INIT;
            if (strcmp(status, "failed") == 0 || strcmp(status, "warning") == 0) {
                ps_buf_printf(&text, "%s\nlevel: %s\nclause: %s\ncheck: %s\n", message, ps_report_str(ck, "level", "?"),
                              ps_report_str(ck, "clause", ""), ps_report_str(ck, "title", ""));
                ps_report_conform_evidence_text(ck, "", &text);
            }
            if (strcmp(status, "failed") == 0) {
                ps_buf_puts(&b, "      <failure message=\"");
                xml(&b, message);
                ps_buf_puts(&b, "\" type=\"");
                xml(&b, ps_report_str(ck, "level", "spec"));
                ps_buf_puts(&b, "\">");
                xml(&b, text.data ? text.data : "");
                ps_buf_puts(&b, "</failure>\n");
            } else if (strcmp(status, "warning") == 0) {
                ps_buf_puts(&b, "      <system-out>WARNING (not failing: ");
                xml(&b, ps_report_str(ck, "level", "?"));
                ps_buf_puts(&b, " level) ");
                xml(&b, text.data ? text.data : "");
                ps_buf_puts(&b, "</system-out>\n");
            } else if (strcmp(status, "not_run") == 0) {
                ps_buf_puts(&b, "      <skipped message=\"");
                xml(&b, message);
                ps_buf_puts(&b, "\"/>\n");
            }
            ps_buf_free(&text);
            ps_buf_puts(&b, "    </testcase>\n");
        }
        ps_buf_puts(&b, "  </testsuite>\n");
    }
    ps_buf_puts(&b, "</testsuites>\n");
    int rc = 0;
    if (fwrite(b.data, 1, b.len, out) != b.len || fflush(out) != 0) rc = ps_error_set(err, "JUnit report: write failed");
    ps_buf_free(&b);
    return rc;
}
