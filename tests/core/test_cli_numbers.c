/* test_cli_numbers.c - every number a flag takes (core/cli.h's parsers):
 * only plain decimal text is a number; NaN, infinities, hex, white space,
 * overflow and a size below one byte are refused with a message, never
 * taken for some other value (issue 30). */
#include <string.h>

#include "core/cli.h"
#include "harness.h"

static void doubles_are_plain_decimals(void)
{
    double v = 0;
    ps_error err;
    static const char *const bad[] = {"nan", "NaN", "inf",  "-inf",  "infinity", "1e999",
                                      " 5",  "5 ",  "0x10", "0x1p3", "",         "5e-400",
                                      "1e",  ".",   "-",    "+",     "1..2",     "5,5"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = ps_cli_parse_double(bad[i], -1e12, 1e12, &v, &err);
        CHECK_INT(rc, -1);
        if (rc != -1) fprintf(stderr, "  '%s' was taken as %g\n", bad[i], v);
    }
    static const char *const good[] = {"5", "-2.5", "+3", "1e3", "0.5", ".5", "5.", "1E-3"};
    static const double want[] = {5, -2.5, 3, 1000, 0.5, 0.5, 5, 0.001};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        CHECK_INT(ps_cli_parse_double(good[i], -1e12, 1e12, &v, &err), 0);
        CHECK(v == want[i]);
    }
    CHECK_INT(ps_cli_parse_double("0", 1, 10, &v, &err), -1);
    CHECK(strstr(err.message, "out of range") != NULL);
}

static void durations_are_plain_decimals(void)
{
    int64_t ns = 0;
    ps_error err;
    static const char *const bad[] = {"nan",   "nans",  "inf",     "infs",
                                      " 5s",   "0x10s", "-1s",     "-0",
                                      "1e99d", "",      "5e-400s", "0.0001us" /* < 1 ns */,
                                      "5 s",   "s"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = ps_cli_parse_duration(bad[i], 1, &ns, &err);
        CHECK_INT(rc, -1);
        if (rc != -1) fprintf(stderr, "  '%s' was taken as %lld ns\n", bad[i], (long long)ns);
    }
    CHECK_INT(ps_cli_parse_duration("0", 0, &ns, &err), -1); /* zero where it is meaningless */
    CHECK_INT(ps_cli_parse_duration("0", 1, &ns, &err), 0);
    CHECK_INT(ps_cli_parse_duration("1.5s", 0, &ns, &err), 0);
    CHECK_INT(ns, 1500000000);
    CHECK_INT(ps_cli_parse_duration("1e3ms", 0, &ns, &err), 0);
    CHECK_INT(ns, 1000000000);
}

static void sizes_are_whole_bytes(void)
{
    int64_t b = 0;
    ps_error err;
    static const char *const bad[] = {"nan", "infK", " 5K", "0x10", "-1", "0.3", "0.5b", "1e30G"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = ps_cli_parse_size(bad[i], &b, &err);
        CHECK_INT(rc, -1);
        if (rc != -1) fprintf(stderr, "  '%s' was taken as %lld bytes\n", bad[i], (long long)b);
    }
    CHECK_INT(ps_cli_parse_size("1.5K", &b, &err), 0);
    CHECK_INT(b, 1536);
    CHECK_INT(ps_cli_parse_size("0", &b, &err), 0);
    CHECK_INT(b, 0);
}

static void integers_in_range(void)
{
    int64_t v = 0;
    ps_error err;
    static const char *const bad[] = {
        "99999999999999999999", " 5", "5 ", "0x10", "1e3", "", "-", "nan"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK_INT(ps_cli_parse_int(bad[i], INT64_MIN, INT64_MAX, &v, &err), -1);
    CHECK_INT(ps_cli_parse_int("9223372036854775807", 0, INT64_MAX, &v, &err), 0);
    CHECK_INT(ps_cli_parse_int("0", 1, 10, &v, &err), -1);
}

int main(void)
{
    RUN(doubles_are_plain_decimals);
    RUN(durations_are_plain_decimals);
    RUN(sizes_are_whole_bytes);
    RUN(integers_in_range);
    return TEST_EXIT();
}
