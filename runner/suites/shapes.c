/* shapes.c - the shapes of spec 2 (Category, Error), judged on parsed
 * bodies with a reason a reader can act on. */
#include "runner/suites/shapes.h"

#include <inttypes.h>
#include <stdio.h>

static void describe_value(const ps_json *v, char *out, size_t n)
{
    if (v->type == PS_JSON_STRING)
        snprintf(out, n, "the string \"%.*s\"", (int)(v->len > 40 ? 40 : v->len), v->str);
    else if (v->type == PS_JSON_NUMBER)
        snprintf(out, n, "the number %s", v->str);
    else
        snprintf(out, n, "%s", ps_json_type_name(v->type));
}

bool ps_shape_is_category(const ps_json *v, char *why, size_t n)
{
    char d[96];
    if (v->type != PS_JSON_OBJECT) {
        describe_value(v, d, sizeof d);
        snprintf(why, n, "a Category must be a JSON object, got %s", d);
        return false;
    }
    if (v->duplicate_keys) {
        snprintf(why, n, "the Category object repeats a member name");
        return false;
    }
    const ps_json *id = ps_json_get(v, "id");
    if (!id) {
        snprintf(why, n, "the required member id is missing");
        return false;
    }
    if (id->type != PS_JSON_NUMBER || !id->is_int) {
        describe_value(id, d, sizeof d);
        snprintf(why, n, "id must be an integer within int64, got %s", d);
        return false;
    }
    const ps_json *name = ps_json_get(v, "name");
    if (!name) {
        snprintf(why, n, "the required member name is missing (id %" PRId64 ")", id->i);
        return false;
    }
    if (name->type != PS_JSON_STRING) {
        describe_value(name, d, sizeof d);
        snprintf(why, n, "name must be a string, got %s (id %" PRId64 ")", d, id->i);
        return false;
    }
    const ps_json *desc = ps_json_get(v, "description");
    if (desc && desc->type != PS_JSON_STRING) {
        describe_value(desc, d, sizeof d);
        snprintf(why, n, "description must be absent or a string, got %s (id %" PRId64 ")", d,
                 id->i);
        return false;
    }
    return true;
}

bool ps_shape_is_error(const ps_json *v, char *why, size_t n)
{
    char d[96];
    if (v->type != PS_JSON_OBJECT) {
        describe_value(v, d, sizeof d);
        snprintf(why, n, "an Error must be a JSON object, got %s", d);
        return false;
    }
    /* RFC 8259 4: with a name repeated, what a receiver reads is
     * unpredictable (the runner's parser keeps the first "status",
     * JavaScript's and Python's the last): no one status can be judged */
    if (v->duplicate_keys) {
        snprintf(why, n, "the Error object repeats a member name");
        return false;
    }
    static const char *const strings[] = {"code", "message"};
    for (int i = 0; i < 2; i++) {
        const ps_json *m = ps_json_get(v, strings[i]);
        if (!m) {
            snprintf(why, n, "the required member %s is missing", strings[i]);
            return false;
        }
        if (m->type != PS_JSON_STRING) {
            describe_value(m, d, sizeof d);
            snprintf(why, n, "%s must be a string, got %s", strings[i], d);
            return false;
        }
    }
    const ps_json *st = ps_json_get(v, "status");
    if (!st) {
        snprintf(why, n, "the required member status is missing");
        return false;
    }
    if (st->type != PS_JSON_NUMBER || !st->is_int) {
        describe_value(st, d, sizeof d);
        snprintf(why, n, "status must be an integer, got %s", d);
        return false;
    }
    return true;
}
