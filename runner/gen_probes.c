/* gen_probes.c - the seeded generator of the generative phase (see
 * gen_probes.h). Each probe is one row of the table at the bottom: what it
 * varies, the check and clause that judge it, the builder and the forms
 * it sends. */
#include "runner/gen_probes.h"

#include <stdio.h>
#include <string.h>

/* ---- randomness ------------------------------------------------------------- */

void ps_gen_rng_seed(ps_gen_rng *r, uint64_t seed)
{
    r->state = seed;
}

uint64_t ps_gen_rng_next(ps_gen_rng *r)
{
    uint64_t z = (r->state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

uint32_t ps_gen_rng_below(ps_gen_rng *r, uint32_t n)
{
    return (uint32_t)(ps_gen_rng_next(r) % n);
}

#define NELEM(arr) (sizeof(arr) / sizeof((arr)[0]))
#define PICK(r, arr) ((arr)[ps_gen_rng_below((r), (uint32_t)NELEM(arr))])

/* ---- units: characters as JSON text ------------------------------------------ */

static size_t utf8_encode(uint32_t cp, char *out)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* cp as a \u escape (a surrogate pair beyond the BMP), hex in either case. */
static size_t json_escape_cp(uint32_t cp, bool upper, char *out)
{
    if (cp < 0x10000)
        return (size_t)(upper ? snprintf(out, 16, "\\u%04X", cp)
                              : snprintf(out, 16, "\\u%04x", cp));
    uint32_t v = cp - 0x10000;
    size_t n = json_escape_cp(0xD800 + (v >> 10), upper, out);
    return n + json_escape_cp(0xDC00 + (v & 0x3FF), upper, out + n);
}

/* Adds cp as one unit: raw UTF-8, or (escaped) as a \u escape. */
static void add_cp(ps_gen_case *gc, uint32_t cp, int escaped, bool fixed)
{
    char buf[32];
    size_t n;
    if (escaped)
        n = json_escape_cp(cp, escaped == 2, buf);
    else
        n = utf8_encode(cp, buf);
    ps_gen_case_add_unit(gc, buf, n, fixed);
}

/* Adds plain text (no quote, backslash or control characters) as fixed units. */
static void add_fixed(ps_gen_case *gc, const char *s)
{
    ps_gen_case_add_unit(gc, s, strlen(s), true);
}

/* White space of several kinds, as JSON text (one character each). */
static const char *const spaces[] = {" ",        "\\t",          "\\n",          "\\r",
                                     "\xc2\xa0", "\\u00a0",      "\xe2\x80\x83", "\xe3\x80\x80",
                                     "\\u2028",  "\xe2\x80\xa9", "\\u000b",      "\\f"};

static void add_spaces(ps_gen_rng *r, ps_gen_case *gc, unsigned min, unsigned max)
{
    unsigned n = min + ps_gen_rng_below(r, max - min + 1);
    for (unsigned i = 0; i < n; i++) {
        const char *s = PICK(r, spaces);
        ps_gen_case_add_unit(gc, s, strlen(s), false);
    }
}

/* Characters of every Unicode plane: 0 (BMP), 1, 2, 3, 14, 15, 16. */
static const uint32_t plane_chars[] = {0xE9,    0x732B,  0x2028,  0xFFFD,  0xFB01,
                                       0x1F408, 0x1D11E, 0x20BB7, 0x2A6D6, 0x30000,
                                       0xE0041, 0xF0000, 0x10FFFD};

/* ---- the bodies ---------------------------------------------------------------- */

/* The body around the probed string: field 0 probes name (the description,
 * when the name cannot carry the tag, does), field 1 the description. */
static void frame_string(ps_gen_case *gc, const ps_gen_context *ctx, size_t i, int field,
                         bool name_has_tag)
{
    if (field == 0) {
        ps_buf_puts(&gc->head, "{\"name\":\"");
        if (name_has_tag)
            ps_buf_puts(&gc->tail, "\"}");
        else
            ps_buf_printf(&gc->tail, "\",\"description\":\"%s%zu\"}", ctx->tag, i);
    } else {
        ps_buf_printf(&gc->head, "{\"name\":\"%s%zu\",\"description\":\"", ctx->tag, i);
        ps_buf_puts(&gc->tail, "\"}");
    }
}

static void add_tag(ps_gen_case *gc, const ps_gen_context *ctx, size_t i)
{
    char t[64];
    snprintf(t, sizeof t, "%s%zu", ctx->tag, i);
    add_fixed(gc, t);
}

/* The probed string after the tag and a space when it is the name: the
 * text the builder adds next is what is probed. */
static void frame_tag_first(ps_gen_case *gc, const ps_gen_context *ctx, size_t i, int field)
{
    frame_string(gc, ctx, i, field, true);
    if (field == 0) {
        add_tag(gc, ctx, i);
        add_fixed(gc, " ");
    }
}

typedef struct probe probe;
typedef void (*build_fn)(const probe *p, ps_gen_rng *r, int form, size_t i,
                         const ps_gen_context *ctx, ps_gen_case *gc);
struct probe {
    const char *what;
    int field; /* 0 name, 1 description, -1 none */
    ps_check_id ck;
    ps_gen_expect expect;
    const char *clause;
    build_fn build;
    /* What the coverage pass sends each once (form >= 0) and later cases
     * draw one of (form -1): forms[nforms], or with forms NULL the nforms
     * forms the builder tells apart itself (1: the builder's one). */
    const char *const *forms;
    unsigned nforms;
};

/* The index of a case's form: the coverage pass's, else one drawn. */
static unsigned form_index(const probe *p, ps_gen_rng *r, int form)
{
    return form >= 0 ? (unsigned)form % p->nforms : ps_gen_rng_below(r, p->nforms);
}

/* The text of a case's form (a probe with forms[]). */
static const char *form_of(const probe *p, ps_gen_rng *r, int form)
{
    return p->forms[form_index(p, r, form)];
}

static const char *const field_names[] = {"name", "description"};

#define STRING_CLAUSE                                                                              \
    "spec 2 NewCategory: a string; spec 4 createCategory: 201 with the Category as sent (length "  \
    "limits not shown: 400 allowed; never 5xx)"

static void build_empty(const probe *p, ps_gen_rng *r, int form, size_t i,
                        const ps_gen_context *ctx, ps_gen_case *gc)
{
    (void)r;
    frame_string(gc, ctx, i, p->field, false);
}

static void build_spaces_only(const probe *p, ps_gen_rng *r, int form, size_t i,
                              const ps_gen_context *ctx, ps_gen_case *gc)
{
    frame_string(gc, ctx, i, p->field, false);
    add_spaces(r, gc, 1, 4);
}

static void build_spaces_around(const probe *p, ps_gen_rng *r, int form, size_t i,
                                const ps_gen_context *ctx, ps_gen_case *gc)
{
    frame_string(gc, ctx, i, p->field, true);
    add_spaces(r, gc, 1, 3);
    if (p->field == 0)
        add_tag(gc, ctx, i);
    else
        add_fixed(gc, "around");
    add_spaces(r, gc, 1, 3);
}

static void build_long(const probe *p, ps_gen_rng *r, int form, size_t i, const ps_gen_context *ctx,
                       ps_gen_case *gc)
{
    static const unsigned lengths[] = {256, 1000, 1001, 1024, 2048, 4096, 5000};
    static const uint32_t wide[] = {0xE9, 0x732B, 0x1F408};
    frame_tag_first(gc, ctx, i, p->field);
    /* The coverage pass sends the longest, so that every run crosses a
     * length limit up to it; a drawn length there missed a limit at 1000
     * in about 1 run of 40 (runner_generate_replay). */
    unsigned n = form >= 0 ? lengths[NELEM(lengths) - 1] : PICK(r, lengths);
    for (unsigned k = 0; k < n; k++) {
        if (ps_gen_rng_below(r, 16) == 0)
            add_cp(gc, PICK(r, wide), 0, false);
        else
            add_cp(gc, 'a' + ps_gen_rng_below(r, 26), 0, false);
    }
}

static void build_planes(const probe *p, ps_gen_rng *r, int form, size_t i,
                         const ps_gen_context *ctx, ps_gen_case *gc)
{
    frame_tag_first(gc, ctx, i, p->field);
    /* every plane once, in a random order and form, then a few more */
    size_t n = sizeof plane_chars / sizeof plane_chars[0];
    uint32_t order[sizeof plane_chars / sizeof plane_chars[0]];
    memcpy(order, plane_chars, sizeof order);
    for (size_t k = n - 1; k > 0; k--) {
        size_t j = ps_gen_rng_below(r, (uint32_t)(k + 1));
        uint32_t t = order[k];
        order[k] = order[j];
        order[j] = t;
    }
    for (size_t k = 0; k < n; k++)
        add_cp(gc, order[k], (int)ps_gen_rng_below(r, 3), false);
}

static void build_controls(const probe *p, ps_gen_rng *r, int form, size_t i,
                           const ps_gen_context *ctx, ps_gen_case *gc)
{
    static const char *const short_forms[] = {"\\b", "\\f", "\\n", "\\r", "\\t"};
    frame_string(gc, ctx, i, p->field, true);
    if (p->field == 0) add_tag(gc, ctx, i);
    /* NUL escaped, in every such case: a C string would end there (stored or listed
     * cut short); raw it is the bytes probe's */
    ps_gen_case_add_unit(gc, "\\u0000", 6, false);
    unsigned n = 2 + ps_gen_rng_below(r, 6);
    for (unsigned k = 0; k < n; k++) {
        unsigned kind = ps_gen_rng_below(r, 4);
        if (kind == 0) {
            const char *s = PICK(r, short_forms);
            ps_gen_case_add_unit(gc, s, strlen(s), false);
        } else if (kind == 1) {
            ps_gen_case_add_unit(gc, "\x7f", 1, false); /* DEL may be sent raw */
        } else {
            add_cp(gc, ps_gen_rng_below(r, 0x20), 1 + (int)ps_gen_rng_below(r, 2), false);
        }
        add_cp(gc, 'a' + ps_gen_rng_below(r, 26), 0, false);
    }
}

/* The same text in other JSON forms: characters as \u escapes (either hex
 * case), "\/" for '/', the two-character escapes of '"' and '\'. */
static void build_escapes(const probe *p, ps_gen_rng *r, int form, size_t i,
                          const ps_gen_context *ctx, ps_gen_case *gc)
{
    frame_string(gc, ctx, i, p->field, true);
    char text[96];
    snprintf(text, sizeof text, "%s%zu/a\"b\\c\xc3\xa9\xf0\x9f\x90\x88", ctx->tag, i);
    /* the tag's characters are escaped too: they are what is sent, and still the tag */
    for (const unsigned char *s = (const unsigned char *)text; *s;) {
        uint32_t cp = *s;
        size_t len = 1;
        if (cp >= 0xF0)
            cp =
                ((cp & 7u) << 18) | ((s[1] & 0x3Fu) << 12) | ((s[2] & 0x3Fu) << 6) | (s[3] & 0x3Fu),
            len = 4;
        else if (cp >= 0xE0)
            cp = ((cp & 15u) << 12) | ((s[1] & 0x3Fu) << 6) | (s[2] & 0x3Fu), len = 3;
        else if (cp >= 0xC0)
            cp = ((cp & 31u) << 6) | (s[1] & 0x3Fu), len = 2;
        unsigned how = ps_gen_rng_below(r, 3);
        bool fixed = p->field == 0 && (const char *)s < text + strlen(ctx->tag);
        if (cp == '"' || cp == '\\') {
            if (how == 0)
                ps_gen_case_add_unit(gc, cp == '"' ? "\\\"" : "\\\\", 2, fixed);
            else
                add_cp(gc, cp, (int)how, fixed);
        } else if (cp == '/' && how == 0) {
            ps_gen_case_add_unit(gc, "\\/", 2, fixed);
        } else {
            add_cp(gc, cp, (int)how, fixed);
        }
        s += len;
    }
}

/* ---- bytes ------------------------------------------------------------------- */

#define BYTES_CLAUSE                                                                               \
    "RFC 8259 8.1: JSON text MUST be UTF-8, 7: control characters MUST be escaped (such a body "   \
    "may be refused with 400); spec 4: accepted, the 201 is a Category in JSON, never 5xx"

/* Bytes that are not UTF-8 (RFC 3629): a stray continuation byte, 0xFF, a
 * sequence cut short, overlong forms, a surrogate raw (CESU-8), a code
 * point beyond U+10FFFF; the last form is a raw NUL (sent apart: it ends a
 * C string), which JSON does not allow unescaped. */
static const char *const bad_utf8_forms[] = {
    "\x80",     "\xff",         "\xc3\x61", /* a lead byte, then 'a' */
    "\xc0\xaf", "\xe0\x80\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80"};

static void build_bad_utf8(const probe *p, ps_gen_rng *r, int form, size_t i,
                           const ps_gen_context *ctx, ps_gen_case *gc)
{
    unsigned k = form_index(p, r, form);
    frame_tag_first(gc, ctx, i, p->field);
    add_fixed(gc, "x");
    if (k < NELEM(bad_utf8_forms))
        ps_gen_case_add_unit(gc, bad_utf8_forms[k], strlen(bad_utf8_forms[k]), false);
    else
        ps_gen_case_add_unit(gc, "", 1, false); /* the NUL byte */
    ps_gen_case_add_unit(gc, "b", 1, false);
}

#define SURROGATE_CLAUSE                                                                           \
    "RFC 8259 8.2: a string with a lone surrogate escape is valid grammar whose meaning is "       \
    "unpredictable (400 allowed); spec 2: an unknown member is ignored (201 exactly), never 5xx"

static const char *const lone_surrogate_forms[] = {"\\ud800", "\\uDC00", "\\udc08\\ud83d"};

/* In an unknown member only: a service may store a lone surrogate it read
 * and then fail to write any list holding it (Flask with ensure_ascii off
 * answers 500 from then on, which RFC 8259 8.2 foresees: "fatal runtime
 * exceptions"), so one in name or description would fail every later check
 * that lists. Raw CESU-8 bytes (bad_utf8_forms) reach the stored fields. */
static void build_lone_surrogate(const probe *p, ps_gen_rng *r, int form, size_t i,
                                 const ps_gen_context *ctx, ps_gen_case *gc)
{
    const char *u = form_of(p, r, form);
    ps_buf_printf(&gc->head, "{\"name\":\"%s%zu\",\"note\":\"x", ctx->tag, i);
    ps_gen_case_add_unit(gc, u, strlen(u), false);
    ps_gen_case_add_unit(gc, "b", 1, false);
    ps_buf_puts(&gc->tail, "\"}");
}

/* ---- members ---------------------------------------------------------------- */

#define MEMBERS_CLAUSE                                                                             \
    "spec 2 NewCategory (name required, description optional); spec 4 createCategory rule 1; "     \
    "RFC 8259 8.3: member names compare code unit by code unit"

static const char *const name_other_case_forms[] = {"NAME", "Name", "nAme", "namE"};

static void build_name_other_case(const probe *p, ps_gen_rng *r, int form, size_t i,
                                  const ps_gen_context *ctx, ps_gen_case *gc)
{
    ps_buf_printf(&gc->head, "{\"%s\":\"%s%zu\"}", form_of(p, r, form), ctx->tag, i);
}

static const char *const name_both_cases_forms[] = {"NAME", "Name"};

static void build_name_both_cases(const probe *p, ps_gen_rng *r, int form, size_t i,
                                  const ps_gen_context *ctx, ps_gen_case *gc)
{
    const char *other = form_of(p, r, form);
    if (ps_gen_rng_below(r, 2))
        ps_buf_printf(&gc->head, "{\"name\":\"%s%zu\",\"%s\":\"%s%zu other\"}", ctx->tag, i, other,
                      ctx->tag, i);
    else
        ps_buf_printf(&gc->head, "{\"%s\":\"%s%zu other\",\"name\":\"%s%zu\"}", other, ctx->tag, i,
                      ctx->tag, i);
}

static const char *const json_values[] = {"\"red\"",
                                          "0",
                                          "-0",
                                          "1.5e3",
                                          "true",
                                          "null",
                                          "[]",
                                          "{}",
                                          "[1,\"a\",{\"b\":null}]",
                                          "{\"name\":\"inner\"}",
                                          "1E+400",
                                          "123456789012345678901234567890"};

static void build_unknown_member(const probe *p, ps_gen_rng *r, int form, size_t i,
                                 const ps_gen_context *ctx, ps_gen_case *gc)
{
    (void)p;
    static const char *const names[] = {"colour", "id2", "names", "nameX", " name",      "name ",
                                        "_name",  "",    "Name",  "tags",  "\\u006eame2"};
    const char *key = PICK(r, names), *value = PICK(r, json_values);
    if (ps_gen_rng_below(r, 2))
        ps_buf_printf(&gc->head, "{\"name\":\"%s%zu\",\"%s\":%s}", ctx->tag, i, key, value);
    else
        ps_buf_printf(&gc->head, "{\"%s\":%s,\"name\":\"%s%zu\"}", key, value, ctx->tag, i);
}

static void build_repeated_member(const probe *p, ps_gen_rng *r, int form, size_t i,
                                  const ps_gen_context *ctx, ps_gen_case *gc)
{
    if (form_index(p, r, form))
        ps_buf_printf(&gc->head, "{\"name\":\"%s%zu a\",\"name\":\"%s%zu b\"}", ctx->tag, i,
                      ctx->tag, i);
    else
        ps_buf_printf(&gc->head, "{\"name\":\"%s%zu\",\"description\":\"a\",\"description\":\"b\"}",
                      ctx->tag, i);
}

static void build_nesting(const probe *p, ps_gen_rng *r, int form, size_t i,
                          const ps_gen_context *ctx, ps_gen_case *gc)
{
    (void)p;
    unsigned depth = 2 + ps_gen_rng_below(r, 30);
    ps_buf_printf(&gc->head, "{\"name\":\"%s%zu\",\"meta\":", ctx->tag, i);
    ps_buf inner = PS_BUF_INIT;
    for (unsigned d = 0; d < depth; d++)
        ps_buf_puts(&gc->head, (d & 1) ? "{\"k\":" : "[");
    ps_buf_puts(&gc->head, "\"deep\"");
    for (unsigned d = depth; d-- > 0;)
        ps_buf_puts(&gc->head, (d & 1) ? "}" : "]");
    ps_buf_puts(&gc->head, "}");
    ps_buf_free(&inner);
}

static void build_name_container(const probe *p, ps_gen_rng *r, int form, size_t i,
                                 const ps_gen_context *ctx, ps_gen_case *gc)
{
    if (form_index(p, r, form))
        ps_buf_printf(&gc->head, "{\"name\":[\"%s%zu\"]}", ctx->tag, i);
    else
        ps_buf_printf(&gc->head, "{\"name\":{\"name\":\"%s%zu\"}}", ctx->tag, i);
}

static const char *const number_forms[] = {
    "0",   "-0",    "1e2", "1E+2", "-1.0e-3", "0.1", "1e400", "-1e400", "12345678901234567890",
    "3.0", "1E-400"};

static void build_number_field(const probe *p, ps_gen_rng *r, int form, size_t i,
                               const ps_gen_context *ctx, ps_gen_case *gc)
{
    if (p->field == 0)
        ps_buf_printf(&gc->head, "{\"name\":%s,\"description\":\"%s%zu\"}", PICK(r, number_forms),
                      ctx->tag, i);
    else
        ps_buf_printf(&gc->head, "{\"name\":\"%s%zu\",\"description\":%s}", ctx->tag, i,
                      PICK(r, number_forms));
}

static void build_number_unknown(const probe *p, ps_gen_rng *r, int form, size_t i,
                                 const ps_gen_context *ctx, ps_gen_case *gc)
{
    (void)p;
    ps_buf_printf(&gc->head, "{\"name\":\"%s%zu\",\"n\":%s}", ctx->tag, i, PICK(r, number_forms));
}

/* RFC 8259 2: white space is allowed before and after any structural character. */
static void build_json_spaces(const probe *p, ps_gen_rng *r, int form, size_t i,
                              const ps_gen_context *ctx, ps_gen_case *gc)
{
    (void)p;
    static const char *const ws[] = {"", " ", "\t", "\n", "\r\n", "  \t"};
    ps_buf_printf(&gc->head, "%s{%s\"name\"%s:%s\"%s%zu\"%s,%s\"description\"%s:%s\"d\"%s}%s",
                  PICK(r, ws), PICK(r, ws), PICK(r, ws), PICK(r, ws), ctx->tag, i, PICK(r, ws),
                  PICK(r, ws), PICK(r, ws), PICK(r, ws), PICK(r, ws), PICK(r, ws));
}

/* ---- Content-Type -------------------------------------------------------------- */

#define CT_CLAUSE                                                                                  \
    "spec 4: requests use application/json; RFC 9110 8.3.1: type, subtype and parameter names "    \
    "are case-insensitive, parameters may follow"

static void plain_body(ps_gen_case *gc, const ps_gen_context *ctx, size_t i)
{
    ps_buf_printf(&gc->head, "{\"name\":\"%s%zu\"}", ctx->tag, i);
}

static const char *const ct_variant_forms[] = {"application/json; charset=utf-8",
                                               "application/json;charset=UTF-8",
                                               "application/json ; charset=utf-8",
                                               "Application/JSON",
                                               "APPLICATION/JSON",
                                               "application/JSON; Charset=\"utf-8\""};

static void build_ct_variant(const probe *p, ps_gen_rng *r, int form, size_t i,
                             const ps_gen_context *ctx, ps_gen_case *gc)
{
    plain_body(gc, ctx, i);
    ps_gen_case_set_content_type(gc, form_of(p, r, form));
}

static void build_ct_missing(const probe *p, ps_gen_rng *r, int form, size_t i,
                             const ps_gen_context *ctx, ps_gen_case *gc)
{
    (void)p, (void)r;
    plain_body(gc, ctx, i);
    ps_gen_case_set_content_type(gc, NULL);
}

/* ---- Authorization --------------------------------------------------------------- */

#define AUTH_CLAUSE                                                                                \
    "spec 5 rule 1: an invalid key, or no valid credential, is answered with 401 (RFC 6750 3.1: "  \
    "a malformed one may get 400)"

/* The request of a credential probe: a list, or a create the service must
 * refuse (it would be tagged if it did not). */
static void auth_request(ps_gen_rng *r, ps_gen_case *gc, const ps_gen_context *ctx, size_t i)
{
    if (ps_gen_rng_below(r, 2)) {
        snprintf(gc->method, sizeof gc->method, "GET");
        gc->has_body = false;
        ps_gen_case_set_content_type(gc, NULL);
        return;
    }
    plain_body(gc, ctx, i);
}

static const char *const key_case_forms[] = {"Bearer {key^^}", "Bearer {key,,}", "Bearer {key~~}"};

static void build_key_case(const probe *p, ps_gen_rng *r, int form, size_t i,
                           const ps_gen_context *ctx, ps_gen_case *gc)
{
    /* a form the key has (its other cases that differ from it) */
    unsigned k = form_index(p, r, form);
    while (!(ctx->key_cases & (1u << k)))
        k = form >= 0 ? (k + 1) % p->nforms : ps_gen_rng_below(r, p->nforms);
    auth_request(r, gc, ctx, i);
    ps_gen_case_set_auth(gc, 0, p->forms[k]);
}

static const char *const extra_tokens_forms[] = {"Bearer {key} junk", "Bearer {key} {key}",
                                                 "Bearer {key} Bearer {key}", "Bearer {key},junk",
                                                 "Bearer {key};x=1"};

static const char *const other_scheme_forms[] = {"NotBearer {key}", "XBearer {key}",
                                                 "Bearerx {key}",   "Bear {key}",
                                                 "Bearer_ {key}",   "Digest {key}"};

/* The last three are near misses of "Bearer KEY" RFC 6750 2.1 forbids: no
 * SP at all (one token, another scheme), a no-break space (obs-text, white
 * space to Python's str.split) or U+001F (a CTL, white space to it too). */
static const char *const malformed_forms[] = {
    "Bearer: {key}", "{key} Bearer",        "Bearer\"{key}\"", "Bearer={key}",
    "Bearer{key}",   "Bearer\xc2\xa0{key}", "Bearer\x1f{key}"};

/* A credential probe: the request, carrying one of the probe's forms. */
static void build_auth_form(const probe *p, ps_gen_rng *r, int form, size_t i,
                            const ps_gen_context *ctx, ps_gen_case *gc)
{
    auth_request(r, gc, ctx, i);
    ps_gen_case_set_auth(gc, 0, form_of(p, r, form));
}

static void build_repeated_auth(const probe *p, ps_gen_rng *r, int form, size_t i,
                                const ps_gen_context *ctx, ps_gen_case *gc)
{
    (void)p;
    /* Only this order: reading the first of two fields (Node does) is no
     * fault, and refuses this request; skipping a first field with an
     * unknown key to find a valid one in a later field accepts it. */
    auth_request(r, gc, ctx, i);
    ps_gen_case_set_auth(gc, 0, "Bearer {unknown}");
    ps_gen_case_set_auth(gc, 1, "Bearer {key}");
}

/* RFC 9110 5.5: white space around a field value is not part of it. Only
 * leading white space is sent: Python's http.server, among others, keeps
 * the trailing kind in the value, and a service comparing the value whole
 * then refuses a key the spec's own form would carry; a deviation too
 * slight to fail anyone for. */
static const char *const auth_ows_forms[] = {" Bearer {key}", "\tBearer {key}", "  Bearer {key}",
                                             " \tBearer {key}"};

static void build_auth_ows(const probe *p, ps_gen_rng *r, int form, size_t i,
                           const ps_gen_context *ctx, ps_gen_case *gc)
{
    (void)i, (void)ctx;
    snprintf(gc->method, sizeof gc->method, "GET");
    gc->has_body = false;
    ps_gen_case_set_content_type(gc, NULL);
    ps_gen_case_set_auth(gc, 0, form_of(p, r, form));
}

/* ---- the table ------------------------------------------------------------------- */

#define S PS_CK_GENERATE_STRING_FIELDS
#define M PS_CK_GENERATE_MEMBERS
#define C PS_CK_GENERATE_CONTENT_TYPE
#define A PS_CK_GENERATE_CREDENTIALS
/* A probe's forms[] and how many. */
#define FORMS(arr) arr, (unsigned)NELEM(arr)
/* A probe of the string fields: a row for name, one for description. */
#define STRING_ROW(what, field, build)                                                             \
    {                                                                                              \
        what, field, S, PS_GEN_CREATED, STRING_CLAUSE, build, NULL, 1                              \
    }
#define STRING_PROBE(what, build) STRING_ROW(what, 0, build), STRING_ROW(what, 1, build)

static const probe probes[] = {
    STRING_PROBE("empty string", build_empty),
    STRING_PROBE("white space only", build_spaces_only),
    STRING_PROBE("white space around the value", build_spaces_around),
    STRING_PROBE("a long value", build_long),
    STRING_PROBE("a character of every Unicode plane", build_planes),
    STRING_PROBE("escaped control characters", build_controls),
    STRING_PROBE("the text in JSON escape forms", build_escapes),
    {"a number, not a string", 0, S, PS_GEN_400,
     "spec 2 NewCategory: name is a string; spec 4 rule 1: an invalid value is a 400",
     build_number_field, NULL, 1},
    {"a number, not a string", 1, S, PS_GEN_400,
     "spec 2 NewCategory: description is a string; spec 4 rule 1: an invalid value is a 400",
     build_number_field, NULL, 1},
    {"bytes that are not UTF-8 (or a raw NUL)", 0, S, PS_GEN_BYTES, BYTES_CLAUSE, build_bad_utf8,
     NULL, NELEM(bad_utf8_forms) + 1},
    {"bytes that are not UTF-8 (or a raw NUL)", 1, S, PS_GEN_BYTES, BYTES_CLAUSE, build_bad_utf8,
     NULL, NELEM(bad_utf8_forms) + 1},
    {"a lone surrogate escape in an unknown member", -1, S, PS_GEN_CREATED, SURROGATE_CLAUSE,
     build_lone_surrogate, FORMS(lone_surrogate_forms)},
    {"member 'name' in another case only", -1, M, PS_GEN_400,
     "spec 2 NewCategory rule 2, spec 4 rule 1: without the member 'name' a create is a 400 "
     "(RFC 8259 8.3: names compare code unit by code unit)",
     build_name_other_case, FORMS(name_other_case_forms)},
    {"member 'name' beside one in another case", -1, M, PS_GEN_CREATED, MEMBERS_CLAUSE,
     build_name_both_cases, FORMS(name_both_cases_forms)},
    {"an unknown member beside valid ones", -1, M, PS_GEN_CREATED, MEMBERS_CLAUSE,
     build_unknown_member, NULL, 1},
    {"a repeated member", -1, M, PS_GEN_CREATED,
     "spec 2 NewCategory; RFC 8259 4: names SHOULD be unique, a receiver may take either value "
     "(or refuse with 400)",
     build_repeated_member, NULL, 2},
    {"a nested unknown member", -1, M, PS_GEN_CREATED, MEMBERS_CLAUSE, build_nesting, NULL, 1},
    {"name an array or an object", -1, M, PS_GEN_400,
     "spec 2 NewCategory: name is a string; spec 4 rule 1: an invalid value is a 400",
     build_name_container, NULL, 2},
    {"an unknown member in a number form", -1, M, PS_GEN_CREATED, MEMBERS_CLAUSE,
     build_number_unknown, NULL, 1},
    {"insignificant white space between tokens", -1, M, PS_GEN_CREATED,
     "spec 4: a JSON body; RFC 8259 2: white space is allowed around structural characters",
     build_json_spaces, NULL, 1},
    {"Content-Type with parameters or in another case", -1, C, PS_GEN_CREATED_ONLY, CT_CLAUSE,
     build_ct_variant, FORMS(ct_variant_forms)},
    {"no Content-Type", -1, C, PS_GEN_NO_5XX,
     "spec 4: requests use application/json (without Content-Type a service may refuse or read "
     "the JSON; never 5xx)",
     build_ct_missing, NULL, 1},
    {"the key in another case", -1, A, PS_GEN_401,
     "spec 5 rule 1: an invalid key is answered with 401 (a key is matched exactly)",
     build_key_case, FORMS(key_case_forms)},
    {"extra tokens after the key", -1, A, PS_GEN_REFUSED, AUTH_CLAUSE, build_auth_form,
     FORMS(extra_tokens_forms)},
    {"another scheme carrying the key", -1, A, PS_GEN_401,
     "spec 5: the scheme is HTTP bearer, rule 1: no valid credential is answered with 401",
     build_auth_form, FORMS(other_scheme_forms)},
    {"a malformed credential holding the key", -1, A, PS_GEN_REFUSED, AUTH_CLAUSE, build_auth_form,
     FORMS(malformed_forms)},
    {"two Authorization fields, the first with an unknown key", -1, A, PS_GEN_REFUSED,
     "spec 5 rule 1: a request with an invalid key gets 401; RFC 9110 5.3: Authorization is a "
     "singleton (a service may read the first field, or refuse the message with 400)",
     build_repeated_auth, NULL, 1},
    {"white space before the Authorization value", -1, A, PS_GEN_ACCEPTED,
     "spec 5: Authorization: Bearer <API_KEY>; RFC 9110 5.5: white space around a field value is "
     "not part of it",
     build_auth_ows, FORMS(auth_ows_forms)},
};
#define NPROBES (sizeof probes / sizeof probes[0])

/* How many forms the coverage pass sends of a probe (each once). */
static unsigned forms_of(const probe *p)
{
    return p->nforms;
}

size_t ps_gen_probe_count(void)
{
    size_t n = 0;
    for (size_t k = 0; k < NPROBES; k++)
        n += forms_of(&probes[k]);
    return n;
}

/* The coverage pass's i-th case: every form of every probe once, the
 * checks in turn (a string probe, a member probe, a Content-Type probe, a
 * credential probe, ...), so a phase cut short by a small rate limit has
 * judged every check early. Sets *form; returns the probe's index. */
static size_t coverage_probe(size_t i, int *form)
{
    static const ps_check_id turn[] = {S, M, C, A};
    size_t taken[4] = {0}, n = 0;
    for (;;) {
        bool any = false;
        for (size_t t = 0; t < 4; t++) {
            size_t seen = 0; /* forms of this check's probes, in table order */
            for (size_t k = 0; k < NPROBES; k++) {
                if (probes[k].ck != turn[t]) continue;
                unsigned f = forms_of(&probes[k]);
                if (taken[t] >= seen + f) {
                    seen += f;
                    continue;
                }
                *form = (int)(taken[t] - seen);
                taken[t]++;
                any = true;
                if (n++ == i) return k;
                break;
            }
        }
        if (!any) break; /* not reached while i < ps_gen_probe_count() */
    }
    *form = -1;
    return i % NPROBES;
}

void ps_gen_make(ps_gen_rng *r, size_t i, const ps_gen_context *ctx, ps_gen_case *out)
{
    ps_gen_case_init(out);
    const probe *p;
    int form = -1;
    size_t k = i < ps_gen_probe_count() ? coverage_probe(i, &form) : ps_gen_rng_below(r, NPROBES);
    /* the key-case probe does not apply to a key without letters: the next one does */
    while (probes[k].build == build_key_case && !ctx->key_cases)
        k = (k + 1) % NPROBES;
    p = &probes[k];
    if (p->field >= 0)
        snprintf(out->probe, sizeof out->probe, "%s: %s", field_names[p->field], p->what);
    else
        snprintf(out->probe, sizeof out->probe, "%s", p->what);
    snprintf(out->clause, sizeof out->clause, "%s", p->clause);
    out->ck = p->ck;
    out->expect = p->expect;
    out->has_body = true;
    ps_gen_case_set_content_type(out, "application/json");
    ps_gen_case_set_auth(out, 0, "Bearer {key}");
    p->build(p, r, form, i, ctx, out);
}
