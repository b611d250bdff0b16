/* auth.c - the 401 family on both operations (spec 5), driven by
 * runner/suites/auth_variants.def, plus the WWW-Authenticate rules of RFC 9110/6750. */
#define _GNU_SOURCE /* strcasestr */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/buf.h"
#include "runner/suites/suites.h"

typedef struct auth_variant {
    ps_check_id ck;
    int expect; /* 401, or 2 for "any 2xx" */
    const char *label;
    const char *tmpl; /* NULL: no header */
} auth_variant;

static const auth_variant variants[] = {
#define PS_AUTH(ck, expect, label, tmpl) {PS_CK_##ck, expect, label, tmpl},
#include "runner/suites/auth_variants.def"
#undef PS_AUTH
};

/* Expands {key} and {unknown} in a template. */
static void expand(ps_conform *c, const char *tmpl, ps_buf *out, ps_key_role *role)
{
    *role = PS_KEY_NONE;
    for (const char *p = tmpl; *p;) {
        if (strncmp(p, "{key}", 5) == 0) {
            ps_buf_puts(out, ps_conform_cfg(c)->api_key);
            *role = PS_KEY_MANGLED_MAIN;
            p += 5;
        } else if (strncmp(p, "{unknown}", 9) == 0) {
            ps_buf_puts(out, ps_conform_unknown_key(c));
            p += 9;
        } else {
            ps_buf_putc(out, *p++);
        }
    }
}

/* Does a WWW-Authenticate value offer a Bearer challenge? Scheme names are
 * case-insensitive tokens at the start or after a comma. */
static bool has_bearer_challenge(const char *v)
{
    for (const char *p = v; p && *p;) {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        if (strncasecmp(p, "bearer", 6) == 0 && (p[6] == '\0' || p[6] == ' ' || p[6] == ','))
            return true;
        p = strchr(p, ',');
    }
    return false;
}

static void check_401_extras(ps_conform *c, const ps_exchange *ex, bool token_sent_unknown)
{
    const char *wa = ps_headers_get(&ex->resp_headers, "WWW-Authenticate");
    if (!wa) {
        ps_conform_fail(c, PS_CK_AUTH_WWW_AUTHENTICATE, ex, "WWW-Authenticate: Bearer ...",
                        "a 401 carries no WWW-Authenticate header (RFC 9110 11.6.1 requires one)");
        if (token_sent_unknown)
            ps_conform_not_applicable(
                c, PS_CK_AUTH_BEARER_ERROR,
                "the 401 for an unknown key has no WWW-Authenticate to inspect");
        return;
    }
    if (!has_bearer_challenge(wa)) {
        ps_conform_fail(c, PS_CK_AUTH_WWW_AUTHENTICATE, ex, "WWW-Authenticate: Bearer ...",
                        "WWW-Authenticate is '%s': no Bearer challenge (RFC 6750 3)", wa);
        return;
    }
    ps_conform_pass(c, PS_CK_AUTH_WWW_AUTHENTICATE);
    if (token_sent_unknown) {
        if (strcasestr(wa, "invalid_token"))
            ps_conform_pass(c, PS_CK_AUTH_BEARER_ERROR);
        else
            ps_conform_fail(
                c, PS_CK_AUTH_BEARER_ERROR, ex, "WWW-Authenticate: Bearer error=\"invalid_token\"",
                "the 401 for an unknown key does not name error=\"invalid_token\" ('%s')", wa);
    }
}

/* auth.near-miss-keys: the key minus its last character and plus one
 * character are other keys; a service comparing prefixes accepts them.
 * Both are redacted like the key itself: the client knows the key and the
 * key less its last character as secrets (runner/conform.c). */
static void near_miss_keys(ps_conform *c)
{
    const char *key = ps_conform_cfg(c)->api_key;
    size_t n = strlen(key);
    if (n < PS_CONFORM_NEAR_MISS_MIN_KEY) {
        ps_conform_not_applicable(
            c, PS_CK_AUTH_NEAR_MISS_KEYS,
            "the key has fewer than %d characters: its near misses could not be hidden in "
            "the reports without hiding ordinary text",
            PS_CONFORM_NEAR_MISS_MIN_KEY);
        return;
    }
    for (int v = 0; v < 2; v++) {
        ps_buf miss = PS_BUF_INIT, auth = PS_BUF_INIT;
        if (v == 0)
            ps_buf_append(&miss, key, n - 1);
        else
            ps_buf_printf(&miss, "%s%c", key, key[n - 1] == 'x' ? 'y' : 'x');
        ps_buf_printf(&auth, "Bearer %s", miss.data);
        ps_client_request req = {"GET", "/categories", auth.data, NULL, 0, NULL};
        ps_exchange ex;
        int rc = ps_conform_send(c, PS_CK_AUTH_NEAR_MISS_KEYS, &req, PS_KEY_MANGLED_MAIN,
                                 PS_SEND_RETRY_429, &ex);
        const char *what =
            v == 0 ? "the key without its last character" : "the key with one character appended";
        if (rc != PS_SENT)
            ps_conform_no_response(c, PS_CK_AUTH_NEAR_MISS_KEYS, rc, &ex);
        else if (ex.status == 401)
            ps_conform_pass(c, PS_CK_AUTH_NEAR_MISS_KEYS);
        else
            ps_conform_fail(
                c, PS_CK_AUTH_NEAR_MISS_KEYS, &ex, "401: a key is matched whole",
                "listCategories with %s answered %ld, not 401 (are keys compared by prefix?)", what,
                ex.status);
        ps_exchange_free(&ex);
        ps_buf_free(&miss);
        ps_buf_free(&auth);
    }
}

void ps_suite_auth(ps_conform *c)
{
    if (ps_conform_selected(c, PS_CK_AUTH_NEAR_MISS_KEYS)) near_miss_keys(c);
    static const struct {
        const char *method, *what;
    } ops[] = {{"GET", "listCategories"}, {"POST", "createCategory"}};
    char body[128];
    unsigned creates = 0;

    /* The 401s also feed the Error-shape and challenge checks. */
    bool feeds_others = ps_conform_any_selected(c, "errors.") ||
                        ps_conform_selected(c, PS_CK_AUTH_WWW_AUTHENTICATE) ||
                        ps_conform_selected(c, PS_CK_AUTH_BEARER_ERROR);
    for (size_t o = 0; o < 2; o++) {
        for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++) {
            const auth_variant *v = &variants[i];
            if (!ps_conform_selected(c, v->ck) && !(feeds_others && v->expect == 401)) continue;
            ps_buf auth = PS_BUF_INIT;
            ps_key_role role = PS_KEY_NONE;
            if (v->tmpl) expand(c, v->tmpl, &auth, &role);
            /* A correctly-schemed key (any case) is the main key proper. */
            if (v->expect != 401 && role == PS_KEY_MANGLED_MAIN) role = PS_KEY_MAIN;
            bool post = o == 1;
            /* A distinct name per create: a uniqueness rule is not shown, so it may apply. */
            if (post)
                snprintf(body, sizeof body, "{\"name\":\"c%s a%u\"}", ps_conform_run_token(c),
                         ++creates);
            ps_client_request req = {
                ops[o].method,      "/categories",           v->tmpl ? auth.data : NULL,
                post ? body : NULL, post ? strlen(body) : 0, post ? "application/json" : NULL};
            ps_exchange ex;
            int rc = ps_conform_send(c, v->ck, &req, role, PS_SEND_RETRY_429, &ex);
            if (rc != PS_SENT) {
                ps_conform_no_response(c, v->ck, rc, &ex);
            } else if (v->expect == 401) {
                if (ex.status == 401) {
                    ps_conform_pass(c, v->ck);
                    check_401_extras(c, &ex, v->tmpl && strstr(v->tmpl, "{unknown}"));
                } else {
                    ps_conform_fail(c, v->ck, &ex, "401 with an Error body",
                                    "%s with %s answered %ld, not 401", ops[o].what, v->label,
                                    ex.status);
                    if (v->tmpl && strstr(v->tmpl, "{unknown}"))
                        ps_conform_not_applicable(c, PS_CK_AUTH_BEARER_ERROR,
                                                  "an unknown key was not refused with 401");
                }
            } else {
                if (ex.status >= 200 && ex.status < 300) {
                    ps_conform_pass(c, v->ck);
                } else {
                    ps_conform_fail(c, v->ck, &ex,
                                    v->ck == PS_CK_AUTH_CREDENTIAL_SPELLINGS
                                        ? "2xx: RFC 6750 2.1 allows this spelling of the credential"
                                        : "2xx: the scheme name is case-insensitive",
                                    "%s with %s answered %ld", ops[o].what, v->label, ex.status);
                }
            }
            ps_exchange_free(&ex);
            ps_buf_free(&auth);
        }
    }
}
