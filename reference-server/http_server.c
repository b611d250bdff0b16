/* http_server.c - event loops, connections, HTTP/1.1 parsing and the request
 * handling of petstore-server. */
#include "reference-server/http_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <event2/thread.h>
#include <http_parser.h>

#include "core/buf.h"
#include "core/clock.h"
#include "reference-server/auth.h"
#include "reference-server/responses.h"
#include "reference-server/validate.h"

#define LINGER_NS (2 * 1000000000LL)       /* how long a closing connection's input is drained */
#define LINGER_MAX_BYTES (16 * 1024 * 1024) /* and how much of it */
#define MAX_AUTH_BYTES 4096
/* Pipelined requests are parsed only while the answers already queued on
 * the connection stay under this; beyond it reading pauses until the client
 * has taken them (else a client that sends and never reads grows our memory
 * without bound: 40 MB of pipelined GETs made 1.2 GB). */
#define OUTPUT_HIGH_BYTES (256 * 1024)

typedef struct loop loop;
typedef struct conn conn;

enum conn_state {
    CONN_READING, /* parsing requests */
    CONN_BUSY,    /* a request is being handled (store write or delay timer); reading paused */
    CONN_CLOSING, /* the last response is being written; close when drained */
    CONN_LINGER,  /* response written, write side shut; discarding input until EOF or timeout */
};

struct conn {
    loop *lp;
    struct bufferevent *bev;
    conn *prev, *next;
    enum conn_state state;
    bool dead; /* the peer went away while BUSY: free when the handler finishes */
    bool out_paused; /* reading paused until the queued answers are written */
    /* framing check (frame_scan): the bytes http_parser consumed that are not body data */
    const char *scan_pos; /* next byte of the current input piece to check */
    bool cr_pending;      /* the last framing byte was CR: LF must follow */
    int crlf_expect;      /* a chunk's data ended: this many bytes of its CRLF still to come */
    http_parser parser;
    char ip[INET6_ADDRSTRLEN + 4];
    /* the request being parsed */
    bool request_started, headers_done, in_value, field_is_auth, field_is_expect, expect_continue;
    bool field_is_te, auth_overflow, te_other; /* te_other: a transfer coding besides chunked */
    bool field_is_host, host_bad;
    char te[64]; /* the Transfer-Encoding values, joined by ',' */
    size_t te_len;
    int host_count;
    int error_status;          /* set by a parser callback that stops the parse */
    const char *error_message; /* and, when it knows more, why (static string) */
    size_t header_bytes;
    int64_t reserved, used; /* this connection's share of srv->buffered, and how much of it holds bytes */
    char field[32];
    size_t field_len;
    ps_buf url, auth, body;
    int auth_count;
    bool keep_alive;
    struct event *req_timer;
    int64_t start_ns;
    /* the response being delayed or awaited */
    struct evbuffer *pending;
    struct event *delay_timer;
    int method;
    ps_limit_decision decision;
    bool counted;
    size_t linger_bytes;
    struct event *linger_timer;
};

typedef struct completion {
    struct completion *next;
    conn *c;
    int status;
    ps_buf body;
} completion;

struct loop {
    ps_http_server *srv;
    int index;
    int fd;
    struct event_base *base;
    struct evconnlistener *listener;
    pthread_t thread;
    bool thread_started;
    struct event *wake;
    struct event *stall_timer;
    struct event *drain_timer;
    struct event *accept_retry;
    pthread_mutex_t qlock;
    completion *qhead, *qtail;
    atomic_bool stopping;
    bool draining;
    conn *conns;
    size_t nconns;
    uint64_t rng;
    ps_buf scratch; /* response headers are built here */
    time_t date_s;  /* the second date_hdr was rendered for */
    char date_hdr[64]; /* "Date: IMF-fixdate\r\n", re-rendered once a second */
};

typedef struct recovery_entry {
    struct recovery_entry *next;
    int64_t until_ns;
    size_t len;
    char id[];
} recovery_entry;

struct ps_http_server {
    const ps_server_config *cfg;
    ps_store *store;
    ps_limiter *limiter;
    loop *loops;
    int nloops;
    int port;
    char resource[512];
    size_t resource_len;
    atomic_long connections;
    atomic_llong buffered; /* request bytes held by all connections (--max-buffered) */
    atomic_ulong seq;
    int access_fd;
    bool access_close;
    int64_t start_mono_ns;
    /* fault no-recovery: identities limited until the end of a day window */
    pthread_mutex_t recovery_lock;
    recovery_entry *recovery;
};

static http_parser_settings parser_settings;

static void conn_free(conn *c);
static void conn_process(conn *c);
static void conn_after_response(conn *c);
static void release_reserved(conn *c);

/* ---- small helpers ---------------------------------------------------- */

static struct timeval tv_from_ns(int64_t ns)
{
    struct timeval tv = {(time_t)(ns / 1000000000LL), (suseconds_t)((ns % 1000000000LL) / 1000)};
    return tv;
}

static uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s; /* xorshift64*: a cheap per-loop generator for --delay */
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 2685821657736338717ull;
}

static int64_t window_seconds(const ps_http_server *s, const ps_limit_decision *d)
{
    double base = 60;
    if (d->window && strcmp(d->window, "day") == 0) base = 86400;
    else if (d->window && strcmp(d->window, "ban") == 0) base = (double)s->cfg->ban_seconds;
    int64_t w = (int64_t)(base / s->cfg->time_scale + 0.999);
    return w < 1 ? 1 : w;
}

/* ---- fault no-recovery bookkeeping ------------------------------------ */

static bool recovery_blocked(ps_http_server *s, const char *id, size_t len, int64_t now_ns)
{
    bool blocked = false;
    pthread_mutex_lock(&s->recovery_lock);
    for (recovery_entry *e = s->recovery; e; e = e->next)
        if (e->len == len && memcmp(e->id, id, len) == 0 && now_ns < e->until_ns) blocked = true;
    pthread_mutex_unlock(&s->recovery_lock);
    return blocked;
}

static void recovery_mark(ps_http_server *s, const char *id, size_t len, int64_t now_ns)
{
    int64_t until = now_ns + (int64_t)(86400e9 / s->cfg->time_scale);
    pthread_mutex_lock(&s->recovery_lock);
    recovery_entry *e;
    for (e = s->recovery; e; e = e->next)
        if (e->len == len && memcmp(e->id, id, len) == 0) break;
    if (!e) {
        e = malloc(sizeof *e + len);
        if (!e) abort();
        e->len = len;
        memcpy(e->id, id, len);
        e->next = s->recovery;
        s->recovery = e;
        e->until_ns = until;
    } else if (now_ns >= e->until_ns) {
        e->until_ns = until;
    }
    pthread_mutex_unlock(&s->recovery_lock);
}

/* ---- identity and admission ------------------------------------------- */

typedef struct identity {
    bool authenticated;
    ps_credential cred;
    const char *id;
    size_t id_len;
    int64_t per_minute, per_day;
    char ipbuf[INET6_ADDRSTRLEN + 16];
} identity;

/* Works out who sent the request (the key, or the client address for
 * requests without a valid key) from the parsed Authorization header. */
static void identify(conn *c, bool headers_known, identity *who)
{
    const ps_server_config *cfg = c->lp->srv->cfg;
    memset(who, 0, sizeof *who);
    who->cred = PS_CRED_NONE;
    const char *token = NULL;
    size_t token_len = 0;
    if (headers_known && c->auth_overflow) /* longer than any key; never match a cut-off prefix */
        who->cred = PS_CRED_MALFORMED;
    else if (headers_known)
        who->cred = ps_auth_parse(c->auth.data, c->auth.len, c->auth_count,
                                  ps_fault_on(cfg->faults, PS_FAULT_BEARER_CASE_SENSITIVE), &token, &token_len);
    if (who->cred == PS_CRED_TOKEN) {
        const ps_key_entry *e = ps_keyring_find(cfg->keys, token, token_len);
        if (e) {
            who->authenticated = true;
            who->id = e->key;
            who->id_len = e->key_len;
            who->per_minute = e->plan.per_minute;
            who->per_day = e->plan.per_day;
            return;
        }
        if (ps_fault_on(cfg->faults, PS_FAULT_ACCEPT_ANY_KEY)) {
            who->authenticated = true;
            who->id = token;
            who->id_len = token_len;
            who->per_minute = 60;
            who->per_day = 1000;
            return;
        }
    }
    if (who->cred == PS_CRED_NONE && headers_known && ps_fault_on(cfg->faults, PS_FAULT_NO_AUTH))
        who->authenticated = true;
    /* Unauthenticated requests are counted per client address on Free numbers. */
    snprintf(who->ipbuf, sizeof who->ipbuf, "ip:%s", c->ip);
    who->id = who->ipbuf;
    who->id_len = strlen(who->ipbuf);
    ps_plan_published(PS_PLAN_FREE, &who->per_minute, &who->per_day);
}

/* Counts the request (every request counts, errors included) and returns
 * the verdict after the faults that bend admission. */
static ps_admission admit(conn *c, const identity *who)
{
    ps_http_server *s = c->lp->srv;
    int64_t now = ps_clock_wall_ns();
    ps_limiter_admit(s->limiter, who->id, who->id_len, who->per_minute, who->per_day, now, &c->decision);
    c->counted = true;
    ps_admission v = c->decision.verdict;
    if (ps_fault_on(s->cfg->faults, PS_FAULT_NO_RECOVERY)) {
        if (v != PS_ADMITTED) recovery_mark(s, who->id, who->id_len, now);
        else if (recovery_blocked(s, who->id, who->id_len, now)) v = PS_LIMITED;
    }
    if (ps_fault_on(s->cfg->faults, PS_FAULT_NEVER_LIMIT)) v = PS_ADMITTED;
    return v;
}

/* ---- writing responses ------------------------------------------------ */

static void access_log(conn *c, int status, size_t body_len)
{
    ps_http_server *s = c->lp->srv;
    if (s->access_fd < 0) return;
    char line[1024];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    char when[32];
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    const char *m = http_method_str((enum http_method)c->method);
    int n = snprintf(line, sizeof line, "%s %s \"%s %.*s\" %d %zu %.3fms\n", when, c->ip,
                     c->headers_done ? m : "-", (int)(c->url.len > 300 ? 300 : c->url.len),
                     c->url.len ? c->url.data : "-", status, body_len,
                     c->start_ns ? (double)(ps_clock_mono_ns() - c->start_ns) / 1e6 : 0.0);
    if (n > 0) {
        ssize_t w = write(s->access_fd, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
        (void)w; /* a lost log line must not stop the server */
    }
}

static void release_snapshot(const void *data, size_t len, void *extra)
{
    (void)data;
    (void)len;
    ps_store_snapshot_release(extra);
}

typedef struct response {
    int status;
    const char *body; /* NULL: none */
    size_t body_len;
    ps_store_snapshot *snap; /* body is the snapshot's bytes (added by reference) */
    const char *extra_headers; /* complete "Name: value\r\n" lines or NULL */
    bool close;
} response;

static void delay_fire(evutil_socket_t fd, short what, void *arg);

/* RFC 9110 6.6.1: an origin server with a clock MUST send Date on 2xx-4xx
 * responses. Rendered at most once a second per loop (strftime is not cheap). */
static const char *date_header(loop *lp)
{
    time_t now = time(NULL);
    if (now != lp->date_s || !lp->date_hdr[0]) {
        struct tm tm;
        gmtime_r(&now, &tm);
        if (strftime(lp->date_hdr, sizeof lp->date_hdr, "Date: %a, %d %b %Y %H:%M:%S GMT\r\n", &tm) == 0)
            lp->date_hdr[0] = '\0';
        lp->date_s = now;
    }
    return lp->date_hdr;
}

/* Queues a response on the connection (or in its delay buffer) with the
 * headers every response carries. */
static void send_response(conn *c, const response *r)
{
    ps_http_server *s = c->lp->srv;
    const ps_server_config *cfg = s->cfg;
    ps_buf *h = &c->lp->scratch;
    ps_buf_reset(h);
    bool close = r->close || !c->keep_alive || c->lp->draining;
    ps_buf_printf(h, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n", r->status,
                  ps_reason_phrase(r->status),
                  ps_fault_on(cfg->faults, PS_FAULT_CONTENT_TYPE_TEXT) ? "text/plain" : "application/json",
                  r->body_len);
    if (c->counted) {
        ps_rate_headers rh;
        unsigned long seq = atomic_fetch_add_explicit(&s->seq, 1, memory_order_relaxed);
        ps_rate_headers_compute(&c->decision, r->status, ps_clock_wall_s(), window_seconds(s, &c->decision), seq,
                                cfg->faults, &rh);
        ps_rate_headers_render(h, &rh);
    }
    if (r->extra_headers) ps_buf_puts(h, r->extra_headers);
    ps_buf_puts(h, date_header(c->lp));
    if (close) ps_buf_puts(h, "Connection: close\r\n");
    else if (c->parser.http_major == 1 && c->parser.http_minor == 0) ps_buf_puts(h, "Connection: keep-alive\r\n");
    ps_buf_puts(h, "\r\n");

    bool delayed = cfg->delay_share > 0 && c->state != CONN_LINGER &&
                   (double)(rng_next(&c->lp->rng) >> 11) / 9007199254740992.0 < cfg->delay_share;
    struct evbuffer *out = delayed ? c->pending : bufferevent_get_output(c->bev);
    evbuffer_add(out, h->data, h->len);
    bool head = c->headers_done && c->method == HTTP_HEAD; /* a HEAD response has no body */
    if (r->snap) {
        if (head) ps_store_snapshot_release(r->snap);
        else evbuffer_add_reference(out, r->body, r->body_len, release_snapshot, r->snap);
    } else if (r->body && !head) {
        evbuffer_add(out, r->body, r->body_len);
    }
    access_log(c, r->status, r->body_len);
    if (c->req_timer) evtimer_del(c->req_timer);
    if (close) c->keep_alive = false;
    if (delayed) {
        c->state = CONN_BUSY;
        bufferevent_disable(c->bev, EV_READ);
        struct timeval tv = tv_from_ns(cfg->delay_ns);
        evtimer_add(c->delay_timer, &tv);
        return;
    }
    conn_after_response(c);
}

static void send_error(conn *c, int status, const char *code, const char *message, const char *extra_headers,
                       bool close)
{
    ps_buf body = PS_BUF_INIT;
    ps_render_error(&body, status, code, message, c->lp->srv->cfg->faults);
    response r = {status, body.data, body.len, NULL, extra_headers, close};
    send_response(c, &r);
    ps_buf_free(&body);
}

/* ---- connection state changes ----------------------------------------- */

static void linger_fire(evutil_socket_t fd, short what, void *arg)
{
    conn_free(arg);
}

/* Called once a response is queued (or a delayed one released): decides
 * whether to go on reading, close after the write, or linger. */
static void conn_after_response(conn *c)
{
    if (c->keep_alive && c->state != CONN_LINGER) {
        c->state = CONN_READING;
        c->request_started = false;
        bufferevent_enable(c->bev, EV_READ);
        return;
    }
    if (c->state != CONN_LINGER) c->state = CONN_CLOSING;
    /* the write callback closes (or shuts the write side and lingers) once the output drained */
    if (evbuffer_get_length(bufferevent_get_output(c->bev)) == 0) {
        bufferevent_trigger(c->bev, EV_WRITE, BEV_TRIG_IGNORE_WATERMARKS);
    }
}

static void delay_fire(evutil_socket_t fd, short what, void *arg)
{
    conn *c = arg;
    if (c->dead) {
        conn_free(c);
        return;
    }
    evbuffer_add_buffer(bufferevent_get_output(c->bev), c->pending);
    conn_after_response(c);
    if (c->state == CONN_READING) conn_process(c);
}

static void reset_request(conn *c)
{
    c->request_started = false;
    c->headers_done = false;
    c->in_value = false;
    c->field_is_auth = false;
    c->field_is_expect = false;
    c->expect_continue = false;
    c->field_is_te = false;
    c->auth_overflow = false;
    c->te_other = false;
    c->te_len = 0;
    c->host_count = 0;
    c->field_is_host = false;
    c->host_bad = false;
    c->error_status = 0;
    c->error_message = NULL;
    c->header_bytes = 0;
    c->field_len = 0;
    ps_buf_reset(&c->url);
    ps_buf_reset(&c->auth);
    /* a big body's buffer is not kept by an idle keep-alive connection: the
     * memory and its share of --max-buffered go together */
    if (c->body.cap > 16 * 1024) ps_buf_free(&c->body);
    else ps_buf_reset(&c->body);
    release_reserved(c);
    c->auth_count = 0;
    c->counted = false;
    c->start_ns = 0;
    memset(&c->decision, 0, sizeof c->decision);
}

static void conn_free(conn *c)
{
    loop *lp = c->lp;
    if (c->prev) c->prev->next = c->next;
    else lp->conns = c->next;
    if (c->next) c->next->prev = c->prev;
    lp->nconns--;
    atomic_fetch_sub(&lp->srv->connections, 1);
    bufferevent_free(c->bev);
    event_free(c->req_timer);
    event_free(c->delay_timer);
    event_free(c->linger_timer);
    evbuffer_free(c->pending);
    release_reserved(c);
    ps_buf_free(&c->url);
    ps_buf_free(&c->auth);
    ps_buf_free(&c->body);
    free(c);
    if (lp->draining && lp->nconns == 0) event_base_loopexit(lp->base, NULL);
}

/* ---- the Categories interface ----------------------------------------- */

static void store_done(void *arg, const ps_category *created, int status);

static const char *challenge(const ps_server_config *cfg, ps_credential cred, const char **code,
                             const char **message)
{
    static const char plain[] = "WWW-Authenticate: Bearer realm=\"petstore\"\r\n";
    static const char invalid[] =
        "WWW-Authenticate: Bearer realm=\"petstore\", error=\"invalid_token\", "
        "error_description=\"the access token is malformed or unknown\"\r\n";
    switch (cred) {
    case PS_CRED_NONE:
        *code = "missing_credential";
        *message = "an API key is required: send the header 'Authorization: Bearer API_KEY'";
        break;
    case PS_CRED_OTHER_SCHEME:
        *code = "unsupported_scheme";
        *message = "the Authorization header must use the Bearer scheme";
        break;
    case PS_CRED_MALFORMED:
        *code = "malformed_credential";
        *message = "the Authorization header must be exactly one 'Bearer API_KEY'";
        break;
    case PS_CRED_TOKEN:
        *code = "invalid_key";
        *message = "the API key is not valid";
        break;
    }
    if (ps_fault_on(cfg->faults, PS_FAULT_NO_WWW_AUTHENTICATE)) return NULL;
    /* RFC 6750 3: no error code when the request carried no bearer token */
    return (cred == PS_CRED_NONE || cred == PS_CRED_OTHER_SCHEME) ? plain : invalid;
}

static bool path_is_resource(const ps_http_server *s, const char *url, size_t len)
{
    const char *path = url;
    size_t plen = len;
    if (len == 0) return false;
    if (url[0] != '/') { /* absolute-form (RFC 9112 3.2.2): take its path */
        struct http_parser_url u;
        http_parser_url_init(&u);
        if (http_parser_parse_url(url, len, 0, &u) != 0 || !(u.field_set & (1 << UF_PATH))) return false;
        path = url + u.field_data[UF_PATH].off;
        plen = u.field_data[UF_PATH].len;
    } else {
        for (size_t i = 0; i < len; i++) /* the query is ignored: none is defined */
            if (url[i] == '?' || url[i] == '#') {
                plen = i;
                break;
            }
    }
    return plen == s->resource_len && memcmp(path, s->resource, plen) == 0;
}

static void send_refusal(conn *c, ps_admission v)
{
    bool banned = v == PS_BANNED;
    send_error(c, 429, banned ? "banned" : "rate_limited",
               banned ? "too many requests while limited: temporarily banned; retry after Retry-After seconds"
                      : "rate limit exceeded; retry after Retry-After seconds",
               "Cache-Control: no-store\r\n", false);
}

static void handle_request(conn *c)
{
    ps_http_server *s = c->lp->srv;
    const ps_server_config *cfg = s->cfg;
    identity who;
    identify(c, true, &who);
    ps_admission v = admit(c, &who);
    if (v != PS_ADMITTED) {
        send_refusal(c, v);
        return;
    }
    if (!path_is_resource(s, c->url.data, c->url.len)) {
        send_error(c, 404, "not_found", "no such resource; the interface serves {base}/categories", NULL, false);
        return;
    }
    /* RFC 9110 9.1: a general-purpose server MUST support HEAD wherever it
     * supports GET; it is answered as the GET, without the body. */
    if (c->method != HTTP_GET && c->method != HTTP_HEAD && c->method != HTTP_POST) {
        send_error(c, 405, "method_not_allowed", "only GET (and HEAD) and POST are defined on /categories",
                   "Allow: GET, HEAD, POST\r\n", false);
        return;
    }
    if (!who.authenticated) {
        const char *code = "invalid_key", *message = "the API key is not valid";
        const char *hdr = challenge(cfg, who.cred, &code, &message);
        send_error(c, 401, code, message, hdr, false);
        return;
    }
    if (c->method == HTTP_GET || c->method == HTTP_HEAD) {
        ps_store_snapshot *snap = ps_store_list(s->store);
        size_t len;
        const char *json = ps_store_snapshot_json(snap, &len);
        response r = {200, json, len, snap, NULL, false}; /* fault list-id-string: the store renders it */
        send_response(c, &r);
        return;
    }
    ps_validate_options vo = {ps_fault_on(cfg->faults, PS_FAULT_MISSING_NAME_ACCEPTED),
                              ps_fault_on(cfg->faults, PS_FAULT_WRONG_TYPE_ACCEPTED)};
    ps_new_category nc;
    if (ps_validate_new_category(c->body.data, c->body.len, &vo, &nc) != 0) {
        if (nc.json_failure == PS_JSON_MALFORMED && ps_fault_on(cfg->faults, PS_FAULT_MALFORMED_JSON_500))
            send_error(c, 500, "internal_error", "the server failed to process the body", NULL, false);
        else
            send_error(c, 400, nc.code, nc.message, NULL, false);
        ps_new_category_free(&nc);
        return;
    }
    ps_buf mname = PS_BUF_INIT, mdesc = PS_BUF_INIT;
    const char *name = nc.name, *desc = nc.description;
    size_t name_len = nc.name_len, desc_len = nc.description_len;
    bool has_desc = nc.has_description;
    if (ps_fault_on(cfg->faults, PS_FAULT_UNICODE_MANGLED)) {
        ps_mangle_unicode(&mname, name, name_len);
        ps_mangle_unicode(&mdesc, desc ? desc : "", desc_len);
        name = mname.data ? mname.data : "";
        name_len = mname.len;
        desc = mdesc.data ? mdesc.data : "";
        desc_len = mdesc.len;
    }
    if (!has_desc && ps_fault_on(cfg->faults, PS_FAULT_INVENT_DESCRIPTION)) {
        has_desc = true;
        desc = "";
        desc_len = 0;
    }
    c->state = CONN_BUSY;
    bufferevent_disable(c->bev, EV_READ);
    if (c->req_timer) evtimer_del(c->req_timer);
    ps_store_create_async(s->store, name, name_len, has_desc ? desc : NULL, desc_len, has_desc, store_done, c);
    ps_buf_free(&mname);
    ps_buf_free(&mdesc);
    ps_new_category_free(&nc);
}

/* Runs on the store's writer thread (or inline): renders the reply and
 * hands it to the connection's loop. */
static void store_done(void *arg, const ps_category *created, int status)
{
    conn *c = arg;
    loop *lp = c->lp;
    completion *comp = calloc(1, sizeof *comp);
    if (!comp) abort();
    comp->c = c;
    comp->status = status;
    if (status == 0 && created)
        ps_render_category(&comp->body, created->id, created->name, created->name_len, created->description,
                           created->description_len, created->description != NULL);
    else
        comp->status = -1;
    pthread_mutex_lock(&lp->qlock);
    if (lp->qtail) lp->qtail->next = comp;
    else lp->qhead = comp;
    lp->qtail = comp;
    pthread_mutex_unlock(&lp->qlock);
    event_active(lp->wake, EV_READ, 0);
}

static void finish_create(completion *comp)
{
    conn *c = comp->c;
    if (c->dead) {
        conn_free(c);
        return;
    }
    c->state = CONN_READING; /* send_response decides what comes next */
    if (comp->status != 0) {
        send_error(c, 500, "store_failed", "the category could not be stored durably; it was not created", NULL,
                   false);
    } else {
        int status = ps_fault_on(c->lp->srv->cfg->faults, PS_FAULT_CREATE_STATUS_200) ? 200 : 201;
        response r = {status, comp->body.data, comp->body.len, NULL, NULL, false};
        send_response(c, &r);
    }
    if (c->state == CONN_READING) conn_process(c);
}

/* ---- http_parser callbacks -------------------------------------------- */

/* Request bytes held in memory count against --max-buffered over all
 * connections: per-connection caps alone allow connections x (body + header)
 * caps, 1.6 GB with the defaults. Beyond the budget the request gets 503. */
#define RESERVE_BLOCK 2048 /* taken from the shared counter at a time: one atomic add for most requests */

static bool reserve(conn *c, size_t len)
{
    ps_http_server *s = c->lp->srv;
    if (c->used + (int64_t)len <= c->reserved) {
        c->used += (int64_t)len;
        return true;
    }
    int64_t need = c->used + (int64_t)len - c->reserved;
    long long grab = need < RESERVE_BLOCK ? RESERVE_BLOCK : need;
    long long before = atomic_fetch_add(&s->buffered, grab);
    if (before + grab > s->cfg->max_buffered) {
        atomic_fetch_sub(&s->buffered, grab);
        c->error_status = 503;
        return false;
    }
    c->reserved += grab;
    c->used += (int64_t)len;
    return true;
}

static void release_reserved(conn *c)
{
    if (c->reserved) atomic_fetch_sub(&c->lp->srv->buffered, (long long)c->reserved);
    c->reserved = 0;
    c->used = 0;
}

static int header_budget(conn *c, size_t len)
{
    c->header_bytes += len;
    if (c->header_bytes > (size_t)c->lp->srv->cfg->max_header_bytes) {
        c->error_status = 431;
        return -1;
    }
    return reserve(c, len) ? 0 : -1;
}

static int on_message_begin(http_parser *p)
{
    conn *c = p->data;
    reset_request(c);
    c->request_started = true;
    c->start_ns = ps_clock_mono_ns();
    return 0;
}

static int on_url(http_parser *p, const char *at, size_t len)
{
    conn *c = p->data;
    if (header_budget(c, len)) {
        if (c->error_status == 431) c->error_status = 414; /* RFC 9110 15.5.15: the target alone is over the cap */
        return -1;
    }
    ps_buf_append(&c->url, at, len);
    return 0;
}

static int on_header_field(http_parser *p, const char *at, size_t len)
{
    conn *c = p->data;
    if (header_budget(c, len)) return -1;
    /* RFC 9112 5.1: whitespace between the field name and the colon MUST be
     * rejected with 400 (http_parser's lenient build lets it through) */
    if (memchr(at, ' ', len) || memchr(at, '\t', len)) {
        c->error_status = 400;
        c->error_message = "whitespace between a header field name and its colon";
        return -1;
    }
    if (c->in_value) { /* a new field starts */
        c->in_value = false;
        c->field_len = 0;
    }
    size_t room = sizeof c->field - c->field_len;
    size_t n = len < room ? len : room;
    memcpy(c->field + c->field_len, at, n);
    c->field_len += n;
    return 0;
}

/* True when a Transfer-Encoding value names a coding other than chunked
 * (gzip, deflate, ...): we decode none, so such a body cannot be read as
 * JSON. */
static bool te_has_other_coding(const char *at, size_t len)
{
    size_t i = 0;
    while (i < len) {
        while (i < len && (at[i] == ',' || at[i] == ' ' || at[i] == '\t')) i++;
        size_t start = i;
        while (i < len && at[i] != ',' && at[i] != ';') i++;
        size_t end = i;
        while (end > start && (at[end - 1] == ' ' || at[end - 1] == '\t')) end--;
        if (end > start && !(end - start == 7 && strncasecmp(at + start, "chunked", 7) == 0)) return true;
        while (i < len && at[i] != ',') i++; /* parameters of a coding */
    }
    return false;
}

/* RFC 9112 3.2: Host = uri-host [ ":" port ]; its characters are those of a
 * reg-name, an IP literal or an IPv4 address (RFC 3986 3.2.2). */
static bool host_chars_ok(const char *at, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char x = (unsigned char)at[i];
        if (!((x >= 'a' && x <= 'z') || (x >= 'A' && x <= 'Z') || (x >= '0' && x <= '9') ||
              (x != 0 && strchr("-._~%!$&'()*+,;=:[]", x))))
            return false;
    }
    return true;
}

static int on_header_value(http_parser *p, const char *at, size_t len)
{
    conn *c = p->data;
    if (header_budget(c, len)) return -1;
    /* a chunked body's trailer fields: counted against the cap, otherwise
     * ignored; above all an Authorization there must not authenticate
     * (RFC 9110 6.5.1: trailers are not merged into the header section) */
    if (c->headers_done) return 0;
    if (!c->in_value) {
        c->in_value = true;
        c->field_is_auth = c->field_len == 13 && strncasecmp(c->field, "authorization", 13) == 0;
        if (c->field_is_auth) c->auth_count++;
        c->field_is_expect = c->field_len == 6 && strncasecmp(c->field, "expect", 6) == 0;
        c->field_is_te = c->field_len == 17 && strncasecmp(c->field, "transfer-encoding", 17) == 0;
        if (c->field_is_te && c->te_len > 0 && c->te_len < sizeof c->te) c->te[c->te_len++] = ',';
        c->field_is_host = c->field_len == 4 && strncasecmp(c->field, "host", 4) == 0;
        if (c->field_is_host) c->host_count++;
    }
    if (c->field_is_expect && len >= 12 && strncasecmp(at, "100-continue", 12) == 0) c->expect_continue = true;
    if (c->field_is_host && !host_chars_ok(at, len)) c->host_bad = true;
    if (c->field_is_te) { /* judged whole at the end of the headers: a value may come in pieces */
        if (len > sizeof c->te - c->te_len) {
            c->te_other = true; /* longer than any "chunked" list we take */
        } else {
            memcpy(c->te + c->te_len, at, len);
            c->te_len += len;
        }
    }
    if (c->field_is_auth && c->auth_count == 1) {
        if (c->auth.len + len <= MAX_AUTH_BYTES) ps_buf_append(&c->auth, at, len);
        else c->auth_overflow = true;
    }
    return 0;
}

static int on_headers_complete(http_parser *p)
{
    conn *c = p->data;
    c->headers_done = true;
    c->method = p->method;
    c->keep_alive = http_should_keep_alive(p) && !p->upgrade;
    if (p->http_major != 1) {
        c->error_status = 505;
        return -1;
    }
    /* RFC 9112 3.2: an HTTP/1.1 request without Host, or any request with
     * more than one, MUST be answered 400 */
    if (c->host_count > 1 || (c->host_count == 0 && p->http_minor >= 1) || c->host_bad) {
        c->error_status = 400;
        c->error_message = c->host_bad       ? "the Host header is not a host[:port]"
                           : c->host_count   ? "more than one Host header"
                                             : "an HTTP/1.1 request needs a Host header";
        return -1;
    }
    /* RFC 9112 6.1: Transfer-Encoding in HTTP/1.0 means faulty framing */
    if (p->http_minor == 0 && (c->te_len > 0 || c->te_other)) {
        c->error_status = 400;
        c->error_message = "Transfer-Encoding in an HTTP/1.0 request";
        return -1;
    }
    if ((p->flags & F_CONTENTLENGTH) && p->content_length > (uint64_t)c->lp->srv->cfg->max_body) {
        c->error_status = 413; /* answered before the body is sent or read */
        return -1;
    }
    if (c->te_len > 0 && te_has_other_coding(c->te, c->te_len)) c->te_other = true;
    if (c->te_other) { /* RFC 9112 6.1: a transfer coding we do not understand: 501 */
        c->error_status = 501;
        return -1;
    }
    if (c->expect_continue && p->http_minor >= 1) { /* RFC 9110 10.1.1: the client waits for this */
        static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
        evbuffer_add(bufferevent_get_output(c->bev), cont, sizeof cont - 1);
    }
    return 0;
}

/* A chunk declared larger than the body cap is refused at its size line,
 * before any of it is read or waited for. */
static int on_chunk_header(http_parser *p)
{
    conn *c = p->data;
    if (p->content_length > (uint64_t)c->lp->srv->cfg->max_body - c->body.len) {
        c->error_status = 413;
        return -1;
    }
    return 0;
}

/* The libhttp-parser of Debian is built lenient (HTTP_PARSER_STRICT=0): it
 * takes any two bytes after a chunk's data as its CRLF ("2\r\n{}XX0\r\n\r\n"
 * parsed as the body "{}") and a CR followed by anything as a line end. Two
 * parsers that disagree on where a message ends are request smuggling, so
 * every framing byte (request line, fields, chunk lines, trailers: all that
 * is not body data) is checked here in stream order: a CR must be followed
 * by LF, and a chunk's data by exactly CRLF (RFC 9112 2.2, 7.1). */
static bool frame_scan(conn *c, const char *from, const char *to)
{
    for (const char *q = from; q < to; q++) {
        char x = *q;
        if (c->crlf_expect == 2) {
            if (x != '\r') return false;
            c->crlf_expect = 1;
        } else if (c->crlf_expect == 1) {
            if (x != '\n') return false;
            c->crlf_expect = 0;
        } else {
            if (c->cr_pending && x != '\n') return false;
            c->cr_pending = x == '\r';
        }
    }
    return true;
}

static int on_body(http_parser *p, const char *at, size_t len)
{
    conn *c = p->data;
    if (!frame_scan(c, c->scan_pos, at)) {
        c->error_status = 400;
        c->error_message = "a CR not followed by LF, or a chunk's data not followed by CRLF";
        return -1;
    }
    c->scan_pos = at + len;
    if ((p->flags & F_CHUNKED) && p->content_length == 0) c->crlf_expect = 2; /* the chunk's data is complete */
    if (c->body.len + len > (size_t)c->lp->srv->cfg->max_body) {
        c->error_status = 413;
        return -1;
    }
    if (!reserve(c, len)) return -1;
    ps_buf_append(&c->body, at, len);
    return 0;
}

static int on_message_complete(http_parser *p)
{
    conn *c = p->data;
    c->keep_alive = c->keep_alive && http_should_keep_alive(p);
    http_parser_pause(p, 1); /* one request at a time: pipelined ones wait in the input buffer */
    return 0;
}

/* Answers a request that could not be parsed or accepted as HTTP and closes. */
static void protocol_error(conn *c, int status)
{
    identity who;
    identify(c, c->headers_done, &who);
    if (!c->counted) admit(c, &who);
    c->keep_alive = false;
    /* the request is over: its bytes and its share of --max-buffered go now,
     * not after the lingering close, so requests still arriving can use them */
    ps_buf_free(&c->body);
    release_reserved(c);
    const char *code = "bad_request", *msg = "the request is not valid HTTP/1.1";
    if (status == 400 && c->error_message) msg = c->error_message;
    switch (status) {
    case 413:
        code = "body_too_large";
        msg = "the request body is larger than the server accepts (--max-body)";
        break;
    case 414:
        code = "uri_too_long";
        msg = "the request target is longer than the server accepts (--max-header-size)";
        break;
    case 431:
        code = "headers_too_large";
        msg = "the request line and headers are larger than the server accepts (--max-header-size)";
        break;
    case 501:
        code = "unsupported_transfer_coding";
        msg = "only the chunked transfer coding is supported";
        break;
    case 503:
        code = "server_busy";
        msg = "the server holds too many request bytes at once (--max-buffered); retry shortly";
        break;
    case 505:
        code = "http_version_not_supported";
        msg = "only HTTP/1.0 and HTTP/1.1 are spoken here";
        break;
    case 408:
        code = "request_timeout";
        msg = "the request did not arrive completely in time";
        break;
    }
    if (c->bev) {
        /* drain what the client is still sending so our answer is not lost to a reset */
        c->state = CONN_LINGER;
        send_error(c, status, code, msg, NULL, true);
    }
}

/* Parses buffered input and handles complete requests until the input runs
 * out or a request is in progress. */
static void conn_process(conn *c)
{
    struct evbuffer *in = bufferevent_get_input(c->bev);
    while (c->state == CONN_READING) {
        if (evbuffer_get_length(bufferevent_get_output(c->bev)) > OUTPUT_HIGH_BYTES) {
            c->out_paused = true; /* write_cb resumes */
            bufferevent_disable(c->bev, EV_READ);
            break;
        }
        struct evbuffer_iovec v;
        if (evbuffer_peek(in, -1, NULL, &v, 1) < 1 || v.iov_len == 0) break;
        if (!c->request_started && c->req_timer) {
            struct timeval tv = tv_from_ns(c->lp->srv->cfg->request_timeout_ns);
            evtimer_add(c->req_timer, &tv);
        }
        c->scan_pos = v.iov_base;
        size_t n = http_parser_execute(&c->parser, &parser_settings, v.iov_base, v.iov_len);
        enum http_errno e = HTTP_PARSER_ERRNO(&c->parser);
        if ((e == HPE_OK || e == HPE_PAUSED) && !frame_scan(c, c->scan_pos, (const char *)v.iov_base + n)) {
            evbuffer_drain(in, n);
            c->error_message = "a CR not followed by LF, or a chunk's data not followed by CRLF";
            protocol_error(c, 400);
            return;
        }
        evbuffer_drain(in, n);
        if (e == HPE_PAUSED) {
            http_parser_pause(&c->parser, 0);
            if (c->req_timer) evtimer_del(c->req_timer);
            bool upgrade = c->parser.upgrade;
            handle_request(c);
            /* the body has been parsed (and copied by the store): its memory and
             * its share of --max-buffered go now, not when the next request comes */
            if (c->body.cap > 16 * 1024) ps_buf_free(&c->body);
            release_reserved(c);
            if (upgrade && c->state == CONN_READING) { /* we speak no other protocol: close after this */
                c->keep_alive = false;
                conn_after_response(c);
            }
            continue;
        }
        if (e != HPE_OK) {
            int status = c->error_status ? c->error_status : 400;
            if (e == HPE_HEADER_OVERFLOW) status = 431;
            if (!c->error_status) c->error_message = http_errno_description(e); /* says what was wrong */
            protocol_error(c, status);
            return;
        }
        if (n < v.iov_len) { /* stopped without an error: nothing sensible follows */
            protocol_error(c, 400);
            return;
        }
    }
}

/* ---- bufferevent callbacks -------------------------------------------- */

static void read_cb(struct bufferevent *bev, void *arg)
{
    conn *c = arg;
    if (c->state == CONN_LINGER) {
        struct evbuffer *in = bufferevent_get_input(bev);
        c->linger_bytes += evbuffer_get_length(in);
        evbuffer_drain(in, evbuffer_get_length(in));
        if (c->linger_bytes > LINGER_MAX_BYTES) conn_free(c);
        return;
    }
    if (c->state == CONN_READING) conn_process(c);
}

static void write_cb(struct bufferevent *bev, void *arg)
{
    conn *c = arg;
    if (evbuffer_get_length(bufferevent_get_output(bev)) != 0) return;
    if (c->out_paused && c->state == CONN_READING) { /* the client took our answers: read on */
        c->out_paused = false;
        bufferevent_enable(bev, EV_READ);
        conn_process(c);
        return;
    }
    if (c->state == CONN_CLOSING) {
        conn_free(c);
    } else if (c->state == CONN_LINGER && !evtimer_pending(c->linger_timer, NULL)) {
        shutdown(bufferevent_getfd(bev), SHUT_WR);
        bufferevent_enable(bev, EV_READ);
        struct timeval tv = tv_from_ns(LINGER_NS);
        evtimer_add(c->linger_timer, &tv);
    }
}

static void event_cb(struct bufferevent *bev, short what, void *arg)
{
    conn *c = arg;
    if ((what & BEV_EVENT_TIMEOUT) && (what & BEV_EVENT_READING) && c->state == CONN_READING &&
        c->request_started) {
        protocol_error(c, 408); /* a slow client: tell it, then close */
        return;
    }
    if ((what & BEV_EVENT_EOF) && (c->state == CONN_READING || c->state == CONN_CLOSING) &&
        evbuffer_get_length(bufferevent_get_output(bev)) > 0) {
        /* the client half-closed after its requests: deliver the answers, then close */
        c->state = CONN_CLOSING;
        bufferevent_disable(bev, EV_READ);
        return;
    }
    if (c->state == CONN_BUSY) { /* the handler still owns the connection */
        c->dead = true;
        bufferevent_disable(bev, EV_READ | EV_WRITE);
        return;
    }
    conn_free(c);
}

static void request_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
    conn *c = arg;
    if (c->state == CONN_READING && c->request_started) protocol_error(c, 408);
}

/* ---- accepting -------------------------------------------------------- */

static void accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int socklen, void *arg)
{
    loop *lp = arg;
    ps_http_server *s = lp->srv;
    if (lp->draining ||
        atomic_fetch_add(&s->connections, 1) >= s->cfg->max_connections) { /* over the cap: refuse at once */
        if (!lp->draining) atomic_fetch_sub(&s->connections, 1);
        close(fd);
        return;
    }
    conn *c = calloc(1, sizeof *c);
    if (!c) abort();
    c->lp = lp;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (sa->sa_family == AF_INET)
        inet_ntop(AF_INET, &((struct sockaddr_in *)sa)->sin_addr, c->ip, sizeof c->ip);
    else if (sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((struct sockaddr_in6 *)sa)->sin6_addr, c->ip, sizeof c->ip);
    else
        snprintf(c->ip, sizeof c->ip, "unknown");
    c->bev = bufferevent_socket_new(lp->base, fd, BEV_OPT_CLOSE_ON_FREE);
    c->req_timer = evtimer_new(lp->base, request_timeout_cb, c);
    c->delay_timer = evtimer_new(lp->base, delay_fire, c);
    c->linger_timer = evtimer_new(lp->base, linger_fire, c);
    c->pending = evbuffer_new();
    if (!c->bev || !c->req_timer || !c->delay_timer || !c->linger_timer || !c->pending) abort();
    http_parser_init(&c->parser, HTTP_REQUEST);
    c->parser.data = c;
    c->state = CONN_READING;
    c->keep_alive = true;
    ps_buf_init(&c->url);
    ps_buf_init(&c->auth);
    ps_buf_init(&c->body);
    c->next = lp->conns;
    if (lp->conns) lp->conns->prev = c;
    lp->conns = c;
    lp->nconns++;
    bufferevent_setcb(c->bev, read_cb, write_cb, event_cb, c);
    struct timeval rt = tv_from_ns(s->cfg->idle_timeout_ns), wt = tv_from_ns(s->cfg->write_timeout_ns);
    bufferevent_set_timeouts(c->bev, &rt, &wt);
    bufferevent_enable(c->bev, EV_READ | EV_WRITE);
}

static void accept_resume(evutil_socket_t fd, short what, void *arg)
{
    loop *lp = arg;
    if (lp->listener && !lp->draining) evconnlistener_enable(lp->listener);
}

static void accept_error_cb(struct evconnlistener *l, void *arg)
{
    loop *lp = arg;
    int e = EVUTIL_SOCKET_ERROR();
    /* EMFILE and friends: pause accepting briefly instead of spinning */
    static atomic_int logged;
    if (atomic_fetch_add(&logged, 1) < 5) fprintf(stderr, "petstore-server: accept: %s\n", strerror(e));
    evconnlistener_disable(l);
    struct timeval tv = {0, 100000};
    evtimer_add(lp->accept_retry, &tv);
}

/* ---- loop control ----------------------------------------------------- */

static void drain_deadline(evutil_socket_t fd, short what, void *arg)
{
    loop *lp = arg;
    event_base_loopbreak(lp->base);
}

static void begin_drain(loop *lp)
{
    if (lp->draining) return;
    lp->draining = true;
    if (lp->listener) {
        evconnlistener_free(lp->listener);
        lp->listener = NULL;
    }
    conn *c = lp->conns;
    while (c) {
        conn *next = c->next;
        if (c->state == CONN_READING && !c->request_started) {
            if (evbuffer_get_length(bufferevent_get_output(c->bev)) == 0) {
                conn_free(c); /* idle: nothing in flight */
            } else { /* an answer is still being written (a big list, a slow reader): finish it, then close */
                c->state = CONN_CLOSING;
                bufferevent_disable(c->bev, EV_READ);
            }
        }
        c = next;
    }
    if (lp->nconns == 0) {
        event_base_loopexit(lp->base, NULL);
        return;
    }
    struct timeval tv = tv_from_ns(lp->srv->cfg->drain_timeout_ns);
    evtimer_add(lp->drain_timer, &tv);
}

static void wake_cb(evutil_socket_t fd, short what, void *arg)
{
    loop *lp = arg;
    pthread_mutex_lock(&lp->qlock);
    completion *list = lp->qhead;
    lp->qhead = lp->qtail = NULL;
    pthread_mutex_unlock(&lp->qlock);
    while (list) {
        completion *next = list->next;
        finish_create(list);
        ps_buf_free(&list->body);
        free(list);
        list = next;
    }
    if (atomic_load(&lp->stopping)) begin_drain(lp);
}

static void stall_cb(evutil_socket_t fd, short what, void *arg)
{
    loop *lp = arg;
    ps_clock_sleep_ns(lp->srv->cfg->stall_len_ns); /* deliberately blocks the whole loop, like a GC pause */
}

static void *loop_main(void *arg)
{
    loop *lp = arg;
    event_base_dispatch(lp->base);
    /* Connections still waiting for the store stay allocated: their
     * callback arrives when the store is closed, before destroy. */
    conn *c = lp->conns;
    while (c) {
        conn *next = c->next;
        if (c->state != CONN_BUSY) conn_free(c);
        else c->dead = true;
        c = next;
    }
    return NULL;
}

/* Every loop's socket sets SO_REUSEPORT, so bind() alone would let a second
 * server started on a port that is in use (by another petstore-server of
 * the same user) join it and take half its connections. A plain socket
 * bound first tells us whether anyone listens there; then the real ones. */
static int port_is_free(const struct sockaddr *sa, socklen_t sl, ps_error *err, const char *addr, int port)
{
    int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return ps_error_set(err, "socket: %s", strerror(errno));
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one); /* TIME_WAIT leftovers do not count */
    int rc = 0;
    if (bind(fd, sa, sl) != 0) {
        int e = errno;
        rc = ps_error_set(err, "cannot listen on %s port %d: %s", addr, port, strerror(e));
    }
    close(fd);
    return rc;
}

static int open_listener(const ps_server_config *cfg, int port, bool first, int *out_fd, int *out_port,
                         ps_error *err)
{
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    socklen_t sl;
    struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
    if (inet_pton(AF_INET, cfg->bind_addr, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)port);
        sl = sizeof *a4;
    } else if (inet_pton(AF_INET6, cfg->bind_addr, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)port);
        sl = sizeof *a6;
    } else {
        return ps_error_set(err, "--bind: '%s' is not an IPv4 or IPv6 address", cfg->bind_addr);
    }
    if (first && port != 0 && port_is_free((struct sockaddr *)&ss, sl, err, cfg->bind_addr, port) != 0) return -1;
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return ps_error_set(err, "socket: %s", strerror(errno));
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one); /* one socket per loop, the kernel spreads connections */
    if (bind(fd, (struct sockaddr *)&ss, sl) != 0) {
        int e = errno;
        close(fd);
        return ps_error_set(err, "cannot listen on %s port %d: %s", cfg->bind_addr, port, strerror(e));
    }
    if (listen(fd, 4096) != 0) {
        int e = errno;
        close(fd);
        return ps_error_set(err, "listen: %s", strerror(e));
    }
    socklen_t got = sizeof ss;
    getsockname(fd, (struct sockaddr *)&ss, &got);
    *out_port = ntohs(ss.ss_family == AF_INET ? a4->sin_port : a6->sin6_port);
    *out_fd = fd;
    return 0;
}

int ps_http_server_create(const ps_server_config *cfg, ps_store *store, ps_limiter *limiter,
                          ps_http_server **out, ps_error *err)
{
    int rc = -1;
    *out = NULL;
    if (evthread_use_pthreads() != 0) return ps_error_set(err, "libevent: evthread_use_pthreads failed");
    memset(&parser_settings, 0, sizeof parser_settings);
    parser_settings.on_message_begin = on_message_begin;
    parser_settings.on_url = on_url;
    parser_settings.on_header_field = on_header_field;
    parser_settings.on_header_value = on_header_value;
    parser_settings.on_headers_complete = on_headers_complete;
    parser_settings.on_body = on_body;
    parser_settings.on_chunk_header = on_chunk_header;
    parser_settings.on_message_complete = on_message_complete;

    ps_http_server *s = calloc(1, sizeof *s);
    if (!s) abort();
    s->cfg = cfg;
    s->store = store;
    s->limiter = limiter;
    s->access_fd = -1;
    s->start_mono_ns = ps_clock_mono_ns();
    pthread_mutex_init(&s->recovery_lock, NULL);
    int n = snprintf(s->resource, sizeof s->resource, "%s/categories", cfg->base_path);
    if (n < 0 || (size_t)n >= sizeof s->resource) {
        ps_error_set(err, "--base-path is too long");
        goto out;
    }
    s->resource_len = (size_t)n;
    if (cfg->access_log) {
        if (strcmp(cfg->access_log, "-") == 0) {
            s->access_fd = 2;
        } else {
            s->access_fd = open(cfg->access_log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
            if (s->access_fd < 0) {
                ps_error_set(err, "--access-log %s: %s", cfg->access_log, strerror(errno));
                goto out;
            }
            s->access_close = true;
        }
    }
    s->nloops = cfg->threads;
    s->loops = calloc((size_t)s->nloops, sizeof *s->loops);
    if (!s->loops) abort();
    for (int i = 0; i < s->nloops; i++) s->loops[i].fd = -1;
    for (int i = 0; i < s->nloops; i++) {
        loop *lp = &s->loops[i];
        lp->srv = s;
        lp->index = i;
        lp->rng = 0x9E3779B97F4A7C15ull * (uint64_t)(i + 1) ^ (uint64_t)ps_clock_wall_ns();
        if (!lp->rng) lp->rng = 1;
        pthread_mutex_init(&lp->qlock, NULL);
        ps_buf_init(&lp->scratch);
        int port = i == 0 ? cfg->port : s->port;
        if (open_listener(cfg, port, i == 0, &lp->fd, &s->port, err) != 0) goto out;
        lp->base = event_base_new();
        if (!lp->base) {
            ps_error_set(err, "libevent: event_base_new failed");
            goto out;
        }
        lp->listener = evconnlistener_new(lp->base, accept_cb, lp, LEV_OPT_CLOSE_ON_FREE, 0, lp->fd);
        if (!lp->listener) {
            ps_error_set(err, "libevent: evconnlistener_new failed");
            goto out;
        }
        lp->fd = -1; /* the listener owns it now */
        evconnlistener_set_error_cb(lp->listener, accept_error_cb);
        lp->wake = event_new(lp->base, -1, 0, wake_cb, lp);
        lp->drain_timer = evtimer_new(lp->base, drain_deadline, lp);
        lp->accept_retry = evtimer_new(lp->base, accept_resume, lp);
        lp->stall_timer = evtimer_new(lp->base, stall_cb, lp);
        if (!lp->wake || !lp->drain_timer || !lp->accept_retry || !lp->stall_timer) abort();
        if (cfg->stall_len_ns > 0) {
            struct timeval tv = tv_from_ns(cfg->stall_at_ns);
            evtimer_add(lp->stall_timer, &tv);
        }
    }
    rc = 0;
    *out = s;
out:
    if (rc != 0) ps_http_server_destroy(s);
    return rc;
}

int ps_http_server_port(const ps_http_server *s)
{
    return s->port;
}

int ps_http_server_start(ps_http_server *s, ps_error *err)
{
    for (int i = 0; i < s->nloops; i++) {
        int e = pthread_create(&s->loops[i].thread, NULL, loop_main, &s->loops[i]);
        if (e != 0) {
            ps_http_server_stop(s);
            return ps_error_set(err, "pthread_create: %s", strerror(e));
        }
        s->loops[i].thread_started = true;
    }
    return 0;
}

void ps_http_server_stop(ps_http_server *s)
{
    for (int i = 0; i < s->nloops; i++) {
        atomic_store(&s->loops[i].stopping, true);
        if (s->loops[i].wake) event_active(s->loops[i].wake, EV_READ, 0);
    }
}

void ps_http_server_wait(ps_http_server *s)
{
    for (int i = 0; i < s->nloops; i++)
        if (s->loops[i].thread_started) {
            pthread_join(s->loops[i].thread, NULL);
            s->loops[i].thread_started = false;
        }
}

void ps_http_server_destroy(ps_http_server *s)
{
    if (!s) return;
    for (int i = 0; s->loops && i < s->nloops; i++) {
        loop *lp = &s->loops[i];
        /* completions that arrived after the loop stopped: drop them, then the connections */
        completion *comp = lp->qhead;
        while (comp) {
            completion *next = comp->next;
            ps_buf_free(&comp->body);
            free(comp);
            comp = next;
        }
        lp->draining = false;
        while (lp->conns) conn_free(lp->conns);
        if (lp->listener) evconnlistener_free(lp->listener);
        if (lp->fd >= 0) close(lp->fd);
        if (lp->wake) event_free(lp->wake);
        if (lp->drain_timer) event_free(lp->drain_timer);
        if (lp->accept_retry) event_free(lp->accept_retry);
        if (lp->stall_timer) event_free(lp->stall_timer);
        if (lp->base) event_base_free(lp->base);
        pthread_mutex_destroy(&lp->qlock);
        ps_buf_free(&lp->scratch);
    }
    free(s->loops);
    while (s->recovery) {
        recovery_entry *next = s->recovery->next;
        free(s->recovery);
        s->recovery = next;
    }
    pthread_mutex_destroy(&s->recovery_lock);
    if (s->access_close) close(s->access_fd);
    free(s);
}
