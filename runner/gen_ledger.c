/* gen_ledger.c - every create of the run against its 201 and the list (see
 * gen_ledger.h). */
#define _GNU_SOURCE /* memmem */
#include "runner/gen_ledger.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hash.h"

#define CK PS_CK_ROUNDTRIP_STORED_AS_ANSWERED
/* Bytes of each field kept for a message (the hash decides equality). */
#define HEAD 48

typedef struct entry {
    int64_t id;
    uint64_t name_hash, desc_hash; /* of the 201's values */
    uint32_t name_len, desc_len;
    uint8_t has_desc;  /* the 201 carried a string description */
    uint8_t judged;    /* compared with a list (or found missing) */
    uint8_t shared_id; /* another create got this id: which listed item is whose is unknown */
    uint8_t name_kept, desc_kept; /* bytes of each head: HEAD or less, never half a character */
    uint8_t echo;                 /* the 201 against the request: ECHO_* */
    char name_head[HEAD], desc_head[HEAD];
} entry;

/* The 201 against the request: no value sent to compare with (bytes not
 * UTF-8, a redacted body), the same, or differed (already a failure). */
enum { ECHO_UNKNOWN, ECHO_SAME, ECHO_DIFFERED };

typedef struct ledger {
    unsigned n, dropped;
    entry e[PS_LEDGER_CAPACITY];
} ledger;

_Static_assert(sizeof(ledger) <= PS_LEDGER_STATE_SIZE, "PS_LEDGER_STATE_SIZE too small");

/* ---- reading and printing ---------------------------------------------------- */

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* The value of a \u escape's 4 hex digits at s, or -1. */
static long hex4(const char *s)
{
    long v = 0;
    for (int k = 0; k < 4; k++) {
        int d = hexval(s[k]);
        if (d < 0) return -1;
        v = v * 16 + d;
    }
    return v;
}

/* Rewrites every lone surrogate escape inside a string of text to \ufffd
 * (same length): what the runner reads an unpredictable value as. */
static void replace_lone_surrogates(char *text, size_t len)
{
    bool in_string = false;
    for (size_t i = 0; i < len; i++) {
        if (!in_string) {
            in_string = text[i] == '"';
            continue;
        }
        if (text[i] == '"') {
            in_string = false;
            continue;
        }
        if (text[i] != '\\' || i + 1 >= len) continue;
        if (text[i + 1] != 'u' || i + 6 > len) {
            i++;
            continue;
        }
        long v = hex4(text + i + 2);
        bool lone = v >= 0xdc00 && v <= 0xdfff;
        if (v >= 0xd800 && v <= 0xdbff) {
            long low = i + 12 <= len && text[i + 6] == '\\' && text[i + 7] == 'u'
                           ? hex4(text + i + 8)
                           : -1;
            if (low >= 0xdc00 && low <= 0xdfff)
                i += 6; /* a pair: skip its high half */
            else
                lone = true;
        }
        if (lone) memcpy(text + i + 2, "fffd", 4);
        i += 5;
    }
}

ps_json *ps_ledger_parse_text(const char *text, size_t len)
{
    ps_json_failure f = PS_JSON_OK;
    ps_json *v = ps_json_parse(text, len, &f, NULL);
    if (!v && f == PS_JSON_BAD_ESCAPE) {
        char *copy = malloc(len + 1);
        if (!copy) abort();
        memcpy(copy, text, len);
        copy[len] = '\0';
        replace_lone_surrogates(copy, len);
        v = ps_json_parse(copy, len, NULL, NULL);
        free(copy);
    }
    return v;
}

ps_json *ps_ledger_parse_body(const ps_exchange *ex, char *why, size_t why_size)
{
    ps_json *v = ex->truncated
                     ? NULL
                     : ps_ledger_parse_text(ex->body.data ? ex->body.data : "", ex->body.len);
    return v ? v : ps_conform_parse_body(ex, why, why_size);
}

/* The length of the UTF-8 sequence at s (at most len bytes), 0 when the
 * bytes there are not UTF-8. */
static size_t utf8_seq(const char *s, size_t len, uint32_t *cp)
{
    unsigned char b = (unsigned char)s[0];
    size_t n = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 0;
    if (!n || n > len || !ps_utf8_valid(s, n)) return 0;
    uint32_t v = b & (0x7F >> n);
    for (size_t k = 1; k < n; k++)
        v = (v << 6) | ((unsigned char)s[k] & 0x3F);
    *cp = v;
    return n;
}

void ps_ledger_escape(ps_buf *out, const char *s, size_t len, size_t max)
{
    for (size_t i = 0; i < len;) {
        if (i >= max) {
            ps_buf_puts(out, "...");
            return;
        }
        unsigned char ch = (unsigned char)s[i];
        uint32_t cp = 0;
        size_t n;
        if (ch == '"' || ch == '\\') {
            ps_buf_putc(out, '\\');
            ps_buf_putc(out, (char)ch);
            i++;
        } else if (ch == '\n' || ch == '\t' || ch == '\r') {
            ps_buf_puts(out, ch == '\n' ? "\\n" : ch == '\t' ? "\\t" : "\\r");
            i++;
        } else if (ch < 0x20 || ch == 0x7f) {
            ps_buf_printf(out, "\\u%04x", ch);
            i++;
        } else if (ch < 0x80) {
            ps_buf_putc(out, (char)ch);
            i++;
        } else if ((n = utf8_seq(s + i, len - i, &cp)) == 0) {
            ps_buf_printf(out, "\\x%02x", ch);
            i++;
        } else {
            /* invisible or line-breaking characters would hide a difference */
            if (cp <= 0xA0 || cp == 0x2028 || cp == 0x2029 || cp == 0xFEFF)
                ps_buf_printf(out, "\\u%04x", (unsigned)cp);
            else
                ps_buf_append(out, s + i, n);
            i += n;
        }
    }
}

/* ---- the observer --------------------------------------------------------------- */

/* POST {base}/categories: a create. */
static bool is_create(const ps_exchange *ex)
{
    static const char path[] = "/categories";
    size_t n = ex->url ? strlen(ex->url) : 0, p = sizeof path - 1;
    return ex->method && strcmp(ex->method, "POST") == 0 && n >= p &&
           strcmp(ex->url + n - p, path) == 0;
}

static bool same(const ps_json *a, const ps_json *b)
{
    return a && b && a->type == PS_JSON_STRING && b->type == PS_JSON_STRING && a->len == b->len &&
           memcmp(a->str, b->str, a->len) == 0;
}

/* Compares one field of a 201 (got, NULL when absent) with the values the
 * request sent for it (any of a repeated member, RFC 8259 4). Returns false
 * after recording a failure. */
static bool echo_field(ps_conform *c, const ps_exchange *ex, int64_t id, const ps_json *sent,
                       const char *field, const ps_json *got)
{
    const ps_json *first = NULL;
    unsigned values = 0;
    for (size_t i = 0; i < sent->count; i++) {
        if (strcmp(sent->keys[i], field) != 0 || sent->items[i]->type != PS_JSON_STRING) continue;
        if (same(sent->items[i], got)) return true;
        if (!values++) first = sent->items[i];
    }
    if (!values) return true; /* nothing sent to compare with */
    ps_buf m = PS_BUF_INIT;
    ps_buf_printf(&m, "category %" PRId64 ": its 201 has ", id);
    if (got) {
        ps_buf_printf(&m, "%s \"", field);
        ps_ledger_escape(&m, got->str, got->len, 120);
        ps_buf_printf(&m, "\" (%zu bytes)", got->len);
    } else {
        ps_buf_printf(&m, "no %s", field);
    }
    ps_buf_printf(&m, ", the request sent \"");
    ps_ledger_escape(&m, first->str, first->len, 120);
    ps_buf_printf(&m, "\" (%zu bytes)%s", first->len,
                  values > 1 ? " and another value (a repeated member: either may be taken)" : "");
    ps_conform_fail(c, CK, ex, "the created Category with the name and description sent", "%s",
                    m.data);
    ps_buf_free(&m);
    return false;
}

/* The 201 against the request, when the request is JSON the runner can
 * read (bytes that are not UTF-8, or a lone surrogate, have no value to
 * compare with) and was recorded whole (a redacted secret shows as ***). */
static int judge_echo(ps_conform *c, const ps_exchange *ex, int64_t id, const ps_json *name,
                      const ps_json *desc)
{
    int echo = ECHO_UNKNOWN;
    const char *body = ex->req_body.data ? ex->req_body.data : "";
    if (memmem(body, ex->req_body.len, "***", 3)) return echo;
    ps_json *sent = ps_json_parse(body, ex->req_body.len, NULL, NULL);
    if (!sent || sent->type != PS_JSON_OBJECT) goto out;
    bool ok = echo_field(c, ex, id, sent, "name", name);
    ok = echo_field(c, ex, id, sent, "description", desc) && ok;
    if (ok) ps_conform_pass(c, CK);
    echo = ok ? ECHO_SAME : ECHO_DIFFERED;
out:
    ps_json_free(sent);
    return echo;
}

/* How much of a string a head keeps: HEAD bytes, cut back to a character's
 * start when the string is UTF-8 (the message would show \xf0 otherwise). */
static size_t head_len(const ps_json *v)
{
    if (v->len <= HEAD) return v->len;
    return ps_utf8_valid(v->str, v->len) ? ps_utf8_floor(v->str, HEAD) : HEAD;
}

static void record(ledger *l, int64_t id, const ps_json *name, const ps_json *desc, int echo)
{
    for (unsigned k = 0; k < l->n; k++) {
        if (l->e[k].id != id) continue;
        l->e[k].shared_id = 1; /* roundtrip.ids-unique names it */
        return;
    }
    if (l->n == PS_LEDGER_CAPACITY) {
        l->dropped++;
        return;
    }
    entry *e = &l->e[l->n++];
    memset(e, 0, sizeof *e);
    e->id = id;
    e->echo = (uint8_t)echo;
    e->name_hash = ps_hash_bytes(name->str, name->len);
    e->name_len = (uint32_t)name->len;
    e->name_kept = (uint8_t)head_len(name);
    memcpy(e->name_head, name->str, e->name_kept);
    if (desc) {
        e->has_desc = 1;
        e->desc_hash = ps_hash_bytes(desc->str, desc->len);
        e->desc_len = (uint32_t)desc->len;
        e->desc_kept = (uint8_t)head_len(desc);
        memcpy(e->desc_head, desc->str, e->desc_kept);
    }
}

void ps_ledger_observe(ps_conform *c, void *state, const ps_observation *o)
{
    ledger *l = state;
    const ps_exchange *ex = o->ex;
    if (!is_create(ex) || ex->status < 200 || ex->status >= 300) return;
    ps_json *got = ps_ledger_parse_body(ex, NULL, 0);
    const ps_json *id = ps_json_get(got, "id");
    const ps_json *name = ps_json_get(got, "name");
    const ps_json *desc = ps_json_get(got, "description");
    /* not a Category: schema.created-category and its like say so */
    if (!id || id->type != PS_JSON_NUMBER || !id->is_int || !name || name->type != PS_JSON_STRING)
        goto out;
    if (desc && desc->type != PS_JSON_STRING) desc = NULL;
    record(l, id->i, name, desc, judge_echo(c, ex, id->i, name, desc));
out:
    ps_json_free(got);
}

/* ---- the list --------------------------------------------------------------------- */

/* One field of a listed item (got, NULL when absent or not a string)
 * against the 201's. Returns false after recording a failure. */
static bool listed_field(ps_conform *c, const ps_exchange *ex, const entry *e, const char *field,
                         const ps_json *got, size_t list_len)
{
    bool desc = field[0] == 'd';
    uint64_t h = desc ? e->desc_hash : e->name_hash;
    size_t len = desc ? e->desc_len : e->name_len;
    const char *head = desc ? e->desc_head : e->name_head;
    size_t kept = desc ? e->desc_kept : e->name_kept;
    if (got && got->len == len && ps_hash_bytes(got->str, got->len) == h) return true;
    ps_buf m = PS_BUF_INIT;
    ps_buf_printf(&m, "category %" PRId64 " is listed (a list of %zu) with ", e->id, list_len);
    if (got) {
        size_t at = 0;
        while (at < kept && at < got->len && got->str[at] == head[at])
            at++;
        ps_buf_printf(&m, "%s \"", field);
        ps_ledger_escape(&m, got->str, got->len, 120);
        ps_buf_printf(&m, "\" (%zu bytes), its 201 answered \"", got->len);
        ps_ledger_escape(&m, head, kept, HEAD);
        ps_buf_printf(&m, "%s\" (%zu bytes; ", len > kept ? "..." : "", len);
        if (at < kept || (at == kept && kept == len))
            ps_buf_printf(&m, "they differ from byte %zu)", at);
        else
            ps_buf_printf(&m, "equal in the first %zu bytes)", at);
    } else {
        ps_buf_printf(&m, "no string %s, its 201 answered \"", field);
        ps_ledger_escape(&m, head, kept, HEAD);
        ps_buf_printf(&m, "%s\" (%zu bytes)", len > kept ? "..." : "", len);
    }
    ps_buf_puts(&m, e->echo == ECHO_SAME ? ", as the request sent" : "");
    ps_buf_puts(&m, ": the service stored something other than it answered");
    ps_conform_fail(c, CK, ex, "every created category listed as its 201 answered", "%s", m.data);
    ps_buf_free(&m);
    return false;
}

void ps_ledger_judge_list(ps_conform *c, const ps_json *list, const ps_exchange *ex, bool final)
{
    ledger *l = ps_conform_observer_state(c, ps_ledger_observe);
    if (!l || !ps_conform_selected(c, CK) || !list || list->type != PS_JSON_ARRAY) return;
    for (unsigned k = 0; k < l->n; k++) {
        entry *e = &l->e[k];
        if (e->judged || e->shared_id) continue;
        e->judged = 1;
        const ps_json *item = NULL;
        for (size_t i = 0; i < list->count && !item; i++) {
            const ps_json *id = ps_json_get(list->items[i], "id");
            if (id && id->type == PS_JSON_NUMBER && id->is_int && id->i == e->id)
                item = list->items[i];
        }
        if (!item) {
            char exp[64];
            snprintf(exp, sizeof exp, "an item with id %" PRId64, e->id);
            ps_conform_fail(c, CK, ex, exp,
                            "category %" PRId64 " was created (a 2xx with its id) but is not in "
                            "the list of %zu items (spec 4: the list returns all categories)",
                            e->id, list->count);
            continue;
        }
        const ps_json *name = ps_json_get(item, "name");
        const ps_json *desc = ps_json_get(item, "description");
        if (name && name->type != PS_JSON_STRING) name = NULL;
        if (desc && desc->type != PS_JSON_STRING) desc = NULL;
        bool ok = listed_field(c, ex, e, "name", name, list->count);
        /* a description the 201 did not show is roundtrip.no-invented-description's */
        if (e->has_desc) ok = listed_field(c, ex, e, "description", desc, list->count) && ok;
        if (ok) ps_conform_pass(c, CK);
    }
    if (final && !l->n)
        ps_conform_not_applicable(c, CK, "the run created no category (no 2xx to a create)");
}
