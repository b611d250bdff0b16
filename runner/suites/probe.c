/* probe.c - the base address and the first contact with the service. */
#include <stdio.h>
#include <string.h>

#include "runner/gen_ledger.h"
#include "runner/suites/shapes.h"
#include "runner/suites/suites.h"

/* The first exchange serves as evidence: it shows the address used. */
static void check_base_url(ps_conform *c, const ps_exchange *ex)
{
    const char *url = ps_conform_base_url(c);
    size_t n = strlen(url);
    if (n >= 3 && strcmp(url + n - 3, "/v1") == 0)
        ps_conform_pass(c, PS_CK_BASE_URL_V1);
    else
        ps_conform_fail(c, PS_CK_BASE_URL_V1, ex, "a base URL ending in /v1",
                        "the base URL '%s' does not end in /v1 (spec 9: the version segment ends "
                        "the base address)",
                        url);
}

/* Checks a list response against spec 4 listCategories and spec 2 Category. */
static void check_list_body(ps_conform *c, const ps_exchange *ex)
{
    char why[300];
    if (ex->truncated) {
        /* A long list is no deviation; the runner just did not keep it all. */
        static const ps_check_id ids[] = {PS_CK_SCHEMA_LIST_IS_ARRAY, PS_CK_SCHEMA_LIST_CATEGORY};
        for (size_t i = 0; i < 2; i++)
            ps_conform_not_run(
                c, ids[i], "the list is %zu bytes, more than the %zu KiB kept (raise --max-body)",
                ex->body_total, ex->body_cap >> 10);
        return;
    }
    ps_json *v = ps_ledger_parse_body(ex, why, sizeof why); /* a lone surrogate read as U+FFFD */
    if (!v) {
        ps_conform_fail(c, PS_CK_SCHEMA_LIST_IS_ARRAY, ex, "a JSON array of Category", "%s", why);
        ps_conform_not_applicable(c, PS_CK_SCHEMA_LIST_CATEGORY,
                                  "the list body is not JSON (schema.list-is-array failed)");
        return;
    }
    if (v->type != PS_JSON_ARRAY) {
        ps_conform_fail(c, PS_CK_SCHEMA_LIST_IS_ARRAY, ex, "a JSON array of Category",
                        "the list body is a JSON %s, not an array", ps_json_type_name(v->type));
        ps_conform_not_applicable(c, PS_CK_SCHEMA_LIST_CATEGORY,
                                  "the list body is not an array (schema.list-is-array failed)");
        goto out;
    }
    ps_conform_pass(c, PS_CK_SCHEMA_LIST_IS_ARRAY);
    for (size_t i = 0; i < v->count; i++) {
        if (!ps_shape_is_category(v->items[i], why, sizeof why)) {
            ps_conform_fail(c, PS_CK_SCHEMA_LIST_CATEGORY, ex, "every item a Category",
                            "list item %zu of %zu: %s", i, v->count, why);
            goto out;
        }
    }
    /* An empty list proves nothing about items; the round trip fills it. */
    if (v->count) ps_conform_pass(c, PS_CK_SCHEMA_LIST_CATEGORY);
out:
    ps_json_free(v);
}

int ps_suite_probe(ps_conform *c)
{
    char auth[1024];
    ps_conform_bearer(c, PS_KEY_MAIN, auth, sizeof auth);
    ps_client_request req = {"GET", "/categories", auth, NULL, 0, NULL};
    ps_exchange ex;
    int rc = ps_conform_send(c, PS_CK_LIST_STATUS_200, &req, PS_KEY_MAIN, PS_SEND_RETRY_429, &ex);
    check_base_url(c, &ex);
    if (rc == PS_SEND_FAILED) {
        /* A reply that came but could not be read reached the target: say so. */
        ps_conform_abort(c, "%s %s/categories: %s",
                         ex.reply_bad ? "no usable reply from" : "could not reach",
                         ps_conform_base_url(c), ex.error);
        ps_exchange_free(&ex);
        return -1;
    }
    if (rc == PS_SEND_SKIPPED) {
        ps_conform_no_response(c, PS_CK_LIST_STATUS_200, rc, &ex);
        ps_exchange_free(&ex);
        return 0;
    }
    if (ex.status == 200) {
        ps_conform_pass(c, PS_CK_LIST_STATUS_200);
        ps_conform_pass(c, PS_CK_AUTH_VALID_KEY);
    } else {
        const char *hint = ex.status == 401   ? " (is the API key right?)"
                           : ex.status == 404 ? " (is the base URL right? it should end in /v1)"
                                              : "";
        ps_conform_fail(c, PS_CK_LIST_STATUS_200, &ex, "200 with a JSON array",
                        "GET /categories with the API key answered %ld%s", ex.status, hint);
        if (ex.status == 401)
            ps_conform_fail(c, PS_CK_AUTH_VALID_KEY, &ex, "200",
                            "the configured API key was refused with 401");
    }
    if (ex.status >= 200 && ex.status < 300) check_list_body(c, &ex);
    ps_exchange_free(&ex);
    return 0;
}

void ps_suite_check_list_body(ps_conform *c, const ps_exchange *ex)
{
    check_list_body(c, ex);
}
