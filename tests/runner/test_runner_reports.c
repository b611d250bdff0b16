/* test_runner_reports.c - the console, TAP 13, JUnit and HTML writers
 * render a conformance document faithfully: counts, statuses, evidence, and
 * hostile server bytes (control characters, markup) neutralised. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "harness.h"
#include "reports/html_report.h"
#include "reports/report_console.h"
#include "reports/report_junit.h"
#include "reports/report_tap.h"

/* A failed check whose reply carries an escape sequence, markup and a
 * '#' in its message; a warning; a check not run; a pass. */
static const char doc_text[] =
    "{\"tool\":\"petstore-conform\",\"version\":\"0.1.0\",\"format\":1,"
    "\"target\":{\"base_url\":\"http://h/"
    "v1\",\"plan\":\"pro\",\"limit_plan\":\"free\",\"strict\":false},"
    "\"started_at\":\"2026-11-21T05:00:00Z\",\"duration_s\":1.5,"
    "\"summary\":{\"total\":4,\"passed\":1,\"failed\":1,\"warnings\":1,\"not_run\":1},"
    "\"verdict\":\"fail\",\"exit_code\":1,\"aborted\":null,"
    "\"suites\":[{\"name\":\"schema\",\"checks\":["
    "{\"id\":\"schema.list-is-array\",\"title\":\"list is an "
    "array\",\"level\":\"spec\",\"clause\":\"spec 4\","
    "\"tags\":[\"schema\"],\"status\":\"failed\",\"duration_ms\":2.0,\"message\":\"got an object # "
    "not <array>\","
    "\"evidence\":{\"request\":{\"method\":\"GET\",\"url\":\"http://h/v1/categories\","
    "\"headers\":[[\"Authorization\",\"Bearer ***\"]],\"body\":\"\"},"
    "\"response\":{\"status\":200,\"headers\":[[\"Content-Type\",\"application/json\"]],"
    "\"body\":\"{\\\"evil\\\":\\\"\\u001b[31m</failure>&\\\"}\"},"
    "\"expected\":\"a JSON array\",\"curl\":\"curl -i -H \\\"Authorization: Bearer "
    "${PETSTORE_API_KEY}\\\" 'http://h/v1/categories'\"}},"
    "{\"id\":\"schema.content-type-json\",\"title\":\"json\",\"level\":\"spec\",\"clause\":\"spec "
    "4\","
    "\"tags\":[\"schema\"],\"status\":\"passed\",\"duration_ms\":1.0}]},"
    "{\"name\":\"auth\",\"checks\":["
    "{\"id\":\"auth.www-authenticate\",\"title\":\"challenge\",\"level\":\"http\",\"clause\":\"RFC "
    "9110\","
    "\"tags\":[\"auth\"],\"status\":\"warning\",\"duration_ms\":1.0,\"message\":\"no header\"},"
    "{\"id\":\"auth.bearer-error-attribute\",\"title\":\"error "
    "attr\",\"level\":\"advice\",\"clause\":\"RFC 6750\","
    "\"tags\":[\"auth\"],\"status\":\"not_run\",\"duration_ms\":0,\"message\":\"no 401 seen\"}]}]}";

static ps_json *doc; /* the fixture, parsed once in main */

static size_t count_of(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

static char *render(int which, const ps_json *d, bool color)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    ps_error err;
    ps_console_options o = {color, true};
    int rc = which == 0   ? ps_report_console_conform(d, f, &o, &err)
             : which == 1 ? ps_report_tap_conform(d, f, &err)
             : which == 2 ? ps_report_junit_conform(d, f, &err)
                          : ps_report_html_conform(d, f, &err);
    CHECK_INT(rc, 0);
    fclose(f);
    return text;
}

static void tap_points_and_diagnostics(void)
{
    char *t = render(1, doc, false);
    CHECK(strncmp(t, "TAP version 13\n1..4\n", 20) == 0);
    CHECK(strstr(t, "not ok 1 - schema.list-is-array: list is an array\n  ---\n") != NULL);
    CHECK(strstr(t, "  message: \"got an object # not \\u003carray\\u003e\"") != NULL);
    CHECK(strstr(t, "ok 2 - schema.content-type-json") != NULL);
    CHECK(strstr(t, "ok 3 - auth.www-authenticate: challenge\n  ---\n") != NULL);
    CHECK(strstr(t, "severity: warning") != NULL);
    CHECK(strstr(t, "ok 4 - auth.bearer-error-attribute: error attr # SKIP no 401 seen\n") != NULL);
    CHECK(strstr(t, "\033") == NULL);
    free(t);
}

static void junit_structure_and_escaping(void)
{
    char *x = render(2, doc, false);
    CHECK(strstr(x, "<testsuites name=\"petstore-conform\" tests=\"4\" failures=\"1\"") != NULL);
    CHECK(strstr(x, "<testsuite name=\"schema\" tests=\"2\" failures=\"1\"") != NULL);
    CHECK(
        strstr(x,
               "<testsuite name=\"auth\" tests=\"2\" failures=\"0\" errors=\"0\" skipped=\"1\"") !=
        NULL);
    CHECK(strstr(x, "<failure message=\"got an object # not &lt;array&gt;\" type=\"spec\">") !=
          NULL);
    CHECK(strstr(x, "&lt;/failure&gt;&amp;") != NULL); /* the server's markup stays text */
    CHECK(
        strstr(x, "reproduce: curl -i -H &quot;Authorization: Bearer ${PETSTORE_API_KEY}&quot;") !=
        NULL);
    CHECK(strstr(x, "<skipped message=\"no 401 seen\"/>") != NULL);
    CHECK(strstr(x, "<system-out>WARNING") != NULL);
    CHECK(strstr(x, "\033") == NULL);
    /* exactly one closing tag per opened testcase */
    int open = 0, close = 0;
    for (const char *p = x; (p = strstr(p, "<testcase ")); p++)
        open++;
    for (const char *p = x; (p = strstr(p, "</testcase>")); p++)
        close++;
    CHECK_INT(open, 4);
    CHECK_INT(close, 4);
    free(x);
}

static void console_colour_only_when_asked(void)
{
    char *plain = render(0, doc, false);
    CHECK(strstr(plain, "\033") == NULL); /* the server's ESC byte is neutralised too */
    CHECK(strstr(plain, "FAIL schema.list-is-array") != NULL);
    CHECK(strstr(plain, "WARN auth.www-authenticate") != NULL);
    CHECK(strstr(plain, "SKIP auth.bearer-error-attribute") != NULL);
    CHECK(strstr(plain, "reproduce: curl -i") != NULL);
    /* "1 warning" (singular); no "not applicable" part when there is none */
    CHECK(strstr(plain, "4 checks: 1 passed, 1 failed, 1 warning, 1 not run in ") != NULL);
    char *colour = render(0, doc, true);
    CHECK(strstr(colour, "\033[31mFAIL") != NULL);
    CHECK(strstr(colour, "\033[31m</failure>") == NULL);
    free(plain);
    free(colour);
}

/* An incomplete run: the console says so in a line of its own (server
 * bytes in the reason neutralised), and a not-applicable check shows N/A. */
static void console_incomplete_and_not_applicable(void)
{
    static const char text[] = "{\"summary\":{\"total\":2,\"passed\":0,\"failed\":0,\"warnings\":0,"
                               "\"not_run\":1,\"not_applicable\":1},"
                               "\"verdict\":\"incomplete\",\"exit_code\":3,\"aborted\":null,"
                               "\"incomplete\":\"1 of 2 selected checks could not be tested: "
                               "\\u001b[31mwait; raise --max-wait\","
                               "\"suites\":[{\"name\":\"ratelimit\",\"checks\":["
                               "{\"id\":\"ratelimit.limit-matches-plan\",\"title\":\"t\","
                               "\"status\":\"not_run\",\"applicable\":false,"
                               "\"message\":\"plan unknown\"},"
                               "{\"id\":\"ratelimit.reset-stable\",\"title\":\"t\",\"status\":"
                               "\"not_run\",\"applicable\":true,"
                               "\"message\":\"waited too long\"}]}]}";
    ps_error err;
    ps_json *d = ps_json_parse(text, strlen(text), NULL, &err);
    CHECK(d != NULL);
    if (!d) return;
    char *plain = render(0, d, false);
    CHECK(strstr(plain, "N/A  ratelimit.limit-matches-plan") != NULL);
    CHECK(strstr(plain, "SKIP ratelimit.reset-stable") != NULL);
    CHECK(
        strstr(plain, "-> incomplete\nincomplete: 1 of 2 selected checks could not be tested: ") !=
        NULL);
    CHECK(strstr(plain, "raise --max-wait\n") != NULL);
    CHECK(strstr(plain, "\033") == NULL);
    /* each check counted once: the not-applicable one is not "not run" */
    CHECK(strstr(plain,
                 "2 checks: 0 passed, 0 failed, 0 warnings, 1 not run, 1 not applicable in ") !=
          NULL);
    free(plain);
    /* the HTML page counts and labels them apart too */
    char *html = render(3, d, false);
    CHECK(strstr(html, "data-count=\"not_run\"><b>1</b>") != NULL);
    CHECK(strstr(html, "data-count=\"not_applicable\"><b>1</b>") != NULL);
    CHECK_INT(count_of(html, "data-status=\"not_applicable\""), 1);
    CHECK_INT(count_of(html, "data-status=\"not_run\""), 1);
    CHECK(strstr(html, "0 warnings, 1 not run, 1 not applicable</small>") != NULL);
    free(html);
    /* the sample document (a finished run) has no such line */
    plain = render(0, doc, false);
    CHECK(strstr(plain, "incomplete") == NULL);
    free(plain);
    ps_json_free(d);
}

/* The HTML page, like every other format, never holds a control character
 * from the server raw (it did: 18 ESC bytes from one hostile run): ESC and
 * BEL show as their Control Pictures, C1 NEL as U+FFFD, U+2028/U+2029 as
 * character references; markup stays text. */
static void html_neutralises_control_characters(void)
{
    static const char text[] =
        "{\"tool\":\"petstore-conform\",\"summary\":{\"total\":1,\"passed\":0,\"failed\":1},"
        "\"verdict\":\"fail\",\"exit_code\":1,\"aborted\":\"gone \\u001b[2J\","
        "\"target\":{\"base_url\":\"http://h/v1\"},"
        "\"suites\":[{\"name\":\"errors\",\"checks\":["
        "{\"id\":\"errors.shape\",\"title\":\"t\",\"status\":\"failed\","
        "\"message\":\"said \\u001b]0;pwned\\u0007 \\u0085 \\u2028 \\u2029 \\u007f end\","
        "\"evidence\":{\"request\":{\"method\":\"GET\",\"url\":\"http://h/v1/"
        "categories\",\"headers\":[],\"body\":\"\"},"
        "\"response\":{\"status\":400,\"headers\":[[\"X-Evil\",\"\\u001b[31mred\"]],"
        "\"body\":\"\\u001b[31m</pre><script>\"},\"expected\":\"\",\"curl\":\"curl\"}}]}]}";
    ps_error err;
    ps_json *d = ps_json_parse(text, strlen(text), NULL, &err);
    CHECK(d != NULL);
    if (!d) return;
    char *pages[2] = {render(3, d, false), render(3, doc, false)};
    for (int i = 0; i < 2; i++) {
        for (const char *p = pages[i]; *p; p++) {
            unsigned char ch = (unsigned char)*p;
            if ((ch < 0x20 && ch != '\n' && ch != '\t' && ch != '\r') || ch == 0x7f) {
                CHECK_INT(ch, 0); /* a raw control character on the page */
                break;
            }
        }
        CHECK(strstr(pages[i], "\xC2\x85") == NULL);
        CHECK(strstr(pages[i], "\xE2\x80\xA8") == NULL && strstr(pages[i], "\xE2\x80\xA9") == NULL);
    }
    CHECK(strstr(pages[0], "said \xE2\x90\x9B]0;pwned\xE2\x90\x87 \xEF\xBF\xBD &#x2028; &#x2029; "
                           "\xE2\x90\xA1 end") != NULL);
    CHECK(strstr(pages[0], "\xE2\x90\x9B[31m&lt;/pre&gt;&lt;script&gt;") != NULL);
    CHECK(strstr(pages[1], "\xE2\x90\x9B[31m&lt;/failure&gt;&amp;") != NULL);
    free(pages[0]);
    free(pages[1]);
    ps_json_free(d);
}

static void write_failures_and_bad_documents(void)
{
    ps_error err;
    FILE *full = fopen("/dev/full", "w");
    if (full) {
        setvbuf(full, NULL, _IONBF, 0);
        CHECK_INT(ps_report_tap_conform(doc, full, &err), -1);
        CHECK_INT(ps_report_junit_conform(doc, full, &err), -1);
        CHECK(strstr(err.message, "write failed") != NULL);
        fclose(full);
    }
    ps_json *arr = ps_json_parse("[1]", 3, NULL, NULL);
    CHECK_INT(ps_report_tap_conform(arr, stdout, &err), -1);
    CHECK_INT(ps_report_junit_conform(NULL, stdout, &err), -1);
    CHECK_INT(ps_report_console_conform(arr, stdout, NULL, &err), -1);
    ps_json_free(arr);
    /* an empty object renders (0 checks) rather than crashing */
    ps_json *empty = ps_json_parse("{}", 2, NULL, NULL);
    char *t = render(1, empty, false);
    CHECK(strncmp(t, "TAP version 13\n1..0\n", 20) == 0);
    free(t);
    ps_json_free(empty);
}

int main(void)
{
    ps_error err;
    doc = ps_json_parse(doc_text, strlen(doc_text), NULL, &err);
    if (!doc) {
        fprintf(stderr, "fixture does not parse: %s\n", err.message);
        return 1;
    }
    RUN(tap_points_and_diagnostics);
    RUN(junit_structure_and_escaping);
    RUN(console_colour_only_when_asked);
    RUN(console_incomplete_and_not_applicable);
    RUN(html_neutralises_control_characters);
    RUN(write_failures_and_bad_documents);
    ps_json_free(doc);
    return TEST_EXIT();
}
