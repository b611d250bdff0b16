/* test_keys_file.c - the one keys-file grammar: the fixtures file and the
 * loadgen's forms read as before, and every bad line is refused with its
 * line number. */
#include <math.h>
#include <string.h>
#include <time.h>

#include "core/buf.h"
#include "core/keys_file.h"
#include "harness.h"

static int parse(const char *text, ps_keys_list *out, ps_error *err)
{
    err->message[0] = '\0';
    return ps_keys_file_parse(text, strlen(text), "k.txt", out, err);
}

static void fixtures_file_reads_as_is(void)
{
    ps_keys_list l;
    ps_error err;
    CHECK_INT(ps_keys_file_load(PS_SOURCE_DIR "/fixtures/keys.txt", &l, &err), 0);
    CHECK_INT(l.count, 4);
    if (l.count == 4) {
        CHECK_STR(l.items[0].key, "demo-free-key");
        CHECK_INT(l.items[0].plan.id, PS_PLAN_FREE);
        CHECK_INT(l.items[0].plan.per_minute, 60);
        CHECK_INT(l.items[2].plan.id, PS_PLAN_BUSINESS);
        CHECK_INT(l.items[3].plan.id, PS_PLAN_ENTERPRISE);
        CHECK_INT(l.items[3].plan.per_minute, 100000);
        CHECK_INT(l.items[3].plan.per_day, 100000000);
        CHECK(l.items[3].rate == 0);
        CHECK_INT(l.items[3].line, 7);
    }
    ps_keys_list_free(&l);
}

static void loadgen_forms_and_rate_attribute(void)
{
    ps_keys_list l;
    ps_error err;
    CHECK_INT(parse("# keys\n"
                    "free-key-0001 free 2.5   # bare rate, the loadgen's older form\n"
                    "\n"
                    "pro-key-00002\tpro\r\n"
                    "ent-key-00003 enterprise:1000:50000 10\n"
                    "ent-key-00004 enterprise 7 70 rate=3\n"
                    "ent-key-00005 enterprise 7 70 4\n"
                    "biz-key-00006 business RATE=0.5\n"
                    "ent-key-00007 enterprise",
                    &l, &err),
              0);
    CHECK_INT(l.count, 7);
    if (l.count == 7) {
        CHECK(fabs(l.items[0].rate - 2.5) < 1e-9);
        CHECK_INT(l.items[1].plan.id, PS_PLAN_PRO);
        CHECK(l.items[1].rate == 0);
        CHECK_INT(l.items[1].line, 4);
        CHECK_INT(l.items[2].plan.per_minute, 1000);
        CHECK(l.items[2].rate == 10);
        CHECK_INT(l.items[3].plan.per_minute, 7);
        CHECK_INT(l.items[3].plan.per_day, 70);
        CHECK(l.items[3].rate == 3);
        CHECK(l.items[4].rate == 4 && l.items[4].plan.per_day == 70);
        CHECK(fabs(l.items[5].rate - 0.5) < 1e-9);
        CHECK_INT(l.items[6].plan.per_minute, 0); /* enterprise, limits not known */
        CHECK_INT(l.items[6].line, 9);
    }
    ps_keys_list_free(&l);
    CHECK_INT(parse("# only comments\n\n   \n", &l, &err), 0);
    CHECK_INT(l.count, 0);
    ps_keys_list_free(&l);
}

/* Issue 18: group=NAME names a key's group for petstore-load's reports and
 * metrics; a line without one reads as before, in any order with rate=. */
static void group_attribute(void)
{
    ps_keys_list l;
    ps_error err;
    CHECK_INT(parse("bg-key-000001 pro group=background rate=2\n"
                    "pr-key-000002 enterprise 7 70 GROUP=probe.eu-1\n"
                    "plain-key-003 free 3\n",
                    &l, &err),
              0);
    CHECK_INT(l.count, 3);
    if (l.count == 3) {
        CHECK(l.items[0].group && strcmp(l.items[0].group, "background") == 0);
        CHECK(l.items[0].rate == 2);
        CHECK(l.items[1].group && strcmp(l.items[1].group, "probe.eu-1") == 0);
        CHECK_INT(l.items[1].plan.per_day, 70);
        CHECK(l.items[2].group == NULL && l.items[2].rate == 3);
    }
    ps_keys_list_free(&l);
    CHECK(ps_keys_group_name_ok("a_b.c-1"));
    CHECK(!ps_keys_group_name_ok(""));
    CHECK(!ps_keys_group_name_ok("a\"b"));
    CHECK(!ps_keys_group_name_ok("x{y}"));
}

static void bad_lines_are_refused_with_their_number(void)
{
    static const struct {
        const char *text;
        const char *want;
    } cases[] = {
        {"ok free\nk\n", "line 2: the key has no plan"},
        {"k gold\n", "line 1: plan: unknown plan 'gold'"},
        {"k free 1 extra\n", "line 1: too many fields"},
        {"k free -3\n", "line 1: rate '-3'"},
        {"k free rate=0\n", "rate '0'"},
        {"k free 2 rate=3\n", "the rate is given twice"},
        {"k free burst=3\n", "unknown attribute 'burst=3'"},
        {"\n\nk enterprise 5\n", "line 3: enterprise takes two limits"},
        {"k enterprise 5 x\n", "per-day limit"},
        {"k pro 5 6\n", "too many fields"},
        {"k free:1:2\n", "takes no custom limits"},
        {"a free\nb pro\na pro\n", "line 3: the key is listed twice (first on line 1)"},
        {"k\x7f free\n", "printable ASCII"},
        {"k free 1 2 3 4 5 6 7 8 9\n", "too many fields"},
        {"k free group=\n", "line 1: group '': 1-64 letters"},
        {"k free group=a\"b\n", "group 'a\"b'"},
        {"k free group=a group=b\n", "the group is given twice"},
        {"ok free group=x\nk free rate=2 group=y rate=3\n", "line 2: the rate is given twice"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ps_keys_list l;
        ps_error err;
        CHECK_INT(parse(cases[i].text, &l, &err), -1);
        CHECK(l.count == 0 && l.items == NULL);
        CHECK(strstr(err.message, "keys file 'k.txt'") != NULL);
        if (!strstr(err.message, cases[i].want))
            fprintf(stderr, "  case %zu: '%s' lacks '%s'\n", i, err.message, cases[i].want);
        CHECK(strstr(err.message, cases[i].want) != NULL);
        ps_keys_list_free(&l);
    }
    ps_keys_list l;
    ps_error err;
    CHECK_INT(ps_keys_file_parse("k free\0", 7, "n.txt", &l, &err), -1);
    CHECK(strstr(err.message, "NUL") != NULL);
    CHECK_INT(ps_keys_file_load("/nonexistent/keys.txt", &l, &err), -1);
    CHECK(strstr(err.message, "cannot read keys file '/nonexistent/keys.txt'") != NULL);
}

/* Issue 22: stderr is often a log, so no message repeats a key. */
static void messages_name_the_line_not_the_key(void)
{
    static const char *texts[] = {
        "secret-key-0001 free\nsecret-key-0001 pro\n",
        "secret-key-0001\n",
        "secret-key-0001 gold\n",
        "secret-key-0001 free 1 extra\n",
        "secret-key-0001 free rate=-1\n",
        "secret-key-0001 free group=\n",
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        ps_keys_list l;
        ps_error err;
        CHECK_INT(parse(texts[i], &l, &err), -1);
        CHECK(strstr(err.message, "k.txt' line ") != NULL);
        CHECK(strstr(err.message, "secret") == NULL);
        if (strstr(err.message, "secret")) fprintf(stderr, "  leaks: %s\n", err.message);
    }
}

/* Issue 21: a keys file of 100,000 keys (a capacity test's customers) reads
 * in linear time; the duplicate check was a scan per key (9 s). */
static void hundred_thousand_keys_read_in_linear_time(void)
{
    ps_buf text = PS_BUF_INIT;
    for (int i = 0; i < 100000; i++)
        ps_buf_printf(&text, "customer-key-%07d pro rate=5\n", i);
    struct timespec a, b;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a); /* CPU: a busy machine stretches wall time */
    ps_keys_list l;
    ps_error err;
    CHECK_INT(ps_keys_file_parse(text.data, text.len, "big.txt", &l, &err), 0);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
    double s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
    fprintf(stderr, "  100000 keys parsed in %.3f s of CPU\n", s);
    CHECK_INT(l.count, 100000);
    CHECK(s < PS_TEST_SLOW * 2.0); /* linear: ~0.05 s; the scan took 9 s */
    ps_keys_list_free(&l);
    ps_buf_printf(&text, "customer-key-0050000 free\n");
    CHECK_INT(ps_keys_file_parse(text.data, text.len, "big.txt", &l, &err), -1);
    CHECK(strstr(err.message, "line 100001: the key is listed twice (first on line 50001)") !=
          NULL);
    ps_buf_free(&text);
}

int main(void)
{
    RUN(fixtures_file_reads_as_is);
    RUN(loadgen_forms_and_rate_attribute);
    RUN(group_attribute);
    RUN(bad_lines_are_refused_with_their_number);
    RUN(messages_name_the_line_not_the_key);
    RUN(hundred_thousand_keys_read_in_linear_time);
    return TEST_EXIT();
}
