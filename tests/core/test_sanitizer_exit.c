/* test_sanitizer_exit.c - in the ASan+UBSan build, undefined behaviour in a
 * program linked with the core library exits 86 (core/cli.c's default), not
 * 1 or 2, which are verdicts: run again as a child with no *SAN_OPTIONS in
 * its environment, the child negates INT64_MIN. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/cli.h"

extern char **environ;

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "child") == 0) {
        /* volatile: the compiler must not fold the negation away */
        volatile int64_t v = INT64_MIN + (ps_cli_env("PS_TEST_NEVER_SET") ? 1 : 0);
        printf("%lld\n", (long long)-v);
        return 0;
    }
    char *env[64];
    int n = 0;
    for (char **e = environ; *e && n < 63; e++)
        if (strncmp(*e, "ASAN_OPTIONS=", 13) != 0 && strncmp(*e, "UBSAN_OPTIONS=", 14) != 0)
            env[n++] = *e;
    env[n] = NULL;
    pid_t pid = fork();
    if (pid == 0) {
        char *args[] = {argv[0], "child", NULL};
        execve(argv[0], args, env);
        _exit(127);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) return 2;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 86) {
        printf("ok: undefined behaviour exited 86\n");
        return 0;
    }
    fprintf(stderr, "undefined behaviour ended the child with %s %d, not exit 86\n",
            WIFEXITED(status) ? "exit" : "signal",
            WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    return 1;
}
