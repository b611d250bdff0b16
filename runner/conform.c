/* conform.c - the run context: polite sending, evidence, and the
 * observations every response feeds (content type, Error shape, X-RateLimit-*). */
#include "runner/conform.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/buf.h"
#include "core/clock.h"
#include "core/ratelimit_headers.h"

volatile sig_atomic_t ps_conform_interrupted;

/* The target is considered gone after this many connection failures in a
 * row, or this many failures of any kind (a server that times out or hangs
 * up on some requests is a deviation to report, not a reason to stop). */
#define MAX_CONSECUTIVE_CONNECT_FAILURES 3
#define MAX_CONSECUTIVE_TRANSPORT_FAILURES 10
/* Evidence keeps this much of a body; the rest is summarised. */
#define EVIDENCE_BODY_MAX 4096
/* Clock slack for Reset/Retry-After comparisons: whole-second rounding on
 * both sides plus the exchange's own duration. */
#define RESET_SLACK_S 2

static void random_hex(char *out, size_t n)
{
    FILE *f = fopen("/dev/urandom", "rb");
    unsigned char bytes[32] = {0};
    size_t got = f ? fread(bytes, 1, (n / 2 < sizeof bytes) ? n / 2 : sizeof bytes, f) : 0;
    if (f) fclose(f);
    if (got < n / 2) {
        uint64_t x = (uint64_t)ps_clock_wall_ns() ^ ((uint64_t)ps_clock_mono_ns() << 17);
        for (size_t i = 0; i < sizeof bytes; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            bytes[i] = (unsigned char)x;
        }
    }
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i + 1 < n && i / 2 < sizeof bytes; i++)
        out[i] = hex[(i & 1) ? (bytes[i / 2] & 15) : (bytes[i / 2] >> 4)];
    out[n - 1] = '\0';
}

ps_conform *ps_conform_create(const ps_conform_config *cfg, ps_checks *checks, ps_error *err)
{
    ps_conform *c = calloc(1, sizeof *c);
    if (!c) abort();
    c->cfg = cfg;
    c->checks = checks;
    c->http = ps_client_create(cfg->base_url, cfg->timeout_ns, cfg->verbose ? stderr : NULL, err);
    if (!c->http) {
        free(c);
        return NULL;
    }
    ps_client_set_cancel(c->http, &ps_conform_interrupted);
    if (cfg->ca_file) ps_client_set_ca(c->http, cfg->ca_file);
    ps_client_set_body_cap(c->http, cfg->max_body);
    ps_client_add_secret(c->http, cfg->api_key, "PETSTORE_API_KEY");
    if (cfg->limit_key_given) ps_client_add_secret(c->http, cfg->limit_key, "PETSTORE_LIMIT_KEY");
    c->polite = ps_politeness_create();
    random_hex(c->run_token, sizeof c->run_token);
    char rnd[25];
    random_hex(rnd, sizeof rnd);
    snprintf(c->unknown_key, sizeof c->unknown_key, "conform-unknown-%s", rnd);
    c->started_wall_ns = ps_clock_wall_ns();
    c->started_mono_ns = ps_clock_mono_ns();
    return c;
}

void ps_conform_destroy(ps_conform *c)
{
    if (!c) return;
    ps_client_destroy(c->http);
    ps_politeness_destroy(c->polite);
    free(c);
}

const char *ps_conform_key(const ps_conform *c, ps_key_role role)
{
    return role == PS_KEY_LIMIT ? c->cfg->limit_key : c->cfg->api_key;
}

void ps_conform_bearer(const ps_conform *c, ps_key_role role, char *out, size_t size)
{
    snprintf(out, size, "Bearer %s", ps_conform_key(c, role));
}

/* ---- evidence ---------------------------------------------------------- */

void ps_conform_json_string(ps_buf *b, const char *s, size_t len)
{
    if (ps_utf8_valid(s, len)) {
        ps_buf_json_string(b, s, len);
        return;
    }
    ps_buf clean = PS_BUF_INIT;
    for (size_t i = 0; i < len;) {
        size_t n = 1;
        unsigned char ch = (unsigned char)s[i];
        if (ch >= 0xc0 && ch < 0xe0) n = 2;
        else if (ch >= 0xe0 && ch < 0xf0) n = 3;
        else if (ch >= 0xf0 && ch < 0xf8) n = 4;
        if (ch < 0x80) {
            ps_buf_putc(&clean, (char)ch);
        } else if (i + n <= len && n > 1 && ps_utf8_valid(s + i, n)) {
            ps_buf_append(&clean, s + i, n);
        } else {
            ps_buf_puts(&clean, "\xef\xbf\xbd");
            n = 1;
        }
        i += n;
    }
    ps_buf_json_string(b, clean.data ? clean.data : "", clean.len);
    ps_buf_free(&clean);
}

static void json_headers(ps_buf *b, const ps_headers *h)
{
    ps_buf_putc(b, '[');
    for (size_t i = 0; i < h->count; i++) {
        if (i) ps_buf_putc(b, ',');
        ps_buf_putc(b, '[');
        ps_conform_json_string(b, h->items[i].name, strlen(h->items[i].name));
        ps_buf_putc(b, ',');
        ps_conform_json_string(b, h->items[i].value, strlen(h->items[i].value));
        ps_buf_putc(b, ']');
    }
    ps_buf_putc(b, ']');
}

static void json_body(ps_buf *b, const char *data, size_t len, size_t total)
{
    if (!data) data = "";
    if (len <= EVIDENCE_BODY_MAX && total <= len) {
        ps_conform_json_string(b, data, len);
        return;
    }
    size_t keep = len < EVIDENCE_BODY_MAX ? len : EVIDENCE_BODY_MAX;
    if (keep < len) keep = ps_utf8_floor(data, keep); /* never half a UTF-8 sequence */
    ps_buf tmp = PS_BUF_INIT;
    ps_buf_append(&tmp, data, keep);
    ps_buf_printf(&tmp, "\n... [%zu bytes in all; evidence shows the first %zu%s]", total, keep,
                  total > len ? "; the runner kept only part of the reply (--max-body)" : "");
    ps_conform_json_string(b, tmp.data, tmp.len);
    ps_buf_free(&tmp);
}

char *ps_conform_evidence(const ps_conform *c, const ps_exchange *ex, const char *expected)
{
    (void)c;
    ps_buf b = PS_BUF_INIT;
    ps_buf_puts(&b, "{\"request\":{\"method\":");
    ps_conform_json_string(&b, ex->method ? ex->method : "", ex->method ? strlen(ex->method) : 0);
    ps_buf_puts(&b, ",\"url\":");
    ps_conform_json_string(&b, ex->url ? ex->url : "", ex->url ? strlen(ex->url) : 0);
    ps_buf_puts(&b, ",\"headers\":");
    json_headers(&b, &ex->req_headers);
    ps_buf_puts(&b, ",\"body\":");
    json_body(&b, ex->req_body.data, ex->req_body.len, ex->req_body.len);
    ps_buf_puts(&b, "},\"response\":");
    if (ex->responded) {
        ps_buf_printf(&b, "{\"status\":%ld,\"headers\":", ex->status);
        json_headers(&b, &ex->resp_headers);
        ps_buf_puts(&b, ",\"body\":");
        json_body(&b, ex->body.data, ex->body.len, ex->body_total);
        ps_buf_printf(&b, ",\"elapsed_ms\":%.3f}", ex->elapsed_ms);
    } else {
        ps_buf_puts(&b, "{\"status\":0,\"headers\":[],\"body\":\"\",\"error\":");
        ps_conform_json_string(&b, ex->error, strlen(ex->error));
        ps_buf_putc(&b, '}');
    }
    ps_buf_puts(&b, ",\"expected\":");
    ps_conform_json_string(&b, expected ? expected : "", expected ? strlen(expected) : 0);
    ps_buf_puts(&b, ",\"curl\":");
    ps_conform_json_string(&b, ex->curl ? ex->curl : "", ex->curl ? strlen(ex->curl) : 0);
    ps_buf_putc(&b, '}');
    return ps_buf_detach(&b);
}

void ps_conform_fail(ps_conform *c, ps_check_id ck, const ps_exchange *ex, const char *expected,
                     const char *fmt, ...)
{
    if (!ps_checks_selected(c->checks, ck)) return;
    ps_buf msg = PS_BUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    ps_buf_vprintf(&msg, fmt, ap);
    va_end(ap);
    char *ev = ex ? ps_conform_evidence(c, ex, expected) : NULL;
    ps_check_fail(c->checks, ck, ev, "%s", msg.data ? msg.data : "");
    free(ev);
    ps_buf_free(&msg);
}

void ps_conform_no_response(ps_conform *c, ps_check_id ck, int send_rc, const ps_exchange *ex)
{
    if (send_rc == PS_SEND_SKIPPED) {
        ps_check_not_run(c->checks, ck, "%s", c->skip_reason[0] ? c->skip_reason : "request not sent");
        return;
    }
    ps_conform_fail(c, ck, ex, "an HTTP response", "no response: %s", ex->error);
}

/* ---- parsing and shapes ------------------------------------------------ */

ps_json *ps_conform_parse_body(const ps_exchange *ex, char *why, size_t why_size)
{
    if (ex->truncated) {
        snprintf(why, why_size, "the body is %zu bytes; the runner keeps and parses at most %zu KiB (--max-body)",
                 ex->body_total, ex->body_cap >> 10);
        return NULL;
    }
    ps_error err;
    ps_json_failure f;
    ps_json *v = ps_json_parse(ex->body.data ? ex->body.data : "", ex->body.len, &f, &err);
    if (!v) snprintf(why, why_size, "the body is not JSON (%s): %s", ps_json_failure_name(f), err.message);
    return v;
}

static void describe_value(const ps_json *v, char *out, size_t n)
{
    if (v->type == PS_JSON_STRING) snprintf(out, n, "the string \"%.*s\"", (int)(v->len > 40 ? 40 : v->len), v->str);
    else if (v->type == PS_JSON_NUMBER) snprintf(out, n, "the number %s", v->str);
    else snprintf(out, n, "%s", ps_json_type_name(v->type));
}

bool ps_conform_is_category(const ps_json *v, char *why, size_t n)
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
        snprintf(why, n, "description must be absent or a string, got %s (id %" PRId64 ")", d, id->i);
        return false;
    }
    return true;
}

bool ps_conform_is_error(const ps_json *v, char *why, size_t n)
{
    char d[96];
    if (v->type != PS_JSON_OBJECT) {
        describe_value(v, d, sizeof d);
        snprintf(why, n, "an Error must be a JSON object, got %s", d);
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

/* ---- observations on every response ------------------------------------ */

static void observe_content_type(ps_conform *c, const ps_exchange *ex)
{
    const char *ct = ps_headers_get(&ex->resp_headers, "Content-Type");
    size_t n = 0;
    if (ct) {
        n = strcspn(ct, ";");
        while (n && (ct[n - 1] == ' ' || ct[n - 1] == '\t')) n--;
    }
    if (ct && n == 16 && strncasecmp(ct, "application/json", 16) == 0) {
        ps_check_pass(c->checks, PS_CK_SCHEMA_CONTENT_TYPE_JSON);
        return;
    }
    if (ct)
        ps_conform_fail(c, PS_CK_SCHEMA_CONTENT_TYPE_JSON, ex, "Content-Type: application/json",
                        "a %ld response is labelled '%s', not application/json", ex->status, ct);
    else
        ps_conform_fail(c, PS_CK_SCHEMA_CONTENT_TYPE_JSON, ex, "Content-Type: application/json",
                        "a %ld response has no Content-Type", ex->status);
}

static void observe_error_body(ps_conform *c, const ps_exchange *ex)
{
    if (ex->status < 400) return;
    char why[300];
    ps_json *v = ps_conform_parse_body(ex, why, sizeof why);
    if (!v) {
        ps_conform_fail(c, PS_CK_ERRORS_SCHEMA, ex, "an Error object {code, message, status}",
                        "the %ld response: %s", ex->status, why);
        return;
    }
    if (!ps_conform_is_error(v, why, sizeof why)) {
        ps_conform_fail(c, PS_CK_ERRORS_SCHEMA, ex, "an Error object {code, message, status}",
                        "the %ld response body is not an Error: %s", ex->status, why);
    } else {
        ps_check_pass(c->checks, PS_CK_ERRORS_SCHEMA);
    }
    const ps_json *st = ps_json_get(v, "status");
    if (st && st->type == PS_JSON_NUMBER && st->is_int) {
        if (st->i == ex->status) {
            ps_check_pass(c->checks, PS_CK_ERRORS_STATUS_MATCHES);
        } else {
            char exp[64];
            snprintf(exp, sizeof exp, "\"status\": %ld", ex->status);
            ps_conform_fail(c, PS_CK_ERRORS_STATUS_MATCHES, ex, exp,
                            "the Error says status %" PRId64 " on a %ld response", st->i, ex->status);
        }
    }
    ps_json_free(v);
}

/* Remaining may legitimately be checked for sign: "-3" is an integer out of
 * bounds (ratelimit.remaining-bounds), not a malformed header. */
static bool parse_signed(const char *raw, int64_t *out)
{
    if (!raw) return false;
    while (*raw == ' ' || *raw == '\t') raw++;
    if (*raw != '-') return false;
    int64_t v;
    if (!ps_rl_parse_uint(raw + 1, &v)) return false;
    *out = -v;
    return true;
}

static key_track *track_for(ps_conform *c, ps_key_role role)
{
    if (role == PS_KEY_MAIN) return &c->track[1];
    if (role == PS_KEY_LIMIT) return c->cfg->limit_key_given ? &c->track[2] : &c->track[1];
    return NULL;
}

static void observe_ratelimit(ps_conform *c, const ps_exchange *ex, ps_key_role role)
{
    int64_t sent_s = ex->sent_wall_ns / 1000000000;
    int64_t done_s = ex->done_wall_ns / 1000000000;
    ps_rl_info rl;
    ps_rl_read(&ex->resp_headers, sent_s, &rl);
    key_track *tr = track_for(c, role);
    bool counted_ok = ex->status != 401; /* a 401 cannot be counted against our key */

    /* presence */
    const char *missing[3];
    int nmissing = 0;
    if (rl.limit_state == PS_RL_ABSENT) missing[nmissing++] = "X-RateLimit-Limit";
    if (rl.remaining_state == PS_RL_ABSENT) missing[nmissing++] = "X-RateLimit-Remaining";
    if (rl.reset_state == PS_RL_ABSENT) missing[nmissing++] = "X-RateLimit-Reset";
    if (nmissing) {
        ps_conform_fail(c, PS_CK_RATELIMIT_HEADERS_PRESENT, ex,
                        "X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset",
                        "a %ld response lacks %s%s%s%s%s", ex->status, missing[0],
                        nmissing > 1 ? ", " : "", nmissing > 1 ? missing[1] : "",
                        nmissing > 2 ? ", " : "", nmissing > 2 ? missing[2] : "");
        if (tr) tr->have = false;
    } else {
        ps_check_pass(c->checks, PS_CK_RATELIMIT_HEADERS_PRESENT);
    }

    /* integer syntax */
    int64_t remaining = rl.remaining;
    bool remaining_ok = rl.remaining_state == PS_RL_OK;
    if (!remaining_ok && rl.remaining_state == PS_RL_MALFORMED && parse_signed(rl.remaining_raw, &remaining))
        remaining_ok = true;
    struct {
        ps_rl_field_state st;
        const char *name, *raw;
        bool ok;
    } f[3] = {{rl.limit_state, "X-RateLimit-Limit", rl.limit_raw, rl.limit_state == PS_RL_OK},
              {rl.remaining_state, "X-RateLimit-Remaining", rl.remaining_raw, remaining_ok},
              {rl.reset_state, "X-RateLimit-Reset", rl.reset_raw, rl.reset_state == PS_RL_OK}};
    bool all_int = true;
    for (int i = 0; i < 3; i++) {
        if (f[i].st == PS_RL_ABSENT || f[i].ok) continue;
        all_int = false;
        ps_conform_fail(c, PS_CK_RATELIMIT_HEADERS_INTEGERS, ex, "a plain decimal integer, sent once",
                        "%s is '%s' on a %ld response: not a plain integer (or repeated with different values)",
                        f[i].name, f[i].raw ? f[i].raw : "", ex->status);
    }
    if (all_int && !nmissing) ps_check_pass(c->checks, PS_CK_RATELIMIT_HEADERS_INTEGERS);
    if (nmissing || !all_int) {
        if (tr) tr->have = false;
        return;
    }
    int64_t limit = rl.limit, reset = rl.reset;

    /* bounds */
    if (remaining < 0 || remaining > limit) {
        ps_conform_fail(c, PS_CK_RATELIMIT_REMAINING_BOUNDS, ex, "0 <= Remaining <= Limit",
                        "X-RateLimit-Remaining is %" PRId64 " with X-RateLimit-Limit %" PRId64
                        " on a %ld response",
                        remaining, limit, ex->status);
    } else {
        ps_check_pass(c->checks, PS_CK_RATELIMIT_REMAINING_BOUNDS);
    }

    /* the plan's figures */
    if (tr && counted_ok) {
        const ps_plan *plan = role == PS_KEY_LIMIT ? &c->cfg->limit_plan : &c->cfg->plan;
        if (plan->per_minute > 0 || plan->per_day > 0) {
            if (limit == plan->per_minute || limit == plan->per_day) {
                ps_check_pass(c->checks, PS_CK_RATELIMIT_LIMIT_MATCHES_PLAN);
            } else {
                char exp[96];
                snprintf(exp, sizeof exp, "%" PRId64 " (per minute) or %" PRId64 " (per day)",
                         plan->per_minute, plan->per_day);
                ps_conform_fail(c, PS_CK_RATELIMIT_LIMIT_MATCHES_PLAN, ex, exp,
                                "X-RateLimit-Limit is %" PRId64 " for a key of plan %s (%s)", limit,
                                ps_plan_name(plan->id), exp);
            }
        } else {
            ps_check_not_applicable(c->checks, PS_CK_RATELIMIT_LIMIT_MATCHES_PLAN,
                             plan->id == PS_PLAN_ENTERPRISE
                                 ? "enterprise plan without figures: give --plan enterprise:PER_MIN:PER_DAY"
                                 : "the key's plan is not known: give --plan (and --limit-plan)");
        }
    }

    /* a Unix time in seconds, at most a day ahead */
    bool reset_sane = reset >= sent_s - RESET_SLACK_S && reset <= done_s + 86400 + RESET_SLACK_S;
    if (reset_sane) {
        ps_check_pass(c->checks, PS_CK_RATELIMIT_RESET_UNIX_SECONDS);
    } else {
        const char *hint = reset > 100000000000LL ? " (that looks like milliseconds)"
                           : reset < 1000000000LL ? " (that looks like seconds left, not a Unix time)"
                                                  : "";
        char exp[96];
        snprintf(exp, sizeof exp, "a Unix time in seconds between %" PRId64 " and %" PRId64,
                 sent_s - RESET_SLACK_S, done_s + 86400 + RESET_SLACK_S);
        ps_conform_fail(c, PS_CK_RATELIMIT_RESET_UNIX_SECONDS, ex, exp,
                        "X-RateLimit-Reset is %" PRId64 " at client time %" PRId64 "%s", reset, sent_s, hint);
    }

    if (!tr || !counted_ok) return; /* a 401 is not about our key: its sequence goes on */

    /* Sequences on one key: Reset holds within a window (judged only when
     * Reset is a plausible time), Remaining falls one by one (judged
     * whenever two responses name the same Reset: even a static, bogus
     * Reset then shows a static Remaining). */
    if (tr->have && tr->limit == limit) {
        bool same_reset = reset == tr->reset;
        bool fell = remaining < tr->remaining && ex->status != 429 && tr->status != 429;
        if (!reset_sane || !tr->reset_sane) {
            /* reset-unix-seconds already says what is wrong */
        } else if (same_reset) {
            ps_check_pass(c->checks, PS_CK_RATELIMIT_RESET_STABLE);
        } else if (fell) {
            ps_conform_fail(c, PS_CK_RATELIMIT_RESET_STABLE, ex, "the same X-RateLimit-Reset within a window",
                            "X-RateLimit-Reset moved from %" PRId64 " to %" PRId64
                            " while Remaining fell from %" PRId64 " to %" PRId64 " (same window)",
                            tr->reset, reset, tr->remaining, remaining);
        } else if (sent_s < tr->reset - RESET_SLACK_S) {
            ps_conform_fail(c, PS_CK_RATELIMIT_RESET_STABLE, ex, "the same X-RateLimit-Reset within a window",
                            "X-RateLimit-Reset moved from %" PRId64 " to %" PRId64 " at %" PRId64
                            ", before the announced reset", tr->reset, reset, sent_s);
        } else {
            ps_check_pass(c->checks, PS_CK_RATELIMIT_RESET_STABLE); /* a new window */
        }
        if (same_reset && ex->status != 429 && tr->status != 429 && tr->remaining > 0) {
            bool success = ex->status >= 200 && ex->status < 300;
            bool ok = success ? remaining == tr->remaining - 1
                              : (remaining == tr->remaining || remaining == tr->remaining - 1);
            if (ok) {
                ps_check_pass(c->checks, PS_CK_RATELIMIT_REMAINING_DECREMENTS);
            } else {
                char exp[128];
                if (success) snprintf(exp, sizeof exp, "X-RateLimit-Remaining: %" PRId64, tr->remaining - 1);
                else snprintf(exp, sizeof exp, "X-RateLimit-Remaining: %" PRId64 " or %" PRId64 " (errors may or may not count)",
                              tr->remaining, tr->remaining - 1);
                ps_conform_fail(c, PS_CK_RATELIMIT_REMAINING_DECREMENTS, ex, exp,
                                "X-RateLimit-Remaining went from %" PRId64 " to %" PRId64
                                " over one %ld request in the same window (Reset %" PRId64 ")%s",
                                tr->remaining, remaining, ex->status, reset,
                                remaining < tr->remaining - 1 ? "; is another client using this key?" : "");
            }
        }
    }
    tr->have = true;
    tr->limit = limit;
    tr->remaining = remaining;
    tr->reset = reset;
    tr->status = ex->status;
    tr->reset_sane = reset_sane;
}

void ps_conform_observe(ps_conform *c, const ps_exchange *ex, ps_key_role role)
{
    /* A mangled credential the server nevertheless accepted may have been
     * counted against the main key: its Remaining sequence starts afresh. */
    if (role == PS_KEY_MANGLED_MAIN && ex->status != 401) c->track[1].have = false;
    observe_content_type(c, ex);
    observe_error_body(c, ex);
    observe_ratelimit(c, ex, role);
}

/* ---- sending -------------------------------------------------------------- */

static const char *politeness_key(const ps_conform *c, ps_key_role role)
{
    switch (role) {
    case PS_KEY_MAIN:
    case PS_KEY_MANGLED_MAIN: return c->cfg->api_key;
    case PS_KEY_LIMIT: return c->cfg->limit_key;
    default: return NULL;
    }
}

/* Waits until key may be used again; false (with skip_reason) when that
 * would take longer than --max-wait or the run is interrupted. */
static bool wait_for_key(ps_conform *c, const char *key)
{
    int64_t until = ps_politeness_blocked_until(c->polite, key);
    int64_t now = ps_clock_wall_ns();
    if (until <= now) return true;
    if (until - now > c->cfg->max_wait_ns) {
        snprintf(c->skip_reason, sizeof c->skip_reason,
                 "the service asked to wait %.1f s after a 429, more than --max-wait %.1f s",
                 (double)(until - now) / 1e9, (double)c->cfg->max_wait_ns / 1e9);
        c->skipped_waits++;
        if (until - now > c->longest_skipped_wait_ns) c->longest_skipped_wait_ns = until - now;
        return false;
    }
    if (c->cfg->verbose)
        fprintf(stderr, "petstore-conform: waiting %.1f s as the service asked after a 429\n",
                (double)(until - now) / 1e9);
    while ((now = ps_clock_wall_ns()) < until) {
        if (ps_conform_interrupted) {
            snprintf(c->skip_reason, sizeof c->skip_reason, "interrupted");
            return false;
        }
        int64_t step = until - now;
        ps_clock_sleep_ns(step < 100000000 ? step : 100000000);
    }
    return true;
}

int ps_conform_send(ps_conform *c, ps_check_id ck, const ps_client_request *req, ps_key_role role,
                    unsigned flags, ps_exchange *ex)
{
    const char *key = politeness_key(c, role);
    memset(ex, 0, sizeof *ex);
    c->skip_reason[0] = '\0';
    for (int attempt = 0;; attempt++) {
        if (ps_conform_interrupted || c->aborted) {
            if (!c->aborted) {
                c->aborted = true;
                snprintf(c->abort_reason, sizeof c->abort_reason, "interrupted by a signal");
            }
            snprintf(c->skip_reason, sizeof c->skip_reason, "the run was aborted: %s", c->abort_reason);
            return PS_SEND_SKIPPED;
        }
        if (!wait_for_key(c, key)) {
            if (ps_conform_interrupted && !c->aborted) {
                c->aborted = true;
                snprintf(c->abort_reason, sizeof c->abort_reason, "interrupted by a signal");
            }
            return PS_SEND_SKIPPED;
        }
        ps_exchange_free(ex);
        int rc = ps_client_perform(c->http, req, ex);
        c->exchanges++;
        ps_check_add_time(c->checks, ck, ex->elapsed_ms);
        if (ps_conform_interrupted) {
            /* Whatever came back, the run stops here: nothing is judged on a
             * cancelled exchange. */
            c->aborted = true;
            snprintf(c->abort_reason, sizeof c->abort_reason, "interrupted by a signal");
            snprintf(c->skip_reason, sizeof c->skip_reason, "the run was aborted: interrupted by a signal");
            return PS_SEND_SKIPPED;
        }
        if (rc < 0) {
            c->consecutive_transport_failures++;
            c->consecutive_connect_failures = ex->unreachable ? c->consecutive_connect_failures + 1 : 0;
            if ((c->consecutive_transport_failures >= MAX_CONSECUTIVE_TRANSPORT_FAILURES ||
                 c->consecutive_connect_failures >= MAX_CONSECUTIVE_CONNECT_FAILURES) &&
                !c->aborted) {
                c->aborted = true;
                snprintf(c->abort_reason, sizeof c->abort_reason,
                         "%d requests in a row got no response; last: %s", c->consecutive_transport_failures,
                         ex->error);
            }
            return PS_SEND_FAILED;
        }
        c->consecutive_transport_failures = 0;
        c->consecutive_connect_failures = 0;
        if (ex->status == 429) {
            int64_t now = ps_clock_wall_ns();
            ps_rl_info rl;
            ps_rl_read(&ex->resp_headers, now / 1000000000, &rl);
            int64_t until = 0;
            if (rl.retry_after_state == PS_RL_OK) until = rl.retry_after_unix_s * 1000000000LL;
            else if (rl.reset_state == PS_RL_OK && rl.reset > now / 1000000000 &&
                     rl.reset < now / 1000000000 + 86400 + 60)
                until = rl.reset * 1000000000LL;
            /* A delay counted from a whole-second clock: never resend early. */
            if (until && rl.retry_after_state == PS_RL_OK && rl.retry_after_form == PS_RETRY_AFTER_DELAY)
                until = ex->done_wall_ns + rl.retry_after_s * 1000000000LL;
            ps_politeness_note_429(c->polite, key, now, until);
        } else {
            ps_politeness_note_ok(c->polite, key);
        }
        ps_conform_observe(c, ex, role);
        if (ex->status == 429 && (flags & PS_SEND_RETRY_429)) {
            if (attempt < 5) continue;
            /* Outside the 429 suite a 429 is never judged: the check it
             * was for is not run (and the run incomplete), not failed. */
            snprintf(c->skip_reason, sizeof c->skip_reason,
                     "the service answered 429 %d times in a row, waiting as it asked each time", attempt + 1);
            c->skipped_waits++;
            return PS_SEND_SKIPPED;
        }
        return PS_SENT;
    }
}
