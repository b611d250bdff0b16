/* test_lg_respparse.c - the epoll engine's response reader (core http_reply, streaming) on whole,
 * split and garbage input. */
#include <stdlib.h>

#include "harness.h"
#include "loadgen/response.h"

/* A reader freed when it goes out of scope. */
#define READER(p)                                                                                  \
    ps_lg_reader p __attribute__((cleanup(ps_lg_reader_free)));                                    \
    ps_lg_reader_init(&p)

static const char ok_resp[] = "HTTP/1.1 200 OK\r\n"
                              "Content-Type: application/json\r\n"
                              "X-RateLimit-Limit: 60\r\n"
                              "x-ratelimit-remaining: 59\r\n"
                              "X-RATELIMIT-RESET:   1763700060  \r\n"
                              "Content-Length: 13\r\n"
                              "\r\n"
                              "[{\"id\":1}]   ";

static ps_lg_parse_result feed_all(ps_lg_reader *p, const char *s, size_t len, size_t step)
{
    ps_error err;
    ps_lg_parse_result r = PS_LG_PARSE_MORE;
    for (size_t i = 0; i < len && r == PS_LG_PARSE_MORE; i += step) {
        size_t n = len - i < step ? len - i : step;
        r = ps_lg_reader_feed(p, s + i, n, &err);
    }
    return r;
}

static void whole_response(void)
{
    READER(p);
    ps_lg_reader_start(&p, 1763700000);
    CHECK(!ps_lg_reader_started(&p));
    CHECK_INT(feed_all(&p, ok_resp, sizeof ok_resp - 1, sizeof ok_resp), PS_LG_PARSE_DONE);
    CHECK_INT(p.resp.status, 200);
    CHECK(p.resp.keep_alive);
    CHECK_INT(p.resp.seen, PS_LG_H_LIMIT | PS_LG_H_REMAINING | PS_LG_H_RESET);
    CHECK_INT(p.resp.bad, 0);
    CHECK_INT(p.resp.limit, 60);
    CHECK_INT(p.resp.remaining, 59);
    CHECK_INT(p.resp.reset, 1763700060);
}

/* Every split point, including inside header names and values, gives the
 * same result as the whole response. */
static void every_split(void)
{
    for (size_t step = 1; step < 40; step++) {
        READER(p);
        ps_lg_reader_start(&p, 1763700000);
        CHECK_INT(feed_all(&p, ok_resp, sizeof ok_resp - 1, step), PS_LG_PARSE_DONE);
        CHECK_INT(p.resp.limit, 60);
        CHECK_INT(p.resp.remaining, 59);
        CHECK_INT(p.resp.reset, 1763700060);
        CHECK_INT(p.resp.bad, 0);
    }
}

static void too_many_requests(void)
{
    const char *r =
        "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 7\r\nX-RateLimit-Limit: 60\r\n"
        "X-RateLimit-Remaining: 0\r\nX-RateLimit-Reset: 1763700060\r\nContent-Length: 0\r\n\r\n";
    READER(p);
    ps_lg_reader_start(&p, 1763700000);
    CHECK_INT(feed_all(&p, r, strlen(r), 5), PS_LG_PARSE_DONE);
    CHECK_INT(p.resp.status, 429);
    CHECK(p.resp.seen & PS_LG_H_RETRY_AFTER);
    CHECK_INT(p.resp.retry_after_wait_s, 7);

    const char *d =
        "HTTP/1.1 429 Too Many Requests\r\nRetry-After: Fri, 21 Nov 2025 04:41:30 GMT\r\n"
        "Content-Length: 0\r\n\r\n";
    ps_lg_reader_start(&p, 1763700000); /* 2025-11-21T04:40:00Z */
    CHECK_INT(feed_all(&p, d, strlen(d), 3), PS_LG_PARSE_DONE);
    CHECK_INT(p.resp.bad, 0);
    CHECK_INT(p.resp.retry_after_wait_s, 90);
}

static void malformed_and_repeated_values(void)
{
    const char *r =
        "HTTP/1.1 200 OK\r\nX-RateLimit-Limit: 60\r\nX-RateLimit-Limit: 61\r\n"
        "X-RateLimit-Remaining: -1\r\nX-RateLimit-Reset: 17637000600000000000000000000000000"
        "00000000000000000000000000000000000000000000\r\nRetry-After: soon\r\n"
        "Content-Length: 0\r\n\r\n";
    READER(p);
    ps_lg_reader_start(&p, 1763700000);
    CHECK_INT(feed_all(&p, r, strlen(r), 4), PS_LG_PARSE_DONE);
    CHECK_INT(p.resp.bad, PS_LG_H_LIMIT | PS_LG_H_REMAINING | PS_LG_H_RESET | PS_LG_H_RETRY_AFTER);
    /* The same value twice is fine. */
    const char *same = "HTTP/1.1 200 OK\r\nX-RateLimit-Limit: 60\r\nX-RateLimit-Limit: 60\r\n"
                       "Content-Length: 0\r\n\r\n";
    ps_lg_reader_start(&p, 1763700000);
    CHECK_INT(feed_all(&p, same, strlen(same), 7), PS_LG_PARSE_DONE);
    CHECK_INT(p.resp.bad, 0);
    CHECK_INT(p.resp.limit, 60);
}

static void bodies_chunked_and_until_close(void)
{
    const char *ch = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n[{}]\r\n0\r\n\r\n";
    READER(p);
    ps_error err;
    ps_lg_reader_start(&p, 0);
    CHECK_INT(feed_all(&p, ch, strlen(ch), 2), PS_LG_PARSE_DONE);
    CHECK(p.resp.keep_alive);

    const char *uc = "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n[1,2,3]";
    ps_lg_reader_start(&p, 0);
    CHECK_INT(feed_all(&p, uc, strlen(uc), 3), PS_LG_PARSE_MORE);
    CHECK(ps_lg_reader_started(&p));
    CHECK_INT(ps_lg_reader_eof(&p, &err), PS_LG_PARSE_DONE);
    CHECK(!p.resp.keep_alive);

    const char *trunc = "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n[1,2";
    ps_lg_reader_start(&p, 0);
    CHECK_INT(feed_all(&p, trunc, strlen(trunc), 100), PS_LG_PARSE_MORE);
    CHECK_INT(ps_lg_reader_eof(&p, &err), PS_LG_PARSE_ERROR);
    CHECK(strstr(err.message, "closed") != NULL);
}

static void garbage(void)
{
    const char *bad[] = {
        "hello world\r\n\r\n",
        "HTTP/1.1 abc OK\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: xyz\r\n\r\n",
        "HTTP/1.1 200 OK\r\nBad Header Without Colon\r\n\r\n",
        "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        READER(p);
        ps_error err = {{0}};
        ps_lg_reader_start(&p, 0);
        ps_lg_parse_result r = ps_lg_reader_feed(&p, bad[i], strlen(bad[i]), &err);
        if (r != PS_LG_PARSE_ERROR) fprintf(stderr, "garbage %zu not refused\n", i);
        CHECK_INT(r, PS_LG_PARSE_ERROR);
        CHECK(err.message[0] != '\0');
    }
    /* Bytes after a complete response: nothing was pipelined, so an error. */
    READER(p);
    ps_error err;
    char two[512];
    snprintf(two, sizeof two, "%s%s", "HTTP/1.1 204 No Content\r\n\r\n", "HTTP/1.1 200 OK\r\n");
    ps_lg_reader_start(&p, 0);
    CHECK_INT(ps_lg_reader_feed(&p, two, strlen(two), &err), PS_LG_PARSE_ERROR);
    CHECK(strstr(err.message, "unexpected bytes") != NULL);
    /* Random bytes never crash it. */
    srand(7);
    for (int round = 0; round < 2000; round++) {
        char buf[64];
        size_t n = (size_t)(rand() % (int)sizeof buf);
        for (size_t i = 0; i < n; i++)
            buf[i] = (char)(rand() & 0xff);
        ps_lg_reader_start(&p, 0);
        ps_lg_reader_feed(&p, ok_resp, (size_t)(rand() % 40), &err);
        ps_lg_reader_feed(&p, buf, n, &err);
    }
}

/* Interim 1xx responses are skipped; statuses outside 200-599 refused. */
static void interim_and_odd_statuses(void)
{
    const char *r = "HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n"
                    "HTTP/1.1 201 Created\r\nX-RateLimit-Limit: 5\r\nContent-Length: 2\r\n\r\n{}";
    for (size_t step = 1; step <= strlen(r); step += 7) {
        READER(p);
        ps_lg_reader_start(&p, 0);
        CHECK_INT(feed_all(&p, r, strlen(r), step), PS_LG_PARSE_DONE);
        CHECK_INT(p.resp.status, 201);
        CHECK_INT(p.resp.limit, 5);
    }
    const char *odd[] = {"HTTP/1.0 0\r\n\r\n", "HTTP/1.1 600 Beyond\r\nContent-Length: 0\r\n\r\n",
                         "HTTP/1.1 101 Switching Protocols\r\n\r\n"};
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) {
        READER(p);
        ps_error err = {{0}};
        ps_lg_reader_start(&p, 0);
        ps_lg_parse_result res = ps_lg_reader_feed(&p, odd[i], strlen(odd[i]), &err);
        if (res == PS_LG_PARSE_MORE) res = ps_lg_reader_eof(&p, &err);
        CHECK_INT(res, PS_LG_PARSE_ERROR);
        CHECK(strstr(err.message, "status") != NULL);
    }
}

static void header_helper_for_curl(void)
{
    ps_lg_resp r;
    memset(&r, 0, sizeof r);
    ps_lg_resp_header(&r, "X-RateLimit-Limit", 17, "300", 3, 0);
    ps_lg_resp_header(&r, "Content-Type", 12, "application/json", 16, 0);
    ps_lg_resp_header(&r, "retry-after", 11, "12", 2, 0);
    CHECK_INT(r.seen, PS_LG_H_LIMIT | PS_LG_H_RETRY_AFTER);
    CHECK_INT(r.limit, 300);
    CHECK_INT(r.retry_after_wait_s, 12);
}

/* The fields as core's ps_rl_info, and so the one computation of when to
 * retry (ps_rl_retry_at_ns) the worker uses: Retry-After first, a Reset
 * ahead next, nothing (the worker's own backoff) when neither is usable. */
static void when_to_retry(void)
{
    const int64_t now_s = 1763700000, done_ns = now_s * INT64_C(1000000000);
    static const struct {
        const char *response;
        int64_t at_s; /* 0: none named */
        ps_retry_source source;
    } cases[] = {
        {"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 7\r\nX-RateLimit-Limit: 60\r\n"
         "X-RateLimit-Remaining: 0\r\nX-RateLimit-Reset: 1763700060\r\nContent-Length: 0\r\n\r\n",
         1763700007, PS_RETRY_AFTER},
        {"HTTP/1.1 429 Too Many Requests\r\nX-RateLimit-Reset: 1763700042\r\nRetry-After: soon\r\n"
         "Content-Length: 0\r\n\r\n",
         1763700042, PS_RETRY_RESET_AHEAD},
        /* a Reset in milliseconds is no time ahead within a day: the backoff */
        {"HTTP/1.1 429 Too Many Requests\r\nX-RateLimit-Reset: 1763700042000\r\n"
         "Content-Length: 0\r\n\r\n",
         0, PS_RETRY_NONE},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        READER(p);
        ps_lg_reader_start(&p, now_s);
        CHECK_INT(feed_all(&p, cases[i].response, strlen(cases[i].response), 5), PS_LG_PARSE_DONE);
        ps_rl_info rl;
        ps_lg_resp_rl_info(&p.resp, &rl);
        ps_retry_source src;
        CHECK_INT(ps_rl_retry_at_ns(&rl, done_ns, 0, &src), cases[i].at_s * INT64_C(1000000000));
        CHECK_INT(src, cases[i].source);
    }
}

int main(void)
{
    RUN(whole_response);
    RUN(every_split);
    RUN(too_many_requests);
    RUN(malformed_and_repeated_values);
    RUN(bodies_chunked_and_until_close);
    RUN(garbage);
    RUN(interim_and_odd_statuses);
    RUN(header_helper_for_curl);
    RUN(when_to_retry);
    return TEST_EXIT();
}
