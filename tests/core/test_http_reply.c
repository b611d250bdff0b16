/* test_http_reply.c - the burst's reply reader (core/http_reply): a reply is
 * whole only when its framing says so, so a 200 whose body never ended is
 * bad (never admitted), as the libcurl path calls it no complete reply
 * (issue 22); interim 1xx skipped; bare LF read; the cap bounds memory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/http_reply.h"
#include "harness.h"

/* Feeds text in one piece, then the close when eof is set. */
static ps_http_reply_state read_all(ps_http_reply *r, const char *text, bool eof)
{
    ps_http_reply_state st = ps_http_reply_feed(r, text, strlen(text));
    if (st == PS_REPLY_MORE && eof) st = ps_http_reply_eof(r);
    return st;
}

/* What a streaming reader handed over: the fields, joined. */
typedef struct seen_fields {
    char text[256];
} seen_fields;

static void note_field(void *ctx, const char *name, size_t name_len, const char *value,
                       size_t value_len)
{
    seen_fields *f = ctx;
    size_t used = strlen(f->text);
    snprintf(f->text + used, sizeof f->text - used, "%.*s=%.*s;", (int)name_len, name,
             (int)value_len, value);
}

/* The load generator's use: fields of the final response only (a 103's
 * never), values without their white space, the body counted but not kept,
 * keep-alive, bytes after the reply counted, and the reader restarted for
 * the next reply on the connection with its buffers kept. */
static void streaming(void)
{
    ps_http_reply r;
    seen_fields f = {""};
    ps_http_reply_stream(&r, 65536, note_field, &f);
    const char *one = "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"
                      "HTTP/1.1 200 OK\r\nX-RateLimit-Limit:  60 \r\nContent-Length: 4\r\n\r\n"
                      "[1] ";
    /* every split point reads alike */
    for (size_t split = 0; split <= strlen(one); split++) {
        f.text[0] = '\0';
        ps_http_reply_restart(&r);
        ps_http_reply_state st = ps_http_reply_feed(&r, one, split);
        if (st == PS_REPLY_MORE) st = ps_http_reply_feed(&r, one + split, strlen(one) - split);
        CHECK_INT(st, PS_REPLY_DONE);
        CHECK_STR(f.text, "X-RateLimit-Limit=60;Content-Length=4;");
        CHECK_INT(r.status, 200);
        CHECK_INT(r.body_total, 4);
        CHECK_INT(r.body.len, 0);
        CHECK(r.keep_alive);
        CHECK_INT(r.extra, 0);
    }
    f.text[0] = '\0';
    ps_http_reply_restart(&r);
    CHECK_INT(read_all(&r, "HTTP/1.0 429 Too Many\r\nRetry-After: 7\r\nContent-Length: 0\r\n\r\nXY",
                       false),
              PS_REPLY_DONE);
    CHECK_STR(f.text, "Retry-After=7;Content-Length=0;");
    CHECK(!r.keep_alive);
    CHECK_INT(r.extra, 2);
    ps_http_reply_free(&r);
}

/* Feeds text to a fresh streaming reader, whole (the one-scan fast path
 * when it applies) or its first byte alone and then the rest (http_parser's
 * path always), and writes what the reader made of it into out. */
static void read_streaming(const char *text, bool whole, char *out, size_t cap)
{
    ps_http_reply r;
    seen_fields f = {""};
    ps_http_reply_stream(&r, 1024, note_field, &f);
    size_t len = strlen(text);
    ps_http_reply_state st =
        whole ? ps_http_reply_feed(&r, text, len) : ps_http_reply_feed(&r, text, 1);
    if (!whole && st == PS_REPLY_MORE) st = ps_http_reply_feed(&r, text + 1, len - 1);
    snprintf(out, cap, "state %d status %ld keep %d extra %zu body %zu head %zu done %d [%s]",
             (int)st, r.status, r.keep_alive, r.extra, r.body_total, r.head_len, r.head_done,
             f.text);
    ps_http_reply_free(&r);
}

/* The one-scan path reads every reply as http_parser does: replies in the
 * plain form it takes, and near misses it must leave to http_parser. */
static void fast_path_agrees(void)
{
    static const char *const replies[] = {
        "HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Type: application/json\r\n"
        "Content-Length: 2\r\nConnection: keep-alive\r\n\r\n[]",
        "HTTP/1.1 429 Too Many Requests\r\nX-RateLimit-Limit: 60\r\nX-RateLimit-Remaining: 0\r\n"
        "X-RateLimit-Reset: 1700000000\r\nRetry-After:\t7 \r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n[]",
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: Keep-Alive\r\n\r\n[]",
        "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n[]",
        "HTTP/1.0 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\n[]",
        "HTTP/1.1 201 \r\nContent-Length: 2\r\n\r\n[]extra",
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n[]",
        "HTTP/1.1 200 OK\r\nContent-Length: 2 \r\n\r\n[]",
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n[]",
        "HTTP/1.1 200 OK\r\nContent-Length: 2x\r\n\r\n[]",
        "HTTP/1.1 200 OK\r\nConnection: close, upgrade\r\nContent-Length: 2\r\n\r\n[]",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n[]\r\n0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nX-Empty:\r\nContent-Length: 2\r\n\r\n[]",
        "HTTP/1.1 200 OK\r\nX Bad: 1\r\nContent-Length: 2\r\n\r\n[]",
        "HTTP/1.1 200 OK\r\nX-Fold: 1\r\n 2\r\nContent-Length: 2\r\n\r\n[]",
        "HTTP/1.1 200 OK\nContent-Length: 2\n\n[]",
        "HTTP/1.1 204 No Content\r\nContent-Length: 2\r\n\r\n[]",
        "HTTP/1.1 200 OK\r\n\r\n[]",
        "HTTP/1.1 700 Odd\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.1 20 OK\r\nContent-Length: 0\r\n\r\n",
        "HTTP/2.0 200 OK\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nX-Ctl: a\x01b\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nX-Utf8: caf\xc3\xa9\r\nContent-Length: 0\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof replies / sizeof replies[0]; i++) {
        char fast[512], slow[512];
        read_streaming(replies[i], true, fast, sizeof fast);
        read_streaming(replies[i], false, slow, sizeof slow);
        CHECK_STR(fast, slow);
    }
}

int main(void)
{
    ps_http_reply r;
    RUN(streaming);
    RUN(fast_path_agrees);

    /* whole by Content-Length */
    ps_http_reply_init(&r, 65536);
    CHECK_INT(read_all(&r, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n[]", false), PS_REPLY_DONE);
    CHECK_INT(r.status, 200);
    CHECK_INT(r.body.len, 2);
    ps_http_reply_free(&r);

    /* a 200 whose body never ended: cut short at the close, bad with a reason */
    ps_http_reply_init(&r, 65536);
    CHECK_INT(read_all(&r, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n[1,2", true),
              PS_REPLY_BAD);
    CHECK(r.why[0] != '\0');
    ps_http_reply_free(&r);

    /* chunked, the last chunk never came */
    ps_http_reply_init(&r, 65536);
    CHECK_INT(
        read_all(&r, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n[]\r\n", true),
        PS_REPLY_BAD);
    ps_http_reply_free(&r);

    /* a head alone, then the close: nothing says the body ended */
    ps_http_reply_init(&r, 65536);
    CHECK_INT(read_all(&r, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", true), PS_REPLY_BAD);
    ps_http_reply_free(&r);

    /* nothing at all */
    ps_http_reply_init(&r, 65536);
    CHECK_INT(ps_http_reply_eof(&r), PS_REPLY_BAD);
    ps_http_reply_free(&r);

    /* a body framed by the close is whole at the close */
    ps_http_reply_init(&r, 65536);
    CHECK_INT(read_all(&r, "HTTP/1.1 429 Too Many\r\nConnection: close\r\n\r\n{}", true),
              PS_REPLY_DONE);
    CHECK_INT(r.status, 429);
    ps_http_reply_free(&r);

    /* interim 103 skipped; bare LF line ends */
    ps_http_reply_init(&r, 65536);
    CHECK_INT(read_all(&r,
                       "HTTP/1.1 103 Early Hints\nLink: </a>\n\nHTTP/1.1 201 Created\n"
                       "Content-Length: 0\n\n",
                       false),
              PS_REPLY_DONE);
    CHECK_INT(r.status, 201);
    ps_http_reply_free(&r);

    /* not HTTP */
    ps_http_reply_init(&r, 65536);
    CHECK_INT(read_all(&r, "SSH-2.0-OpenSSH_9.2\r\n", true), PS_REPLY_BAD);
    ps_http_reply_free(&r);

    /* a head over the cap is bad, whatever follows */
    ps_http_reply_init(&r, 1024);
    size_t big = 4096;
    char *head = malloc(big + 64);
    CHECK(head != NULL);
    if (head) {
        int n = snprintf(head, 64, "HTTP/1.1 200 OK\r\nX-Endless: ");
        memset(head + n, 'h', big);
        head[n + big] = '\0';
        CHECK_INT(read_all(&r, head, false), PS_REPLY_BAD);
        free(head);
    }
    ps_http_reply_free(&r);

    /* a body past the cap is counted and dropped, the reply still whole */
    ps_http_reply_init(&r, 256);
    char reply[2048];
    int n = snprintf(reply, sizeof reply, "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n");
    memset(reply + n, 'b', 1000);
    reply[n + 1000] = '\0';
    CHECK_INT(read_all(&r, reply, false), PS_REPLY_DONE);
    CHECK_INT(r.body_total, 1000);
    CHECK(r.truncated);
    CHECK(r.body.len <= 256);
    ps_http_reply_free(&r);

    return TEST_EXIT();
}
