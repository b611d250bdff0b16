/* test_cli_plan.c - flag value parsing and plan names/limits. */
#include "core/cli.h"
#include "core/plan.h"
#include "harness.h"

static void durations_parse_with_units(void)
{
    int64_t ns;
    ps_error err;
    CHECK(ps_cli_parse_duration("30s", 0, &ns, &err) == 0 && ns == 30000000000LL);
    CHECK(ps_cli_parse_duration("2m", 0, &ns, &err) == 0 && ns == 120000000000LL);
    CHECK(ps_cli_parse_duration("250ms", 0, &ns, &err) == 0 && ns == 250000000LL);
    CHECK(ps_cli_parse_duration("1.5", 0, &ns, &err) == 0 && ns == 1500000000LL);
    CHECK(ps_cli_parse_duration("0", 0, &ns, &err) == -1);
    CHECK(ps_cli_parse_duration("0", 1, &ns, &err) == 0 && ns == 0);
    CHECK(ps_cli_parse_duration("-1s", 0, &ns, &err) == -1);
    CHECK(ps_cli_parse_duration("5 parsecs", 0, &ns, &err) == -1);
    CHECK(strstr(err.message, "parsecs") != NULL);
    CHECK(ps_cli_parse_duration("", 0, &ns, &err) == -1);
}

static void integers_and_sizes_are_range_checked(void)
{
    int64_t v;
    ps_error err;
    CHECK(ps_cli_parse_int("42", 1, 100, &v, &err) == 0 && v == 42);
    CHECK(ps_cli_parse_int("0", 1, 100, &v, &err) == -1);
    CHECK(ps_cli_parse_int("12abc", 1, 100, &v, &err) == -1);
    CHECK(ps_cli_parse_int("99999999999999999999", 1, INT64_MAX, &v, &err) == -1);
    CHECK(ps_cli_parse_size("64K", &v, &err) == 0 && v == 65536);
    CHECK(ps_cli_parse_size("8MiB", &v, &err) == 0 && v == 8 * 1048576);
    CHECK(ps_cli_parse_size("3 furlongs", &v, &err) == -1);
}

static void plans_have_published_limits(void)
{
    ps_plan p;
    ps_error err;
    CHECK(ps_plan_parse("free", &p, &err) == 0 && p.per_minute == 60 && p.per_day == 1000);
    CHECK(ps_plan_parse("Pro", &p, &err) == 0 && p.per_minute == 300 && p.per_day == 10000);
    CHECK(ps_plan_parse("business", &p, &err) == 0 && p.per_minute == 1000 && p.per_day == 100000);
    CHECK(ps_plan_parse("enterprise", &p, &err) == 0 && p.id == PS_PLAN_ENTERPRISE &&
          p.per_minute == 0);
    CHECK(ps_plan_parse("enterprise:5000:900000", &p, &err) == 0 && p.per_minute == 5000 &&
          p.per_day == 900000);
    CHECK(ps_plan_parse("enterprise:5000", &p, &err) == -1);
    CHECK(ps_plan_parse("pro:5:6", &p, &err) == -1);
    CHECK(ps_plan_parse("gold", &p, &err) == -1);
    CHECK(strstr(err.message, "gold") != NULL);
    CHECK_STR(ps_plan_name(PS_PLAN_BUSINESS), "business");
}

int main(void)
{
    RUN(durations_parse_with_units);
    RUN(integers_and_sizes_are_range_checked);
    RUN(plans_have_published_limits);
    return TEST_EXIT();
}
