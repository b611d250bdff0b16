/* test_load_console.c - petstore-load's console summary, rendered from its
 * JSON: thresholds k6 style with the actual value (✓/✗ on a UTF-8
 * terminal, PASS/FAIL words elsewhere), the send rate against the target
 * with the requests skipped for Retry-After, and the 429 count. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "harness.h"
#include "reports/report_load_console.h"

/* A rate-limited run as petstore-load writes it: 400/s asked for 8 s. */
static const char rate_limited[] =
    "{\"parameters\": {\"rate\": 400, \"ramp\": null, \"model\": \"open\", \"engine\": \"epoll\","
    " \"verify_limits\": true},"
    " \"duration_s\": 8.0, \"scheduled\": 1086, \"answered\": 1080, \"failed\": 0, \"timed_out\": "
    "6,"
    " \"skipped_retry_after\": 2114, \"status\": {\"200\": 1023, \"429\": 57},"
    " \"errors\": {\"connect\": 0, \"read\": 0, \"timeout\": 6},"
    " \"latency_us\": {\"corrected\": {\"p50\": 210, \"p90\": 400, \"p99\": 12345, \"p99_9\": "
    "20000,"
    " \"max\": 1500000, \"count\": 1080}, \"uncorrected\": {}},"
    " \"limits\": {\"verdict\": \"pass\", \"windows\": 9, \"violations\": [{\"severity\": "
    "\"warning\","
    " \"message\": \"under by 3\"}]},"
    " \"thresholds\": [{\"expression\": \"p99<200ms\", \"passed\": true, \"actual_us\": 12345,"
    " \"bound_us\": 200000}, {\"expression\": \"error_rate<1%\", \"passed\": true, \"actual\": 0,"
    " \"bound\": 0.01}, {\"expression\": \"max<=1s\", \"passed\": false, \"actual_us\": 1500000,"
    " \"bound_us\": 1000000}],"
    " \"verdict\": \"fail\", \"aborted\": null, \"exit_code\": 1}";

static char *render(const char *text, const ps_load_console_options *o)
{
    ps_json *doc = ps_json_parse(text, strlen(text), NULL, NULL);
    char *out = NULL;
    size_t n = 0;
    ps_error err = {{0}};
    FILE *f = open_memstream(&out, &n);
    int rc = ps_report_console_load(doc, f, o, &err);
    fclose(f);
    ps_json_free(doc);
    if (rc != 0) {
        fprintf(stderr, "render: %s\n", err.message);
        free(out);
        return NULL;
    }
    return out;
}

static void test_thresholds_show_mark_and_actual(void)
{
    ps_load_console_options o = {.utf8 = true};
    char *t = render(rate_limited, &o);
    CHECK(t != NULL);
    if (!t) return;
    fputs(t, stderr);
    CHECK(strstr(t, "  thresholds:\n"
                    "    \xE2\x9C\x93 p99<200ms      p99=12.3ms\n"
                    "    \xE2\x9C\x93 error_rate<1%  error_rate=0.00%\n"
                    "    \xE2\x9C\x97 max<=1s        max=1.50s\n") != NULL);
    CHECK(strstr(t, "FAILED") == NULL && strstr(t, "PASS") == NULL);
    free(t);

    /* no UTF-8: words, and "us" for microseconds */
    o.utf8 = false;
    t = render(
        "{\"thresholds\": [{\"expression\": \"p50<1ms\", \"passed\": true, \"actual_us\": 850},"
        " {\"expression\": \"p99<1ms\", \"passed\": false, \"actual_us\": 2500}]}",
        &o);
    CHECK(t && strstr(t, "    PASS p50<1ms  p50=850us\n    FAIL p99<1ms  p99=2.50ms\n") != NULL);
    CHECK(t && strstr(t, "\xE2\x9C") == NULL);
    free(t);

    /* a threshold lost to the generator's lateness names both figures */
    t = render("{\"thresholds\": [{\"expression\": \"p99<1ms\", \"passed\": false, \"actual_us\": "
               "105855, \"own_us\": 58207, \"lateness_us\": 98879, \"lost_to_generator\": true}]}",
               &o);
    CHECK(t &&
          strstr(t, "    FAIL p99<1ms  p99=106ms: lost to the generator (its lateness 98.9ms, the "
                    "target's 58.2ms)\n") != NULL);
    free(t);
}

static void test_send_rate_is_explained(void)
{
    char *t = render(rate_limited, NULL);
    CHECK(t != NULL);
    if (!t) return;
    CHECK(strstr(t, "petstore-load: 1086 requests in 8.00 s, 135.0 answered/s (open model, epoll "
                    "engine)\n") != NULL);
    CHECK(
        strstr(t,
               "  send rate: 135.8/s sent of 400/s target; 3200 due, 2114 skipped for Retry-After "
               "(66.1%), 1086 sent\n") != NULL);
    CHECK(strstr(t, "answered 1080, failed 0, timed out 6; 429 responses 57;") != NULL);
    CHECK(strstr(t, "  warning: under by 3\n  limits: pass (9 windows checked)\n") != NULL);
    /* an empty histogram prints dashes, not zeros */
    CHECK(strstr(t, "  uncorrected         -         -         -         -         -\n") != NULL);
    CHECK(strstr(t, "verdict:") == NULL);
    free(t);

    /* a closed-model run has no target: no rate line */
    t = render("{\"parameters\": {\"model\": \"closed\"}, \"scheduled\": 5, \"duration_s\": 1}",
               NULL);
    CHECK(t && strstr(t, "send rate") == NULL && strstr(t, "429 responses 0") != NULL);
    free(t);

    /* exit 3 says why */
    ps_load_console_options o = {.first_failure = "connect: refused"};
    t = render("{\"verdict\": \"unreachable\", \"aborted\": \"no connection\", \"exit_code\": 3}",
               &o);
    CHECK(t && strstr(t, "  first failure: connect: refused\n") &&
          strstr(t, "  verdict: unreachable (exit 3): no connection\n"));
    free(t);
}

static void test_locale_decides_utf8(void)
{
    static const struct {
        const char *lc_all, *lc_ctype, *lang;
        bool utf8;
    } cases[] = {
        {NULL, NULL, NULL, false},
        {NULL, NULL, "en_US.UTF-8", true},
        {NULL, NULL, "C.utf8", true},
        {NULL, NULL, "C", false},
        {"C", NULL, "en_US.UTF-8", false},   /* LC_ALL wins */
        {"", "de_DE.utf-8@euro", "C", true}, /* empty is unset */
        {NULL, "POSIX", "en_US.UTF-8", false},
        {NULL, NULL, "en_US.ISO-8859-1", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *v[3] = {cases[i].lc_all, cases[i].lc_ctype, cases[i].lang};
        const char *names[3] = {"LC_ALL", "LC_CTYPE", "LANG"};
        for (int k = 0; k < 3; k++) {
            if (v[k])
                setenv(names[k], v[k], 1);
            else
                unsetenv(names[k]);
        }
        if (ps_console_locale_utf8() != cases[i].utf8) fprintf(stderr, "case %zu\n", i);
        CHECK(ps_console_locale_utf8() == cases[i].utf8);
    }
}

static void test_non_objects_are_refused(void)
{
    ps_error err = {{0}};
    CHECK(ps_report_console_load(NULL, stderr, NULL, &err) == -1 && err.message[0]);
    char *t = render("{}", NULL); /* an empty object is a (very short) summary */
    CHECK(t != NULL);
    free(t);
}

int main(void)
{
    RUN(test_thresholds_show_mark_and_actual);
    RUN(test_send_rate_is_explained);
    RUN(test_locale_decides_utf8);
    RUN(test_non_objects_are_refused);
    return TEST_EXIT();
}
