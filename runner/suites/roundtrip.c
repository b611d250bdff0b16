/* roundtrip.c - createCategory and what the list says afterwards: status
 * 201, the created Category's shape, unique ids, fields exactly as sent
 * (unicode and escapes), no invented description. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "runner/gen_ledger.h"
#include "runner/suites/shapes.h"
#include "runner/suites/suites.h"

/* The categories a run creates. {run} is the run token, so a run against a
 * shared staging service finds its own. Names stay short (at most 26 bytes):
 * a length limit is not shown in the spec, so one would be conformant. The
 * first exercises escapes, non-ASCII (2-, 3- and 4-byte UTF-8, a surrogate
 * pair, U+2028), a control character and HTML metacharacters; the second has
 * no description on purpose. */
static const char *const bodies[] = {
    ("{\"name\":\"c{run} \xc3\xbc\xe7\x8c\xab\xf0\x9f\x90\x88\\\"\\\\\\/\\u00e9\\u001f\","
     "\"description\":\"a\\nb\\tc <b>&amp;</b> \\ud83d\\udc08\\u2028\"}"),
    "{\"name\":\"c{run} nodesc\"}",
    "{\"name\":\"c{run} 2nd\",\"description\":\"plain\"}",
};
#define NCATS (sizeof bodies / sizeof bodies[0])

typedef struct created {
    char body[512];
    ps_json *sent; /* the body as parsed: the expected fields */
    bool created;
    int64_t id;
} created;

static bool same_string(const ps_json *a, const ps_json *b)
{
    return a && b && a->type == PS_JSON_STRING && b->type == PS_JSON_STRING && a->len == b->len &&
           memcmp(a->str, b->str, a->len) == 0;
}

/* Compares a returned Category with what was sent; where says "reply" or "list". */
static void check_fields(ps_conform *c, const created *cr, const ps_json *got,
                         const ps_exchange *ex, const char *where)
{
    const ps_json *sent_name = ps_json_get(cr->sent, "name");
    const ps_json *sent_desc = ps_json_get(cr->sent, "description");
    const ps_json *name = ps_json_get(got, "name");
    const ps_json *desc = ps_json_get(got, "description");
    char exp[600];
    snprintf(exp, sizeof exp, "name and description exactly as in %s", cr->body);
    const ps_json *sent_field = !same_string(sent_name, name)                ? sent_name
                                : sent_desc && !same_string(sent_desc, desc) ? sent_desc
                                                                             : NULL;
    if (sent_field) {
        /* escaped: the first name ends in U+001F, which printed raw looks like nothing */
        const ps_json *g = sent_field == sent_name ? name : desc;
        ps_buf m = PS_BUF_INIT;
        ps_buf_printf(&m, "the %s has %s \"", where,
                      sent_field == sent_name ? "name" : "description");
        if (g && g->type == PS_JSON_STRING) ps_ledger_escape(&m, g->str, g->len, 120);
        ps_buf_printf(&m, "\" (%zu bytes) for category %" PRId64 ", sent \"",
                      g && g->type == PS_JSON_STRING ? g->len : 0, cr->id);
        ps_ledger_escape(&m, sent_field->str, sent_field->len, 120);
        ps_buf_printf(&m, "\" (%zu bytes)", sent_field->len);
        ps_conform_fail(c, PS_CK_ROUNDTRIP_FIELDS_EXACT, ex, exp, "%s", m.data);
        ps_buf_free(&m);
    } else {
        ps_conform_pass(c, PS_CK_ROUNDTRIP_FIELDS_EXACT);
    }
    if (!sent_desc) {
        if (desc) {
            ps_conform_fail(
                c, PS_CK_ROUNDTRIP_NO_INVENTED_DESCRIPTION, ex, "no description member",
                "category %" PRId64 " was created without description, the %s shows one (%s%.*s%s)",
                cr->id, where, desc->type == PS_JSON_STRING ? "\"" : "",
                desc->type == PS_JSON_STRING ? (int)(desc->len > 60 ? 60 : desc->len) : 4,
                desc->type == PS_JSON_STRING ? desc->str : ps_json_type_name(desc->type),
                desc->type == PS_JSON_STRING ? "\"" : "");
        } else {
            ps_conform_pass(c, PS_CK_ROUNDTRIP_NO_INVENTED_DESCRIPTION);
        }
    }
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static void check_list(ps_conform *c, created *cats, size_t ncats)
{
    char auth[1024];
    ps_conform_bearer(c, PS_KEY_MAIN, auth, sizeof auth);
    ps_client_request req = {"GET", "/categories", auth, NULL, 0, NULL};
    ps_exchange ex;
    int rc = ps_conform_send(c, PS_CK_ROUNDTRIP_APPEARS_IN_LIST, &req, PS_KEY_MAIN,
                             PS_SEND_RETRY_429, &ex);
    if (rc != PS_SENT) {
        ps_conform_no_response(c, PS_CK_ROUNDTRIP_APPEARS_IN_LIST, rc, &ex);
        ps_exchange_free(&ex);
        return;
    }
    if (ex.status != 200) {
        ps_conform_fail(c, PS_CK_LIST_STATUS_200, &ex, "200", "GET /categories answered %ld",
                        ex.status);
        ps_conform_fail(c, PS_CK_ROUNDTRIP_APPEARS_IN_LIST, &ex, "200 with the created categories",
                        "the list after creating answered %ld", ex.status);
        ps_exchange_free(&ex);
        return;
    }
    ps_conform_pass(c, PS_CK_LIST_STATUS_200);
    ps_suite_check_list_body(c, &ex);
    char why[300];
    if (ex.truncated) {
        static const ps_check_id ids[] = {PS_CK_ROUNDTRIP_APPEARS_IN_LIST,
                                          PS_CK_ROUNDTRIP_IDS_UNIQUE, PS_CK_ROUNDTRIP_FIELDS_EXACT,
                                          PS_CK_ROUNDTRIP_NO_INVENTED_DESCRIPTION};
        for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
            ps_conform_not_run(
                c, ids[i], "the list is %zu bytes, more than the %zu KiB kept (raise --max-body)",
                ex.body_total, ex.body_cap >> 10);
        ps_exchange_free(&ex);
        return;
    }
    ps_json *list = ps_ledger_parse_body(&ex, why, sizeof why);
    if (!list || list->type != PS_JSON_ARRAY) {
        ps_conform_fail(c, PS_CK_ROUNDTRIP_APPEARS_IN_LIST, &ex,
                        "a JSON array with the created categories", "%s",
                        list ? "the list is not an array" : why);
        ps_json_free(list);
        ps_exchange_free(&ex);
        return;
    }
    /* ids unique across the whole list */
    int64_t *ids = calloc(list->count + 1, sizeof *ids);
    if (!ids) abort();
    size_t nids = 0;
    for (size_t i = 0; i < list->count; i++) {
        const ps_json *id = ps_json_get(list->items[i], "id");
        if (id && id->type == PS_JSON_NUMBER && id->is_int) ids[nids++] = id->i;
    }
    qsort(ids, nids, sizeof *ids, cmp_i64);
    bool dup = false;
    for (size_t i = 1; i < nids && !dup; i++) {
        if (ids[i] == ids[i - 1]) {
            dup = true;
            ps_conform_fail(c, PS_CK_ROUNDTRIP_IDS_UNIQUE, &ex, "every id once",
                            "id %" PRId64 " occurs more than once in the list", ids[i]);
        }
    }
    if (!dup && nids) ps_conform_pass(c, PS_CK_ROUNDTRIP_IDS_UNIQUE);
    free(ids);

    for (size_t k = 0; k < ncats; k++) {
        if (!cats[k].created) continue;
        const ps_json *found = NULL;
        for (size_t i = 0; i < list->count && !found; i++) {
            const ps_json *id = ps_json_get(list->items[i], "id");
            if (id && id->type == PS_JSON_NUMBER && id->is_int && id->i == cats[k].id)
                found = list->items[i];
        }
        if (!found) {
            char exp[64];
            snprintf(exp, sizeof exp, "an item with id %" PRId64, cats[k].id);
            ps_conform_fail(c, PS_CK_ROUNDTRIP_APPEARS_IN_LIST, &ex, exp,
                            "category %" PRId64 " was created but is not in the list (%zu items)",
                            cats[k].id, list->count);
            continue;
        }
        ps_conform_pass(c, PS_CK_ROUNDTRIP_APPEARS_IN_LIST);
        /* An id handed out twice (already a roundtrip.ids-unique failure)
         * cannot tell which item is which: compare fields of the others only. */
        bool shared = false;
        for (size_t j = 0; j < ncats; j++)
            if (j != k && cats[j].created && cats[j].id == cats[k].id) shared = true;
        if (!shared) check_fields(c, &cats[k], found, &ex, "list");
    }
    /* every create so far, whichever suite sent it (gen_ledger.h) */
    ps_ledger_judge_list(c, list, &ex, false);
    ps_json_free(list);
    ps_exchange_free(&ex);
}

/* Sends one create on the main key; rc as ps_conform_send. */
static int create(ps_conform *c, ps_check_id ck, const char *body, ps_exchange *ex)
{
    char auth[1024];
    ps_conform_bearer(c, PS_KEY_MAIN, auth, sizeof auth);
    ps_client_request req = {"POST", "/categories", auth, body, strlen(body), "application/json"};
    int rc = ps_conform_send(c, ck, &req, PS_KEY_MAIN, PS_SEND_RETRY_429, ex);
    if (rc != PS_SENT) ps_conform_no_response(c, ck, rc, ex);
    return rc;
}

/* roundtrip.client-id-ignored: id is assigned by the service (spec 2
 * NewCategory rule 1), so a create carrying an existing id either is
 * refused (400) or gets a new id, never the one sent (a duplicate). */
static void client_id(ps_conform *c, const created *cats, size_t ncats)
{
    const created *old = NULL;
    for (size_t k = 0; k < ncats && !old; k++)
        if (cats[k].created) old = &cats[k];
    if (!old) {
        ps_conform_not_applicable(c, PS_CK_ROUNDTRIP_CLIENT_ID_IGNORED,
                                  "no category was created to reuse the id of");
        return;
    }
    char body[160];
    snprintf(body, sizeof body, "{\"id\":%" PRId64 ",\"name\":\"c%s id\"}", old->id,
             ps_conform_run_token(c));
    ps_exchange ex;
    if (create(c, PS_CK_ROUNDTRIP_CLIENT_ID_IGNORED, body, &ex) != PS_SENT) {
        ps_exchange_free(&ex);
        return;
    }
    char exp[96];
    snprintf(exp, sizeof exp, "400, or 201 with an id other than %" PRId64, old->id);
    if (ex.status == 400) {
        ps_conform_pass(c, PS_CK_ROUNDTRIP_CLIENT_ID_IGNORED);
    } else if (ex.status >= 200 && ex.status < 300) {
        ps_json *got = ps_conform_parse_body(&ex, NULL, 0);
        const ps_json *id = got ? ps_json_get(got, "id") : NULL;
        if (id && id->type == PS_JSON_NUMBER && id->is_int && id->i == old->id)
            ps_conform_fail(c, PS_CK_ROUNDTRIP_CLIENT_ID_IGNORED, &ex, exp,
                            "a create carrying \"id\":%" PRId64
                            " (an existing category's) was stored under that id: "
                            "the id is the service's to assign, and now two categories share it",
                            old->id);
        else
            ps_conform_pass(c, PS_CK_ROUNDTRIP_CLIENT_ID_IGNORED);
        ps_json_free(got);
    } else {
        ps_conform_fail(c, PS_CK_ROUNDTRIP_CLIENT_ID_IGNORED, &ex, exp,
                        "a create carrying an existing id answered %ld", ex.status);
    }
    ps_exchange_free(&ex);
}

/* roundtrip.long-name: length limits are not shown, so a long name may be
 * refused with 400; stored, it must come back whole (not cut). */
static void long_name(ps_conform *c)
{
    ps_buf name = PS_BUF_INIT, body = PS_BUF_INIT;
    ps_buf_printf(&name, "c%s long ", ps_conform_run_token(c));
    for (int i = 0; i < 75; i++)
        ps_buf_puts(&name, "\xc3\xbc\xe7\x8c\xab\xf0\x9f\x90\x88"
                           "a"); /* 4 characters, 10 bytes */
    ps_buf_printf(&body, "{\"name\":\"%s\"}", name.data);
    ps_exchange ex;
    if (create(c, PS_CK_ROUNDTRIP_LONG_NAME, body.data, &ex) == PS_SENT) {
        if (ex.status == 400) {
            ps_conform_pass(c, PS_CK_ROUNDTRIP_LONG_NAME);
        } else if (ex.status >= 200 && ex.status < 300) {
            ps_json *got = ps_conform_parse_body(&ex, NULL, 0);
            const ps_json *n = got ? ps_json_get(got, "name") : NULL;
            if (n && n->type == PS_JSON_STRING && n->len == name.len &&
                memcmp(n->str, name.data, name.len) == 0)
                ps_conform_pass(c, PS_CK_ROUNDTRIP_LONG_NAME);
            else
                ps_conform_fail(c, PS_CK_ROUNDTRIP_LONG_NAME, &ex,
                                "the name exactly as sent, or 400",
                                "a name of %zu bytes (315 characters) came back %s%zu bytes: a "
                                "changed name (400 "
                                "would be allowed, length limits are not shown)",
                                name.len, n && n->type == PS_JSON_STRING ? "as " : "as no string, ",
                                n && n->type == PS_JSON_STRING ? n->len : 0);
            ps_json_free(got);
        } else {
            ps_conform_fail(c, PS_CK_ROUNDTRIP_LONG_NAME, &ex,
                            "201 with the name exactly as sent, or 400",
                            "a create with a name of %zu bytes answered %ld", name.len, ex.status);
        }
    }
    ps_exchange_free(&ex);
    ps_buf_free(&name);
    ps_buf_free(&body);
}

void ps_suite_roundtrip(ps_conform *c)
{
    created cats[NCATS];
    memset(cats, 0, sizeof cats);
    char auth[1024];
    ps_conform_bearer(c, PS_KEY_MAIN, auth, sizeof auth);

    for (size_t k = 0; k < NCATS; k++) {
        created *cr = &cats[k];
        const char *at = strstr(bodies[k], "{run}");
        snprintf(cr->body, sizeof cr->body, "%.*s%s%s", (int)(at - bodies[k]), bodies[k],
                 ps_conform_run_token(c), at + 5);
        cr->sent = ps_json_parse(cr->body, strlen(cr->body), NULL, NULL);
        if (!cr->sent) abort(); /* our own fixture: a bug, not a server fault */
        ps_client_request req = {"POST",   "/categories",    auth,
                                 cr->body, strlen(cr->body), "application/json"};
        ps_exchange ex;
        int rc =
            ps_conform_send(c, PS_CK_CREATE_STATUS_201, &req, PS_KEY_MAIN, PS_SEND_RETRY_429, &ex);
        if (rc != PS_SENT) {
            ps_conform_no_response(c, PS_CK_CREATE_STATUS_201, rc, &ex);
            ps_exchange_free(&ex);
            continue;
        }
        if (ex.status == 201) {
            ps_conform_pass(c, PS_CK_CREATE_STATUS_201);
        } else {
            ps_conform_fail(c, PS_CK_CREATE_STATUS_201, &ex, "201 with the created Category",
                            "a valid create answered %ld, not 201", ex.status);
        }
        if (ex.status == 401)
            ps_conform_fail(c, PS_CK_AUTH_VALID_KEY, &ex, "201",
                            "the configured API key was refused on create");
        if (ex.status < 200 || ex.status >= 300) {
            ps_exchange_free(&ex);
            continue;
        }
        ps_conform_pass(c, PS_CK_AUTH_VALID_KEY);
        char why[300];
        ps_json *got = ps_conform_parse_body(&ex, why, sizeof why);
        if (!got) {
            ps_conform_fail(c, PS_CK_SCHEMA_CREATED_CATEGORY, &ex, "the created Category", "%s",
                            why);
        } else if (!ps_shape_is_category(got, why, sizeof why)) {
            ps_conform_fail(c, PS_CK_SCHEMA_CREATED_CATEGORY, &ex, "the created Category",
                            "the create reply is not a Category: %s", why);
        } else {
            ps_conform_pass(c, PS_CK_SCHEMA_CREATED_CATEGORY);
            cr->created = true;
            cr->id = ps_json_get(got, "id")->i;
            bool dup = false;
            for (size_t j = 0; j < k; j++) {
                if (cats[j].created && cats[j].id == cr->id) {
                    dup = true;
                    ps_conform_fail(c, PS_CK_ROUNDTRIP_IDS_UNIQUE, &ex, "a new id",
                                    "create %zu got id %" PRId64 ", already given to create %zu",
                                    k + 1, cr->id, j + 1);
                }
            }
            if (!dup && k > 0) ps_conform_pass(c, PS_CK_ROUNDTRIP_IDS_UNIQUE);
            check_fields(c, cr, got, &ex, "create reply");
        }
        ps_json_free(got);
        ps_exchange_free(&ex);
    }
    if (ps_conform_selected(c, PS_CK_ROUNDTRIP_CLIENT_ID_IGNORED)) client_id(c, cats, NCATS);
    if (ps_conform_selected(c, PS_CK_ROUNDTRIP_LONG_NAME)) long_name(c);
    check_list(c, cats, NCATS);
    for (size_t k = 0; k < NCATS; k++)
        ps_json_free(cats[k].sent);
}
