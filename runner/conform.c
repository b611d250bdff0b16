/* conform.c - the runner framework: the run context, polite sending,
 * evidence, and handing every response to the observers. */
#include "runner/conform.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/clock.h"
#include "core/json_writer.h"
#include "core/ratelimit_headers.h"
#include "core/service_clock.h"
#include "runner/politeness.h"
#include "runner/suites/burst.h"
#include "runner/suites/front.h"
#include "runner/suites/ratelimit_judge.h"

volatile sig_atomic_t ps_conform_interrupted;

/* The target is considered gone after this many connection failures in a
 * row, or this many failures of any kind (a server that times out or hangs
 * up on some requests is a deviation to report, not a reason to stop). */
#define MAX_CONSECUTIVE_CONNECT_FAILURES 3
#define MAX_CONSECUTIVE_TRANSPORT_FAILURES 10
/* Evidence keeps this much of a body; the rest is summarised. */
#define EVIDENCE_BODY_MAX 4096
/* Redaction looks this far past the cut, so a secret across it is found. */
#define EVIDENCE_REDACT_MARGIN 1024

struct ps_conform {
    const ps_conform_config *cfg;
    ps_client *client;
    ps_politeness *polite;
    ps_checks *checks;
    const ps_observer *observers;
    size_t nobservers;
    void **observer_state; /* [i]: observers[i]'s memory for the run */
    char run_token[9];     /* see ps_conform_run_token */
    char unknown_key[48];  /* a key the service cannot know */
    int consecutive_transport_failures, consecutive_connect_failures;
    bool aborted;            /* exit 3 */
    bool answered_below_400; /* some request was answered 1xx-3xx */
    char abort_reason[400];
    char skip_reason[512];   /* why the last send was skipped */
    bool refused_throughout; /* the last send skipped: 429 after 429, each wait honoured */
    char wait_why[2][48];    /* [0] main key, [1] limit key: what the last 429 asked */
    ps_conform_tally tally;
    uint64_t seed;          /* --seed, or drawn at random */
    ps_service_clock clock; /* the service's, from Date */
    ps_burst_stats burst;   /* the last limit burst's transport */
    bool burst_ran;
};

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

ps_conform *ps_conform_create(const ps_conform_config *cfg, ps_checks *checks,
                              const ps_observer *observers, size_t nobservers, ps_error *err)
{
    ps_conform *c = calloc(1, sizeof *c);
    if (!c) abort();
    c->cfg = cfg;
    c->checks = checks;
    c->observers = observers;
    c->nobservers = nobservers;
    c->client = ps_client_create(cfg->base_url, cfg->timeout_ns, cfg->verbose ? stderr : NULL, err);
    if (!c->client) {
        free(c);
        return NULL;
    }
    ps_client_set_cancel(c->client, &ps_conform_interrupted);
    ps_client_set_tls(c->client, &cfg->tls);
    ps_client_set_body_cap(c->client, cfg->max_body);
    ps_client_add_secret(c->client, cfg->api_key, "PETSTORE_API_KEY");
    /* The auth suite's near miss less the last character: the client matches
     * a long secret's first len-1 characters anyway, but not a short one's,
     * and --verbose prints the request as sent. (The near miss with a
     * character added holds the key whole.) The curl line names it
     * ${PETSTORE_API_KEY%?}, the value less its last character. */
    size_t key_len = strlen(cfg->api_key);
    if (key_len >= PS_CONFORM_NEAR_MISS_MIN_KEY) {
        char *miss = strndup(cfg->api_key, key_len - 1);
        if (!miss) abort();
        ps_client_add_secret(c->client, miss, "PETSTORE_API_KEY%?");
        free(miss);
    }
    if (cfg->limit_key_given) ps_client_add_secret(c->client, cfg->limit_key, "PETSTORE_LIMIT_KEY");
    c->polite = ps_politeness_create();
    /* The run token comes from the seed, so --seed reproduces every request. */
    c->seed = cfg->seed;
    if (!cfg->seed_given) {
        char hex[17];
        random_hex(hex, sizeof hex);
        c->seed = strtoull(hex, NULL, 16);
    }
    snprintf(c->run_token, sizeof c->run_token, "%08x",
             (unsigned)((c->seed * 0x9e3779b97f4a7c15ULL) >> 32));
    uint64_t u = c->seed ^ 0x5bd1e9955bd1e995ULL, parts[2];
    for (int i = 0; i < 2; i++) { /* splitmix64 */
        uint64_t z = (u += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        parts[i] = z ^ (z >> 31);
    }
    snprintf(c->unknown_key, sizeof c->unknown_key, "conform-unknown-%016llx%08llx",
             (unsigned long long)parts[0], (unsigned long long)(parts[1] >> 32));
    c->observer_state = calloc(nobservers ? nobservers : 1, sizeof *c->observer_state);
    if (!c->observer_state) abort();
    for (size_t i = 0; i < nobservers; i++) {
        if (!observers[i].state_size) continue;
        c->observer_state[i] = calloc(1, observers[i].state_size);
        if (!c->observer_state[i]) abort();
    }
    c->tally.started_wall_ns = ps_clock_wall_ns();
    c->tally.started_mono_ns = ps_clock_mono_ns();
    return c;
}

void ps_conform_destroy(ps_conform *c)
{
    if (!c) return;
    ps_client_destroy(c->client);
    ps_politeness_destroy(c->polite);
    for (size_t i = 0; i < c->nobservers; i++)
        free(c->observer_state[i]);
    free(c->observer_state);
    free(c);
}

const ps_conform_config *ps_conform_cfg(const ps_conform *c)
{
    return c->cfg;
}

ps_checks *ps_conform_checks(const ps_conform *c)
{
    return c->checks;
}

const char *ps_conform_base_url(const ps_conform *c)
{
    return ps_client_base_url(c->client);
}

const char *ps_conform_run_token(const ps_conform *c)
{
    return c->run_token;
}

const char *ps_conform_unknown_key(const ps_conform *c)
{
    return c->unknown_key;
}

uint64_t ps_conform_seed(const ps_conform *c)
{
    return c->seed;
}

void ps_conform_add_secret(ps_conform *c, const char *secret, const char *env_var)
{
    ps_client_add_secret(c->client, secret, env_var);
}

void ps_conform_count_creates(ps_conform *c, unsigned n)
{
    c->tally.creates += n;
}

void ps_conform_note_generated(ps_conform *c, unsigned sent, const char *stop_reason,
                               int64_t duration_ns)
{
    c->tally.generated = sent;
    c->tally.generate_ns = duration_ns;
    snprintf(c->tally.generate_stop, sizeof c->tally.generate_stop, "%s", stop_reason);
}

/* A message of an outcome, formatted by a suite and often quoting the
 * service (an error message, a header): redacted like the evidence.
 * Returns a new string (caller frees). */
static char *redacted_message(const ps_conform *c, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

static char *redacted_message(const ps_conform *c, const char *fmt, va_list ap)
{
    ps_buf msg = PS_BUF_INIT;
    ps_buf_vprintf(&msg, fmt, ap);
    size_t n;
    char *red = ps_client_redact(c->client, msg.data ? msg.data : "", msg.len, &n);
    ps_buf_free(&msg);
    return red;
}

void ps_conform_abort(ps_conform *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *why = redacted_message(c, fmt, ap);
    va_end(ap);
    snprintf(c->abort_reason, sizeof c->abort_reason, "%s", why);
    free(why);
    c->aborted = true;
}

bool ps_conform_aborted(const ps_conform *c)
{
    return c->aborted;
}

const char *ps_conform_abort_reason(const ps_conform *c)
{
    return c->aborted ? c->abort_reason : NULL;
}

void ps_conform_tally_get(const ps_conform *c, ps_conform_tally *out)
{
    *out = c->tally;
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

/* Server bytes enter the report here (evidence) and in the outcome
 * messages the suites write, and nowhere else: every configured secret a
 * service echoes back (or a near miss of it, runner/client.h) is redacted
 * at these two doors, so no report format, now or later, can show it. */
static void write_redacted(const ps_conform *c, ps_jw *w, const char *s, size_t len)
{
    size_t n;
    char *red = ps_client_redact(c->client, s ? s : "", s ? len : 0, &n);
    ps_jw_string_len(w, red, n);
    free(red);
}

/* A header list as [[name, value], ...]. */
static void write_headers(const ps_conform *c, ps_jw *w, const ps_headers *h)
{
    ps_jw_array_open(w);
    for (size_t i = 0; i < h->count; i++) {
        ps_jw_array_open(w);
        write_redacted(c, w, h->items[i].name, strlen(h->items[i].name));
        write_redacted(c, w, h->items[i].value, strlen(h->items[i].value));
        ps_jw_array_close(w);
    }
    ps_jw_array_close(w);
}

/* A body as a string, cut to EVIDENCE_BODY_MAX with a note saying how much
 * there was (total: what the server sent, len of it kept), and redacted.
 * Only what can be shown is searched for secrets (a margin past the cut
 * catches a key across it): a check failing on every reply of a 1 MiB body
 * would otherwise search megabytes per failure. */
static void write_body(const ps_conform *c, ps_jw *w, const char *data, size_t len, size_t total)
{
    if (!data) data = "", len = 0;
    size_t look = len < EVIDENCE_BODY_MAX + EVIDENCE_REDACT_MARGIN
                      ? len
                      : EVIDENCE_BODY_MAX + EVIDENCE_REDACT_MARGIN;
    size_t rlen;
    char *red = ps_client_redact(c->client, data, look, &rlen);
    if (look == len && total <= len && rlen <= EVIDENCE_BODY_MAX) {
        ps_jw_string_len(w, red, rlen);
        free(red);
        return;
    }
    size_t keep = rlen < EVIDENCE_BODY_MAX ? rlen : EVIDENCE_BODY_MAX;
    if (keep < rlen) keep = ps_utf8_floor(red, keep); /* never half a UTF-8 sequence */
    ps_buf tmp = PS_BUF_INIT;
    ps_buf_append(&tmp, red, keep);
    ps_buf_printf(&tmp, "\n... [%zu bytes in all; evidence shows the first %zu%s]", total, keep,
                  total > len ? "; the runner kept only part of the reply (--max-body)" : "");
    ps_jw_string_len(w, tmp.data, tmp.len);
    ps_buf_free(&tmp);
    free(red);
}

/* NULL is written as "" (evidence members are always strings). */
static void write_kstring(ps_jw *w, const char *key, const char *s)
{
    ps_jw_kstring(w, key, s ? s : "");
}

char *ps_conform_evidence(const ps_conform *c, const ps_exchange *ex, const char *expected)
{
    ps_buf b = PS_BUF_INIT;
    ps_jw w;
    ps_jw_init(&w, &b, false);
    ps_jw_object_open(&w);
    ps_jw_key(&w, "request");
    ps_jw_object_open(&w);
    write_kstring(&w, "method", ex->method);
    write_kstring(&w, "url", ex->url);
    ps_jw_key(&w, "headers");
    write_headers(c, &w, &ex->req_headers);
    ps_jw_key(&w, "body");
    write_body(c, &w, ex->req_body.data, ex->req_body.len, ex->req_body.len);
    ps_jw_object_close(&w);
    ps_jw_key(&w, "response");
    ps_jw_object_open(&w);
    if (ex->responded) {
        ps_jw_kint(&w, "status", ex->status);
        ps_jw_key(&w, "headers");
        write_headers(c, &w, &ex->resp_headers);
        ps_jw_key(&w, "body");
        write_body(c, &w, ex->body.data, ex->body.len, ex->body_total);
        ps_jw_kdouble(&w, "elapsed_ms", ex->elapsed_ms, 3);
    } else {
        ps_jw_kint(&w, "status", 0);
        ps_jw_key(&w, "headers");
        ps_jw_array_open(&w);
        ps_jw_array_close(&w);
        ps_jw_kstring(&w, "body", "");
        ps_jw_key(&w, "error");
        write_redacted(c, &w, ex->error, strlen(ex->error));
    }
    ps_jw_object_close(&w);
    write_kstring(&w, "expected", expected);
    write_kstring(&w, "curl", ex->curl);
    ps_jw_object_close(&w);
    return ps_buf_detach(&b);
}

void ps_conform_fail(ps_conform *c, ps_check_id ck, const ps_exchange *ex, const char *expected,
                     const char *fmt, ...)
{
    if (!ps_checks_selected(c->checks, ck)) return;
    va_list ap;
    va_start(ap, fmt);
    char *msg = redacted_message(c, fmt, ap);
    va_end(ap);
    char who[64];
    if (!ps_front_judges(ck) && ps_front_made(ex, who, sizeof who)) {
        /* a gateway's reply is not the service's: untested, named (front.h) */
        ps_front_note_untested(c, ck);
        ps_check_not_run(c->checks, ck,
                         "not judged: a %ld made by %s in front of the service, not by it (%s)",
                         ex->status, who, msg);
        free(msg);
        return;
    }
    char *ev = ex ? ps_conform_evidence(c, ex, expected) : NULL;
    ps_check_fail(c->checks, ck, ev, "%s", msg);
    free(ev);
    free(msg);
}

void ps_conform_pass(ps_conform *c, ps_check_id ck)
{
    ps_check_pass(c->checks, ck);
}

void ps_conform_not_run(ps_conform *c, ps_check_id ck, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *why = redacted_message(c, fmt, ap);
    va_end(ap);
    ps_check_not_run(c->checks, ck, "%s", why);
    free(why);
}

void ps_conform_not_applicable(ps_conform *c, ps_check_id ck, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *why = redacted_message(c, fmt, ap);
    va_end(ap);
    ps_check_not_applicable(c->checks, ck, "%s", why);
    free(why);
}

bool ps_conform_selected(const ps_conform *c, ps_check_id ck)
{
    return ps_checks_selected(c->checks, ck);
}

bool ps_conform_any_selected(const ps_conform *c, const char *prefix)
{
    return ps_checks_any_selected(c->checks, prefix);
}

void ps_conform_no_response(ps_conform *c, ps_check_id ck, int send_rc, const ps_exchange *ex)
{
    if (send_rc == PS_SEND_SKIPPED) {
        ps_check_not_run(c->checks, ck, "%s",
                         c->skip_reason[0] ? c->skip_reason : "request not sent");
        return;
    }
    ps_conform_fail(c, ck, ex, "an HTTP response", "no response: %s", ex->error);
}

/* ---- parsing ------------------------------------------------------------ */

ps_json *ps_conform_parse_body(const ps_exchange *ex, char *why, size_t why_size)
{
    if (ex->truncated) {
        snprintf(why, why_size,
                 "the body is %zu bytes; the runner keeps and parses at most %zu KiB (--max-body)",
                 ex->body_total, ex->body_cap >> 10);
        return NULL;
    }
    ps_error err;
    ps_json_failure f;
    ps_json *v = ps_json_parse(ex->body.data ? ex->body.data : "", ex->body.len, &f, &err);
    if (!v)
        snprintf(why, why_size, "the body is not JSON (%s): %s", ps_json_failure_name(f),
                 err.message);
    return v;
}

/* ---- observing --------------------------------------------------------- */

void ps_conform_observe(ps_conform *c, const ps_exchange *ex, ps_key_role role)
{
    ps_observation o = {ex, role};
    if (ps_front_made(ex, NULL, 0)) {
        /* a gateway's reply: counted and named, never judged as the service's
         * (its Date is the gateway's clock) */
        ps_front_observe(c, ps_conform_observer_state(c, ps_front_observe), &o);
        ps_ratelimit_judge_gap(c, role); /* the service may have counted it, or not */
        return;
    }
    /* the service's clock first: this response is judged in it too */
    const char *date = ex->responded ? ps_headers_get(&ex->resp_headers, "Date") : NULL;
    int64_t date_s;
    if (date && ex->sent_wall_ns && ps_http_date_parse(date, &date_s))
        ps_service_clock_add(&c->clock, date_s, ex->sent_wall_ns, ex->done_wall_ns);
    for (size_t i = 0; i < c->nobservers; i++)
        c->observers[i].observe(c, c->observer_state[i], &o);
}

int64_t ps_conform_clock_offset_ns(const ps_conform *c)
{
    return ps_service_clock_offset_ns(&c->clock);
}

int64_t ps_conform_wait_offset_ns(const ps_conform *c)
{
    return ps_service_clock_earliest_ns(&c->clock);
}

const ps_service_clock *ps_conform_clock(const ps_conform *c)
{
    return &c->clock;
}

int64_t ps_conform_service_ns(const ps_conform *c, int64_t wall_ns)
{
    return wall_ns + ps_service_clock_offset_ns(&c->clock);
}

void *ps_conform_observer_state(const ps_conform *c,
                                void (*observe)(ps_conform *, void *, const ps_observation *))
{
    for (size_t i = 0; i < c->nobservers; i++)
        if (c->observers[i].observe == observe) return c->observer_state[i];
    return NULL;
}

/* ---- sending -------------------------------------------------------------- */

static const char *politeness_key(const ps_conform *c, ps_key_role role)
{
    switch (role) {
    case PS_KEY_MAIN:
    case PS_KEY_MANGLED_MAIN:
        return c->cfg->api_key;
    case PS_KEY_LIMIT:
        return c->cfg->limit_key;
    default:
        return NULL;
    }
}

/* Which of wait_why a key's 429s are noted in. */
static int wait_slot(const ps_conform *c, const char *key)
{
    return key && key != c->cfg->api_key && key == c->cfg->limit_key;
}

/* Records a 429 on key, received at now (wall ns): nothing is sent on key
 * before the time it indicates (Retry-After, else an X-RateLimit-Reset
 * ahead, else exponential backoff; core ps_rl_retry_at_ns, in the
 * service's clock), and wait_why says which. */
static void note_429(ps_conform *c, const char *key, const ps_exchange *ex, int64_t now)
{
    ps_rl_info rl;
    ps_rl_read(&ex->resp_headers, ps_conform_service_ns(c, now) / 1000000000, &rl);
    char *why = c->wait_why[wait_slot(c, key)];
    ps_retry_source src;
    int64_t until = ps_rl_retry_at_ns(&rl, now, ps_conform_wait_offset_ns(c), &src);
    if (src == PS_RETRY_AFTER) {
        const char *text = ps_headers_get(&ex->resp_headers, "Retry-After");
        snprintf(why, sizeof c->wait_why[0], "Retry-After %.30s", text ? text : "");
    } else if (src == PS_RETRY_RESET_AHEAD) {
        snprintf(why, sizeof c->wait_why[0], "X-RateLimit-Reset %lld", (long long)rl.reset);
    } else {
        snprintf(why, sizeof c->wait_why[0], "no Retry-After or reset time: backing off");
    }
    ps_politeness_note_429(c->polite, key, now, until);
}

void ps_conform_note_refusal(ps_conform *c, const ps_exchange *ex, ps_key_role role)
{
    note_429(c, politeness_key(c, role), ex, ex->done_wall_ns);
}

void ps_conform_note_burst(ps_conform *c, const ps_burst_stats *bs)
{
    int sent = c->burst.bursts;
    c->burst = *bs;
    c->burst.bursts = sent + 1;
    c->burst_ran = true;
    if (c->cfg->verbose && bs->h2_declined[0])
        fprintf(stderr,
                "petstore-conform: the burst's HTTP/2 single-packet form was not used (%s)\n",
                bs->h2_declined);
    if (c->cfg->verbose && bs->h2_peer[0])
        fprintf(stderr, "petstore-conform: the HTTP/2 burst was cut short: %s\n", bs->h2_peer);
    if (c->cfg->verbose)
        fprintf(stderr,
                "petstore-conform: burst transport %s: %zu connections open in %.1f ms, release "
                "spread %.0f us (its last requests %.0f us, their replies %.0f us apart), %zu "
                "bytes kept per reply\n",
                strcmp(bs->via, "h2") == 0
                    ? "h2 (single-packet: each group's final frames in one write)"
                : strcmp(bs->via, "libcurl") == 0 ? "libcurl connect-only (HTTP/1.1, last byte)"
                                                  : "sockets (HTTP/1.1, last byte)",
                bs->opened, (double)bs->open_ns / 1e6, (double)bs->spread_ns[0] / 1e3,
                (double)bs->spread_ns[1] / 1e3, (double)bs->crossing_replies_ns / 1e3,
                bs->reply_cap);
}

const ps_client_transport *ps_conform_transport(const ps_conform *c)
{
    return ps_client_transport_of(c->client);
}

const ps_burst_stats *ps_conform_last_burst(const ps_conform *c)
{
    return c->burst_ran ? &c->burst : NULL;
}

int64_t ps_conform_key_free_at(const ps_conform *c, ps_key_role role)
{
    return ps_politeness_blocked_until(c->polite, politeness_key(c, role));
}

/* Waits until key may be used again; false (with skip_reason) when that
 * would take longer than --max-wait or the run is interrupted. Each wait
 * is announced on stderr (unless --quiet): a run that waits 75 s in
 * silence looks hung. */
static bool wait_for_key(ps_conform *c, const char *key)
{
    int64_t until = ps_politeness_blocked_until(c->polite, key);
    int64_t now = ps_clock_wall_ns();
    if (until <= now) return true;
    if (until - now > c->cfg->max_wait_ns) {
        snprintf(c->skip_reason, sizeof c->skip_reason,
                 "the service asked to wait %.1f s after a 429, more than --max-wait %.1f s",
                 (double)(until - now) / 1e9, (double)c->cfg->max_wait_ns / 1e9);
        c->tally.skipped_waits++;
        if (until - now > c->tally.longest_skipped_wait_ns)
            c->tally.longest_skipped_wait_ns = until - now;
        return false;
    }
    if (!c->cfg->quiet) {
        int slot = wait_slot(c, key);
        fprintf(stderr, "petstore-conform: waiting %lld s for the %s's rate-limit window (%s)\n",
                (long long)((until - now + 999999999) / 1000000000),
                slot  ? "limit key"
                : key ? "main key"
                      : "unauthenticated requests",
                c->wait_why[slot][0] ? c->wait_why[slot] : "after a 429");
        fflush(stderr);
    }
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

/* A server that asked for a client certificate and got none (no --cert)
 * answers its first requests 4xx (nginx with ssl_verify_client on: 400 "No
 * required SSL certificate was sent"): that is the connection refused, not
 * a reply to judge, so the run stops there, saying what to give (exit 3).
 * Once any request was answered below 400, a 4xx is the service's own. */
static bool refused_for_certificate(ps_conform *c, const ps_exchange *ex)
{
    if (ex->status < 400) c->answered_below_400 = true;
    if (c->answered_below_400 || ex->status >= 500 || !ps_client_cert_missing(c->client))
        return false;
    ps_conform_abort(c,
                     "the server asked for a TLS client certificate and none was given (give "
                     "--cert FILE --key FILE): it answered %ld",
                     ex->status);
    snprintf(c->skip_reason, sizeof c->skip_reason, "the run was aborted: %s", c->abort_reason);
    return true;
}

bool ps_conform_refused_throughout(const ps_conform *c)
{
    return c->refused_throughout;
}

int ps_conform_send(ps_conform *c, ps_check_id ck, const ps_client_request *req, ps_key_role role,
                    unsigned flags, ps_exchange *ex)
{
    return ps_conform_send_ex(c, ck, req, NULL, role, flags, ex);
}

int ps_conform_send_ex(ps_conform *c, ps_check_id ck, const ps_client_request *req,
                       const char *authorization2, ps_key_role role, unsigned flags,
                       ps_exchange *ex)
{
    const char *key = politeness_key(c, role);
    memset(ex, 0, sizeof *ex);
    c->skip_reason[0] = '\0';
    c->refused_throughout = false;
    for (int attempt = 0;; attempt++) {
        if (ps_conform_interrupted || c->aborted) {
            if (!c->aborted) {
                c->aborted = true;
                snprintf(c->abort_reason, sizeof c->abort_reason, "interrupted by a signal");
            }
            snprintf(c->skip_reason, sizeof c->skip_reason, "the run was aborted: %s",
                     c->abort_reason);
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
        int rc = ps_client_perform_ex(c->client, req, authorization2, ex);
        c->tally.exchanges++;
        ps_check_add_time(c->checks, ck, ex->elapsed_ms);
        if (ps_conform_interrupted) {
            /* Whatever came back, the run stops here: nothing is judged on a
             * cancelled exchange. */
            c->aborted = true;
            snprintf(c->abort_reason, sizeof c->abort_reason, "interrupted by a signal");
            snprintf(c->skip_reason, sizeof c->skip_reason,
                     "the run was aborted: interrupted by a signal");
            return PS_SEND_SKIPPED;
        }
        if (rc < 0) {
            c->consecutive_transport_failures++;
            c->consecutive_connect_failures =
                ex->unreachable ? c->consecutive_connect_failures + 1 : 0;
            if ((c->consecutive_transport_failures >= MAX_CONSECUTIVE_TRANSPORT_FAILURES ||
                 c->consecutive_connect_failures >= MAX_CONSECUTIVE_CONNECT_FAILURES) &&
                !c->aborted) {
                c->aborted = true;
                snprintf(c->abort_reason, sizeof c->abort_reason,
                         "%d requests in a row got no response; last: %s",
                         c->consecutive_transport_failures, ex->error);
            }
            return PS_SEND_FAILED;
        }
        c->consecutive_transport_failures = 0;
        c->consecutive_connect_failures = 0;
        if (refused_for_certificate(c, ex)) return PS_SEND_SKIPPED;
        if (strcmp(req->method, "POST") == 0 && ex->status >= 200 && ex->status < 300)
            c->tally.creates++;
        if (ex->status == 429)
            note_429(c, key, ex, ps_clock_wall_ns());
        else
            ps_politeness_note_ok(c->polite, key);
        if (!(flags & PS_SEND_NOT_OBSERVED)) ps_conform_observe(c, ex, role);
        if (ex->status == 429 && (flags & PS_SEND_RETRY_429)) {
            if (attempt < 5) continue;
            /* Outside the 429 suite a 429 is never judged: the check it
             * was for is not run (and the run incomplete), not failed. */
            snprintf(c->skip_reason, sizeof c->skip_reason,
                     "the service answered 429 %d times in a row, waiting as it asked each time",
                     attempt + 1);
            c->tally.skipped_waits++;
            c->refused_throughout = true;
            return PS_SEND_SKIPPED;
        }
        return PS_SENT;
    }
}
