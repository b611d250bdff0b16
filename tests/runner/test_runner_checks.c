/* test_runner_checks.c - the check catalogue, --only/--skip selection and how
 * observations turn into a status under each level and --strict. */
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "harness.h"
#include "runner/checks.h"
#include "runner/suites/shapes.h"

static void catalogue_ids_unique_and_suited(void)
{
    static const char *const suites[] = {"base",      "list",     "create",     "schema",
                                         "errors",    "auth",     "validation", "roundtrip",
                                         "ratelimit", "limit429", "generate",   "http"};
    for (int i = 0; i < PS_CK_COUNT; i++) {
        const ps_check_def *d = ps_check_def_get((ps_check_id)i);
        CHECK(d->ck == (ps_check_id)i);
        CHECK(d->clause && *d->clause && d->title && *d->title && d->tags && *d->tags);
        char suite[32];
        ps_check_suite(d, suite, sizeof suite);
        bool known = false;
        for (size_t s = 0; s < sizeof suites / sizeof suites[0]; s++)
            known |= strcmp(suite, suites[s]) == 0;
        CHECK(known);
        for (int j = i + 1; j < PS_CK_COUNT; j++)
            CHECK(strcmp(d->id, ps_check_def_get((ps_check_id)j)->id) != 0);
    }
    /* Levels come from where the rule is written: WWW-Authenticate, the
     * case of the scheme (RFC 9110 11.1; the document shows 'Bearer' only)
     * and singleton fields (RFC 9110 5.3) are RFC rules. */
    CHECK_INT(ps_check_def_get(PS_CK_AUTH_WWW_AUTHENTICATE)->level, PS_LEVEL_HTTP);
    CHECK_INT(ps_check_def_get(PS_CK_AUTH_SCHEME_CASE_INSENSITIVE)->level, PS_LEVEL_HTTP);
    CHECK_INT(ps_check_def_get(PS_CK_HTTP_FIELDS_NOT_REPEATED)->level, PS_LEVEL_HTTP);
    CHECK_INT(ps_check_def_get(PS_CK_RATELIMIT_RESET_CONSISTENT)->level, PS_LEVEL_SPEC);
    CHECK_INT(ps_check_def_get(PS_CK_BASE_URL_V1)->level, PS_LEVEL_ADVICE);
    /* nothing in the document says Retry-After and Reset agree (a ban may
     * outlast the window), nor that a description is never filled in */
    CHECK_INT(ps_check_def_get(PS_CK_LIMIT429_RETRY_AFTER_AGREES)->level, PS_LEVEL_ADVICE);
    CHECK_INT(ps_check_def_get(PS_CK_ROUNDTRIP_NO_INVENTED_DESCRIPTION)->level, PS_LEVEL_ADVICE);
}

/* Whether TEXT parses and has the shape SHAPE says. */
static bool shaped(bool (*shape)(const ps_json *, char *, size_t), const char *text)
{
    ps_json_failure failure;
    ps_error err = {0};
    ps_json *v = ps_json_parse(text, strlen(text), &failure, &err);
    CHECK(v != NULL);
    char why[160];
    bool ok = v && shape(v, why, sizeof why);
    ps_json_free(v);
    return ok;
}

static void shapes_refuse_repeated_members(void)
{
    CHECK(
        shaped(ps_shape_is_error, "{\"code\":\"rate_limited\",\"message\":\"m\",\"status\":429}"));
    CHECK(!shaped(ps_shape_is_error,
                  "{\"code\":\"rate_limited\",\"message\":\"m\",\"status\":429,\"status\":400}"));
    CHECK(shaped(ps_shape_is_category, "{\"id\":1,\"name\":\"dog\"}"));
    CHECK(!shaped(ps_shape_is_category, "{\"id\":1,\"name\":\"dog\",\"id\":2}"));
}

static int count_selected(const ps_checks *c)
{
    int n = 0;
    for (int i = 0; i < PS_CK_COUNT; i++)
        n += ps_checks_selected(c, (ps_check_id)i);
    return n;
}

static void selection_by_glob_tag_and_skip(void)
{
    ps_error err;
    ps_checks *c = ps_checks_create();
    CHECK_INT(count_selected(c), PS_CK_COUNT);
    CHECK_INT(ps_checks_select(c, "ratelimit.*", NULL, &err), 0);
    for (int i = 0; i < PS_CK_COUNT; i++)
        CHECK(ps_checks_selected(c, (ps_check_id)i) ==
              (strncmp(ps_check_def_get((ps_check_id)i)->id, "ratelimit.", 10) == 0));
    CHECK(ps_checks_any_selected(c, "ratelimit."));
    CHECK(!ps_checks_any_selected(c, "auth."));

    /* a tag: "exhausts" marks the checks that use up a limit */
    CHECK_INT(ps_checks_select(c, NULL, "exhausts", &err), 0);
    CHECK(!ps_checks_any_selected(c, "limit429."));
    CHECK(ps_checks_selected(c, PS_CK_AUTH_MISSING_HEADER));

    /* a suite name, several patterns with spaces, and a skip inside */
    CHECK_INT(ps_checks_select(c, "auth, validation.missing-name", "auth.www-*", &err), 0);
    CHECK(ps_checks_selected(c, PS_CK_AUTH_BARE_KEY));
    CHECK(ps_checks_selected(c, PS_CK_VALIDATION_MISSING_NAME));
    CHECK(!ps_checks_selected(c, PS_CK_VALIDATION_NAME_TYPE));
    CHECK(!ps_checks_selected(c, PS_CK_AUTH_WWW_AUTHENTICATE));

    /* typos are errors, not empty runs */
    CHECK_INT(ps_checks_select(c, "ratelimt.*", NULL, &err), -1);
    CHECK(strstr(err.message, "ratelimt.*") != NULL);
    CHECK_INT(ps_checks_select(c, NULL, "nonesuch", &err), -1);
    CHECK_INT(ps_checks_select(c, ",", NULL, &err), -1);
    CHECK_INT(ps_checks_select(c, "auth", "auth", &err), -1);
    CHECK(strstr(err.message, "no check") != NULL);
    ps_checks_destroy(c);
}

static void outcomes_by_level_and_strictness(void)
{
    ps_checks *c = ps_checks_create();
    ps_check_outcome o;

    ps_check_outcome_get(c, PS_CK_LIST_STATUS_200, false, &o);
    CHECK_INT(o.status, PS_STATUS_NOT_RUN);
    CHECK(o.message != NULL);
    CHECK(o.applicable); /* an untested check that applies makes the run incomplete */

    ps_check_pass(c, PS_CK_LIST_STATUS_200);
    ps_check_outcome_get(c, PS_CK_LIST_STATUS_200, false, &o);
    CHECK_INT(o.status, PS_STATUS_PASSED);

    /* one failure among passes fails a spec check; the first message stays */
    ps_check_pass(c, PS_CK_ERRORS_SCHEMA);
    ps_check_fail(c, PS_CK_ERRORS_SCHEMA, "{\"x\":1}", "first %d", 1);
    ps_check_fail(c, PS_CK_ERRORS_SCHEMA, NULL, "second");
    ps_check_outcome_get(c, PS_CK_ERRORS_SCHEMA, false, &o);
    CHECK_INT(o.status, PS_STATUS_FAILED);
    CHECK_STR(o.message, "first 1");
    CHECK_STR(o.evidence_json, "{\"x\":1}");
    CHECK_INT(o.failures, 2);
    CHECK_INT(o.passes, 1);

    /* http level: a warning, a failure under --strict */
    ps_check_fail(c, PS_CK_AUTH_WWW_AUTHENTICATE, NULL, "no header");
    ps_check_outcome_get(c, PS_CK_AUTH_WWW_AUTHENTICATE, false, &o);
    CHECK_INT(o.status, PS_STATUS_WARNING);
    ps_check_outcome_get(c, PS_CK_AUTH_WWW_AUTHENTICATE, true, &o);
    CHECK_INT(o.status, PS_STATUS_FAILED);

    /* advice never fails, strict or not */
    ps_check_fail(c, PS_CK_BASE_URL_V1, NULL, "no /v1");
    ps_check_outcome_get(c, PS_CK_BASE_URL_V1, true, &o);
    CHECK_INT(o.status, PS_STATUS_WARNING);

    /* a not-run reason does not hide later outcomes */
    ps_check_not_run(c, PS_CK_LIMIT429_RECOVERS, "waited too long");
    ps_check_outcome_get(c, PS_CK_LIMIT429_RECOVERS, false, &o);
    CHECK_INT(o.status, PS_STATUS_NOT_RUN);
    CHECK_STR(o.message, "waited too long");
    CHECK(o.applicable);
    ps_check_fail(c, PS_CK_LIMIT429_RECOVERS, NULL, "still 429");
    ps_check_outcome_get(c, PS_CK_LIMIT429_RECOVERS, false, &o);
    CHECK_INT(o.status, PS_STATUS_FAILED);
    CHECK(o.applicable);

    /* not applicable: not run, marked so; the first reason (of either kind) stands */
    ps_check_not_applicable(c, PS_CK_RATELIMIT_LIMIT_MATCHES_PLAN, "plan %s", "unknown");
    ps_check_not_run(c, PS_CK_RATELIMIT_LIMIT_MATCHES_PLAN, "later");
    ps_check_outcome_get(c, PS_CK_RATELIMIT_LIMIT_MATCHES_PLAN, false, &o);
    CHECK_INT(o.status, PS_STATUS_NOT_RUN);
    CHECK_STR(o.message, "plan unknown");
    CHECK(!o.applicable);
    ps_check_not_run(c, PS_CK_RATELIMIT_RESET_CONSISTENT, "no time");
    ps_check_not_applicable(c, PS_CK_RATELIMIT_RESET_CONSISTENT, "later");
    ps_check_outcome_get(c, PS_CK_RATELIMIT_RESET_CONSISTENT, false, &o);
    CHECK_STR(o.message, "no time");
    CHECK(o.applicable);
    /* ...and a pass makes it an ordinary passed check */
    ps_check_pass(c, PS_CK_RATELIMIT_LIMIT_MATCHES_PLAN);
    ps_check_outcome_get(c, PS_CK_RATELIMIT_LIMIT_MATCHES_PLAN, false, &o);
    CHECK_INT(o.status, PS_STATUS_PASSED);
    CHECK(o.applicable);

    /* unselected checks ignore observations */
    ps_error err;
    CHECK_INT(ps_checks_select(c, "auth.*", NULL, &err), 0);
    ps_check_fail(c, PS_CK_CREATE_STATUS_201, NULL, "ignored");
    ps_check_outcome_get(c, PS_CK_CREATE_STATUS_201, false, &o);
    CHECK_INT(o.failures, 0);
    ps_checks_destroy(c);
}

int main(void)
{
    RUN(catalogue_ids_unique_and_suited);
    RUN(shapes_refuse_repeated_members);
    RUN(selection_by_glob_tag_and_skip);
    RUN(outcomes_by_level_and_strictness);
    return TEST_EXIT();
}
