/* gen_judge.c - the generative phase's oracle (see gen_judge.h). */
#include "runner/gen_judge.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/buf.h"
#include "core/json.h"
#include "runner/conform.h"
#include "runner/gen_ledger.h"
#include "runner/suites/shapes.h"

/* A string for a message: at most 48 characters, control characters and
 * non-ASCII bytes as escapes (a probe's text may hold NUL or U+2028). */
static void preview(const char *s, size_t len, char *out, size_t size)
{
    size_t o = 0;
    for (size_t i = 0; i < len && o + 12 < size; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (i >= 48) {
            o += (size_t)snprintf(out + o, size - o, "...");
            break;
        }
        if (ch < 0x20 || ch == 0x7f || ch == '"' || ch == '\\')
            o += (size_t)snprintf(out + o, size - o, "\\x%02x", ch);
        else if (ch >= 0x80)
            o += (size_t)snprintf(out + o, size - o, "\\x%02x", ch);
        else
            out[o++] = (char)ch;
    }
    out[o < size ? o : size - 1] = '\0';
}

/* Does got equal one of the string members called key of the sent object? */
static bool one_of_sent(const ps_json *sent, const char *key, const ps_json *got,
                        const ps_json **first)
{
    *first = NULL;
    if (!sent || sent->type != PS_JSON_OBJECT) return false;
    for (size_t i = 0; i < sent->count; i++) {
        if (strcmp(sent->keys[i], key) != 0 || sent->items[i]->type != PS_JSON_STRING) continue;
        const ps_json *s = sent->items[i];
        if (!*first) *first = s;
        if (got && got->type == PS_JSON_STRING && got->len == s->len &&
            memcmp(got->str, s->str, s->len) == 0)
            return true;
    }
    return false;
}

/* Copies a ps_buf's text into out, cut to size (never half a UTF-8 sequence). */
static void put_cut(char *out, size_t size, ps_buf *b)
{
    size_t n = b->len < size - 1 ? b->len : ps_utf8_floor(b->data, size - 1);
    memcpy(out, b->data ? b->data : "", n);
    out[n] = '\0';
    ps_buf_free(b);
}

/* A failure: "probe: what (clause)". */
void ps_gen_auth_forms(const ps_gen_case *gc, ps_buf *b)
{
    for (int i = 0; i < 2 && gc->auth[i]; i++) {
        ps_buf_puts(b, i ? " then \"" : "\"");
        ps_buf t = PS_BUF_INIT;
        for (const char *p = gc->auth[i]; *p;) {
            if (strncmp(p, "{key}", 5) == 0) {
                ps_buf_puts(&t, "KEY");
                p += 5;
            } else if (strncmp(p, "{key", 4) == 0 && p[4] && p[5] == p[4] && p[6] == '}') {
                ps_buf_printf(&t, "KEY%c%c", p[4], p[4]);
                p += 7;
            } else if (strncmp(p, "{unknown}", 9) == 0) {
                ps_buf_puts(&t, "UNKNOWN");
                p += 9;
            } else {
                ps_buf_putc(&t, *p++);
            }
        }
        ps_ledger_escape(b, t.data ? t.data : "", t.len, 80);
        ps_buf_free(&t);
        ps_buf_putc(b, '"');
    }
}

static void failf(ps_gen_verdict *v, const ps_gen_case *gc, const char *what)
{
    v->outcome = PS_GEN_FAIL;
    ps_buf b = PS_BUF_INIT;
    ps_buf_puts(&b, gc->probe);
    if (gc->ck == PS_CK_GENERATE_CREDENTIALS && gc->auth[0]) {
        ps_buf_puts(&b, " (Authorization: ");
        ps_gen_auth_forms(gc, &b);
        ps_buf_putc(&b, ')');
    }
    ps_buf_printf(&b, ": %s (%s)", what, gc->clause);
    put_cut(v->message, sizeof v->message, &b);
}

/* A 2xx to a create: the Category exactly as sent (name, and description
 * when one was sent; with a repeated member, any of its values); with
 * !exact a Category only (the request had no value to compare with). */
static void judge_created(const ps_gen_case *gc, const char *body, size_t body_len,
                          const ps_exchange *ex, bool exact, ps_gen_verdict *v)
{
    char why[300], detail[400], a[200], b[200];
    if (ex->status != 201) {
        snprintf(detail, sizeof detail, "answered %ld, not 201", ex->status);
        failf(v, gc, detail);
        return;
    }
    ps_json *got = ps_ledger_parse_body(ex, why, sizeof why);
    ps_json *sent = ps_ledger_parse_text(body, body_len); /* a lone surrogate as the reply's */
    if (!got || !ps_shape_is_category(got, why, sizeof why)) {
        ps_buf m = PS_BUF_INIT;
        ps_buf_printf(&m, "the 201 reply is not a Category: %s", why);
        put_cut(detail, sizeof detail, &m);
        failf(v, gc, detail);
        goto out;
    }
    v->created = true;
    v->id = ps_json_get(got, "id")->i;
    if (!exact) goto out;
    static const char *const fields[] = {"name", "description"};
    for (int f = 0; f < 2; f++) {
        const ps_json *sent_first;
        const ps_json *g = ps_json_get(got, fields[f]);
        if (one_of_sent(sent, fields[f], g, &sent_first) || !sent_first) continue;
        preview(sent_first->str, sent_first->len, a, sizeof a);
        if (g && g->type == PS_JSON_STRING)
            preview(g->str, g->len, b, sizeof b);
        else
            snprintf(b, sizeof b, "(%s)", g ? ps_json_type_name(g->type) : "absent");
        ps_buf m = PS_BUF_INIT;
        ps_buf_printf(
            &m,
            "category %" PRId64 " came back with %s \"%s\" (%zu bytes), sent \"%s\" (%zu bytes)",
            v->id, fields[f], b, g && g->type == PS_JSON_STRING ? g->len : 0, a, sent_first->len);
        put_cut(detail, sizeof detail, &m);
        failf(v, gc, detail);
        goto out;
    }
out:
    ps_json_free(got);
    ps_json_free(sent);
}

void ps_gen_judge(const ps_gen_case *gc, const char *body, size_t body_len, const ps_exchange *ex,
                  ps_gen_verdict *v)
{
    memset(v, 0, sizeof *v);
    v->outcome = PS_GEN_PASS;
    long st = ex->status;
    if (!ex->responded || st == 429) {
        v->outcome = PS_GEN_UNJUDGED;
        return;
    }
    char detail[200];
    switch (gc->expect) {
    case PS_GEN_CREATED:
    case PS_GEN_CREATED_ONLY:
    case PS_GEN_NO_5XX:
        snprintf(v->expected, sizeof v->expected, "%s",
                 gc->expect == PS_GEN_CREATED_ONLY ? "201 with the Category exactly as sent"
                 : gc->expect == PS_GEN_CREATED
                     ? "201 with the Category exactly as sent, or a refusal the spec leaves open "
                       "(400, 409, 413)"
                     : "a 4xx, or 201 with the Category exactly as sent");
        if (st >= 200 && st < 300) {
            judge_created(gc, body, body_len, ex, true, v);
        } else if (gc->expect == PS_GEN_NO_5XX && st >= 400 && st < 500) {
            /* legal either way */
        } else if (gc->expect == PS_GEN_CREATED && (st == 400 || st == 409 || st == 413)) {
            /* lengths, uniqueness and sizes are not shown: a refusal is allowed */
        } else if (st == 401) {
            failf(v, gc, "the configured key was refused (401)");
        } else {
            snprintf(detail, sizeof detail, "answered %ld%s", st,
                     st >= 500 ? ": a server error for a request the spec allows" : "");
            failf(v, gc, detail);
        }
        return;
    case PS_GEN_400:
    case PS_GEN_401: {
        /* one status only: an invalid body 400, a bad credential 401 */
        long want = gc->expect == PS_GEN_400 ? 400 : 401;
        snprintf(v->expected, sizeof v->expected, "%ld with an Error", want);
        if (st != want) {
            snprintf(detail, sizeof detail, "answered %ld, not %ld%s", st, want,
                     st < 200 || st >= 300 ? ""
                     : want == 400         ? ": an invalid body was accepted"
                                           : ": an invalid credential was accepted");
            failf(v, gc, detail);
        }
        return;
    }
    case PS_GEN_REFUSED:
        snprintf(v->expected, sizeof v->expected, "401 (or 400) with an Error");
        if (st != 401 && st != 400) {
            snprintf(detail, sizeof detail, "answered %ld%s", st,
                     st >= 200 && st < 300 ? ": a request without one valid credential was "
                                             "served"
                                           : ", not 401 or 400");
            failf(v, gc, detail);
        }
        return;
    case PS_GEN_BYTES:
        snprintf(v->expected, sizeof v->expected,
                 "400, or 201 with a Category in UTF-8 JSON (RFC 8259 8.1)");
        if (st == 201) {
            judge_created(gc, body, body_len, ex, false, v);
        } else if (st != 400) {
            snprintf(detail, sizeof detail, "answered %ld%s", st,
                     st >= 500   ? ": a server error for a body it may refuse with 400"
                     : st == 401 ? ": the configured key was refused"
                                 : ", not 400 (an invalid body) or 201");
            failf(v, gc, detail);
        }
        return;
    case PS_GEN_ACCEPTED:
        snprintf(v->expected, sizeof v->expected, "2xx: the configured key");
        if (st < 200 || st >= 300) {
            snprintf(detail, sizeof detail, "answered %ld: the configured key was refused", st);
            failf(v, gc, detail);
        }
        return;
    default:
        return;
    }
}
