/* test_cli_style.c - the command-line style the three programs share
 * (core/cli.h): getopt_long failures as one line naming the flag, the
 * usage-error format, --color and its environment (NO_COLOR, FORCE_COLOR,
 * TERM=dumb), and empty environment variables counting as unset. */
#include <pty.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/cli.h"
#include "harness.h"

enum { O_PORT = 256, O_MAX_BODY, O_MAX_BUFFERED, O_LIST, O_HELP };
static const struct option opts[] = {
    {"port", required_argument, NULL, O_PORT},
    {"max-body", required_argument, NULL, O_MAX_BODY},
    {"max-buffered", required_argument, NULL, O_MAX_BUFFERED},
    {"list", no_argument, NULL, O_LIST},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* Parses argv to the first failure; returns the getopt code of the last
 * option seen, with the error message in err on failure. */
static int parse(ps_error *err, int argc, char **argv, const char **port)
{
    ps_cli_getopt_reset();
    int c, last = -1;
    err->message[0] = '\0';
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        if (c == '?' || c == ':') {
            ps_cli_getopt_error(c, argc, argv, opts, err);
            return c;
        }
        if (c == O_PORT) *port = optarg;
        last = c;
    }
    return last;
}

static void getopt_failures_name_the_flag(void)
{
    ps_error err;
    const char *port = NULL;
    struct {
        char *argv[4];
        const char *message;
    } cases[] = {
        {{"p", "--bogus", NULL}, "--bogus: unknown flag"},
        {{"p", "--bogus=3", NULL}, "--bogus: unknown flag"},
        {{"p", "--port", NULL}, "--port: needs a value"},
        {{"p", "--po", NULL}, "--port: needs a value"},
        {{"p", "--list=yes", NULL}, "--list: takes no value"},
        {{"p", "--max-b", "1", NULL}, "--max-b: ambiguous (--max-body, --max-buffered)"},
        {{"p", "-x", NULL}, "-x: unknown flag"},
        {{"p", "--list", "-q", NULL}, "-q: unknown flag"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int argc = 0;
        while (cases[i].argv[argc])
            argc++;
        int c = parse(&err, argc, cases[i].argv, &port);
        CHECK(c == '?' || c == ':');
        CHECK_STR(err.message, cases[i].message);
    }
}

static void unique_prefixes_and_both_value_forms_work(void)
{
    ps_error err;
    const char *port = NULL;
    char *a1[] = {"p", "--po=8080", NULL};
    CHECK_INT(parse(&err, 2, a1, &port), O_PORT);
    CHECK_STR(port, "8080");
    char *a2[] = {"p", "--max-bo", "1K", NULL};
    CHECK_INT(parse(&err, 3, a2, &port), O_MAX_BODY);
    char *a3[] = {"p", "-h", NULL};
    CHECK_INT(parse(&err, 2, a3, &port), 'h');
    char *a4[] = {"p", "--he", NULL};
    CHECK_INT(parse(&err, 2, a4, &port), 'h');
}

static void usage_errors_have_one_format(void)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    CHECK_INT(ps_cli_usage_error(f, "petstore-x", "--port: needs a value"), 2);
    fclose(f);
    CHECK_STR(text, "petstore-x: --port: needs a value\nsee 'petstore-x --help'\n");
    free(text);
}

static void color_follows_flag_then_environment(void)
{
    ps_cli_color c;
    ps_error err;
    CHECK_INT(ps_cli_parse_color("always", &c, &err), 0);
    CHECK_INT(c, PS_CLI_COLOR_ALWAYS);
    CHECK_INT(ps_cli_parse_color("sometimes", &c, &err), -1);
    CHECK(strstr(err.message, "auto, always or never") != NULL);

    int master, slave;
    CHECK_INT(openpty(&master, &slave, NULL, NULL, NULL), 0);
    int pipefd[2];
    CHECK_INT(pipe(pipefd), 0);
    unsetenv("NO_COLOR");
    unsetenv("FORCE_COLOR");
    setenv("TERM", "xterm", 1);
    CHECK(ps_cli_color_enabled(PS_CLI_COLOR_AUTO, slave));
    CHECK(!ps_cli_color_enabled(PS_CLI_COLOR_AUTO, pipefd[1]));
    CHECK(ps_cli_color_enabled(PS_CLI_COLOR_ALWAYS, pipefd[1]));
    CHECK(!ps_cli_color_enabled(PS_CLI_COLOR_NEVER, slave));
    setenv("TERM", "dumb", 1);
    CHECK(!ps_cli_color_enabled(PS_CLI_COLOR_AUTO, slave));
    setenv("FORCE_COLOR", "1", 1); /* FORCE_COLOR beats TERM=dumb and a pipe */
    CHECK(ps_cli_color_enabled(PS_CLI_COLOR_AUTO, pipefd[1]));
    setenv("NO_COLOR", "1", 1); /* NO_COLOR beats FORCE_COLOR */
    CHECK(!ps_cli_color_enabled(PS_CLI_COLOR_AUTO, slave));
    CHECK(ps_cli_color_enabled(PS_CLI_COLOR_ALWAYS, slave)); /* the flag beats both */
    setenv("NO_COLOR", "", 1);                               /* empty: as if unset */
    CHECK(ps_cli_color_enabled(PS_CLI_COLOR_AUTO, pipefd[1]));
    unsetenv("FORCE_COLOR");
    setenv("TERM", "xterm", 1);
    CHECK(ps_cli_color_enabled(PS_CLI_COLOR_AUTO, slave));
    close(master);
    close(slave);
    close(pipefd[0]);
    close(pipefd[1]);
}

static void empty_environment_values_are_unset(void)
{
    setenv("PS_TEST_CLI_ENV", "", 1);
    CHECK(ps_cli_env("PS_TEST_CLI_ENV") == NULL);
    setenv("PS_TEST_CLI_ENV", "x", 1);
    CHECK_STR(ps_cli_env("PS_TEST_CLI_ENV"), "x");
    unsetenv("PS_TEST_CLI_ENV");
    CHECK(ps_cli_env("PS_TEST_CLI_ENV") == NULL);
}

int main(void)
{
    RUN(getopt_failures_name_the_flag);
    RUN(unique_prefixes_and_both_value_forms_work);
    RUN(usage_errors_have_one_format);
    RUN(color_follows_flag_then_environment);
    RUN(empty_environment_values_are_unset);
    return TEST_EXIT();
}
