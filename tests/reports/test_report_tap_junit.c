/* test_report_tap_junit.c - what the TAP and JUnit writers must say so that
 * CI readers read a run right: TAP version 13, no character in a YAML block
 * or test line that can end a line, checks that apply but could not be
 * tested as "not ok" / <error>, not-applicable ones as skips, the run's facts
 * as JUnit <properties> with credentials out of the URL. (The real readers
 * run in the peer tests: tests/reports/peers/.) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "harness.h"
#include "reports/report_junit.h"
#include "reports/report_tap.h"
#include "reports/report_url.h"

/* An incomplete run: one pass, one check that applies but was not tested
 * (its reason holds U+2028, U+2029, a C1 NEL, an ESC and U+FFFF), one not
 * applicable, one failed whose message holds the same characters. The base
 * URL carries a user's password and a token in the query. */
static const char incomplete_doc[] =
    "{\"tool\":\"petstore-conform\",\"version\":\"0.1.0\",\"format\":1,"
    "\"target\":{\"base_url\":\"https://bob:s3cret@h.example/v1?token=abc&x=1\",\"plan\":\"pro\","
    "\"limit_plan\":\"free\",\"strict\":false},"
    "\"started_at\":\"2026-11-21T05:00:00Z\",\"duration_s\":2.5,"
    "\"summary\":{\"total\":4,\"passed\":1,\"failed\":1,\"warnings\":0,\"not_run\":2,\"not_"
    "applicable\":1},"
    "\"verdict\":\"fail\",\"exit_code\":1,\"aborted\":null,"
    "\"incomplete\":\"1 of 4 selected checks could not be tested: raise --max-wait\","
    "\"suites\":[{\"name\":\"limit429\",\"checks\":["
    "{\"id\":\"limit429.status\",\"title\":\"429\",\"level\":\"spec\",\"clause\":\"spec "
    "7\",\"status\":\"passed\"},"
    "{\"id\":\"limit429.recovers\",\"title\":\"recovers\",\"level\":\"spec\",\"clause\":\"spec 7\","
    "\"status\":\"not_run\",\"applicable\":true,"
    "\"message\":\"waited\\u2028too\\u2029long\\u0085now\\u001b[31m \\uffff # here\"},"
    "{\"id\":\"ratelimit.limit-matches-plan\",\"title\":\"plan\",\"level\":\"spec\",\"clause\":"
    "\"spec 7\","
    "\"status\":\"not_run\",\"applicable\":false,\"message\":\"plan unknown\"},"
    "{\"id\":\"schema.list-is-array\",\"title\":\"array\",\"level\":\"spec\",\"clause\":\"spec 4\","
    "\"status\":\"failed\",\"message\":\"body said \\u2028 after\","
    "\"evidence\":{\"response\":{\"status\":200,\"headers\":[],\"body\":\"x\\u2029y\\u0080z\"},"
    "\"curl\":\"curl 'https://h.example/v1/categories'\"}}]}]}";

/* Aborted after its last check ran: nothing is left untested, yet the run
 * must not read green. */
static const char aborted_doc[] =
    "{\"tool\":\"petstore-conform\",\"version\":\"0.1.0\",\"target\":{\"base_url\":\"http://h/"
    "v1\"},"
    "\"summary\":{\"total\":1,\"passed\":1},\"verdict\":\"aborted\",\"exit_code\":3,"
    "\"aborted\":\"interrupted by a signal\",\"incomplete\":null,"
    "\"suites\":[{\"name\":\"schema\",\"checks\":[{\"id\":\"schema.a\",\"title\":\"a\",\"status\":"
    "\"passed\"}]}]}";

static char *render(bool tap, const char *text)
{
    ps_error err;
    ps_json *doc = ps_json_parse(text, strlen(text), NULL, &err);
    CHECK(doc != NULL);
    if (!doc) return strdup("");
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    CHECK_INT(tap ? ps_report_tap_conform(doc, f, &err) : ps_report_junit_conform(doc, f, &err), 0);
    fclose(f);
    ps_json_free(doc);
    return out;
}

static int count_of(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* No byte sequence that some reader takes as a line end, other than '\n'. */
static void no_line_breakers(const char *text)
{
    CHECK(strstr(text, "\r") == NULL);
    CHECK(strstr(text, "\xe2\x80\xa8") == NULL); /* U+2028 */
    CHECK(strstr(text, "\xe2\x80\xa9") == NULL); /* U+2029 */
    CHECK(strstr(text, "\xc2\x85") == NULL);     /* NEL */
    CHECK(strstr(text, "\033") == NULL);
    CHECK(strstr(text, "\v") == NULL && strstr(text, "\f") == NULL);
}

static void tap_is_version_13(void)
{
    char *t = render(true, incomplete_doc);
    CHECK(strncmp(t, "TAP version 13\n1..4\n", 20) == 0);
    free(t);
}

static void tap_untested_is_not_ok_with_reason(void)
{
    char *t = render(true, incomplete_doc);
    CHECK(strstr(t, "ok 1 - limit429.status: 429\n") != NULL);
    CHECK(strstr(t, "not ok 2 - limit429.recovers: recovers (could not be tested: waited too long "
                    "now [31m \xef\xbf\xbf \\# here)\n"
                    "  ---\n") != NULL);
    CHECK(strstr(t, "  severity: not_tested\n") != NULL);
    CHECK(strstr(t, "ok 3 - ratelimit.limit-matches-plan: plan # SKIP plan unknown\n") != NULL);
    CHECK(strstr(t, "not ok 4 - schema.list-is-array: array\n") != NULL);
    CHECK(
        strstr(t, "# incomplete: 1 of 4 selected checks could not be tested: raise --max-wait\n") !=
        NULL);
    CHECK(strstr(t, "# verdict: fail, exit code 1\n") != NULL);
    CHECK(strstr(t, "Bail out!") == NULL);
    free(t);
}

static void tap_yaml_escapes_every_line_breaker(void)
{
    char *t = render(true, incomplete_doc);
    no_line_breakers(t);
    CHECK(strstr(t, "  message: \"waited\\u2028too\\u2029long\\u0085now\\u001b[31m") != NULL);
    CHECK(strstr(t, "  message: \"body said \\u2028 after\"\n") != NULL);
    CHECK(strstr(t, "x\\u2029y\\u0080z") != NULL);
    /* the credentials in the base URL stay out of the comment line */
    CHECK(
        strstr(t, "# petstore-conform 0.1.0 against https://***@h.example/v1?token=***&x=***\n") !=
        NULL);
    CHECK(strstr(t, "s3cret") == NULL && strstr(t, "abc") == NULL);
    free(t);
}

static void tap_aborted_bails_out(void)
{
    char *t = render(true, aborted_doc);
    CHECK(strstr(t, "\nBail out! interrupted by a signal\n") != NULL);
    free(t);
}

static void junit_untested_is_an_error_and_counts_add_up(void)
{
    char *x = render(false, incomplete_doc);
    CHECK(strstr(x, "<testsuites name=\"petstore-conform\" tests=\"4\" failures=\"1\" errors=\"1\" "
                    "time=\"2.500\">") != NULL);
    CHECK(
        strstr(
            x,
            "<testsuite name=\"limit429\" tests=\"4\" failures=\"1\" errors=\"1\" skipped=\"1\"") !=
        NULL);
    CHECK(strstr(x, "<error message=\"could not be tested: waited") != NULL);
    CHECK(strstr(x, "type=\"not_tested\">") != NULL);
    CHECK(strstr(x, "<skipped message=\"plan unknown\"/>") != NULL);
    CHECK_INT(count_of(x, "<error "), 1);
    CHECK_INT(count_of(x, "<skipped "), 1);
    /* XML 1.0 forbids U+FFFF and ESC: replaced */
    CHECK(strstr(x, "\xef\xbf\xbf") == NULL);
    CHECK(strstr(x, "\033") == NULL);
    free(x);
}

static void junit_properties_name_the_run_without_credentials(void)
{
    char *x = render(false, incomplete_doc);
    CHECK(strstr(x, "<property name=\"base_url\" "
                    "value=\"https://***@h.example/v1?token=***&amp;x=***\"/>") != NULL);
    CHECK(strstr(x, "<property name=\"version\" value=\"0.1.0\"/>") != NULL);
    CHECK(strstr(x, "<property name=\"plan\" value=\"pro\"/>") != NULL);
    CHECK(strstr(x, "<property name=\"verdict\" value=\"fail\"/>") != NULL);
    CHECK(strstr(x, "<property name=\"exit_code\" value=\"1\"/>") != NULL);
    CHECK(strstr(x, "<property name=\"incomplete\" value=\"1 of 4") != NULL);
    CHECK(strstr(x, "s3cret") == NULL && strstr(x, "abc") == NULL);
    /* the schema has no 'skipped' on <testsuites> */
    const char *root = strstr(x, "<testsuites ");
    char *root_tag = root ? strndup(root, strcspn(root, ">")) : NULL;
    CHECK(root_tag && strstr(root_tag, "skipped") == NULL);
    free(root_tag);
    free(x);
}

static void junit_aborted_run_is_an_error_even_with_nothing_untested(void)
{
    char *x = render(false, aborted_doc);
    CHECK(strstr(x,
                 "<testsuites name=\"petstore-conform\" tests=\"2\" failures=\"0\" errors=\"1\"") !=
          NULL);
    CHECK(strstr(x, "<testcase classname=\"petstore-conform.run\" name=\"run\"") != NULL);
    CHECK(strstr(x, "<error message=\"aborted: interrupted by a signal\" type=\"aborted\"/>") !=
          NULL);
    CHECK(strstr(x, "<property name=\"aborted\" value=\"interrupted by a signal\"/>") != NULL);
    free(x);
}

static void url_redaction(void)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1"},
        {"https://u:p@h/v1", "https://***@h/v1"},
        {"https://u@p:x@h:1/v1/", "https://***@h:1/v1/"},
        {"http://h/v1?api_key=k&flag", "http://h/v1?api_key=***&***"},
        {"http://h/v1#secret", "http://h/v1#***"},
        {"http://h/p@th/v1", "http://h/p@th/v1"}, /* an '@' in the path is no userinfo */
        {"h/v1?", "h/v1?"},
        {"", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ps_buf b = PS_BUF_INIT;
        ps_report_url_redacted(&b, cases[i].in);
        CHECK_STR(b.data ? b.data : "", cases[i].out);
        ps_buf_free(&b);
    }
}

int main(void)
{
    RUN(tap_is_version_13);
    RUN(tap_untested_is_not_ok_with_reason);
    RUN(tap_yaml_escapes_every_line_breaker);
    RUN(tap_aborted_bails_out);
    RUN(junit_untested_is_an_error_and_counts_add_up);
    RUN(junit_properties_name_the_run_without_credentials);
    RUN(junit_aborted_run_is_an_error_even_with_nothing_untested);
    RUN(url_redaction);
    return TEST_EXIT();
}
