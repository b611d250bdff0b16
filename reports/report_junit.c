/* report_junit.c - JUnit XML writer for conformance results. Valid against
 * the Jenkins xunit plugin's junit-10.xsd (tests/reports/junit-10.xsd). */
#include "reports/report_junit.h"

#include <string.h>

#include "core/buf.h"
#include "reports/report_conform_text.h"
#include "reports/report_url.h"

/* XML text/attribute escaping. Characters XML 1.0 forbids (C0 controls but
 * tab, newline, carriage return; U+FFFE, U+FFFF) are replaced so the file
 * always parses. */
static void xml(ps_buf *b, const char *s)
{
    const unsigned char *u = (const unsigned char *)(s ? s : "");
    for (size_t i = 0; u[i]; i++) {
        unsigned char c = u[i];
        switch (c) {
        case '&':
            ps_buf_puts(b, "&amp;");
            break;
        case '<':
            ps_buf_puts(b, "&lt;");
            break;
        case '>':
            ps_buf_puts(b, "&gt;");
            break;
        case '"':
            ps_buf_puts(b, "&quot;");
            break;
        case '\'':
            ps_buf_puts(b, "&apos;");
            break;
        default:
            if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) {
                ps_buf_putc(b, '.');
            } else if (c == 0xef && u[i + 1] == 0xbf && (u[i + 2] == 0xbe || u[i + 2] == 0xbf)) {
                ps_buf_puts(b, "\xef\xbf\xbd"); /* U+FFFD */
                i += 2;
            } else {
                ps_buf_putc(b, (char)c);
            }
        }
    }
}

typedef struct suite_counts {
    size_t tests, failures, errors, skipped;
} suite_counts;

static suite_counts count_checks(const ps_json *checks)
{
    suite_counts n = {0, 0, 0, 0};
    for (size_t i = 0; checks && checks->type == PS_JSON_ARRAY && i < checks->count; i++) {
        const ps_json *ck = checks->items[i];
        const char *status = ps_json_get_string(ck, "status", "not_run");
        n.tests++;
        if (strcmp(status, "failed") == 0)
            n.failures++;
        else if (ps_report_check_untested(ck))
            n.errors++;
        else if (strcmp(status, "not_run") == 0)
            n.skipped++;
    }
    return n;
}

static void property(ps_buf *b, const char *name, const char *value)
{
    ps_buf_puts(b, "      <property name=\"");
    xml(b, name);
    ps_buf_puts(b, "\" value=\"");
    xml(b, value);
    ps_buf_puts(b, "\"/>\n");
}

/* The run's facts, repeated in every <testsuite> (the schema allows
 * <properties> nowhere else, and CI systems show them per suite). */
static void properties(ps_buf *b, const ps_json *doc)
{
    const ps_json *target = ps_json_get(doc, "target");
    ps_buf text = PS_BUF_INIT;
    ps_buf_puts(b, "    <properties>\n");
    property(b, "tool", ps_json_get_string(doc, "tool", "petstore-conform"));
    property(b, "version", ps_json_get_string(doc, "version", "?"));
    ps_report_url_redacted(&text, ps_json_get_string(target, "base_url", "?"));
    property(b, "base_url", text.data ? text.data : "");
    property(b, "plan", ps_json_get_string(target, "plan", "?"));
    property(b, "limit_plan", ps_json_get_string(target, "limit_plan", "?"));
    const ps_json *strict = ps_json_get(target, "strict");
    property(b, "strict",
             strict && strict->type == PS_JSON_BOOL && strict->boolean ? "true" : "false");
    property(b, "verdict", ps_json_get_string(doc, "verdict", "?"));
    ps_buf_reset(&text);
    ps_buf_printf(&text, "%lld", (long long)ps_json_get_int(doc, "exit_code", -1));
    property(b, "exit_code", text.data);
    const char *incomplete = ps_json_get_string(doc, "incomplete", NULL);
    if (incomplete) property(b, "incomplete", incomplete);
    const char *aborted = ps_json_get_string(doc, "aborted", NULL);
    if (aborted) property(b, "aborted", aborted);
    ps_buf_puts(b, "    </properties>\n");
    ps_buf_free(&text);
}

static void suite_start(ps_buf *b, const ps_json *doc, const char *name, suite_counts n,
                        double seconds)
{
    ps_buf_puts(b, "  <testsuite name=\"");
    xml(b, name);
    ps_buf_printf(b,
                  "\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\" time=\"%.3f\" "
                  "timestamp=\"",
                  n.tests, n.failures, n.errors, n.skipped, seconds);
    const char *started = ps_json_get_string(doc, "started_at", "");
    /* JUnit timestamps carry no zone designator. */
    size_t sl = strlen(started);
    ps_buf tsb = PS_BUF_INIT;
    ps_buf_append(&tsb, started, sl && started[sl - 1] == 'Z' ? sl - 1 : sl);
    xml(b, tsb.data ? tsb.data : "");
    ps_buf_free(&tsb);
    ps_buf_puts(b, "\">\n");
    properties(b, doc);
}

static void testcase(ps_buf *b, const char *suite_name, const ps_json *ck)
{
    const char *status = ps_json_get_string(ck, "status", "not_run");
    const char *message = ps_json_get_string(ck, "message", "");
    ps_buf_puts(b, "    <testcase classname=\"petstore-conform.");
    xml(b, suite_name);
    ps_buf_puts(b, "\" name=\"");
    xml(b, ps_json_get_string(ck, "id", "?"));
    ps_buf_printf(b, "\" time=\"%.4f\">\n", ps_json_get_number(ck, "duration_ms", 0) / 1000.0);
    ps_buf text = PS_BUF_INIT;
    if (strcmp(status, "failed") == 0 || strcmp(status, "warning") == 0) {
        ps_buf_printf(&text, "%s\nlevel: %s\nclause: %s\ncheck: %s\n", message,
                      ps_json_get_string(ck, "level", "?"), ps_json_get_string(ck, "clause", ""),
                      ps_json_get_string(ck, "title", ""));
        ps_report_conform_evidence_text(ck, "", &text);
    }
    if (strcmp(status, "failed") == 0) {
        ps_buf_puts(b, "      <failure message=\"");
        xml(b, message);
        ps_buf_puts(b, "\" type=\"");
        xml(b, ps_json_get_string(ck, "level", "spec"));
        ps_buf_puts(b, "\">");
        xml(b, text.data ? text.data : "");
        ps_buf_puts(b, "</failure>\n");
    } else if (strcmp(status, "warning") == 0) {
        ps_buf_puts(b, "      <system-out>WARNING (not failing: ");
        xml(b, ps_json_get_string(ck, "level", "?"));
        ps_buf_puts(b, " level) ");
        xml(b, text.data ? text.data : "");
        ps_buf_puts(b, "</system-out>\n");
    } else if (ps_report_check_untested(ck)) { /* an <error>: no CI system shows the run green */
        ps_buf_puts(b, "      <error message=\"could not be tested: ");
        xml(b, message);
        ps_buf_puts(b, "\" type=\"not_tested\">");
        xml(b, ps_json_get_string(ck, "title", ""));
        ps_buf_puts(b, "\ncould not be tested: ");
        xml(b, message);
        ps_buf_puts(b, "</error>\n");
    } else if (strcmp(status, "not_run") == 0) {
        ps_buf_puts(b, "      <skipped message=\"");
        xml(b, message);
        ps_buf_puts(b, "\"/>\n");
    }
    ps_buf_free(&text);
    ps_buf_puts(b, "    </testcase>\n");
}

int ps_report_junit_conform(const ps_json *doc, FILE *out, ps_error *err)
{
    if (!doc || doc->type != PS_JSON_OBJECT)
        return ps_error_set(err, "JUnit report: the document is not a JSON object");
    ps_buf b = PS_BUF_INIT;
    const ps_json *suites = ps_json_get(doc, "suites");
    size_t nsuites = suites && suites->type == PS_JSON_ARRAY ? suites->count : 0;
    suite_counts all = {0, 0, 0, 0};
    for (size_t s = 0; s < nsuites; s++) {
        suite_counts n = count_checks(ps_json_get(suites->items[s], "checks"));
        all.tests += n.tests, all.failures += n.failures, all.errors += n.errors,
            all.skipped += n.skipped;
    }
    /* An aborted or incomplete run with no check left untested (it stopped
     * after the last one) still must not read green: one error for the run. */
    const char *verdict = ps_json_get_string(doc, "verdict", "");
    const char *why = ps_json_get_string(doc, "aborted", NULL);
    if (!why) why = ps_json_get_string(doc, "incomplete", NULL);
    bool run_error =
        all.errors == 0 && (strcmp(verdict, "aborted") == 0 || strcmp(verdict, "incomplete") == 0);

    ps_buf_puts(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    /* no "skipped" here: junit-10.xsd rejects it on <testsuites> */
    ps_buf_printf(&b,
                  "<testsuites name=\"petstore-conform\" tests=\"%zu\" failures=\"%zu\" "
                  "errors=\"%zu\" time=\"%.3f\">\n",
                  all.tests + run_error, all.failures, all.errors + run_error,
                  ps_json_get_number(doc, "duration_s", 0));
    for (size_t s = 0; s < nsuites; s++) {
        const ps_json *suite = suites->items[s];
        const ps_json *checks = ps_json_get(suite, "checks");
        const char *name = ps_json_get_string(suite, "name", "?");
        double ms = 0;
        for (size_t i = 0; checks && checks->type == PS_JSON_ARRAY && i < checks->count; i++)
            ms += ps_json_get_number(checks->items[i], "duration_ms", 0);
        suite_start(&b, doc, name, count_checks(checks), ms / 1000.0);
        for (size_t i = 0; checks && checks->type == PS_JSON_ARRAY && i < checks->count; i++)
            testcase(&b, name, checks->items[i]);
        ps_buf_puts(&b, "  </testsuite>\n");
    }
    if (run_error) {
        suite_counts one = {1, 0, 1, 0};
        suite_start(&b, doc, "run", one, 0);
        ps_buf_puts(&b,
                    "    <testcase classname=\"petstore-conform.run\" name=\"run\" time=\"0\">\n"
                    "      <error message=\"");
        xml(&b, verdict);
        ps_buf_puts(&b, ": ");
        xml(&b, why ? why : "the run did not finish");
        ps_buf_puts(&b, "\" type=\"");
        xml(&b, verdict);
        ps_buf_puts(&b, "\"/>\n    </testcase>\n  </testsuite>\n");
    }
    ps_buf_puts(&b, "</testsuites>\n");
    int rc = 0;
    if (fwrite(b.data, 1, b.len, out) != b.len || fflush(out) != 0)
        rc = ps_error_set(err, "JUnit report: write failed");
    ps_buf_free(&b);
    return rc;
}
