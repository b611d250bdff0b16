/* fuzz_lg_respparse.c - the epoll engine's response parser and the limit
 * verifier on arbitrary bytes: a libFuzzer target under -DPETSTORE_FUZZ=ON
 * (clang); in every other build main() replays the built-in seeds and any
 * files given, each at every split point. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "loadgen/limits.h"
#include "loadgen/response.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Reads text in one feed (core/http_reply.c's one-scan path when the
 * response is whole and plain) and then the close: what was made of it. */
static ps_lg_parse_result read_whole(const char *text, size_t len, ps_lg_resp *out)
{
    ps_lg_reader p;
    ps_error err;
    ps_lg_reader_init(&p);
    ps_lg_reader_start(&p, 1763700000);
    ps_lg_parse_result r = len ? ps_lg_reader_feed(&p, text, len, &err) : PS_LG_PARSE_MORE;
    if (r == PS_LG_PARSE_MORE) r = ps_lg_reader_eof(&p, &err);
    *out = p.resp;
    ps_lg_reader_free(&p);
    return r;
}

static bool same_resp(const ps_lg_resp *a, const ps_lg_resp *b)
{
    return a->status == b->status && a->keep_alive == b->keep_alive && a->seen == b->seen &&
           a->bad == b->bad && a->limit == b->limit && a->remaining == b->remaining &&
           a->reset == b->reset && a->retry_after_wait_s == b->retry_after_wait_s &&
           a->bad_field == b->bad_field && strcmp(a->bad_value, b->bad_value) == 0;
}

/* The first byte says where the bytes are split in two reads. A split read
 * goes through http_parser, a whole one may take the one-scan path: both
 * must read the response alike. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) return 0;
    size_t split = data[0] % size;
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    if (split > len) split = len;
    ps_lg_reader p;
    ps_lg_reader_init(&p);
    ps_error err;
    ps_lg_reader_start(&p, 1763700000);
    ps_lg_parse_result r = ps_lg_reader_feed(&p, text, split, &err);
    bool read_all = r == PS_LG_PARSE_MORE || split == len; /* else the rest goes unread */
    if (r == PS_LG_PARSE_MORE && len > split)
        r = ps_lg_reader_feed(&p, text + split, len - split, &err);
    if (r == PS_LG_PARSE_MORE) r = ps_lg_reader_eof(&p, &err);
    ps_lg_resp whole;
    if (read_all && (read_whole(text, len, &whole) != r ||
                     (r == PS_LG_PARSE_DONE && !same_resp(&whole, &p.resp))))
        abort();
    if (r == PS_LG_PARSE_DONE) {
        if (p.resp.status < 200 || p.resp.status > 599) abort();
        static char key[] = "fuzz-key-0001";
        ps_lg_key k = {.key = key, .plan = {PS_PLAN_FREE, 60, 1000}};
        ps_lg_config cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.keys = &k;
        cfg.nkeys = 1;
        ps_lg_limits l;
        ps_lg_limits_init(&l, 1);
        ps_lg_limits_observe(&l, 0, &p.resp);
        ps_lg_violation *v;
        size_t n;
        ps_lg_limits_verify(&l, &cfg, &v, &n);
        for (size_t i = 0; i < n; i++)
            if (!memchr(v[i].message, '\0', sizeof v[i].message)) abort();
        free(v);
        ps_lg_limits_free(&l);
    } else if (r == PS_LG_PARSE_ERROR && err.message[0] == '\0') {
        abort(); /* every refusal says why */
    }
    ps_lg_reader_free(&p);
    return 0;
}

#ifndef PS_LIBFUZZER
static const char *seeds[] = {
    "HTTP/1.1 200 OK\r\nX-RateLimit-Limit: 60\r\nX-RateLimit-Remaining: 59\r\n"
    "X-RateLimit-Reset: 1763700060\r\nContent-Length: 2\r\n\r\n[]",
    "HTTP/1.1 429 Too Many Requests\r\nRetry-After: Fri, 21 Nov 2025 04:41:30 GMT\r\n"
    "X-RateLimit-Limit: 60\r\nX-RateLimit-Remaining: 0\r\nX-RateLimit-Reset: 1763700060\r\n"
    "Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
    "HTTP/1.0 200 OK\r\n\r\nuntil close",
    "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n",
    "HTTP/1.1 200 OK\r\nX-RateLimit-Limit: 6\0 0\r\n\r\n",
    "HTTP/1.1 999 Whatever\r\nX-RateLimit-Reset: \r\n\r\n",
    /* plain forms the one-scan path reads whole, and a near miss */
    "HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"
    "Connection: keep-alive\r\nX-RateLimit-Limit: 60\r\nX-RateLimit-Remaining: 59\r\n"
    "X-RateLimit-Reset: 1763700060\r\n\r\n[]",
    "HTTP/1.0 429 Too Many Requests\r\nRetry-After: 7\r\nRetry-After: 8\r\nContent-Length: 0\r\n"
    "Connection: close\r\n\r\nXY",
    "HTTP/1.1 200 OK\r\nX-RateLimit-Limit: 60 \r\nContent-Length: 2 \r\n\r\n[]",
};

int main(int argc, char **argv)
{
    int runs = 0;
    for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++) {
        size_t len = strlen(seeds[s]);
        uint8_t *buf = malloc(len + 1);
        memcpy(buf + 1, seeds[s], len);
        for (size_t split = 0; split <= len; split++) {
            buf[0] = (uint8_t)split;
            LLVMFuzzerTestOneInput(buf, len + 1);
            runs++;
        }
        free(buf);
    }
    for (int i = 1; i < argc; i++) {
        ps_buf b = PS_BUF_INIT;
        if (ps_buf_read_file(&b, argv[i]) != 0) {
            fprintf(stderr, "cannot read %s\n", argv[i]);
            return 1;
        }
        LLVMFuzzerTestOneInput((const uint8_t *)(b.data ? b.data : ""), b.len);
        ps_buf_free(&b);
        runs++;
    }
    fprintf(stderr, "%d inputs replayed\n", runs);
    return 0;
}
#endif
