/* test_runner_config.c - petstore-conform's command line: the plan of the
 * limit key (--limit-plan defaults to --plan, a limit key of its own
 * included, so the report's target.limit_plan and the plan checks on the
 * limit key are right). */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "harness.h"
#include "runner/config.h"

/* Parses argv (NULL-terminated) with PETSTORE_LIMIT_KEY set to limit_key
 * (unset when NULL); returns the parse result. */
static int parse(ps_conform_config *cfg, const char *limit_key, char **argv, ps_error *err)
{
    int argc = 0;
    while (argv[argc])
        argc++;
    setenv("PETSTORE_API_KEY", "main-key-123456", 1);
    unsetenv("PETSTORE_BASE_URL");
    if (limit_key)
        setenv("PETSTORE_LIMIT_KEY", limit_key, 1);
    else
        unsetenv("PETSTORE_LIMIT_KEY");
    return ps_conform_config_parse(cfg, argc, argv, err);
}

static void limit_plan_defaults_to_plan(void)
{
    ps_conform_config cfg;
    ps_error err;
    char *own_key[] = {"petstore-conform", "--base-url", "http://127.0.0.1:1/v1",
                       "--plan",           "pro",        NULL};
    CHECK_INT(parse(&cfg, "limit-key-654321", own_key, &err), 0);
    CHECK(cfg.limit_key_given);
    CHECK_INT(cfg.limit_plan.id, PS_PLAN_PRO);
    CHECK_INT(cfg.limit_plan.per_minute, cfg.plan.per_minute);

    char *flag_key[] = {"petstore-conform",  "--base-url",  "http://127.0.0.1:1/v1", "--plan",
                        "enterprise:70:900", "--limit-key", "limit-key-654321",      NULL};
    CHECK_INT(parse(&cfg, NULL, flag_key, &err), 0);
    CHECK_INT(cfg.limit_plan.id, PS_PLAN_ENTERPRISE);
    CHECK_INT(cfg.limit_plan.per_minute, 70);

    char *same_key[] = {"petstore-conform", "--base-url", "http://127.0.0.1:1/v1",
                        "--plan",           "free",       NULL};
    CHECK_INT(parse(&cfg, NULL, same_key, &err), 0);
    CHECK(!cfg.limit_key_given);
    CHECK_INT(cfg.limit_plan.id, PS_PLAN_FREE);

    char *no_plan[] = {"petstore-conform", "--base-url", "http://127.0.0.1:1/v1", NULL};
    CHECK_INT(parse(&cfg, "limit-key-654321", no_plan, &err), 0);
    CHECK_INT(cfg.limit_plan.id, PS_PLAN_UNKNOWN);
}

static void limit_plan_given(void)
{
    ps_conform_config cfg;
    ps_error err;
    char *both[] = {"petstore-conform",
                    "--base-url",
                    "http://127.0.0.1:1/v1",
                    "--plan",
                    "pro",
                    "--limit-plan",
                    "free",
                    NULL};
    CHECK_INT(parse(&cfg, "limit-key-654321", both, &err), 0);
    CHECK_INT(cfg.plan.id, PS_PLAN_PRO);
    CHECK_INT(cfg.limit_plan.id, PS_PLAN_FREE);
    /* a plan for a limit key nobody gave is a usage error */
    CHECK(parse(&cfg, NULL, both, &err) < 0);
    CHECK(strstr(err.message, "--limit-plan needs a limit key") != NULL);
}

/* Numbers in petstore-conform's flags (issue 30): a refusal names the flag;
 * zero only where it means something (--examples 0: no generation). */
static void numbers_validated(void)
{
    ps_conform_config cfg;
    ps_error err;
    static const char *const cases[][2] = {
        {"--seed", " 5"},         {"--seed", "+5"},           {"--seed", "18446744073709551616"},
        {"--generate-time", "0"}, {"--generate-time", "nan"}, {"--timeout", "inf"},
        {"--timeout", "0x10"},    {"--max-wait", " 5s"},      {"--max-body", "0.3"},
        {"--examples", "-1"},     {"--race-bursts", "0"},     {"--create-budget", "1e3"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *argv[] = {"petstore-conform",  "--base-url",        "http://127.0.0.1:1/v1",
                        (char *)cases[i][0], (char *)cases[i][1], NULL};
        int rc = parse(&cfg, NULL, argv, &err);
        CHECK(rc < 0 && strstr(err.message, cases[i][0]) != NULL);
        if (rc >= 0) fprintf(stderr, "  %s '%s' was accepted\n", cases[i][0], cases[i][1]);
    }
    char *zero_examples[] = {"petstore-conform", "--base-url", "http://127.0.0.1:1/v1",
                             "--examples",       "0",          NULL};
    CHECK_INT(parse(&cfg, NULL, zero_examples, &err), 0);
}

int main(void)
{
    RUN(numbers_validated);
    RUN(limit_plan_defaults_to_plan);
    RUN(limit_plan_given);
    return TEST_EXIT();
}
