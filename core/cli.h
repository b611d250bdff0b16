/* cli.h - parsing of command-line and config values shared by the three
 * programs, with messages that say what was expected. */
#ifndef PS_CLI_H
#define PS_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/error.h"

/* Decimal integer in [min, max], the whole string (no sign games, no spaces). */
int ps_cli_parse_int(const char *text, int64_t min, int64_t max, int64_t *out, ps_error *err);
/* Finite decimal number in [min, max]. */
int ps_cli_parse_double(const char *text, double min, double max, double *out, ps_error *err);
/* Duration: a number with an optional unit us, ms, s (default), m, h, d;
 * "30s", "2m", "1.5s", "250ms". Result in nanoseconds, > 0 unless allow_zero. */
int ps_cli_parse_duration(const char *text, int allow_zero, int64_t *out_ns, ps_error *err);
/* Byte size: a number with an optional unit B, K/KiB, M/MiB, G/GiB (powers of 1024). */
int ps_cli_parse_size(const char *text, int64_t *out_bytes, ps_error *err);

/* ---- the one command-line style of petstore-server, -conform and -load ----
 * Flags are read with getopt_long (long options may be abbreviated to any
 * unique prefix, --flag=VALUE and --flag VALUE both work, -h is --help);
 * every usage error is one line naming the flag, then a pointer to --help,
 * and exit status 2. */

/* The exit status of every usage error. */
#define PS_CLI_EXIT_USAGE 2

/* Prints a usage error the one way and returns PS_CLI_EXIT_USAGE:
 *     PROGRAM: MESSAGE
 *     see 'PROGRAM --help'
 * MESSAGE names the flag first when there is one ("--port: '70000' is out
 * of range (0 to 65535)"). */
int ps_cli_usage_error(FILE *out, const char *program, const char *message);

/* Resets getopt_long's state, so argv can be parsed again (tests parse
 * many command lines in one process). */
void ps_cli_getopt_reset(void);

/* Describes why getopt_long (run with opterr = 0 and an optstring starting
 * with ':') returned c == '?' or ':' for argv[optind - 1]: "--bogus:
 * unknown flag", "--port: needs a value", "--list: takes no value",
 * "--c: ambiguous (--cacert, --connections)", "-x: unknown flag". Returns -1. */
int ps_cli_getopt_error(int c, int argc, char **argv, const struct option *options, ps_error *err);

/* The long name of the option whose val is c ("port" for OPT_PORT), so an
 * error names the flag in full however it was abbreviated; "?" if none. */
const char *ps_cli_long_name(const struct option *options, int c);

/* An environment variable's value, or NULL when it is unset or empty (an
 * empty PETSTORE_API_KEY= is no key, not an empty key). */
const char *ps_cli_env(const char *name);

/* --color=auto|always|never. */
typedef enum ps_cli_color {
    PS_CLI_COLOR_AUTO,
    PS_CLI_COLOR_ALWAYS,
    PS_CLI_COLOR_NEVER
} ps_cli_color;
int ps_cli_parse_color(const char *text, ps_cli_color *out, ps_error *err);
/* Whether to colour output written to fd. Precedence, first that applies:
 * the flag (always/never); NO_COLOR set non-empty: no; FORCE_COLOR set
 * non-empty: yes; TERM=dumb: no; otherwise colour when fd is a terminal. */
bool ps_cli_color_enabled(ps_cli_color flag, int fd);

#endif
