/* cli.h - parsing of command-line and config values shared by the three
 * programs, with messages that say what was expected. */
#ifndef PS_CLI_H
#define PS_CLI_H

#include <stdint.h>

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

#endif
