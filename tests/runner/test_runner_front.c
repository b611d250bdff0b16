/* test_runner_front.c - replies a front made (runner/suites/front.h) told
 * from the service's, never judged as its answers; and the judge's bounds
 * on X-RateLimit-Reset (issue 29): the plan's window, and the whole limit
 * back before the Reset named. */
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/json.h"
#include "harness.h"
#include "runner/checks.h"
#include "runner/conform.h"
#include "runner/run.h"
#include "runner/suites/front.h"
#include "runner/suites/suites.h"

#define T0 1800000000LL
#define NS 1000000000LL

typedef struct run {
    ps_conform_config cfg;
    ps_checks *checks;
    ps_conform *c;
} run;

static void run_open(run *r)
{
    memset(r, 0, sizeof *r);
    r->cfg.base_url = "http://127.0.0.1:1/v1";
    r->cfg.api_key = "unit-main-key";
    r->cfg.plan.id = PS_PLAN_FREE, r->cfg.plan.per_minute = 60, r->cfg.plan.per_day = 1000;
    r->cfg.limit_plan = r->cfg.plan;
    r->cfg.timeout_ns = NS;
    r->cfg.max_wait_ns = NS;
    r->cfg.max_body = 4096;
    r->checks = ps_checks_create();
    ps_error err;
    r->c = ps_conform_create(&r->cfg, r->checks, ps_suite_observers, ps_suite_observer_count, &err);
    CHECK(r->c != NULL);
}

static void run_close(run *r)
{
    ps_conform_destroy(r->c);
    ps_checks_destroy(r->checks);
}

/* A response: status, Content-Type (NULL: none), Server (NULL: none), body;
 * with rate-limit headers when remaining >= 0 (Reset at T0 + reset). */
static void make(ps_exchange *ex, long status, const char *ct, const char *server, const char *body,
                 int64_t remaining, int64_t reset, double at_s)
{
    memset(ex, 0, sizeof *ex);
    ex->method = strdup("GET");
    ex->url = strdup("http://127.0.0.1:1/v1/categories");
    ex->curl = strdup("curl");
    ex->responded = true;
    ex->status = status;
    ex->body_cap = 4096;
    ex->sent_wall_ns = T0 * NS + (int64_t)(at_s * 1e9);
    ex->done_wall_ns = ex->sent_wall_ns + 1000000;
    if (ct) ps_headers_add(&ex->resp_headers, "Content-Type", 12, ct, strlen(ct));
    if (server) ps_headers_add(&ex->resp_headers, "Server", 6, server, strlen(server));
    if (remaining >= 0) {
        char v[32];
        ps_headers_add(&ex->resp_headers, "X-RateLimit-Limit", 17, "60", 2);
        snprintf(v, sizeof v, "%lld", (long long)remaining);
        ps_headers_add(&ex->resp_headers, "X-RateLimit-Remaining", 21, v, strlen(v));
        snprintf(v, sizeof v, "%lld", (long long)(T0 + reset));
        ps_headers_add(&ex->resp_headers, "X-RateLimit-Reset", 17, v, strlen(v));
    }
    ps_buf_append(&ex->body, body, strlen(body));
    ex->body_total = strlen(body);
}

static bool made(long status, const char *ct, const char *server, const char *body,
                 int64_t remaining, char *who, size_t who_size)
{
    ps_exchange ex;
    make(&ex, status, ct, server, body, remaining, 30, 0);
    bool r = ps_front_made(&ex, who, who_size);
    ps_exchange_free(&ex);
    return r;
}

static const char NGINX_503[] =
    "<html>\r\n<head><title>503 Service Temporarily Unavailable</title></head>\r\n"
    "<body>\r\n<center><h1>503 Service Temporarily Unavailable</h1></center>\r\n"
    "<hr><center>nginx/1.22.1</center>\r\n</body>\r\n</html>\r\n";
static const char HAPROXY_503[] =
    "<html><body><h1>503 Service Unavailable</h1>\nNo server is available to "
    "handle this request.\n</body></html>\n";
static const char ERROR_503[] = "{\"code\":\"unavailable\",\"message\":\"down\",\"status\":503}";

static void classifies(void)
{
    char who[64];
    CHECK(made(503, "text/html", "nginx/1.22.1", NGINX_503, -1, who, sizeof who));
    CHECK_STR(who, "nginx");
    CHECK(made(503, "text/html", NULL, HAPROXY_503, -1, who, sizeof who));
    CHECK_STR(who, "haproxy");
    CHECK(made(502, NULL, NULL, "<html>bad gateway</html>", -1, who, sizeof who));
    CHECK_STR(who, "a gateway");
    /* a JSON body but a gateway's Server and no rate-limit headers */
    CHECK(made(504, "application/json", "envoy", "{}", -1, who, sizeof who));
    /* the service's own answers stay the service's: its headers, a JSON
     * Error without a gateway's name, another status */
    CHECK(!made(503, "text/html", "nginx", NGINX_503, 5, NULL, 0));
    CHECK(!made(503, "application/json", NULL, ERROR_503, -1, NULL, 0));
    CHECK(!made(500, "text/html", "nginx", NGINX_503, -1, NULL, 0));
    CHECK(!made(429, "text/html", "nginx", NGINX_503, -1, NULL, 0));
}

static ps_check_outcome outcome(run *r, ps_check_id ck)
{
    ps_check_outcome o;
    ps_check_outcome_get(r->checks, ck, false, &o);
    return o;
}

/* A gateway's page fails none of the service's checks; a check failed on
 * it is not judged, naming the front; the report says who answered. */
static void not_judged(void)
{
    run r;
    run_open(&r);
    ps_exchange ex;
    make(&ex, 200, "application/json", NULL, "[]", 58, 30, 0);
    ps_conform_observe(r.c, &ex, PS_KEY_MAIN);
    ps_exchange_free(&ex);
    make(&ex, 503, "text/html", "nginx/1.22.1", NGINX_503, -1, 0, 0.1);
    ps_conform_observe(r.c, &ex, PS_KEY_MAIN);
    ps_conform_fail(r.c, PS_CK_GENERATE_MEMBERS, &ex, "201", "answered 503");
    ps_exchange_free(&ex);
    CHECK(outcome(&r, PS_CK_SCHEMA_CONTENT_TYPE_JSON).failures == 0);
    CHECK(outcome(&r, PS_CK_RATELIMIT_HEADERS_PRESENT).failures == 0);
    CHECK(outcome(&r, PS_CK_ERRORS_SCHEMA).failures == 0);
    ps_check_outcome o = outcome(&r, PS_CK_GENERATE_MEMBERS);
    CHECK(o.status == PS_STATUS_NOT_RUN && o.applicable);
    CHECK(o.message && strstr(o.message, "made by nginx in front of the service"));
    ps_buf doc = PS_BUF_INIT;
    ps_conform_report_doc(r.c, 3, &doc);
    ps_json *tree = ps_json_parse(doc.data, doc.len, NULL, NULL);
    const ps_json *fronts = tree ? ps_json_get(tree, "fronts") : NULL;
    CHECK(fronts && fronts->type == PS_JSON_OBJECT);
    CHECK_STR(ps_json_get_string(fronts, "who", ""), "nginx");
    CHECK_INT(ps_json_get_int(fronts, "replies", 0), 1);
    const ps_json *untested = fronts ? ps_json_get(fronts, "untested") : NULL;
    CHECK(untested && untested->count == 1 &&
          strcmp(untested->items[0]->str, "generate.members") == 0);
    ps_json_free(tree);
    ps_buf_free(&doc);
    run_close(&r);
}

/* A Reset an hour ahead on a 200 fails reset-within-window (the plan's
 * minute); a minute ahead passes; a 429 naming a ban's end is not judged. */
static void reset_within_window(void)
{
    run r;
    run_open(&r);
    ps_exchange ex;
    make(&ex, 200, "application/json", NULL, "[]", 58, 60, 0);
    ps_conform_observe(r.c, &ex, PS_KEY_MAIN);
    ps_exchange_free(&ex);
    make(&ex, 429, "application/json", NULL, "{}", 0, 600, 0.5);
    ps_conform_observe(r.c, &ex, PS_KEY_MAIN);
    ps_exchange_free(&ex);
    CHECK(outcome(&r, PS_CK_RATELIMIT_RESET_WITHIN_WINDOW).failures == 0);
    CHECK(outcome(&r, PS_CK_RATELIMIT_RESET_WITHIN_WINDOW).passes == 1);
    make(&ex, 200, "application/json", NULL, "[]", 57, 3600, 1);
    ps_conform_observe(r.c, &ex, PS_KEY_MAIN);
    ps_exchange_free(&ex);
    CHECK(outcome(&r, PS_CK_RATELIMIT_RESET_WITHIN_WINDOW).failures == 1);
    run_close(&r);
}

/* The whole limit back in a new window 30 s before the Reset named fails
 * reset-consistent; Remaining rising under the same Reset (a sliding
 * counter's decay) does not. */
static void restored_early(void)
{
    run r;
    run_open(&r);
    ps_exchange ex;
    for (int i = 0; i < 10; i++) {
        make(&ex, 200, "application/json", NULL, "[]", 59 - i, 40, 0.1 * i);
        ps_conform_observe(r.c, &ex, PS_KEY_MAIN);
        ps_exchange_free(&ex);
    }
    CHECK(outcome(&r, PS_CK_RATELIMIT_RESET_CONSISTENT).failures == 0);
    make(&ex, 200, "application/json", NULL, "[]", 55, 40, 5); /* the same window, rising */
    ps_conform_observe(r.c, &ex, PS_KEY_MAIN);
    ps_exchange_free(&ex);
    CHECK(outcome(&r, PS_CK_RATELIMIT_RESET_CONSISTENT).failures == 0);
    make(&ex, 200, "application/json", NULL, "[]", 59, 70, 10); /* full, a window of its own */
    ps_conform_observe(r.c, &ex, PS_KEY_MAIN);
    ps_exchange_free(&ex);
    ps_check_outcome o = outcome(&r, PS_CK_RATELIMIT_RESET_CONSISTENT);
    CHECK(o.failures == 1);
    CHECK(o.message && strstr(o.message, "long before the Reset"));
    run_close(&r);
}

/* A gateway's 504 may come after the service counted the request: the
 * key's sequence starts afresh after it, so two fewer remaining in the
 * next answer is no inconsistency. */
static void gap_after_front(void)
{
    run r;
    run_open(&r);
    ps_exchange ex;
    make(&ex, 200, "application/json", NULL, "[]", 58, 30, 0);
    ps_conform_observe(r.c, &ex, PS_KEY_MAIN);
    ps_exchange_free(&ex);
    make(&ex, 504, "text/html", "nginx", "<html>504</html>", -1, 0, 0.1);
    ps_conform_observe(r.c, &ex, PS_KEY_MAIN);
    ps_exchange_free(&ex);
    make(&ex, 200, "application/json", NULL, "[]", 56, 30, 0.2);
    ps_conform_observe(r.c, &ex, PS_KEY_MAIN);
    ps_exchange_free(&ex);
    CHECK(outcome(&r, PS_CK_RATELIMIT_HEADERS_CONSISTENT).failures == 0);
    run_close(&r);
}

int main(void)
{
    RUN(classifies);
    RUN(not_judged);
    RUN(reset_within_window);
    RUN(restored_early);
    RUN(gap_after_front);
    return TEST_EXIT();
}
