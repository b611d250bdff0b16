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

int main(void)
{
    RUN(limit_plan_defaults_to_plan);
    RUN(limit_plan_given);
    return TEST_EXIT();
}
