/* front.c - replies a gateway or proxy made, told from the service's
 * (see front.h). */
#define _GNU_SOURCE /* memmem */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "runner/suites/front.h"

/* What a front's own page names, when no header does: nginx signs its
 * error pages, haproxy's say what it could not do. */
static const struct {
    const char *in_body, *who;
} page_marks[] = {
    {"<center>nginx", "nginx"},
    {"No server is available to handle this request", "haproxy"},
    {"The server didn't respond in time", "haproxy"},
    {"An invalid response was received from the server", "haproxy"},
    {"cloudflare", "cloudflare"},
    {"Envoy", "envoy"},
};

/* Servers and proxies that write pages of their own in front of a service. */
static const char *const gateways[] = {
    "nginx",   "haproxy", "envoy",     "cloudflare",      "awselb",      "traefik",    "caddy",
    "varnish", "apache",  "openresty", "Google Frontend", "AkamaiGHost", "istio-envoy"};

static bool names_gateway(const char *v)
{
    for (size_t i = 0; v && i < sizeof gateways / sizeof gateways[0]; i++)
        if (strncasecmp(v, gateways[i], strlen(gateways[i])) == 0) return true;
    return false;
}

static bool is_page(const ps_exchange *ex)
{
    const char *ct = ps_headers_get(&ex->resp_headers, "Content-Type");
    if (ct && (strncasecmp(ct, "text/html", 9) == 0 || strncasecmp(ct, "text/plain", 10) == 0))
        return true;
    const char *b = ex->body.data;
    size_t i = 0;
    while (b && i < ex->body.len && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n'))
        i++;
    return b && i < ex->body.len && b[i] == '<';
}

/* The name a reply gives its maker: Server up to its version, else Via,
 * else a page's mark. */
static void name_of(const ps_exchange *ex, char *who, size_t who_size)
{
    const char *server = ps_headers_get(&ex->resp_headers, "Server");
    const char *via = ps_headers_get(&ex->resp_headers, "Via");
    if (server && *server) {
        snprintf(who, who_size, "%.*s", (int)strcspn(server, "/ \t"), server);
        return;
    }
    if (via && *via) {
        snprintf(who, who_size, "a proxy (Via: %.60s)", via);
        return;
    }
    for (size_t i = 0; i < sizeof page_marks / sizeof page_marks[0]; i++)
        if (ex->body.data && ex->body.len &&
            memmem(ex->body.data, ex->body.len, page_marks[i].in_body,
                   strlen(page_marks[i].in_body))) {
            snprintf(who, who_size, "%s", page_marks[i].who);
            return;
        }
    snprintf(who, who_size, "a gateway");
}

bool ps_front_made(const ps_exchange *ex, char *who, size_t who_size)
{
    bool made = false;
    if (!ex || !ex->responded) goto out;
    if (ex->status != 502 && ex->status != 503 && ex->status != 504) goto out;
    /* the service's headers make it the service's answer, whatever its body */
    if (ps_headers_get(&ex->resp_headers, "X-RateLimit-Limit") ||
        ps_headers_get(&ex->resp_headers, "X-RateLimit-Remaining") ||
        ps_headers_get(&ex->resp_headers, "X-RateLimit-Reset"))
        goto out;
    made = is_page(ex) || names_gateway(ps_headers_get(&ex->resp_headers, "Server")) ||
           ps_headers_get(&ex->resp_headers, "Via") != NULL;
out:
    if (made && who && who_size) name_of(ex, who, who_size);
    return made;
}

bool ps_front_judges(ps_check_id ck)
{
    return ck == PS_CK_LIMIT429_ENFORCED;
}

/* The observer's memory for the run. */
typedef struct front_state {
    unsigned replies, refusals[4]; /* 503s by ps_key_role */
    unsigned by_role[4];           /* every reply, by ps_key_role */
    unsigned statuses[3];          /* 502, 503, 504 */
    char who[64];                  /* the first front's name */
    char first[96];                /* its first reply: "503 to GET /categories" */
    unsigned char untested[(PS_CK_COUNT + 7) / 8];
} front_state;

_Static_assert(sizeof(front_state) <= PS_FRONT_STATE_SIZE, "PS_FRONT_STATE_SIZE too small");

static front_state *state_of(const ps_conform *c)
{
    /* zeroed at the run's start: an empty state is a valid one */
    return ps_conform_observer_state(c, ps_front_observe);
}

void ps_front_observe(ps_conform *c, void *state, const ps_observation *o)
{
    front_state *s = state;
    char who[64];
    if (!ps_front_made(o->ex, who, sizeof who)) return;
    (void)c;
    if (!s->replies) {
        snprintf(s->who, sizeof s->who, "%s", who);
        const char *url = o->ex->url ? o->ex->url : "", *host = strstr(url, "://");
        const char *path = host ? strchr(host + 3, '/') : NULL;
        snprintf(s->first, sizeof s->first, "%ld to %s %.60s", o->ex->status,
                 o->ex->method ? o->ex->method : "?", path ? path : url);
    }
    s->replies++;
    if ((unsigned)o->role < 4) s->by_role[o->role]++;
    if ((unsigned)o->role < 4 && o->ex->status == 503) s->refusals[o->role]++;
    s->statuses[o->ex->status - 502]++;
}

void ps_front_note_untested(const ps_conform *c, ps_check_id ck)
{
    front_state *s = state_of(c);
    if (s && (unsigned)ck < PS_CK_COUNT) s->untested[ck / 8] |= (unsigned char)(1u << (ck % 8));
}

unsigned ps_front_refusals(const ps_conform *c, ps_key_role role, char *who, size_t who_size)
{
    const front_state *s = state_of(c);
    if (who && who_size) snprintf(who, who_size, "%s", s ? s->who : "");
    return s && (unsigned)role < 4 ? s->refusals[role] : 0;
}

unsigned ps_front_replies_to(const ps_conform *c, ps_key_role role)
{
    const front_state *s = state_of(c);
    return s && (unsigned)role < 4 ? s->by_role[role] : 0;
}

void ps_front_report(const ps_conform *c, ps_jw *w)
{
    const front_state *s = state_of(c);
    if (!s || !s->replies) {
        ps_jw_null(w);
        return;
    }
    ps_jw_object_open(w);
    ps_jw_kstring(w, "who", s->who);
    ps_jw_kuint(w, "replies", s->replies);
    ps_jw_kstring(w, "first", s->first);
    ps_jw_key(w, "statuses");
    ps_jw_object_open(w);
    for (int i = 0; i < 3; i++) {
        char k[8];
        snprintf(k, sizeof k, "%d", 502 + i);
        if (s->statuses[i]) ps_jw_kuint(w, k, s->statuses[i]);
    }
    ps_jw_object_close(w);
    /* checks that had an observation on such a reply: it was not judged */
    ps_jw_key(w, "untested");
    ps_jw_array_open(w);
    for (unsigned ck = 0; ck < PS_CK_COUNT; ck++)
        if (s->untested[ck / 8] & (1u << (ck % 8))) ps_jw_string(w, ps_check_def_get(ck)->id);
    ps_jw_array_close(w);
    ps_jw_object_close(w);
}
