/* every_response.c - the judges every response of a run goes through,
 * whichever suite sent it: the content type (schema.content-type-json), the
 * Error shape of error responses (errors.*), singleton fields sent once
 * (http.fields-not-repeated), and the rate-limit judge
 * (ratelimit_judge.c). The framework calls them through ps_suite_observers. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "runner/gen_ledger.h"
#include "runner/suites/front.h"
#include "runner/suites/ratelimit_judge.h"
#include "runner/suites/shapes.h"
#include "runner/suites/suites.h"

/* schema.content-type-json */
static void observe_content_type(ps_conform *c, void *state, const ps_observation *o)
{
    (void)state;
    const ps_exchange *ex = o->ex;
    const char *ct = ps_headers_get(&ex->resp_headers, "Content-Type");
    size_t n = 0;
    if (ct) {
        n = strcspn(ct, ";");
        while (n && (ct[n - 1] == ' ' || ct[n - 1] == '\t'))
            n--;
    }
    if (ct && n == 16 && strncasecmp(ct, "application/json", 16) == 0) {
        ps_conform_pass(c, PS_CK_SCHEMA_CONTENT_TYPE_JSON);
        return;
    }
    if (ct)
        ps_conform_fail(c, PS_CK_SCHEMA_CONTENT_TYPE_JSON, ex, "Content-Type: application/json",
                        "a %ld response is labelled '%s', not application/json", ex->status, ct);
    else
        ps_conform_fail(c, PS_CK_SCHEMA_CONTENT_TYPE_JSON, ex, "Content-Type: application/json",
                        "a %ld response has no Content-Type", ex->status);
}

/* errors.schema, errors.status-matches */
static void observe_error_body(ps_conform *c, void *state, const ps_observation *o)
{
    (void)state;
    const ps_exchange *ex = o->ex;
    if (ex->status < 400) return;
    char why[300];
    ps_json *v = ps_conform_parse_body(ex, why, sizeof why);
    if (!v) {
        ps_conform_fail(c, PS_CK_ERRORS_SCHEMA, ex, "an Error object {code, message, status}",
                        "the %ld response: %s", ex->status, why);
        return;
    }
    if (!ps_shape_is_error(v, why, sizeof why)) {
        ps_conform_fail(c, PS_CK_ERRORS_SCHEMA, ex, "an Error object {code, message, status}",
                        "the %ld response body is not an Error: %s", ex->status, why);
    } else {
        ps_conform_pass(c, PS_CK_ERRORS_SCHEMA);
    }
    const ps_json *st = ps_json_get(v, "status");
    if (st && st->type == PS_JSON_NUMBER && st->is_int) {
        if (st->i == ex->status) {
            ps_conform_pass(c, PS_CK_ERRORS_STATUS_MATCHES);
        } else {
            char exp[64];
            snprintf(exp, sizeof exp, "\"status\": %ld", ex->status);
            ps_conform_fail(c, PS_CK_ERRORS_STATUS_MATCHES, ex, exp,
                            "the Error says status %" PRId64 " on a %ld response", st->i,
                            ex->status);
        }
    }
    ps_json_free(v);
}

/* RFC 9110 5.3: a field that is not a list may not be sent twice, not
 * even with equal values (recipients may reject or pick either). */
static const char *const singletons[] = {"X-RateLimit-Limit", "X-RateLimit-Remaining",
                                         "X-RateLimit-Reset", "Retry-After",
                                         "Content-Type",      "Content-Length"};

/* http.fields-not-repeated */
static void observe_singletons(ps_conform *c, void *state, const ps_observation *o)
{
    (void)state;
    const ps_exchange *ex = o->ex;
    for (size_t i = 0; i < sizeof singletons / sizeof singletons[0]; i++) {
        size_t n = ps_headers_count(&ex->resp_headers, singletons[i]);
        if (n > 1) {
            char exp[96];
            snprintf(exp, sizeof exp, "%s once", singletons[i]);
            ps_conform_fail(c, PS_CK_HTTP_FIELDS_NOT_REPEATED, ex, exp,
                            "a %ld response carries %s %zu times ('%s' first); RFC 9110 5.3 allows "
                            "a field that "
                            "is not a list once",
                            ex->status, singletons[i], n,
                            ps_headers_get(&ex->resp_headers, singletons[i]));
            return;
        }
    }
    ps_conform_pass(c, PS_CK_HTTP_FIELDS_NOT_REPEATED);
}

const ps_observer ps_suite_observers[] = {
    {"content-type", 0, observe_content_type},
    {"error-body", 0, observe_error_body},
    {"fields-not-repeated", 0, observe_singletons},
    {"http-dates", 0, ps_http_dates_observe},
    {"ratelimit-judge", PS_RATELIMIT_JUDGE_STATE_SIZE, ps_ratelimit_judge_observe},
    {"reset-not-past", PS_RESET_PAST_STATE_SIZE, ps_reset_past_observe},
    {"create-ledger", PS_LEDGER_STATE_SIZE, ps_ledger_observe}, /* runner/gen_ledger.h */
    {"front", PS_FRONT_STATE_SIZE, ps_front_observe},           /* handed gateways' replies only */
};
const size_t ps_suite_observer_count = sizeof ps_suite_observers / sizeof ps_suite_observers[0];
