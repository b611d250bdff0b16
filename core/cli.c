/* cli.c - value parsing for flags and config files, and the command-line
 * style the three programs share (usage errors, getopt failures, colour). */
#include "core/cli.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
/* A sanitizer's report exits 86, never 1 or 2: the programs' exit codes are
 * verdicts (1 a rate limit violated, 2 a bad file), and a test or CI reading
 * them must not take undefined behaviour for one. The environment's
 * ASAN_OPTIONS / UBSAN_OPTIONS still override it, key by key. */
const char *__asan_default_options(void);
const char *__ubsan_default_options(void);
const char *__asan_default_options(void)
{
    return "exitcode=86";
}
const char *__ubsan_default_options(void)
{
    return "exitcode=86";
}
#endif

int ps_cli_parse_int(const char *text, int64_t min, int64_t max, int64_t *out, ps_error *err)
{
    if (!text || !*text) return ps_error_set(err, "expected an integer, got an empty value");
    const char *p = text;
    if (*p == '-' || *p == '+') p++;
    if (!*p) return ps_error_set(err, "expected an integer, got '%s'", text);
    for (const char *q = p; *q; q++)
        if (*q < '0' || *q > '9') return ps_error_set(err, "expected an integer, got '%s'", text);
    errno = 0;
    long long v = strtoll(text, NULL, 10);
    if (errno == ERANGE || v < min || v > max)
        return ps_error_set(err, "'%s' is out of range (%lld to %lld)", text, (long long)min,
                            (long long)max);
    *out = v;
    return 0;
}

/* The length of the plain decimal number text starts with ([+-] when sign,
 * digits, a fraction, an exponent), 0 when none: strtod alone also takes
 * leading white space, hex ("0x10"), "inf" and "nan", none of which a
 * flag's value means. */
static size_t decimal_len(const char *text, bool sign)
{
    const char *p = text;
    if (sign && (*p == '+' || *p == '-')) p++;
    size_t digits = strspn(p, "0123456789");
    p += digits;
    if (*p == '.') {
        size_t frac = strspn(p + 1, "0123456789");
        digits += frac;
        p += 1 + frac;
    }
    if (digits == 0) return 0;
    if (*p == 'e' || *p == 'E') {
        const char *q = p + 1;
        if (*q == '+' || *q == '-') q++;
        size_t exp = strspn(q, "0123456789");
        if (exp) p = q + exp;
    }
    return (size_t)(p - text);
}

int ps_cli_parse_double(const char *text, double min, double max, double *out, ps_error *err)
{
    if (!text || !*text) return ps_error_set(err, "expected a number, got an empty value");
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (decimal_len(text, true) != strlen(text) || end != text + strlen(text) || errno == ERANGE ||
        !isfinite(v))
        return ps_error_set(err, "expected a decimal number, got '%s'", text);
    if (v < min || v > max)
        return ps_error_set(err, "'%s' is out of range (%g to %g)", text, min, max);
    *out = v;
    return 0;
}

/* The non-negative finite decimal number a duration or size starts with;
 * *end is where its unit starts. False for "-0", "x", "1e999", " 5", "0x10". */
static bool leading_amount(const char *text, double *v, char **end)
{
    size_t n = decimal_len(text, false);
    errno = 0;
    *v = strtod(text, end);
    return n > 0 && *end == text + n && errno != ERANGE && isfinite(*v) && *v >= 0;
}

int ps_cli_parse_duration(const char *text, int allow_zero, int64_t *out_ns, ps_error *err)
{
    if (!text || !*text)
        return ps_error_set(err, "expected a duration such as 30s or 2m, got an empty value");
    char *end;
    double v;
    if (!leading_amount(text, &v, &end))
        return ps_error_set(err, "expected a duration such as 30s, 2m or 250ms, got '%s'", text);
    double scale;
    if (!*end || strcmp(end, "s") == 0)
        scale = 1e9;
    else if (strcmp(end, "ms") == 0)
        scale = 1e6;
    else if (strcmp(end, "us") == 0)
        scale = 1e3;
    else if (strcmp(end, "m") == 0)
        scale = 60e9;
    else if (strcmp(end, "h") == 0)
        scale = 3600e9;
    else if (strcmp(end, "d") == 0)
        scale = 86400e9;
    else
        return ps_error_set(err, "unknown duration unit '%s' in '%s' (use us, ms, s, m, h or d)",
                            end, text);
    double ns = v * scale;
    if (ns > 9.2e18) return ps_error_set(err, "duration '%s' is too long", text);
    if (ns < 1 && !(allow_zero && v == 0))
        return ps_error_set(err, "duration '%s' must be greater than zero", text);
    *out_ns = (int64_t)llround(ns);
    return 0;
}

int ps_cli_parse_size(const char *text, int64_t *out_bytes, ps_error *err)
{
    if (!text || !*text)
        return ps_error_set(err, "expected a size such as 64K or 1M, got an empty value");
    char *end;
    double v;
    if (!leading_amount(text, &v, &end))
        return ps_error_set(err, "expected a size such as 64K or 1M, got '%s'", text);
    double scale;
    if (!*end || strcasecmp(end, "b") == 0)
        scale = 1;
    else if (strcasecmp(end, "k") == 0 || strcasecmp(end, "kib") == 0 || strcasecmp(end, "kb") == 0)
        scale = 1024;
    else if (strcasecmp(end, "m") == 0 || strcasecmp(end, "mib") == 0 || strcasecmp(end, "mb") == 0)
        scale = 1048576;
    else if (strcasecmp(end, "g") == 0 || strcasecmp(end, "gib") == 0 || strcasecmp(end, "gb") == 0)
        scale = 1073741824.0;
    else
        return ps_error_set(err, "unknown size unit '%s' in '%s' (use K, M or G)", end, text);
    double bytes = v * scale;
    if (bytes > 1e15) return ps_error_set(err, "size '%s' is too large", text);
    /* "0.3" would truncate to 0 bytes: a size that is not one */
    if (bytes > 0 && bytes < 1) return ps_error_set(err, "size '%s' is less than a byte", text);
    *out_bytes = (int64_t)llround(bytes);
    return 0;
}

int ps_cli_usage_error(FILE *out, const char *program, const char *message)
{
    fprintf(out, "%s: %s\nsee '%s --help'\n", program, message, program);
    return PS_CLI_EXIT_USAGE;
}

void ps_cli_getopt_reset(void)
{
    /* glibc: optind 0 also clears the scan state of a half-read "-abc". */
    optind = 0;
    opterr = 0;
}

int ps_cli_getopt_error(int c, int argc, char **argv, const struct option *options, ps_error *err)
{
    const char *arg = optind >= 1 && optind <= argc ? argv[optind - 1] : NULL;
    if (!arg || arg[0] != '-' || arg[1] != '-') {
        /* A short option: optopt is the letter (getopt may not have moved
         * optind past a cluster such as -xq). */
        if (optopt > ' ' && optopt < 0x7f) {
            if (c == ':') return ps_error_set(err, "-%c: needs a value", optopt);
            return ps_error_set(err, "-%c: unknown flag", optopt);
        }
        return ps_error_set(err, "%s: unknown flag", arg ? arg : "?");
    }
    const char *name = arg + 2;
    const char *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    const struct option *match = NULL;
    size_t nmatch = 0;
    char list[256] = "";
    size_t used = 0;
    for (const struct option *o = options; o->name; o++) {
        if (strncmp(o->name, name, len) != 0) continue;
        if (strlen(o->name) == len) { /* exact: never ambiguous */
            match = o;
            nmatch = 1;
            break;
        }
        match = o;
        nmatch++;
        int n = snprintf(list + used, sizeof list - used, "%s--%s", used ? ", " : "", o->name);
        if (n > 0 && (size_t)n < sizeof list - used) used += (size_t)n;
    }
    if (nmatch > 1) return ps_error_set(err, "--%.*s: ambiguous (%s)", (int)len, name, list);
    if (nmatch == 0) return ps_error_set(err, "--%.*s: unknown flag", (int)len, name);
    if (c == ':') return ps_error_set(err, "--%s: needs a value", match->name);
    if (eq && match->has_arg == no_argument)
        return ps_error_set(err, "--%s: takes no value", match->name);
    return ps_error_set(err, "--%.*s: not understood", (int)len, name);
}

const char *ps_cli_long_name(const struct option *options, int c)
{
    for (const struct option *o = options; o->name; o++)
        if (o->val == c) return o->name;
    return "?";
}

const char *ps_cli_env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

int ps_cli_parse_color(const char *text, ps_cli_color *out, ps_error *err)
{
    if (strcmp(text, "auto") == 0)
        *out = PS_CLI_COLOR_AUTO;
    else if (strcmp(text, "always") == 0)
        *out = PS_CLI_COLOR_ALWAYS;
    else if (strcmp(text, "never") == 0)
        *out = PS_CLI_COLOR_NEVER;
    else
        return ps_error_set(err, "expected auto, always or never, got '%s'", text);
    return 0;
}

bool ps_cli_color_enabled(ps_cli_color flag, int fd)
{
    if (flag == PS_CLI_COLOR_ALWAYS) return true;
    if (flag == PS_CLI_COLOR_NEVER) return false;
    if (ps_cli_env("NO_COLOR")) return false;   /* https://no-color.org */
    if (ps_cli_env("FORCE_COLOR")) return true; /* https://force-color.org */
    const char *term = getenv("TERM");
    if (term && strcmp(term, "dumb") == 0) return false;
    return isatty(fd) == 1;
}
