/* test_html_conform_banner.c - the conformance HTML report of a run that was
 * aborted or incomplete says why, prominently (a banner before the summary),
 * with the reason from the JSON escaped; a finished run has no banner; a
 * not-applicable check is labelled so. Run under ASan in the sanitizer tree. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "harness.h"
#include "reports/html_report.h"

/* A document as petstore-conform writes it (docs/report-json.md), with the
 * two reasons given; they quote server bytes, so they carry markup here. */
static char *render(const char *aborted, const char *incomplete, const char *verdict, int exit_code)
{
    char *text = NULL;
    size_t tlen = 0;
    FILE *t = open_memstream(&text, &tlen);
    fprintf(
        t,
        "{\"tool\":\"petstore-conform\",\"version\":\"0.1.0\",\"format\":1,"
        "\"target\":{\"base_url\":\"http://127.0.0.1:1/"
        "v1\",\"plan\":\"pro\",\"limit_plan\":\"pro\","
        "\"strict\":false},\"started_at\":\"2026-11-21T05:00:00Z\",\"duration_s\":0.5,"
        "\"summary\":{\"total\":2,\"passed\":1,\"failed\":0,\"warnings\":0,\"not_run\":1,\"not_"
        "applicable\":0},"
        "\"verdict\":\"%s\",\"exit_code\":%d,\"aborted\":%s,\"incomplete\":%s,"
        "\"suites\":[{\"name\":\"ratelimit\",\"checks\":["
        "{\"id\":\"ratelimit.headers-present\",\"title\":\"t\",\"level\":\"spec\",\"clause\":\"c\","
        "\"tags\":[\"ratelimit\"],\"status\":\"passed\",\"duration_ms\":1},"
        "{\"id\":\"ratelimit.limit-matches-plan\",\"title\":\"t\",\"level\":\"spec\",\"clause\":"
        "\"c\","
        "\"tags\":[\"ratelimit\"],\"status\":\"not_run\",\"applicable\":false,\"duration_ms\":0,"
        "\"message\":\"the key's plan is not known: give --plan\"}]}]}",
        verdict, exit_code, aborted ? aborted : "null", incomplete ? incomplete : "null");
    fclose(t);
    ps_error err;
    ps_json *doc = ps_json_parse(text, tlen, NULL, &err);
    free(text);
    if (!doc) {
        fprintf(stderr, "fixture does not parse: %s\n", err.message);
        return NULL;
    }
    char *html = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&html, &n);
    int rc = ps_report_html_conform(doc, f, &err);
    fclose(f);
    ps_json_free(doc);
    CHECK_INT(rc, 0);
    return html;
}

static const char *after(const char *hay, const char *needle)
{
    const char *p = hay ? strstr(hay, needle) : NULL;
    return p ? p : "";
}

static void aborted_run_says_why(void)
{
    char *html = render("\"could not reach <b>host</b> & \\\"port\\\": Connection refused\"", NULL,
                        "aborted", 3);
    if (!html) return;
    const char *banner = strstr(html, "data-banner=\"aborted\"");
    CHECK(banner != NULL);
    CHECK(strstr(html, "role=\"alert\"") != NULL);
    CHECK(strstr(after(banner, ""), "The run was aborted") != NULL);
    /* the reason, escaped: markup from the JSON stays text */
    CHECK(
        strstr(
            html,
            "could not reach &lt;b&gt;host&lt;/b&gt; &amp; &quot;port&quot;: Connection refused") !=
        NULL);
    CHECK(strstr(html, "<b>host</b>") == NULL);
    /* prominent: before the summary counts */
    const char *summary = strstr(html, "<section class=\"summary\">");
    CHECK(summary != NULL && banner != NULL && banner < summary);
    CHECK(strstr(html, "data-banner=\"incomplete\"") == NULL);
    free(html);
}

static void incomplete_run_says_why(void)
{
    char *html =
        render(NULL,
               "\"32 of 41 selected checks could not be tested: the service answered 429 "
               "(it asked to wait up to 50 s, more than --max-wait 3.0 s) <script>x</script>\"",
               "incomplete", 3);
    if (!html) return;
    const char *banner = strstr(html, "data-banner=\"incomplete\"");
    CHECK(banner != NULL);
    CHECK(strstr(after(banner, ""), "The run is incomplete") != NULL);
    CHECK(strstr(after(banner, ""), "No check failed") != NULL);
    CHECK(strstr(
              html,
              "32 of 41 selected checks could not be tested: the service answered 429 (it asked to "
              "wait up to 50 s, more than --max-wait 3.0 s) &lt;script&gt;x&lt;/script&gt;") !=
          NULL);
    CHECK(strstr(html, "<script>x</script>") == NULL);
    const char *summary = strstr(html, "<section class=\"summary\">");
    CHECK(summary != NULL && banner != NULL && banner < summary);
    CHECK(strstr(html, "data-verdict=\"incomplete\"") != NULL);
    free(html);
}

/* A failed run can be incomplete too: the reason shows, without claiming
 * that no check failed. */
static void failed_and_incomplete(void)
{
    char *html = render(NULL, "\"1 of 2 selected checks could not be tested: x\"", "fail", 1);
    if (!html) return;
    CHECK(strstr(html, "data-banner=\"incomplete\"") != NULL);
    CHECK(strstr(html, "1 of 2 selected checks could not be tested: x") != NULL);
    CHECK(strstr(html, "No check failed") == NULL);
    free(html);
}

static void finished_run_has_no_banner(void)
{
    char *html = render(NULL, NULL, "pass", 0);
    if (!html) return;
    CHECK(strstr(html, "data-banner=") == NULL);
    CHECK(strstr(html, "role=\"alert\"") == NULL);
    /* a check with nothing to judge is labelled, not shown as untested */
    CHECK(strstr(html, ">not applicable</span>") != NULL);
    free(html);
}

int main(void)
{
    RUN(aborted_run_says_why);
    RUN(incomplete_run_says_why);
    RUN(failed_and_incomplete);
    RUN(finished_run_has_no_banner);
    return TEST_EXIT();
}
