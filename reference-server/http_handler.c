/* http_handler.c - the request handling of petstore-server: who sent it
 * (key or client address), admission by the rate limiter, routing,
 * validation and the store; the headers every answer carries. Faults bend
 * the answers here through ps_fault_on. */
#include "reference-server/http_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "core/clock.h"
#include "reference-server/auth.h"
#include "reference-server/responses.h"
#include "reference-server/validate.h"

static int64_t window_seconds(const ps_http_server *s, const ps_limit_decision *d)
{
    double base = 60;
    if (d->window && strcmp(d->window, "day") == 0)
        base = 86400;
    else if (d->window && strcmp(d->window, "ban") == 0)
        base = (double)s->cfg->ban_seconds;
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
    ps_buf bent = PS_BUF_INIT; /* the value as a faulty parser reads it */
    if (headers_known &&
        c->req.auth_overflow) /* longer than any key; never match a cut-off prefix */
        who->cred = PS_CRED_MALFORMED;
    else if (headers_known)
        who->cred = ps_auth_parse_faulty(c->auth.data, c->auth.len, c->req.auth_count, cfg->faults,
                                         &bent, &token, &token_len);
    if (who->cred == PS_CRED_TOKEN) {
        const ps_key_entry *e = ps_keyring_find(cfg->keys, token, token_len);
        /* fault key-case-insensitive */
        if (!e && ps_fault_on(cfg->faults, PS_FAULT_KEY_CASE_INSENSITIVE))
            e = ps_keyring_find_nocase(cfg->keys, token, token_len);
        /* fault prefix-key-match: a near miss (one character short or one
         * too many) is taken for the key it nearly is */
        if (!e && ps_fault_on(cfg->faults, PS_FAULT_PREFIX_KEY_MATCH))
            e = ps_keyring_find_near(cfg->keys, token, token_len);
        if (e) {
            who->authenticated = true;
            who->id = e->key;
            who->id_len = e->key_len;
            who->per_minute = e->plan.per_minute;
            who->per_day = e->plan.per_day;
            ps_buf_free(&bent);
            return;
        }
        if (ps_fault_on(cfg->faults, PS_FAULT_ACCEPT_ANY_KEY)) {
            who->authenticated = true;
            who->id = token;
            who->id_len = token_len;
            who->per_minute = 60;
            who->per_day = 1000;
            return; /* token points into c->auth: accept-any-key bends nothing else */
        }
    }
    ps_buf_free(&bent);
    if (who->cred == PS_CRED_NONE && headers_known && ps_fault_on(cfg->faults, PS_FAULT_NO_AUTH))
        who->authenticated = true;
    /* Unauthenticated requests are counted per client address on Free numbers. */
    snprintf(who->ipbuf, sizeof who->ipbuf, "ip:%s", c->ip);
    who->id = who->ipbuf;
    who->id_len = strlen(who->ipbuf);
    ps_plan_published(PS_PLAN_FREE, &who->per_minute, &who->per_day);
}

/* Faults creates-/errors-counted-silently: admission (v, counted on the
 * key) takes every request, but the headers are those of a second, quiet
 * counter that a create (or, at answer time, a 4xx) leaves alone, so the
 * headers say they are not counted while they use up the window. */
static void quiet_headers(conn *c, const identity *who, bool create, int64_t now, ps_admission v)
{
    ps_http_server *s = c->lp->srv;
    request *q = &c->req;
    int n = snprintf(c->quiet_id, sizeof c->quiet_id, "quiet/%.*s", (int)who->id_len, who->id);
    q->quiet_id_len = n > 0 && (size_t)n < sizeof c->quiet_id ? (size_t)n : 0;
    q->quiet_pm = who->per_minute;
    q->quiet_pd = who->per_day;
    bool shown = v == PS_ADMITTED &&
                 !(create && ps_fault_on(s->cfg->faults, PS_FAULT_CREATES_COUNTED_SILENTLY));
    ps_limit_decision d;
    if (shown)
        ps_limiter_admit(s->limiter, c->quiet_id, q->quiet_id_len, who->per_minute, who->per_day,
                         now, &d);
    else
        ps_limiter_peek(s->limiter, c->quiet_id, q->quiet_id_len, who->per_minute, who->per_day,
                        now, &d);
    d.verdict = v;
    if (v != PS_ADMITTED) d.retry_after_s = q->decision.retry_after_s;
    q->decision = d;
    q->quiet_refundable = shown && ps_fault_on(s->cfg->faults, PS_FAULT_ERRORS_COUNTED_SILENTLY);
    q->admitted_ns = now;
}

/* Counts the request (with the defaults every request counts, errors
 * included; --count-ops leaves some operations out: counts false) and
 * returns the verdict after the faults that bend admission (create: the
 * request is a createCategory). A request that is not counted is never
 * refused (bans aside): its headers tell the state as it stands. */
static ps_admission admit(conn *c, const identity *who, bool counts, bool create)
{
    ps_http_server *s = c->lp->srv;
    int64_t now = ps_clock_wall_ns();
    identity per_loop;
    if (ps_fault_on(s->cfg->faults, PS_FAULT_PER_LOOP_COUNTS)) { /* a limiter per loop, in effect */
        per_loop = *who;
        int n = snprintf(c->loop_scoped_id, sizeof c->loop_scoped_id, "loop%d/%.*s", c->lp->index,
                         (int)who->id_len, who->id);
        per_loop.id = c->loop_scoped_id;
        per_loop.id_len = n > 0 && (size_t)n < sizeof c->loop_scoped_id ? (size_t)n : 0;
        who = &per_loop;
    }
    if (!counts) {
        ps_limiter_peek(s->limiter, who->id, who->id_len, who->per_minute, who->per_day, now,
                        &c->req.decision);
        c->req.counted = true; /* the headers are known */
        if (c->req.decision.verdict == PS_LIMITED) c->req.decision.verdict = PS_ADMITTED;
        return c->req.decision.verdict;
    }
    /* fault over-admission-create: a create finds one admission more per window */
    int64_t beyond = create && ps_fault_on(s->cfg->faults, PS_FAULT_OVER_ADMISSION_CREATE) ? 1 : 0;
    ps_limiter_admit_beyond(s->limiter, who->id, who->id_len, who->per_minute, who->per_day, now,
                            beyond, &c->req.decision);
    c->req.counted = true;
    ps_admission v = c->req.decision.verdict;
    if (ps_fault_on(s->cfg->faults, PS_FAULT_CREATES_COUNTED_SILENTLY) ||
        ps_fault_on(s->cfg->faults, PS_FAULT_ERRORS_COUNTED_SILENTLY))
        quiet_headers(c, who, create, now, v);
    if (v == PS_ADMITTED && !s->cfg->count_errors) { /* kept to take back if the answer is a 4xx */
        request *q = &c->req;
        q->refundable = true;
        q->limit_pm = who->per_minute;
        q->limit_pd = who->per_day;
        q->admitted_ns = now;
        if (who->id == who->ipbuf) {
            size_t n = who->id_len < sizeof q->limit_ip ? who->id_len : sizeof q->limit_ip - 1;
            memcpy(q->limit_ip, who->id, n);
            q->limit_ip[n] = '\0';
            q->limit_id = q->limit_ip;
            q->limit_id_len = n;
        } else {
            q->limit_id = who->id;
            q->limit_id_len = who->id_len;
        }
    }
    if (ps_fault_on(s->cfg->faults, PS_FAULT_NO_RECOVERY)) {
        if (v != PS_ADMITTED)
            recovery_mark(s, who->id, who->id_len, now);
        else if (recovery_blocked(s, who->id, who->id_len, now))
            v = PS_LIMITED;
    }
    if (ps_fault_on(s->cfg->faults, PS_FAULT_NEVER_LIMIT)) v = PS_ADMITTED;
    return v;
}

/* ---- answering -------------------------------------------------------- */

/* Sends r with the headers every answer carries: Content-Type and, once
 * the request is counted, the rate-limit headers; then extra_headers. */
static void respond(conn *c, int status, const char *body, size_t body_len, ps_store_snapshot *snap,
                    const char *extra_headers, bool close)
{
    ps_http_server *s = c->lp->srv;
    const ps_server_config *cfg = s->cfg;
    ps_buf *h = &c->lp->headers;
    ps_buf_reset(h);
    ps_buf_puts(h, ps_fault_on(cfg->faults, PS_FAULT_CONTENT_TYPE_TEXT)
                       ? "Content-Type: text/plain\r\n"
                       : "Content-Type: application/json\r\n");
    if (c->req.refundable && status >= 400 && status < 500) {
        /* --count-errors no: this admission does not count after all */
        request *q = &c->req;
        ps_limiter_refund(s->limiter, q->limit_id, q->limit_id_len, q->limit_pm, q->limit_pd,
                          q->admitted_ns);
        ps_limiter_peek(s->limiter, q->limit_id, q->limit_id_len, q->limit_pm, q->limit_pd,
                        ps_clock_wall_ns(), &q->decision);
        if (q->decision.verdict == PS_LIMITED) q->decision.verdict = PS_ADMITTED;
    }
    if (c->req.quiet_refundable && status >= 400 && status < 500) {
        /* fault errors-counted-silently: the 4xx leaves the quiet counter, not the key's */
        request *q = &c->req;
        ps_limiter_refund(s->limiter, c->quiet_id, q->quiet_id_len, q->quiet_pm, q->quiet_pd,
                          q->admitted_ns);
        ps_limiter_peek(s->limiter, c->quiet_id, q->quiet_id_len, q->quiet_pm, q->quiet_pd,
                        ps_clock_wall_ns(), &q->decision);
        q->decision.verdict = PS_ADMITTED;
    }
    c->req.refundable = false;
    if (c->req.counted) {
        ps_rate_headers rh;
        unsigned long seq = atomic_fetch_add_explicit(&s->seq, 1, memory_order_relaxed);
        ps_rate_headers_compute(&c->req.decision, status, ps_clock_wall_s(),
                                window_seconds(s, &c->req.decision), seq, cfg->faults, &rh);
        ps_rate_headers_render(h, &rh);
        if (rh.present &&
            ps_fault_on(cfg->faults, PS_FAULT_DUPLICATE_HEADER)) /* RFC 9110 5.3: never twice */
            ps_buf_printf(h, "X-RateLimit-Limit: %lld\r\n", (long long)rh.limit);
    }
    if (extra_headers) ps_buf_puts(h, extra_headers);
    response r = {status, body, body_len, snap, h->data, close};
    ps_conn_send(c, &r);
}

static void send_error(conn *c, int status, const char *code, const char *message,
                       const char *extra_headers, bool close)
{
    ps_buf body = PS_BUF_INIT;
    ps_render_error(&body, status, code, message, c->lp->srv->cfg->faults);
    respond(c, status, body.data, body.len, NULL, extra_headers, close);
    ps_buf_free(&body);
}

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
        if (http_parser_parse_url(url, len, 0, &u) != 0 || !(u.field_set & (1 << UF_PATH)))
            return false;
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
    send_error(
        c, 429, banned ? "banned" : "rate_limited",
        banned
            ? "too many requests while limited: temporarily banned; retry after Retry-After seconds"
            : "rate limit exceeded; retry after Retry-After seconds",
        "Cache-Control: no-store\r\n", false);
}

/* ---- the Categories interface ----------------------------------------- */

static void store_done(void *arg, const ps_category *created, int status);

static void create_category(conn *c)
{
    ps_http_server *s = c->lp->srv;
    const ps_server_config *cfg = s->cfg;
    ps_new_category nc;
    /* fault content-type-exact: a media type with parameters or in another case is refused */
    if (ps_fault_on(cfg->faults, PS_FAULT_CONTENT_TYPE_EXACT) &&
        strcmp(c->req.content_type, "application/json") != 0) {
        send_error(c, 415, "unsupported_media_type", "Content-Type must be application/json", NULL,
                   false);
        return;
    }
    if (ps_validate_new_category(c->body.data, c->body.len, cfg->faults, &nc) != 0) {
        if (nc.json_failure == PS_JSON_MALFORMED &&
            ps_fault_on(cfg->faults, PS_FAULT_MALFORMED_JSON_500))
            send_error(c, 500, "internal_error", "the server failed to process the body", NULL,
                       false);
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
    if (ps_fault_on(cfg->faults, PS_FAULT_TRIM_WHITESPACE)) {
        ps_trim_ascii_space(&name, &name_len);
        if (desc) ps_trim_ascii_space(&desc, &desc_len);
    }
    if (ps_fault_on(cfg->faults, PS_FAULT_DESCRIPTION_LENGTH_500) && has_desc && desc_len > 1000) {
        send_error(c, 500, "internal_error", "value too long for column description", NULL, false);
        ps_buf_free(&mname);
        ps_buf_free(&mdesc);
        ps_new_category_free(&nc);
        return;
    }
    if (ps_fault_on(cfg->faults, PS_FAULT_TRUNCATE_NAMES) && name_len > 64) {
        name_len = 64; /* cut at a UTF-8 boundary: back over continuation bytes */
        while (name_len > 0 && ((unsigned char)name[name_len] & 0xC0) == 0x80)
            name_len--;
    }
    int64_t client_id = 0; /* fault client-id-honoured: mass assignment of "id" */
    const ps_json *idv =
        ps_fault_on(cfg->faults, PS_FAULT_CLIENT_ID_HONOURED) ? ps_json_get(nc.tree, "id") : NULL;
    if (idv && idv->type == PS_JSON_NUMBER && idv->is_int && idv->i > 0) client_id = idv->i;
    if (!has_desc && ps_fault_on(cfg->faults, PS_FAULT_INVENT_DESCRIPTION)) {
        has_desc = true;
        desc = "";
        desc_len = 0;
    }
    ps_conn_hold(c);
    ps_store_create_async_id(s->store, client_id, name, name_len, has_desc ? desc : NULL, desc_len,
                             has_desc, store_done, c);
    ps_buf_free(&mname);
    ps_buf_free(&mdesc);
    ps_new_category_free(&nc);
}

/* Where a stored refused create's outcome goes: nowhere (its answer is the 429). */
static void store_discarded(void *arg, const ps_category *created, int status)
{
    (void)arg;
    (void)created;
    (void)status;
}

/* fault create-on-429: the create is refused with 429 but its category,
 * when the body is valid, is stored anyway (admitted beyond the limit). */
static void store_refused_create(conn *c)
{
    ps_http_server *s = c->lp->srv;
    ps_new_category nc;
    if (ps_validate_new_category(c->body.data, c->body.len, s->cfg->faults, &nc) == 0)
        ps_store_create_async(s->store, nc.name, nc.name_len, nc.description, nc.description_len,
                              nc.has_description, store_discarded, NULL);
    ps_new_category_free(&nc);
}

void ps_handle_request(conn *c)
{
    ps_http_server *s = c->lp->srv;
    const ps_server_config *cfg = s->cfg;
    identity who;
    identify(c, true, &who);
    int m = c->req.method;
    bool on_resource = path_is_resource(s, c->url.data, c->url.len);
    bool counts =
        cfg->count_ops == PS_COUNT_ALL ||
        (cfg->count_ops == PS_COUNT_LIST && on_resource && (m == HTTP_GET || m == HTTP_HEAD)) ||
        (cfg->count_ops == PS_COUNT_CREATE && on_resource && m == HTTP_POST);
    ps_admission v = admit(c, &who, counts, on_resource && m == HTTP_POST);
    if (v != PS_ADMITTED) {
        if (on_resource && m == HTTP_POST && who.authenticated &&
            ps_fault_on(cfg->faults, PS_FAULT_CREATE_ON_429))
            store_refused_create(c);
        send_refusal(c, v);
        return;
    }
    if (!on_resource) {
        send_error(c, 404, "not_found", "no such resource; the interface serves {base}/categories",
                   NULL, false);
        return;
    }
    /* RFC 9110 9.1: a general-purpose server MUST support HEAD wherever it
     * supports GET; it is answered as the GET, without the body. */
    if (m != HTTP_GET && m != HTTP_HEAD && m != HTTP_POST) {
        send_error(c, 405, "method_not_allowed",
                   "only GET (and HEAD) and POST are defined on /categories",
                   "Allow: GET, HEAD, POST\r\n", false);
        return;
    }
    if (!who.authenticated) {
        const char *code = "invalid_key", *message = "the API key is not valid";
        const char *hdr = challenge(cfg, who.cred, &code, &message);
        send_error(c, 401, code, message, hdr, false);
        return;
    }
    if (m == HTTP_POST) {
        create_category(c);
        return;
    }
    ps_store_snapshot *snap = ps_store_list(s->store);
    size_t len;
    const char *json = ps_store_snapshot_json(snap, &len);
    if (ps_fault_on(cfg->faults, PS_FAULT_LIST_PAGE_CUT)) {
        ps_buf page = PS_BUF_INIT;
        if (ps_render_list_first(&page, json, len, 100) == 0) {
            respond(c, 200, page.data, page.len, NULL, NULL, false);
            ps_buf_free(&page);
            ps_store_snapshot_release(snap);
            return;
        }
        ps_buf_free(&page);
    }
    respond(c, 200, json, len, snap, NULL, false); /* fault list-id-string: the store renders it */
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
        ps_render_category(&comp->body, created->id, created->name, created->name_len,
                           created->description, created->description_len,
                           created->description != NULL);
    else
        comp->status = -1;
    pthread_mutex_lock(&lp->qlock);
    if (lp->qtail)
        lp->qtail->next = comp;
    else
        lp->qhead = comp;
    lp->qtail = comp;
    pthread_mutex_unlock(&lp->qlock);
    event_active(lp->wake, EV_READ, 0);
}

void ps_handle_completion(completion *comp)
{
    conn *c = comp->c;
    if (c->dead) {
        ps_conn_free(c);
        return;
    }
    c->state = CONN_READING; /* ps_conn_send decides what comes next */
    if (comp->status != 0) {
        send_error(c, 500, "store_failed",
                   "the category could not be stored durably; it was not created", NULL, false);
    } else {
        int status = ps_fault_on(c->lp->srv->cfg->faults, PS_FAULT_CREATE_STATUS_200) ? 200 : 201;
        respond(c, status, comp->body.data, comp->body.len, NULL, NULL, false);
    }
    ps_conn_resume(c);
}

void ps_handle_bad_request(conn *c, int status)
{
    identity who;
    identify(c, c->req.headers_done, &who);
    if (!c->req.counted)
        admit(c, &who, c->lp->srv->cfg->count_ops == PS_COUNT_ALL, false); /* not an operation */
    const char *code = "bad_request", *msg = "the request is not valid HTTP/1.1";
    if (status == 400 && c->req.error_message) msg = c->req.error_message;
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
    send_error(c, status, code, msg, NULL, true);
}
