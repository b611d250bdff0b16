/* validate.c - NewCategory body validation with one error code per rule. */
#include "reference-server/validate.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Sets the code and the message "prefix detail" (detail cut to fit). */
static int fail(ps_new_category *out, const char *code, const char *prefix, const char *detail)
{
    out->code = code;
    size_t n = strlen(prefix);
    if (n >= sizeof out->message) n = sizeof out->message - 1;
    memcpy(out->message, prefix, n);
    size_t d = strlen(detail);
    if (d > sizeof out->message - 1 - n) d = sizeof out->message - 1 - n;
    memcpy(out->message + n, detail, d);
    /* yajl's messages end in a newline: not part of a one-line message */
    while (d > 0 && (out->message[n + d - 1] == '\n' || out->message[n + d - 1] == ' '))
        d--;
    out->message[n + d] = '\0';
    return -1;
}

/* fault member-case-insensitive: the last member whose name equals key in any case. */
static const ps_json *get_nocase_last(const ps_json *o, const char *key)
{
    const ps_json *found = NULL;
    for (size_t i = 0; i < o->count; i++)
        if (strcasecmp(o->keys[i], key) == 0) found = o->items[i];
    return found;
}

int ps_validate_new_category(const char *body, size_t len, ps_fault_set faults,
                             ps_new_category *out)
{
    memset(out, 0, sizeof *out);
    ps_error perr;
    ps_json_failure why = PS_JSON_OK;
    out->tree = ps_json_parse(body, len, &why, &perr);
    out->json_failure = why;
    if (!out->tree) {
        switch (why) {
        case PS_JSON_EMPTY:
            return fail(out, "empty_body",
                        "the request body is empty; expected a JSON object with a string name", "");
        case PS_JSON_TRAILING:
            return fail(out, "trailing_data",
                        "the body has bytes after the JSON value: ", perr.message);
        case PS_JSON_BAD_UTF8:
            return fail(out, "invalid_utf8", "the body is not valid UTF-8: ", perr.message);
        case PS_JSON_TOO_DEEP:
            return fail(out, "too_deep", "the JSON nests too deeply: ", perr.message);
        case PS_JSON_BAD_ESCAPE:
            return fail(out, "invalid_unicode_escape",
                        "the body has an escape with no UTF-8 form: ", perr.message);
        case PS_JSON_TOO_MANY_MEMBERS:
            return fail(out, "too_many_members", "the body has too many members: ", perr.message);
        case PS_JSON_MALFORMED:
        default:
            return fail(out, "malformed_json", "the body is not valid JSON: ", perr.message);
        }
    }
    const ps_json *root = out->tree;
    if (root->type != PS_JSON_OBJECT)
        return fail(out, "not_object", "the body must be a JSON object, got ",
                    ps_json_type_name(root->type));
    if (root->duplicate_keys) {
        for (size_t i = 0; i < root->count; i++)
            for (size_t j = i + 1; j < root->count; j++)
                if (root->key_lens[i] == root->key_lens[j] &&
                    memcmp(root->keys[i], root->keys[j], root->key_lens[i]) == 0)
                    return fail(out, "duplicate_member",
                                "a member occurs more than once: ", root->keys[i]);
        return fail(out, "duplicate_member", "a member occurs more than once", "");
    }
    /* Unknown members are ignored (forward compatibility); only name and description matter. */
    const ps_json *name = ps_json_get(root, "name");
    const ps_json *desc = ps_json_get(root, "description");
    if (ps_fault_on(faults, PS_FAULT_MEMBER_CASE_INSENSITIVE)) {
        name = get_nocase_last(root, "name");
        desc = get_nocase_last(root, "description");
    }
    if (!name) {
        if (!ps_fault_on(faults, PS_FAULT_MISSING_NAME_ACCEPTED))
            return fail(out, "missing_name", "the required member 'name' is missing", "");
        out->name = "";
        out->name_len = 0;
    } else if (name->type != PS_JSON_STRING) {
        bool coerce = ps_fault_on(faults, PS_FAULT_WRONG_TYPE_ACCEPTED) &&
                      (name->type == PS_JSON_NUMBER || name->type == PS_JSON_BOOL);
        if (!coerce)
            return fail(out, "name_not_string", "'name' must be a string, got ",
                        ps_json_type_name(name->type));
        if (name->type == PS_JSON_NUMBER) {
            out->name = name->str;
            out->name_len = name->len;
        } else {
            out->name = name->boolean ? "true" : "false";
            out->name_len = strlen(out->name);
        }
    } else {
        out->name = name->str;
        out->name_len = name->len;
    }
    if (desc) {
        if (desc->type != PS_JSON_STRING)
            return fail(out, "description_not_string",
                        "'description' must be a string when present, got ",
                        ps_json_type_name(desc->type));
        out->description = desc->str;
        out->description_len = desc->len;
        out->has_description = true;
    }
    return 0;
}

void ps_new_category_free(ps_new_category *c)
{
    ps_json_free(c->tree);
    c->tree = NULL;
}
