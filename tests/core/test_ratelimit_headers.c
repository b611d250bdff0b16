/* test_ratelimit_headers.c - strict reading of X-RateLimit-* and both forms
 * of Retry-After. */
#include "core/ratelimit_headers.h"
#include "core/service_clock.h"
#include "harness.h"

static void integers_are_strict(void)
{
    int64_t v;
    CHECK(ps_rl_parse_uint("60", &v) && v == 60);
    CHECK(ps_rl_parse_uint(" 0 ", &v) && v == 0);
    CHECK(!ps_rl_parse_uint("-1", &v));
    CHECK(!ps_rl_parse_uint("1.0", &v));
    CHECK(!ps_rl_parse_uint("", &v));
    CHECK(!ps_rl_parse_uint("12a", &v));
    CHECK(!ps_rl_parse_uint("+5", &v));
}

static void retry_after_accepts_both_forms(void)
{
    ps_retry_after_form form;
    int64_t wait, until;
    CHECK(ps_retry_after_parse("120", 1000, &form, &wait, &until));
    CHECK(form == PS_RETRY_AFTER_DELAY && wait == 120 && until == 1120);
    /* 784111777 = Sun, 06 Nov 1994 08:49:37 GMT (RFC 9110's example) */
    CHECK(ps_retry_after_parse("Sun, 06 Nov 1994 08:49:37 GMT", 784111770, &form, &wait, &until));
    CHECK(form == PS_RETRY_AFTER_DATE && wait == 7 && until == 784111777);
    CHECK(ps_retry_after_parse("Sunday, 06-Nov-94 08:49:37 GMT", 784111777, &form, &wait, &until));
    CHECK(until == 784111777 && wait == 0);
    CHECK(ps_retry_after_parse("Sun Nov  6 08:49:37 1994", 0, &form, &wait, &until));
    CHECK(until == 784111777);
    CHECK(!ps_retry_after_parse("soon", 0, &form, &wait, &until));
    CHECK(!ps_retry_after_parse("-5", 0, &form, &wait, &until));
    CHECK(!ps_retry_after_parse("Sun, 06 Nov 1994 08:49:37 PST", 0, &form, &wait, &until));
    char out[40];
    ps_http_date_format(784111777, out, sizeof out);
    CHECK_STR(out, "Sun, 06 Nov 1994 08:49:37 GMT");
}

static void headers_are_read_case_insensitively(void)
{
    ps_headers h = PS_HEADERS_INIT;
    const char *lines[] = {"HTTP/1.1 429 Too Many Requests\r\n",
                           "x-ratelimit-limit: 60\r\n",
                           "X-RateLimit-Remaining:0\r\n",
                           "X-RATELIMIT-RESET: 1700000060 \r\n",
                           "Retry-After: 30\r\n",
                           "\r\n"};
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
        ps_headers_add_raw_line(&h, lines[i], strlen(lines[i]));
    CHECK_INT(h.count, 4);
    ps_rl_info info;
    ps_rl_read(&h, 1700000030, &info);
    CHECK(info.limit_state == PS_RL_OK && info.limit == 60);
    CHECK(info.remaining_state == PS_RL_OK && info.remaining == 0);
    CHECK(info.reset_state == PS_RL_OK && info.reset == 1700000060);
    CHECK(info.retry_after_state == PS_RL_OK && info.retry_after_unix_s == 1700000060);
    ps_headers_add(&h, "X-RateLimit-Limit", 17, "61", 2); /* conflicting duplicate */
    ps_rl_read(&h, 1700000030, &info);
    CHECK(info.limit_state == PS_RL_MALFORMED);
    ps_headers_free(&h);
    ps_rl_read(&h, 0, &info);
    CHECK(info.limit_state == PS_RL_ABSENT && info.retry_after_state == PS_RL_ABSENT);
}

/* A hostile service names any number of seconds or any year: the retry time
 * is held at PS_RETRY_FAR_NS (a runner under UBSan overflowed on
 * Retry-After: 1795000000000), and a Date in the year 9999 still reads as a
 * clock far ahead. */
static void far_times_do_not_overflow(void)
{
    const int64_t now_ns = INT64_C(1795000000) * 1000000000;
    ps_rl_info rl = {0};
    ps_retry_source src;
    rl.retry_after_state = PS_RL_OK;
    rl.retry_after_form = PS_RETRY_AFTER_DELAY;
    rl.retry_after_s = INT64_C(1795000000000);
    CHECK(ps_rl_retry_at_ns(&rl, now_ns, 0, &src) == PS_RETRY_FAR_NS && src == PS_RETRY_AFTER);
    rl.retry_after_s = INT64_MAX;
    CHECK(ps_rl_retry_at_ns(&rl, now_ns, 0, &src) == PS_RETRY_FAR_NS);
    rl.retry_after_s = 30;
    CHECK(ps_rl_retry_at_ns(&rl, now_ns, 0, &src) == now_ns + INT64_C(30000000000));
    rl.retry_after_form = PS_RETRY_AFTER_DATE;
    rl.retry_after_unix_s = INT64_C(253402300799); /* Fri, 31 Dec 9999 23:59:59 GMT */
    CHECK(ps_rl_retry_at_ns(&rl, now_ns, INT64_C(-3000000000000000000), &src) == PS_RETRY_FAR_NS);
    rl.retry_after_unix_s = 1795000060;
    CHECK(ps_rl_retry_at_ns(&rl, now_ns, INT64_C(5000000000), &src) ==
          INT64_C(1795000055) * 1000000000);
    int64_t v;
    CHECK(!ps_rl_parse_uint("99999999999999999999999", &v));

    ps_service_clock sc = {0};
    ps_service_clock_add(&sc, INT64_C(253402300799), now_ns, now_ns);
    CHECK(ps_service_clock_beyond(&sc, INT64_C(10000000000)));
    CHECK(ps_service_clock_offset_ns(&sc) > INT64_C(1000000000000000000));
}

int main(void)
{
    RUN(far_times_do_not_overflow);
    RUN(integers_are_strict);
    RUN(retry_after_accepts_both_forms);
    RUN(headers_are_read_case_insensitively);
    return TEST_EXIT();
}
