/* gen_case.c - the generated case: its body, credential templates, curl
 * line and replay file. */
#include "runner/gen_case.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/json_writer.h"

static const char *const expect_names[PS_GEN_EXPECT_COUNT] = {
    "created", "created-only", "400", "401", "refused", "accepted", "no-5xx", "400-or-category"};

const char *ps_gen_expect_name(ps_gen_expect e)
{
    return e < PS_GEN_EXPECT_COUNT ? expect_names[e] : "?";
}

int ps_gen_expect_parse(const char *name)
{
    for (int i = 0; i < PS_GEN_EXPECT_COUNT; i++)
        if (strcmp(name, expect_names[i]) == 0) return i;
    return -1;
}

static char *dup_or_null(const char *s)
{
    if (!s) return NULL;
    char *d = strdup(s);
    if (!d) abort();
    return d;
}

void ps_gen_case_init(ps_gen_case *gc)
{
    memset(gc, 0, sizeof *gc);
    ps_buf_init(&gc->head);
    ps_buf_init(&gc->tail);
    snprintf(gc->method, sizeof gc->method, "POST");
}

void ps_gen_case_free(ps_gen_case *gc)
{
    free(gc->auth[0]);
    free(gc->auth[1]);
    free(gc->content_type);
    ps_buf_free(&gc->head);
    ps_buf_free(&gc->tail);
    for (size_t i = 0; i < gc->nunits; i++)
        free(gc->units[i].text);
    free(gc->units);
    memset(gc, 0, sizeof *gc);
}

void ps_gen_case_set_auth(ps_gen_case *gc, int i, const char *tmpl)
{
    free(gc->auth[i]);
    gc->auth[i] = dup_or_null(tmpl);
}

void ps_gen_case_set_content_type(ps_gen_case *gc, const char *ct)
{
    free(gc->content_type);
    gc->content_type = dup_or_null(ct);
}

void ps_gen_case_add_unit(ps_gen_case *gc, const char *text, size_t len, bool fixed)
{
    if (gc->nunits == gc->cap) {
        gc->cap = gc->cap ? gc->cap * 2 : 16;
        gc->units = realloc(gc->units, gc->cap * sizeof *gc->units);
        if (!gc->units) abort();
    }
    ps_gen_unit *u = &gc->units[gc->nunits++];
    u->text = malloc(len + 1);
    if (!u->text) abort();
    memcpy(u->text, text, len);
    u->text[len] = '\0';
    u->len = len;
    u->fixed = fixed;
}

void ps_gen_case_copy(ps_gen_case *dst, const ps_gen_case *src)
{
    ps_gen_case_init(dst);
    memcpy(dst->probe, src->probe, sizeof dst->probe);
    memcpy(dst->clause, src->clause, sizeof dst->clause);
    memcpy(dst->method, src->method, sizeof dst->method);
    dst->ck = src->ck;
    dst->expect = src->expect;
    dst->has_body = src->has_body;
    dst->auth[0] = dup_or_null(src->auth[0]);
    dst->auth[1] = dup_or_null(src->auth[1]);
    dst->content_type = dup_or_null(src->content_type);
    ps_buf_append(&dst->head, src->head.data ? src->head.data : "", src->head.len);
    ps_buf_append(&dst->tail, src->tail.data ? src->tail.data : "", src->tail.len);
    for (size_t i = 0; i < src->nunits; i++)
        ps_gen_case_add_unit(dst, src->units[i].text, src->units[i].len, src->units[i].fixed);
}

void ps_gen_case_keep_units(ps_gen_case *gc, const bool *keep)
{
    size_t n = 0;
    for (size_t i = 0; i < gc->nunits; i++) {
        if (keep[i])
            gc->units[n++] = gc->units[i];
        else
            free(gc->units[i].text);
    }
    gc->nunits = n;
}

void ps_gen_case_body(const ps_gen_case *gc, ps_buf *out)
{
    ps_buf_reset(out);
    ps_buf_append(out, gc->head.data ? gc->head.data : "", gc->head.len);
    for (size_t i = 0; i < gc->nunits; i++)
        ps_buf_append(out, gc->units[i].text, gc->units[i].len);
    ps_buf_append(out, gc->tail.data ? gc->tail.data : "", gc->tail.len);
}

void ps_gen_key_case(const char *key, char mode, ps_buf *out)
{
    for (const char *p = key; *p; p++) {
        int ch = (unsigned char)*p;
        if (mode == '^')
            ch = toupper(ch);
        else if (mode == ',')
            ch = tolower(ch);
        else if (isalpha(ch))
            ch = isupper(ch) ? tolower(ch) : toupper(ch);
        ps_buf_putc(out, (char)ch);
    }
}

unsigned ps_gen_key_cases(const char *key,
                          void (*add_secret)(void *ctx, const char *secret, const char *env),
                          void *ctx)
{
    static const char modes[] = {'^', ',', '~'};
    static const char *const envs[] = {"PETSTORE_API_KEY^^", "PETSTORE_API_KEY,,",
                                       "PETSTORE_API_KEY~~"};
    unsigned mask = 0;
    for (int k = 0; k < 3; k++) {
        ps_buf b = PS_BUF_INIT;
        ps_gen_key_case(key, modes[k], &b);
        if (b.data && strcmp(b.data, key) != 0) {
            mask |= 1u << k;
            add_secret(ctx, b.data, envs[k]);
        }
        ps_buf_free(&b);
    }
    return mask;
}

void ps_gen_expand_auth(const char *tmpl, const char *key, const char *unknown, ps_buf *out)
{
    for (const char *p = tmpl; *p;) {
        if (strncmp(p, "{key}", 5) == 0) {
            ps_buf_puts(out, key);
            p += 5;
        } else if (strncmp(p, "{key", 4) == 0 && p[4] && p[5] == p[4] && p[6] == '}' &&
                   strchr("^,~", p[4])) {
            ps_gen_key_case(key, p[4], out);
            p += 7;
        } else if (strncmp(p, "{unknown}", 9) == 0) {
            ps_buf_puts(out, unknown);
            p += 9;
        } else {
            ps_buf_putc(out, *p++);
        }
    }
}

void ps_gen_wire_build(const ps_gen_case *gc, const char *key, const char *unknown, ps_gen_wire *w)
{
    memset(w, 0, sizeof *w);
    for (int i = 0; i < 2; i++)
        if (gc->auth[i]) ps_gen_expand_auth(gc->auth[i], key, unknown, &w->auth[i]);
    ps_gen_case_body(gc, &w->body);
    w->req.method = gc->method;
    w->req.path = "/categories";
    w->req.authorization = gc->auth[0] ? w->auth[0].data : NULL;
    w->req.body = gc->has_body ? (w->body.data ? w->body.data : "") : NULL;
    w->req.body_len = gc->has_body ? w->body.len : 0;
    w->req.content_type = gc->has_body ? gc->content_type : NULL;
    w->auth2 = gc->auth[1] ? w->auth[1].data : NULL;
}

void ps_gen_wire_free(ps_gen_wire *w)
{
    ps_buf_free(&w->auth[0]);
    ps_buf_free(&w->auth[1]);
    ps_buf_free(&w->body);
}

bool ps_gen_case_proper_key(const ps_gen_case *gc)
{
    return gc->auth[0] && !gc->auth[1] &&
           (strcmp(gc->auth[0], "Bearer {key}") == 0 || gc->expect == PS_GEN_ACCEPTED);
}

/* ---- curl line ------------------------------------------------------------ */

/* An Authorization template as a double-quoted bash word: {key} becomes
 * ${PETSTORE_API_KEY}, {key^^} ${PETSTORE_API_KEY^^} and so on. */
static void auth_word(ps_buf *b, const char *tmpl, const char *unknown)
{
    ps_buf_puts(b, "\"Authorization: ");
    for (const char *p = tmpl; *p;) {
        if (strncmp(p, "{key}", 5) == 0) {
            ps_buf_puts(b, "${PETSTORE_API_KEY}");
            p += 5;
        } else if (strncmp(p, "{key", 4) == 0 && p[4] && p[5] == p[4] && p[6] == '}') {
            ps_buf_printf(b, "${PETSTORE_API_KEY%c%c}", p[4], p[4]);
            p += 7;
        } else if (strncmp(p, "{unknown}", 9) == 0) {
            ps_buf_puts(b, unknown);
            p += 9;
        } else {
            if (strchr("\"\\$`!", *p)) ps_buf_putc(b, '\\');
            ps_buf_putc(b, *p++);
        }
    }
    ps_buf_putc(b, '"');
}

void ps_gen_curl_line(const ps_gen_case *gc, const char *base_url, const char *unknown_key,
                      ps_buf *out)
{
    ps_buf_puts(out, "curl -i");
    if (strcmp(gc->method, "GET") != 0) ps_buf_printf(out, " -X %s", gc->method);
    for (int i = 0; i < 2; i++) {
        if (!gc->auth[i]) continue;
        ps_buf_puts(out, " -H ");
        auth_word(out, gc->auth[i], unknown_key);
    }
    if (gc->has_body) {
        ps_buf_puts(out, " -H ");
        if (gc->content_type) {
            ps_buf ct = PS_BUF_INIT;
            ps_buf_printf(&ct, "Content-Type: %s", gc->content_type);
            ps_buf_put_shell_quoted(out, ct.data, ct.len);
            ps_buf_free(&ct);
        } else {
            ps_buf_puts(out, "'Content-Type:'");
        }
        ps_buf body = PS_BUF_INIT;
        ps_gen_case_body(gc, &body);
        ps_buf_puts(out, " --data-binary ");
        ps_buf_put_shell_quoted(out, body.data ? body.data : "", body.len);
        ps_buf_free(&body);
    }
    ps_buf url = PS_BUF_INIT;
    ps_buf_printf(&url, "%s/categories", base_url);
    ps_buf_putc(out, ' ');
    ps_buf_put_shell_quoted(out, url.data, url.len);
    ps_buf_free(&url);
}

/* ---- replay files ---------------------------------------------------------- */

int ps_gen_replay_write(const char *path, const ps_gen_case *gc, const char *base_url,
                        const char *unknown_key, uint64_t seed, const char *message, ps_error *err)
{
    ps_buf doc = PS_BUF_INIT, body = PS_BUF_INIT, curl = PS_BUF_INIT;
    ps_gen_case_body(gc, &body);
    ps_gen_curl_line(gc, base_url, unknown_key, &curl);
    ps_jw w;
    ps_jw_init(&w, &doc, true);
    ps_jw_object_open(&w);
    ps_jw_kstring(&w, "format", "petstore-conform-replay/1");
    ps_jw_kstring(&w, "check", ps_check_def_get(gc->ck)->id);
    ps_jw_kstring(&w, "clause", gc->clause);
    ps_jw_kstring(&w, "probe", gc->probe);
    ps_jw_kstring(&w, "expect", ps_gen_expect_name(gc->expect));
    ps_jw_kuint(&w, "seed", seed);
    ps_jw_kstring(&w, "base_url", base_url);
    ps_jw_kstring(&w, "unknown_key", unknown_key);
    ps_jw_key(&w, "request");
    ps_jw_object_open(&w);
    ps_jw_kstring(&w, "method", gc->method);
    ps_jw_key(&w, "authorization");
    ps_jw_array_open(&w);
    for (int i = 0; i < 2; i++)
        if (gc->auth[i]) ps_jw_string(&w, gc->auth[i]);
    ps_jw_array_close(&w);
    ps_jw_kstring(&w, "content_type", gc->content_type); /* null: none */
    if (gc->has_body)
        ps_jw_kstring_len(&w, "body", body.data ? body.data : "", body.len);
    else
        ps_jw_knull(&w, "body");
    ps_jw_object_close(&w);
    ps_jw_kstring(&w, "message", message);
    ps_jw_kstring_len(&w, "curl", curl.data, curl.len);
    ps_jw_object_close(&w);
    ps_buf_putc(&doc, '\n');
    int rc = 0;
    FILE *f = fopen(path, "w");
    if (!f || fwrite(doc.data, 1, doc.len, f) != doc.len) {
        rc = ps_error_set(err, "cannot write replay file '%s': %s", path, strerror(errno));
    }
    if (f && fclose(f) != 0 && rc == 0)
        rc = ps_error_set(err, "cannot write replay file '%s': %s", path, strerror(errno));
    ps_buf_free(&doc);
    ps_buf_free(&body);
    ps_buf_free(&curl);
    return rc;
}

static const char *member_string(const ps_json *o, const char *key)
{
    const ps_json *v = ps_json_get(o, key);
    return v && v->type == PS_JSON_STRING ? v->str : NULL;
}

/* A template from a replay file goes into a header field: only what RFC 9110
 * 5.5 lets a field value hold (VCHAR, SP, HTAB, obs-text), so a file cannot
 * end the field with CR/LF and add its own, nor hide a NUL. Fills err. */
static bool field_value_ok(const ps_json *v, const char *what, const char *path, ps_error *err)
{
    if (v->type != PS_JSON_STRING) {
        ps_error_set(err, "'%s': %s is a %s, not a string", path, what, ps_json_type_name(v->type));
        return false;
    }
    for (size_t i = 0; i < v->len; i++) {
        unsigned char c = (unsigned char)v->str[i];
        if ((c < 0x20 && c != '\t') || c == 0x7f) {
            ps_error_set(err,
                         "'%s': %s holds the control byte 0x%02x at offset %zu; a header "
                         "field value may not (RFC 9110 5.5)",
                         path, what, c, i);
            return false;
        }
    }
    return true;
}

int ps_gen_replay_read(const char *path, ps_gen_case *gc, char **base_url, char **unknown_key,
                       ps_error *err)
{
    ps_gen_case_init(gc);
    *base_url = *unknown_key = NULL;
    ps_buf text = PS_BUF_INIT;
    ps_json *doc = NULL;
    int rc = -1;
    FILE *f = fopen(path, "rb");
    if (!f) {
        ps_error_set(err, "cannot read replay file '%s': %s", path, strerror(errno));
        goto out;
    }
    /* One byte past the budget tells a file that is too big from one that
     * fits exactly, without reading the rest (a FIFO or /dev/zero ends too). */
    char chunk[8192];
    size_t n;
    while (text.len <= PS_GEN_REPLAY_MAX_BYTES && (n = fread(chunk, 1, sizeof chunk, f)) > 0)
        ps_buf_append(&text, chunk, n);
    fclose(f);
    if (text.len > PS_GEN_REPLAY_MAX_BYTES) {
        ps_error_set(err,
                     "'%s' is larger than a replay file may be (%d KiB; the ones --replay-dir "
                     "writes are a few KiB)",
                     path, PS_GEN_REPLAY_MAX_BYTES >> 10);
        goto out;
    }
    ps_error perr;
    doc = ps_json_parse(text.data ? text.data : "", text.len, NULL, &perr);
    if (!doc || doc->type != PS_JSON_OBJECT) {
        ps_error_set(err, "'%s' is not a replay file: %s", path,
                     doc ? "not a JSON object" : perr.message);
        goto out;
    }
    const char *format = member_string(doc, "format");
    const char *check = member_string(doc, "check");
    const char *expect = member_string(doc, "expect");
    const char *url = member_string(doc, "base_url");
    const ps_json *req = ps_json_get(doc, "request");
    const char *method = member_string(req, "method");
    const ps_json *auth = ps_json_get(req, "authorization");
    const ps_json *ct = ps_json_get(req, "content_type");
    const ps_json *body = ps_json_get(req, "body");
    if (!format || strcmp(format, "petstore-conform-replay/1") != 0) {
        ps_error_set(err, "'%s': format is not petstore-conform-replay/1", path);
        goto out;
    }
    int ck = -1;
    for (int i = 0; check && i < PS_CK_COUNT; i++)
        if (strcmp(ps_check_def_get((ps_check_id)i)->id, check) == 0) ck = i;
    int ex = expect ? ps_gen_expect_parse(expect) : -1;
    if (ck < 0 || ex < 0 || !url || !method ||
        (strcmp(method, "GET") != 0 && strcmp(method, "POST") != 0) || !auth ||
        auth->type != PS_JSON_ARRAY || auth->count > 2 || !ct ||
        (ct->type != PS_JSON_STRING && ct->type != PS_JSON_NULL) || !body ||
        (body->type != PS_JSON_STRING && body->type != PS_JSON_NULL)) {
        ps_error_set(err,
                     "'%s': a replay file needs check (a known id), expect, base_url and a "
                     "request with method GET or POST, authorization (at most 2 strings), "
                     "content_type and body (string or null)",
                     path);
        goto out;
    }
    for (size_t i = 0; i < auth->count; i++) {
        if (auth->items[i]->type != PS_JSON_STRING) {
            ps_error_set(err, "'%s': request.authorization holds a non-string", path);
            goto out;
        }
        if (!field_value_ok(auth->items[i], "request.authorization", path, err)) goto out;
        ps_gen_case_set_auth(gc, (int)i, auth->items[i]->str);
    }
    const ps_json *unknown = ps_json_get(doc, "unknown_key");
    if ((ct->type == PS_JSON_STRING && !field_value_ok(ct, "request.content_type", path, err)) ||
        (unknown && !field_value_ok(unknown, "unknown_key", path, err)))
        goto out;
    gc->ck = (ps_check_id)ck;
    gc->expect = (ps_gen_expect)ex;
    snprintf(gc->method, sizeof gc->method, "%s", method);
    snprintf(gc->probe, sizeof gc->probe, "%s",
             member_string(doc, "probe") ? member_string(doc, "probe") : "");
    snprintf(gc->clause, sizeof gc->clause, "%s",
             member_string(doc, "clause") ? member_string(doc, "clause") : "");
    if (ct->type == PS_JSON_STRING) ps_gen_case_set_content_type(gc, ct->str);
    if (body->type == PS_JSON_STRING) {
        gc->has_body = true;
        ps_buf_append(&gc->head, body->str, body->len);
    }
    *base_url = dup_or_null(url);
    *unknown_key = dup_or_null(unknown ? unknown->str : "petstore-conform-unknown");
    rc = 0;
out:
    if (rc != 0) ps_gen_case_free(gc);
    ps_json_free(doc);
    ps_buf_free(&text);
    return rc;
}
