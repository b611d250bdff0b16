/* faults.c - the fault catalogue: names and descriptions of the deliberate
 * deviations (docs/faults.md is the same table for humans). */
#include "reference-server/faults.h"

#include <string.h>

static const struct {
    const char *name, *description;
} catalogue[PS_FAULT_COUNT] = {
    [PS_FAULT_LIST_ID_STRING] = {"list-id-string", "ids in the list are JSON strings (\"id\":\"1\")"},
    [PS_FAULT_CREATE_STATUS_200] = {"create-status-200", "a successful create answers 200 instead of 201"},
    [PS_FAULT_INVENT_DESCRIPTION] = {"invent-description",
                                     "a category created without description comes back with \"description\":\"\""},
    [PS_FAULT_UNICODE_MANGLED] = {"unicode-mangled",
                                  "non-ASCII characters of name/description are replaced by '?' when stored"},
    [PS_FAULT_DUPLICATE_IDS] = {"duplicate-ids", "every 2nd create reuses the previous id"},
    [PS_FAULT_CONTENT_TYPE_TEXT] = {"content-type-text", "responses are labelled text/plain"},
    [PS_FAULT_ERROR_STATUS_MISMATCH] = {"error-status-mismatch",
                                        "Error body status is always 400, whatever the HTTP status"},
    [PS_FAULT_ERROR_MISSING_CODE] = {"error-missing-code", "Error bodies have no code member"},
    [PS_FAULT_NO_AUTH] = {"no-auth", "requests without any credential are served (200/201)"},
    [PS_FAULT_ACCEPT_ANY_KEY] = {"accept-any-key", "any bearer token is accepted"},
    [PS_FAULT_BEARER_CASE_SENSITIVE] = {"bearer-case-sensitive",
                                        "only the exact scheme 'Bearer' is accepted; 'bearer' gets 401"},
    [PS_FAULT_NO_WWW_AUTHENTICATE] = {"no-www-authenticate", "401 carries no WWW-Authenticate"},
    [PS_FAULT_MISSING_NAME_ACCEPTED] = {"missing-name-accepted",
                                        "a create without name is accepted (201, name \"\")"},
    [PS_FAULT_WRONG_TYPE_ACCEPTED] = {"wrong-type-accepted",
                                      "a number/boolean name is coerced to a string and accepted"},
    [PS_FAULT_MALFORMED_JSON_500] = {"malformed-json-500", "malformed JSON answers 500 instead of 400"},
    [PS_FAULT_NO_RATELIMIT_HEADERS_ON_ERRORS] = {"no-ratelimit-headers-on-errors",
                                                 "4xx responses carry no X-RateLimit-* headers"},
    [PS_FAULT_RESET_MILLISECONDS] = {"reset-milliseconds", "X-RateLimit-Reset is a Unix time in milliseconds"},
    [PS_FAULT_RESET_RELATIVE] = {"reset-relative", "X-RateLimit-Reset is the seconds left in the window"},
    [PS_FAULT_RESET_UNSTABLE] = {"reset-unstable",
                                 "X-RateLimit-Reset moves with every request (now + window, +1 s on every other request)"},
    [PS_FAULT_REMAINING_STATIC] = {"remaining-static", "X-RateLimit-Remaining never decreases"},
    [PS_FAULT_REMAINING_NEGATIVE] = {"remaining-negative", "past the limit, Remaining goes negative"},
    [PS_FAULT_LIMIT_WRONG_PLAN] = {"limit-wrong-plan",
                                   "X-RateLimit-Limit reports 100 for every plan (the limit enforced stays right)"},
    [PS_FAULT_NEVER_LIMIT] = {"never-limit", "no request is ever refused with 429"},
    [PS_FAULT_NO_RETRY_AFTER] = {"no-retry-after", "429 without Retry-After"},
    [PS_FAULT_RETRY_AFTER_MISMATCH] = {"retry-after-mismatch", "Retry-After is always 3600, disagreeing with Reset"},
    [PS_FAULT_NO_RECOVERY] = {"no-recovery",
                              "after a 429 the key stays limited for the rest of the day window, whatever Reset said"},
    [PS_FAULT_OVER_ADMISSION_RACE] = {"over-admission-race",
                                      "admission is check-then-increment with a yield between, so concurrent requests over-admit"},
};

const char *ps_fault_name(ps_fault f)
{
    return (unsigned)f < PS_FAULT_COUNT ? catalogue[f].name : NULL;
}

const char *ps_fault_description(ps_fault f)
{
    return (unsigned)f < PS_FAULT_COUNT ? catalogue[f].description : NULL;
}

int ps_fault_enable(ps_fault_set *set, const char *name, ps_error *err)
{
    for (int i = 0; i < PS_FAULT_COUNT; i++) {
        if (strcmp(catalogue[i].name, name) == 0) {
            *set |= (ps_fault_set)1 << i;
            return 0;
        }
    }
    return ps_error_set(err, "unknown fault '%s' (--list-faults prints the %d known ones)", name,
                        PS_FAULT_COUNT);
}

void ps_fault_print_list(FILE *out)
{
    for (int i = 0; i < PS_FAULT_COUNT; i++)
        fprintf(out, "%-31s %s\n", catalogue[i].name, catalogue[i].description);
}
